"""`zero_optimization.stage3_allgather_sequential: true` (alias `allgather_sequential`) makes ZeRO-3 fetch
parameters one at a time: when the stage-3 optimizer is built, the engine logs "If zero_allgather_sequential is
True, set prefetch_bucket_size to 1" and overwrites `prefetch_bucket_size` with 1 (engine.py:2742-2744), which
turns parameter prefetching off. A `stage3_prefetch_bucket_size` in the same config is then ignored, and
forward/backward wait on every all-gather. (The inference-only path without an optimizer keeps the prefetch
size.)"""

from ..rule import Rule

RULE = Rule(
    code="ZL218",
    name="allgather-sequential-disables-prefetch",
    severity="info",
    summary="stage3_allgather_sequential forces prefetch_bucket_size to 1 (no prefetch)",
    evidence="deepspeed/runtime/engine.py:2742-2744",
)


@RULE.check
def check(view):
    if view.zero_stage != 3:
        return
    node = view.zero_field("stage3_allgather_sequential")
    if node is None or view.effective(node.pointer, "bool") is not True:
        return
    prefetch = view.zero_field("stage3_prefetch_bucket_size")
    extra = (f"; the {prefetch.pointer.rsplit('/', 1)[-1]} of {prefetch.raw} here is ignored"
             if prefetch is not None else "")
    yield view.finding(
        node.pointer, f"{node.pointer.rsplit('/', 1)[-1]} is true: DeepSpeed sets prefetch_bucket_size to 1 when it "
                      f"builds the ZeRO-3 optimizer, so parameters are not prefetched{extra}",
        at="member", related=[(prefetch.pointer, "overridden")] if prefetch is not None else [],
        help="keep it only if sequential all-gathers are what you want (e.g. to bound memory); otherwise delete it")
