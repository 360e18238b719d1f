"""DeepSpeed's Adagrad (optimizer type "Adagrad", not offloaded: `torch.optim.Adagrad`, engine.py:2495-2500) with
fp16 or bf16 and ZeRO off. The engine wraps it in FP16_UnfusedOptimizer (engine.py:2358-2362: `fp16`, and bf16 at
stage 0 from 0.17.6, `DDP_BFLOAT16`), which gives the optimizer fp32 copies of the parameters and, in its
constructor, takes a first `optimizer.step()` to create the optimizer states (fp16/unfused_optimizer.py:108,
412-425). torch's Adagrad before 2.12 creates its `sum` state only in its own `__init__`, for the parameters it was
built with, and its step reads `state["sum"]` of the new fp32 copies: `KeyError: 'sum'`, so `deepspeed.initialize`
fails (measured: bf16, stage 0, torch 2.11 on an H200; the runtime differential). From torch 2.12 Adagrad also creates
the state on first use (`_init_group`: `if len(state) == 0`, checked in the 2.12.0 wheel), and the same config runs
(measured: torch 2.13 on CPU). The verdict depends on the torch version: the installed one (package metadata, never
imported) or `Settings.torch_version`; without torch installed the finding states the condition as a warning. Adam,
AdamW and the others create their state on the first step; with optimizer offload DeepSpeed builds
DeepSpeedCPUAdagrad instead (ZL202)."""

from ...model.versions import Version, torch_version
from ..rule import Rule

LAZY_STATE = Version("2.12.0")  # torch's Adagrad creates missing state on first use from here

RULE = Rule(
    code="ZL612",
    name="adagrad-16bit-without-zero",
    severity="error",
    summary="Adagrad with fp16/bf16 and ZeRO off fails at initialize with torch < 2.12 (KeyError 'sum')",
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
    torch = torch_version(view.settings)
    if torch is not None and not torch < LAZY_STATE:
        return
    head = (f"Adagrad with {precision} and ZeRO off (stage 0): the {precision} wrapper (FP16_UnfusedOptimizer) takes "
            "a first optimizer step on fp32 copies of the parameters, for which torch's Adagrad ")
    if torch is None:
        yield view.finding(
            "/optimizer/type", head + "before 2.12 created no state, so with torch < 2.12 deepspeed.initialize fails "
            "with KeyError: 'sum' (torch is not installed here, so zerolint cannot tell which torch runs it)",
            at="value", severity="warning",
            help="use ZeRO stage 1 or higher, fp32, torch >= 2.12, or another optimizer")
        return
    yield view.finding(
        "/optimizer/type", head + f"created no state (torch {torch.text}; from 2.12 it creates it on first use), so "
        "deepspeed.initialize fails with KeyError: 'sum'",
        at="value", fails_at="initialize",
        help="use ZeRO stage 1 or higher, fp32, torch >= 2.12, or another optimizer (AdamW creates its state on the "
             "first step)")
