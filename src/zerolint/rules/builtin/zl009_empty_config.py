"""An empty (or comment-only) file. hjson reads it as `{}`, so DeepSpeed then fails with "Either
train_batch_size or train_micro_batch_size_per_gpu needs to be provided"; `json.load` fails at once."""

from ..rule import Rule

RULE = Rule(
    code="ZL009",
    name="empty-config",
    severity="error",
    summary="The config file is empty",
    evidence="hjson raw_decode (blank input gives {}); deepspeed/runtime/config.py:647-650",
)


@RULE.check
def check(view):
    if any(n.kind == "empty" for n in view.doc.notes):
        yield view.finding("", "the config is empty (DeepSpeed reads it as {} and then fails: no batch size)",
                           span=(0, 0), help="write at least { \"train_micro_batch_size_per_gpu\": 1 }",
                           fails_at="parse")
