"""With ZeRO stage 1 or 2, `offload_optimizer.device: "nvme"` silently behaves as CPU offload: the stage 1/2
optimizer only checks whether the device is not "none" (stage_1_and_2.py:220-225), so `nvme_path`,
`buffer_count` and the `aio` settings do nothing, and the optimizer states occupy host RAM — which the NVMe
choice was usually meant to avoid."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL207",
    name="nvme-optimizer-below-stage-3",
    severity="warning",
    summary="NVMe optimizer offload with ZeRO stage 1 or 2 silently uses CPU memory",
    evidence="deepspeed/runtime/zero/stage_1_and_2.py:220-225",
)


@RULE.check
def check(view):
    if view.zero_stage not in (1, 2) or view.offload_device("optimizer") != "nvme":
        return
    yield view.finding("/zero_optimization/offload_optimizer/device",
                       f"with ZeRO stage {view.zero_stage}, device \"nvme\" behaves as \"cpu\": optimizer states go to "
                       "host RAM and nvme_path is never used", at="member",
                       help="use ZeRO stage 3 for NVMe offload, or say \"cpu\" and size host memory for it",
                       fixes=edits.fixes(edits.make_fix(  # safe: "cpu" is what this stage does with "nvme"
                           'write "cpu", which is what this stage does', edits.replace_value(
                               view.doc, "/zero_optimization/offload_optimizer/device", '"cpu"'))))
