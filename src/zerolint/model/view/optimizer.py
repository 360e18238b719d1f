"""Optimizer and scheduler facet: the names DeepSpeed dispatches on and the class `deepspeed.initialize` builds
(the tables live in dsfacts)."""

from __future__ import annotations

from functools import cached_property

from .. import dsfacts
from ..document import OBJECT, STRING, Node
from .core import ViewCore


class OptimizerFacet(ViewCore):
    """optimizer / scheduler sections as DeepSpeed reads them."""

    def plain_string(self, pointer: str) -> str | None:
        """A string value as DeepSpeed would use it, or None when absent, not a string, "auto" (the "auto" rules
        report it), a template placeholder, or an hjson quoteless value that swallowed a comment (ZL004)."""
        n = self.node(pointer)
        if n is None or n.kind != STRING or not isinstance(n.value, str):
            return None
        if n.value.strip().lower() == "auto" or dsfacts.placeholder_text(n.value, n.quoteless) is not None:
            return None
        if n.quoteless and any(m in n.value for m in ("#", "//", "/*")):
            return None
        return n.value

    @property
    def optimizer_type(self) -> str | None:
        """optimizer.type as written (see plain_string); None when there is no optimizer in the config."""
        if (node := self.node("/optimizer")) is None or node.kind != OBJECT:
            return None
        return self.plain_string("/optimizer/type")

    @property
    def optimizer_name(self) -> str | None:
        """The name DeepSpeed dispatches on: lower-cased when it is one of DeepSpeed's own optimizers (for the
        target version, so OneBitAdam only before 0.19.7), else as written (config.py:519-520)."""
        t = self.optimizer_type
        if t is None:
            return None
        native = set(dsfacts.DEEPSPEED_OPTIMIZERS)
        native |= {k for k, (_, gone) in dsfacts.REMOVED_OPTIMIZERS.items() if not self.since(f">={gone}")}
        return t.lower() if t.lower() in native else t

    def optimizer_param(self, key: str) -> Node | None:
        params = self.node("/optimizer/params")
        return params.get(key) if params is not None and params.kind == OBJECT else None

    @property
    def zenflow(self) -> bool:
        z = self.node(f"{dsfacts.ZERO}/zenflow")
        return z is not None and z.kind != "null"

    @cached_property
    def optimizer_class(self) -> str | None:
        """The class `deepspeed.initialize` builds from the optimizer section (engine.py:2476-2545 and
        get_optimizer_configuration, 2375-2408): "FusedAdam", "DeepSpeedCPUAdam" (Adam/AdamW whenever
        offload_optimizer is cpu/nvme, at any ZeRO stage), "ZenFlowCPUAdam", "torch.optim.AdamW" (torch_adam),
        "torch.optim.Adagrad", "DeepSpeedCPUAdagrad", "FusedLamb", "FusedLion", "DeepSpeedCPULion",
        "mup.MuAdam"/"mup.MuAdamW"/"mup.MuSGD", "MuonWithAuxAdam", "OneBitAdam"... (before 0.19.7), or
        "torch.optim.<Name>". None when there is no optimizer, the name is unknown, or it depends on a value
        filled at run time."""
        name = self.optimizer_name
        if name is None:
            return None
        offload = self.offload_device("optimizer")
        cpu = None if offload is None else offload in ("cpu", "nvme")
        if name in ("adam", "adamw"):
            torch_adam = self.optimizer_param("torch_adam")
            if torch_adam is not None and self.is_auto(torch_adam):
                return None
            if torch_adam is not None and torch_adam.to_python():
                mode = self.optimizer_param("adam_w_mode")
                adamw = name == "adamw" or mode is None or bool(mode.to_python())
                return "torch.optim.AdamW" if adamw else "torch.optim.Adam"
            if cpu is None:
                return None
            return ("ZenFlowCPUAdam" if self.zenflow else "DeepSpeedCPUAdam") if cpu else "FusedAdam"
        if name == "adagrad":
            return None if cpu is None else "DeepSpeedCPUAdagrad" if cpu else "torch.optim.Adagrad"
        if name == "lion":
            return None if cpu is None else "DeepSpeedCPULion" if cpu else "FusedLion"
        if name in dsfacts.FIXED_OPTIMIZER_CLASSES:
            return dsfacts.FIXED_OPTIMIZER_CLASSES[name]
        if name in dsfacts.REMOVED_OPTIMIZERS:
            return dsfacts.REMOVED_OPTIMIZERS[name][0]
        return f"torch.optim.{name}" if name in dsfacts.TORCH_OPTIMIZER_KWARGS else None

    @property
    def scheduler_type(self) -> str | None:
        """scheduler.type as written (see plain_string); None when there is no scheduler in the config."""
        if (node := self.node("/scheduler")) is None or node.kind != OBJECT:
            return None
        return self.plain_string("/scheduler/type")

    @property
    def force_ds_cpu_optimizer(self) -> bool | None:
        """zero_force_ds_cpu_optimizer as the engine tests it: a plain truthiness check of the raw value, default
        true (runtime/config.py:321-322, constants.py:41-42, engine.py:2344); None when filled at run time."""
        n = self.node("/zero_force_ds_cpu_optimizer")
        if n is None:
            return True
        return None if self.is_placeholder(n) else bool(n.to_python())

    @property
    def optimizer_wrapper(self) -> str | None:
        """Why `deepspeed.initialize` wraps the basic optimizer in one of its own classes, which are not
        torch.optim.Optimizer subclasses (runtime/base_optimizer.py:17, 250; engine.py:2294-2325, 2358-2366): "ZeRO
        stage N" (a ZeRO optimizer, or BF16_Optimizer at stage 1 with fp32 accumulation), "fp16" (FP16_Optimizer /
        FP16_UnfusedOptimizer) or "bf16" (FP16_UnfusedOptimizer or BF16_Optimizer); "" when the optimizer is
        used as built (ZeRO off, fp32); None when the stage or precision is decided at run time."""
        stage, precision = self.zero_stage, self.precision
        if stage:
            return f"ZeRO stage {stage}"
        if stage is None or precision is None:
            return None
        return precision if precision in ("fp16", "bf16") else ""

    @property
    def torch_scheduler(self) -> bool:
        """scheduler.type names a torch.optim.lr_scheduler class that a config can build: DeepSpeed looks the name
        up in its own lr_schedules first, then in torch (engine.py:1923-1936)."""
        t = self.scheduler_type
        return (t is not None and t not in dsfacts.DEEPSPEED_SCHEDULERS and t in dsfacts.TORCH_SCHEDULERS)
