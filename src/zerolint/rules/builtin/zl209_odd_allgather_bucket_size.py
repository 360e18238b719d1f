"""The ZeRO-1/2 optimizer asserts that `allgather_bucket_size` is a multiple of 2 (NCCL start-alignment of
16-bit all-gather shards: "allgather_bucket_size must be a multiple of nccl_start_alignment_factor",
stage_1_and_2.py:386-391). Parse accepts any non-negative integer, so an odd value — usually a hand-typed
`500000001` or a computed size — fails only at `deepspeed.initialize`, after the job has started. Stage 3
never reads the key.

Also checked: the legacy top-level `allgather_size`, which `"zero_optimization": true` (stage 1) turns into
`allgather_bucket_size` (zero/config.py:60-68).

Fix (unsafe: changes the value): round it up to the next even number."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL209",
    name="odd-allgather-bucket-size",
    severity="error",
    summary="allgather_bucket_size is odd; the ZeRO-1/2 optimizer asserts it is even",
    evidence="deepspeed/runtime/zero/stage_1_and_2.py:386-391",
    fixable="unsafe",
)

PTR = "/zero_optimization/allgather_bucket_size"


@RULE.check
def check(view):
    if view.zero_stage not in (1, 2):
        return
    ptr = PTR
    z = view.node("/zero_optimization")
    if z is not None and z.kind == "boolean":
        ptr = "/allgather_size"  # legacy form: zero/config.py:60-68
    value = view.effective(ptr, "int") if view.has(ptr) else None
    if not isinstance(value, int) or value % 2 == 0:
        return
    name = ptr.rsplit("/", 1)[-1]
    yield view.finding(
        ptr,
        f"{name} is {value}, an odd number: with ZeRO stage {view.zero_stage} DeepSpeed fails at "
        "initialize (AssertionError \"allgather_bucket_size must be a multiple of nccl_start_alignment_factor, 2\")",
        at="value", help=f"use an even value, e.g. {value + 1}", fails_at="initialize",
        fixes=edits.fixes(edits.make_fix(f"set {name} to {value + 1}",
                                         edits.replace_value(view.doc, ptr, str(value + 1)), safe=False)))
