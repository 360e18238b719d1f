"""Turn the FILES arguments (files, directories, globs, `-`) into the paths to consider, each marked as named on
the command line (always linted) or found in a directory or by a glob (linted when its content is a DeepSpeed
config: model/detect.py decides, pipeline.Pipeline.sources asks)."""

from __future__ import annotations

import os
from fnmatch import fnmatch

# What a directory contributes as candidates: JSON and hjson configs, and YAML for Accelerate configs.
CANDIDATE_SUFFIXES = (".json", ".hjson", ".yaml", ".yml")
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache",
             ".pytest_cache", ".ruff_cache", "build", "dist", "site-packages"}


def expand(args: list[str], exclude: list[str] | None = None) -> tuple[list[tuple[str, bool]], list[str]]:
    """([(path, named)], problems). `named`: the argument itself (a file or `-`), always linted; otherwise found:
    a directory contributes its *.json, *.hjson, *.yaml and *.yml files, recursively, skipping hidden and tool
    directories; a quoted glob is expanded here (its matching files). `--exclude` patterns drop found files."""
    exclude = exclude or []
    paths: list[tuple[str, bool]] = []
    problems: list[str] = []
    seen: set[str] = set()

    def add(p: str, named: bool) -> None:
        key = os.path.normpath(p)
        if key in seen or any(fnmatch(key, pat) or fnmatch(os.path.basename(key), pat) for pat in exclude):
            return
        seen.add(key)
        paths.append((p, named))

    for arg in args:
        if arg == "-":
            add(arg, True)
        elif os.path.isdir(arg):
            found = []
            for dirpath, dirnames, filenames in os.walk(arg, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
                found += [os.path.join(dirpath, f) for f in filenames if f.lower().endswith(CANDIDATE_SUFFIXES)]
            for p in sorted(found):
                add(p, False)
        elif any(ch in arg for ch in "*?[") and not os.path.exists(arg):
            import glob  # only for a quoted glob: it brings contextlib, and a plain check names its files

            matched = sorted(glob.glob(arg, recursive=True))
            if not matched:
                problems.append(f"{arg}: no files match this pattern")
            for p in matched:
                if os.path.isfile(p):
                    add(p, False)
        else:
            add(arg, True)  # reading reports missing or unreadable files
    return paths, problems
