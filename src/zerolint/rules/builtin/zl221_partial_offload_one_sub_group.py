"""`offload_optimizer.ratio` below 1 asks ZeRO-3 to keep part of the optimizer states on the GPU (the "twin-flow"
partial offload, zero/offload_config.py:99; stage 3 only, engine.py:1572-1573, 2776). DeepSpeed splits by
sub-groups, not by elements: with n optimizer sub-groups, the first int((1 - ratio) x n) stay on the GPU and the
rest go to the CPU (runtime/zero/stage3.py:1100-1108). A sub-group closes once it holds `sub_group_size` elements
(default 1e9, zero/config.py:182) of a rank's partition (stage3.py:1211-1233), so when `sub_group_size` is at
least a rank's partition (parameters / world size) each parameter group is a single sub-group. With one
parameter group (`model.parameters()`, raw DeepSpeed's usual call) that is int((1 - ratio) x 1) = 0 sub-groups
on the GPU for any ratio above 0: everything is offloaded, as with ratio 1, silently. The same arithmetic is in
0.14.0 (stage3.py:815-819); 0.10.0 has no ratio.

With `--params` (and `--world-size`) the rule says it for the model; without them it states when it holds.
It reports only the single-sub-group case, where the outcome is exact; with several sub-groups the split depends
on where the sub-group boundaries fall. Raw DeepSpeed only: the HF Trainer passes two parameter groups (with and
without weight decay), which changes the count."""

from ..rule import Rule

RULE = Rule(
    code="ZL221",
    name="partial-offload-one-sub-group",
    severity="warning",
    summary="offload_optimizer.ratio below 1 with one optimizer sub-group per rank: everything is offloaded anyway",
    evidence="deepspeed/runtime/zero/stage3.py:1100-1108, 1211-1233; deepspeed/runtime/zero/offload_config.py:99",
    targets=("deepspeed",),
)

ZERO = "/zero_optimization"


@RULE.check
def check(view):
    if view.zero_stage != 3 or view.offload_device("optimizer") != "cpu":
        return
    node = view.node(f"{ZERO}/offload_optimizer/ratio")
    if node is None:
        return
    ratio = view.effective(node.pointer, "number")
    sgs = view.effective(f"{ZERO}/sub_group_size", "int")
    if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or not 0 < ratio < 1:
        return
    if not isinstance(sgs, int) or isinstance(sgs, bool) or sgs <= 0:
        return
    default = "" if view.has(f"{ZERO}/sub_group_size") else ", the default"
    sgs_text = f"sub_group_size ({sgs:,}{default})"
    spec, world = view.model_spec, view.world_size
    if spec is not None:
        if world is None and spec.params > sgs:
            return  # depends on the world size
        partition = -(-spec.params // (world or 1))
        if partition > sgs:
            return
        over = f" over {world} GPUs" if world else ""
        cond = f"{sgs_text} is at least a rank's partition ({partition:,} of the {spec.name} parameters{over}): "
    else:
        models = f" (at world size {world}: models up to {sgs * world:,} parameters)" if world else ""
        cond = f"if a rank's partition (parameters / world size) is at most {sgs_text}{models}, "
    keep = 1 - ratio
    msg = (f"offload_optimizer.ratio is {node.raw}, meant to keep {keep:.0%} of the optimizer states on the GPU, "
           f"but DeepSpeed splits by sub-groups: {cond}there is one sub-group per parameter group, and DeepSpeed "
           f"keeps int({keep:g} x 1) = 0 sub-groups on the GPU: every optimizer state is offloaded (with one "
           "optimizer parameter group), as with ratio 1")
    yield view.finding(
        node.pointer, msg, at="value",
        help="lower sub_group_size below a rank's partition so there are several sub-groups (int((1 - ratio) x n) "
             "stay on the GPU), or leave ratio at 1",
    )
