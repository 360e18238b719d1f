"""A deprecated name: DeepSpeed still reads it (copying the value to its replacement and logging "Config
parameter X is deprecated use Y instead"), but it is on the way out, and some deprecated keys do less than
they seem (`cpu_offload_use_pin_memory` only warns; its value is not applied). The deprecations come from
DeepSpeed's own field metadata (`deprecated=True, new_param=...` in zero/config.py), plus `bfloat16` (read
only when `bf16` is absent) and the boolean `zero_optimization` form."""

from ...base import pointer as jp
from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL702",
    name="deprecated-key",
    severity="warning",
    summary="A deprecated key name (DeepSpeed reads it and warns; use the replacement)",
    evidence="deepspeed/runtime/config_utils.py:60-103; deepspeed/runtime/zero/config.py:188-220",
    fixable="safe",
)


def _deprecated_members(view):
    for section_ptr, section in view.schema.all_sections():
        node = view.node(section_ptr)
        if node is None or node.kind != "object":
            continue
        for m in node.members or ():
            sub = section.get("properties", {}).get(m.key)
            if isinstance(sub, dict) and sub.get("deprecated") and "x-zerolint-removed-in" not in sub:
                yield m, sub, section


@RULE.check
def check(view):
    for m, sub, section in _deprecated_members(view):
        new = sub.get("x-zerolint-replaced-by")
        parent = jp.parent(m.pointer)
        if new:
            names = view.schema.spellings(section, new.split(".")[0])
            if new != "bf16" and any(view.node(jp.join(parent, n)) is not None for n in names):
                continue  # deprecated + replacement together: ZL703
            new = names[0] + new[len(new.split(".")[0]):]
        if new == "bf16" and view.node("/bf16") is not None:
            continue  # bf16 + bfloat16: ZL302
        applied = sub.get("x-zerolint-sets-new-param", True)
        note = sub.get("x-zerolint-deprecated-msg", "")
        msg = f"{m.key} is deprecated" + (f"; use {new}" if new else "")
        if new and not applied:
            msg += f" (its value is NOT copied to {new}: setting it does nothing)"
        elif new == "bf16":
            msg += " (DeepSpeed reads it only while bf16 is absent)"
        elif new:
            msg += " (DeepSpeed still reads it and logs a deprecation warning)"
        if note:
            msg += f". {note.rstrip('.')}"
        yield view.finding(m.pointer, msg, help=f"rename it to {new}" if new else "delete it",
                           fixes=edits.fixes(_fix(view, m, new, applied)))
    z = view.node("/zero_optimization")
    if z is not None and z.kind == "boolean":
        yield view.finding("/zero_optimization",
                           f"\"zero_optimization\": {z.raw} is the deprecated boolean form (true means stage 1)",
                           help=f"write \"zero_optimization\": {{\"stage\": {1 if z.value else 0}}}",
                           fixes=edits.fixes(edits.make_fix(
                               f'write {{"stage": {1 if z.value else 0}}}',
                               edits.replace_value(view.doc, z, f'{{"stage": {1 if z.value else 0}}}'))))


def _fix(view, m, new, applied):
    """Say it the current way, with the meaning DeepSpeed gives the deprecated key (zero/config.py:188-220)."""
    if not new or not applied or " " in new:
        return edits.make_fix(f"delete {m.key} (it has no effect)", edits.remove_member(view.doc, m))
    if m.key in ("cpu_offload", "cpu_offload_param"):  # a bool that becomes an offload block with device cpu
        if m.value.value is not True:
            return edits.make_fix(f"delete {m.key} (false means no offload)", edits.remove_member(view.doc, m))
        renamed = edits.rename_key(view.doc, m, new)
        value = edits.replace_value(view.doc, m, '{"device": "cpu"}')
        return edits.make_fix(f'replace {m.key}: true with {new}: {{"device": "cpu"}}',
                              None if renamed is None or value is None else renamed + value)
    return edits.make_fix(f"rename {m.key} to {new}", edits.rename_key(view.doc, m, new))
