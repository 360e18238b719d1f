"""`zero_optimization.legacy_stage1: true` asks for the ZeRO stage-1 implementation that was removed in
DeepSpeed 0.5.9. The key is still accepted at parse, and `deepspeed.initialize` then raises "The deprecated
version of ZeRO Stage 1 is not supported in deepspeed >= 0.5.9" (engine.py:2651-2654) whenever ZeRO is enabled.

Fix (unsafe: the job then runs the current ZeRO stage 1 instead of failing): delete the key."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL214",
    name="legacy-stage1",
    severity="error",
    summary="legacy_stage1: true (removed in DeepSpeed 0.5.9; initialize raises)",
    evidence="deepspeed/runtime/engine.py:2651-2654",
    fixable="unsafe",
)

PTR = "/zero_optimization/legacy_stage1"


@RULE.check
def check(view):
    if view.effective(PTR, "bool") is not True or not view.has(PTR) or view.zero_stage == 0:
        return
    yield view.finding(
        PTR, "legacy_stage1 is true: DeepSpeed fails at initialize (Exception \"The deprecated version of ZeRO "
             "Stage 1 is not supported in deepspeed >= 0.5.9\")",
        at="member", help="delete legacy_stage1; the current ZeRO stage 1 replaces it", fails_at="initialize",
        fixes=edits.fixes(edits.make_fix("delete legacy_stage1", edits.remove_member(view.doc, PTR), safe=False)))
