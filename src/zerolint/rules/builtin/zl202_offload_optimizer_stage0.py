"""`offload_optimizer` needs ZeRO (stage 1, 2 or 3). With ZeRO off DeepSpeed still builds its CPU optimizer from the
optimizer section whenever the offload device is cpu or nvme (Adam/AdamW: DeepSpeedCPUAdam, Adagrad:
DeepSpeedCPUAdagrad, Lion: DeepSpeedCPULion; runtime/engine.py:1562-1565, 2384-2400, 2496-2509), but the parameters
stay on the GPU, and its step() asserts "CPUAdam param is on cuda:0 and must be 'cpu'" (ops/adam/cpu_adam.py:148;
the Adagrad and Lion ones likewise). When that first step runs depends on the precision:

- fp16 or bf16: the engine wraps the optimizer in FP16_UnfusedOptimizer (engine.py:2313-2321, 2358-2362, 2599;
  DeepSpeedCPUAdam is not FusedAdam), whose constructor calls `initialize_optimizer_states()`, a real
  `optimizer.step()` on zero gradients (fp16/unfused_optimizer.py:108, 412-425): `deepspeed.initialize` fails
  (measured on an H200 by `zerolint verify` with bf16, docs/verify-results.md).
- fp32: nothing wraps the optimizer (engine.py:2314-2315, 2366), so the assertion fires at the first
  `engine.step()`.
- precision decided at run time ("auto"): either; the finding makes no stage claim.

Any other optimizer (RMSprop, SGD, Lamb, torch_adam, ...) and an optimizer passed by the code are not swapped: the
offload is silently ignored and the optimizer steps on the GPU (measured: RMSprop with nvme offload at stage 0, and
a client AdamW with zero_force_ds_cpu_optimizer false, ran 3 steps on an H200 and on CPU; the runtime
differential). A client optimizer with zero_force_ds_cpu_optimizer true fails at initialize instead (ZL219).

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
    key = ptr.rsplit('/', 1)[-1]
    head = f"{key} needs ZeRO stage 1, 2 or 3, but ZeRO is off (stage 0): "
    help_ = "set zero_optimization.stage to 1, 2 or 3 (stage 2 is the usual choice with optimizer offload)"
    fixes = edits.fixes(edits.make_fix("set zero_optimization.stage to 2", _stage2(view), safe=False))
    cpu_class = view.optimizer_class if view.optimizer_class in CPU_OPTIMIZERS else None
    if (view.optimizer_type is None and view.target in ("hf", "accelerate") and view.force_ds_cpu_optimizer is True
            and view.has("/zero_optimization/offload_optimizer/device")):
        cpu_class = "DeepSpeedCPUAdam"  # Accelerate swaps the Trainer's optimizer for it (ZL219)
    if cpu_class is None:
        # No CPU optimizer is built: the optimizer section names another optimizer (measured: RMSprop runs), or
        # there is none and the code passes its own (ZL219 says when that fails at initialize). Nothing moves.
        what = (f"the {view.optimizer_type} optimizer" if view.optimizer_type else "the optimizer your code passes")
        if view.optimizer_type is None or view.optimizer_class is not None:
            yield view.finding(
                ptr, head + f"DeepSpeed silently ignores it, and {what} steps on the GPU with the parameters "
                "(nothing is offloaded)", help=help_, fixes=fixes)
        return
    precision = view.precision
    fails_at = {"fp16": "initialize", "bf16": "initialize", "fp32": "step"}.get(precision)
    when = {  # fails_at None (precision decided at run time): no key, the default text
        "initialize": f"deepspeed.initialize fails on GPU (the {precision} wrapper takes a first optimizer step to "
                      "create the optimizer states)",
        "step": "the first optimizer step fails on GPU (fp32: nothing wraps the optimizer)",
    }.get(fails_at, "it fails on GPU: at deepspeed.initialize with fp16/bf16, at the first optimizer step with fp32")  # type: ignore[arg-type]
    short = CPU_OPTIMIZERS[cpu_class]
    yield view.finding(
        ptr,
        head + f"the optimizer is DeepSpeed's CPU optimizer ({cpu_class}) while the parameters stay on the GPU, and "
        f"{when} (\"{short} param is on cuda:0 and must be 'cpu'\")",
        help=help_, fails_at=fails_at, fixes=fixes,
    )


# The CPU optimizers DeepSpeed builds from the optimizer section when offload_optimizer is cpu/nvme, at any stage
# (engine.py:2384-2400, 2496-2509), and the name their device assertion uses (ops/adam/cpu_adam.py:148,
# ops/adagrad/cpu_adagrad.py:72, ops/lion/cpu_lion.py:108).
CPU_OPTIMIZERS = {"DeepSpeedCPUAdam": "CPUAdam", "ZenFlowCPUAdam": "CPUAdam", "DeepSpeedCPUAdagrad": "CPUAdagrad",
                  "DeepSpeedCPULion": "CPULion"}


def _stage2(view):
    stage = view.node("/zero_optimization/stage")
    if stage is not None:
        return edits.replace_value(view.doc, stage, "2")
    return edits.insert_member(view.doc, "/zero_optimization", "stage", "2", position="start")
