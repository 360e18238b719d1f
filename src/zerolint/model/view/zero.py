"""ZeRO facet: the effective stage (legacy bool included), alias-aware fields, offload devices (legacy
cpu_offload included), overlap_comm and the ZeRO-1/2 reduce bucket."""

from __future__ import annotations

from functools import cached_property

from ..document import OBJECT, Node
from ..dsfacts import OFFLOAD_DEVICES, ZERO
from .core import ViewCore


class ZeroFacet(ViewCore):
    """ZeRO stage, offload and buffers as DeepSpeed resolves them."""

    @property
    def zero(self) -> Node | None:
        n = self.node(ZERO)
        return n if n is not None and n.kind == OBJECT else None

    def zero_field(self, name: str) -> Node | None:
        """A zero_optimization field under either of its names (e.g. `stage3_prefetch_bucket_size` or
        `prefetch_bucket_size`); the alias wins when both are given, as in pydantic."""
        z = self.zero
        if z is None:
            return None
        props = (self.schema.section(ZERO) or {}).get("properties", {})
        canonical = props.get(name, {}).get("x-zerolint-alias-of", name)
        aliases = props.get(canonical, {}).get("x-zerolint-aliases", [])
        for key in [*aliases, canonical]:  # pydantic reads the alias first
            if z.get(key) is not None:
                return z.get(key)
        return None

    @cached_property
    def zero_stage(self) -> int | None:
        """The ZeRO stage DeepSpeed will run, or None when it is decided at run time (filled "auto") or the value
        is invalid (a structural rule reports that)."""
        z = self.node(ZERO)
        if z is None:
            return 0
        if z.kind == "boolean":
            return 1 if z.value else 0
        if z.kind != OBJECT:
            return None
        stage = z.get("stage")
        if stage is None:
            return 0
        if self.is_auto(stage):
            return None if self.fills_auto(stage.pointer) else 0
        return coerce_stage(stage)

    def offload_device(self, which: str) -> str | None:
        """'none' | 'cpu' | 'nvme' for which in ('optimizer', 'param'); None when filled at run time or invalid."""
        block = self.node(f"{ZERO}/offload_{which}")
        legacy = self.node(f"{ZERO}/cpu_offload" if which == "optimizer" else f"{ZERO}/cpu_offload_param")
        if (block is None or block.kind == "null") and legacy is not None and legacy.value is True:
            return "cpu"
        if block is None or block.kind == "null":
            return "none"
        if block.kind != OBJECT:
            return None
        dev = block.get("device")
        if dev is None:
            return "none"
        if self.is_auto(dev):
            return None if self.fills_auto(dev.pointer) else "none"
        return dev.value if dev.value in OFFLOAD_DEVICES else None

    def offloads(self, which: str) -> bool:
        return self.offload_device(which) in ("cpu", "nvme")

    @property
    def overlap_comm(self) -> bool | None:
        """zero_optimization.overlap_comm as DeepSpeed resolves it: unset/null/dropped "auto" means True for
        stage 3 and False below (zero/config.py:383-387); None when unknown."""
        n = self.node(f"{ZERO}/overlap_comm")
        if n is None or n.kind == "null" or (self.is_auto(n) and not self.fills_auto(n.pointer)):
            return None if self.zero_stage is None else self.zero_stage == 3
        v = self.effective(f"{ZERO}/overlap_comm", "bool")
        return v if isinstance(v, bool) else None

    @property
    def zero12_contiguous_gradients(self) -> bool | None:
        """Whether the ZeRO-1/2 optimizer copies gradients into its reduce buckets: contiguous_gradients (default
        true, zero/config.py:102), forced on by CPU optimizer offload (stage_1_and_2.py:299-300). Without it no
        bucket buffer is allocated at all (stage_1_and_2.py:3260-3278). None when unknown."""
        if self.offload_device("optimizer") == "cpu":
            return True
        v = self.effective(f"{ZERO}/contiguous_gradients", "bool")
        return v if isinstance(v, bool) else None

    def zero12_reduce_buffer(self) -> tuple[int, str] | None:
        """(elements, dtype) of ONE ZeRO-1/2 gradient reduce bucket (stage_1_and_2.py:3255-3279): reduce_bucket_size
        elements of the grad-accumulation dtype for stage 1 when it differs from the model dtype
        (stage_1_and_2.py:397-404, 1253-1254), else of the model dtype. overlap_comm allocates a second one. None
        when the stage is not 1/2, a value is unknown, or stage 1 + bf16 + fp32 accumulation without CPU
        offload selects the BF16_Optimizer, which has no such buckets (engine.py:2305-2310)."""
        if self.zero_stage not in (1, 2):
            return None
        size = self.effective(f"{ZERO}/reduce_bucket_size", "int")
        model, accum = self.model_dtype, self.grad_accum_dtype
        if not isinstance(size, int) or size <= 0 or model is None or accum is None:
            return None
        if self.zero_stage == 1 and model == "bf16" and accum == "fp32" and self.offload_device("optimizer") != "cpu":
            return None
        dtype = accum if self.zero_stage == 1 and accum != model else model
        return size, dtype


def coerce_stage(node: Node) -> int | None:
    """The stage pydantic would accept: 0-3 as int, integral float, numeric string, or bool (True -> 1)."""
    v = node.value
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)) and (isinstance(v, int) or v.is_integer()) and 0 <= v <= 3:
        return int(v)
    if isinstance(v, str) and v.strip().lstrip("+").isdigit() and 0 <= int(v) <= 3:
        return int(v)
    return None
