"""DeepSpeed 0.19.7 removed the 1-bit optimizers: `OneBitAdam`, `ZeroOneAdam` and `OneBitLamb` are no longer in
DeepSpeed's optimizer list (compare 0.19.6 runtime/config.py:84-87 with 0.19.7 runtime/config.py:80-83), so the name
falls through to `getattr(torch.optim, "OneBitAdam")`, which does not exist, and `deepspeed.initialize` fails with
`AssertionError: OneBitAdam is not a supported DeepSpeed Optimizer` (engine.py:2016-2019). The parse still
passes, so nothing warns until the job is running. The DeepSpeed docs still list them
(docs/_pages/config-json.md:46 at git HEAD); the removal is part of the legacy-feature cleanup tracked in
deepspeedai/DeepSpeed#8489.

No automatic fix: Adam/AdamW are different algorithms (no compressed communication), and the 1-bit arguments
(`freeze_step`, `cuda_aware`, `comm_backend_name`, ...) would then be unknown constructor arguments (ZL604)."""

from ...model import dsfacts
from ..rule import Rule

RULE = Rule(
    code="ZL704",
    name="removed-optimizer",
    severity="error",
    summary="A 1-bit optimizer (OneBitAdam, ZeroOneAdam, OneBitLamb) that DeepSpeed 0.19.7 removed",
    versions=">=0.19.7",
    evidence="deepspeed 0.19.6 runtime/config.py:84-87 vs 0.19.7 runtime/config.py:80-83; "
             "deepspeed/runtime/engine.py:2016-2019; https://github.com/deepspeedai/DeepSpeed/issues/8489",
)


@RULE.check
def check(view):
    t = view.optimizer_type
    if t is None or t.lower() not in dsfacts.REMOVED_OPTIMIZERS:
        return
    name, gone = dsfacts.REMOVED_OPTIMIZERS[t.lower()]
    if not view.since(f">={gone}"):
        return
    params = [m.key for m in view.members("/optimizer/params") if m.key in dsfacts.ONEBIT_PARAMS]
    yield view.finding(
        "/optimizer/type",
        f"optimizer.type \"{t}\": DeepSpeed removed the 1-bit optimizer {name} in {gone}, so DeepSpeed "
        f"{view.version} fails at initialize with \"AssertionError: {t} is not a supported DeepSpeed Optimizer\"",
        at="value",
        help=f"pin deepspeed<{gone} to keep {name}, or switch to "
             f"{'Lamb' if name == 'OneBitLamb' else 'Adam/AdamW'}"
             + (f" and delete its 1-bit arguments ({', '.join(params)})" if params else ""), fails_at="initialize"
    )
