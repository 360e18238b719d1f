"""`fp16.auto_cast: true` makes the engine cast every floating-point input tensor to half in `forward()`
(engine.py:2957-2959, `_cast_inputs_half`, 3033-3045). The engine checks only `auto_cast`, not whether fp16 is
enabled, so with bf16 or fp32 training the model receives fp16 inputs and the first forward fails with a dtype
mismatch ("expected ... BFloat16 but found Half"). Integer inputs (token ids) are not cast, so language models
that take only ids are unaffected, which is why the setting often survives in templates.

Fix (unsafe: it changes what forward() receives): delete auto_cast."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL307",
    name="fp16-auto-cast-without-fp16",
    severity="warning",
    summary="fp16.auto_cast is true while fp16 is off: inputs are still cast to half",
    evidence="deepspeed/runtime/engine.py:1697-1698, 2957-2959, 3033-3045",
    fixable="unsafe",
)

PTR = "/fp16/auto_cast"


@RULE.check
def check(view):
    if view.fp16_enabled is not False or view.effective(PTR, "bool") is not True or not view.has(PTR):
        return
    precision = view.precision
    what = {"bf16": "bf16", "fp32": "fp32"}.get(precision, "a non-fp16")
    yield view.finding(
        PTR,
        f"fp16.auto_cast is true but fp16 is not enabled: DeepSpeed still casts every floating-point input to half "
        f"in forward(): floating-point inputs reach the {what} model as fp16 and the first forward fails with a "
        "dtype mismatch (integer inputs such as token ids are not cast)",
        at="value", help="delete auto_cast (or set it to false)",
        fixes=edits.fixes(edits.make_fix("delete auto_cast", edits.remove_member(view.doc, PTR), safe=False)),
        fails_at="step"
    )
