"""`offload_param` only does something with ZeRO stage 3: stages 1 and 2 never partition or move parameters,
and DeepSpeed passes the block to nobody (runtime/engine.py:2655-2708). It is accepted without a word, and it
even shows up as "cpu" in DeepSpeed's printed config, so a job that was meant to fit by offloading parameters
runs with every parameter on the GPU (wenet-e2e/wenet#2499 removed such a block for this reason).

Two ways out: raise the stage to 3 (changes how training runs: an unsafe fix), or delete the block (changes
nothing DeepSpeed does: the safe fix)."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL201",
    name="offload-param-below-stage-3",
    severity="error",
    summary="offload_param is set but ZeRO stage is below 3, so parameters are not offloaded",
    evidence="deepspeed/runtime/engine.py:2655-2708; https://github.com/wenet-e2e/wenet/issues/2499",
    fixable="alternatives",  # delete (safe, the default) or raise the stage to 3 (unsafe)
)


@RULE.check
def check(view):
    stage = view.zero_stage
    if stage is None or stage >= 3 or not view.offloads("param"):
        return
    ptr = "/zero_optimization/offload_param"
    if not view.has(ptr):
        ptr = "/zero_optimization/cpu_offload_param"
    device = view.offload_device("param")
    key = ptr.rsplit("/", 1)[-1]
    where = "with ZeRO off (stage 0)" if stage == 0 else f"with ZeRO stage {stage}"
    yield view.finding(
        ptr,
        f"{key} (device {device!r}) has no effect {where}: only stage 3 offloads parameters, and DeepSpeed "
        "ignores this silently — every parameter stays on the GPU",
        help="set zero_optimization.stage to 3 to offload parameters, or delete offload_param",
        fixes=edits.fixes(
            edits.make_fix(f"delete {key} (it does nothing at this stage)", edits.remove_member(view.doc, ptr),
                           choice="delete", default=True),
            edits.make_fix("set zero_optimization.stage to 3 so that parameters are offloaded", _stage3(view),
                           safe=False, choice="stage3"),
        ),
    )


def _stage3(view):
    stage = view.node("/zero_optimization/stage")
    if stage is not None:
        return edits.replace_value(view.doc, stage, "3")
    return edits.insert_member(view.doc, "/zero_optimization", "stage", "3", position="start")
