"""A number outside the range DeepSpeed accepts: a negative bucket size or threshold, `reduce_bucket_size`
of 0, an offload `ratio` or `cpuadam_cores_perc` outside 0..1, a batch size below 1. In validated sections
DeepSpeed rejects the config at parse; batch sizes fail its batch assertion at parse."""

from ..rule import Rule

RULE = Rule(
    code="ZL106",
    name="out-of-range",
    severity="error",
    summary="A number outside the range DeepSpeed accepts",
    evidence="deepspeed/runtime/zero/config.py (ge/gt constraints); deepspeed/runtime/config.py:596-600",
)


@RULE.check
def check(view):
    for issue in view.issues("range"):
        outcome = view.invalid_value(issue.pointer)
        yield view.finding(issue.pointer,
                           f"{view.path(issue.pointer)} is {issue.node.raw}, but it must be {issue.expected}: "
                           f"{outcome.text}", at="value", severity=outcome.severity, fails_at=outcome.fails_at,
                           help=f"use {issue.expected}")
