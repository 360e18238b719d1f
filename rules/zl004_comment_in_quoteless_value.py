"""In hjson a quoteless value runs to the end of the line, comment included: `type: AdamW # fused` gives the
optimizer name "AdamW # fused", and DeepSpeed fails at initialize with an unknown optimizer. The `#` or `//`
looks like a comment to the author but is part of the value."""

from zerolint.rule import Rule

RULE = Rule(
    code="ZL004",
    name="comment-in-quoteless-value",
    severity="error",
    summary="An hjson quoteless value swallows the comment after it",
    evidence="hjson decoder scantfnns (quoteless strings end at the line end); deepspeed-semantics.md §1.2",
    fixable="safe",
)


@RULE.check
def check(view):
    for node in view.root.walk() if view.root is not None else ():
        if not node.quoteless:
            continue
        for marker in ("#", "//", "/*"):
            at = node.value.find(marker)
            if at > 0:
                intended = node.value[:at].rstrip()
                yield view.finding(
                    node.pointer,
                    f"the value is {node.value!r}, not {intended!r}: in hjson a quoteless value runs to the end "
                    f"of the line, so the '{marker}' comment is part of it",
                    at="value",
                    help=f'write "{intended}" in double quotes, then the comment',
                )
                break
