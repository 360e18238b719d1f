"""The low-precision master-weights flags — `fp16.fp16_master_weights_and_grads`,
`bf16.bf16_master_weights_and_grads` and `bf16.bf16_optimizer_states` — have requirements DeepSpeed enforces in two
places, whether or not fp16/bf16 itself is enabled:

- at parse (runtime/config.py:702-714): each flag needs ZeRO stage 1, 2 or 3 ("Fp16_master_weights_and_grads is
  only supported with ZeRO Stage 1, 2, or 3."), and `bf16_optimizer_states` needs `bf16_master_weights_and_grads`;
- at `deepspeed.initialize` (base_optimizer.py:497-521; stage_1_and_2.py:331-343; stage3.py:299-311): fp16 and bf16
  master weights are mutually exclusive, and fp16 master weights, or bf16 master weights with fp32 optimizer states
  (no `bf16_optimizer_states`), or bf16 optimizer states with offload, need `offload_optimizer` on cpu/nvme AND
  the optimizer to be exactly DeepSpeedCPUAdam ("Master weights feature requires ZeRO Offload with
  DeepSpeedCPUAdam"). DeepSpeedCPUAdam is what "Adam"/"AdamW" build with optimizer offload (not with
  `torch_adam`, and not ZenFlow's subclass). The catalog says "without CPU offload + CPU-Adam"; the source adds
  that bf16 master weights WITH bf16 optimizer states and no offload keep everything on the GPU and are accepted
  (DeepSpeedExamples' bf16_master_weight config does exactly that).

The bf16 flags exist from 0.18.3; before it fp16 master weights need exactly stage 2 at parse ("... only supported
with ZeRO Stage 2 for now.", 0.14.5-0.18.2 config.py), and a plain-dict fp16 block (before 0.17.1) is read only
when fp16 is enabled. ZeRO-3 enforces the offload requirement from 0.18 (0.17.6 checked fp16
master weights only for stages 1-2)."""

from ..rule import Rule

RULE = Rule(
    code="ZL308",
    name="master-weights-config",
    severity="error",
    summary="fp16/bf16 master-weight flags without ZeRO, without each other, or without CPU-Adam optimizer offload",
    evidence="deepspeed/runtime/config.py:702-714; deepspeed/runtime/base_optimizer.py:497-521; "
             "deepspeed/runtime/zero/stage_1_and_2.py:331-343; deepspeed/runtime/zero/stage3.py:299-311",
)


def _flag(view, ptr):
    if ptr.startswith("/fp16/") and view.node(ptr) is not None and not view.is_strict("/fp16"):
        return bool(view.value(ptr))  # a plain-dict fp16 (before 0.17.1) tests the value's truthiness
    return view.node(ptr) is not None and view.effective(ptr, "bool") is True


@RULE.check
def check(view):
    bsec = view.bf16_section
    fp16m_ptr = "/fp16/fp16_master_weights_and_grads"
    bf16m_ptr, bf16s_ptr = f"{bsec}/bf16_master_weights_and_grads", f"{bsec}/bf16_optimizer_states"
    fp16m, bf16m, bf16s = _flag(view, fp16m_ptr), _flag(view, bf16m_ptr), _flag(view, bf16s_ptr)
    stage_two_only = not view.since(">=0.18.3")
    if stage_two_only:  # no code before 0.18.3 reads the bf16 flags (0.18.2 config.py; parse differential)
        bf16m = bf16s = False
    if fp16m and not view.is_strict("/fp16") and not view.value("/fp16/enabled"):
        fp16m = False  # a plain-dict fp16 block is read only when fp16 is enabled (0.16.9 config.py:183-187)
    if not (fp16m or bf16m or bf16s):
        return
    stage = view.zero_stage
    if stage_two_only and stage is not None and stage != 2:
        yield view.finding(fp16m_ptr, f"{view.path(fp16m_ptr)} needs ZeRO stage 2 before DeepSpeed 0.18.3, but the "
                                      f"stage is {stage}: DeepSpeed rejects the config at parse (\"Fp16_master_"
                                      "weights_and_grads is only supported with ZeRO Stage 2 for now.\")",
                           help="set zero_optimization.stage to 2, or delete the flag", fails_at="parse")
        return
    if stage == 0:
        for on, ptr, said in ((fp16m, fp16m_ptr, "Fp16_master_weights_and_grads"),
                              (bf16m, bf16m_ptr, "Bf16_master_weights_and_grads"),
                              (bf16s, bf16s_ptr, "bf16_optimizer_states")):
            if on:
                yield view.finding(ptr, f"{view.path(ptr)} needs ZeRO, but ZeRO is off (stage 0): DeepSpeed rejects "
                                        f"the config at parse (\"{said} is only supported with ZeRO Stage 1, 2, or "
                                        "3.\")", help="set zero_optimization.stage to 1, 2 or 3, or delete the flag",
                                        fails_at="parse")
        return
    if bf16s and not bf16m:
        yield view.finding(bf16s_ptr, f"{view.path(bf16s_ptr)} needs {view.path(bf16m_ptr)}: DeepSpeed rejects the "
                                      "config at parse (\"bf16_optimizer_states requires bf16_master_weights_and_grads "
                                      "to be enabled.\")", help=f"set {view.path(bf16m_ptr)} to true, or delete it",
                                      fails_at="parse")
        return
    if stage is None:
        return
    if fp16m and bf16m:
        yield view.finding(bf16m_ptr, "fp16_master_weights_and_grads and bf16_master_weights_and_grads are both on: "
                                      "deepspeed.initialize fails (\"... are mutually exclusive.\")",
                           related=[(fp16m_ptr, "fp16 master weights")], help="keep one of them", fails_at="initialize")
        return
    device = view.offload_device("optimizer")
    if device is None:
        return
    offload = device in ("cpu", "nvme")
    if not (fp16m or (bf16m and not bf16s) or (bf16m and bf16s and offload)):
        return
    flag = fp16m_ptr if fp16m else bf16m_ptr
    cls, t = view.optimizer_class, view.optimizer_type
    what = ("fp16 master weights" if fp16m else "bf16 master weights with fp32 optimizer states" if not bf16s
            else "bf16 optimizer states with offload")
    zero = f"ZeRO-{stage}"
    said = f"\"Master weights feature requires {zero} Offload with DeepSpeedCPUAdam\""
    if not offload:
        extra = " (or keep the optimizer states in bf16 too: bf16_optimizer_states)" if bf16m else ""
        yield view.finding(flag, f"{what} need optimizer offload to the CPU with DeepSpeedCPUAdam, but "
                                 f"offload_optimizer is {device}: deepspeed.initialize fails with {said}",
                           help="set zero_optimization.offload_optimizer.device to \"cpu\" with optimizer Adam/AdamW"
                                + extra, fails_at="initialize")
    elif cls is not None and cls != "DeepSpeedCPUAdam":
        yield view.finding(flag, f"{what} need the optimizer to be DeepSpeedCPUAdam, but \"{t}\" builds {cls} here: "
                                 f"deepspeed.initialize fails with {said}",
                           related=[("/optimizer/type", "the optimizer")],
                           help="use optimizer Adam or AdamW (without torch_adam)", fails_at="initialize")
