"""`fp16.auto_cast: true` makes the engine cast floating-point inputs to half in `forward()`
(engine.py:2957-2959, `_cast_inputs_half`, 3033-3047). The engine checks only `auto_cast`, not whether fp16 is
enabled, so with bf16 or fp32 training a model called with positional floating-point tensors receives fp16 inputs
and the first forward fails with a dtype mismatch ("expected ... BFloat16 but found Half"). Only the positional
arguments are cast (`inputs`; the keyword arguments are returned as they came, engine.py:2957-2961), and integer
tensors (token ids) are not cast: the HF Trainer calls `model(**inputs)` with keyword inputs, and language models
take ids, so many setups are unaffected, which is why the setting often survives in templates. Whether it fails
depends on the training code, so the finding claims no failure stage (no `fails_at`) and states the condition
(measured, DeepSpeed 0.19.8 on CPU, fp32: `engine(x)` fails with "mat1 and mat2 must have the same dtype, but got
Half and Float", `engine(input=x)` runs).

Fix (unsafe: it changes what forward() receives): delete auto_cast."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL307",
    name="fp16-auto-cast-without-fp16",
    severity="warning",
    summary="fp16.auto_cast is true while fp16 is off: inputs are still cast to half",
    evidence="deepspeed/runtime/engine.py:1697-1698, 2957-2961, 3033-3047",
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
        f"fp16.auto_cast is true but fp16 is not enabled: DeepSpeed still casts the floating-point positional "
        f"inputs of forward() to half, so if your code passes float tensors positionally they reach the {what} "
        "model as fp16 and the first forward fails with a dtype mismatch (keyword inputs, as the HF Trainer "
        "passes them, and integer inputs such as token ids are not cast)",
        at="value", help="delete auto_cast (or set it to false)",
        fixes=edits.fixes(edits.make_fix("delete auto_cast", edits.remove_member(view.doc, PTR), safe=False)),
    )
