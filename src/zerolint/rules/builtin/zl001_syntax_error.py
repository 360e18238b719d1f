"""The file is not valid JSON, and DeepSpeed's own reader (hjson) cannot read it either, so every consumer
fails before training starts: DeepSpeed raises `HjsonDecodeError`, the HF Trainer and Accelerate raise
`json.JSONDecodeError`. zerolint reports the earliest place a reader stops, says where each reader stops, and
keeps linting what it could parse before that point.

Syntax that hjson accepts but `json` does not (a comment, a trailing or missing comma) is ZL002 instead."""

from ..rule import Rule

RULE = Rule(
    code="ZL001",
    name="syntax-error",
    severity="error",
    summary="The config cannot be parsed by DeepSpeed (hjson) nor by the HF Trainer / Accelerate (json)",
    evidence="deepspeed/runtime/config.py:444 (hjson.load); transformers integrations/deepspeed.py (json.load)",
)


@RULE.check
def check(view):
    doc = view.doc
    ours = next((n for n in doc.notes if n.kind == "syntax-error"), None)
    if doc.hjson_error is None and ours is None:
        return  # hjson reads it: anything json rejects is hjson-only syntax (ZL002)
    # Where each real reader gave up; the earliest is where the user should look first.
    stops = [(err.offset, f"{err.message} ({who})")
             for err, who in ((doc.json_error, "json.load"), (doc.hjson_error, "DeepSpeed's hjson reader"))
             if err is not None]
    if not stops:  # pragma: no cover - our parser stopped where both readers went on
        assert ours is not None  # no hjson_error: ours is set (the return above)
        stops = [(ours.start, ours.message)]
    start, what = min(stops, key=lambda s: s[0])
    message = f"syntax error: {what}"
    others = [f"{who} stops " + ("here too" if err.offset == start
                                 else "at " + ":".join(map(str, doc.position(err.offset))))
              for err, who in ((doc.hjson_error, "DeepSpeed's hjson reader"), (doc.json_error, "json.load"))
              if err is not None and f"({who})" not in what]
    if others:
        message += "; " + ", ".join(others)
    related = []
    if ours is not None and abs(ours.start - start) > 1:
        related.append(((ours.start, max(ours.end, ours.start + 1)), ours.message))
    # DeepSpeed's reader is hjson; the HF Trainer and Accelerate read with json.load, which stops wherever hjson does.
    fails = doc.hjson_error is not None or (not view.raw_deepspeed and doc.json_error is not None)
    yield view.finding("", message, span=(start, start + 1), related=related, fails_at="parse" if fails else None,
                       help="fix the syntax here; zerolint checked only what comes before the error"
                       if doc.fatal else "fix the syntax here")
