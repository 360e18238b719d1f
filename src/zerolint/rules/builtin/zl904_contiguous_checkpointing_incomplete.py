"""`activation_checkpointing.contiguous_memory_optimization: true` copies checkpoints into one preallocated
buffer, which needs partitioned activations and the number of checkpoints to size it. When
`deepspeed.checkpointing.configure` applies the section it asserts both: "Contiguous Checkpointing is only
available with partitioned activations. Set partitioned activations to true in deepspeed config" and "Must
specify the number of layers with contiguous memory checkpointing" (activation_checkpointing/checkpointing.py:
1228-1231). Parse does not check it. `configure(..., partition_activations=..., num_checkpoints=...)` arguments
override the config (Megatron passes `num_checkpoints=args.num_layers`), and without a `configure` call the
section is inert (ZL903): hence a warning. The key DeepSpeed reads is `partition_activations`; its own format
string says `partitioned_activations`, which is ignored (ZL103)."""

from ..rule import Rule

RULE = Rule(
    code="ZL904",
    name="contiguous-checkpointing-incomplete",
    severity="warning",
    summary="contiguous_memory_optimization without partition_activations and number_checkpoints",
    evidence="deepspeed/runtime/activation_checkpointing/checkpointing.py:1228-1231",
)

AC = "/activation_checkpointing"


@RULE.check
def check(view):
    sec = view.node(AC)
    if sec is None or sec.kind != "object":
        return
    ptr = f"{AC}/contiguous_memory_optimization"
    if not view.has(ptr) or view.node(ptr).value is not True:
        return
    missing = []
    part = view.node(f"{AC}/partition_activations")
    if part is None or part.value in (False, None, 0):
        missing.append(("partition_activations is not true", "Contiguous Checkpointing is only available with "
                                                             "partitioned activations"))
    num = view.node(f"{AC}/number_checkpoints")
    if num is None or num.kind == "null":
        missing.append(("number_checkpoints is not set", "Must specify the number of layers with contiguous "
                                                        "memory checkpointing"))
    if not missing:
        return
    yield view.finding(
        ptr, f"contiguous_memory_optimization is true but {' and '.join(m[0] for m in missing)}: when the code calls "
             "deepspeed.checkpointing.configure without passing them as arguments, DeepSpeed fails (AssertionError "
             f"\"{missing[0][1]}\")",
        at="member", help="set partition_activations to true and number_checkpoints to the number of checkpointed "
                          "layers, or set contiguous_memory_optimization to false")
