"""Turn the FILES arguments (files, directories, globs, `-`) into a list of paths to lint."""

from __future__ import annotations

import glob
import os
from fnmatch import fnmatch

CONFIG_SUFFIXES = (".json", ".hjson")
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache",
             ".pytest_cache", ".ruff_cache", "build", "dist", "site-packages"}


def expand(args: list[str], exclude: list[str] | None = None) -> tuple[list[str], list[str]]:
    """(paths to lint, problems). A directory contributes its *.json / *.hjson files, recursively, skipping
    hidden and tool directories; a quoted glob is expanded here; `-` is stdin."""
    exclude = exclude or []
    paths: list[str] = []
    problems: list[str] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        key = os.path.normpath(p)
        if key in seen or any(fnmatch(key, pat) or fnmatch(os.path.basename(key), pat) for pat in exclude):
            return
        seen.add(key)
        paths.append(p)

    for arg in args:
        if arg == "-":
            add(arg)
        elif os.path.isdir(arg):
            found = []
            for dirpath, dirnames, filenames in os.walk(arg, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
                found += [os.path.join(dirpath, f) for f in filenames if f.endswith(CONFIG_SUFFIXES)]
            for p in sorted(found):
                add(p)
        elif any(ch in arg for ch in "*?[") and not os.path.exists(arg):
            matched = sorted(glob.glob(arg, recursive=True))
            if not matched:
                problems.append(f"{arg}: no files match this pattern")
            for p in matched:
                if os.path.isfile(p):
                    add(p)
        else:
            add(arg)  # reading reports missing or unreadable files
    return paths, problems
