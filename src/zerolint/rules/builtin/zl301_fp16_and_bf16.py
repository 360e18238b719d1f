"""fp16 and bf16 (or its legacy name `bfloat16`) are both enabled. DeepSpeed refuses this at parse time with
`AssertionError: bfloat16 and fp16 modes cannot be simultaneously enabled` (runtime/config.py:511-512), after
the job has already been scheduled. Pick one: bf16 on Ampere or newer GPUs (no loss scaling needed), fp16 on
older ones."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL301",
    name="fp16-and-bf16",
    severity="error",
    summary="fp16 and bf16 are both enabled",
    evidence="deepspeed/runtime/config.py:511-512",
    fixable="alternatives",
)


@RULE.check
def check(view):
    if not (view.fp16_enabled and view.bf16_enabled):
        return
    bf16 = view.bf16_section
    fp16_at, bf16_at = view.node("/fp16/enabled"), view.node(f"{bf16}/enabled")
    later, earlier = sorted((fp16_at, bf16_at), key=lambda n: n.start, reverse=True)
    yield view.finding(
        later.pointer,
        f"fp16 and {bf16[1:]} are both enabled; DeepSpeed fails at parse with \"bfloat16 and fp16 modes cannot be "
        "simultaneously enabled\"",
        at="member",
        help="keep one: bf16 on Ampere or newer GPUs (no loss scaling), fp16 on older ones",
        related=[(earlier.pointer, "also enabled here")],
        fails_at="parse",
        fixes=edits.fixes(
            edits.make_fix("keep bf16: set fp16.enabled to false",
                           edits.replace_value(view.doc, fp16_at, "false"), safe=False, choice="bf16"),
            edits.make_fix(f"keep fp16: set {bf16[1:]}.enabled to false",
                           edits.replace_value(view.doc, bf16_at, "false"), safe=False, choice="fp16"),
        ),
    )
