"""`"auto"` is a placeholder for the HF Trainer and Accelerate to fill; raw DeepSpeed
(`deepspeed.initialize(config="ds.json")`) fills nothing. Inside its strict sections it silently deletes
every `"auto"` before validation (runtime/config_utils.py:54-56), so the default applies: `"stage": "auto"`
means ZeRO off, `"enabled": "auto"` means fp16/bf16 off, offload `"device": "auto"` means no offload — with
no message. Elsewhere it keeps the string, which crashes: batch sizes at parse ("TypeError: '>' not supported
between instances of 'str' and 'int'"), `gradient_clipping` at the first step, optimizer and scheduler
params at initialize or the first step.

This rule applies when the target is raw DeepSpeed (`--target deepspeed`); with the default `--target auto`
a file holding "auto" values is taken to be for the HF Trainer (ZL502 then checks the keys it fills)."""

from ...model.view import fails_at_of
from ..rule import Rule

RULE = Rule(
    code="ZL501",
    name="auto-with-raw-deepspeed",
    severity="error",
    summary="\"auto\" in a config read by raw DeepSpeed (silently dropped, or a crash)",
    targets=("deepspeed",),
    evidence="deepspeed/runtime/config_utils.py:54-56; https://github.com/deepspeedai/DeepSpeed/issues/1270",
)


@RULE.check
def check(view):
    for node in view.auto_nodes:
        if not view.is_auto(node):
            continue  # "Auto", " auto": ZL503
        outcome = view.auto_outcome(node)
        path = view.path(node.pointer)
        if outcome.crashes_at:
            yield view.finding(node.pointer, f"{path} is \"auto\", which only the HF Trainer and Accelerate fill: "
                                             f"DeepSpeed fails at {outcome.crashes_at} ({outcome.effect})",
                               at="value", help="write the value DeepSpeed should use",
                               fails_at=fails_at_of(f"fails at {outcome.crashes_at}"))
        else:
            severe = outcome.turns_off or outcome.turns_on
            yield view.finding(node.pointer, f"{path} is \"auto\", which only the HF Trainer and Accelerate fill: "
                                             f"{outcome.effect}", at="value",
                               severity="error" if severe else "warning",
                               help="write the value DeepSpeed should use, or delete the key to take the default")
