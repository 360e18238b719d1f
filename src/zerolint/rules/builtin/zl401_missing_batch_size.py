"""DeepSpeed needs `train_batch_size` or `train_micro_batch_size_per_gpu` (or both); with neither it stops at
parse: "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
(runtime/config.py:647-650). `gradient_accumulation_steps` alone is not enough. With the HF Trainer or
Accelerate, write `"auto"` so they fill it from the training arguments."""

from ..rule import Rule

RULE = Rule(
    code="ZL401",
    name="missing-batch-size",
    severity="error",
    summary="Neither train_batch_size nor train_micro_batch_size_per_gpu is set",
    evidence="deepspeed/runtime/config.py:647-650",
    fixable="unsafe",
)


@RULE.check
def check(view):
    if view.root is None:
        return
    tbs, micro = view.node("/train_batch_size"), view.node("/train_micro_batch_size_per_gpu")
    if (tbs is not None and tbs.kind != "null") or (micro is not None and micro.kind != "null"):
        return
    if view.raw_deepspeed:
        help = "add \"train_micro_batch_size_per_gpu\": <per-GPU batch> (DeepSpeed derives the rest)"
    else:
        help = "add \"train_micro_batch_size_per_gpu\": \"auto\" so it is filled from the training arguments"
    yield view.finding("", "neither train_batch_size nor train_micro_batch_size_per_gpu is set: DeepSpeed fails at "
                           "parse (\"Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided\")",
                       span=(view.root.start, view.root.start + 1), help=help, fails_at="parse")
