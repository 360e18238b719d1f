"""A value in the DeepSpeed config differs from the `TrainingArguments` the HF Trainer runs with. The Trainer
fills `"auto"` values from its arguments and compares every other value at the same keys
(`HfTrainerDeepSpeedConfig.fill_match`): micro batch size (`per_device_train_batch_size`), gradient accumulation,
`train_batch_size` (= world size x micro batch x accumulation), `gradient_clipping` (`max_grad_norm`), the
optimizer's `lr`, `betas`, `eps`, `weight_decay`, the scheduler's `warmup_max_lr`, `warmup_num_steps` and
`total_num_steps` (known before training only with `max_steps`), `fp16.enabled` and `bf16.enabled`. Any
difference raises, once training starts, `ValueError: Please correct the following DeepSpeed config values that
mismatch TrainingArguments values: - ds optimizer.params.lr=0.0001 vs hf learning_rate=2e-05 ...`, after the
model has been loaded onto the GPUs.

Active when zerolint is given the arguments: `zerolint check ds.json --training-args args.json` (a dump from
`args.to_json_string()`; missing fields take the TrainingArguments defaults), or
`zerolint.lint(..., training_args=args)` / `zerolint.check_or_raise(args)` in the training script. The fix
replaces the value with `"auto"`, the HF docs' "easiest method": the Trainer then uses its own argument."""

from ...model.diagnostics import Edit, Fix
from ..rule import Rule

RULE = Rule(
    code="ZL523",
    name="training-args-mismatch",
    severity="error",
    summary="A DeepSpeed value that differs from the TrainingArguments the HF Trainer compares it with",
    targets=("hf", "accelerate"),
    evidence="transformers/integrations/deepspeed.py HfTrainerDeepSpeedConfig.fill_match, trainer_config_process, "
             "trainer_config_finalize",
    fixable="unsafe",
)


@RULE.check
def check(view):
    if not getattr(view.settings, "training_args", None):
        return  # (what mismatches() says too; zerolint.hf is only imported when there is something to compare)
    from ...model.trainer import ds_key, mismatches

    for compared, ds_val, hf_val in mismatches(view):
        node = view.node(compared.pointer)
        yield view.finding(
            compared.pointer,
            f"ds {ds_key(compared.pointer)}={ds_val} vs hf {compared.hf_key}={hf_val}: the HF Trainer raises "
            "\"Please correct the following DeepSpeed config values that mismatch TrainingArguments values\" when "
            "training starts",
            at="value",
            help=f'set it to "auto" (the Trainer fills in {hf_val}) or change the training argument',
            fixes=[Fix(f'replace {ds_val!r} with "auto"', (Edit(node.start, node.end, '"auto"'),), safe=False)],
        )
