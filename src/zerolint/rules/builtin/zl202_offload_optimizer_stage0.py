"""`offload_optimizer` needs ZeRO (stage 1, 2 or 3). With ZeRO off DeepSpeed still swaps the optimizer for
DeepSpeedCPUAdam whenever the offload device is cpu or nvme (runtime/engine.py:1562-1565, 2384-2400), but the
parameters stay on the GPU, and DeepSpeedCPUAdam.step() asserts "CPUAdam param is on cuda:0 and must be 'cpu'"
(ops/adam/cpu_adam.py:148). When that first step runs depends on the precision:

- fp16 or bf16: the engine wraps the optimizer in FP16_UnfusedOptimizer (engine.py:2313-2321, 2358-2362, 2599;
  DeepSpeedCPUAdam is not FusedAdam), whose constructor calls `initialize_optimizer_states()`, a real
  `optimizer.step()` on zero gradients (fp16/unfused_optimizer.py:108, 412-425): `deepspeed.initialize` fails
  (measured on an H200 by `zerolint verify` with bf16, docs/verify-results.md).
- fp32: nothing wraps the optimizer (engine.py:2314-2315, 2366), so the assertion fires at the first
  `engine.step()`.
- precision decided at run time ("auto"): either; the finding makes no stage claim.

On a CPU-only machine the parameters are on the CPU and the same config runs, which is why it can pass a CPU smoke
test and then fail on the cluster."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL202",
    name="offload-optimizer-without-zero",
    severity="error",
    summary="offload_optimizer is set while ZeRO is off (stage 0)",
    evidence="deepspeed/runtime/engine.py:1562-1565, 2313-2321, 2384-2400; deepspeed/ops/adam/cpu_adam.py:148; "
             "deepspeed/runtime/fp16/unfused_optimizer.py:108, 412-425",
    fixable="unsafe",
)


@RULE.check
def check(view):
    if view.zero_stage != 0 or not view.offloads("optimizer"):
        return
    ptr = "/zero_optimization/offload_optimizer"
    if not view.has(ptr):
        ptr = "/zero_optimization/cpu_offload"
    precision = view.precision
    fails_at = {"fp16": "initialize", "bf16": "initialize", "fp32": "step"}.get(precision)
    when = {
        "initialize": f"deepspeed.initialize fails on GPU (the {precision} wrapper takes a first optimizer step to "
                      "create the optimizer states)",
        "step": "the first optimizer step fails on GPU (fp32: nothing wraps the optimizer)",
    }.get(fails_at, "it fails on GPU: at deepspeed.initialize with fp16/bf16, at the first optimizer step with fp32")
    yield view.finding(
        ptr,
        f"{ptr.rsplit('/', 1)[-1]} needs ZeRO stage 1, 2 or 3, but ZeRO is off (stage 0): the optimizer is "
        f"DeepSpeed's CPU optimizer (DeepSpeedCPUAdam) while the parameters stay on the GPU, and {when} "
        "(\"CPUAdam param is on cuda:0 and must be 'cpu'\")",
        help="set zero_optimization.stage to 1, 2 or 3 (stage 2 is the usual choice with optimizer offload)",
        fails_at=fails_at,
        fixes=edits.fixes(edits.make_fix("set zero_optimization.stage to 2", _stage2(view), safe=False)),
    )


def _stage2(view):
    stage = view.node("/zero_optimization/stage")
    if stage is not None:
        return edits.replace_value(view.doc, stage, "2")
    return edits.insert_member(view.doc, "/zero_optimization", "stage", "2", position="start")
