"""`fp16.initial_scale_power` sets the first dynamic loss scale to 2^power (precision_config.py,
`initial_dynamic_scale`). fp16's largest finite value is 65504 (just under 2^16), and the default power 16 is
already tuned to start high. Each power beyond what the model's gradients tolerate costs at least one skipped
optimizer step at the start: on overflow DeepSpeed skips the step and halves the scale, spending `hysteresis` (2)
overflows before the first halving (fp16/loss_scaler.py:254-276). With 32 (found in several public configs, e.g.
axolotl's templates and LianjiaTech/BELLE) the first ~16-17 steps of the run do nothing but log "OVERFLOW! ...
Skipping step" (deepspeedai/DeepSpeed#931, huggingface/transformers#9996). Seen on an H200 with DeepSpeed 0.19.8
(ZeRO-2, fp16, a small MLP): 25 of the first 25 steps skipped before the scale settled.

Threshold: more than 24. 2^24 already multiplies a loss of 1 by 16.7 million; no model in DeepSpeed's or HF's
examples starts above it, and values up to 24 cost at most eight wasted steps. The parse accepts any integer.

Fix (unsafe: it changes the start of the run): 16, the default."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL304",
    name="fp16-initial-scale-power-too-high",
    severity="warning",
    summary="fp16.initial_scale_power above 24: the first optimizer steps are skipped while the scale comes down",
    evidence="deepspeed/runtime/fp16/loss_scaler.py:254-276; https://github.com/deepspeedai/DeepSpeed/issues/931; "
             "https://github.com/huggingface/transformers/issues/9996",
    fixable="unsafe",
)

PTR = "/fp16/initial_scale_power"
LIMIT = 24


@RULE.check
def check(view):
    if view.fp16_enabled is False or not view.has(PTR) or view.effective("/fp16/loss_scale", "number") != 0:
        return
    power = view.effective(PTR, "int")
    if not isinstance(power, int) or isinstance(power, bool) or power <= LIMIT:
        return
    hyst = view.effective("/fp16/hysteresis", "int")
    hyst = hyst if isinstance(hyst, int) and hyst > 0 else 2
    skipped = power - 16 + hyst - 1  # halvings to 2^16, plus the overflows that only count hysteresis down
    maybe = "" if view.fp16_enabled else " when fp16 is enabled"
    yield view.finding(
        PTR,
        f"fp16.initial_scale_power is {power}: the first loss scale is 2^{power} "
        f"({f'{2.0 ** power:.3g}' if power < 1024 else 'beyond any float'}), far above fp16's "
        f"range (max 65504), so{maybe} at least {skipped} optimizer steps are skipped (\"OVERFLOW! Skipping step\") "
        f"while DeepSpeed halves the scale down to what the gradients tolerate",
        at="value", help="use 16 (the default); dynamic scaling raises the scale by itself when it can",
        fixes=edits.fixes(edits.make_fix("set initial_scale_power to 16 (the default)",
                                         edits.replace_value(view.doc, PTR, "16"), safe=False)), fails_at=None
    )
