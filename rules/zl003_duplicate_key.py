"""A key appears twice in the same object. DeepSpeed refuses such a file outright
(`ValueError: Duplicate keys in DeepSpeed config`); the HF Trainer and Accelerate use `json.load`, which silently
keeps the last value, so half of what you wrote is ignored without a word. Either way it is a mistake."""

from zerolint.rule import Rule

RULE = Rule(
    code="ZL003",
    name="duplicate-key",
    severity="error",
    summary="The same key twice in one object (DeepSpeed rejects the file; json.load keeps the last one)",
    evidence="deepspeed/runtime/config_utils.py:205-212 (dict_raise_error_on_duplicate_keys)",
    fixable="unsafe",
)


@RULE.check
def check(view):
    for note in view.doc.notes:
        if note.kind != "duplicate-key":
            continue
        key = note.message.split(" ", 2)[-1]
        first_line, first_col = view.doc.position(note.related[0])
        if view.raw_deepspeed:
            effect = "DeepSpeed refuses the file (ValueError: Duplicate keys in DeepSpeed config)"
        else:
            effect = f"{view.consumer} silently keeps this one and ignores the first"
        yield view.finding(
            note.pointer, f"duplicate key {key}, first defined at {first_line}:{first_col}; {effect}",
            span=(note.start, note.end),
            help="keep one of the two and delete the other",
            related=[(note.related, f"first {key}")],
        )
