"""A value outside the set DeepSpeed accepts: a ZeRO stage other than 0-3, an offload device other than
`none`/`cpu`/`nvme` (lower case: `"CPU"` and `"gpu"` are rejected), a compile pass DeepSpeed does not have, a
checkpoint `tag_validation` mode it does not know. In validated sections DeepSpeed rejects the config at
parse."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL105",
    name="invalid-value",
    severity="error",
    summary="A value outside the allowed set (e.g. stage 4, device \"gpu\")",
    evidence="deepspeed/runtime/zero/config.py:81-95; deepspeed/runtime/zero/offload_config.py:15-24",
    fixable="safe",
)


@RULE.check
def check(view):
    for issue in view.issues("enum"):
        node = issue.node
        if view.is_placeholder(node):
            continue  # a template placeholder: ZL010
        if _case_insensitive_match(issue, node):
            continue
        outcome = view.invalid_value(issue.pointer)
        choices = (issue.schema or {}).get("enum") or []
        for branch in (issue.schema or {}).get("anyOf", ()):
            choices = choices or branch.get("enum", [])
        guess = view.closest(str(node.value), [str(c) for c in choices]) if isinstance(node.value, str) else None
        fix = None
        if guess is not None and guess.lower() == str(node.value).strip().lower():
            fix = edits.make_fix(f'write "{guess}"', edits.replace_value(view.doc, node, edits.value_text(guess)))
        yield view.finding(issue.pointer, fixes=edits.fixes(fix), message=
                           f"{view.path(issue.pointer)} is {node.raw}, but it must be {issue.expected}: {outcome.text}"
                           + (f"; did you mean \"{guess}\"?" if guess else ""),
                           at="value", severity=outcome.severity, fails_at=outcome.fails_at,
                           help=f'write "{guess}"' if guess else f"use {issue.expected}")


def _case_insensitive_match(issue, node):
    """DeepSpeed upper-/lower-cases some values before checking them (checkpoint.tag_validation, writer.type,
    gradient_allreduce_op, communication_data_type; schema `x-zerolint-case-insensitive`), so "wArN" is fine."""
    s = issue.schema or {}
    if not s.get("x-zerolint-case-insensitive") or not isinstance(node.value, str):
        return False
    choices = list(s.get("enum") or []) + [c for b in s.get("anyOf", ()) for c in b.get("enum", [])]
    return node.value.lower() in {c.lower() for c in choices if isinstance(c, str)}
