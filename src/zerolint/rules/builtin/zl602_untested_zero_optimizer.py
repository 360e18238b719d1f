"""With ZeRO (stage 1-3), DeepSpeed accepts only the optimizer classes it has tested: torch Adam/AdamW/Adagrad,
FusedAdam, DeepSpeedCPUAdam, ZenFlowCPUAdam, DeepSpeedCPUAdagrad, FusedLion, DeepSpeedCPULion and Muon's
MuonWithAuxAdam (zero/utils.py:45-56, 66-77; the check is `type(optimizer) in` that list). Any other class fails
`deepspeed.initialize` with `AssertionError: You are using an untested ZeRO Optimizer. Please add
<"zero_allow_untested_optimizer": true> in the configuration file to use it.` (engine.py:2297-2304) unless the
top-level `zero_allow_untested_optimizer` is set, in which case DeepSpeed only logs a warning.

Which class a config gets is decided by the optimizer name (engine.py:2476-2545): `Lamb` builds FusedLamb, the mup
names (MuAdam, MuAdamW, MuSGD) build mup's classes, and every torch.optim name (SGD, RMSprop, Adamax, ...) builds
that torch class: none of them is on the list. Adam, AdamW, Adagrad, Lion and Muon always build a supported class
(with or without offload). torch's own Adam/AdamW/Adagrad are on the list but cannot be reached by name: those
names lower-case to DeepSpeed's optimizers; only `torch_adam: true` builds them.

The HF Trainer sets `zero_allow_untested_optimizer` itself only when the config has NO optimizer section (it then
builds its own torch optimizer); with an optimizer in the config this rule applies to every consumer. With no
optimizer section, raw DeepSpeed runs the code's optimizer through the same check: where `check` read its
class from `deepspeed.initialize(optimizer=...)` (torch.optim.SGD, apex's, bitsandbytes') the verdict is certain;
without the code nothing is said (the usual torch.optim.AdamW is on the list).

Fix (unsafe: it runs ZeRO with an optimizer DeepSpeed has not tested): set `zero_allow_untested_optimizer: true`."""

from ...model import dsfacts, edits
from ..rule import Rule

RULE = Rule(
    code="ZL602",
    name="untested-zero-optimizer",
    severity="error",
    summary="ZeRO with an optimizer outside DeepSpeed's tested list and no zero_allow_untested_optimizer",
    evidence="deepspeed/runtime/engine.py:2297-2304; deepspeed/runtime/zero/utils.py:45-56, 66-77",
    fixable="unsafe",
)

FLAG = "/zero_allow_untested_optimizer"


@RULE.check
def check(view):
    cls, stage = view.optimizer_class, view.zero_stage
    flag = view.node(FLAG)
    if not stage or (flag is not None and flag.to_python()):
        return  # allowed (DeepSpeed only warns); any non-empty string ("auto", a template) is truthy here
    if cls is None:
        client = _client(view, stage)
        if client is not None:
            yield client
        return
    if cls in dsfacts.ZERO_SUPPORTED_CLASSES:
        return
    t = view.optimizer_type
    built = cls if cls.startswith(("torch.", "mup.")) else f"DeepSpeed's {cls}"
    fix = (edits.replace_value(view.doc, FLAG, "true") if flag is not None
           else edits.insert_member(view.doc, "", "zero_allow_untested_optimizer", "true"))
    stage_ptr = "/zero_optimization/stage"
    yield view.finding(
        "/optimizer/type",
        f"optimizer \"{t}\" builds {built}, which is not on ZeRO's tested list; with ZeRO stage {stage} "
        "deepspeed.initialize fails with \"AssertionError: You are using an untested ZeRO Optimizer\" unless "
        "zero_allow_untested_optimizer is true",
        at="value",
        related=[(stage_ptr, f"ZeRO stage {stage}")] if view.has(stage_ptr) else [],
        help="use Adam, AdamW, Adagrad or Lion with ZeRO, or set \"zero_allow_untested_optimizer\": true to run "
             "it anyway",
        fixes=edits.fixes(edits.make_fix("set zero_allow_untested_optimizer to true", fix, safe=False)),
        fails_at="initialize"
    )


# The code's optimizer class as written (check reads it from the repository), where the tested list can decide
# it: torch's own names, and the third-party packages none of whose classes is on the list.
NOT_ZERO_TESTED_PACKAGES = ("apex.", "bitsandbytes.", "bnb.", "transformers.", "timm.")


def _client(view, stage):
    """With no optimizer section, the optimizer the training code passes to deepspeed.initialize (Settings.
    client_optimizer, from the repository): the same tested-list check, certain where the class is known."""
    client = view.settings.client_optimizer
    if client is None or view.node("/optimizer") is not None or not view.raw_deepspeed:
        return None
    name, where = client
    full = "torch.optim." + name[len("optim."):] if name.startswith("optim.") else name
    if full.startswith("torch.optim."):
        if full in dsfacts.ZERO_SUPPORTED_CLASSES:
            return None
    elif not full.startswith(NOT_ZERO_TESTED_PACKAGES):
        return None  # a bare or unknown name: which class it is depends on an import zerolint does not follow
    stage_ptr = "/zero_optimization/stage"
    return view.finding(
        stage_ptr if view.has(stage_ptr) else "/zero_optimization",
        f"the code passes {name} to deepspeed.initialize ({where}), which is not on ZeRO's tested list; with ZeRO "
        f"stage {stage} deepspeed.initialize fails with \"AssertionError: You are using an untested ZeRO "
        "Optimizer\" unless zero_allow_untested_optimizer is true",
        at="value" if view.has(stage_ptr) else "key", fails_at="initialize",
        help="pass a tested optimizer (torch.optim.AdamW, DeepSpeed's FusedAdam, ...), or set "
             "\"zero_allow_untested_optimizer\": true to run it anyway")
