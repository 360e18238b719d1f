"""Keys DeepSpeed parses but never uses, with a value that asks for something other than the default, so the
author expects a behaviour that does not happen:

- `disable_allgather`: read into `DeepSpeedConfig.disable_allgather` (runtime/config.py:491), never used;
- `zero_optimization.allgather_partitions`: exposed by `engine.zero_allgather_partitions()` (engine.py:1745),
  not passed to any ZeRO optimizer; the all-gather of updated partitions always runs;
- `pipeline.stages`, `pipeline.partition`, `pipeline.seed_layers`: defaults of the plain-dict `pipeline` section
  (runtime/config.py:272-285) that no code reads; the `PipelineModule(num_stages=..., partition_method=...,
  seed_layers=...)` arguments decide.

The list comes from the schema's `x-zerolint-ignored` annotations (scripts/schema_curated.py), except
`aio.thread_count` (ZL901) and `cpu_offload_use_pin_memory` (ZL702). A value equal to the documented default
(`allgather_partitions: true`, common in HF example configs) changes nothing and is not reported.

Fix (safe: DeepSpeed behaves the same without the key): delete it."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL905",
    name="ignored-setting",
    severity="info",
    summary="A key DeepSpeed parses but never uses, set to a non-default value",
    evidence="deepspeed/runtime/config.py:272-285, 491; deepspeed/runtime/engine.py:1745",
    fixable="safe",
)

OWN_RULES = {"/aio/thread_count", "/zero_optimization/cpu_offload_use_pin_memory"}


@RULE.check
def check(view):
    root = view.root
    if root is None:
        return
    for node in root.walk():
        if node.members is None:
            continue
        for m in node.members:
            ptr = m.pointer
            if ptr in OWN_RULES:
                continue
            s = view.prop_schema(ptr)
            why = s.get("x-zerolint-ignored") if isinstance(s, dict) else None
            if not why or view.is_auto(m.value) or view.is_placeholder(m.value):
                continue
            if "default" in s and m.value.to_python() == s["default"]:
                continue
            yield view.finding(
                ptr, f"{view.path(ptr)} is {m.value.raw}, but DeepSpeed never uses it: {why}; the setting has no "
                     "effect",
                at="member", help="delete it" + (" and set it on the PipelineModule instead"
                                                 if ptr.startswith("/pipeline/") else ""),
                fixes=edits.fixes(edits.make_fix(f"delete {view.path(ptr)}", edits.remove_member(view.doc, m))))
