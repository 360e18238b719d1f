"""`zerolint verify --training-args FILE`: the TrainingArguments a verify run fills "auto" from and compares with,
read from an untrusted JSON or YAML file (a dump of `args.to_dict()`, or a hand-written subset).

Pure Python (no transformers import). Only the fields below are honoured; they decide the DeepSpeed fill and HF's
mismatch check (transformers/integrations/deepspeed.py `trainer_config_process` / `trainer_config_finalize`). Every
other field (output_dir, logging_dir, hub_*, report_to, resume_from_checkpoint, fsdp_config, ...) names a path, the
network or a feature a verify run does not use: it is dropped and listed in the report, never passed to HF. The
real-HF child (hf_child.py) forces output_dir into the run's temp dir, report_to "none", no saving, no hub.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

from ..base.fsio import Limits, UnreadableFile, read_bytes

MAX_BYTES = 1024 * 1024  # a TrainingArguments dump is a few KiB

_INT, _NUM, _BOOL = "an integer", "a number", "true or false"
# field -> (kind, lowest allowed value or None)
HONOURED: dict[str, tuple[str, float | None]] = {
    "per_device_train_batch_size": (_INT, 1),
    "gradient_accumulation_steps": (_INT, 1),
    "max_steps": (_INT, -1),
    "learning_rate": (_NUM, 0),
    "weight_decay": (_NUM, 0),
    "adam_beta1": (_NUM, 0),
    "adam_beta2": (_NUM, 0),
    "adam_epsilon": (_NUM, 0),
    "max_grad_norm": (_NUM, 0),
    "warmup_steps": (_NUM, 0),  # transformers 5: a value below 1 is a ratio of the training steps
    "fp16": (_BOOL, None),
    "bf16": (_BOOL, None),
    "fp16_full_eval": (_BOOL, None),
    "bf16_full_eval": (_BOOL, None),
    "save_on_each_node": (_BOOL, None),  # trainer_config_process writes checkpoint.use_node_local_storage
}
# Strings HF maps to its own classes (transformers/trainer_utils.py SchedulerType, training_args.py OptimizerNames);
# only those that need nothing beyond torch, so a config cannot make the run import another package.
CHOICES: dict[str, tuple[str, ...]] = {
    "lr_scheduler_type": ("linear", "cosine", "cosine_with_restarts", "polynomial", "constant",
                          "constant_with_warmup", "inverse_sqrt", "cosine_with_min_lr"),
    "optim": ("adamw_torch", "adamw_torch_fused", "adafactor", "sgd", "adagrad", "rmsprop"),
}


class TrainingArgsError(ValueError):
    """A --training-args file that cannot be used: a usage error (exit 2)."""


@dataclass
class TrainingArgs:
    """The honoured TrainingArguments fields as the file gives them, and what was dropped (field, why)."""

    path: str
    values: dict[str, Any] = field(default_factory=dict)
    dropped: list[tuple[str, str]] = field(default_factory=list)

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def precision(self, default: str) -> str:
        """bf16 | fp16 | fp32: the file's fp16/bf16 flags when it sets either, else `default` (--precision)."""
        if not any(k in self.values for k in ("fp16", "bf16", "fp16_full_eval", "bf16_full_eval")):
            return default
        if self.get("bf16") or self.get("bf16_full_eval"):
            return "bf16"
        return "fp16" if self.get("fp16") or self.get("fp16_full_eval") else "fp32"

    def training_steps(self, steps: int) -> int:
        """HF's num_training_steps for the fill: max_steps when the file sets it, else the steps verify runs (its
        data set is synthetic, so an epoch count would mean nothing)."""
        m = self.get("max_steps", -1)
        return m if m > 0 else steps

    def warmup_steps(self, training_steps: int) -> int:
        """TrainingArguments.get_warmup_steps (transformers/training_args.py:2154): a fraction is a ratio."""
        w = self.get("warmup_steps", 0)
        return int(w) if w >= 1 else math.ceil(training_steps * w)

    def to_json(self) -> dict:
        return {"path": self.path, "values": self.values, "dropped": [list(d) for d in self.dropped]}


def _parse(path: str, raw: bytes) -> Any:
    text = raw.decode("utf-8", errors="replace")
    if not path.lower().endswith((".yaml", ".yml")):
        try:
            return json.loads(text)
        except ValueError as e:
            raise TrainingArgsError(f"{path}: not JSON ({e}); a .yaml/.yml file is read as YAML") from None
    import yaml

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):  # no anchors/aliases: they can expand to gigabytes
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise TrainingArgsError(f"{path}: YAML anchors and aliases are not accepted; write the values out")
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise TrainingArgsError(f"{path}: not YAML ({str(e).splitlines()[0]})") from None


def _checked(path: str, name: str, value: Any) -> Any:
    if name in CHOICES:
        if value not in CHOICES[name]:
            raise TrainingArgsError(f"{path}: {name} {value!r} is not one verify can run (one of "
                                    f"{', '.join(CHOICES[name])})")
        return value
    kind, low = HONOURED[name]
    ok = {_INT: isinstance(value, int) and not isinstance(value, bool),
          _NUM: isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value),
          _BOOL: isinstance(value, bool)}[kind]
    if not ok:
        raise TrainingArgsError(f"{path}: {name} must be {kind}, not {value!r}")
    if low is not None and value < low:
        raise TrainingArgsError(f"{path}: {name} must be at least {low:g}, not {value!r}")
    return value


def read_training_args(path: str) -> TrainingArgs:
    """The file's honoured fields (checked), and the others as dropped; TrainingArgsError when it cannot be used."""
    try:
        raw = read_bytes(path, Limits(max_bytes=MAX_BYTES))
    except UnreadableFile as e:
        raise TrainingArgsError(str(e)) from None
    if len(raw) > MAX_BYTES:
        raise TrainingArgsError(f"{path}: larger than {MAX_BYTES // 1024} KiB; not a TrainingArguments dump")
    data = _parse(path, raw)
    if not isinstance(data, dict):
        raise TrainingArgsError(f"{path}: a TrainingArguments file must hold an object of fields, not "
                                f"{type(data).__name__}")
    out = TrainingArgs(path=os.fspath(path))
    for name, value in data.items():
        name = str(name)
        if name in HONOURED or name in CHOICES:
            if value is not None:  # None: HF's default, as TrainingArguments(name=None) would not mean
                out.values[name] = _checked(path, name, value)
        elif name == "warmup_ratio":
            out.dropped.append((name, "not a TrainingArguments field in transformers 5 (a warmup_steps below 1 is "
                                      "the ratio)"))
        else:
            out.dropped.append((name, "not used by a verify run (it names a path, the network, or a feature the "
                                      "run does not exercise)"))
    if out.get("fp16") and out.get("bf16"):
        raise TrainingArgsError(f"{path}: fp16 and bf16 are both true (TrainingArguments rejects that)")
    return out
