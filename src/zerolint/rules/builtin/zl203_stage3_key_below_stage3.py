"""Keys that only ZeRO stage 3 reads — `stage3_*` (and their un-prefixed aliases), `sub_group_size`,
`zero_hpz_partition_size`, the `zero_quantized_*` switches — do nothing with stage 0, 1 or 2: DeepSpeed accepts
them and never looks at them (runtime/engine.py:2655-2708). Usually a leftover from a stage-3 config, or a
sign that the stage is not what the author thinks."""

from ...model import edits
from ...model.view import STAGE3_ONLY
from ..rule import Rule

RULE = Rule(
    code="ZL203",
    name="stage3-key-below-stage-3",
    severity="warning",
    summary="A ZeRO-3-only setting with ZeRO stage 0, 1 or 2 (ignored)",
    evidence="deepspeed/runtime/engine.py:2655-2708",
    fixable="safe",
)


@RULE.check
def check(view):
    stage = view.zero_stage
    z = view.zero
    if stage is None or stage >= 3 or z is None:
        return
    where = "ZeRO is off (stage 0)" if stage == 0 else f"ZeRO stage is {stage}"
    found = [m for m in z.members or () if m.key in STAGE3_ONLY]
    if len(found) == 1:
        [m] = found
        yield view.finding(m.pointer, f"{m.key} only applies to ZeRO stage 3, but {where}: DeepSpeed ignores it",
                           help="delete it, or set zero_optimization.stage to 3 if stage 3 was meant",
                           fixes=edits.fixes(edits.make_fix(f"delete {m.key} (ignored below stage 3)",
                                                            edits.remove_member(view.doc, m))))
    elif found:  # a pasted stage-3 block: one finding for the block, at its first key
        names = ", ".join(m.key for m in found)
        yield view.finding(found[0].pointer, f"{len(found)} keys only apply to ZeRO stage 3 ({names}), but {where}: "
                                             "DeepSpeed ignores them",
                           help="delete them, or set zero_optimization.stage to 3 if stage 3 was meant",
                           fixes=edits.fixes(edits.make_fix(f"delete the {len(found)} stage-3 keys",
                                                            edits.combine(edits.remove_member(view.doc, m)
                                                                          for m in found))))
    opt = view.node("/zero_optimization/offload_optimizer")
    sup = opt.member("super_offload") if opt is not None else None
    if sup is not None and sup.value.value is True:
        yield view.finding(sup.pointer, f"super_offload only applies to ZeRO stage 3, but {where}: DeepSpeed "
                                        "ignores it", help="delete it, or use ZeRO stage 3")

