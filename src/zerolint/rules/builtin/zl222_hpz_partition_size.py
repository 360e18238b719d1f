"""ZeRO++ hierarchical partitioning (`zero_hpz_partition_size` > 1, stage 3) splits the world into groups of that
many ranks, each holding a secondary copy of the parameters (utils/groups.py:925-952). DeepSpeed takes
`min(zero_hpz_partition_size, world_size)` and asserts that it divides the world size: a size that does not divide
it fails at initialize ("8 is not divisible by 3"), and a size above the world size is silently cut to it, which
replicates the secondary copy on every rank (no saving over plain stage 3 and more memory). Judged only when the
world size is known (--world-size, or a use of the config that says it)."""

from ..rule import Rule

RULE = Rule(
    code="ZL222",
    name="hpz-partition-size",
    severity="error",
    summary="zero_hpz_partition_size that does not divide the world size (or exceeds it)",
    evidence="deepspeed/utils/groups.py:925-952; deepspeed/runtime/zero/partition_parameters.py:1118-1119",
)


@RULE.check
def check(view):
    world = view.world_size
    node = view.node("/zero_optimization/zero_hpz_partition_size")
    size = view.number(node) if node is not None else None
    if world is None or view.zero_stage != 3 or not isinstance(size, int) or isinstance(size, bool) or size <= 1:
        return
    if size > world:
        yield view.finding(node.pointer, f"zero_hpz_partition_size is {size}, above the world size ({world}): "
                                         f"DeepSpeed cuts it to {world}, so every rank holds the whole secondary "
                                         "copy of the parameters", at="value", severity="warning",
                           help=f"use a divisor of {world} below it (usually the GPUs per node)")
    elif world % size:
        yield view.finding(node.pointer, f"zero_hpz_partition_size is {size}, which does not divide the world size "
                                         f"({world}): deepspeed.initialize fails (AssertionError \"{world} is not "
                                         f"divisible by {size}\")", at="value", fails_at="initialize",
                           help=f"use a divisor of {world} (usually the GPUs per node)")
