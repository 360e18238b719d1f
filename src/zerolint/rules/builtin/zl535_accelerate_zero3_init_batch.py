"""Under `accelerate launch` at ZeRO-3, a transformers model built after the `Accelerator` (`from_pretrained`, the
usual order in a training loop of one's own) is built inside `deepspeed.zero.Init`, with the config transformers
holds a weak reference to. That is not the config itself but Accelerate's copy of it
(`DeepSpeedPlugin.set_deepspeed_weakref`, called when the Accelerator selects the plugin: accelerate 1.15.0
utils/dataclasses.py:1459-1488, 1562): in the copy an absent or "auto" `train_micro_batch_size_per_gpu` and an
absent `gradient_accumulation_steps` become 1 (an "auto" accumulation may hold the launch config's value by then:
not judged), and an "auto" `train_batch_size` is deleted. A numeric
`train_batch_size` stays, so DeepSpeed's batch assertion in zero.Init's config parse fails unless it equals
micro x accumulation x world size with those 1s ("train_batch_size is not equal to micro_batch_per_gpu *
gradient_acc_step * world_size 8 != 1 * 1 * 1"; measured with the real Accelerator and transformers,
`zerolint verify --target accelerate`, DeepSpeed's tests/torch_compile/ds_config_z3.json). The engine itself would
have derived the micro batch from train_batch_size.

A warning: a script that builds its model before the Accelerator, or without transformers, does not meet it. With
`--world-size` the rule is silent when the numbers happen to fit."""

from ...model.dsfacts import BATCH_KEYS
from ..rule import Rule

RULE = Rule(
    code="ZL535",
    name="accelerate-zero3-init-batch",
    severity="warning",
    summary="ZeRO-3 under Accelerate with train_batch_size but no micro batch or accumulation: zero.Init's copy of the "
            "config has 1s there",
    targets=("accelerate",),
    evidence="accelerate/utils/dataclasses.py:1459-1488, 1562 (set_deepspeed_weakref, select); "
             "deepspeed/runtime/config.py (_batch_assertion)",
)

TBS, MICRO, GAS = BATCH_KEYS


def _copied(view, pointer: str) -> int | None:
    """The value in Accelerate's copy: 1 for absent (and for an "auto" micro batch), else the number (None when it
    is not one, or an "auto" accumulation, which the launch config may have filled)."""
    node = view.node(pointer)
    if node is None or (view.is_auto(node) and pointer == MICRO):
        return 1
    value = view.effective(pointer, "int")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


@RULE.check
def check(view):
    tbs_node = view.node(TBS)
    if view.zero_stage != 3 or tbs_node is None or view.is_auto(tbs_node):
        return
    if all(view.node(p) is not None and not view.is_auto(view.node(p)) for p in (MICRO, GAS)):
        return  # the copy is the config: DeepSpeed's own batch rules say whether it fits
    tbs = view.effective(TBS, "int")
    micro, gas = _copied(view, MICRO), _copied(view, GAS)
    if not isinstance(tbs, int) or isinstance(tbs, bool) or tbs <= 0 or micro is None or gas is None:
        return
    world = view.world_size
    if world is not None and tbs == micro * gas * world:
        return
    # The keys the copy sets to 1 (an "auto" accumulation returned above, so an "auto" here is the micro batch).
    keys = (("train_micro_batch_size_per_gpu", MICRO), ("gradient_accumulation_steps", GAS))
    missing = " and ".join(k for k, p in keys if view.node(p) is None or view.is_auto(view.node(p)))
    if world is not None:
        fits = f" ({tbs} != {micro} * {gas} * {world})"
    elif tbs % (micro * gas) == 0:
        fits = f"; it fits only at world size {tbs // (micro * gas)}"
    else:
        fits = ""
    yield view.finding(
        TBS, f"train_batch_size {tbs} with {missing} unset or \"auto\": at ZeRO-3, a transformers model built after "
             f"the Accelerator is built inside deepspeed.zero.Init with Accelerate's copy of the config, where "
             f"{missing} {'are' if ' and ' in missing else 'is'} 1, and DeepSpeed's batch assertion fails there "
             f"(\"train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size\"){fits}",
        at="value", fails_at="parse",
        help='set train_micro_batch_size_per_gpu and gradient_accumulation_steps to numbers, or make all three "auto"')
