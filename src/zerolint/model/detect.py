"""Which files found in a directory or by a glob are DeepSpeed configs: judged by content, not by name.

A JSON or hjson object is a DeepSpeed config when its top-level keys are DeepSpeed's (dsfacts TOP_LEVEL_KEYS, the
keys runtime/config.py reads): at least one of them exactly, and DeepSpeed's keys (or near misses of them, such as
`zero_optimisation`) make up at least half of the keys. An HF model config.json, a tokenizer file, package.json,
tsconfig.json or a TrainingArguments dump shares none of them, or only a few among many of its own. An Accelerate
YAML is picked when it configures DeepSpeed (`deepspeed_config:` or `distributed_type: DEEPSPEED`, the keys
`accelerate config` writes). Files named on the command line are always linted; this is only for the files a
directory or a glob turns up.

Each file is read once: a picked file keeps its bytes (and the Document, when the tolerant parser already read it)
so that the lint neither reads nor parses it again. Plain JSON is judged with json.loads (C); the tolerant parser
runs only for text json.loads rejects (hjson, templates with placeholders, trailing commas).
"""

from __future__ import annotations

import json
import re

from ..base.fsio import Limits, UnreadableFile, read_bytes
from ..base.record import Record
from .document import OBJECT, Document, parse_bytes
from .dsfacts.sections import TOP_LEVEL_KEYS

# `accelerate config` writes these top-level keys for a DeepSpeed setup (accelerate/commands/config/cluster.py);
# other YAML (CI workflows, Hydra configs, ...) is not picked. A pattern that `re` compiles (and caches) on first
# use: only a YAML file found in a directory needs it, and a plain check imports this module for `Pick`.
_ACCELERATE_DEEPSPEED = rb"(?m)^(?:deepspeed_config\s*:|distributed_type\s*:\s*['\"]?DEEPSPEED\b)"


class Pick(Record):
    """The verdict on one file: `picked` (lint it) and `why`, in words for --show-files. `data`/`document`: what
    was read and parsed to judge it, handed to the lint of a picked file."""

    _fields = ("path", "picked", "why", "data", "document")

    def __init__(self, path: str, picked: bool, why: str, data: bytes | None = None,
                 document: Document | None = None) -> None:
        self.path = path
        self.picked = picked
        self.why = why
        self.data = data
        self.document = document


def configures_deepspeed(yaml_data: bytes) -> bool:
    """Whether an Accelerate config YAML configures DeepSpeed (the keys `accelerate config` writes for it)."""
    return re.search(_ACCELERATE_DEEPSPEED, yaml_data) is not None


def is_yaml(name: str) -> bool:
    """An Accelerate config YAML by its name (what `check`, `--fix` and the language server treat as YAML)."""
    return name.lower().endswith((".yaml", ".yml"))


def judge(path: str, limits: Limits) -> Pick:
    """Read `path` within `limits` and judge it. A file that cannot be read is picked (the lint then reports it,
    exit 2): a config that exists but cannot be judged must not pass silently. A YAML file that cannot be read is
    not one we can tell to be an Accelerate config, and is skipped."""
    try:
        data = read_bytes(path, limits)
    except UnreadableFile as e:
        if is_yaml(path):
            return Pick(path, False, f"YAML that cannot be read ({e})")
        return Pick(path, True, "cannot be read, so it cannot be judged: reported")
    if len(data) > limits.max_bytes:
        return Pick(path, False, f"larger than the {limits.max_bytes:,}-byte limit (--max-bytes)")
    if is_yaml(path):
        if re.search(_ACCELERATE_DEEPSPEED, data):
            return Pick(path, True, "Accelerate config that configures DeepSpeed", data)
        return Pick(path, False, "YAML without deepspeed_config or distributed_type: DEEPSPEED")
    return judge_bytes(data, path, limits.max_depth)


def judge_bytes(data: bytes, path: str, max_depth: int) -> Pick:
    """Judge JSON/hjson bytes by their top-level keys."""
    document = None
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        document = parse_bytes(data, path, max_depth)
        root = document.root
        if root is None or root.kind != OBJECT:
            return Pick(path, False, "not a JSON or hjson object")
        keys = root.keys()
    else:
        if not isinstance(value, dict):
            return Pick(path, False, f"a JSON {_kind(value)}, not an object")
        keys = list(value)
    picked, why = verdict(keys)
    return Pick(path, picked, why, data if picked else None, document if picked else None)


def verdict(keys: list[str]) -> tuple[bool, str]:
    """(whether top-level `keys` make a DeepSpeed config, why in words)."""
    if not keys:
        return False, "an empty object"
    exact = [k for k in keys if k in TOP_LEVEL_KEYS]
    near = _near_misses([k for k in keys if k not in TOP_LEVEL_KEYS]) if exact else []
    share = f"{len(exact)} of {len(keys)} top-level keys are DeepSpeed's"
    if near:
        share += f" (and {len(near)} near miss{'es' if len(near) != 1 else ''}: {', '.join(near[:3])})"
    if exact and 2 * (len(exact) + len(near)) >= len(keys):
        return True, f"DeepSpeed config: {share}"
    return False, f"not a DeepSpeed config: {share}"


def _near_misses(keys: list[str]) -> list[str]:
    """The keys that are a misspelling of a DeepSpeed top-level key (zero_optimisation, train_batchsize)."""
    if not keys or len(keys) > 64:  # (a big object of other keys is no config: its share of exact keys decides)
        return []
    from ..base.suggest import closest  # (difflib: only for configs with unknown keys)

    names = tuple(sorted(TOP_LEVEL_KEYS))
    # Two edits only for long keys: a short key two edits from a DeepSpeed one ("name" and "amp", "seed" and
    # "steps") is a coincidence, not a misspelling, and would let package.json's `"optimizer"` pick it.
    return [k for k in keys if len(k) >= 6 and closest(k, names, max_distance=2 if len(k) >= 10 else 1) is not None]


def _kind(value) -> str:
    return "array" if isinstance(value, list) else "string" if isinstance(value, str) else \
        "null" if value is None else "boolean" if isinstance(value, bool) else "number"
