"""`optimizer.params` is splatted into the constructor of the class DeepSpeed builds (engine.py:2476-2545), so a key
that constructor does not take fails `deepspeed.initialize` with `TypeError: __init__() got an unexpected keyword
argument '...'`, after the model is loaded. The parse does not look at it. Which keys are accepted depends on the
class, and the class depends on more than the name (see View.optimizer_class):

- Adam/AdamW build FusedAdam, or DeepSpeedCPUAdam whenever `offload_optimizer` is cpu/nvme (at any ZeRO stage), or
  torch's Adam/AdamW with `torch_adam: true`. `set_grad_none` is a FusedAdam argument that DeepSpeedCPUAdam does
  not take; `bias_correction` is not a torch argument. DeepSpeed pops `adam_w_mode` and `torch_adam` first
  (and `fp32_optimizer_states` since the 0.19 line; 0.18.9 passed it on, which FusedAdam rejects), and passes
  `adamw_mode` to DeepSpeedCPUAdam itself, so a user-given `adamw_mode` is a duplicate keyword.
- Adagrad/Lion build torch Adagrad / FusedLion, or DeepSpeedCPUAdagrad / DeepSpeedCPULion with offload; Lamb
  builds FusedLamb. Nothing is popped for them: `adam_w_mode` or `torch_adam` there is a TypeError.
- torch.optim names build that torch class (keyword lists of torch 2.13).
- Muon never passes `params` to a constructor: it reads lr, momentum, weight_decay, ns_method, betas, eps,
  muon_lr and adam_lr (engine.py:2411-2475) and silently ignores every other key (a warning here).
- The mup optimizers (MuAdam, MuAdamW, MuSGD) come from the external mup package and are not checked.

`max_grad_norm` is ZL603; a 1-bit optimizer's leftover arguments after switching to Adam are reported here.
Fix: a near miss of an accepted argument is offered as an unsafe rename."""

from ...model import dsfacts, edits
from ..rule import Rule

RULE = Rule(
    code="ZL604",
    name="unknown-optimizer-param",
    severity="error",
    summary="An optimizer.params key the optimizer DeepSpeed builds does not take (TypeError at initialize)",
    evidence="deepspeed/runtime/engine.py:2375-2408, 2476-2545; deepspeed/ops/adam/fused_adam.py:76-85; "
             "deepspeed/ops/adam/cpu_adam.py:15-24; deepspeed/ops/lamb/fused_lamb.py:41-52",
    fixable="unsafe",
)

ADAM_POPPED = ("adam_w_mode", "torch_adam")


def _accepted(view, cls, name):
    """(accepted keys, popped keys) for the class, or None when not checked."""
    if cls is None or cls.startswith("mup.") or name in dsfacts.REMOVED_OPTIMIZERS:
        return None
    popped = set()
    if name in ("adam", "adamw", "muon"):
        popped |= set(ADAM_POPPED)
        if view.since(">=0.19.0"):
            popped.add("fp32_optimizer_states")
        if cls.startswith("torch.optim.Adam"):
            popped.add("foreach")
    if cls == "MuonWithAuxAdam":
        keys = set(dsfacts.MUON_KEYS) if view.since(">=0.19.0") else set(dsfacts.MUON_KEYS) - {"ns_method"}
        return keys, popped
    if cls in dsfacts.OPTIMIZER_KWARGS:
        return set(dsfacts.OPTIMIZER_KWARGS[cls]), popped
    short = cls.rsplit(".", 1)[-1]
    if short in dsfacts.TORCH_OPTIMIZER_KWARGS:
        return set(dsfacts.TORCH_OPTIMIZER_KWARGS[short]), popped
    return None


@RULE.check
def check(view):
    cls, name, t = view.optimizer_class, view.optimizer_name, view.optimizer_type
    known = _accepted(view, cls, name)
    if known is None:
        return
    accepted, popped = known
    muon = cls == "MuonWithAuxAdam"
    for m in view.members("/optimizer/params"):
        key = m.key
        if key in accepted or key in popped or key == "max_grad_norm":
            continue
        if key == "adamw_mode" and cls in ("DeepSpeedCPUAdam", "ZenFlowCPUAdam"):
            yield view.finding(m.pointer, f"optimizer.params.adamw_mode: DeepSpeed passes adamw_mode to {cls} itself "
                                          "(from adam_w_mode and the optimizer name), so deepspeed.initialize fails "
                                          "with \"TypeError: got multiple values for keyword argument 'adamw_mode'\"",
                               help="write adam_w_mode (DeepSpeed's spelling) instead",
                               fixes=edits.fixes(edits.make_fix("rename it to adam_w_mode",
                                                                edits.rename_key(view.doc, m, "adam_w_mode"),
                                                                safe=False)), fails_at="initialize")
            continue
        guess = view.closest(key, sorted(accepted | popped))
        fix = None
        if guess is not None:
            fix = edits.make_fix(f"rename it to {guess}", edits.rename_key(view.doc, m, guess), safe=False)
        hint = f"; did you mean {guess}?" if guess else ""
        if key in dsfacts.ONEBIT_PARAMS:
            hint += " (an argument of the 1-bit optimizers)"
        if muon:
            yield view.finding(m.pointer, f"optimizer.params.{key}: for \"{t}\" DeepSpeed reads only "
                                          f"{', '.join(sorted(accepted))} from params and silently ignores "
                                          f"{key}{hint}", severity="warning",
                               help=f"delete {key}, or use one of the keys Muon reads", fixes=edits.fixes(fix),
                               fails_at=None)
            continue
        why = _why(view, cls, name, key)
        yield view.finding(
            m.pointer,
            f"optimizer.params.{key} is not an argument of {_display(cls)}, which \"{t}\" builds here{why}: "
            f"deepspeed.initialize fails with \"TypeError: __init__() got an unexpected keyword argument "
            f"'{key}'\"{hint}",
            help=(f"rename it to {guess}" if guess else f"delete {key}") + f"; {_display(cls)} takes "
                 f"{', '.join(sorted(accepted))}",
            fixes=edits.fixes(fix), fails_at="initialize"
        )


def _display(cls):
    return cls if cls.startswith("torch.") else f"DeepSpeed's {cls}"


def _why(view, cls, name, key):
    """Say why this class, when the same name would build another one that takes the key."""
    if name in ("adam", "adamw", "adagrad", "lion") and cls in ("DeepSpeedCPUAdam", "ZenFlowCPUAdam",
                                                                 "DeepSpeedCPUAdagrad", "DeepSpeedCPULion"):
        return f" (offload_optimizer is {view.offload_device('optimizer')})"
    if cls.startswith("torch.optim.Adam") and name in ("adam", "adamw"):
        return " (torch_adam is set)"
    return ""
