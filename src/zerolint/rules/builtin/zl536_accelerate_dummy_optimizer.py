"""A config with an `optimizer` (or `scheduler`) section, read by Accelerate: a training loop of one's own must then
hand `accelerator.prepare` an `accelerate.utils.DummyOptim` (and `DummyScheduler`) for DeepSpeed to build the real
one from the config; a torch optimizer (or scheduler) there makes Accelerate raise "ValueError: You cannot specify
an optimizer in the config file and in the code at the same time" before deepspeed.initialize (accelerate 1.15.0
accelerator.py:2250-2286). The HF Trainer does this for its users. Where zerolint cannot see the script, this is
a warning with the condition in its words; where the repository's loop was read (docs/uses.md: the class it
hands accelerator.prepare, Settings.prepared), the verdict is certain both ways: a real optimizer or scheduler
beside the section, and a DummyOptim (a DummyScheduler without lr_scheduler_callable) with no section, are errors ("You
cannot create a `DummyOptim` without specifying an optimizer in the config file")."""

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


# What Accelerate raises for a dummy with no section (accelerator.py:2257-2280)
WITHOUT_SECTION = {
    "optimizer": "You cannot create a `DummyOptim` without specifying an optimizer in the config file.",
    "scheduler": "Either specify a scheduler in the config file or pass in the `lr_scheduler_callable` parameter "
                 "when using `accelerate.utils.DummyScheduler`.",
}


@RULE.check
def check(view):
    prepared = view.settings.prepared or {}
    for key, dummy, article, real in SECTIONS:
        node = view.node(f"/{key}")
        present = node is not None and node.kind == "object"
        if key in prepared:
            yield from _known(view, key, dummy, article, present, *prepared[key])
            continue
        if not present:
            continue
        yield view.finding(
            f"/{key}",
            f"{key} is set in the config: if the script `accelerate launch` runs is a training loop of its own, it "
            f"must pass accelerate.utils.{dummy} to accelerator.prepare; a {real} there makes Accelerate raise "
            f"\"ValueError: You cannot specify {article} in the config file and in the code at the same time\" "
            "before deepspeed.initialize (the HF Trainer does this itself)",
            help=f"create accelerate.utils.{dummy}(...) in a loop of your own, or delete \"{key}\" here and build it "
                 "in the code")


def _known(view, key: str, dummy: str, article: str, present: bool, name: str, where: str):
    """The verdict where the loop's prepare call was read (its class `name`, at `where`)."""
    is_dummy = name.split(" ")[0].rsplit(".", 1)[-1] == dummy
    if present and not is_dummy:
        yield view.finding(
            f"/{key}",
            f"{key} is set in the config and the loop hands accelerator.prepare {name} ({where}): Accelerate "
            f"raises \"ValueError: You cannot specify {article} in the config file and in the code at the same "
            "time\" before deepspeed.initialize",
            severity="error", fails_at="initialize",
            help=f"pass accelerate.utils.{dummy}(...) to accelerator.prepare, or delete \"{key}\" here")
    elif not present and is_dummy and "lr_scheduler_callable" not in name:
        yield view.finding(
            "",
            f"the loop hands accelerator.prepare {dummy} ({where}) and the config has no {key} section: Accelerate "
            f"raises \"ValueError: {WITHOUT_SECTION[key]}\" before deepspeed.initialize",
            severity="error", fails_at="initialize",
            help=f"add {'an' if key == 'optimizer' else 'a'} \"{key}\" section for DeepSpeed to build, or pass a "
                 f"real {key} to accelerator.prepare")
