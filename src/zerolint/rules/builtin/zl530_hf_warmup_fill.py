"""What the HF Trainer writes into `scheduler.params.warmup_num_steps: "auto"` for DeepSpeed's WarmupLR,
WarmupDecayLR and WarmupCosineLR, and what DeepSpeed then does with it.

- transformers before 5.18.0 fills the warm-up steps as they are (5.17.0 integrations/deepspeed.py:247-251): 0 with
  no warm-up (TrainingArguments' default). DeepSpeed >= 0.19.6 raises at initialize
  `ValueError: warmup_num_steps must be a positive integer, got 0` (0.19.8 runtime/lr_schedules.py:733-734 and
  :874-875; older DeepSpeed clamped it to 2, as the comment at 5.24.0 :250-251 says). transformers 5.18.0+ fills
  max(1, steps) (5.24.0 :252-256).
- With a fill of 1 (or 0 on an older DeepSpeed), DeepSpeed runs a warm-up of max(2, n) steps (lr_schedules.py:744):
  the scheduler sets `warmup_min_lr` at construction and gamma = log(1) = 0 (or 0 / n, linear) at the first step, so
  the first two optimizer steps run at `warmup_min_lr`, which the Trainer fills with 0 (deepspeed.py:172). Run with
  DeepSpeed 0.19.8's WarmupLR and WarmupDecayLR (warmup_num_steps 1, min 0, max 0.001): the optimizer's lr before each
  of the first four steps was [0, 0, 0.001, 0.001]; the real Trainer (5.24.0, warm-up 0, lr 0.001) ran its first
  three steps at [0, 0, 0.001] (docs/integrations.md).

The transformers version assumed is the installed one (package metadata), else the newest known; it is in the message.
"""

from ...model.trainer import MISSING, clamps_warmup, transformers_version, warmup_fill
from ..rule import Rule

RULE = Rule(
    code="ZL530",
    name="hf-warmup-fill",
    severity="warning",
    summary="The HF Trainer's warmup_num_steps fill: 0, which DeepSpeed >= 0.19.6 rejects, or 1: two steps at lr 0",
    targets=("hf",),
    evidence="transformers 5.17.0/5.24.0 integrations/deepspeed.py (trainer_config_finalize); "
             "deepspeed/runtime/lr_schedules.py:733-751",
)

WARMUP_SCHEDULERS = ("WarmupLR", "WarmupDecayLR", "WarmupCosineLR")


@RULE.check
def check(view):
    kind = view.value("/scheduler/type")
    node = view.node("/scheduler/params/warmup_num_steps")
    if kind not in WARMUP_SCHEDULERS or not view.is_auto(node):
        return
    version = transformers_version(view.settings)
    args = view.settings.training_args
    fill = warmup_fill(args, view.settings) if args else None  # None: not known without --training-args
    if fill is MISSING:
        return  # a warm-up ratio with no max_steps: known only at train time
    if not clamps_warmup(view.settings) and view.since(">=0.19.6"):
        if fill == 0:
            yield view.finding(node.pointer, f"transformers {version} fills warmup_num_steps with the warm-up steps, "
                                             "0 here: DeepSpeed fails at initialize (\"warmup_num_steps must be a "
                                             "positive integer, got 0\")", at="value", severity="error",
                               fails_at="initialize", help="set a warm-up (warmup_steps >= 1) or upgrade to "
                                                           "transformers >= 5.18, which fills at least 1")
        elif fill is None:
            yield view.finding(node.pointer, f"transformers {version} fills warmup_num_steps with the warm-up steps: "
                                             "with no warm-up (TrainingArguments' default warmup_steps 0) DeepSpeed "
                                             "fails at initialize (\"warmup_num_steps must be a positive integer, got "
                                             "0\")", at="value",
                               help="set a warm-up (warmup_steps >= 1), write warmup_num_steps >= 1, or upgrade to "
                                    "transformers >= 5.18")
        return
    if kind == "WarmupCosineLR":
        return  # warms up from warmup_min_ratio, not warmup_min_lr
    min_lr = view.node("/scheduler/params/warmup_min_lr")
    if min_lr is not None and not view.is_auto(min_lr) and view.number(min_lr) != 0:
        return
    if fill is not None and fill > 2:
        return
    when = f"it fills {fill}" if fill is not None else "with no warm-up (TrainingArguments' default) it fills " + (
        "1" if clamps_warmup(view.settings) else "0")
    yield view.finding(node.pointer, f"transformers {version}: {when}, and DeepSpeed's {kind} warms up over at least "
                                     "2 steps starting at warmup_min_lr 0: the first two optimizer steps run at "
                                     "learning rate 0", at="value", severity="info",
                       help="set warmup_min_lr to the learning rate for no warm-up, or use a real warm-up "
                            "(warmup_steps > 2)")
