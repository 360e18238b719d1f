"""`prescale_gradients: true` or `gradient_predivide_factor` other than 1.0 cannot be combined with ZeRO's
reduce-scatter of gradients (`zero_optimization.reduce_scatter`, on by default):

- ZeRO-3 asserts both whenever reduce_scatter is on ("gradient_predivide_factor != 1.0 is not yet supported with
  ZeRO-3 with reduce scatter enabled", "pre-scale gradients is not yet supported ...", stage3.py:392-396);
- ZeRO-2 asserts both when reduce_scatter is on and gradients are averaged, i.e. `gradient_allreduce_op` is
  "mean" (the default) (stage_1_and_2.py:346-351, `gradient_average` from engine.py:542).

ZeRO stage 0 and 1 use these settings (engine.py:3805-3810, 3963-3967). Parse accepts the combination; the
assertion fires in `deepspeed.initialize`. Old Megatron/BERT example configs carry `"prescale_gradients": true`
and break when moved to ZeRO-2/3.

Fixes (unsafe, alternatives): delete the pre-scaling setting (DeepSpeed then averages after the reduction,
`--prefer no-prescale`, the default choice), or turn `reduce_scatter` off (`--prefer no-reduce-scatter`: keeps
pre-scaling, uses all-reduce instead of reduce-scatter, slower)."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL210",
    name="prescale-with-reduce-scatter",
    severity="error",
    summary="prescale_gradients or gradient_predivide_factor with ZeRO-2/3 reduce-scatter",
    evidence="deepspeed/runtime/zero/stage3.py:392-396; deepspeed/runtime/zero/stage_1_and_2.py:346-351",
    fixable="alternatives",
)

RS = "/zero_optimization/reduce_scatter"


@RULE.check
def check(view):
    stage = view.zero_stage
    if stage not in (2, 3) or view.effective(RS, "bool") is not True:
        return
    if stage == 2:
        op = view.effective("/gradient_allreduce_op", "str") if view.prop_schema("/gradient_allreduce_op") else "mean"
        if not isinstance(op, str) or op.lower() != "mean":
            return  # "sum" skips the ZeRO-2 check; invalid values are ZL105's
    offenders = []
    if view.effective("/prescale_gradients", "bool") is True:
        offenders.append(("/prescale_gradients", "prescale_gradients is true",
                          "pre-scale gradients is not yet supported with ZeRO-{s} with reduce scatter enabled"))
    factor = view.effective("/gradient_predivide_factor", "number")
    if isinstance(factor, (int, float)) and not isinstance(factor, bool) and factor != 1:
        offenders.append(("/gradient_predivide_factor", f"gradient_predivide_factor is {factor:g}",
                          "gradient_predivide_factor != 1.0 is not yet supported with ZeRO-{s} with reduce scatter "
                          "enabled"))
    doc = view.doc
    rs_given = view.has(RS)
    for ptr, what, assertion in offenders:
        rs_text = "has reduce_scatter on" + ("" if rs_given else " (the default)")
        fix_rs = (edits.replace_value(doc, RS, "false") if rs_given
                  else edits.insert_member(doc, "/zero_optimization", "reduce_scatter", "false"))
        yield view.finding(
            ptr,
            f"{what} while ZeRO stage {stage} {rs_text}: DeepSpeed fails at initialize (AssertionError "
            f"\"{assertion.format(s=stage)}\")",
            at="member", related=[(RS, "reduce-scatter")] if rs_given else [], fails_at="initialize",
            help="delete it (DeepSpeed averages gradients after the reduction), or set "
                 "zero_optimization.reduce_scatter to false",
            fixes=edits.fixes(
                edits.make_fix(f"delete {ptr[1:]}", edits.remove_member(doc, ptr), safe=False, choice="no-prescale",
                               default=True),
                edits.make_fix("set zero_optimization.reduce_scatter to false", fix_rs, safe=False,
                               choice="no-reduce-scatter")))
