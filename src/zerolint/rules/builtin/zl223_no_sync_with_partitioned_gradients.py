"""The training code calls `engine.no_sync()` (skip the gradient all-reduce, for gradient accumulation of one's
own) while the config asks for ZeRO stage 2 or 3, which partition the gradients through that reduction: the
context manager asserts "no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage N"
on entry (runtime/engine.py, `no_sync`: `assert not self.zero_optimization_partition_gradients()`, i.e. stage >= 2;
the method exists since 0.16.0). Only `check` with the repository read (docs/uses.md) knows the code makes the call,
so the rule says nothing otherwise; DeepSpeed's own `gradient_accumulation_steps` does what no_sync was for."""

from ..rule import Rule

RULE = Rule(
    code="ZL223",
    name="no-sync-with-partitioned-gradients",
    severity="error",
    summary="The code calls engine.no_sync() and the config asks for ZeRO stage 2 or 3",
    targets=("deepspeed",),
    versions=">=0.16.0",
    evidence="deepspeed/runtime/engine.py (DeepSpeedEngine.no_sync)",
)


@RULE.check
def check(view):
    calls = view.settings.engine_calls or {}
    stage = view.zero_stage
    if "no_sync" not in calls or stage not in (2, 3):
        return
    call, where = calls["no_sync"]
    node = view.node("/zero_optimization/stage")
    yield view.finding(
        "/zero_optimization/stage" if node is not None else "/zero_optimization",
        f"the training code calls {call} ({where}) and ZeRO stage {stage} partitions the gradients through the "
        f"reduction it skips: the engine asserts \"no_sync context manager is incompatible with gradient "
        f"partitioning logic of ZeRO stage {stage}\" when the context is entered",
        at="value" if node is not None else "key", fails_at="step",
        help="let DeepSpeed accumulate (gradient_accumulation_steps, and call engine.backward/engine.step every "
             "micro-step) instead of no_sync, or use ZeRO stage 0 or 1")
