"""What a consumer really sees in a config: the one place that knows DeepSpeed's semantics.

Rules ask the view (effective ZeRO stage, precision, offload devices, what "auto" means here, which
sections are strict, which defaults apply to this DeepSpeed version); they never re-derive them.

The View is a small core (`core.py`: document, settings, target, version, node/value access, findings) plus one
facet per area, each a module of its own: `keys` (schema, strictness, defaults, unknown keys), `auto` ("auto" per
consumer), `zero` (stage, offload, buffers), `precision`, `optimizer` (and scheduler), `batch` (`derive_batch` and
the batch replay), `values` (effective values, what DeepSpeed does with an invalid one), `memory` (model and
hardware). The tables of DeepSpeed facts they use live in `model/dsfacts/`. A new semantic goes to the facet of
its area (or a new one, added to `View`'s bases below), a new table to dsfacts.

Facts encoded here are from the DeepSpeed 0.19.8 source unless a version gate says otherwise:
- "auto" in a strict (pydantic) section is deleted before validation: the default applies
  (runtime/config_utils.py:54-56). fp16/bf16 became strict in 0.17.1; before that "auto" was truthy
  (v0.17.0 runtime/config.py: `get_fp16_enabled` returned the raw value).
- `bfloat16` is read only when `bf16` is absent or null (runtime/precision_config.py:34-38).
- `zero_optimization` may be a bool (legacy: true means stage 1, zero/config.py:60-75).
- Deprecated `cpu_offload`/`cpu_offload_param` set the offload blocks to cpu (zero/config.py:188-220).
- Offload blocks default to device "none" (zero/offload_config.py:24, 58).
"""

from __future__ import annotations

from ..dsfacts import BATCH_KEYS, DEFAULT_DRIFT, SEQUENCE_PARALLEL, STAGE3_ONLY, ZERO
from .auto import AutoFacet, AutoOutcome, json_text
from .base import MISSING, Settings, default_deepspeed_version
from .batch import Batch, BatchFacet, derive_batch
from .core import ViewCore
from .keys import KeysFacet
from .memory import MemoryFacet
from .optimizer import OptimizerFacet
from .precision import PrecisionFacet
from .values import ValueOutcome, ValuesFacet, fails_at_of, placeholder_of
from .zero import ZeroFacet, coerce_stage

__all__ = [
    "BATCH_KEYS", "DEFAULT_DRIFT", "MISSING", "SEQUENCE_PARALLEL", "STAGE3_ONLY", "ZERO", "AutoOutcome", "Batch",
    "Settings", "ValueOutcome", "View", "coerce_stage", "default_deepspeed_version", "derive_batch", "fails_at_of",
    "json_text", "placeholder_of",
]


class View(KeysFacet, AutoFacet, ZeroFacet, PrecisionFacet, OptimizerFacet, BatchFacet, ValuesFacet, MemoryFacet,
           ViewCore):
    """The document as the target consumer reads it: the core plus every facet (the members live in the facet
    modules; `view.zero_stage` is in zero.py, `view.invalid_value` in values.py, ...)."""
