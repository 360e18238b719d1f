"""`offload_optimizer.ratio` below 1 (partial offload: keep part of the optimizer on the GPU) is only
implemented by ZeRO stage 3; with any other stage DeepSpeed rejects the config at parse time
("Partial offloading only supported for ZeRO Stage 3", zero/config.py:395-400). Before 0.15 the check never runs:
0.14.5's pydantic-v1 root validator asks `getattr(values, "offload_optimizer", {})` of a dict (zero/config.py:319-
324), so the ratio is accepted and, below stage 3, ignored (found by the parse differential against 0.14.5)."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL206",
    name="partial-offload-below-stage-3",
    severity="error",
    summary="offload_optimizer.ratio < 1 (partial offload) with ZeRO stage below 3",
    evidence="deepspeed/runtime/zero/config.py:395-400",
)


@RULE.check
def check(view):
    stage = view.zero_stage
    ratio = view.node("/zero_optimization/offload_optimizer/ratio")
    value = view.effective(ratio.pointer, "number") if ratio is not None else None  # "0.3" is 0.3 to pydantic
    if stage is None or stage == 3 or not isinstance(value, (int, float)) or not value < 1:
        return
    if not view.since(">=0.15.0"):
        yield view.finding(ratio.pointer,
                           f"ratio {ratio.raw} asks for partial optimizer offload, which only ZeRO stage 3 supports "
                           f"(stage is {stage}): DeepSpeed {view.version} does not check it and offloads all the "
                           "optimizer states", at="member", severity="warning",
                           help="set zero_optimization.stage to 3, or remove ratio (full offload)",
                           fixes=edits.fixes(edits.make_fix(
                               "remove ratio (offload all optimizer states, as this stage does)",
                               edits.remove_member(view.doc, ratio.pointer), safe=True)))
        return
    yield view.finding(ratio.pointer,
                       f"ratio {ratio.raw} asks for partial optimizer offload, which only ZeRO stage 3 supports "
                       f"(stage is {stage}): DeepSpeed rejects the config at parse",
                       at="member", help="set zero_optimization.stage to 3, or remove ratio (full offload)",
                       fails_at="parse", fixes=edits.fixes(edits.make_fix(
                           "remove ratio (offload all optimizer states, as this stage can)",
                           edits.remove_member(view.doc, ratio.pointer), safe=False)))
