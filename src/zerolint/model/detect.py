"""Which files found in a directory or by a glob are DeepSpeed configs: judged by content, not by name.

A JSON or hjson object is a DeepSpeed config when its top-level keys are DeepSpeed's (dsfacts TOP_LEVEL_KEYS, the
keys runtime/config.py reads): at least one of them exactly, and DeepSpeed's keys (or near misses of them, such as
`zero_optimisation`) make up at least half of the keys. An HF model config.json, a tokenizer file, package.json,
tsconfig.json or a TrainingArguments dump shares none of them, or only a few among many of its own. An Accelerate
YAML is picked when it configures DeepSpeed (`deepspeed_config:` or `distributed_type: DEEPSPEED`, the keys
`accelerate config` writes). Files named on the command line are always linted; this is only for the files a
directory or a glob turns up.

The CI gate (`check --only-configs`: the pre-commit hooks, the Action and its verify step) judges with `strict`,
since there the file's author is the one being checked: a share of foreign keys must not hide a config, so one key
only DeepSpeed reads (dsfacts SHARED_TOP_LEVEL_KEYS says which keys others use too; those count with DeepSpeed's
value shape, such as an `fp16` object) or a near miss of one picks the file, and a candidate that is too large or
cannot be parsed is picked so that the lint reports it, never skipped.

Each file is read once: a picked file keeps its bytes (and the Document, when the tolerant parser already read it)
so that the lint neither reads nor parses it again. Plain JSON is judged with json.loads (C); the tolerant parser
runs only for text json.loads rejects (hjson, templates with placeholders, trailing commas).
"""

from __future__ import annotations

import json
import os
import re

from ..base.fsio import Limits, UnreadableFile, read_bytes
from ..base.record import Record
from .document import OBJECT, Document, parse_bytes
from .dsfacts.sections import SHARED_KEY_SHAPES, SHARED_TOP_LEVEL_KEYS, TOP_LEVEL_KEYS

# `accelerate config` writes these top-level keys for a DeepSpeed setup (accelerate/commands/config/cluster.py);
# other YAML (CI workflows, Hydra configs, ...) is not picked. A pattern that `re` compiles (and caches) on first
# use: only a YAML file found in a directory needs it, and a plain check imports this module for `Pick`.
_ACCELERATE_DEEPSPEED = rb"(?m)^(?:deepspeed_config\s*:|distributed_type\s*:\s*['\"]?DEEPSPEED\b)"


class Pick(Record):
    """The verdict on one file: `picked` (lint it) and `why`, in words for --show-files. `data`/`document`: what
    was read and parsed to judge it, handed to the lint of a picked file."""

    _fields = ("path", "picked", "why", "data", "document")
    path: str
    picked: bool
    why: str
    data: bytes | None
    document: Document | None

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


def judge(path: str, limits: Limits, strict: bool = False) -> Pick:
    """Read `path` within `limits` and judge it. A file that cannot be read is picked (the lint then reports it,
    exit 2): a config that exists but cannot be judged must not pass silently. A YAML file that cannot be read is
    not one we can tell to be an Accelerate config, and is skipped, unless `strict` (the CI gate), which also picks
    a file over the size limit (the lint reports it, ZL007) and never follows a symbolic link."""
    if strict and os.path.islink(path):  # a link in a pull request may point at a runner secret
        return Pick(path, False, "a symbolic link, not followed by the CI gate (its target is linted where it is a "
                                 "candidate itself)")
    try:
        data = read_bytes(path, limits)
    except UnreadableFile as e:
        if is_yaml(path) and not strict:
            return Pick(path, False, f"YAML that cannot be read ({e})")
        return Pick(path, True, "cannot be read, so it cannot be judged: reported")
    if len(data) > limits.max_bytes:
        if strict:
            return Pick(path, True, f"larger than the {limits.max_bytes:,}-byte limit, so it cannot be judged: "
                                    "reported")
        return Pick(path, False, f"larger than the {limits.max_bytes:,}-byte limit (--max-bytes)")
    if is_yaml(path):
        if re.search(_ACCELERATE_DEEPSPEED, data):
            return Pick(path, True, "Accelerate config that configures DeepSpeed", data)
        return Pick(path, False, "YAML without deepspeed_config or distributed_type: DEEPSPEED")
    return judge_bytes(data, path, limits.max_depth, strict)


def judge_bytes(data: bytes, path: str, max_depth: int, strict: bool = False) -> Pick:
    """Judge JSON/hjson bytes by their top-level keys (and, when `strict`, the shape of the shared ones)."""
    document = None
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        document = parse_bytes(data, path, max_depth)  # (the default --max-values: judging reads at most that)
        root = document.root
        if root is None or root.kind != OBJECT:
            if strict:  # neither json nor the tolerant parser finds an object: the lint says what is wrong
                return Pick(path, True, "does not parse as a JSON or hjson object, so it cannot be judged: reported",
                            data, document)
            return Pick(path, False, "not a JSON or hjson object")
        keys = root.keys()
        shape = _node_shape(root)
        if not keys and document.fatal:  # ("an empty object" would misdescribe a file that stops at its first key)
            if strict:
                return Pick(path, True, "does not parse before its first key, so it cannot be judged: reported",
                            data, document)
            return Pick(path, False, "does not parse: a syntax error before its first key")
    else:
        if not isinstance(value, dict):
            return Pick(path, False, f"a JSON {_kind(value)}, not an object")
        keys = list(value)
        shape = _value_shape(value)
    picked, why = verdict(keys, shape if strict else None)
    return Pick(path, picked, why, data if picked else None, document if picked else None)


