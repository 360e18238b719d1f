"""The `zerolint` command line: the click group and its commands live in cli/app.py; the console script is
cli/fast.py's main, which runs a plain `check` without importing click. `zerolint.cli.main` (the click group, for
CliRunner and in-process calls) and the other names of cli/app.py are imported on first use, so that importing
zerolint.cli.fast does not import click. (The click command `check` is in cli/check_cmd.py: a submodule named
`check` would hide the command `zerolint.cli.check`.)"""

from __future__ import annotations


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(".app", __name__), name)
