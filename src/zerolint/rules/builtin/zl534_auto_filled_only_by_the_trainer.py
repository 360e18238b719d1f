"""Under `accelerate launch`, who fills `"auto"` depends on the script. The HF Trainer fills the optimizer's
`betas` and `eps` (and `amp` in transformers 4.x) from its TrainingArguments before Accelerate sees the config; a
training loop of one's own (`accelerator.prepare(model, DummyOptim(...), ...)`) gets only Accelerate's share, which
holds the optimizer's `lr` and `weight_decay` but not `betas` or `eps` (accelerate 1.15.0 accelerator.py:2329-2332).
The leftover `"auto"` makes `DeepSpeedPlugin.deepspeed_config_process` raise "ValueError: `optimizer.params.betas`
not found in kwargs" (utils/dataclasses.py:1357-1373) before `deepspeed.initialize`. Measured with the real
Accelerator (`zerolint verify --target accelerate`, benchmarks/verify_hf_gpu.sh): five HF-style corpus configs
failed so, and pass under the Trainer.

zerolint cannot see the script, so this is a warning with the condition in its words."""

from ...model.consumers import TRAINER_ONLY_FILLS
from ...model.trainer import ACCELERATE_RAISES
from ..rule import Rule

RULE = Rule(
    code="ZL534",
    name="auto-filled-only-by-the-trainer",
    severity="warning",
    summary="\"auto\" that only the HF Trainer fills, in a config `accelerate launch` reads",
    targets=("accelerate",),
    evidence="accelerate/accelerator.py:2329-2332 (_prepare_deepspeed, DummyOptim); "
             "accelerate/utils/dataclasses.py:1357-1373 (DeepSpeedPlugin.fill_match)",
)

DEFAULTS = {"/optimizer/params/betas": "[0.9, 0.999]", "/optimizer/params/eps": "1e-8"}


@RULE.check
def check(view):
    for node in view.auto_nodes:
        if node.pointer not in TRAINER_ONLY_FILLS or not view.is_auto(node) or not view.fills_auto(node.pointer):
            continue
        path = view.path(node.pointer)
        default = DEFAULTS.get(node.pointer)
        yield view.finding(
            node.pointer,
            f"\"auto\" at {path} is filled only by the HF Trainer: if the script `accelerate launch` runs is a "
            f"training loop of its own (accelerator.prepare with DummyOptim), Accelerate raises "
            f"\"{ACCELERATE_RAISES.format(key=path)}\" before deepspeed.initialize",
            at="value", fails_at="initialize",
            help=(f"write the value ({default} is torch's and the Trainer's default) unless the script uses the "
                  "HF Trainer" if default else "write the value unless the script uses the HF Trainer"))
