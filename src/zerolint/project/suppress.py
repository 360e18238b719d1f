"""Suppressions that fit JSON (which has no comments to put a `noqa` in).

1. Pointer-scoped entries in the zerolint config, for findings you accept on purpose:

       [tool.zerolint.suppress]
       "ds/zero3.json" = [{ code = "ZL203", pointer = "/zero_optimization/stage3_max_live_parameters",
                            reason = "kept for the stage-3 variant of this file" }]

   The file key is a path or glob relative to the config file's directory; `code` is a code or a rule name.
2. A baseline file (`zerolint check --write-baseline [FILE]`, then `--baseline FILE` or `baseline = FILE` in the
   config), for adopting zerolint on a tree that already has findings: entries are keyed by file (relative to the
   baseline's directory), code and JSON pointer, with a count, never by line, so edits elsewhere in the file do
   not break it; new findings, even of the same code elsewhere, are reported.

An entry that matched nothing is reported as ZL090 `unused-suppression` (a warning) where it is written, but only
for files checked in this run and rules that ran on them: pre-commit's subset runs report nothing about the rest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence

from ..base.record import Record
from ..model.diagnostics import Diagnostic
from ..model.document import Document, parse
from ..rules.engine_rules import UNUSED_SUPPRESSION
from ..rules.ruleset import RuleSet
from .settings import ConfigError, ConfigFile, Project

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

BASELINE_FORMAT = 1


class Entry(Record):
    """A suppression or baseline entry. `origin`: the config or baseline file that holds it (absolute); `span`: its
    character span in the origin's text; `count`: how many findings it covers (baseline), None for any number
    (config); `used`: how many it has covered in this run."""

    _fields = ("file", "code", "pointer", "origin", "span", "count", "reason", "used")
    file: str
    code: str
    pointer: str
    origin: str
    span: tuple[int, int]
    count: int | None
    reason: str
    used: int

    def __init__(self, file: str, code: str, pointer: str, origin: str, span: tuple[int, int],
                 count: int | None = None, reason: str = "", used: int = 0) -> None:
        self.file = file
        self.code = code
        self.pointer = pointer
        self.origin = origin
        self.span = span
        self.count = count
        self.reason = reason
        self.used = used

    def covers(self, d: Diagnostic) -> bool:
        code_ok = self.code.upper() == d.code.upper() or self.code.lower() == d.name
        return code_ok and self.pointer == d.pointer and (self.count is None or self.used < self.count)

    def about(self, path: str, resolved: Any, baseline: bool) -> bool:
        """Whether this entry is about `path` (a file checked in this run)."""
        if baseline:
            return self.file == _rel(path, os.path.dirname(self.origin))
        cfg = resolved.config
        return cfg is not None and cfg.path == self.origin and cfg.matches(path, self.file)


def _rel(path: str, base_dir: str) -> str:
    return os.path.relpath(os.path.abspath(path), base_dir).replace(os.sep, "/")


# -- config entries -------------------------------------------------------------------------------------------------

def _toml_span(text: str, file_key: str, entry: dict[str, str]) -> tuple[int, int]:
    """Best-effort position of a suppress entry in the TOML text (tomllib keeps none): the pointer string on a line
    that also names the code, else the pointer, else the file key."""
    candidates = []
    for quote in ('"', "'"):
        literal = f"{quote}{entry['pointer']}{quote}"
        start = 0
        while (at := text.find(literal, start)) >= 0:
            candidates.append((at, at + len(literal)))
            start = at + 1
    line_of = lambda at: text[text.rfind("\n", 0, at) + 1: (text.find("\n", at) + 1 or len(text) + 1) - 1]  # noqa
    for s, e in candidates:
        if entry["code"] in line_of(s):
            return s, e
    if candidates:
        return candidates[0]
    at = text.find(file_key)
    return (at, at + len(file_key)) if at >= 0 else (0, 0)


def config_entries(cfg: ConfigFile, text: str) -> list[Entry]:
    out = []
    for file_key, entries in cfg.values.get("suppress", {}).items():
        for e in entries:
            out.append(Entry(file_key, e["code"], e["pointer"], cfg.path, _toml_span(text, file_key, e),
                             reason=e.get("reason", "")))
    return out


# -- baseline -------------------------------------------------------------------------------------------------------

def load_baseline(path: str, roots: tuple[str, ...] | None = None) -> tuple[list[Entry], Document]:
    """The entries of a baseline file, read only as base/fsio.read_setting_file allows (inside `roots`: the
    settings file's tree for a `baseline` key, the user's choice for --baseline; a regular file; a size limit)."""
    from ..base.fsio import SettingFileRefused, read_setting_file

    if not os.path.lexists(path):
        raise ConfigError(f"{path}: baseline file not found (create it with `zerolint check --write-baseline`)")
    try:
        text = read_setting_file(path, "baseline", roots)
    except SettingFileRefused as exc:
        raise ConfigError(str(exc)) from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path}: not a zerolint baseline (invalid JSON: {exc})") from None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list) or data.get("zerolint-baseline") != BASELINE_FORMAT:
        raise ConfigError(f'{path}: not a zerolint baseline (expected {{"zerolint-baseline": 1, "entries": [...]}})')
    doc = parse(text, path)
    out = []
    for i, e in enumerate(entries):
        if not (isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("file", "code", "pointer"))
                and isinstance(e.get("count", 1), int)):
            raise ConfigError(f"{path}: entries[{i}] needs file, code and pointer strings and an integer count")
        node = doc.node(f"/entries/{i}/pointer") or doc.node(f"/entries/{i}")
        span = (node.start, node.end) if node is not None else (0, 0)
        out.append(Entry(e["file"], e["code"], e["pointer"], os.path.abspath(path), span, count=e.get("count", 1)))
    return out, doc


def write_baseline(path: str, diagnostics: Sequence[Diagnostic]) -> int:
    """Write every finding (but ZL090) as a baseline entry; returns the number of entries. Refuses to replace a
    file that is not a zerolint baseline (`--write-baseline ds_config.json` must not eat a config)."""
    if os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                ok = json.load(f).get("zerolint-baseline") == BASELINE_FORMAT
        except (OSError, ValueError, AttributeError):
            ok = False
        if not ok:
            raise ConfigError(f"{path}: exists and is not a zerolint baseline; not overwriting it")
    base_dir = os.path.dirname(os.path.abspath(path))
    grouped: dict[tuple[str, str, str], dict[str, Any]] = {}
    for d in diagnostics:
        if d.code == UNUSED_SUPPRESSION.code or d.file.startswith("<") or d.file == "-":
            continue
        key = (_rel(d.file, base_dir), d.code, d.pointer)
        if key in grouped:
            grouped[key]["count"] += 1
        else:
            grouped[key] = {"file": key[0], "code": d.code, "pointer": d.pointer, "count": 1, "message": d.message}
    payload = {"zerolint-baseline": BASELINE_FORMAT, "entries": [grouped[k] for k in sorted(grouped)]}
    from ..base.fsio import OutputError, write_output  # whole or nothing, never through a link

    try:
        write_output(path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    except OutputError as e:
        raise ConfigError(str(e)) from None
    return len(grouped)


# -- applying them ----------------------------------------------------------------------------------------------------

class Suppressions:
    """Filters a run's findings through the config entries and baselines that apply to each file."""

    def __init__(self, project: Project, use_baseline: bool = True) -> None:
        self.project = project
        self.use_baseline = use_baseline
        self._config: dict[str, list[Entry]] = {}
        self._baseline: dict[str, list[Entry]] = {}
        self.documents: dict[str, Document] = {}  # origin path -> its text, for positions
        self.shown: dict[str, Document] = {}  # display path -> document, for the reporters' snippets

    def _config_entries(self, cfg: ConfigFile | None) -> list[Entry]:
        if cfg is None or not cfg.values.get("suppress"):
            return []
        if cfg.path not in self._config:
            with open(cfg.path, encoding="utf-8") as f:
                text = f.read()
            self.documents[cfg.path] = Document(path=cfg.path, text=text)
            self._config[cfg.path] = config_entries(cfg, text)
        return self._config[cfg.path]

    def _baseline_entries(self, path: str | None, roots: tuple[str, ...] | None = None) -> list[Entry]:
        if path is None or not self.use_baseline:
            return []
        if path not in self._baseline:
            entries, doc = load_baseline(path, roots)
            self.documents[path] = doc
            self._baseline[path] = entries
        return self._baseline[path]

    def _entries_for(self, path: str, resolved: Any) -> tuple[list[Entry], list[Entry]]:
        """(config entries, baseline entries) about `path`."""
        cfg_entries = [e for e in self._config_entries(resolved.config) if resolved.config.matches(path, e.file)]
        baseline = resolved.baseline_path()
        base_entries = [e for e in self._baseline_entries(baseline, resolved.baseline_roots())
                        if e.file == _rel(path, os.path.dirname(baseline))]
        return cfg_entries, base_entries

    def hides(self, path: str) -> Callable[[Diagnostic], bool]:
        """Whether a finding in `path` is hidden by a suppression or a baseline entry (counts aside), for --fix:
        a finding accepted on purpose is not "fixed" away (the fixer leaves it alone). Marks nothing as used."""
        cfg_entries, base_entries = self._entries_for(path, self.project.resolve(path))
        entries = [*cfg_entries, *base_entries]

        def hidden(d: Diagnostic) -> bool:
            return any(e.code.upper() == d.code.upper() or e.code.lower() == d.name for e in entries
                       if e.pointer == d.pointer)
        return hidden

    def apply(self, results: Sequence[Any]) -> tuple[list[Diagnostic], list[Diagnostic]]:
        """(findings kept, ZL090 findings for unused entries)."""
        kept: list[Diagnostic] = []
        checked: list[tuple[str, Any]] = []  # (path, resolved)
        for r in results:
            resolved = self.project.resolve(r.path)
            checked.append((r.path, resolved))
            cfg_entries, base_entries = self._entries_for(r.path, resolved)
            for d in r.diagnostics:
                entry = next((e for e in cfg_entries if e.covers(d)), None) or \
                    next((e for e in base_entries if e.covers(d)), None)
                if entry is None:
                    kept.append(d)
                else:
                    entry.used += 1
        return kept, self._unused(checked)

    def hidden_by(self) -> dict[str, int]:
        """{config or baseline file: how many findings its entries hid} (for the summary)."""
        return {origin: sum(e.used for e in entries) for origin, entries in [*self._config.items(),
                                                                               *self._baseline.items()]}

    def _unused(self, checked: list[tuple[str, Any]]) -> list[Diagnostic]:
        out = []
        builtin = None  # listed only for an entry left over: most runs have none
        for origin, entries in [*self._config.items(), *self._baseline.items()]:
            is_baseline = origin in self._baseline
            for e in entries:
                left = (e.count - e.used) if e.count is not None else (0 if e.used else 1)
                if left <= 0:
                    continue
                # only entries about files checked in this run, for rules that ran on them
                here = [res for path, res in checked if e.about(path, res, is_baseline)]
                if not here:
                    continue
                builtin = builtin or RuleSet.builtin()
                rule = here[0].ruleset(builtin).find(e.code)  # its policies are known too
                selection = here[0].selection()
                if rule is not None and not any(res.selection().enabled(rule) for res in here):
                    continue
                if not selection.enabled(UNUSED_SUPPRESSION):
                    continue
                out.append(self._diagnostic(e, origin, left, is_baseline, rule is None,
                                            selection.severity_for(UNUSED_SUPPRESSION, None)))
        return out

    def _diagnostic(self, e: Entry, origin: str, left: int, is_baseline: bool, stale: bool, severity) -> Diagnostic:
        from ..base.paths import display_path

        doc = self.documents[origin]
        (line, col), (end_line, end_col) = doc.position(e.span[0]), doc.position(e.span[1])
        what = "baseline entry" if is_baseline else "suppression"
        times = f" ({left} of {e.count} unused)" if e.count and e.count > 1 and left != e.count else ""
        why = f"{e.code} is not a known rule" if stale else f"no {e.code} finding at {e.pointer or '(top level)'}"
        message = f"unused {what} for {e.file}: {why}{times}"
        help_ = ("regenerate the baseline with `zerolint check --write-baseline`" if is_baseline
                 else "delete this entry from [tool.zerolint.suppress]")
        shown = display_path(origin)
        self.shown.setdefault(shown, Document(path=shown, text=doc.text))
        return Diagnostic(file=shown, code=UNUSED_SUPPRESSION.code, name=UNUSED_SUPPRESSION.name, severity=severity,
                          message=message, pointer=e.pointer, line=line, column=col, end_line=end_line,
                          end_column=end_col, help=help_, url=UNUSED_SUPPRESSION.url, start=e.span[0], end=e.span[1])

