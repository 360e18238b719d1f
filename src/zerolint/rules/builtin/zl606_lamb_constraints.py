"""DeepSpeed's Lamb (FusedLamb) has two requirements a config can break:

- Dynamic loss scaling. `deepspeed.initialize` asserts `DeepSpeed lamb optimizer requires dynamic loss scaling`
  when `fp16.loss_scale` is not 0 (engine.py:2021-2023). The check reads `fp16.loss_scale` whether or not fp16 is
  enabled (`dynamic_loss_scale()` is `loss_scale == 0`, engine.py:1781-1782), so a static scale left in a disabled
  fp16 block fails too.
- A GPU. FusedLamb is a CUDA kernel with no CPU implementation (ops/lamb/fused_lamb.py; DeepSpeed builds no
  CPU Lamb, engine.py:2501-2504), but with `offload_optimizer` on cpu/nvme ZeRO keeps the fp32 master weights and
  optimizer state on the host and calls the optimizer's `step()` there: the first optimizer step fails with
  `RuntimeError: ... p must be a CUDA tensor` (fused_lamb.py:165; seen on an H200 with DeepSpeed 0.19.8, ZeRO-2,
  bf16, `zero_allow_untested_optimizer: true`). Without that flag ZeRO rejects Lamb earlier (ZL602).
- No bf16 gradients. With bf16 and ZeRO off (stage 0, gradients accumulated in bf16, the default) the engine
  wraps Lamb in FP16_UnfusedOptimizer with `fused_lamb_legacy` (engine.py:2313-2321, 2360-2362, 2599-2606), whose
  step hands the bf16 gradients straight to FusedLamb (fp16/unfused_optimizer.py:135-169); the CUDA kernel
  dispatches only on float, double and half (csrc/lamb/fused_lamb_cuda_kernel.cu:379-380,
  `AT_DISPATCH_FLOATING_TYPES_AND_HALF`), so the first optimizer step fails on CUDA with `"lamb_cuda_kernel" not
  implemented for 'BFloat16'` (measured on an H200, issue 14). With ZeRO 1-3 the optimizer steps fp32 partitions
  and with fp16 the gradients are half: both run. (DeepSpeed has no CPU Lamb: on a CPU-only machine the optimizer
  does not build at all.) The DDP_BFLOAT16 wrapper came in 0.17.6 (v0.17.5 engine.py:1409-1417 raises "Bfloat16
  wrapper must use a gradient accumulation type of fp32" at initialize for any optimizer instead), so the check
  applies from 0.17.6; the kernel's dispatch is the same in 0.16.0.

Fix for the static scale (unsafe: the scale becomes dynamic): set `fp16.loss_scale` to 0."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL606",
    name="lamb-constraints",
    severity="error",
    summary="Lamb with a static fp16 loss scale (fails at initialize), with optimizer offload or with bf16 at ZeRO "
            "stage 0 (fail at step 1)",
    evidence="deepspeed/runtime/engine.py:1781-1782, 2021-2023, 2313-2321, 2501-2504, 2599-2606; "
             "deepspeed/ops/lamb/fused_lamb.py; deepspeed/ops/csrc/lamb/fused_lamb_cuda_kernel.cu:379-380",
    fixable="unsafe",
)

LS = "/fp16/loss_scale"


@RULE.check
def check(view):
    if view.optimizer_name != "lamb":
        return
    t = view.optimizer_type
    scale = view.effective(LS, "number") if view.node("/fp16") is not None else 0
    if isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale != 0:
        off = "" if view.fp16_enabled else " (the check runs even though fp16 is not enabled)"
        yield view.finding(
            LS,
            f"optimizer \"{t}\" needs dynamic loss scaling, but fp16.loss_scale is {view.node(LS).raw}, a static "
            f"scale: deepspeed.initialize fails with \"DeepSpeed lamb optimizer requires dynamic loss scaling\"{off}",
            at="value", related=[("/optimizer/type", "Lamb")],
            help="set fp16.loss_scale to 0 (dynamic), or delete it",
            fixes=edits.fixes(edits.make_fix("set fp16.loss_scale to 0 (dynamic scaling)",
                                             edits.replace_value(view.doc, LS, "0"), safe=False)), fails_at="initialize"
        )
    device = view.offload_device("optimizer")
    if device in ("cpu", "nvme") and view.zero_stage:
        yield view.finding(
            "/optimizer/type",
            f"optimizer \"{t}\" builds FusedLamb, a CUDA-only optimizer (DeepSpeed has no CPU Lamb), but "
            f"offload_optimizer ({device}) has ZeRO run the optimizer step on host memory: the first optimizer "
            "step fails with \"RuntimeError: p must be a CUDA tensor\"",
            at="value",
            related=[("/zero_optimization/offload_optimizer", "optimizer offload")],
            help="use Adam/AdamW (DeepSpeedCPUAdam) with optimizer offload, or turn the offload off for Lamb",
            fails_at="step"
        )
    if (view.since(">=0.17.6") and view.zero_stage == 0 and view.model_dtype == "bf16"
            and view.grad_accum_dtype == "bf16"):
        yield view.finding(
            "/optimizer/type",
            f"optimizer \"{t}\" builds FusedLamb, and with bf16 and ZeRO off (stage 0) the engine passes it bf16 "
            "gradients: on CUDA the first optimizer step fails with \"lamb_cuda_kernel\" not implemented for "
            "'BFloat16' (the kernel takes fp32 and fp16 only)",
            at="value",
            related=[("/bf16/enabled" if view.has("/bf16/enabled") else "/bf16", "bf16")],
            help="use ZeRO stage 1 or 2 (the optimizer then steps fp32 partitions; set zero_allow_untested_optimizer: "
                 "true for Lamb), train in fp16, or use AdamW",
            fails_at="step"
        )
