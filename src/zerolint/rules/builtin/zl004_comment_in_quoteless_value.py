"""In hjson a quoteless value runs to the end of the line, comment included: `type: AdamW # fused` gives the
optimizer name "AdamW # fused", and DeepSpeed fails at initialize with an unknown optimizer. The `#` or `//`
looks like a comment to the author but is part of the value.

Fix (safe: it gives the value the author evidently meant; DeepSpeed could not use the value it reads now):
quote the text before the marker and leave the rest as a real comment, `type: "AdamW" # fused`. Offered only
when a blank precedes the marker, since `//` inside `/data//nvme` is part of a path."""

import json

from ...model import edits
from ...model.diagnostics import Edit
from ..rule import Rule

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
                    fixes=edits.fixes(_fix(view, node, at, marker, intended)),
                )
                break


def _fix(view, node, at, marker, intended):
    """Quote what comes before the marker; the rest becomes the comment it looks like. Only when the marker
    follows a blank (`AdamW # fused`): in `/data//nvme` the `//` is part of a path, not a comment."""
    text = view.doc.text
    raw = text[node.start:node.end]
    k = raw.find(marker)
    if k <= 0 or raw[k - 1] not in " \t":
        return None
    if marker == "/*":
        close = raw.find("*/", k + 2)
        if close < 0 or raw[close + 2:].strip():
            return None
    cut = node.start + len(raw[:k].rstrip())
    return edits.make_fix(f'quote "{intended}" and keep the {marker} comment as a comment',
                          (Edit(node.start, cut, json.dumps(intended, ensure_ascii=False)),))
