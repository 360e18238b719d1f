"""A DeepSpeed config given to Accelerate (or to the HF Trainer, which hands it to Accelerate's
`DeepSpeedPlugin`) without a `zero_optimization` section. `DeepSpeedPlugin.__post_init__` raises
`ValueError: Please specify the ZeRO optimization config in the DeepSpeed config.` when `TrainingArguments`
or the `Accelerator` is created. Raw DeepSpeed accepts such a config (ZeRO off), so the rule applies only to
the HF Trainer and Accelerate targets; write `"zero_optimization": {"stage": 0}` to train without ZeRO.

A config with `autotuning.enabled: true` is the autotuner's input: `deepspeed --autotuning` writes a
`zero_optimization` section (from its per-stage templates, or `{"stage": N}`) into every experiment config it
launches (autotuning/autotuner.py:304-386, 753), so the missing section is not reported there (ZL911 says what
happens if that file is used for training)."""

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
    if view.autotuning_enabled is not False:
        return  # an autotuner input: the autotuner writes zero_optimization into each experiment
    who = "Accelerate's DeepSpeedPlugin" if view.target == "accelerate" else \
        "the HF Trainer (through Accelerate's DeepSpeedPlugin)"
    yield view.finding(
        "",
        f"no zero_optimization section: {who} raises \"Please specify the ZeRO optimization config in the DeepSpeed "
        "config.\" at start-up",
        help='add "zero_optimization": {"stage": 0} (no ZeRO) or the stage you want',
    )
