"""The HF Trainer and Accelerate as consumers of a DeepSpeed config: what they compare, what they reject.

- `TrainingArguments` (a dump from `args.to_json_string()`, a dict, or the object itself): the Trainer fills
  "auto" values from it and compares every other value at the same keys, raising at `trainer.train()`
  "Please correct the following DeepSpeed config values that mismatch TrainingArguments values" with one
  `- ds KEY=VALUE vs hf ARG=VALUE` line per mismatch (transformers/integrations/deepspeed.py,
  `HfTrainerDeepSpeedConfig.fill_match`, `trainer_config_process`, `trainer_config_finalize`). `COMPARED` below
  is that list; ZL523 reports each mismatch at its key.
- An Accelerate config YAML's content (`AccelerateConfig`, Settings.accelerate): the rules read its settings (ZL521
  mixed precision, world size from `num_processes`). Reading the YAML itself is integrations/hf.py's job.

These are facts the view and the rules consult, so they live in the model layer (rules never import integrations).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from functools import lru_cache

from ..base.errors import ZerolintError
from ..base.record import Frozen, Record
from .versions import Version, installed_version, matches

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

# TrainingArguments defaults (transformers/training_args.py) for the fields the Trainer compares; a partial dict
# means "these arguments, the rest default", as TrainingArguments(...) would.
TRAINING_ARGS_DEFAULTS: dict[str, Any] = {
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "learning_rate": 5e-5,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adam_epsilon": 1e-8,
    "weight_decay": 0.0,
    "max_grad_norm": 1.0,
    "fp16": False,
    "bf16": False,
    "fp16_full_eval": False,
    "bf16_full_eval": False,
    "fp16_backend": "auto",
    "auto_find_batch_size": False,
    "max_steps": -1,
    "warmup_steps": 0,
    "warmup_ratio": 0.0,
}

MISSING: Any = object()

# -- transformers versions ---------------------------------------------------------------------------------------------
# What the Trainer does with a DeepSpeed config changes with the transformers version, as DeepSpeed's parsing changes
# with DeepSpeed's: the facts below are read from each release's transformers/integrations/deepspeed.py.
NEWEST_TRANSFORMERS = "5.24.0"
# The warm-up fill is `max(1, args.get_warmup_steps(n))` from 5.18.0 (5.24.0 integrations/deepspeed.py:250-256,
# "deepspeed>=0.19.6 rejects a non-positive warmup_num_steps"); 5.0.0-5.17.0 fill and compare
# `get_warmup_steps(n)` as is (5.17.0 integrations/deepspeed.py:247-251), so no warm-up fills 0.
WARMUP_CLAMP = ">=5.18.0"
# transformers 4.x fills amp.enabled / amp.opt_level for the apex backend (4.57.6 integrations/deepspeed.py:194-195);
# 5.0.0 dropped apex and fills neither.
AMP_FILL = "<5.0.0"
AMP_FILLS = frozenset({"/amp/enabled", "/amp/opt_level"})


@lru_cache(maxsize=1)
def installed_transformers() -> str | None:
    """The installed transformers' version from its package metadata (never imported)."""
    return installed_version("transformers")


def transformers_version(settings: Any) -> Version:
    """The transformers version the HF findings assume: Settings.transformers_version, else the installed one, else
    the newest known."""
    asked = getattr(settings, "transformers_version", None)
    return Version(asked or installed_transformers() or NEWEST_TRANSFORMERS)


def clamps_warmup(settings: Any) -> bool:
    return matches(transformers_version(settings), WARMUP_CLAMP)


def warmup_fill(args: dict, settings: Any) -> Any:
    """What the Trainer writes into (and compares with) scheduler.params.warmup_num_steps: its warm-up steps,
    raised to 1 by transformers >= 5.18; MISSING when the step count is not known before training."""
    steps = _warmup(args, None)
    if steps is MISSING or not clamps_warmup(settings):
        return steps
    return max(1, steps)


