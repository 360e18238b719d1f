"""With fp16 on and dynamic loss scaling (`loss_scale: 0`, the default), `loss_scale_window` is the divisor of
`stable_interval % scale_window` in DynamicLossScaler.update_scale and `min_loss_scale` is the scale's floor
(fp16/loss_scaler.py:254-276). DeepSpeed 0.19.8 validates both at parse: `ValueError:
fp16.loss_scale_window must be > 0 when dynamic loss scaling is enabled (loss_scale=0)` and the same for
`min_loss_scale` (precision_config.py:182-197). The check is in the 0.19.6 sdist and not in 0.18.9, so zerolint
claims the parse error from 0.19.6 on. Older versions accept the values: a window of 0 then raises
ZeroDivisionError in the first steps without overflow. With a static
loss scale, or fp16 off, neither value is used or checked.

A fractional `min_loss_scale` (1e-10 in some configs) is an integer field: ZL107 reports it."""

from ..rule import Rule

RULE = Rule(
    code="ZL305",
    name="fp16-dynamic-scale-params",
    severity="error",
    summary="fp16 dynamic loss scaling with loss_scale_window or min_loss_scale <= 0",
    evidence="deepspeed/runtime/precision_config.py:182-197; deepspeed/runtime/fp16/loss_scaler.py:254-276",
)


@RULE.check
def check(view):
    if view.fp16_enabled is False or view.effective("/fp16/loss_scale", "number") != 0:
        return
    maybe = "" if view.fp16_enabled else " when fp16 is enabled"
    strict = view.since(">=0.19.6")
    for key in ("loss_scale_window", "min_loss_scale"):
        ptr = f"/fp16/{key}"
        node = view.node(ptr)
        # as pydantic reads it: 0, 0.0 and "0" are all 0 (fractions are ZL107's, booleans ZL104's)
        value = view.effective(ptr, "int") if node is not None and node.kind in ("number", "string") else None
        if not isinstance(value, int) or isinstance(value, bool) or value > 0:
            continue
        when_code = "parse" if strict else "step"
        if strict:
            outcome = (f"DeepSpeed rejects the config at parse{maybe} (\"fp16.{key} must be > 0 when dynamic loss "
                       "scaling is enabled\")")
        elif key == "loss_scale_window" and value == 0:
            outcome = (f"DeepSpeed {view.version} accepts it, then fails in the first training steps{maybe} "
                       "(ZeroDivisionError in the loss scaler's `stable_interval % scale_window`)")
        else:
            continue  # older versions run with it (a negative window acts like its absolute value)
        yield view.finding(ptr, f"fp16.{key} is {node.raw} with dynamic loss scaling (loss_scale 0): {outcome}",
                           at="value",
                           help="use a positive value (defaults: loss_scale_window 1000, min_loss_scale 1)",
                           fails_at=when_code)
