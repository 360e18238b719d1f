"""`--target auto` (the default) checks a file that holds `"auto"` values as the HF Trainer reads it, since only the
HF Trainer and Accelerate fill them. The same file passed to `deepspeed.initialize` directly gets a different
verdict: raw DeepSpeed fills nothing, drops "auto" in its strict sections (the default applies, silently) and keeps
it elsewhere, where it crashes (ZL501). This finding (info) names the consumer chosen, the transformers version
assumed, and what raw DeepSpeed would do with the same values, so a reader who runs DeepSpeed directly is not
misled by a clean HF verdict; `--target deepspeed` checks the file that way.

The consumer is a guess, so where raw DeepSpeed would crash on the file the note is a warning, not a hidden info:
a user who copied an HF config into a `deepspeed train.py --deepspeed_config` launch sees that it fails there. Where
raw DeepSpeed only drops the values, it stays an info."""


from ...base.record import replace
from ...model.trainer import transformers_version
from ..rule import Rule

RULE = Rule(
    code="ZL504",
    name="auto-target-chosen",
    severity="info",
    summary="--target auto chose the HF Trainer for a file with \"auto\" values; what raw DeepSpeed would do instead",
    targets=("hf",),
    evidence="deepspeed/runtime/config_utils.py:54-56; transformers/integrations/deepspeed.py",
)

ORDER = {"parse": 0, "initialize": 1, "the first step": 2}


@RULE.check
def check(view):
    if view.target_requested != "auto":
        return
    autos = [n for n in view.auto_nodes if view.is_auto(n)]
    if not autos:
        return
    from ...model.view import View

    raw = View(view.doc, replace(view.settings, target="deepspeed"))
    outcomes = [(n, raw.auto_outcome(n)) for n in autos]
    # crashes_at is set for every outcome kept here
    crashes = sorted(((n, o) for n, o in outcomes if o.crashes_at), key=lambda no: ORDER.get(no[1].crashes_at, 3))  # type: ignore[arg-type]
    dropped = [n for n, o in outcomes if not o.crashes_at]
    if crashes:
        node, first = crashes[0]
        verdict = f"fails at {first.crashes_at} ({view.path(node.pointer)} is \"auto\": {first.effect})"
    else:
        node = dropped[0]
        effect = outcomes[0][1].effect.removeprefix("DeepSpeed silently drops it: ")
        verdict = f"silently drops {'it' if len(dropped) == 1 else 'them'} ({view.path(node.pointer)}: {effect})"
    count = f"{len(autos)} \"auto\" value{'s' if len(autos) != 1 else ''}"
    yield view.finding(node.pointer, f"checked as the HF Trainer reads it (transformers "
                                     f"{transformers_version(view.settings)} assumed), because the file holds {count}; "
                                     f"passed to deepspeed.initialize directly, DeepSpeed {view.version} {verdict}",
                       at="value", severity="warning" if crashes else None,
                       help="if this file is passed to deepspeed.initialize, check it with --target "
                            "deepspeed; for the HF Trainer, pass --target hf to silence this note")
