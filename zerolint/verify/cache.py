"""Where verify keeps things: results keyed by (config, DeepSpeed, torch, device kind, world size, options), and
the JIT-built DeepSpeed ops (TORCH_EXTENSIONS_DIR) so the 40-75 s builds are paid once per machine."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from importlib import metadata
from pathlib import Path

CACHE_FORMAT = 1


def cache_dir() -> Path:
    """$ZEROLINT_CACHE_DIR, else $XDG_CACHE_HOME/zerolint, else ~/.cache/zerolint."""
    env = os.environ.get("ZEROLINT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "zerolint"


def package_version(name: str) -> str | None:
    """An installed package's version from its metadata: no import (the parent never imports torch/deepspeed)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", text).strip("-")[:80]


def extensions_dir(device_kind: str) -> str:
    """An existing TORCH_EXTENSIONS_DIR wins (CI shares one across the run); else one per python, torch,
    DeepSpeed and device kind under the zerolint cache, since a build is only valid for those."""
    env = os.environ.get("TORCH_EXTENSIONS_DIR")
    if env:
        return env
    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    name = f"{py}-torch{package_version('torch')}-ds{package_version('deepspeed')}-{_slug(device_kind)}"
    return str(cache_dir() / "torch_extensions" / name)


def built_ops(ext_dir: str) -> set[str]:
    """Names of the ops already built in an extensions directory (<dir>/<op>/<op>.so)."""
    out = set()
    try:
        for entry in os.scandir(ext_dir):
            if entry.is_dir() and os.path.exists(os.path.join(entry.path, f"{entry.name}.so")):
                out.add(entry.name)
    except OSError:
        pass
    return out


def result_key(payload: dict) -> str:
    data = json.dumps({"format": CACHE_FORMAT, **payload}, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()


def load(key: str) -> dict | None:
    path = cache_dir() / "verify" / f"{key}.json"
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def store(key: str, record: dict) -> None:
    folder = cache_dir() / "verify"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f, default=str)
        os.replace(tmp, folder / f"{key}.json")
    except OSError:
        pass  # a cache that cannot be written is not an error