# -- who fills "auto" under the Trainer --------------------------------------------------------------------------------
# The HF Trainer hands its config to Accelerate, which fills more before DeepSpeed sees it:
# - DeepSpeedPlugin.__post_init__ (accelerate 1.15.0 utils/dataclasses.py:1280-1293): zero_optimization.stage from the
#   plugin's zero_stage (default 2, ACCELERATE_DEEPSPEED_ZERO_STAGE), offload devices and NVMe paths ("none"), the
#   16-bit save flag (false); it inserts gradient_accumulation_steps: 1 when the key is missing (:1274-1275) and
#   overwrites steps_per_print with inf (:1326);
# - Accelerator._prepare_deepspeed (accelerate/accelerator.py:2223-2355) fills gradient_clipping (1.0), the micro and
#   train batch, and the three hidden-size keys at every ZeRO stage (the Trainer fills the two stage3_ ones only at
#   ZeRO-3), then `deepspeed_config_process` walks every nested dict: any other "auto" raises (below).
ACCELERATE_SHARE = frozenset({
    "/steps_per_print",
    "/zero_optimization/stage",
    "/zero_optimization/offload_optimizer/device",
    "/zero_optimization/offload_param/device",
    "/zero_optimization/offload_optimizer/nvme_path",
    "/zero_optimization/offload_param/nvme_path",
    "/zero_optimization/stage3_gather_16bit_weights_on_model_save",
    "/zero_optimization/reduce_bucket_size",
    "/zero_optimization/stage3_prefetch_bucket_size",
    "/zero_optimization/stage3_param_persistence_threshold",
})
# accelerate/utils/dataclasses.py:1357-1373 (DeepSpeedPlugin.fill_match): an "auto" left when _prepare_deepspeed runs.
ACCELERATE_RAISES = ("ValueError: `{key}` not found in kwargs. Please specify `{key}` without `auto` (set to correct "
                     "value) in the DeepSpeed config file or pass it in kwargs.")


def in_a_list(pointer: str, root: Any) -> bool:
    """Whether a pointer runs through a list: deepspeed_config_process walks nested dicts only, so an "auto" inside a
    list is neither filled nor refused by Accelerate; it reaches DeepSpeed."""
    node = root
    for part in pointer.strip("/").split("/")[:-1]:
        if node is None or node.kind != "object":
            return node is not None and node.kind == "array"
        node = node.get(part.replace("~1", "/").replace("~0", "~"))
    return node is not None and node.kind == "array"


class Compared(Frozen):
    """`pointer`: the DeepSpeed key, as a JSON pointer; `hf_key`: how HF names the TrainingArguments side in its
    message; `value`: the TrainingArguments value, or MISSING when not knowable here."""

    _fields = ("pointer", "hf_key", "value", "must_match")
    pointer: str
    hf_key: str
    value: Callable[[dict, int | None], Any]
    must_match: Callable[[dict], bool]

    def __init__(self, pointer: str, hf_key: str, value: Callable[[dict, int | None], Any],
                 must_match: Callable[[dict], bool] = lambda a: True) -> None:
        self._set("pointer", pointer)
        self._set("hf_key", hf_key)
        self._set("value", value)
        self._set("must_match", must_match)


def _warmup(a: dict, world: int | None) -> Any:
    steps, ratio = a["warmup_steps"], a["warmup_ratio"]
    if isinstance(steps, int) and steps > 0:
        return steps
    if isinstance(steps, float) and steps >= 1:
        return int(steps)
    if steps and steps < 1:  # newer transformers: a fractional warmup_steps is a ratio
        ratio = steps
    if not ratio:
        return 0
    return math.ceil(a["max_steps"] * ratio) if a["max_steps"] > 0 else MISSING


