"""DeepSpeed's Adagrad (optimizer type "Adagrad", not offloaded: `torch.optim.Adagrad`, engine.py:2495-2500) with
fp16 or bf16 and ZeRO off. The engine wraps it in FP16_UnfusedOptimizer (engine.py:2358-2362: `fp16`, and bf16 at
stage 0 from 0.17.6, `DDP_BFLOAT16`), which gives the optimizer fp32 copies of the parameters and, in its
constructor, takes a first `optimizer.step()` to create the optimizer states (fp16/unfused_optimizer.py:108,
412-425). torch's Adagrad creates its `sum` state in its own `__init__`, for the parameters it was built with, and
its step reads `state["sum"]` of the new fp32 copies: `KeyError: 'sum'`, so `deepspeed.initialize` fails (measured:
bf16, stage 0, on an H200 and on CPU; the runtime differential). Adam, AdamW and the others create their state on the
first step and are not affected; with optimizer offload DeepSpeed builds DeepSpeedCPUAdagrad instead (ZL202)."""

from ..rule import Rule

RULE = Rule(
    code="ZL612",
    name="adagrad-16bit-without-zero",
    severity="error",
    summary="Adagrad with fp16/bf16 and ZeRO off fails at initialize (KeyError 'sum')",
    evidence="deepspeed/runtime/engine.py:2358-2362, 2495-2500; deepspeed/runtime/fp16/unfused_optimizer.py:108, "
             "412-425",
)


@RULE.check
def check(view):
    if view.zero_stage != 0 or view.optimizer_class != "torch.optim.Adagrad":
        return
    precision = view.precision
    if precision not in ("fp16", "bf16") or (precision == "bf16" and not view.since(">=0.17.6")):
        return
    yield view.finding(
        "/optimizer/type",
        f"Adagrad with {precision} and ZeRO off (stage 0): the {precision} wrapper (FP16_UnfusedOptimizer) takes a "
        "first optimizer step on fp32 copies of the parameters, for which torch's Adagrad created no state, so "
        "deepspeed.initialize fails with KeyError: 'sum'",
        at="value", fails_at="initialize",
        help="use ZeRO stage 1 or higher, fp32, or another optimizer (AdamW creates its state on the first step)")
