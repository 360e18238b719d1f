"""A deprecated key together with the key that replaces it, e.g. `cpu_offload` and `offload_optimizer`, or
`stage3_gather_fp16_weights_on_model_save` and `stage3_gather_16bit_weights_on_model_save`. DeepSpeed copies
the deprecated value into the replacement and refuses the config at parse when the replacement is set too:
"Cannot provide deprecated parameter 'X' and replacing parameter 'Y' together" (runtime/config_utils.py:89-91) —
even when the deprecated one is `false`."""

from ...base import pointer as jp
from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL703",
    name="deprecated-with-replacement",
    severity="error",
    summary="A deprecated key and its replacement are both set (rejected at parse)",
    evidence="deepspeed/runtime/config_utils.py:89-91",
    fixable="safe",
)


@RULE.check
def check(view):
    for section_ptr, section in view.schema.all_sections():
        node = view.node(section_ptr)
        if node is None or node.kind != "object" or section_ptr == "":
            continue
        for m in node.members or ():
            sub = section.get("properties", {}).get(m.key)
            if not (isinstance(sub, dict) and sub.get("deprecated") and sub.get("x-zerolint-replaced-by")):
                continue
            if not sub.get("x-zerolint-sets-new-param", True):
                continue  # DeepSpeed only warns about this one
            new = sub["x-zerolint-replaced-by"]
            found = [view.node(jp.join(section_ptr, n)) for n in view.schema.spellings(section, new.split(".")[0])]
            replacement = next((n for n in found if n is not None), None)
            if replacement is None or view.is_auto(m.value) or view.is_auto(replacement):
                continue  # a literal "auto" is dropped before the check (config_utils.py:54-56)
            new = jp.last(replacement.pointer)
            yield view.finding(m.pointer,
                               f"{m.key} is deprecated and its replacement {new} is also set: DeepSpeed refuses the "
                               f"config at parse (\"Cannot provide deprecated parameter '{m.key}' and replacing "
                               f"parameter '{new}' together\")",
                               related=[(replacement.pointer, f"{new} set here")],
                               help=f"delete {m.key} and keep {new}", fails_at="parse",
                               fixes=edits.fixes(edits.make_fix(f"delete {m.key} (keep {new})",
                                                                edits.remove_member(view.doc, m))))
