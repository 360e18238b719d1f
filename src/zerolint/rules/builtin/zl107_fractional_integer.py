"""A fractional number where DeepSpeed needs an integer. Since the pydantic-v2 migration (DeepSpeed 0.15.0)
integer fields accept `5e8` or `3.0` but reject `15099494.4` ("Input should be a valid integer, got a number
with a fractional part"). The HF Trainer used to write exactly such values when filling
`stage3_prefetch_bucket_size: "auto"` with 0.9 × hidden² (deepspeedai/DeepSpeed#6525, fixed in
huggingface/transformers#33402), and configs copied from such runs carry them. Before 0.15 pydantic v1 truncates a
float in a model's int field (not reported here), but the plain-dict keys (the batch sizes) reach DeepSpeed's
arithmetic as floats in every line: `8.5 != 8 * 1 * 1` fails the batch assertion (parse differential, 0.14.5)."""

import math

from ..rule import Rule

RULE = Rule(
    code="ZL107",
    name="fractional-integer",
    severity="error",
    summary="A fractional number where DeepSpeed requires an integer",
    evidence="https://github.com/deepspeedai/DeepSpeed/issues/6525; https://github.com/huggingface/transformers/pull/33402",
    fixable="safe",
)


@RULE.check
def check(view):
    for issue in view.issues("not-integer"):
        node = issue.node
        if not math.isfinite(node.value):
            continue  # NaN, Infinity, 1e400: ZL008
        if (not view.since(">=0.15.0") and view.is_strict(issue.pointer.rsplit("/", 1)[0])
                and not _enum(issue.schema)):
            continue  # pydantic v1 (before 0.15) truncates a float into an int field (an enum takes no 2.5)
        outcome = view.invalid_value(issue.pointer)
        yield view.finding(issue.pointer,
                           f"{view.path(issue.pointer)} is {node.raw}, which has a fractional part, but it must be "
                           f"an integer: {outcome.text}", at="value", severity=outcome.severity,
                           fails_at=outcome.fails_at, help=f"write {int(node.value)}")


def _enum(schema) -> bool:
    """Whether the field is an enum (ZeRO's stage): pydantic v1 matches the value, it does not truncate it."""
    schema = schema if isinstance(schema, dict) else {}
    return "enum" in schema or any(isinstance(b, dict) and "enum" in b for b in schema.get("anyOf", ()))
