"""`aio.use_gds: true` asks for NVIDIA GPUDirect Storage. In DeepSpeed 0.19.8 two places read it: the ZeRO-3
*parameter* swapper (swap_tensor/partitioned_param_swapper.py:93-128 picks the GDS handle) and the "fast"
checkpoint writer (`checkpoint.writer`, whose `type` defaults to FAST; model_checkpointing/writer_factory.py:
26-33). The optimizer swapper builds a plain async-I/O handle whatever it says
(swap_tensor/partitioned_optimizer_swapper.py:28-36). So without `offload_param.device: "nvme"` at ZeRO stage 3
and without a fast checkpoint writer the setting does nothing — except that parse still asserts a CUDA
accelerator ("GDS currently only supported for CUDA accelerator", aio_config.py:38-39).

Not reported: `use_gds` on a non-CUDA machine (the catalog's candidate). zerolint does not know the accelerator
the job will run on, and on CUDA the setting is valid."""

from ..rule import Rule

RULE = Rule(
    code="ZL902",
    name="gds-without-nvme-params",
    severity="info",
    summary="aio.use_gds without ZeRO-3 NVMe parameter offload or a fast checkpoint writer (GDS unused)",
    evidence="deepspeed/runtime/swap_tensor/partitioned_param_swapper.py:93-123; "
             "deepspeed/runtime/swap_tensor/aio_config.py:38-39",
)

PTR = "/aio/use_gds"


@RULE.check
def check(view):
    if view.effective(PTR, "bool") is not True or not view.has(PTR):
        return
    stage = view.zero_stage
    param = view.offload_device("param")
    if stage is None or param is None or (stage == 3 and param == "nvme"):
        return
    writer = view.node("/checkpoint/writer")
    if writer is not None and writer.kind == "object":
        wtype = writer.get("type")
        if wtype is None or (wtype.kind == "string" and wtype.value.upper() == "FAST") or wtype.kind != "string":
            return  # the fast checkpoint writer uses GDS
    why = ("ZeRO-3 does not offload parameters to NVMe here" if stage == 3
           else f"ZeRO stage {stage} never offloads parameters")
    yield view.finding(
        PTR, f"aio.use_gds is true but {why} and no fast checkpoint writer is configured: those are the only "
             "users of GPUDirect Storage, so DeepSpeed ignores it (parse still asserts a CUDA accelerator)",
        at="member", help="delete use_gds, or offload parameters to NVMe with ZeRO stage 3")
