"""`offload_optimizer` needs ZeRO (stage 1, 2 or 3). With ZeRO off DeepSpeed still swaps the optimizer for
DeepSpeedCPUAdam whenever the offload device is cpu or nvme (runtime/engine.py:1562-1565, 2384-2400), but the
parameters stay on the GPU, so `deepspeed.initialize` fails on a GPU machine with "CPUAdam param is on cuda:0 and
must be 'cpu'" (ops/adam/cpu_adam.py:148) — measured on an H200 by `zerolint verify` (docs/verify-results.md);
the reference notes expected it at the first step. On a CPU-only machine the same config runs, which is why it
can pass a CPU smoke test and then fail on the cluster."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL202",
    name="offload-optimizer-without-zero",
    severity="error",
    summary="offload_optimizer is set while ZeRO is off (stage 0)",
    evidence="deepspeed/runtime/engine.py:1562-1565, 2384-2400; deepspeed/ops/adam/cpu_adam.py:148",
    fixable="unsafe",
)


@RULE.check
def check(view):
    if view.zero_stage != 0 or not view.offloads("optimizer"):
        return
    ptr = "/zero_optimization/offload_optimizer"
    if not view.has(ptr):
        ptr = "/zero_optimization/cpu_offload"
    yield view.finding(
        ptr,
        f"{ptr.rsplit('/', 1)[-1]} needs ZeRO stage 1, 2 or 3, but ZeRO is off (stage 0): DeepSpeed builds "
        "DeepSpeedCPUAdam for parameters that stay on the GPU, and deepspeed.initialize fails on GPU "
        "(\"CPUAdam param is on cuda:0 and must be 'cpu'\")",
        help="set zero_optimization.stage to 1, 2 or 3 (stage 2 is the usual choice with optimizer offload)",
        fails_at="initialize",
        fixes=edits.fixes(edits.make_fix("set zero_optimization.stage to 2", _stage2(view), safe=False)),
    )


def _stage2(view):
    stage = view.node("/zero_optimization/stage")
    if stage is not None:
        return edits.replace_value(view.doc, stage, "2")
    return edits.insert_member(view.doc, "/zero_optimization", "stage", "2", position="start")
