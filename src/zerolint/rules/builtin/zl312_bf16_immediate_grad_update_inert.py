"""`bf16.immediate_grad_update` is read by one class only, DeepSpeed's BF16_Optimizer (bf16_optimizer.py:81, 230,
533: gradient hooks that fold each bf16 gradient into the fp32 copy at once instead of after backward). The engine
builds that optimizer only for bf16 with fp32 gradient accumulation at ZeRO stage 1 without CPU optimizer offload,
or for a bf16 pipeline model with ZeRO off (engine.py:2296-2321 in 0.19.8; the same ZeRO branch from 0.14.5). At
ZeRO stage 2 and 3, and at stage 1 otherwise, the ZeRO optimizers run and never read the key: setting it true
changes nothing. (Before 0.17 the plain-dict bf16 block defaulted it to true; from 0.17 the pydantic model
defaults it to false.) ZeRO off is left alone: there it depends on whether the model is a PipelineModule and on the
DeepSpeed line."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL312",
    name="bf16-immediate-grad-update-inert",
    severity="warning",
    summary="bf16.immediate_grad_update set where the BF16_Optimizer that reads it is not used (ZeRO 2/3, most of 1)",
    evidence="deepspeed/runtime/bf16_optimizer.py:81, 230, 533; deepspeed/runtime/engine.py:2296-2321",
    fixable="safe",
)


@RULE.check
def check(view):
    ptr = f"{view.bf16_section}/immediate_grad_update"
    node = view.node(ptr)
    stage = view.zero_stage
    if node is None or not stage or view.bf16_enabled is False or view.effective(ptr, "bool") is not True:
        return
    if stage == 1:
        accum, device = view.grad_accum_dtype, view.offload_device("optimizer")
        if accum is None or device is None or view.model_dtype is None:
            return  # decided at run time
        if view.model_dtype == "bf16" and accum == "fp32" and device != "cpu":
            return  # the BF16_Optimizer runs and reads it
        why = ("ZeRO stage 1 uses DeepSpeed's BF16_Optimizer only with fp32 gradient accumulation "
               "(data_types.grad_accum_dtype) and no CPU optimizer offload")
    else:
        why = f"ZeRO stage {stage} runs its own optimizer, never DeepSpeed's BF16_Optimizer"
    yield view.finding(
        ptr, f"{view.path(ptr)} is {node.raw}, but only the BF16_Optimizer reads it and {why}: the setting has no "
             "effect",
        at="member", help="delete it (or, at stage 1, set data_types.grad_accum_dtype to \"fp32\" for the "
                          "BF16_Optimizer)",
        fixes=edits.fixes(edits.make_fix(f"delete {view.path(ptr)}", edits.remove_member(view.doc, ptr))))
