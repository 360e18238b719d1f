"""The HF Trainer and Accelerate replace `"auto"` only at a fixed list of keys (the Trainer: batch sizes,
gradient accumulation and clipping, optimizer lr/betas/eps/weight_decay, scheduler warmup and total steps,
fp16/bf16 `enabled`, and three ZeRO sizes derived from the model's hidden size; Accelerate also the ZeRO
stage, offload devices, NVMe paths and the 16-bit save flag). An `"auto"` anywhere else reaches DeepSpeed
unchanged: dropped in strict sections (the default applies, silently) or kept as a string that crashes the
code reading it."""

from ...model.view import fails_at_of
from ..rule import Rule

RULE = Rule(
    code="ZL502",
    name="auto-not-filled",
    severity="warning",
    summary="\"auto\" at a key the HF Trainer / Accelerate does not fill",
    targets=("hf", "accelerate"),
    evidence="transformers/integrations/deepspeed.py (HfTrainerDeepSpeedConfig.trainer_config_process); "
             "accelerate/utils/dataclasses.py (DeepSpeedPlugin.deepspeed_config_process)",
)


@RULE.check
def check(view):
    for node in view.auto_nodes:
        if not view.is_auto(node) or view.fills_auto(node.pointer):
            continue
        outcome = view.auto_outcome(node)
        path = view.path(node.pointer)
        if outcome.crashes_at:
            yield view.finding(node.pointer, f"{view.consumer} does not fill \"auto\" at {path}: DeepSpeed gets the "
                                             f"string and fails at {outcome.crashes_at} ({outcome.effect})",
                               at="value", severity="error", help="write the value explicitly",
                               fails_at=fails_at_of(f"fails at {outcome.crashes_at}"))
        else:
            yield view.finding(node.pointer, f"{view.consumer} does not fill \"auto\" at {path}: {outcome.effect}",
                               at="value", severity="error" if outcome.turns_off else None,
                               help="write the value explicitly, or delete the key to take the default")
