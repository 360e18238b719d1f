"""A DeepSpeed config given to Accelerate (or to the HF Trainer, which hands it to Accelerate's
`DeepSpeedPlugin`) without a `zero_optimization` section. `DeepSpeedPlugin.__post_init__` raises
`ValueError: Please specify the ZeRO optimization config in the DeepSpeed config.` when `TrainingArguments`
or the `Accelerator` is created. Raw DeepSpeed accepts such a config (ZeRO off), so the rule applies only to
the HF Trainer and Accelerate targets; write `"zero_optimization": {"stage": 0}` to train without ZeRO."""

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
    yield view.finding(
        "",
        f"no zero_optimization section: {who} raises \"Please specify the ZeRO optimization config in the DeepSpeed "
        "config.\" at start-up",
        help='add "zero_optimization": {"stage": 0} (no ZeRO) or the stage you want',
    )
