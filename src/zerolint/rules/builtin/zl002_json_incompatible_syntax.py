"""DeepSpeed reads a config file with hjson, which accepts comments, trailing commas, missing commas between
members, unquoted keys, quoteless and single-quoted strings and a byte-order mark. The HF Trainer and Accelerate
read the same file with Python's `json.load`, which rejects all of them, so a config that works with
`deepspeed train.py --deepspeed ds.json` fails under `Trainer(args=TrainingArguments(deepspeed="ds.json"))`.

For raw DeepSpeed this is a warning (the file works, but only for DeepSpeed, and editors and other tools
reject it); for the HF Trainer and Accelerate it is an error, and the first one says where `json.load`
stops.

Fixes: deleting a trailing comma, inserting a missing comma, quoting an unquoted key or a quoteless,
single-quoted or multiline string (with the value hjson reads), removing a byte-order mark and wrapping a
brace-less root in `{ }` are safe (DeepSpeed reads the same values). Deleting a comment is unsafe: the comment
is the author's note, and its text is lost.
A file with several such constructs gets one finding with their count (one per construct said the same thing N
times), at the first one the fix rewrites, and one fix for all of them that lose nothing; the comments, if any, are
reported once more after it, with their own (unsafe) deletion."""

import json
import re
from collections import Counter

from ...base import pointer as jp
from ...model import edits
from ...model.diagnostics import Edit
from ...model.document import HJSON_ONLY
from ..rule import Rule

RULE = Rule(
    code="ZL002",
    name="json-incompatible-syntax",
    severity="warning",
    summary="Syntax DeepSpeed's hjson reader accepts but json.load (HF Trainer, Accelerate) rejects",
    evidence="deepspeed/runtime/config.py:444 (hjson.load); https://github.com/bowang-lab/BioReason/issues/10",
    fixable="safe",
)

WHAT = {
    "comment": "a comment",
    "trailing-comma": "a trailing comma",
    "missing-comma": "a missing comma",
    "unquoted-key": "an unquoted key",
    "quoteless-string": "a quoteless string",
    "single-quote-string": "a single-quoted string",
    "multiline-string": "an hjson multiline string",
    "root-braces-omitted": "a root object without braces",
    "bom": "a UTF-8 byte-order mark",
}


@RULE.check
def check(view):
    doc = view.doc
    if doc.hjson_error is not None:
        return  # DeepSpeed cannot read it either: ZL001
    fatal = not view.raw_deepspeed
    json_stop = None
    if doc.json_error is not None:
        json_stop = doc.position(doc.json_error.offset)
    notes = [n for n in doc.notes if n.kind in HJSON_ONLY]
    if len(notes) > 1:  # one finding for the file, with a count (one per construct says the same N times)
        yield _together(view, notes, fatal, json_stop)
    elif notes:
        [note] = notes
        message = _message(view, WHAT[note.kind], "this", fatal, json_stop)
        help = HELP.get(note.kind)
        if note.kind == "missing-comma" and note.related:
            line, col = doc.position(note.related[0])
            help = f"insert ',' at {line}:{col}, after the previous value"
        yield view.finding(note.pointer, message, span=(note.start, note.end), severity="error" if fatal else None,
                           fails_at="parse" if fatal else None,
                           help=help, fixes=edits.fixes(_fix(view, note)))


def _message(view, lead: str, it: str, fatal: bool, json_stop) -> str:
    """What `lead` (one construct, `it` = "this", or a count, "them") means for the consumer."""
    if not fatal:
        return (f"{lead}: DeepSpeed's hjson reader accepts {it}, but json.load (HF Trainer, Accelerate) and JSON "
                "tools reject the file")
    message = f"{lead}: {view.consumer} reads the config with json.load, which rejects {it}"
    if json_stop is not None:
        message += f" (json.load stops at {json_stop[0]}:{json_stop[1]}: {view.doc.json_error.message})"
    return message


def _together(view, notes, fatal, json_stop):
    """One finding for several constructs, at the first: how many of each, and one fix for all that can be
    rewritten safely (the comments' deletion, unsafe, comes once they are the only ones left)."""
    counts = Counter(n.kind for n in notes)
    summary = ", ".join(f"{c} {PLURAL[k] if c > 1 else WHAT[k].split(' ', 1)[1]}" for k, c in counts.items())
    [only] = counts if len(counts) == 1 else [None]
    lead = f"{len(notes)} {PLURAL[only]}" if only else f"{len(notes)} constructs json.load rejects ({summary})"
    message = _message(view, lead, "them", fatal, json_stop)
    fixes = [(n, f) for n, f in ((n, _fix(view, n)) for n in notes) if f is not None]
    safe = [(n, f) for n, f in fixes if f.safe]
    chosen = safe or fixes
    combined = edits.combine(f.edits for _, f in chosen)
    what = "delete the comments (their text is lost)" if only == "comment" else (
        f"rewrite {'them' if len(chosen) == len(notes) else f'{len(chosen)} of them'} as JSON"
        + ("" if safe else " (deleting the comments: their text is lost)"))
    fix = edits.make_fix(what, combined, safe=bool(safe))
    # at the first construct the fix rewrites: what it leaves (comments) is reported again elsewhere, not here
    first = chosen[0][0] if chosen else notes[0]
    return view.finding(first.pointer, message, span=(first.start, first.end), severity="error" if fatal else None,
                        fails_at="parse" if fatal else None,
                        help="JSON has no comments: delete them, or move the notes into keys such as \"_comment\""
                        if only == "comment" else
                        "rewrite the file as plain JSON (zerolint check --fix does it where nothing is lost)",
                        fixes=edits.fixes(fix))


