"""`bfloat16` is the legacy name of `bf16`, and DeepSpeed reads it only when `bf16` is absent or null
(runtime/precision_config.py:34-38). With both present, `bfloat16` is silently ignored — so
`"bf16": {"enabled": false}, "bfloat16": {"enabled": true}` trains without bf16."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL302",
    name="bf16-and-bfloat16",
    severity="warning",
    summary="Both bf16 and its legacy name bfloat16 are present; bfloat16 is ignored",
    evidence="deepspeed/runtime/precision_config.py:34-38",
    fixable="safe",
)


@RULE.check
def check(view):
    bf16, legacy = view.node("/bf16"), view.node("/bfloat16")
    if bf16 is None or legacy is None or bf16.kind == "null":
        return
    conflict = view.value("/bf16/enabled") != view.value("/bfloat16/enabled")
    yield view.finding("/bfloat16",
                       "bfloat16 is ignored because bf16 is also present"
                       + (f" — and they disagree: bf16 is {'on' if view.bf16_enabled else 'off'}" if conflict else ""),
                       severity="error" if conflict else None, related=[("/bf16", "bf16 is read instead")],
                       help="delete bfloat16 and keep the settings you want under bf16",
                       fixes=edits.fixes(edits.make_fix("delete bfloat16 (DeepSpeed ignores it)",
                                                        edits.remove_member(view.doc, "/bfloat16"),
                                                        safe=not conflict)))
