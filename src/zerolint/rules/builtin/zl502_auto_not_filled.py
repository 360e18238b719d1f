"""The HF Trainer and Accelerate replace `"auto"` only at a fixed list of keys (the Trainer: batch sizes,
gradient accumulation and clipping, optimizer lr/betas/eps/weight_decay, scheduler warmup and total steps,
fp16/bf16 `enabled`, `amp` in transformers 4.x only; Accelerate, which the Trainer hands the config to: the ZeRO
stage (2 unless the launch config says otherwise), offload devices, NVMe paths, the 16-bit save flag, and the three
ZeRO sizes derived from the model's hidden size at every stage).

Any other `"auto"` never reaches DeepSpeed: `Accelerator._prepare_deepspeed` ends with
`DeepSpeedPlugin.deepspeed_config_process`, which walks every nested dict and raises
``ValueError: `zero_optimization.overlap_comm` not found in kwargs. Please specify ... without `auto` ``
(accelerate 1.15.0 utils/dataclasses.py:1357-1373, accelerator.py:2355) when `trainer.train()` (or
`accelerator.prepare`) prepares the model. Only an `"auto"` inside a list, which that walk skips, reaches DeepSpeed:
dropped in a strict section (the default applies, silently) or kept as a string that crashes the code reading it."""

from ...model.trainer import ACCELERATE_RAISES, in_a_list
from ...model.view import fails_at_of
from ..rule import Rule

RULE = Rule(
    code="ZL502",
    name="auto-not-filled",
    severity="warning",
    summary="\"auto\" at a key the HF Trainer / Accelerate does not fill",
    targets=("hf", "accelerate"),
    evidence="transformers/integrations/deepspeed.py (HfTrainerDeepSpeedConfig.trainer_config_process); "
             "accelerate/utils/dataclasses.py:1357-1373 (DeepSpeedPlugin.fill_match, deepspeed_config_process); "
             "accelerate/accelerator.py:2223-2355 (_prepare_deepspeed)",
)


@RULE.check
def check(view):
    for node in view.auto_nodes:
        if not view.is_auto(node) or view.fills_auto(node.pointer):
            continue
        path = view.path(node.pointer)
        if not in_a_list(node.pointer, view.root):
            yield view.finding(node.pointer, f"{view.consumer} does not fill \"auto\" at {path}: Accelerate raises "
                                             f"\"{ACCELERATE_RAISES.format(key=path)}\" when trainer.train() (or "
                                             "accelerator.prepare) prepares the model, before deepspeed.initialize",
                               at="value", severity="error", help="write the value explicitly, or delete the key to "
                                                                  "take DeepSpeed's default",
                               fails_at="initialize")
            continue
        outcome = view.auto_outcome(node)
        if outcome.crashes_at:
            yield view.finding(node.pointer, f"{view.consumer} does not fill \"auto\" at {path}: DeepSpeed gets the "
                                             f"string and fails at {outcome.crashes_at} ({outcome.effect})",
                               at="value", severity="error", help="write the value explicitly",
                               fails_at=fails_at_of(f"fails at {outcome.crashes_at}"))
        else:
            yield view.finding(node.pointer, f"{view.consumer} does not fill \"auto\" at {path}: {outcome.effect}",
                               at="value", severity="error" if outcome.turns_off else None,
                               help="write the value explicitly, or delete the key to take the default")
