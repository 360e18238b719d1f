"""The Python API: lint a config given as a path, text, bytes or dict."""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Diagnostic
from .document import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, Document, parse, parse_bytes
from .engine import Selection, run_rules
from .view import Settings


class UnreadableFile(Exception):
    """A file that cannot be read at all (missing, a directory, no permission): exit code 2."""


@dataclass
class Limits:
    max_bytes: int = DEFAULT_MAX_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    # Directories every read must resolve into (fsio.read_roots; the CLI sets them per file); None: anywhere but
    # /proc, /sys and /dev, which are never read.
    roots: tuple[str, ...] | None = None


@dataclass
class Result:
    path: str
    document: Document | None
    diagnostics: list[Diagnostic] = field(default_factory=list)


_NOT_REGULAR = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
                (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_bytes(path: str, limits: Limits) -> bytes:
    """The file's bytes (at most max_bytes + 1, so that an oversized file is detected without reading all of it).
    Only regular files are read: a FIFO without a writer would block forever and /dev/zero never ends, so those are
    refused up front (opened non-blocking, checked with fstat: no race with a file swapped in between). A path that
    resolves out of `limits.roots`, or into /proc, /sys or /dev, is not read (fsio.check_read)."""
    from .fsio import ReadRefused, check_read

    try:
        check_read(path, limits.roots)
    except ReadRefused as e:
        raise UnreadableFile(str(e)) from None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if os.path.islink(path):
            raise UnreadableFile(f"{path}: broken symbolic link (it points to {os.readlink(path)!r}, which does "
                                 "not exist)") from None
        raise UnreadableFile(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UnreadableFile(f"{path}: is a directory") from None
    except PermissionError:
        raise UnreadableFile(f"{path}: permission denied") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnreadableFile(f"{path}: symbolic link loop (the link resolves back to itself)") from None
        raise UnreadableFile(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UnreadableFile(f"{path}: is a directory")
        for test, what in _NOT_REGULAR:
            if test(mode):
                raise UnreadableFile(f"{path}: is {what}, not a regular file; to lint a stream, pipe it to stdin: "
                                     f"zerolint check - < {path}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            return f.read(limits.max_bytes + 1)
    except UnreadableFile:
        raise
    except PermissionError:
        raise UnreadableFile(f"{path}: permission denied") from None
    except OSError as e:
        raise UnreadableFile(f"{path}: cannot be read ({e.strerror or e})") from None
    finally:
        if fd >= 0:
            os.close(fd)


def lint_bytes(data: bytes, path: str, settings: Settings | None = None, selection: Selection | None = None,
               limits: Limits | None = None, rules: list | None = None) -> Result:
    """`rules`: the rules to run (default: the built-in ones; the CLI adds the user's policy rules)."""
    limits = limits or Limits()
    if len(data) > limits.max_bytes:
        doc = parse("", path)
        doc.notes[:] = []
        from .document import Note

        doc.notes.append(Note("size-limit", 0, 0,
                              f"the file is larger than the {limits.max_bytes:,}-byte limit"))
        doc.fatal = True
        return Result(path, doc, run_rules(doc, settings, selection, rules))
    doc = parse_bytes(data, path, limits.max_depth)
    return Result(path, doc, run_rules(doc, settings, selection, rules))


def lint_path(path: str, settings: Settings | None = None, selection: Selection | None = None,
              limits: Limits | None = None, rules: list | None = None) -> Result:
    limits = limits or Limits()
    return lint_bytes(read_bytes(path, limits), path, settings, selection, limits, rules)


def lint(config: Any, target: str = "auto", deepspeed_version: str | None = None, world_size: int | None = None,
         select: list[str] | None = None, ignore: list[str] | None = None,
         training_args: Any = None) -> list[Diagnostic]:
    """Lint a config: a path (str or PathLike) to a file, JSON text, or a dict as you would pass to
    `deepspeed.initialize(config=...)`; a path ending in .yaml/.yml is an Accelerate config, linted with the
    DeepSpeed config it names. `training_args`: a TrainingArguments (or its dict / JSON dump, or a path to one)
    whose values the HF Trainer compares with the config (ZL523); the target then defaults to hf. Returns the
    diagnostics, most severe first in each file order."""
    args = None
    if training_args is not None:
        from .hf import training_args_dict

        args = training_args_dict(training_args)
        target = "hf" if target == "auto" else target
        world_size = world_size or args.get("world_size")
    settings = Settings(target=target, deepspeed_version=deepspeed_version, world_size=world_size,
                        training_args=args)
    selection = Selection(select=select or ["ALL"], ignore=ignore or [])
    if isinstance(config, (str, os.PathLike)) and os.fspath(config).lower().endswith((".yaml", ".yml")):
        from .hf import lint_accelerate

        return [d for r in lint_accelerate(os.fspath(config), settings, selection, Limits()) for d in r.diagnostics]
    if isinstance(config, dict):
        return lint_bytes(json.dumps(config, indent=2).encode(), "<dict>", settings, selection).diagnostics
    if isinstance(config, os.PathLike) or (isinstance(config, str) and not config.lstrip().startswith("{")):
        return lint_path(os.fspath(config), settings, selection).diagnostics
    if isinstance(config, bytes):
        return lint_bytes(config, "<bytes>", settings, selection).diagnostics
    return lint_bytes(str(config).encode(), "<string>", settings, selection).diagnostics
