"""How CI formats name a file: relative to the working directory (the repository root in CI), forward slashes."""

from __future__ import annotations

import os


def display_path(path: str) -> str:
    """`path` relative to the working directory with forward slashes; unchanged when outside it or not a path."""
    if path.startswith("<") or path == "-":
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path.replace(os.sep, "/")
    if rel == ".." or rel.startswith(".." + os.sep):
        return os.path.abspath(path).replace(os.sep, "/")
    return rel.replace(os.sep, "/")


def artifact_uri(path: str) -> tuple[str, bool]:
    """(URI, relative?) for a SARIF artifactLocation: a relative URI reference under the working directory, a
    file:// URI outside it."""
    shown = display_path(path)
    if os.path.isabs(shown):
        from pathlib import Path

        return Path(shown).as_uri(), False
    from urllib.parse import quote  # here: urllib.parse brings ipaddress (~2 ms); only SARIF needs it

    return quote(shown, safe="/"), True
