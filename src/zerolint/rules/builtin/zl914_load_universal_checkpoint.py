"""`checkpoint.load_universal: true` changes what `engine.load_checkpoint` (and the HF Trainer's resume, which
calls it) accepts: it reads the tag from `latest_universal` instead of `latest` and loads the parameter fragments of
a *universal* checkpoint, the one `python -m deepspeed.checkpoint.ds_to_universal` writes (engine.py:4428-4437,
4586, 4744). A checkpoint that `engine.save_checkpoint` wrote has no `latest_universal`, so resuming from it fails
with `ValueError: Invalid for universal checkpoint: <dir>/latest_universal does not exist` (measured on the CPU with
DeepSpeed 0.19.8: tests/test_detection_truth.py). Training from scratch never reads it. The key is typically copied
from Megatron-DeepSpeed's universal-checkpointing example and left on after the conversion, so this is a warning
that states the condition; zerolint cannot see the checkpoint directory."""

from ..rule import Rule

RULE = Rule(
    code="ZL914",
    name="load-universal-checkpoint",
    severity="warning",
    summary="checkpoint.load_universal: resuming then needs a universal checkpoint (ds_to_universal), not a saved one",
    evidence="deepspeed/runtime/engine.py:4428-4437; deepspeed/checkpoint/ds_to_universal.py",
)

PTR = "/checkpoint/load_universal"


@RULE.check
def check(view):
    node = view.node(PTR)
    if node is None or view.is_auto(node) or view.is_placeholder(node) or not node.to_python():
        return  # DeepSpeed tests it for truthiness (config.py `checkpoint_params.get(...)`)
    yield view.finding(
        PTR, f"checkpoint.load_universal is {node.raw}: engine.load_checkpoint (and the HF Trainer's resume) then "
             "loads only a universal checkpoint, converted with deepspeed.checkpoint.ds_to_universal; if the job "
             "resumes from a checkpoint that engine.save_checkpoint wrote, it fails with \"ValueError: Invalid for "
             "universal checkpoint: .../latest_universal does not exist\"",
        at="member", help="convert the checkpoint with `python -m deepspeed.checkpoint.ds_to_universal` first, or "
                          "set load_universal to false to resume from a regular checkpoint")
