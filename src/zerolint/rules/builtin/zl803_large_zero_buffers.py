"""ZeRO's communication buckets and ZeRO-3's parameter budgets are element counts; DeepSpeed allocates or keeps
that many elements on every GPU, and nothing checks them against GPU memory:

- `reduce_bucket_size`: the gradient reduce bucket, `reduce_bucket_size` elements of the model (or ZeRO-1
  accumulation) dtype on the GPU (stage_1_and_2.py:3255-3279; stage3.py:779-784), twice with ZeRO-1/2
  `overlap_comm` (that case is ZL802's);
- `stage3_prefetch_bucket_size`: up to that many 16-bit parameter elements gathered ahead of use (ZeRO-3,
  parameter_offload.py:192, partitioned_param_coordinator.py);
- `stage3_max_live_parameters`: up to that many 16-bit parameter elements kept gathered at once (ZeRO-3,
  parameter_offload.py:194).

zerolint reports a value above 1e9 elements (the largest default is 1e9) with the memory it stands for, and, when
`--gpu-memory` is given, any of them above 30% of it.

Rejected from the catalog's list: `allgather_bucket_size` allocates nothing in DeepSpeed 0.19.8 when torch has
`all_gather_into_tensor` (any recent torch): `all_gather_dp_groups` then gathers whole partitions
(runtime/utils.py:1019-1022) and the bucket size is unused. The source wins over the catalog here."""

from ...model.dsfacts import DTYPE_BYTES, elements, human_bytes
from ..rule import Rule

RULE = Rule(
    code="ZL803",
    name="large-zero-buffers",
    severity="warning",
    summary="A ZeRO bucket or ZeRO-3 parameter budget above 1e9 elements (GBs of GPU memory per GPU)",
    evidence="deepspeed/runtime/zero/stage_1_and_2.py:3255-3279; deepspeed/runtime/zero/stage3.py:779-784; "
             "deepspeed/runtime/zero/parameter_offload.py:192-194",
)

LIMIT = 1e9
SHARE = 0.3


def _budgets(view):
    stage = view.zero_stage
    dtype = view.model_dtype
    if stage in (1, 2, 3) and dtype is not None:
        skip = stage in (1, 2) and view.overlap_comm is True  # ZL802 reports it with both buffers
        if not skip:
            buf = view.zero12_reduce_buffer()
            elem_dtype = buf[1] if buf is not None else dtype
            yield ("reduce_bucket_size", "a gradient reduce bucket of {n} {d} elements", DTYPE_BYTES[elem_dtype],
                   elem_dtype)
    if stage == 3:
        yield ("stage3_prefetch_bucket_size", "up to {n} {d} parameter elements gathered ahead of use", 2, "16-bit")
        yield ("stage3_max_live_parameters", "up to {n} {d} parameter elements kept gathered", 2, "16-bit")


@RULE.check
def check(view):
    if view.zero is None:
        return
    gpu = getattr(view, "gpu_memory", None)
    for name, template, nbytes, dtype in _budgets(view):
        node = view.zero_field(name)
        if node is None:
            continue
        size = view.effective(node.pointer, "int")
        if not isinstance(size, int) or size <= 0 or size >= 2**63:  # beyond int64: rejected at parse (ZL106)
            continue
        total = size * nbytes
        share = total / gpu if gpu else None
        if size <= LIMIT and (share is None or share <= SHARE):
            continue
        key = node.pointer.rsplit("/", 1)[-1]
        # share is set only when gpu is
        of = f" ({share:.0%} of the {human_bytes(gpu)} per GPU)" if share is not None else ""  # type: ignore[arg-type]
        desc = template.format(n=elements(size), d=dtype)
        yield view.finding(
            node.pointer,
            f"{key} is {elements(size)}: {desc} × {nbytes} bytes = {human_bytes(total)} of GPU memory per "
            f"GPU{of}; DeepSpeed does not check it against the GPU and fails with CUDA out of "
            "memory if it does not fit",
            at="value", help="use a value near the default (reduce_bucket_size 5e8, stage3_prefetch_bucket_size 5e7, "
                             "stage3_max_live_parameters 1e9) unless you have measured the headroom")
