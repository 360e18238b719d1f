"""Precision facet: fp16 / bf16 (and the legacy `bfloat16`) as DeepSpeed reads them per version, the model
dtype and the gradient-accumulation dtype."""

from __future__ import annotations

from ..document import NUMBER, OBJECT, STRING
from ..dsfacts import DTYPE_NAMES
from ..schema import _FALSE as PYDANTIC_FALSE
from ..schema import _TRUE as PYDANTIC_TRUE
from ..schema import _truth
from .core import ViewCore


class PrecisionFacet(ViewCore):
    """Which precision DeepSpeed trains in."""

    def _enabled(self, section: str) -> bool | None:
        node = self.node(section)
        if node is None or node.kind != OBJECT:
            return False
        en = node.get("enabled")
        if en is None:
            return False
        if self.is_auto(en):
            if self.fills_auto(en.pointer):
                return None
            # Strict since 0.17.1: "auto" is dropped, so the section is off; before that the raw string was
            # truthy and switched it on.
            return not self.since(">=0.17.1")
        if en.kind == "boolean":
            return en.value
        if not self.since(">=0.17.1"):
            return _truth(en)  # a plain dict before 0.17.1: `if enabled:` of whatever is there ([false] is on)
        if en.kind == NUMBER:
            return bool(en.value)
        if en.kind == STRING:
            if not self.since(">=0.17.1"):
                return bool(en.value)  # a plain dict before 0.17.1: any non-empty string is truthy
            word = en.value.strip().lower()  # pydantic's lax bool parsing (schema.py _TRUE/_FALSE)
            return True if word in PYDANTIC_TRUE else False if word in PYDANTIC_FALSE else None
        return None

    @property
    def bf16_section(self) -> str:
        """Which key DeepSpeed reads bf16 settings from: `bf16`, or the legacy `bfloat16` when `bf16` is absent."""
        b = self.node("/bf16")
        if (b is None or b.kind == "null") and self.has("/bfloat16"):
            return "/bfloat16"
        return "/bf16"

    @property
    def fp16_enabled(self) -> bool | None:
        return self._enabled("/fp16")

    @property
    def bf16_enabled(self) -> bool | None:
        return self._enabled(self.bf16_section)

    @property
    def precision(self) -> str | None:
        """'fp16' | 'bf16' | 'fp32', or None when decided at run time."""
        fp16, bf16 = self.fp16_enabled, self.bf16_enabled
        if fp16 is None or bf16 is None:
            return None
        return "fp16" if fp16 else "bf16" if bf16 else "fp32"

    @property
    def model_dtype(self) -> str | None:
        """'fp16' | 'bf16' | 'fp32': the dtype DeepSpeed trains the model in (engine.py:1799-1804)."""
        return self.precision

    @property
    def grad_accum_dtype(self) -> str | None:
        """data_types.grad_accum_dtype as a canonical name; the model dtype when unset (engine.py:1806-1809);
        None when unknown or not a dtype DeepSpeed knows."""
        n = self.node("/data_types/grad_accum_dtype")
        if n is None or n.kind == "null":
            return self.model_dtype
        return DTYPE_NAMES.get(n.value) if n.kind == STRING else None
