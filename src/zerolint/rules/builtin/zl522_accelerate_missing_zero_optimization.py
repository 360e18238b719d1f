"""A DeepSpeed config given to Accelerate (or to the HF Trainer, which hands it to Accelerate's
`DeepSpeedPlugin`) without a `zero_optimization` section. `DeepSpeedPlugin.__post_init__` raises
`ValueError: Please specify the ZeRO optimization config in the DeepSpeed config.` when `TrainingArguments`
or the `Accelerator` is created. Raw DeepSpeed accepts such a config (ZeRO off), so the rule applies only to
the HF Trainer and Accelerate targets; write `"zero_optimization": {"stage": 0}` to train without ZeRO.

A config with `autotuning.enabled: true` is the autotuner's input: `deepspeed --autotuning` writes a
`zero_optimization` section (from its per-stage templates, or `{"stage": N}`) into every experiment config it
launches (autotuning/autotuner.py:304-386, 753), so there the missing section is a warning that says both: the
file works as the autotuner's input and fails when handed to the Trainer (ZL911 says what autotuning does in a
training run)."""

from ..rule import Rule

RULE = Rule(
    code="ZL522",
    name="missing-zero-optimization",
    severity="error",
    summary="No zero_optimization section, which Accelerate and the HF Trainer require",
    targets=("hf", "accelerate"),
    evidence="accelerate/utils/dataclasses.py DeepSpeedPlugin.__post_init__; transformers training_args.py "
             "(DeepSpeedPlugin(hf_ds_config=...))",
)


@RULE.check
def check(view):
    if view.root is None or view.root.get("zero_optimization") is not None:
        return
    if view.root.member("zero_optimization") is not None:
        return  # present (e.g. null): a type rule reports what is wrong with it
    who = "Accelerate's DeepSpeedPlugin" if view.target == "accelerate" else \
        "the HF Trainer (through Accelerate's DeepSpeedPlugin)"
    message = (f"no zero_optimization section: {who} raises \"Please specify the ZeRO optimization config in the "
               "DeepSpeed config.\" at start-up")
    if view.autotuning_enabled is not False:
        # An autotuner input: `deepspeed --autotuning` writes zero_optimization into each experiment it launches, so
        # the file works there; handed to the Trainer directly it still fails (measured with the real Trainer,
        # tests/test_hf_differential.py). A warning that says both.
        yield view.finding(
            "", message + " when this file is used for training; as the input of `deepspeed --autotuning` it works "
            "(the autotuner writes zero_optimization into each experiment config)", severity="warning",
            fails_at="initialize",
            help='keep it for autotuning only, or add "zero_optimization": {"stage": 0} (or the stage you want)')
        return
    # "initialize": where verify's phases put it (before deepspeed.initialize, when the Trainer or Accelerator is built)
    yield view.finding("", message, fails_at="initialize",
                       help='add "zero_optimization": {"stage": 0} (no ZeRO) or the stage you want')
