"""A config with an `optimizer` (or `scheduler`) section, read by Accelerate: a training loop of one's own must then
hand `accelerator.prepare` an `accelerate.utils.DummyOptim` (and `DummyScheduler`) for DeepSpeed to build the real
one from the config; a torch optimizer (or scheduler) there makes Accelerate raise "ValueError: You cannot specify
an optimizer in the config file and in the code at the same time" before deepspeed.initialize (accelerate 1.15.0
accelerator.py:2250-2286). The HF Trainer does this for its users. zerolint cannot see the script, so this is a
warning with the condition in its words."""

from ..rule import Rule

RULE = Rule(
    code="ZL536",
    name="accelerate-dummy-optimizer",
    severity="warning",
    summary="optimizer/scheduler in a config Accelerate reads: a loop of one's own needs DummyOptim/DummyScheduler",
    targets=("accelerate",),
    evidence="accelerate/accelerator.py:2250-2286 (_prepare_deepspeed)",
)

SECTIONS = (("optimizer", "DummyOptim", "an optimizer", "torch optimizer"),
            ("scheduler", "DummyScheduler", "a scheduler", "torch LR scheduler"))


@RULE.check
def check(view):
    for key, dummy, article, real in SECTIONS:
        node = view.node(f"/{key}")
        if node is None or node.kind != "object":
            continue
        yield view.finding(
            f"/{key}",
            f"{key} is set in the config: if the script `accelerate launch` runs is a training loop of its own, it "
            f"must pass accelerate.utils.{dummy} to accelerator.prepare; a {real} there makes Accelerate raise "
            f"\"ValueError: You cannot specify {article} in the config file and in the code at the same time\" "
            "before deepspeed.initialize (the HF Trainer does this itself)",
            help=f"create accelerate.utils.{dummy}(...) in a loop of your own, or delete \"{key}\" here and build it "
                 "in the code")
