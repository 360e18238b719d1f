"""fp16's dynamic loss scaling starts at `2**initial_scale_power` (precision_config.py:199-204), and nothing
bounds the power: a negative one starts the scale below 1, so the loss is scaled *down* before backward and small
fp16 gradients underflow to zero, the opposite of what loss scaling is for. DeepSpeed accepts it silently and only
raises the scale after `loss_scale_window` steps without overflow. Only read with fp16 on and `loss_scale` 0."""

from ..rule import Rule

RULE = Rule(
    code="ZL311",
    name="fp16-initial-scale-below-one",
    severity="warning",
    summary="fp16 initial_scale_power below 0: the dynamic loss scale starts below 1",
    evidence="deepspeed/runtime/precision_config.py:135-137, 199-204",
)


@RULE.check
def check(view):
    if view.fp16_enabled is False or view.effective("/fp16/loss_scale", "number") != 0:
        return
    node = view.node("/fp16/initial_scale_power")
    power = view.effective("/fp16/initial_scale_power", "int") if node is not None else None
    if not isinstance(power, int) or isinstance(power, bool) or power >= 0:
        return
    maybe = "" if view.fp16_enabled else " when fp16 is enabled"
    yield view.finding(node.pointer, f"fp16.initial_scale_power is {node.raw}: the dynamic loss scale starts at "
                                     f"2**{power} = {2.0 ** power:g}{maybe}, below 1, so the loss is scaled down and "
                                     "small fp16 gradients underflow to zero", at="value",
                       help="use a power of 0 or more (the default 16 starts at 65536)")
