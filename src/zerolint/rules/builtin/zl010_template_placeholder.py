"""Many published DeepSpeed configs are templates: a shell script `sed`s or `envsubst`s values in before the job
starts (`"train_batch_size": CONFIG_BATCH_SIZE,`, `"stage": ${zero_stage}`, `{{ micro_batch }}`). DeepSpeed reads
such a file with hjson, where an unquoted word is a string that runs to the end of the line (the trailing comma
included), so the unrendered template fails or means something else: a string where a number or a boolean
belongs. Reporting each as a type error misses the point; this rule recognises the usual placeholder shapes
and says what to do instead: lint the rendered config.

Recognised as a whole value: `${name}`, `$NAME`, `{{ name }}`, `{% ... %}`, `%(name)s`, `<NAME>`, `@NAME@`, and,
for hjson quoteless values only, an ALL_CAPS identifier with an underscore (`CONFIG_FP16_ENABLED`). The wrong-type
and invalid-value rules (ZL104, ZL105) stay quiet for these values. JSON-incompatible syntax (ZL002) and removed
sections (ZL701) are still reported: the rendered file keeps them."""

from ...model.view import placeholder_of
from ..rule import Rule

RULE = Rule(
    code="ZL010",
    name="template-placeholder",
    severity="warning",
    summary="A value that looks like a template placeholder; lint the rendered config",
    evidence="deepspeed/runtime/config.py:444 (hjson.load); "
             "DeepSpeedExamples compression/bert/config/ds_config_TEMPLATE.json",
)


@RULE.check
def check(view):
    root = view.root
    if root is None:
        return
    for node in root.walk():
        text = placeholder_of(node)
        if text is None:
            continue
        quoteless = node.raw[:1] not in ('"', "'")
        reads = f"the string {node.value!r}" + (" (hjson quoteless string)" if quoteless else "")
        # Asked about raw DeepSpeed explicitly (--target deepspeed), say what DeepSpeed does with the file as it
        # stands: where that string is an invalid value, its parse fails (tests/differential holds us to it).
        fails = None
        if view.target_requested == "deepspeed" and any(
                i.pointer == node.pointer and i.kind in ("type", "enum", "range", "not-integer")
                for i in view.schema_issues):
            fails = view.invalid_value(node.pointer).fails_at
        yield view.finding(
            node.pointer,
            f"{view.path(node.pointer)} is {text}, which looks like a template placeholder: DeepSpeed would read "
            f"{reads}; this file works only after the template is rendered"
            + ("; given to DeepSpeed as it is, it fails at parse" if fails == "parse" else ""),
            at="value", help="lint the rendered config (e.g. render it, then `zerolint check rendered.json`)",
            severity="error" if fails == "parse" else None, fails_at="parse" if fails == "parse" else None)
