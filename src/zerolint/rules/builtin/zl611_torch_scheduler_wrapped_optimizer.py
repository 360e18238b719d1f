"""A torch LR scheduler named in `scheduler.type` (StepLR, ReduceLROnPlateau, OneCycleLR, ...) cannot take the
optimizer DeepSpeed hands it whenever DeepSpeed wraps the optimizer.

DeepSpeed looks `scheduler.type` up in its own `lr_schedules` first and then in `torch.optim.lr_scheduler`
(runtime/engine.py:1923-1936) and builds it on `self.optimizer`, the optimizer after wrapping. With ZeRO (any stage
1-3), fp16 or bf16 that is one of DeepSpeed's classes (DeepSpeedZeroOptimizer, DeepSpeedZeroOptimizer_Stage3,
BF16_Optimizer, FP16_Optimizer, FP16_UnfusedOptimizer; engine.py:2294-2325, 2358-2366), none of which subclasses
torch.optim.Optimizer (they derive from `DeepSpeedOptimizer(object)`, runtime/base_optimizer.py:17, 250). torch's
schedulers check `isinstance(optimizer, Optimizer)` first, so `deepspeed.initialize` fails with
`TypeError: DeepSpeedZeroOptimizer is not an Optimizer` (measured with DeepSpeed 0.19.8 and torch 2.13 on CPU:
ZeRO-1, fp16 and bf16 all fail; ZeRO off in fp32 runs). DeepSpeed's own schedulers (WarmupLR, WarmupDecayLR,
WarmupCosineLR, OneCycle, LRRangeTest) take any optimizer with `param_groups` and work with every wrapper; torch's
OneCycleLR has DeepSpeed's `OneCycle` as its counterpart. The lookup and the wrappers are the same in 0.8.0
(engine.py:963) and 0.16.0 (engine.py:1013; base_optimizer.py:14-18)."""

from ..rule import Rule

RULE = Rule(
    code="ZL611",
    name="torch-scheduler-with-wrapped-optimizer",
    severity="error",
    summary="A torch LR scheduler in scheduler.type while DeepSpeed wraps the optimizer (ZeRO, fp16, bf16)",
    evidence="deepspeed/runtime/engine.py:1923-1936, 2294-2325, 2358-2366; deepspeed/runtime/base_optimizer.py:17, "
             "250; torch/optim/lr_scheduler.py (LRScheduler.__init__)",
)

COUNTERPART = {"OneCycleLR": "OneCycle", "LinearLR": "WarmupLR", "CosineAnnealingLR": "WarmupCosineLR"}


@RULE.check
def check(view):
    wrapper = view.optimizer_wrapper
    if not view.torch_scheduler or not wrapper:
        return
    t = view.scheduler_type
    own = COUNTERPART.get(t)
    suggestion = f"DeepSpeed's own {own}" if own else "one of DeepSpeed's own schedulers (WarmupLR, WarmupDecayLR, " \
                                                     "WarmupCosineLR, OneCycle)"
    yield view.finding(
        "/scheduler/type",
        f"scheduler \"{t}\" is torch's torch.optim.lr_scheduler.{t}, and with {wrapper} DeepSpeed hands it its own "
        f"optimizer wrapper, which is not a torch Optimizer: deepspeed.initialize fails with \"TypeError: ... is not "
        "an Optimizer\"",
        at="value", fails_at="initialize",
        help=f"use {suggestion}, which works with every wrapper",
    )
