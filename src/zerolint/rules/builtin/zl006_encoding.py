"""DeepSpeed opens the config with Python's `open()` (UTF-8 on Linux) and the HF Trainer with
`open(..., encoding="utf-8")`: a UTF-16 file or invalid UTF-8 bytes raise UnicodeDecodeError before anything
else is read, and a raw control character inside a string is rejected by both json and hjson."""

from ..rule import Rule

RULE = Rule(
    code="ZL006",
    name="invalid-encoding",
    severity="error",
    summary="The file is not valid UTF-8 text (UTF-16, stray bytes, control characters in strings)",
    evidence="deepspeed/runtime/config.py:444 (open(config, 'r'))",
)


@RULE.check
def check(view):
    for note in view.doc.notes:
        if note.kind == "encoding":
            yield view.finding("", note.message, span=(note.start, note.end),
                               help="re-save the file as UTF-8", fails_at="parse")
        elif note.kind == "control-character":
            yield view.finding("", "a raw control character inside a string; json and hjson both reject it",
                               span=(note.start, note.end), help="write it as an escape such as \\t or \\u0000",
                               fails_at="parse")
