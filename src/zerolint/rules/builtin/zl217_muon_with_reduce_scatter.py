"""The Muon optimizer (`optimizer.type: "Muon"`, matched case-insensitively, runtime/config.py:52-66) under ZeRO
stage 3 cannot use reduce-scatter for gradients: the stage-3 optimizer raises ValueError "Muon and reduce scatter
cannot be used together" when it wraps a MuonWithAuxAdam optimizer and `zero_optimization.reduce_scatter` is on
(stage3.py:355-361). reduce_scatter defaults to true, so a stage-3 Muon config fails at `deepspeed.initialize`
unless it turns reduce_scatter off. Stages 1 and 2 support Muon with reduce-scatter.

The Muon stage-3 path exists from the 0.18 line (the rule runs when the target version's schema has
`save_muon_momentum_buffer_in_memory`).

Fix (unsafe: all-reduce instead of reduce-scatter): set `zero_optimization.reduce_scatter` to false."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL217",
    name="muon-with-reduce-scatter",
    severity="error",
    summary="Muon optimizer with ZeRO stage 3 and reduce_scatter on",
    evidence="deepspeed/runtime/zero/stage3.py:355-361; deepspeed/runtime/engine.py:2530-2546",
    fixable="unsafe",
)

RS = "/zero_optimization/reduce_scatter"


@RULE.check
def check(view):
    if view.prop_schema("/zero_optimization/save_muon_momentum_buffer_in_memory") is None:
        return
    opt = view.node("/optimizer/type")
    if opt is None or opt.kind != "string" or opt.value.lower() != "muon":
        return
    if view.zero_stage != 3 or view.effective(RS, "bool") is not True:
        return
    given = view.has(RS)
    fix = (edits.replace_value(view.doc, RS, "false") if given
           else edits.insert_member(view.doc, "/zero_optimization", "reduce_scatter", "false"))
    yield view.finding(
        "/optimizer/type",
        f"optimizer {opt.raw} with ZeRO stage 3 and reduce_scatter {'true' if given else 'on (the default)'}: "
        "DeepSpeed fails at initialize (ValueError \"Muon and reduce scatter cannot be used together\")",
        at="value", related=[(RS, "reduce_scatter")] if given else [], fails_at="initialize",
        help="set zero_optimization.reduce_scatter to false, or use ZeRO stage 1/2",
        fixes=edits.fixes(edits.make_fix("set zero_optimization.reduce_scatter to false", fix, safe=False)))
