"""DeepSpeed (and torch) facts as plain data, for the view and the rules: the one home of every table. No torch or
deepspeed import.

Every table cites where it comes from. Unless a comment says otherwise the source is the DeepSpeed 0.19.8 sdist
(`deepspeed/...` paths) and, for torch classes, torch 2.13 (the signatures of `__init__`, read once and pasted
here). Older DeepSpeed facts were read from the 0.16.9, 0.17.6, 0.18.9, 0.19.6 and 0.19.7 sdists.

By area: `optimizers` (optimizer and scheduler names and arguments), `dtypes` (DtypeEnum, sizes), `placeholders`
(template placeholders), `sections` (section pointers, stage-3-only keys, defaults that moved, the batch keys),
`values` (what DeepSpeed does with wrong values and with "auto" in lax sections). Add with small, cited edits to
the module of the area; everything is importable from `zerolint.model.dsfacts`.
"""

from __future__ import annotations

from .dtypes import DTYPE_ALIASES, DTYPE_BYTES, DTYPE_NAMES, canonical_dtype, elements, human_bytes
from .optimizers import (
    DEEPSPEED_OPTIMIZER_SPELLING,
    DEEPSPEED_OPTIMIZERS,
    DEEPSPEED_SCHEDULERS,
    FIXED_OPTIMIZER_CLASSES,
    MASTER_WEIGHTS_CLASSES,
    MUON_KEYS,
    NO_AMSGRAD,
    ONEBIT_PARAMS,
    OPTIMIZER_KWARGS,
    REMOVED_OPTIMIZERS,
    TORCH_OPTIM_NOT_BUILDABLE,
    TORCH_OPTIMIZER_KWARGS,
    TORCH_SCHEDULER_ALWAYS_OK,
    TORCH_SCHEDULERS,
    TORCH_SCHEDULERS_NOT_FROM_JSON,
    ZERO_SUPPORTED_CLASSES,
)
from .placeholders import placeholder_text
from .sections import (
    BATCH_KEYS,
    DEFAULT_DRIFT,
    GENERIC_KEYS,
    OFFLOAD_DEVICES,
    SEQUENCE_PARALLEL,
    STAGE3_ONLY,
    ZERO,
)
from .values import (
    AUTO_CRASHES,
    FLOAT_INTOLERANT_INTS,
    LAX_CHECKED,
    LAX_LENIENT,
    LAX_PARSE_CHECKED,
    PYDANTIC_BOOL,
    SECTION_NON_OBJECT_OK,
)

__all__ = [
    "AUTO_CRASHES", "BATCH_KEYS", "DEEPSPEED_OPTIMIZERS", "DEEPSPEED_OPTIMIZER_SPELLING", "DEEPSPEED_SCHEDULERS",
    "DEFAULT_DRIFT", "DTYPE_ALIASES", "DTYPE_BYTES", "DTYPE_NAMES", "FIXED_OPTIMIZER_CLASSES",
    "FLOAT_INTOLERANT_INTS", "GENERIC_KEYS", "LAX_CHECKED", "LAX_LENIENT", "LAX_PARSE_CHECKED",
    "MASTER_WEIGHTS_CLASSES", "MUON_KEYS", "NO_AMSGRAD", "OFFLOAD_DEVICES", "ONEBIT_PARAMS", "OPTIMIZER_KWARGS",
    "PYDANTIC_BOOL", "REMOVED_OPTIMIZERS", "SECTION_NON_OBJECT_OK", "SEQUENCE_PARALLEL", "STAGE3_ONLY",
    "TORCH_OPTIMIZER_KWARGS", "TORCH_OPTIM_NOT_BUILDABLE", "TORCH_SCHEDULERS", "TORCH_SCHEDULERS_NOT_FROM_JSON",
    "TORCH_SCHEDULER_ALWAYS_OK", "ZERO", "ZERO_SUPPORTED_CLASSES", "canonical_dtype", "elements", "human_bytes",
    "placeholder_text",
]


def __getattr__(name: str):  # PLACEHOLDER_ANY / PLACEHOLDER_BARE: compiled on first use, in placeholders
    if name in ("PLACEHOLDER_ANY", "PLACEHOLDER_BARE"):
        from . import placeholders

        return getattr(placeholders, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
