"""The Python API: lint a config given as a path, text, bytes or dict; the check for training scripts."""

from __future__ import annotations

import json
import os
from typing import Any

from .base.errors import ZerolintError
from .model.diagnostics import Diagnostic
from .pipeline import Options, Pipeline


def lint(config: str | os.PathLike[str] | bytes | dict[str, Any], target: str = "auto",
         deepspeed_version: str | None = None, world_size: int | None = None, select: list[str] | None = None,
         ignore: list[str] | None = None, training_args: Any = None) -> list[Diagnostic]:
    """Lint a config: a path (str or PathLike) to a file, JSON or hjson text, bytes, or a dict as you would pass to
    `deepspeed.initialize(config=...)`; a path ending in .yaml/.yml is an Accelerate config, linted with the
    DeepSpeed config it names. A str is text when it looks like a config's text (it opens an object, or a comment,
    or holds a line break), else a path: `lint_text` and `lint_path` say which without guessing.
    `training_args`: a TrainingArguments (or its dict / JSON dump, or a path to one) whose values the HF Trainer
    compares with the config (ZL523); the target then defaults to hf. Returns the diagnostics, most severe first in
    each file order. Raises UnreadableFile (a ZerolintError) for a path that cannot be read, TrainingArgsError for
    training_args that cannot be used.

    A thin shell over the pipeline (pipeline.py), as `zerolint check --isolated` with these options: the arguments
    are the settings; no zerolint config file (.zerolint.toml, [tool.zerolint], a baseline) is read."""
    is_path = isinstance(config, os.PathLike) or (isinstance(config, str) and not _looks_like_text(config))
    return _lint(config, is_path, target, deepspeed_version, world_size, select, ignore, training_args)


def lint_text(text: str | bytes, target: str = "auto", deepspeed_version: str | None = None,
              world_size: int | None = None, select: list[str] | None = None, ignore: list[str] | None = None,
              training_args: Any = None) -> list[Diagnostic]:
    """Lint a config's text (JSON or hjson, str or bytes); as `lint`, never taking the text for a path."""
    return _lint(text, False, target, deepspeed_version, world_size, select, ignore, training_args)


def lint_path(path: str | os.PathLike[str], target: str = "auto", deepspeed_version: str | None = None,
              world_size: int | None = None, select: list[str] | None = None, ignore: list[str] | None = None,
              training_args: Any = None) -> list[Diagnostic]:
    """Lint the config file at `path`; as `lint`, never taking the path for text."""
    return _lint(path, True, target, deepspeed_version, world_size, select, ignore, training_args)


def _looks_like_text(value: str) -> bool:
    head = value.lstrip()
    return head.startswith(("{", "//", "/*", "#")) or "\n" in value


def _lint(config: Any, is_path: bool, target: str, deepspeed_version: str | None, world_size: int | None,
          select: list[str] | None, ignore: list[str] | None, training_args: Any) -> list[Diagnostic]:
    args = None
    if training_args is not None:
        from .model.trainer import training_args_dict

        args = training_args_dict(training_args)
        target = "hf" if target == "auto" else target
        world_size = world_size or args.get("world_size")
    options = Options(files=(os.fspath(config),) if is_path else (), target=target, world_size=world_size,
                      deepspeed_version=deepspeed_version, select=tuple(select or ()), ignore=tuple(ignore or ()),
                      training_args=args, isolated=True)
    pipeline = Pipeline(options)
    if is_path:  # raises base.fsio.UnreadableFile
        return [d for r in pipeline.lint_one(os.fspath(config)) for d in r.diagnostics]
    if isinstance(config, dict):
        return pipeline.lint_data(json.dumps(config, indent=2).encode(), "<dict>").diagnostics
    if isinstance(config, bytes):
        return pipeline.lint_data(config, "<bytes>").diagnostics
    return pipeline.lint_data(str(config).encode(), "<string>").diagnostics


# -- the Python helper for training scripts ---------------------------------------------------------------------------

class DeepSpeedConfigError(ZerolintError, ValueError):
    """Raised by `check_or_raise` when the DeepSpeed config has errors; `.diagnostics` holds all findings."""

    def __init__(self, message: str, diagnostics: list[Diagnostic]) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


def format_diagnostics(diagnostics: list[Diagnostic]) -> str:
    from .base.escape import safe

    lines = []
    for d in diagnostics:
        lines.append(f"  {d.file}:{d.line}:{d.column}: {d.severity.value} {d.code} [{d.name}] {safe(d.message)}")
        if d.help:
            lines.append(f"      help: {safe(d.help)}")
    return "\n".join(lines)


def check_or_raise(training_args: Any = None, config: str | os.PathLike[str] | dict[str, Any] | None = None, *,
                   target: str = "hf", fail_on: str = "error", deepspeed_version: str | None = None,
                   world_size: int | None = None, select: list[str] | None = None,
                   ignore: list[str] | None = None) -> list[Diagnostic]:
    """Lint the DeepSpeed config a training script is about to use, before `Trainer(...)` allocates anything.

        args = TrainingArguments(..., deepspeed="ds_config.json")
        zerolint.check_or_raise(args)          # raises DeepSpeedConfigError listing the errors
        trainer = Trainer(model=model, args=args, ...)

    `config` defaults to `training_args.deepspeed` (a path or a dict). Returns the findings below `fail_on` (for
    logging); raises `DeepSpeedConfigError` when any finding is at or above it."""
    from .model.diagnostics import Severity

    if config is None:
        config = getattr(training_args, "deepspeed", None) if not isinstance(training_args, dict) else \
            training_args.get("deepspeed")
        if config is None:
            raise ValueError("no DeepSpeed config: pass config=..., or training_args with deepspeed set")
    diagnostics = lint(config, target=target, training_args=training_args, deepspeed_version=deepspeed_version,
                       world_size=world_size, select=select, ignore=ignore)
    threshold = Severity.parse(fail_on).rank
    failing = [d for d in diagnostics if d.severity.rank >= threshold]
    if failing:
        raise DeepSpeedConfigError(
            f"zerolint found {len(failing)} problem(s) in the DeepSpeed config that would stop or silently change "
            f"training:\n{format_diagnostics(failing)}", diagnostics)
    return diagnostics
