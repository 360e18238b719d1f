"""A value of the wrong type: a string where DeepSpeed needs a number or a boolean, a number where it needs a
string, an object where it needs a list. In the sections DeepSpeed validates (ZeRO, fp16/bf16, monitors, ...)
the config is rejected at parse; in the plain-dict sections the value reaches code that fails later (a string
batch size crashes the batch arithmetic at parse, a string `gradient_clipping` the first step). Where
pydantic's lax mode silently converts the value (`"true"` for a boolean, `"3"` for an integer), the config
works but does not say what it means: a warning. So is a value DeepSpeed only tests for truth (`if torch_adam:`):
any value works, as Python's truth of it ("torch_impl" and even "false" mean true)."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL104",
    name="wrong-type",
    severity="error",
    summary="A value of the wrong type (e.g. a string where a number belongs)",
    evidence="deepspeed/runtime/config_utils.py:105-113 (pydantic validation); deepspeed/runtime/config.py:590-652",
    fixable="safe",
)

FALSE_WORDS = {"false", "0", "no", "off", "n", "f", "none", "null", ""}  # strings a reader takes for false
KIND = {"string": "a string", "number": "a number", "boolean": "a boolean", "null": "null", "object": "an object",
        "array": "a list"}


@RULE.check
def check(view):
    for issue in view.schema_issues:
        node = issue.node
        if view.is_placeholder(node):
            continue  # a template placeholder: ZL010
        kind = KIND.get(node.kind, node.kind)
        shown = f"{node.raw} ({kind})" if node.raw and len(node.raw) <= 40 and node.raw != kind else kind
        if issue.kind == "type":
            outcome = view.invalid_value(issue.pointer)
            yield view.finding(issue.pointer,
                               f"{view.path(issue.pointer)} is {shown}, expected "
                               f"{issue.expected}: {outcome.text}", at="value", severity=outcome.severity,
                               help=f"write {issue.expected}", fails_at=outcome.fails_at)
        elif issue.kind == "truthy":
            says_false = node.kind == "string" and node.value.strip().lower() in FALSE_WORDS
            message = (f"{view.path(issue.pointer)} is {shown}; DeepSpeed only tests it for truth, so it means "
                       f"{issue.expected}")
            if says_false:  # what it says and what runs differ: only the user knows which was meant
                yield view.finding(issue.pointer, message + f", not {node.value.strip().lower()}", at="value",
                                   severity="warning", help="write true to keep what runs, or false for what it says")
            else:
                yield view.finding(issue.pointer, message, at="value", severity="warning",
                                   help=f"write {issue.expected}", fixes=edits.fixes(edits.make_fix(
                                       f"write {issue.expected}", edits.replace_value(view.doc, node,
                                                                                      issue.expected))))
        elif issue.kind == "coerced":
            yield view.finding(issue.pointer,
                               f"{view.path(issue.pointer)} is {shown}; DeepSpeed "
                               f"converts it to {issue.expected}", at="value", severity="warning",
                               help=f"write {issue.expected}", fixes=edits.fixes(edits.make_fix(
                                   f"write {issue.expected}", edits.replace_value(view.doc, node, issue.expected))))
