"""Which open documents the server lints: a DeepSpeed config, not any JSON the editor opens.

The same content-based choice as `check` makes for files found in directories (model/detect.py: a JSON/hjson object
whose keys look like DeepSpeed's; an Accelerate YAML that configures DeepSpeed), plus two hints an editor needs
for a file being written: a file name that says so (ds_config.json, *deepspeed*.json, ds_*.json, zero3.json: a new,
still empty config gets diagnostics as it is typed), and a `$schema` that names a DeepSpeed schema.
"""

from __future__ import annotations

import os
import re

from ..model.detect import configures_deepspeed, verdict
from ..model.document import Document

_NAME = re.compile(r"(^ds[_-]|deepspeed|^zero[_-]?\d)", re.I)

# The name hint holds for a config's own suffixes only: an editor may attach the server to JavaScript too (Emacs 28
# opens .json in js-mode, so the recipe lists js-mode), and `ds_utils.js` is no config.
_CONFIG_SUFFIXES = (".json", ".jsonc", ".json5", ".hjson")


def named_like_config(path: str) -> bool:
    name = os.path.basename(path)
    return name.lower().endswith(_CONFIG_SUFFIXES) and bool(_NAME.search(name))


def claims_yaml(text: str) -> bool:
    return configures_deepspeed(text.encode("utf-8", "surrogatepass"))


def claims(path: str, doc: Document) -> bool:
    """Whether a parsed JSON/hjson document is a DeepSpeed config (see the module docstring)."""
    if named_like_config(path):
        return True
    root = doc.root
    if root is None or root.members is None:
        return False
    if verdict(root.keys())[0]:
        return True
    schema = root.get("$schema")
    return schema is not None and isinstance(schema.value, str) and "deepspeed" in schema.value.lower()
