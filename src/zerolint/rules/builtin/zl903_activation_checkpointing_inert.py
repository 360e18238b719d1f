"""The `activation_checkpointing` section does nothing by itself. `deepspeed.initialize` parses it
(runtime/config.py:503) but no engine code reads it: only `deepspeed.checkpointing.configure(mpu,
deepspeed_config=...)` applies it, to the module-level settings of `deepspeed.checkpointing.checkpoint`
(activation_checkpointing/checkpointing.py:1121-1133, 1207-1208). The HF Trainer's `gradient_checkpointing` and
`torch.utils.checkpoint` never look at it (deepspeedai/DeepSpeed#5704). Megatron-DeepSpeed-style training code
calls `configure`; most other code does not, and then these settings silently have no effect.

Reported once per config (info), on the section; the typo `partitioned_activations` (the spelling in
DeepSpeed's own format string) is ZL103's."""

from ..rule import Rule

RULE = Rule(
    code="ZL903",
    name="activation-checkpointing-inert",
    severity="info",
    summary="activation_checkpointing takes effect only if the code calls deepspeed.checkpointing.configure",
    evidence="deepspeed/runtime/activation_checkpointing/checkpointing.py:1121-1133, 1207-1208; "
             "https://github.com/deepspeedai/DeepSpeed/issues/5704",
)

PTR = "/activation_checkpointing"


@RULE.check
def check(view):
    node = view.node(PTR)
    if node is None or node.kind != "object" or not node.members:
        return
    yield view.finding(
        PTR, "activation_checkpointing is applied only when the training code calls "
             "deepspeed.checkpointing.configure(mpu, deepspeed_config=...) and checkpoints with "
             "deepspeed.checkpointing.checkpoint; otherwise DeepSpeed ignores the whole section (the HF Trainer's "
             "gradient_checkpointing does not read it)",
        help="keep it if your code calls deepspeed.checkpointing.configure; otherwise delete it and enable "
             "checkpointing in the model (e.g. gradient_checkpointing=True)")
