"""`gradient_allreduce_op: "sum"` (sum gradients across data-parallel ranks instead of averaging them; added
after DeepSpeed 0.19.5, PR #8232) is refused at parse when combined with ZeRO stage 3, with ZenFlow
(`zero_optimization.zenflow`) or with DeepCompile (`compile.deepcompile: true`): `_do_error_check` raises
ValueError "gradient_allreduce_op='sum' is not supported with ..." (runtime/config.py:694-700). The value is
lower-cased first (config.py:241-249), so "SUM" counts too.

Fix (unsafe: changes the gradient scale): set it to "mean"."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL211",
    name="allreduce-sum-unsupported",
    severity="error",
    summary="gradient_allreduce_op \"sum\" with ZeRO-3, ZenFlow or DeepCompile",
    versions=">=0.19.6",
    evidence="deepspeed/runtime/config.py:694-700",
    fixable="unsafe",
)

PTR = "/gradient_allreduce_op"


@RULE.check
def check(view):
    op = view.effective(PTR, "str")
    if not view.has(PTR) or not isinstance(op, str) or op.lower() != "sum":
        return
    conflicts = []
    if view.zero_stage == 3:
        conflicts.append(("ZeRO stage 3", "ZeRO stage 3", "/zero_optimization/stage"))
    zen = view.node("/zero_optimization/zenflow")
    if zen is not None and zen.kind != "null":
        conflicts.append(("ZenFlow (zero_optimization.zenflow)", "ZenFlow", "/zero_optimization/zenflow"))
    if view.effective("/compile/deepcompile", "bool") is True:
        conflicts.append(("DeepCompile (compile.deepcompile)", "DeepCompile", "/compile/deepcompile"))
    if not conflicts:
        return
    first = conflicts[0][1]
    yield view.finding(
        PTR,
        f"gradient_allreduce_op is {view.node(PTR).raw} with {' and '.join(c[0] for c in conflicts)}: DeepSpeed "
        f"fails at parse (ValueError \"gradient_allreduce_op='sum' is not supported with {first}\")",
        at="value", related=[(p, "here") for _, _, p in conflicts if view.has(p)],
        help="use \"mean\" (the default), or turn the conflicting feature off", fails_at="parse",
        fixes=edits.fixes(edits.make_fix('set gradient_allreduce_op to "mean"',
                                         edits.replace_value(view.doc, PTR, '"mean"'), safe=False)))
