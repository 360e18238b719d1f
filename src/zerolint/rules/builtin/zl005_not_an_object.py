"""The top level of a DeepSpeed config must be an object (`{...}`). DeepSpeed calls `.get` on it and
fails with an AttributeError or TypeError far from the cause when it is a list, a string or a number."""

from ..rule import Rule

RULE = Rule(
    code="ZL005",
    name="not-an-object",
    severity="error",
    summary="The top level of the config is not a JSON object",
    evidence="deepspeed/runtime/config.py:482-588 (param_dict.get)",
)

KIND = {"array": "a list", "string": "a string", "number": "a number", "boolean": "a boolean", "null": "null"}


@RULE.check
def check(view):
    root = view.doc.root
    if root is None or root.kind == "object":
        return
    yield view.finding("", f"the config is {KIND.get(root.kind, root.kind)}, not an object; DeepSpeed needs "
                           "{\"key\": value, ...} at the top level", span=(root.start, root.start + 1),
                       help="wrap the settings in an object: { \"train_micro_batch_size_per_gpu\": 1, ... }",
                       fails_at="parse")
