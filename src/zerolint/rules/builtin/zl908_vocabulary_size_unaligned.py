"""`vocabulary_size` is read for one thing only: when it is not a multiple of 8, DeepSpeedConfig logs "vocabulary
size N is not aligned to 8, may import tensor core utilization" (runtime/config.py:716-721). DeepSpeed pads
nothing and changes nothing; the model's embedding size is what matters for tensor-core efficiency. Reported as
info so the warning in the log is explained: pad the model's vocabulary (e.g. `resize_token_embeddings(...,
pad_to_multiple_of=64)`) if the alignment matters, and set `vocabulary_size` to the padded size or delete it."""

from ..rule import Rule

RULE = Rule(
    code="ZL908",
    name="vocabulary-size-unaligned",
    severity="info",
    summary="vocabulary_size not a multiple of 8 (DeepSpeed only logs a warning; it pads nothing)",
    evidence="deepspeed/runtime/config.py:716-721",
)

PTR = "/vocabulary_size"


@RULE.check
def check(view):
    v = view.effective(PTR, "int") if view.has(PTR) else None
    if not isinstance(v, int) or isinstance(v, bool) or v <= 0 or v % 8 == 0:
        return
    yield view.finding(
        PTR, f"vocabulary_size {v} is not a multiple of 8: DeepSpeed only logs a tensor-core alignment warning; it "
             "does not pad the embedding, and nothing else reads this key",
        at="value", help=f"pad the model's vocabulary to a multiple of 8 (e.g. {-(-v // 64) * 64}) in the model, or "
                         "delete vocabulary_size")
