"""`optimizer.type` names a class DeepSpeed cannot build. DeepSpeed lower-cases the name and matches it against
its own optimizers (Adagrad, Adam, AdamW, Lamb, Lion, Muon, MuAdam, MuAdamW, MuSGD: any case;
runtime/config.py:52-66, 519-520); anything else is looked up with `getattr(torch.optim, name)`, which is
CASE-SENSITIVE (engine.py:1985-1987, 2540-2542). So `"SGD"` works and `"sgd"` does not, and a typo such as
`"adam_w"` passes the parse and fails only at `deepspeed.initialize`, after the job has been scheduled and the model
loaded: `AssertionError: sgd is not a supported DeepSpeed Optimizer` (engine.py:2016-2019). Names that torch.optim
has but that are not optimizer classes (`Optimizer`, `lr_scheduler`, ...) pass that check and fail when called.

The removed 1-bit optimizers (OneBitAdam, ZeroOneAdam, OneBitLamb) are reported by ZL704; a quoteless hjson value
that swallowed a comment (`type: AdamW # fused`) by ZL004.

Fix: a name that differs from a torch.optim class only in case is renamed (safe: it is the only class the author
can have meant); another near miss is offered as an unsafe rename."""

from ...base.suggest import closest
from ...model import dsfacts, edits
from ..rule import Rule

RULE = Rule(
    code="ZL601",
    name="unknown-optimizer-type",
    severity="error",
    summary="optimizer.type is neither a DeepSpeed optimizer (any case) nor an exact torch.optim class name",
    evidence="deepspeed/runtime/config.py:52-66, 519-520; deepspeed/runtime/engine.py:1985-1987, 2016-2019",
    fixable="safe",
)

NATIVE = sorted(dsfacts.DEEPSPEED_OPTIMIZER_SPELLING.values())


@RULE.check
def check(view):
    t, name = view.optimizer_type, view.optimizer_name
    if t is None or name != t or t in dsfacts.DEEPSPEED_OPTIMIZERS or t in dsfacts.TORCH_OPTIMIZER_KWARGS:
        return  # no optimizer, one of DeepSpeed's (the view lower-cases those), or a torch.optim class
    if t.lower() in dsfacts.REMOVED_OPTIMIZERS:
        return  # ZL704
    ptr = "/optimizer/type"
    if t in dsfacts.TORCH_OPTIM_NOT_BUILDABLE:
        yield view.finding(ptr, f"optimizer.type \"{t}\" is torch.optim.{t}, which is not an optimizer class a "
                                "config can build: DeepSpeed's name check passes, then deepspeed.initialize fails "
                                "calling it", at="value",
                           help="use one of DeepSpeed's optimizers (Adam, AdamW, Lamb, Lion, ...) or a torch.optim "
                                "class such as SGD", fails_at="initialize")
        return
    torch_names = [n for n in dsfacts.TORCH_OPTIMIZER_KWARGS if n.lower() not in dsfacts.DEEPSPEED_OPTIMIZERS]
    same_case = next((n for n in torch_names if n.lower() == t.lower()), None)
    guess = same_case or closest(t, NATIVE + torch_names)
    if same_case:
        why = (f"torch.optim names are case-sensitive, so \"{t}\" is not torch.optim.{same_case}; "
               f"deepspeed.initialize fails with \"AssertionError: {t} is not a supported DeepSpeed Optimizer\"")
    else:
        why = (f"it is neither one of DeepSpeed's optimizers ({', '.join(NATIVE)}; any case) nor a torch.optim "
               f"class (exact case): deepspeed.initialize fails with \"AssertionError: {t} is not a supported "
               "DeepSpeed Optimizer\"")
    msg = f"optimizer.type \"{t}\": {why}" + (f"; did you mean \"{guess}\"?" if guess and not same_case else "")
    fix = None
    if guess:
        fix = edits.make_fix(f'write "{guess}"', edits.replace_value(view.doc, ptr, edits.value_text(guess)),
                             safe=bool(same_case))
    yield view.finding(ptr, msg, at="value", fixes=edits.fixes(fix),
                       help=f'write "{guess}"' if guess else
                       "use one of DeepSpeed's optimizers (Adam, AdamW, Lamb, Lion, ...) or an exact torch.optim "
                       "class name such as SGD or RMSprop", fails_at="initialize")
