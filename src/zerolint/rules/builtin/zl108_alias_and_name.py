"""Both spellings of one ZeRO setting, e.g. `stage3_prefetch_bucket_size` and `prefetch_bucket_size`. DeepSpeed's
model reads the alias and then counts the plain name as an extra key, so the config is rejected at parse
("Extra inputs are not permitted"); even where a reader tolerated it, one of the two values would silently
lose."""

from ..rule import Rule

RULE = Rule(
    code="ZL108",
    name="alias-and-name",
    severity="error",
    summary="A ZeRO setting given under both of its names",
    evidence="deepspeed/runtime/config_utils.py:105-113 (populate_by_name + extra='forbid'); reference probe",
    fixable="unsafe",
)


@RULE.check
def check(view):
    for section_ptr, section in view.schema.all_sections():
        node = view.node(section_ptr)
        if node is None or node.kind != "object":
            continue
        props = section.get("properties", {})
        for key, sub in props.items():
            for alias in sub.get("x-zerolint-aliases", ()):
                a, k = node.member(alias), node.member(key)
                if a is None or k is None or view.is_auto(a.value) or view.is_auto(k.value):
                    continue  # a literal "auto" is dropped before validation (config_utils.py:54-56)
                yield view.finding(k.pointer,
                                   f"{key} and its alias {alias} are both set ({k.value.raw or '...'} and "
                                   f"{a.value.raw or '...'}): DeepSpeed reads {alias} and rejects {key} as an extra "
                                   "key at parse", related=[(a.pointer, f"{alias} set here")],
                                   help="keep one of the two (the stage3_ spelling is the documented one)",
                                   fails_at="parse")
