"""`fp16.hysteresis` of 0 or less breaks dynamic loss scaling without a word. DeepSpeed's DynamicLossScaler lowers the
scale on an overflow only when its hysteresis counter is at 1 (`if self.delayed_shift == 1 or self.cur_hysteresis
== 1`); otherwise it only decrements the counter (runtime/fp16/loss_scaler.py:254-276). A counter that starts at 0
or below never reaches 1, so after the first overflow the scale is never reduced and every overflowing step is
skipped ("OVERFLOW! ... Skipping step") for the rest of the run. Seen on an H200 with DeepSpeed 0.19.8 (ZeRO-2,
fp16, hysteresis 0, initial_scale_power 32): 30 of 30 steps skipped, the scale still 2^32. The pydantic model
declares `hysteresis: int` with no bound (precision_config.py), so the parse accepts it. Only fp16 with dynamic
scaling (`loss_scale: 0`, the default) uses it; bf16 has no loss scaling.

Fix (unsafe: it changes the scaler): the default, 2."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL303",
    name="fp16-hysteresis-not-positive",
    severity="error",
    summary="fp16.hysteresis <= 0: the dynamic loss scale never goes down, so overflowing steps are skipped forever",
    evidence="deepspeed/runtime/fp16/loss_scaler.py:254-276; deepspeed/runtime/precision_config.py (hysteresis: int)",
    fixable="unsafe",
)

PTR = "/fp16/hysteresis"


@RULE.check
def check(view):
    if view.fp16_enabled is False or not view.has(PTR) or view.effective("/fp16/loss_scale", "number") != 0:
        return
    value = view.effective(PTR, "int")
    if not isinstance(value, int) or isinstance(value, bool) or value > 0:
        return
    maybe = "" if view.fp16_enabled else " (when fp16 is enabled)"
    yield view.finding(
        PTR,
        f"fp16.hysteresis is {view.node(PTR).raw}: the dynamic loss scaler lowers the scale only when its hysteresis "
        f"counter is 1, and a counter starting at {value} never gets there, so after the first overflow every step "
        f"is skipped and the scale never drops{maybe}; DeepSpeed does not check this value",
        at="value", help="use 2 (the default) or 1 (lower the scale on the first overflow)",
        fixes=edits.fixes(edits.make_fix("set hysteresis to 2 (the default)", edits.replace_value(view.doc, PTR, "2"),
                                         safe=False)), fails_at=None
    )
