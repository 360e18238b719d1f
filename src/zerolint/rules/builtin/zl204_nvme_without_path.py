"""An offload block with `"device": "nvme"` needs `nvme_path`, the directory of the NVMe swap files. The
default is null (the docs claim `/local_nvme`, which the code does not use): with ZeRO stage 3 DeepSpeed fails
at initialize — an AssertionError in `zero.Init` for parameters (partition_parameters.py:1228-1230), a
TypeError joining a None path for the optimizer (stage3.py:839-840; deepspeedai/DeepSpeed#2624)."""

from ..rule import Rule

RULE = Rule(
    code="ZL204",
    name="nvme-offload-without-path",
    severity="error",
    summary="NVMe offload without nvme_path",
    evidence="deepspeed/runtime/zero/partition_parameters.py:1228-1230; deepspeed/runtime/zero/stage3.py:839-840; "
             "https://github.com/deepspeedai/DeepSpeed/issues/2624",
)


@RULE.check
def check(view):
    stage = view.zero_stage
    if stage is not None and stage < 3:
        return  # below stage 3 nvme is ignored for params (ZL201) and acts as cpu for the optimizer (ZL207)
    for which in ("optimizer", "param"):
        if view.offload_device(which) != "nvme":
            continue
        block = f"/zero_optimization/offload_{which}"
        path = view.node(f"{block}/nvme_path")
        if path is not None and not (path.kind == "null" or (view.is_auto(path) and not view.fills_auto(path.pointer))):
            continue
        state = "not set" if path is None else "null" if path.kind == "null" else 'an unfilled "auto"'
        yield view.finding(
            f"{block}/device",
            f'offload_{which} uses device "nvme" but nvme_path is {state}: DeepSpeed fails at initialize '
            "(there is no default swap directory)",
            at="member",
            help=f"add \"nvme_path\": \"/local_nvme\" (a directory on a fast local NVMe drive) to offload_{which}",
            fails_at="initialize",
        )