COMPARED: tuple[Compared, ...] = (
    Compared("/train_micro_batch_size_per_gpu", "per_device_train_batch_size",
             lambda a, w: a["per_device_train_batch_size"], lambda a: not a["auto_find_batch_size"]),
    Compared("/gradient_accumulation_steps", "gradient_accumulation_steps",
             lambda a, w: a["gradient_accumulation_steps"]),
    Compared("/train_batch_size", "train_batch_size (calculated)",  # DeepSpeed: world x micro batch x accumulation
             lambda a, w: MISSING if w is None
             else w * a["per_device_train_batch_size"] * a["gradient_accumulation_steps"],
             lambda a: not a["auto_find_batch_size"]),
    Compared("/gradient_clipping", "max_grad_norm", lambda a, w: a["max_grad_norm"]),
    Compared("/optimizer/params/lr", "learning_rate", lambda a, w: a["learning_rate"]),
    Compared("/optimizer/params/betas", "adam_beta1+adam_beta2", lambda a, w: [a["adam_beta1"], a["adam_beta2"]]),
    Compared("/optimizer/params/eps", "adam_epsilon", lambda a, w: a["adam_epsilon"]),
    Compared("/optimizer/params/weight_decay", "weight_decay", lambda a, w: a["weight_decay"]),
    Compared("/scheduler/params/warmup_max_lr", "learning_rate", lambda a, w: a["learning_rate"]),
    # trainer_config_finalize: known before training only when max_steps fixes the step count
    Compared("/scheduler/params/total_num_steps", "num_training_steps (calculated)",
             lambda a, w: a["max_steps"] if a["max_steps"] > 0 else MISSING),
    # the value compared is the version's fill (warmup_fill), not the raw warm-up steps
    Compared("/scheduler/params/warmup_num_steps", "warmup_steps", _warmup),
    # Older transformers compared fp16.enabled only for the amp backend; with apex the versions disagree.
    Compared("/fp16/enabled", "fp16|fp16_full_eval",
             lambda a, w: MISSING if "apex" in (a.get("fp16_backend"), a.get("half_precision_backend"))
             else bool(a["fp16"] or a["fp16_full_eval"])),
    Compared("/bf16/enabled", "bf16|bf16_full_eval", lambda a, w: bool(a["bf16"] or a["bf16_full_eval"])),
)


WARMUP_POINTER = "/scheduler/params/warmup_num_steps"

# A TrainingArguments dict read from the repository (project/uses.py) holds only the fields written there, under
# KNOWN ({field: "file:line"}); the rest are defaults that the code or the command line may override, so a
# comparison is made only where every field it needs is known.
KNOWN = "__known__"
NEEDS: dict[str, tuple[str, ...]] = {
    "/train_micro_batch_size_per_gpu": ("per_device_train_batch_size",),
    "/gradient_accumulation_steps": ("gradient_accumulation_steps",),
    "/train_batch_size": ("per_device_train_batch_size", "gradient_accumulation_steps"),
    "/gradient_clipping": ("max_grad_norm",),
    "/optimizer/params/lr": ("learning_rate",),
    "/optimizer/params/betas": ("adam_beta1", "adam_beta2"),
    "/optimizer/params/eps": ("adam_epsilon",),
    "/optimizer/params/weight_decay": ("weight_decay",),
    "/scheduler/params/warmup_max_lr": ("learning_rate",),
    "/scheduler/params/total_num_steps": ("max_steps",),
    WARMUP_POINTER: ("warmup_steps",),
    "/fp16/enabled": ("fp16",),
    "/bf16/enabled": ("bf16",),
}


def known_source(args: dict, pointer: str) -> str | None:
    """Where the fields a comparison at `pointer` needs were read ("train.py:3"), None for a full dump; raises
    KeyError when one of them is not known."""
    known = args.get(KNOWN)
    if known is None:
        return None
    return ", ".join(dict.fromkeys(known[field] for field in NEEDS[pointer]))


class TrainingArgsError(ZerolintError, ValueError):
    """A --training-args file or object that cannot be used."""


def training_args_dict(args: Any) -> dict[str, Any]:
    """A TrainingArguments dump as a dict with defaults filled in: from a path to a JSON file (the output of
    `args.to_json_string()`), a JSON string, a dict, or a TrainingArguments-like object (`to_dict()`; its
    `world_size` property is kept as `world_size`)."""
    world = None
    if isinstance(args, (str, os.PathLike)) and not str(args).lstrip().startswith("{"):
        try:
            with open(args, encoding="utf-8") as f:
                data = json.load(f)
        except OSError as e:
            raise TrainingArgsError(f"{os.fspath(args)}: cannot be read ({e.strerror or e})") from None
        except ValueError as e:
            raise TrainingArgsError(f"{os.fspath(args)}: not a JSON TrainingArguments dump ({e})") from None
    elif isinstance(args, str):
        try:
            data = json.loads(args)
        except ValueError as e:
            raise TrainingArgsError(f"not a JSON TrainingArguments dump ({e})") from None
    elif isinstance(args, dict):
        data = dict(args)
    elif hasattr(args, "to_dict"):
        data = args.to_dict()
        world = getattr(args, "world_size", None)
    else:
        raise TrainingArgsError(
            f"training_args must be a path, a dict or a TrainingArguments, not {type(args).__name__}")
    if not isinstance(data, dict):
        raise TrainingArgsError("a TrainingArguments dump must be a JSON object")
    out = {**TRAINING_ARGS_DEFAULTS, **{k: v for k, v in data.items() if v is not None or k not in
                                        TRAINING_ARGS_DEFAULTS}}
    if world is not None and "world_size" not in out:
        out["world_size"] = world
    for key in ("per_device_train_batch_size", "gradient_accumulation_steps", "max_steps"):
        if isinstance(out[key], bool) or not isinstance(out[key], int):
            raise TrainingArgsError(f"training args: {key} must be an integer, not {out[key]!r}")
    for key in ("learning_rate", "adam_beta1", "adam_beta2", "adam_epsilon", "weight_decay", "max_grad_norm",
                "warmup_ratio"):
        if isinstance(out[key], bool) or not isinstance(out[key], (int, float)):
            raise TrainingArgsError(f"training args: {key} must be a number, not {out[key]!r}")
    return out


