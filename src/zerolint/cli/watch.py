"""`zerolint check --watch`: check, then check again whenever a file the check depends on changes, until Ctrl-C.

A poller with no dependency: every POLL_S it compares (mtime, size, inode) of the files named, the configs and
launch files under the directories named (and, when uses are read, under the repository), and every zerolint
settings file above them. Polling a 10,000-file tree costs a few tens of ms a second; an inotify library would save
that at the price of a dependency in every pre-commit install. A change is checked once the tree has held still for
one more poll, so that an editor's save in several writes gives one run, not two.

Each run builds a new pipeline, so a changed `.zerolint.toml` applies at once; a run that fails (a broken settings
file: exit 2) prints its error and the watch goes on. Links are never followed (project.references.tree_paths).
"""

from __future__ import annotations

import os
import sys
import time

from ..base.console import echo

POLL_S = 0.5
SETTINGS_NAMES = (".zerolint.toml", "pyproject.toml")
WATCHED_SUFFIXES = (".json", ".hjson", ".yaml", ".yml", ".toml", ".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".py",
                    ".md", ".rst", ".txt", ".mk", ".cfg", ".ini")


def watched_paths(files: tuple[str, ...], uses: bool) -> list[str]:
    """The files whose change re-runs the check: the named files, the text files under named directories (and
    under the repository of each, when uses are read), and the settings files in every directory above them."""
    from ..project.references import TEXT_NAMES, repository_root, tree_paths

    out: list[str] = []
    roots: list[str] = []
    for f in files:
        if os.path.isdir(f):
            roots.append(f)
        else:
            out.append(f)
        if uses:
            repo = repository_root(f if not os.path.isdir(f) else os.path.join(f, "."))
            if repo is not None:
                roots.append(repo)
    for root in dict.fromkeys(roots):
        out += tree_paths(root, WATCHED_SUFFIXES, TEXT_NAMES)
    for f in files:
        d = os.path.dirname(os.path.abspath(f if not os.path.isdir(f) else os.path.join(f, ".")))
        while True:
            out += [os.path.join(d, name) for name in SETTINGS_NAMES]
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return list(dict.fromkeys(out))


def snapshot(paths: list[str]) -> dict[str, tuple[int, int, int] | None]:
    """{path: (mtime_ns, size, inode)}, None for a path that is not there (its appearance is a change too)."""
    out: dict[str, tuple[int, int, int] | None] = {}
    for p in paths:
        try:
            st = os.lstat(p)
        except (OSError, ValueError):
            out[p] = None
        else:
            out[p] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


def changed(before: dict, after: dict) -> list[str]:
    return [p for p in after if before.get(p, None) != after[p]] + [p for p in before if p not in after]


def watch(check_once, files: tuple[str, ...], uses: bool, poll: float = POLL_S) -> None:
    """Run `check_once()` (it ends with SystemExit, as `check` does), then again on every change; Ctrl-C ends the
    watch with exit 0."""
    from ..base.escape import safe_line  # a changed file's name can hold terminal escapes

    try:
        while True:
            paths = watched_paths(files, uses)
            seen = snapshot(paths)
            try:
                check_once()
            except SystemExit:
                pass
            sys.stdout.flush()
            seen = {**seen, **snapshot(paths)}  # what --fix wrote is not a change to react to
            there = sum(v is not None for v in seen.values())
            echo(f"zerolint: watching {there} file{'s' * (there != 1)} for changes (Ctrl-C to stop)", err=True)
            while True:
                time.sleep(poll)
                now = snapshot(watched_paths(files, uses))
                if changed(seen, now):
                    break
            while True:  # until the tree holds still for one poll
                time.sleep(poll)
                later = snapshot(list(now))
                if not changed(now, later):
                    break
                now = later
            what = changed(seen, now)
            echo(f"zerolint: {safe_line(what[0])}{f' and {len(what) - 1} more' if len(what) > 1 else ''} changed: "
                 "checking again", err=True)
    except KeyboardInterrupt:
        sys.exit(0)
