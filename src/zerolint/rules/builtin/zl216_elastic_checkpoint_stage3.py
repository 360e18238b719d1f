"""`zero_optimization.elastic_checkpoint: true` with ZeRO stage 3. DeepSpeed 0.19.3 deprecated ZeRO-3 elastic
checkpointing; parse only logs "ZeRO-3 elastic checkpointing is deprecated and no longer supported. Use
Universal Checkpointing instead." (zero/config.py:402-408).

What the source does with it (0.19.8; more than the catalog's "warning only"): the engine does not pass the flag
to the stage-3 optimizer (engine.py:2705 passes it only to the stage-1/2 optimizer, and stage3.py:3460-3462 /
3621-3623 would raise NotImplementedError if it did), but the engine's own checkpoint loader still honours it:
every rank reads every rank's ZeRO optimizer-state file into host memory when loading
(engine.py:4816, `_get_all_zero_checkpoint_state_dicts`), which costs world-size times the I/O and host memory
at resume and gives no elasticity. Saving is unaffected.

Fix (safe: the setting has no supported effect at stage 3): delete the key; use Universal Checkpointing
(`checkpoint.load_universal`) to resume on a different number of GPUs."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL216",
    name="elastic-checkpoint-stage-3",
    severity="warning",
    summary="elastic_checkpoint with ZeRO stage 3 (deprecated; only makes every rank load every shard)",
    versions=">=0.19.3",
    evidence="deepspeed/runtime/zero/config.py:402-408; deepspeed/runtime/engine.py:2705, 4816",
    fixable="safe",
)

PTR = "/zero_optimization/elastic_checkpoint"


@RULE.check
def check(view):
    if view.zero_stage != 3 or view.effective(PTR, "bool") is not True or not view.has(PTR):
        return
    yield view.finding(
        PTR, "elastic_checkpoint is true with ZeRO stage 3: DeepSpeed logs that ZeRO-3 elastic checkpointing is "
             "deprecated and no longer supported; it gives no elasticity, and on resume every rank loads every "
             "rank's optimizer-state file into host memory",
        at="member", help="delete it; resume on a different GPU count with Universal Checkpointing "
                          "(checkpoint.load_universal)",
        fixes=edits.fixes(edits.make_fix("delete elastic_checkpoint", edits.remove_member(view.doc, PTR))))
