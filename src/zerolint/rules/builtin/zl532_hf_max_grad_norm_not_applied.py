"""A config for the HF Trainer without `gradient_clipping`. The Trainer hands clipping to DeepSpeed: it fills
`gradient_clipping` from `max_grad_norm` only where the key exists ("auto"; transformers 5.24.0
integrations/deepspeed.py:161; fill_match skips a missing key, :107-133), and with DeepSpeed nothing else clips:
the Trainer's clip call goes to `Accelerator.clip_grad_norm_`, which only reads the engine's norm (accelerate 1.15.0
accelerator.py:3023-3027). A missing key takes DeepSpeed's default: 0.0 (no clipping) before 0.19.3, 1.0
from 0.19.3 (runtime/constants.py:202-203, deepspeedai/DeepSpeed#8068). So before 0.19.3 the Trainer's
max_grad_norm (1.0 by default) is silently not applied; from 0.19.3 clipping is at 1.0 whatever max_grad_norm says
(reported when `--training-args` gives another value)."""

from ..rule import Rule

RULE = Rule(
    code="ZL532",
    name="hf-max-grad-norm-not-applied",
    severity="warning",
    summary="No gradient_clipping under the HF Trainer: max_grad_norm is silently not applied",
    targets=("hf",),
    evidence="transformers/integrations/deepspeed.py:161 (fill_match gradient_clipping); "
             "deepspeed/runtime/constants.py:202-203 (default 0.0 before v0.19.3, #8068)",
)


@RULE.check
def check(view):
    if view.root is None or view.root.member("gradient_clipping") is not None:
        return
    args = view.settings.training_args
    norm = args["max_grad_norm"] if args else 1.0
    shown = f"max_grad_norm {norm}" + ("" if args else " (the TrainingArguments default)")
    if not view.since(">=0.19.3"):
        if norm and norm > 0:
            yield view.finding("", f"no gradient_clipping: the HF Trainer leaves clipping to DeepSpeed and fills it "
                                   f"only from a \"gradient_clipping\": \"auto\" key, and DeepSpeed {view.version} "
                                   f"defaults to 0.0: {shown} is silently not applied",
                               help='add "gradient_clipping": "auto"')
        return
    if args and norm != 1.0:
        yield view.finding("", f"no gradient_clipping: the HF Trainer fills it only from a \"gradient_clipping\": "
                               f"\"auto\" key, so DeepSpeed {view.version} clips at its default 1.0, not at {shown}",
                           help='add "gradient_clipping": "auto"')
