"""Linting: bytes, a path, an Accelerate YAML with the DeepSpeed config it names, a path with its project's settings.

Every command that lints goes through here (check, --fix, verify's static phase, zerolint.lint()); reading a file
is base/fsio.py's job, parsing model/'s, running the rules rules/engine.py's.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

from .base.fsio import Limits, read_bytes
from .model.diagnostics import Diagnostic
from .model.document import Document, parse, parse_bytes
from .model.view import Settings
from .rules.engine import Selection, run_rules


@dataclass
class Result:
    path: str
    document: Document | None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def lint_bytes(data: bytes, path: str, settings: Settings | None = None, selection: Selection | None = None,
               limits: Limits | None = None, rules: list | None = None) -> Result:
    """`rules`: the rules to run (default: the built-in ones; the CLI adds the user's policy rules)."""
    limits = limits or Limits()
    if len(data) > limits.max_bytes:
        doc = parse("", path)
        doc.notes[:] = []
        from .model.document import Note

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


def lint_accelerate(path: str, settings, selection, limits, rules=None) -> list:
    """Results for an Accelerate config YAML: its own findings (located in the YAML) and, when it names a
    DeepSpeed config file, that file linted with target `accelerate`."""
    from dataclasses import replace

    from .integrations.hf import NOT_CHECKED, read_accelerate_yaml, resolve_ds_file
    from .model.trainer import PLUGIN_TO_POINTER, REJECTED_WITH_FILE, ds_key
    from .rules.engine_rules import ACCELERATE_FIELDS, ACCELERATE_FILE_MISSING, ACCELERATE_YAML_INVALID

    raw = read_bytes(path, limits)
    cfg, problem, problem_span = read_accelerate_yaml(path, raw, limits.max_depth)
    doc = Document(path=path, text=cfg.text if cfg else raw.decode("utf-8", errors="replace"))
    found: list[Diagnostic] = []

    def report(rule, span, message, help_, pointer=""):
        if not selection.enabled(rule):
            return
        (line, col), (end_line, end_col) = doc.position(span[0]), doc.position(max(span[1], span[0]))
        found.append(Diagnostic(file=path, code=rule.code, name=rule.name, severity=selection.severity_for(rule, None),
                                message=message, pointer=pointer, line=line, column=col, end_line=end_line,
                                end_column=end_col, help=help_, url=rule.url, start=span[0], end=span[1]))

    def result() -> Any:
        return Result(path, doc, sorted(found, key=Diagnostic.sort_key))

    if problem is not None:
        claim = "" if problem.endswith(NOT_CHECKED) else "; accelerate launch fails before any process starts"
        report(ACCELERATE_YAML_INVALID, problem_span, problem + claim,
               "fix the YAML, or regenerate it with `accelerate config`")
        return [result()]
    ds = cfg.deepspeed
    name = ds.get("deepspeed_config_file")
    if not isinstance(name, str) or not name or name == "none":
        return [result()]  # DeepSpeed settings live in the YAML itself: nothing else to lint

    fields = [k for k in REJECTED_WITH_FILE if k in ds]
    if cfg.data.get("mixed_precision") is not None:
        fields.append("mixed_precision")
    for key in fields:
        span_key = key if key == "mixed_precision" else f"deepspeed_config.{key}"
        span = cfg.spans.get(f"key:{span_key}", (0, 1))
        where = ("in the DeepSpeed config file" if key == "mixed_precision"
                 else f"in the DeepSpeed config file as {ds_key(PLUGIN_TO_POINTER[key])}")
        report(ACCELERATE_FIELDS, span,
               f"{key} is set here and deepspeed_config_file is given: Accelerate raises \"ValueError: When using "
               f"`deepspeed_config_file`, the following accelerate config variables will be ignored\" at start-up",
               f"delete {key} from this YAML and set it {where}", pointer=f"/{span_key.replace('.', '/')}")

    ds_path = resolve_ds_file(path, name)
    if ds_path is None:
        report(ACCELERATE_FILE_MISSING, cfg.spans.get("deepspeed_config.deepspeed_config_file", (0, 1)),
               f"deepspeed_config_file {name!r} does not exist (looked in {os.path.dirname(path) or '.'} and the "
               "working directory); Accelerate fails with FileNotFoundError", "fix the path",
               pointer="/deepspeed_config/deepspeed_config_file")
        return [result()]
    shown = os.path.relpath(ds_path) if not os.path.isabs(name) else ds_path
    ds_settings = replace(settings, target="accelerate", accelerate=cfg,
                          world_size=settings.world_size or cfg.world_size)
    return [result(), lint_path(shown, ds_settings, selection, limits, rules=rules)]


def lint_project(project, path: str, limits, stdin_filename: str | None = None, training_args: dict | None = None,
                 template=None) -> list:
    """Lint one path with its settings resolved by `project` (project.settings.Project): a DeepSpeed config, stdin
    (`-`), or an Accelerate config YAML
    (which brings the DeepSpeed config it names). `template`: a Settings whose other fields (set from the
    command line only, e.g. the memory options) every file shares. Raises `UnreadableFile`."""
    from dataclasses import fields, replace

    from .base.fsio import read_roots
    from .project.settings import RESOLVED
    from .rules.rule import all_rules

    res = project.resolve(stdin_filename if path == "-" and stdin_filename else path)
    shared = {f.name: getattr(template, f.name) for f in fields(template) if f.name not in RESOLVED} \
        if template is not None else {}
    settings = res.settings(training_args=training_args, **shared)
    if training_args is not None and settings.target == "auto":
        settings.target = "hf"  # TrainingArguments means the HF Trainer reads the config
    selection = res.selection()
    rules = [*all_rules(), *res.policies] if res.policies else None
    if path != "-" and limits.roots is None:  # reads stay in the tree (docs/security.md), the DeepSpeed config
        limits = replace(limits, roots=read_roots(path))  # an Accelerate YAML names included
    if path == "-":
        data = sys.stdin.buffer.read(limits.max_bytes + 1)
        return [lint_bytes(data, stdin_filename or "<stdin>", settings, selection, limits, rules)]
    if path.lower().endswith((".yaml", ".yml")):  # hf.is_yaml (hf is imported only for YAML files)
        return lint_accelerate(path, settings, selection, limits, rules)
    return [lint_path(path, settings, selection, limits, rules)]
