"""With ZeRO-3 and `offload_optimizer.device: "nvme"`, the optimizer state is swapped through
`offload_optimizer.buffer_count` (default 4) page-locked fp32 host buffers, each as large as the largest
optimizer sub-group (`SwapBufferManager`, swap_tensor/utils.py:180-195; optimizer_utils.py:185-190;
stage3.py:851). A sub-group is `sub_group_size` elements (default 1e9) of this GPU's partition
(stage3.py:1210-1233), so the locked host memory per GPU is up to
`buffer_count × min(sub_group_size, per-GPU partition) × 4 bytes` — 16 GB per GPU with the defaults, times the
GPUs per node — whatever `pin_memory` says. Too large means a host OOM; too small a slow optimizer step
(deepspeedai/DeepSpeed#1145). DeepSpeed's docs example uses `sub_group_size: 1e12`, which puts the whole
partition in one sub-group.

Reported (info) for NVMe optimizer offload at stage 3 when `sub_group_size` is 1e9 (the default) or more."""

from ...model.dsfacts import elements, human_bytes
from ..rule import Rule

RULE = Rule(
    code="ZL805",
    name="nvme-large-sub-group",
    severity="info",
    summary="NVMe optimizer offload with sub_group_size ≥ 1e9: GBs of page-locked host memory per GPU",
    evidence="deepspeed/runtime/swap_tensor/utils.py:180-195; deepspeed/runtime/zero/stage3.py:851, 1210-1233; "
             "https://github.com/deepspeedai/DeepSpeed/issues/1145",
)

LIMIT = 10**9
WHOLE = 10**11  # no per-GPU partition is this large: the sub-group is the whole partition


@RULE.check
def check(view):
    if view.zero_stage != 3 or view.offload_device("optimizer") != "nvme":
        return
    sub = view.effective("/zero_optimization/sub_group_size", "int")
    count = view.effective("/zero_optimization/offload_optimizer/buffer_count", "int")
    if not isinstance(sub, int) or not isinstance(count, int) or sub < LIMIT or count <= 0:
        return
    given = view.has("/zero_optimization/sub_group_size")
    ptr = "/zero_optimization/sub_group_size" if given else "/zero_optimization/offload_optimizer/device"
    shown = f"sub_group_size {elements(sub)}{'' if given else ' (the default)'}"
    if sub >= WHOLE:
        size = (f"{shown}, a sub-group is this GPU's whole partition: {count} × 4 bytes = {count * 4} bytes of locked "
                "host memory per parameter of the partition")
    else:
        size = (f"{shown}, that is up to {count} × {elements(sub)} × 4 bytes = {human_bytes(count * sub * 4)} of "
                "locked host memory per GPU (less when a GPU's partition is smaller)")
    yield view.finding(
        ptr, f"NVMe optimizer offload swaps through buffer_count {count} page-locked fp32 buffers of one sub-group "
             f"each: with {size}, times the GPUs per node",
        at="member" if given else "value",
        help="size sub_group_size so that buffer_count × sub_group_size × 4 bytes × GPUs per node fits in host "
             "RAM (e.g. 2e8: 4 × 2e8 × 4 bytes = 3.2 GB per GPU); smaller values mean more, slower sub-steps")
