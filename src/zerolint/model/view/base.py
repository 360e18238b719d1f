"""What every part of the view shares: the settings it is built from, the MISSING marker, the default version."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..versions import DEFAULT_DEEPSPEED_VERSION, installed_deepspeed

# "The value is invalid" (structural rules report it), as opposed to None, "decided at run time".
MISSING: Any = object()


@dataclass
class Settings:
    """What the user asked for; the view resolves it against the document."""

    target: str = "auto"  # deepspeed | hf | accelerate | auto
    deepspeed_version: str | None = None  # None: installed deepspeed, else DEFAULT_DEEPSPEED_VERSION
    world_size: int | None = None
    # What the HF Trainer / Accelerate bring besides the config (zerolint/integrations/hf.py): a TrainingArguments dump
    # (`--training-args`, a dict with defaults filled) and the Accelerate config YAML that names this file.
    training_args: dict | None = None
    accelerate: Any = None
    transformers_version: str | None = None  # None: installed transformers (metadata), else model/trainer.py's newest
    # Model size and hardware for the memory rules (ZL801, zerolint/estimate/memory.py); None: unknown, those rules stay
    # quiet. `params` is a count or "7B"; `model` a Hugging Face config.json path; memory "80GB" or bytes.
    params: int | str | None = None
    model: str | None = None
    gpu_memory: int | str | None = None
    host_memory: int | str | None = None
    gpus_per_node: int | None = None


@lru_cache(maxsize=1)
def default_deepspeed_version() -> str:
    """The installed deepspeed's version (package metadata, no import), else the newest we know."""
    return installed_deepspeed() or DEFAULT_DEEPSPEED_VERSION
