"""`scheduler.type` names no scheduler DeepSpeed can build. DeepSpeed looks the name up in its own
`deepspeed.runtime.lr_schedules` (LRRangeTest, OneCycle, WarmupLR, WarmupDecayLR, WarmupCosineLR), then in
`torch.optim.lr_scheduler`, both CASE-SENSITIVE, and otherwise fails `deepspeed.initialize` with
`AssertionError: DeepSpeed does not recognize LR scheduler warmuplr` (engine.py:1925-1931). The parse never looks
at the name. Some torch schedulers exist but cannot be built from JSON: LambdaLR and MultiplicativeLR need a
Python function, SequentialLR and ChainedScheduler need scheduler objects, LRScheduler is the abstract base;
DeepSpeed calls them with the JSON `params` and initialize fails.

Fix: a name that differs from a known scheduler only in case is renamed (safe); another near miss is offered as an
unsafe rename."""

from ...base.suggest import closest
from ...model import dsfacts, edits
from ..rule import Rule

RULE = Rule(
    code="ZL608",
    name="unknown-scheduler-type",
    severity="error",
    summary="scheduler.type is neither a DeepSpeed nor a torch.optim.lr_scheduler class (case-sensitive)",
    evidence="deepspeed/runtime/engine.py:1925-1935; deepspeed/runtime/lr_schedules.py",
    fixable="safe",
)

PTR = "/scheduler/type"
# The HF Trainer's lr_scheduler_type names, which people carry over: the DeepSpeed scheduler closest in shape.
HF_NAMES = {"cosine": "WarmupCosineLR", "cosine_with_warmup": "WarmupCosineLR", "linear": "WarmupDecayLR",
            "linear_with_warmup": "WarmupDecayLR", "constant_with_warmup": "WarmupLR", "constant": "WarmupLR"}


@RULE.check
def check(view):
    t = view.scheduler_type
    if t is None or t in dsfacts.DEEPSPEED_SCHEDULERS or t in dsfacts.TORCH_SCHEDULERS:
        return
    if t in dsfacts.TORCH_SCHEDULERS_NOT_FROM_JSON:
        yield view.finding(PTR, f"scheduler.type \"{t}\": torch.optim.lr_scheduler.{t} "
                                f"{dsfacts.TORCH_SCHEDULERS_NOT_FROM_JSON[t]}, which a JSON config cannot give, so "
                                "deepspeed.initialize fails building it", at="value",
                           help="use one of DeepSpeed's schedulers (WarmupLR, WarmupDecayLR, WarmupCosineLR, "
                                "OneCycle, LRRangeTest), or build this scheduler in code and pass it as "
                                "lr_scheduler= to deepspeed.initialize", fails_at="initialize")
        return
    names = list(dsfacts.DEEPSPEED_SCHEDULERS) + list(dsfacts.TORCH_SCHEDULERS)
    same_case = next((n for n in names if n.lower() == t.lower()), None)
    guess = same_case or HF_NAMES.get(t.lower()) or closest(t, names)
    known = ", ".join(dsfacts.DEEPSPEED_SCHEDULERS)
    msg = (f"scheduler.type \"{t}\" is neither one of DeepSpeed's schedulers ({known})"
           f" nor a torch.optim.lr_scheduler class, and the names are case-sensitive: deepspeed.initialize fails "
           f"with \"AssertionError: DeepSpeed does not recognize LR scheduler {t}\"")
    if guess:
        msg += f"; did you mean \"{guess}\"?"
    fix = None
    if guess:
        fix = edits.make_fix(f'write "{guess}"', edits.replace_value(view.doc, PTR, edits.value_text(guess)),
                             safe=bool(same_case))
    yield view.finding(PTR, msg, at="value", fixes=edits.fixes(fix),
                       help=f'write "{guess}"' if guess else "use WarmupLR, WarmupDecayLR, WarmupCosineLR, OneCycle, "
                                                             "LRRangeTest or a torch.optim.lr_scheduler class",
                                                             fails_at="initialize")
