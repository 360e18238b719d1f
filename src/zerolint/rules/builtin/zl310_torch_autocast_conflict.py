"""`torch_autocast.enabled` (the torch.autocast mixed-precision path, a plain-dict section read with a truthiness
test, runtime/config.py:179-184) conflicts with:

- `zero_optimization.zero_quantized_weights`: `deepspeed.initialize` asserts "Cannot enable both torch autocast and
  zero quantized weights" (runtime/torch_autocast.py:30-32), at any ZeRO stage;
- on the 0.17 line only, fp16 or bf16 enabled ("Cannot enable both torch autocast and fp16" / "... bfloat16",
  0.17.6 runtime/torch_autocast.py:32-33). 0.18.9 and later dropped those checks: DeepSpeed's own
  bf16_master_weight example enables torch_autocast together with bf16, so the
  catalog's "torch_autocast together with fp16/bf16" is not a finding for 0.18 and later (the source wins).

Versions: torch_autocast exists from the 0.17 line."""

from ..rule import Rule

RULE = Rule(
    code="ZL310",
    name="torch-autocast-conflict",
    severity="error",
    summary="torch_autocast with ZeRO quantized weights (or, on DeepSpeed 0.17, with fp16/bf16)",
    versions=">=0.17.0",
    evidence="deepspeed/runtime/torch_autocast.py:30-32; deepspeed 0.17.6 runtime/torch_autocast.py:31-39",
)

EN = "/torch_autocast/enabled"


@RULE.check
def check(view):
    en = view.node(EN)
    if en is None or view.is_auto(en) or not en.to_python():
        return
    qw = "/zero_optimization/zero_quantized_weights"
    if view.node(qw) is not None and view.effective(qw, "bool") is True:
        yield view.finding(qw, "zero_quantized_weights with torch_autocast enabled: deepspeed.initialize fails with "
                               "\"Cannot enable both torch autocast and zero quantized weights\"",
                           related=[(EN, "torch_autocast enabled")],
                           help="turn off one of torch_autocast and zero_quantized_weights", fails_at="initialize")
    if view.since(">=0.18.0"):
        return
    for name, on, ptr in (("fp16", view.fp16_enabled, "/fp16/enabled"),
                          ("bfloat16", view.bf16_enabled, f"{view.bf16_section}/enabled")):
        if on:
            yield view.finding(ptr, f"{name} is enabled together with torch_autocast: DeepSpeed {view.version} "
                                    f"fails at initialize with \"Cannot enable both torch autocast and {name}\" "
                                    "(0.18.9 and later accept it)", at="member",
                               related=[(EN, "torch_autocast enabled")],
                               help=f"use one mixed-precision mechanism: torch_autocast or {name}",
                               fails_at="initialize")
