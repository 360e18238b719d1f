"""An `offload_optimizer` or `offload_param` block without `device` offloads nothing: both default to
`"none"` (zero/offload_config.py:24, 58). DeepSpeed's own docs say the default is `cpu` and that a missing
device triggers an assertion (docs/_pages/config-json.md:638, 654), so configs written from the docs believe
they offload while everything stays on the GPU."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL205",
    name="offload-without-device",
    severity="warning",
    summary="An offload block has no device, so nothing is offloaded",
    evidence="deepspeed/runtime/zero/offload_config.py:24,58; docs/_pages/config-json.md:638,654",
    fixable="unsafe",
)


@RULE.check
def check(view):
    for which in ("optimizer", "param"):
        ptr = f"/zero_optimization/offload_{which}"
        block = view.node(ptr)
        if block is None or block.kind != "object" or block.get("device") is not None:
            continue
        yield view.finding(
            ptr,
            f"offload_{which} has no \"device\": it defaults to \"none\", so nothing is offloaded (DeepSpeed's "
            "docs wrongly say the default is \"cpu\")",
            help="add \"device\": \"cpu\" (or \"nvme\" with an nvme_path), or delete the block",
            fixes=edits.fixes(edits.make_fix('add "device": "cpu"', edits.insert_member(
                view.doc, ptr, "device", '"cpu"', position="start"), safe=False)),
        )