def verdict(keys: list[str], shape=None) -> tuple[bool, str]:
    """(whether top-level `keys` make a DeepSpeed config, why in words). `shape`: key -> (is an object, its keys,
    whether its `params` is an object), given for the strict judgement of the CI gate."""
    if not keys:
        return False, "an empty object"
    exact = [k for k in keys if k in TOP_LEVEL_KEYS]
    near = _near_misses([k for k in keys if k not in TOP_LEVEL_KEYS]) if exact else []
    share = f"{len(exact)} of {len(keys)} top-level keys are DeepSpeed's"
    if near:
        share += f" (and {len(near)} near miss{'es' if len(near) != 1 else ''}: {', '.join(near[:3])})"
    if exact and 2 * (len(exact) + len(near)) >= len(keys):
        return True, f"DeepSpeed config: {share}"
    found = _evidence(keys, shape) if shape is not None else ""
    if found:
        return True, f"DeepSpeed config: {found}"
    return False, f"not a DeepSpeed config: {share}"


def _evidence(keys: list[str], shape) -> str:
    """Why `keys` are a DeepSpeed config whatever else the object holds ("" when nothing says so): a key only
    DeepSpeed reads, a shared key with DeepSpeed's value shape, or a near miss of a key only DeepSpeed reads."""
    for k in keys:
        if k in TOP_LEVEL_KEYS and k not in SHARED_TOP_LEVEL_KEYS:
            return f"holds {k}, a key only DeepSpeed reads"
    for k in keys:
        kind = SHARED_KEY_SHAPES.get(k)
        if kind is None or k not in shape:
            continue
        is_object, sub, params_object = shape[k]
        if not is_object:
            continue
        if kind == "object":
            return f"{k} is an object, as DeepSpeed reads it (other tools write a boolean there)"
        if kind == "typed" and params_object:
            return f'{k} has DeepSpeed\'s {{"type", "params"}} form'
        if kind == "keys":
            own = _section_keys(k)
            hit = next((x for x in sub if x in own), None)
            if hit is not None:
                return f"{k} holds {hit}, a key of DeepSpeed's {k} section"
    only = [k for k in keys[:_NEAR_MISS_KEYS] if k not in TOP_LEVEL_KEYS]
    near = _near_misses(only, _DEEPSPEED_ONLY)
    if near:
        return f"holds {near[0]}, a near miss of a key only DeepSpeed reads"
    return ""


_NEAR_MISS_KEYS = 64  # how many top-level keys are compared with DeepSpeed's for near misses (cost stays bounded)
_DEEPSPEED_ONLY = tuple(sorted(TOP_LEVEL_KEYS - SHARED_TOP_LEVEL_KEYS))


def _section_keys(key: str) -> frozenset[str]:
    """The keys DeepSpeed's schema lists for a top-level section, less the generic ones (type, params, name, ...);
    `enabled` stays: `"wandb": {"enabled": true}` makes DeepSpeed import wandb at initialize."""
    from .dsfacts.sections import GENERIC_KEYS
    from .schema import load_schema

    return frozenset(load_schema("0.19").keys("/" + key)) - (GENERIC_KEYS - {"enabled"})


def _value_shape(value: dict) -> dict:
    out = {}
    for k in SHARED_KEY_SHAPES:
        v = value.get(k)
        if v is not None:
            is_object = isinstance(v, dict)
            out[k] = (is_object, list(v) if is_object else [], is_object and isinstance(v.get("params"), dict))
    return out


def _node_shape(root) -> dict:
    out = {}
    for k in SHARED_KEY_SHAPES:
        node = root.get(k)
        if node is not None:
            is_object = node.kind == OBJECT
            params = node.get("params") if is_object else None
            out[k] = (is_object, node.keys() if is_object else [], params is not None and params.kind == OBJECT)
    return out


def _near_misses(keys: list[str], names: tuple[str, ...] | None = None) -> list[str]:
    """The keys that are a misspelling of a DeepSpeed top-level key (zero_optimisation, train_batchsize), or of
    one of `names`."""
    if not keys or len(keys) > _NEAR_MISS_KEYS:  # (a big object of other keys is no config: the share decides)
        return []
    from ..base.suggest import closest  # (difflib: only for configs with unknown keys)

    names = names or tuple(sorted(TOP_LEVEL_KEYS))
    # Two edits only for long keys: a short key two edits from a DeepSpeed one ("name" and "amp", "seed" and
    # "steps") is a coincidence, not a misspelling, and would let package.json's `"optimizer"` pick it.
    return [k for k in keys if len(k) >= 6 and closest(k, names, max_distance=2 if len(k) >= 10 else 1) is not None]


def _kind(value) -> str:
    return "array" if isinstance(value, list) else "string" if isinstance(value, str) else \
        "null" if value is None else "boolean" if isinstance(value, bool) else "number"
