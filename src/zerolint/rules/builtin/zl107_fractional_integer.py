"""A fractional number where DeepSpeed needs an integer. Since the pydantic-v2 migration (DeepSpeed 0.15.0)
integer fields accept `5e8` or `3.0` but reject `15099494.4` ("Input should be a valid integer, got a number
with a fractional part"). The HF Trainer used to write exactly such values when filling
`stage3_prefetch_bucket_size: "auto"` with 0.9 × hidden² (deepspeedai/DeepSpeed#6525, fixed in
huggingface/transformers#33402), and configs copied from such runs carry them."""

import math

from ..rule import Rule

RULE = Rule(
    code="ZL107",
    name="fractional-integer",
    severity="error",
    summary="A fractional number where DeepSpeed requires an integer",
    versions=">=0.15.0",
    evidence="https://github.com/deepspeedai/DeepSpeed/issues/6525; https://github.com/huggingface/transformers/pull/33402",
    fixable="safe",
)


@RULE.check
def check(view):
    for issue in view.issues("not-integer"):
        node = issue.node
        if not math.isfinite(node.value):
            continue  # NaN, Infinity, 1e400: ZL008
        outcome = view.invalid_value(issue.pointer)
        yield view.finding(issue.pointer,
                           f"{view.path(issue.pointer)} is {node.raw}, which has a fractional part, but it must be "
                           f"an integer: {outcome.text}", at="value", severity=outcome.severity,
                           fails_at=outcome.fails_at, help=f"write {int(node.value)}")
