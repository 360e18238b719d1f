"""`gradient_clipping` is the largest global gradient norm DeepSpeed lets through: every engine path scales the
gradients by `clip_coef = gradient_clipping / (norm + 1e-6)` when that is below 1 (runtime/utils.py:422-427,
974-990; the ZeRO optimizers the same way). A model's global gradient norm is far above 1e-3 in practice (typical
runs log 0.1-10), so a value below that clips every update: each step moves the weights by at most that norm with
SGD-like optimizers, and with Adam the scaled gradients sink toward its `eps` (1e-8), so the updates shrink too.
DeepSpeed accepts the value silently. 0 switches clipping off and is not reported; values from 1e-3 up are left
as a choice (the 77 real configs of the corpus use "auto", 1.0 or 0)."""

from ..rule import Rule

RULE = Rule(
    code="ZL613",
    name="gradient-clipping-tiny",
    severity="warning",
    summary="gradient_clipping above 0 but below 1e-3: every update is clipped to that norm",
    evidence="deepspeed/runtime/utils.py:422-427, 974-990",
)

PTR = "/gradient_clipping"
LIMIT = 1e-3


@RULE.check
def check(view):
    node = view.node(PTR)
    value = view.effective(PTR, "number") if node is not None else None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < LIMIT:
        return
    yield view.finding(
        PTR, f"gradient_clipping is {node.raw}: DeepSpeed scales the gradients down to a global norm of at most "
             f"{value:g} whenever their norm is larger, which a model's gradients practically always are, so every "
             "update is clipped and training barely moves",
        at="value", help="use 1.0 (DeepSpeed's default from 0.19.3), or 0 to switch clipping off")
