"""What every part of the view shares: the settings it is built from, the MISSING marker, the default version."""

from __future__ import annotations

from functools import lru_cache

from ...base.record import Record
from ..versions import DEFAULT_DEEPSPEED_VERSION, installed_deepspeed

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

# "The value is invalid" (structural rules report it), as opposed to None, "decided at run time".
MISSING: Any = object()


class Settings(Record):
    """What the user asked for; the view resolves it against the document.

    `target`: deepspeed | hf | accelerate | auto; `deepspeed_version` None: the installed deepspeed, else
    DEFAULT_DEEPSPEED_VERSION. What the HF Trainer / Accelerate bring besides the config (zerolint/integrations/hf.py):
    `training_args`, a TrainingArguments dump (`--training-args`, a dict with defaults filled), and `accelerate`, the
    Accelerate config YAML that names this file; `transformers_version`, None: the installed transformers (package
    metadata), else model/trainer.py's newest; `torch_version`, None: the installed torch (package metadata), else
    unknown (a rule whose verdict depends on it says so). Model size and hardware for the memory rules (ZL801,
    zerolint/estimate/memory.py); None: unknown, those rules stay quiet. `params` is a count or "7B"; `model` a
    Hugging Face config.json path; memory "80GB" or bytes. `packages`: the training machine's distributions where
    known (name -> version, None for not installed); a name it does not hold is looked up in this environment's
    package metadata (never imported). `client_optimizer`: (class name as the code writes it, "file:line") of the
    optimizer the training code passes to deepspeed.initialize, where the repository was read (project/uses.py).
    `prepared`: what a loop of one's own under Accelerate hands accelerator.prepare, where read:
    {"optimizer" / "scheduler": (class as the code writes it, "file:line")}. `engine_calls`: calls of the DeepSpeed
    engine that the training code makes, where read: {"no_sync": ("model_engine.no_sync()", "file:line")}."""

    _fields = ("target", "deepspeed_version", "world_size", "training_args", "accelerate", "transformers_version",
               "torch_version", "params", "model", "gpu_memory", "host_memory", "gpus_per_node", "packages",
               "client_optimizer", "prepared", "engine_calls")
    target: str
    deepspeed_version: str | None
    world_size: int | None
    training_args: dict | None
    accelerate: Any
    transformers_version: str | None
    torch_version: str | None
    params: int | str | None
    model: str | None
    gpu_memory: int | str | None
    host_memory: int | str | None
    gpus_per_node: int | None
    packages: dict[str, str | None] | None
    client_optimizer: tuple[str, str] | None
    prepared: dict[str, tuple[str, str]] | None
    engine_calls: dict[str, tuple[str, str]] | None

    def __init__(self, target: str = "auto", deepspeed_version: str | None = None, world_size: int | None = None,
                 training_args: dict | None = None, accelerate: Any = None,
                 transformers_version: str | None = None, torch_version: str | None = None,
                 params: int | str | None = None,
                 model: str | None = None, gpu_memory: int | str | None = None, host_memory: int | str | None = None,
                 gpus_per_node: int | None = None, packages: dict[str, str | None] | None = None,
                 client_optimizer: tuple[str, str] | None = None,
                 prepared: dict[str, tuple[str, str]] | None = None,
                 engine_calls: dict[str, tuple[str, str]] | None = None) -> None:
        self.target = target
        self.deepspeed_version = deepspeed_version
        self.world_size = world_size
        self.training_args = training_args
        self.accelerate = accelerate
        self.transformers_version = transformers_version
        self.torch_version = torch_version
        self.params = params
        self.model = model
        self.gpu_memory = gpu_memory
        self.host_memory = host_memory
        self.gpus_per_node = gpus_per_node
        self.packages = packages
        self.client_optimizer = client_optimizer
        self.prepared = prepared
        self.engine_calls = engine_calls


@lru_cache(maxsize=1)
def default_deepspeed_version() -> str:
    """The installed deepspeed's version (package metadata, no import), else the newest we know."""
    return installed_deepspeed() or DEFAULT_DEEPSPEED_VERSION
