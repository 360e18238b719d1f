"""`fp16.loss_scale` other than 0 switches fp16 to a STATIC loss scale (precision_config.py: "Default value of 0 means
dynamic loss scaling instead of static loss scale"; engine.py:1781-1782 `dynamic_loss_scale()` is
`loss_scale == 0`). DeepSpeed never adjusts a static scale: a step whose gradients overflow is skipped, and a
scale too high for the model makes every step overflow with no recovery; a scale too low lets small gradients
underflow to zero. The dynamic-scaling keys (`initial_scale_power`, `loss_scale_window`, `hysteresis`,
`min_loss_scale`) are then ignored. Static scaling is legitimate when chosen on purpose, hence info.
Lamb with a static scale fails at initialize (ZL606)."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL306",
    name="fp16-static-loss-scale",
    severity="info",
    summary="fp16.loss_scale > 0: a static loss scale (no recovery from overflow; dynamic-scaling keys ignored)",
    evidence="deepspeed/runtime/engine.py:1781-1782; deepspeed/runtime/precision_config.py (loss_scale)",
    fixable="unsafe",
)

PTR = "/fp16/loss_scale"
DYNAMIC_KEYS = ("initial_scale_power", "loss_scale_window", "hysteresis", "min_loss_scale", "consecutive_hysteresis")


@RULE.check
def check(view):
    if view.fp16_enabled is False or view.optimizer_name == "lamb":
        return
    scale = view.effective(PTR, "number") if view.node("/fp16") is not None else 0
    if not isinstance(scale, (int, float)) or isinstance(scale, bool) or scale <= 0:
        return
    unused = [k for k in DYNAMIC_KEYS if view.has(f"/fp16/{k}")]
    yield view.finding(
        PTR,
        f"fp16.loss_scale is {view.node(PTR).raw}: a static loss scale that DeepSpeed never adjusts; steps that "
        "overflow are skipped, and a scale too high for the model skips every step"
        + (f" ({', '.join(unused)} {'is' if len(unused) == 1 else 'are'} ignored)" if unused else ""),
        at="value", help="use 0 (dynamic loss scaling) unless you chose this scale on purpose",
        fixes=edits.fixes(edits.make_fix("set loss_scale to 0 (dynamic)", edits.replace_value(view.doc, PTR, "0"),
                                         safe=False)), fails_at=None
    )
