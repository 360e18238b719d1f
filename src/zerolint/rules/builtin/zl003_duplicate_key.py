"""A key appears twice in the same object. DeepSpeed refuses such a file outright
(`ValueError: Duplicate keys in DeepSpeed config`); the HF Trainer and Accelerate use `json.load`, which silently
keeps the last value, so half of what you wrote is ignored without a word. Either way it is a mistake.

Fixes (both unsafe, since DeepSpeed never accepted the file): `keep-last` (the default) deletes the first
occurrence, which is what json.load already does; `keep-first` (`--prefer keep-first`) deletes the later one."""

from ...base import pointer as jp
from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL003",
    name="duplicate-key",
    severity="error",
    summary="The same key twice in one object (DeepSpeed rejects the file; json.load keeps the last one)",
    evidence="deepspeed/runtime/config_utils.py:205-212 (dict_raise_error_on_duplicate_keys)",
    fixable="alternatives",
)


@RULE.check
def check(view):
    by_start: dict = {}  # id(object) -> {key offset: member}, built once per object (linear with many duplicates)
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
            fixes=_fixes(view, note, by_start),
            fails_at="parse" if view.raw_deepspeed else None,
        )


def _fixes(view, note, by_start=None):
    """Both fixes are unsafe: DeepSpeed refused the file, so neither value has ever been used by it. Keeping the
    last one (the default) is what json.load, the HF Trainer and Accelerate already do."""
    doc = view.doc
    parent = doc.node(jp.parent(note.pointer))
    if parent is None or not parent.members:
        return []
    by_start = {} if by_start is None else by_start
    starts = by_start.get(id(parent))
    if starts is None:
        starts = by_start[id(parent)] = {m.key_start: m for m in parent.members}
    first, second = starts.get(note.related[0]), starts.get(note.start)
    if first is None or second is None:
        return []
    return edits.fixes(
        edits.make_fix("delete the first occurrence (json.load already ignores it)", edits.remove_member(doc, first),
                       safe=False, choice="keep-last", default=True),
        edits.make_fix("delete this second occurrence", edits.remove_member(doc, second), safe=False,
                       choice="keep-first"),
    )
