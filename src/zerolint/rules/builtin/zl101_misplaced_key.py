"""A key that DeepSpeed knows, in a section where it does not belong. The classic case is a ZeRO key at the
top level — `offload_optimizer`, `offload_param`, `stage`, `overlap_comm`, `reduce_bucket_size`,
`stage3_*` — instead of inside `zero_optimization`: DeepSpeed reads the top level with `dict.get` and never
looks at keys it does not expect (runtime/config.py:482-588), so the setting is silently dropped and, for
offload, nothing is offloaded. Inside a strict section (ZeRO, fp16, bf16, monitors, ...) the same mistake is
rejected at parse ("Extra inputs are not permitted"). A wrapper object whose keys belong one level up
(`"monitor": {"tensorboard": ...}`) is reported the same way.

A top-level `max_grad_norm` is the HF TrainingArguments name for gradient clipping. The schema knows
`max_grad_norm` only as a parameter of some optimizers (Lamb), but moving it into `optimizer.params` of an Adam
config makes `deepspeed.initialize` fail (FusedAdam/DeepSpeedCPUAdam take no such argument; ZL603); DeepSpeed's
key is the top-level `gradient_clipping` (runtime/config.py `get_gradient_clipping`), so that is what the help and
the (unsafe: clipping changes) fix say (config.py:268-269)."""

import re

from ...base import pointer as jp
from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL101",
    name="misplaced-key",
    severity="error",
    summary="A known key in the wrong section (e.g. offload_optimizer at the top level), so it has no effect",
    evidence="deepspeed/runtime/config.py:482-588; deepspeed/runtime/config_utils.py:105-113; "
             "reference probe: top-level offload_optimizer/stage/monitor silently ignored",
    fixable="safe",
)


def _effect(view, key, home):
    if key in ("offload_optimizer", "offload_param", "cpu_offload", "cpu_offload_param"):
        return "nothing is offloaded"
    if key == "stage":
        return "ZeRO stays off"
    return "the setting has no effect"


@RULE.check
def check(view):
    for issue in view.issues("unknown-key"):
        key, here = jp.last(issue.pointer), issue.section
        home = view.home_of(issue.pointer)
        where_here = view.path(here) if here else "the top level"
        if key == "max_grad_norm" and not here:
            yield _max_grad_norm(view, issue.pointer)
            continue
        if home is not None:
            where_home = f"inside {view.path(home)}" if home else "at the top level"
            if issue.unknown == "rejected":
                consequence = f"DeepSpeed rejects it in {view.path(here)} at parse (extra inputs are not permitted)"
            else:
                consequence = f"DeepSpeed ignores it at {where_here}: {_effect(view, key, home)}"
            fails_at = "parse" if issue.unknown == "rejected" else None
            there = _already_there(view, home, key)
            if there is not None:  # (fp16's loss-scale keys pasted into bf16 as well): a move cannot apply
                yield _duplicate(view, issue, key, home, there, consequence, fails_at)
                continue
            move = edits.make_fix(f"move {key} {where_home}", edits.move_member(view.doc, issue.pointer, home))
            yield view.finding(issue.pointer, f"{key} belongs {where_home}; {consequence}",
                               help=f"move \"{key}\" {where_home}", fixes=edits.fixes(move), fails_at=fails_at)
            continue
        node = issue.node
        if node.kind == "object" and node.members:
            known = set(view.schema.keys(here))
            wrapped = [m.key for m in node.members if m.key in known]
            if wrapped and len(wrapped) == len(node.members):
                names = ", ".join(wrapped)
                place = ("in " + view.path(here)) if here else "at the top level"
                verb = "is" if len(wrapped) == 1 else "are"
                yield view.finding(issue.pointer,
                                   f"{key} wraps {names}, which belong directly {place}; "
                                   f"DeepSpeed does not look inside {key}, so {names} {verb} ignored",
                                   help=f"move {names} out of \"{key}\" and delete \"{key}\"")


def _already_there(view, home, key):
    """The node of `key` in its home section when that section already holds it, else None."""
    dest = view.doc.node(home) if home else view.root
    if dest is None or dest.kind != "object":
        return None
    member = dest.member(key)
    return member.value if member is not None else None


def _duplicate(view, issue, key, home, there, consequence, fails_at):
    """`key` is misplaced here and its home already holds it: delete this copy (safe when both say the same;
    otherwise only the user knows which value was meant, so the fix is unsafe)."""
    home_name, here = view.path(home) if home else "the top level", issue.section
    same = _same(view.doc, issue.node, there)
    delete = edits.make_fix(f"delete {key} from {view.path(here) if here else 'the top level'}",
                            edits.remove_member(view.doc, issue.pointer), safe=same)
    if same:
        note, help_ = (f"{home_name} already holds {key} with the same value",
                       f"delete \"{key}\" here ({home_name} keeps it)")
    else:
        note, help_ = (f"{home_name} already holds {key} = {there.raw}, this copy says {issue.node.raw}",
                       f"delete \"{key}\" here, and set {home_name}'s {key} to {issue.node.raw} if that is the "
                       "value you meant")
    where = f"inside {home_name}" if home else "at the top level"
    return view.finding(issue.pointer, f"{key} belongs {where}; {consequence}; {note}", help=help_,
                        fixes=edits.fixes(delete), fails_at=fails_at)


def _same(doc, a, b) -> bool:
    """Whether two values say the same: scalars as read; objects and lists by their text less whitespace (no deep
    walk, which a document nested thousands deep would make recursive)."""
    if a.kind in ("object", "array") or b.kind in ("object", "array"):
        return re.sub(r"\s+", "", doc.text[a.start:a.end]) == re.sub(r"\s+", "", doc.text[b.start:b.end])
    return a.kind == b.kind and a.value == b.value


def _max_grad_norm(view, pointer):
    clip = view.node("/gradient_clipping")
    node = view.node(pointer)
    if clip is not None:
        help = f"delete \"max_grad_norm\"; gradient_clipping ({clip.raw}) is DeepSpeed's setting"
        fix = edits.make_fix("delete max_grad_norm", edits.remove_member(view.doc, pointer), safe=False)
    else:
        help = "rename \"max_grad_norm\" to \"gradient_clipping\" (DeepSpeed's name for it)"
        fix = edits.make_fix("rename max_grad_norm to gradient_clipping",
                             edits.rename_key(view.doc, pointer, "gradient_clipping"), safe=False)
    shown = f" ({node.raw})" if node is not None and node.kind == "number" else ""
    return view.finding(pointer, f"max_grad_norm{shown} is the HF Trainer's name; DeepSpeed ignores it at the top "
                        "level and clips by gradient_clipping", help=help, fixes=edits.fixes(fix))
