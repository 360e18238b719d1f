"""ZeRO-3 under the HF Trainer with TrainingArguments' `bf16` (or `fp16`) and a config without that dtype's section
(an fp16-only config with `--bf16`, a bf16-only one with `--fp16`, or neither section). The Trainer fills only the
sections that exist (transformers 5.24.0 integrations/deepspeed.py, `trainer_config_process`); Accelerate adds the
missing one, `{"enabled": true}`, when the Accelerator is created (accelerate 1.15.0 utils/dataclasses.py:1415-1427,
`DeepSpeedPlugin.set_mixed_precision`). By then a model loaded with `from_pretrained` under ZeRO-3 has been built and
partitioned inside `deepspeed.zero.Init`, which took its dtype from the config as it was: fp32. DeepSpeed then runs
with bf16 (or fp16) enabled while the parameters and the compute stay fp32: twice the memory of the 16-bit model
and none of its speed, with no error (measured with the real Trainer: issue 14 §3b).

Needs `--training-args` (which precision the Trainer asks for); the condition "the model is built after
TrainingArguments, under ZeRO-3" is that of any `from_pretrained` call after TrainingArguments."""

from ..rule import Rule

RULE = Rule(
    code="ZL533",
    name="zero3-dtype-added-after-init",
    severity="warning",
    summary="ZeRO-3 with TrainingArguments' bf16/fp16 but no such section: the model is built in fp32 first",
    targets=("hf",),
    evidence="accelerate 1.15.0 utils/dataclasses.py:1415-1427 (set_mixed_precision); transformers 5.24.0 "
             "integrations/deepspeed.py (trainer_config_process, HfDeepSpeedConfig / zero.Init in from_pretrained)",
)


@RULE.check
def check(view):
    args = view.settings.training_args
    if not args or view.zero_stage != 3 or view.root is None:
        return
    wanted = "bf16" if args.get("bf16") else "fp16" if args.get("fp16") else None
    if wanted is None:
        return
    sections = ("bf16", "bfloat16") if wanted == "bf16" else ("fp16",)
    if any(view.root.member(s) is not None for s in sections):
        return
    other = [s for s in ("fp16", "bf16", "bfloat16") if view.root.member(s) is not None]
    ptr = f"/{other[0]}" if other else "/zero_optimization/stage"
    flag = "--bf16" if wanted == "bf16" else "--fp16"
    yield view.finding(
        ptr,
        f"ZeRO-3 with TrainingArguments {flag} but no {wanted} section: Accelerate adds \"{wanted}\": "
        "{\"enabled\": true} only when the Accelerator is created, after from_pretrained has built and partitioned "
        f"the model under zero.Init in fp32, so DeepSpeed runs with {wanted} enabled while the parameters and the "
        "compute silently stay fp32",
        help=f'add "{wanted}": {{"enabled": "auto"}} to the config, so the Trainer fills it before the model is built')
