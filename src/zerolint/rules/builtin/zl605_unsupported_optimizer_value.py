"""An optimizer argument whose value the optimizer DeepSpeed builds cannot use.

- `amsgrad: true`. FusedAdam, DeepSpeedCPUAdam and FusedLamb refuse it at construction with `RuntimeError:
  FusedAdam does not support the AMSGrad variant.` (ops/adam/fused_adam.py:87-88, ops/adam/cpu_adam.py:108-110 via
  `add_param_group`, ops/lamb/fused_lamb.py:55-56), so `deepspeed.initialize` fails. The catalog has this only for
  CPU-Adam offload; the source rejects it for the default GPU FusedAdam too, at every DeepSpeed version checked
  (0.16.9-0.19.8). torch's Adam/AdamW (`torch_adam: true`) and torch Adagrad support it.
- `betas` that is not a pair. DeepSpeedCPUAdam and DeepSpeedCPULion read `betas[0], betas[1]` in their constructor
  (cpu_adam.py:102-103, cpu_lion.py:63): a shorter list fails at initialize (IndexError). FusedAdam, FusedLamb and
  FusedLion unpack `beta1, beta2 = group['betas']` in `step()` (fused_adam.py:128), so any other length fails at
  the first optimizer step; torch optimizers index `betas[0]`/`betas[1]` when constructed. A non-list is a type
  error (ZL104).

Fix for amsgrad (unsafe: it changes the algorithm): delete it, or set `torch_adam: true` for Adam/AdamW."""

from ...model import dsfacts, edits
from ..rule import Rule

RULE = Rule(
    code="ZL605",
    name="unsupported-optimizer-value",
    severity="error",
    summary="amsgrad with an optimizer that has no AMSGrad, or betas that is not a pair",
    evidence="deepspeed/ops/adam/fused_adam.py:87-88, 128; deepspeed/ops/adam/cpu_adam.py:102-110; "
             "deepspeed/ops/lamb/fused_lamb.py:55-56",
    fixable="unsafe",
)

CONSTRUCTOR_INDEXES_BETAS = ("DeepSpeedCPUAdam", "ZenFlowCPUAdam", "DeepSpeedCPULion")


@RULE.check
def check(view):
    cls, t = view.optimizer_class, view.optimizer_type
    if cls is None:
        return
    ams = view.optimizer_param("amsgrad")
    if ams is not None and cls in dsfacts.NO_AMSGRAD and not view.is_auto(ams) and ams.to_python():
        name = view.optimizer_name
        fixes = [edits.make_fix("delete amsgrad", edits.remove_member(view.doc, ams.pointer), safe=False,
                                choice="drop-amsgrad", default=True)]
        if name in ("adam", "adamw") and view.optimizer_param("torch_adam") is None:
            fixes.append(edits.make_fix("use torch's Adam/AdamW, which has AMSGrad (torch_adam: true)",
                                        edits.insert_member(view.doc, "/optimizer/params", "torch_adam", "true"),
                                        safe=False, choice="torch-adam"))
        why = " (offload_optimizer is on)" if cls in ("DeepSpeedCPUAdam", "ZenFlowCPUAdam") else ""
        yield view.finding(
            ams.pointer,
            f"optimizer.params.amsgrad is {ams.raw}, but \"{t}\" builds DeepSpeed's {cls}{why}, which has no "
            f"AMSGrad: deepspeed.initialize fails with \"RuntimeError: {cls} does not support the AMSGrad variant\"",
            at="value",
            help="delete amsgrad" + (", or set \"torch_adam\": true to use torch's implementation"
                                     if name in ("adam", "adamw") else ""),
            fixes=edits.fixes(*fixes), fails_at="initialize"
        )
    betas = view.optimizer_param("betas")
    if betas is None or betas.kind != "array":
        return
    uses = {"FusedAdam", "FusedLamb", "FusedLion", *CONSTRUCTOR_INDEXES_BETAS}
    short = cls.rsplit(".", 1)[-1]
    takes = cls in uses or (cls.startswith("torch.optim.") and "betas" in dsfacts.TORCH_OPTIMIZER_KWARGS.get(short, ()))
    n = len(betas.items or ())
    if not takes or n == 2:
        return
    early = n < 2 and (cls in CONSTRUCTOR_INDEXES_BETAS or cls.startswith("torch."))
    when = ("deepspeed.initialize fails (IndexError)" if early
            else "the first optimizer step fails unpacking it (ValueError)")
    yield view.finding(betas.pointer,
                       f"optimizer.params.betas has {n} value{'s' if n != 1 else ''}, but {cls} needs exactly two "
                       f"(beta1, beta2): {when}", at="value", help="write two numbers, e.g. [0.9, 0.999]",
                       fails_at="initialize" if early else "step")
