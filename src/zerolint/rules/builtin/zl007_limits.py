"""zerolint refuses inputs beyond its safety limits (file size, nesting depth, number of values) instead of spending
unbounded time and memory on them. A real DeepSpeed config is a few kilobytes and a few levels deep, so hitting a limit
usually means the wrong file was passed."""

from ..rule import Rule

RULE = Rule(
    code="ZL007",
    name="input-limit",
    severity="error",
    summary="The file exceeds zerolint's size, nesting or value-count limit",
    evidence="zerolint safety limits (--max-bytes, --max-depth, --max-values)",
)

RAISE = {"size-limit": "--max-bytes", "depth-limit": "--max-depth", "value-limit": "--max-values"}


@RULE.check
def check(view):
    for note in view.doc.notes:
        if note.kind in RAISE:
            yield view.finding("", f"{note.message}; the file was not checked past this point",
                               span=(note.start, note.end),
                               help=f"if this really is a DeepSpeed config, raise the limit with {RAISE[note.kind]}")
        elif note.kind == "structure-limit":  # long keys nested deep (document.py: POINTER_BUDGET)
            yield view.finding("", f"{note.message}; the file was not checked past this point",
                               span=(note.start, note.end),
                               help="a DeepSpeed config is a few levels of short keys: check that this is the file "
                                    "you meant")
