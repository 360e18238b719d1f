"""`NaN`, `Infinity` and `-Infinity` are not JSON. Python's `json.load` (HF Trainer, Accelerate) accepts them
as floats, but DeepSpeed's hjson reader does not, and no DeepSpeed setting has a meaningful non-finite
value. A number too large for a float (`1e400`) also crashes hjson (OverflowError)."""

from ..rule import Rule

RULE = Rule(
    code="ZL008",
    name="nonfinite-number",
    severity="error",
    summary="NaN, Infinity or a number beyond float range",
    evidence="hjson decoder (no NaN literal; int(float('inf')) overflows)",
)


@RULE.check
def check(view):
    doc = view.doc
    # hjson reads a bare NaN/Infinity that ends its line as a quoteless string ("NaN," with the comma), and fails
    # on it only elsewhere: doc.hjson_error says which.
    hjson_fails = doc.hjson_error is not None
    for note in doc.notes:
        if note.kind == "nonfinite-number":
            reader = ("DeepSpeed's hjson reader rejects it" if hjson_fails else
                      "DeepSpeed's hjson reader takes it as a quoteless string (to the end of the line)")
            yield view.finding(note.pointer, f"{note.message}; {reader} and json.load turns it into a float no "
                                             "setting can use", span=(note.start, note.end),
                               help="write a finite number",
                               fails_at="parse" if view.raw_deepspeed and hjson_fails else None)
    if view.root is None:
        return
    for node in view.root.walk():
        if node.kind == "number" and node.raw and node.value in (float("inf"), float("-inf")) and \
                node.raw not in ("Infinity", "-Infinity"):
            yield view.finding(node.pointer, f"{node.raw} is beyond the range of a float: DeepSpeed's hjson reader "
                                             + ("crashes on it (OverflowError)" if hjson_fails else
                                                "takes it as a quoteless string (to the end of the line)"),
                               at="value",
                               help="write a finite number", fails_at="parse" if view.raw_deepspeed and hjson_fails
                               else None)