def mismatches(view) -> list[tuple[Compared, Any, Any]]:
    """(what, ds value, hf value) for each key where the Trainer would report a mismatch."""
    args = getattr(view.settings, "training_args", None)
    if not args or view.root is None:
        return []
    world = view.world_size or args.get("world_size")
    out = []
    for c in COMPARED:
        parts = c.pointer.strip("/").split("/")
        parent = view.node("/" + "/".join(parts[:-1])) if len(parts) > 1 else view.root
        if parent is None or parent.kind != "object":  # find_config_node: a missing section is skipped
            continue
        node = parent.get(parts[-1])
        if node is None or (node.kind == "string" and node.value == "auto") or not c.must_match(args):
            continue
        try:
            known_source(args, c.pointer)
        except KeyError:
            continue  # not written where the repository was read: the default may not be what runs
        ds_val = node.to_python()
        hf_val = warmup_fill(args, view.settings) if c.pointer == WARMUP_POINTER else c.value(args, world)
        if hf_val is MISSING or ds_val is None or ds_val == hf_val:
            continue
        out.append((c, ds_val, hf_val))
    return out


def ds_key(pointer: str) -> str:
    return ".".join(pointer.strip("/").split("/"))


# -- Accelerate config YAML -------------------------------------------------------------------------------------------

# deepspeed_config fields that `accelerate launch` reports to the process and DeepSpeedPlugin rejects when a config
# file is given (accelerate/utils/dataclasses.py, _deepspeed_config_checks).
REJECTED_WITH_FILE = ("gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
                      "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path",
                      "zero3_save_16bit_model")
PLUGIN_TO_POINTER = {
    "gradient_accumulation_steps": "/gradient_accumulation_steps",
    "gradient_clipping": "/gradient_clipping",
    "zero_stage": "/zero_optimization/stage",
    "offload_optimizer_device": "/zero_optimization/offload_optimizer/device",
    "offload_param_device": "/zero_optimization/offload_param/device",
    "offload_param_nvme_path": "/zero_optimization/offload_param/nvme_path",
    "offload_optimizer_nvme_path": "/zero_optimization/offload_optimizer/nvme_path",
    "zero3_save_16bit_model": "/zero_optimization/stage3_gather_16bit_weights_on_model_save",
}


class AccelerateConfig(Record):
    """An Accelerate config YAML as the rules see it (Settings.accelerate).

    `spans`: "key" / "deepspeed_config.key" -> value span."""

    _fields = ("path", "data", "text", "spans")
    path: str
    data: dict[str, Any]
    text: str
    spans: dict[str, tuple[int, int]]

    def __init__(self, path: str, data: dict[str, Any], text: str = "",
                 spans: dict[str, tuple[int, int]] | None = None) -> None:
        self.path = path
        self.data = data
        self.text = text
        self.spans = {} if spans is None else spans

    @property
    def deepspeed(self) -> dict[str, Any]:
        ds = self.data.get("deepspeed_config")
        return ds if isinstance(ds, dict) else {}

    @property
    def mixed_precision(self) -> str | None:
        mp = self.data.get("mixed_precision")
        return str(mp).lower() if mp is not None else None

    def where(self, key: str) -> str:
        """'path:line:col' of a key's value, for messages."""
        span = self.spans.get(key)
        if span is None:
            return self.path
        from .document import Document

        line, col = Document(path=self.path, text=self.text).position(span[0])
        return f"{self.path}:{line}:{col}"

    @property
    def world_size(self) -> int | None:
        n = self.data.get("num_processes")
        return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None

