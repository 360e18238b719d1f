"""The placeholder must be exactly `"auto"`: the HF Trainer and Accelerate compare with `== "auto"`, and
DeepSpeed's strict sections drop only that exact string. `"Auto"`, `"AUTO"` or `" auto"` is filled by no one:
in a strict section it is an invalid value (rejected at parse), elsewhere a string where a number belongs."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL503",
    name="auto-wrong-spelling",
    severity="error",
    summary="\"Auto\", \"AUTO\" or \" auto \": only the exact lower-case \"auto\" is recognised",
    evidence="transformers/integrations/deepspeed.py (fill_match compares == 'auto'); "
             "deepspeed/runtime/config_utils.py:54-56",
    fixable="safe",
)


@RULE.check
def check(view):
    for node in view.auto_nodes:
        if node.value == "auto":
            continue
        yield view.finding(node.pointer, f"{view.path(node.pointer)} is \"{node.value}\": neither DeepSpeed nor the "
                                         "HF Trainer / Accelerate recognise it (only the exact lower-case \"auto\" is "
                                         "a placeholder), so it is read as an ordinary string",
                           at="value", help="write \"auto\"",
                           fixes=edits.fixes(edits.make_fix('write "auto"',
                                                            edits.replace_value(view.doc, node, '"auto"'))))
