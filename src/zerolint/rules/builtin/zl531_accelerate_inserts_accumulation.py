"""A config for the HF Trainer with `train_batch_size` (a number, or "auto") and a micro batch but no
`gradient_accumulation_steps`. The Trainer fills (or compares) `train_batch_size` with world size x
per_device_train_batch_size x gradient_accumulation_steps of its TrainingArguments
(transformers 5.24.0 integrations/deepspeed.py:143-163), but it fills only keys that exist; Accelerate's
`DeepSpeedPlugin.__post_init__` then inserts `gradient_accumulation_steps: 1` (accelerate 1.15.0
utils/dataclasses.py:1274-1275). With TrainingArguments' accumulation above 1, DeepSpeed's batch assertion fails at
initialize: "train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 4 != 2 * 1 * 1"
(deepspeed/runtime/config.py; measured with the real Trainer, docs/integrations.md).

With `--training-args` the rule knows the accumulation (error when it is above 1); without, it states the
condition (info)."""

from ..rule import Rule

RULE = Rule(
    code="ZL531",
    name="accelerate-inserts-accumulation",
    severity="error",
    summary="train_batch_size without gradient_accumulation_steps: Accelerate inserts 1, the Trainer's accumulation "
            "breaks DeepSpeed's batch check",
    targets=("hf",),
    evidence="accelerate/utils/dataclasses.py:1274-1275 (DeepSpeedPlugin.__post_init__); "
             "transformers/integrations/deepspeed.py:143-163 (trainer_config_process)",
)


@RULE.check
def check(view):
    if view.root is None or view.root.member("gradient_accumulation_steps") is not None:
        return
    tbs = view.node("/train_batch_size")
    if tbs is None or view.node("/train_micro_batch_size_per_gpu") is None:
        return
    args = view.settings.training_args
    gas = args.get("gradient_accumulation_steps") if args else None
    if gas is not None and gas <= 1:
        return
    what = "is \"auto\"" if view.is_auto(tbs) else "is set"
    if gas is not None:
        yield view.finding(tbs.pointer, f"train_batch_size {what} and gradient_accumulation_steps is missing: the HF "
                                         f"Trainer computes train_batch_size with gradient_accumulation_steps {gas}, "
                                         "Accelerate inserts gradient_accumulation_steps: 1, and DeepSpeed fails at "
                                         "initialize (\"train_batch_size is not equal to micro_batch_per_gpu * "
                                         "gradient_acc_step * world_size\")",
                           help='add "gradient_accumulation_steps": "auto"', fails_at="initialize")
        return
    yield view.finding(tbs.pointer, f"train_batch_size {what} and gradient_accumulation_steps is missing: Accelerate "
                                     "inserts gradient_accumulation_steps: 1, so with a TrainingArguments "
                                     "gradient_accumulation_steps above 1 DeepSpeed fails at initialize "
                                     "(\"train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * "
                                     "world_size\")",
                       severity="info", help='add "gradient_accumulation_steps": "auto"')