def _fix(view, note):
    """Safe where the rewrite keeps every value as hjson reads it; deleting a comment loses the author's note,
    so that one is unsafe."""
    doc, kind = view.doc, note.kind
    text = doc.text
    if kind == "trailing-comma":
        return edits.make_fix("delete the trailing comma",
                              edits.delete_span(doc, note.start, note.end, whole_line=False))
    if kind == "missing-comma" and note.related:
        before = doc.node(note.pointer)
        if before is not None and before.quoteless:
            return None  # a comma after a quoteless value would be part of it; quote the value first
        return edits.make_fix("insert the missing comma", edits.insert_comma(doc, note.related[0]))
    if kind == "unquoted-key":
        key = text[note.start:note.end]
        return edits.make_fix("quote the key", (Edit(note.start, note.end, json.dumps(key, ensure_ascii=False)),))
    if kind == "bom":
        return edits.make_fix("remove the byte-order mark", (Edit(note.start, note.end, ""),))
    if kind == "comment":
        return edits.make_fix("delete the comment (its text is lost)", edits.delete_span(doc, note.start, note.end),
                              safe=False)
    if kind == "root-braces-omitted":
        root = doc.root
        if root is None:
            return None
        nl = edits.newline(doc)
        start = max(edits.line_start(text, root.start), 1 if text.startswith("\ufeff") else 0)
        tail = "}" + nl if text.endswith(("\n", "\r")) else nl + "}"
        return edits.make_fix("wrap the document in { }",
                              (Edit(start, start, "{" + nl), Edit(len(text), len(text), tail)))
    if kind in ("quoteless-string", "single-quote-string", "multiline-string"):
        value = _hjson_string(doc, note)
        if value is None:
            return None
        if kind == "quoteless-string" and any(value.find(m) > 0 for m in ("#", "//", "/*")):
            return None  # the value swallowed a comment: ZL004 offers the fix that was meant
        if kind == "quoteless-string" and value.endswith(","):
            return None  # `"stage": ${STAGE},` — the comma was meant as JSON's; quoting it would keep it in the value
        # A template placeholder (`${STAGE}`, `{{ stage }}`, `CONFIG_FP16_ENABLED`) is meant to be substituted with
        # a number or a boolean: quoting it keeps hjson's reading but changes what the template produces.
        placeholder = kind == "quoteless-string" and bool(_PLACEHOLDER.search(value))
        return edits.make_fix("use a double-quoted JSON string",
                              (Edit(note.start, note.end, json.dumps(value, ensure_ascii=False)),),
                              safe=not placeholder)
    return None


_PLACEHOLDER = re.compile(r"\$\{|\{\{|%\(|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^<.*>$")


def _hjson_string(doc, note):
    """The string hjson reads at the note's span (computed by hjson itself), or None when unsure."""
    import hjson

    raw = doc.text[note.start:note.end]
    if note.kind == "quoteless-string":
        return raw.strip()
    if note.kind == "single-quote-string":
        try:
            value = hjson.loads(raw)
        except Exception:
            return None
        return value if isinstance(value, str) else None
    # A multiline string's value depends on its column: ask hjson for the whole document and check it agrees.
    node = next((n for n in doc.root.walk() if n.start == note.start), None) if doc.root is not None else None
    if node is None:
        return None
    try:
        data = hjson.loads(doc.text)
        for token in jp.split(node.pointer):
            data = data[int(token)] if isinstance(data, list) else data[token]
    except Exception:
        return None
    return data if isinstance(data, str) and data == node.value else None


PLURAL = {
    "comment": "comments", "trailing-comma": "trailing commas", "missing-comma": "missing commas",
    "unquoted-key": "unquoted keys", "quoteless-string": "quoteless strings", "single-quote-string":
    "single-quoted strings", "multiline-string": "hjson multiline strings", "root-braces-omitted":
    "roots without braces", "bom": "byte-order marks",
}

HELP = {
    "comment": "JSON has no comments: delete it, or move the note into a key such as \"_comment\"",
    "trailing-comma": "delete the comma",
    "unquoted-key": "put the key in double quotes",
    "quoteless-string": "put the value in double quotes",
    "single-quote-string": "use double quotes",
    "multiline-string": "use a JSON string with \\n escapes",
    "root-braces-omitted": "wrap the document in { }",
    "bom": "save the file as UTF-8 without a byte-order mark",
}
