"""Memory facet: the model and the hardware the memory rules (ZL8xx) reason about, from the settings."""

from __future__ import annotations

from functools import cached_property

from .core import ViewCore


class MemoryFacet(ViewCore):
    """Model size and memory budgets (None: unknown, the memory rules stay quiet)."""

    @cached_property
    def model_spec(self):
        """The model (a `zerolint.modelspec.ModelSpec`) from settings.model / settings.params, or None."""
        if not self.settings.model and self.settings.params is None:
            return None  # (what resolve() says too, without importing modelspec on every run)
        from ...estimate.modelspec import resolve

        return resolve(params=self.settings.params, model=self.settings.model)

    @cached_property
    def gpu_memory(self) -> int | None:
        """Bytes per GPU the job may use (settings.gpu_memory), or None."""
        if self.settings.gpu_memory is None:
            return None
        from ...estimate.memory import parse_bytes

        return parse_bytes(self.settings.gpu_memory)

    @cached_property
    def host_memory(self) -> int | None:
        """Bytes of host memory per node (settings.host_memory), or None."""
        if self.settings.host_memory is None:
            return None
        from ...estimate.memory import parse_bytes

        return parse_bytes(self.settings.host_memory)
