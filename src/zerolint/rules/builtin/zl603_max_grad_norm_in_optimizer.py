"""`max_grad_norm` inside `optimizer.params` (a habit from apex / HF / Megatron optimizers) is not how DeepSpeed
clips gradients. DeepSpeed logs a warning at parse when the value is > 0 (runtime/config.py:723-730), then
`deepspeed.initialize` raises `ValueError: 'max_grad_norm' is not supported as an optimizer parameter, please
switch to using the deepspeed parameter 'gradient_clipping'` for ANY value, 0 included (engine.py:2481-2485),
before the optimizer is built. Clipping is the top-level `gradient_clipping` (default 1.0 since 0.19.3).

Fix: move the value to `gradient_clipping` (safe: it is what the author asked for, and DeepSpeed could never run
the config as written). When `gradient_clipping` is already set, deleting `max_grad_norm` is safe if both say the
same; otherwise there are two choices (both unsafe): keep `gradient_clipping` (the default, `keep-gradient-clipping`)
or take the value of `max_grad_norm` (`use-max-grad-norm`)."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL603",
    name="max-grad-norm-in-optimizer",
    severity="error",
    summary="max_grad_norm in optimizer.params (DeepSpeed rejects it at initialize; use gradient_clipping)",
    evidence="deepspeed/runtime/engine.py:2481-2485; deepspeed/runtime/config.py:723-730",
    fixable="alternatives",
)

PTR = "/optimizer/params/max_grad_norm"
CLIP = "/gradient_clipping"


@RULE.check
def check(view):
    node = view.node(PTR)
    typ = view.node("/optimizer/type")
    if node is None or typ is None or typ.kind == "null":
        return  # without a type DeepSpeed builds no optimizer and never reads params (config.py:295-299)
    doc = view.doc
    clip = view.node(CLIP)
    value = node.raw if node.kind not in ("object", "array") else doc.text[node.start:node.end]
    if clip is None:
        fixes = [edits.make_fix(f"move it to the top level as \"gradient_clipping\": {value}",
                                edits.move_member(doc, PTR, "", new_key="gradient_clipping"))]
    elif node.to_python() == clip.to_python():
        fixes = [edits.make_fix("delete it (gradient_clipping already has the same value)",
                                edits.remove_member(doc, PTR))]
    else:
        both = edits.remove_member(doc, PTR)
        take = edits.replace_value(doc, CLIP, value)
        fixes = [
            edits.make_fix(f"delete it and keep \"gradient_clipping\": {clip.raw or '...'}", both, safe=False,
                           choice="keep-gradient-clipping", default=True),
            edits.make_fix(f"delete it and set \"gradient_clipping\" to {value}",
                           None if take is None or both is None else tuple(sorted(take + both,
                                                                                   key=lambda e: e.start)),
                           safe=False, choice="use-max-grad-norm"),
        ]
    yield view.finding(
        PTR,
        f"optimizer.params.max_grad_norm ({value}) is not an optimizer argument for DeepSpeed: "
        "deepspeed.initialize fails with \"ValueError: 'max_grad_norm' is not supported as an optimizer "
        "parameter\"; DeepSpeed clips with the top-level gradient_clipping",
        related=[(CLIP, "DeepSpeed's clipping setting")] if clip is not None else [],
        help="move the value to the top-level \"gradient_clipping\"",
        fixes=edits.fixes(*fixes), fails_at="initialize"
    )
