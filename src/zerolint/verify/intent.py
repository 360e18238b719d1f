"""Intent checks: what the config apparently asks for vs what the engine DeepSpeed built actually does.

A passing run hides the silent cases (a top-level `offload_optimizer`, `offload_param` below stage 3, `"enabled":
"auto"` read by raw DeepSpeed): DeepSpeed accepts them and does nothing. The child reports facts about the engine
(child.engine_facts: stage, precision, parameter dtype and device, ZeRO-3 partitioning, optimizer classes and where
the optimizer states live); this module compares them with the config. Pure Python.

Apparent intent, on purpose wider than what DeepSpeed reads:
- optimizer offload: `zero_optimization.offload_optimizer.device` cpu/nvme (or legacy `cpu_offload`), or an
  `offload_optimizer` block at the top level.
- parameter offload: `zero_optimization.offload_param.device` cpu/nvme (or `cpu_offload_param`), or a top-level
  `offload_param` block.
- ZeRO stage: `zero_optimization.stage` (or a top-level `stage` when there is no zero_optimization); stage 3 means
  the parameters are partitioned (ZeRO-3 managed, each rank holding ~1/world of them).
- precision: `bf16.enabled` / `fp16.enabled` true, or "auto" where the reader does not fill it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.view import View


@dataclass
class IntentCheck:
    check: str  # optimizer-offload | param-offload | zero-stage | precision
    code: str
    pointer: str
    asked: str
    actual: str
    ok: bool
    message: str
    help: str | None = None

    def to_json(self) -> dict:
        return {"check": self.check, "code": self.code, "pointer": self.pointer, "asked": self.asked,
                "actual": self.actual, "ok": self.ok, "message": self.message, "help": self.help}


def _device_of(view: View, pointer: str) -> str | None:
    n = view.node(pointer)
    if n is None or n.kind != "object":
        return None
    dev = n.get("device")
    return dev.value if dev is not None and dev.value in ("cpu", "nvme") else None


def _opt_desc(facts: dict) -> str:
    outer, inner = facts.get("optimizer_outer"), facts.get("optimizer_inner")
    opt = f"{outer} / {inner}" if inner and inner != outer else str(outer)
    where = ", ".join(facts.get("optimizer_state_devices") or []) or "no states"
    return f"optimizer {opt}, states on {where}"


def _param_desc(facts: dict) -> str:
    devs = ", ".join(facts.get("param_devices") or []) or "?"
    managed = "ZeRO-3 partitioned" if facts.get("zero3_managed") else "not partitioned"
    return f"parameters on {devs}, {managed}, {facts.get('param_dtype')}"


def check_intent(view: View, facts: dict, world_size: int) -> list[IntentCheck]:
    out: list[IntentCheck] = []
    stage = facts.get("zero_stage")

    # -- optimizer offload --------------------------------------------------------------------------------------
    nested = view.offload_device("optimizer")
    top = _device_of(view, "/offload_optimizer")
    if nested in ("cpu", "nvme") or top:
        ptr = "/zero_optimization/offload_optimizer/device" if nested in ("cpu", "nvme") else "/offload_optimizer"
        if view.node(ptr) is None:
            ptr = "/zero_optimization/cpu_offload"
        asked = nested if nested in ("cpu", "nvme") else top
        assert asked is not None  # nested or top names a device: the condition above
        ok = bool(facts.get("optimizer_offload"))
        actual = ("offloaded: " if ok else "not offloaded: ") + _opt_desc(facts)
        if ok:
            msg = f"optimizer offload to {asked} is in effect ({_opt_desc(facts)})"
            help_ = None
        elif ptr == "/offload_optimizer":
            msg = (f"`offload_optimizer` is at the top level, where DeepSpeed never reads it: nothing was offloaded "
                   f"({_opt_desc(facts)})")
            help_ = "move the block inside `zero_optimization`"
        else:
            msg = f"the config asks for optimizer offload to {asked} but DeepSpeed did not offload ({_opt_desc(facts)})"
            help_ = "optimizer offload needs ZeRO stage 1-3 and a CPU optimizer (DeepSpeedCPUAdam)"
        out.append(IntentCheck("optimizer-offload", "ZL994", ptr, asked, actual, ok, msg, help_))

    # -- parameter offload ----------------------------------------------------------------------------------------
    nested = view.offload_device("param")
    top = _device_of(view, "/offload_param")
    if nested in ("cpu", "nvme") or top:
        ptr = "/zero_optimization/offload_param/device" if nested in ("cpu", "nvme") else "/offload_param"
        if view.node(ptr) is None:
            ptr = "/zero_optimization/cpu_offload_param"
        asked = nested if nested in ("cpu", "nvme") else top
        assert asked is not None  # nested or top names a device: the condition above
        got = facts.get("param_offload_device")
        ok = got is not None
        actual = _param_desc(facts)
        if ok:
            msg, help_ = f"parameter offload to {got} is in effect ({actual})", None
        elif ptr == "/offload_param":
            msg = f"`offload_param` is at the top level, where DeepSpeed never reads it: {actual}"
            help_ = "move the block inside `zero_optimization` (parameter offload needs ZeRO stage 3)"
        elif stage is not None and stage < 3:
            msg = (f"offload_param asks for parameters on {asked}, but ZeRO stage {stage} never reads it: {actual}")
            help_ = "use ZeRO stage 3 for parameter offload, or remove offload_param"
        else:
            msg = f"offload_param asks for parameters on {asked}, but DeepSpeed kept them elsewhere: {actual}"
            help_ = None
        out.append(IntentCheck("param-offload", "ZL995", ptr, asked, actual, ok, msg, help_))

    # -- ZeRO stage / partitioning -------------------------------------------------------------------------------------
    asked_stage: int | str | None
    asked_stage, ptr = None, "/zero_optimization/stage"
    z = view.node("/zero_optimization")
    if z is not None and z.kind == "object" and (s := z.get("stage")) is not None:
        if view.is_auto(s) and not view.fills_auto(s.pointer):
            asked_stage = "auto"
        else:
            asked_stage = view.zero_stage
    elif z is None and view.node("/stage") is not None:
        ptr = "/stage"
        v = view.value("/stage")
        asked_stage = v if isinstance(v, int) and 0 <= v <= 3 else None
    if asked_stage is not None and stage is not None:
        share = facts.get("partition_share", 1.0)
        partitioned = bool(facts.get("zero3_managed")) and (world_size == 1 or share <= 1 / world_size + 0.05)
        if asked_stage == "auto":
            ok, msg = False, (f'zero_optimization.stage is "auto", which raw DeepSpeed drops: it ran ZeRO stage '
                              f"{stage}")
            help_ = 'set the stage (0-3); "auto" is filled only by Accelerate'
        elif asked_stage != stage:
            where = "at the top level, where DeepSpeed never reads it" if ptr == "/stage" else ""
            ok, msg, help_ = False, \
                f"the config asks for ZeRO stage {asked_stage} {where}; DeepSpeed ran stage {stage}", \
                "put `stage` inside `zero_optimization`" if ptr == "/stage" else None
        elif stage == 3 and not partitioned:
            ok, msg, help_ = False, (f"ZeRO stage 3 but the parameters are not partitioned "
                                     f"({_param_desc(facts)}, local share {share:.0%})"), None
        else:
            extra = f", each rank holds {share:.0%} of them" if stage == 3 else ""
            ok, msg, help_ = True, f"ZeRO stage {stage} is in effect ({_param_desc(facts)}{extra})", None
        out.append(IntentCheck("zero-stage", "ZL996", ptr, str(asked_stage), f"stage {stage}", ok, msg, help_))

    # -- precision ----------------------------------------------------------------------------------------------------
    for name, section, dtype in (("bf16", view.bf16_section, "bfloat16"), ("fp16", "/fp16", "float16")):
        en = view.node(f"{section}/enabled")
        if en is None:
            continue
        raw_auto = view.is_auto(en) and not view.fills_auto(en.pointer)
        wanted = (en.kind == "boolean" and en.value) or raw_auto or (view.is_auto(en)
                                                                     and facts.get("precision") == name)
        if not wanted:
            continue
        got, pdt = facts.get("precision"), facts.get("param_dtype")
        ok = got == name and pdt == dtype
        if ok:
            msg, help_ = f"{name} is in effect (parameters {pdt})", None
        elif raw_auto:
            msg = (f'{name}.enabled is "auto": raw DeepSpeed drops "auto" in this section, so the run used {got} '
                   f"(parameters {pdt})")
            help_ = 'set "enabled": true; "auto" is filled only by the HF Trainer / Accelerate'
        else:
            msg, help_ = f"the config enables {name} but the run used {got} (parameters {pdt})", None
        out.append(IntentCheck("precision", "ZL997", f"{section}/enabled", name, f"{got} ({pdt})", ok, msg, help_))
    return out
