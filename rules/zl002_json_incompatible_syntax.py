"""DeepSpeed reads a config file with hjson, which accepts comments, trailing commas, missing commas between
members, unquoted keys, quoteless and single-quoted strings and a byte-order mark. The HF Trainer and Accelerate
read the same file with Python's `json.load`, which rejects all of them, so a config that works with
`deepspeed train.py --deepspeed ds.json` fails under `Trainer(args=TrainingArguments(deepspeed="ds.json"))`.

For raw DeepSpeed this is a warning (the file works, but only for DeepSpeed, and editors and other tools
reject it); for the HF Trainer and Accelerate it is an error, and the first one says where `json.load`
stops."""

from zerolint.document import HJSON_ONLY
from zerolint.rule import Rule

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
    first = True
    for note in doc.notes:
        if note.kind not in HJSON_ONLY:
            continue
        what = WHAT[note.kind]
        if fatal:
            message = f"{what}: {view.consumer} reads the config with json.load, which rejects this"
            if first and json_stop is not None:
                message += f" (json.load stops at {json_stop[0]}:{json_stop[1]}: {doc.json_error.message})"
        else:
            message = (f"{what}: DeepSpeed's hjson reader accepts this, but json.load (HF Trainer, Accelerate) and "
                       "JSON tools reject the file")
        first = False
        help = HELP.get(note.kind)
        if note.kind == "missing-comma" and note.related:
            line, col = doc.position(note.related[0])
            help = f"insert ',' at {line}:{col}, after the previous value"
        yield view.finding(note.pointer, message, span=(note.start, note.end), severity="error" if fatal else None,
                           help=help)


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
