"""Diagnostics: what a rule found, where, and how to fix it. Reporters and the fixer only consume these."""

from __future__ import annotations

from enum import Enum

from ..base.record import Frozen, Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

DOCS_BASE = "https://github.com/zerolint/zerolint/blob/main/docs/rules"


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]

    @classmethod
    def parse(cls, value: "str | Severity") -> "Severity":
        try:
            return cls(value.lower() if isinstance(value, str) else value)
        except ValueError:
            raise ValueError(f"unknown severity {value!r} (use error, warning or info)") from None


class Edit(Frozen):
    """Replace text[start:end] (character offsets into the original text) with `text`."""

    _fields = ("start", "end", "text")
    start: int
    end: int
    text: str

    def __init__(self, start: int, end: int, text: str) -> None:
        self._set("start", start)
        self._set("end", end)
        self._set("text", text)

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "text": self.text}


class Fix(Frozen):
    """A set of edits applied together. `safe` fixes keep the config's meaning for DeepSpeed (or restore the
    meaning its author evidently intended with no other reading); unsafe ones change behaviour.

    When a diagnostic offers alternatives (keep bf16 / keep fp16), `choice` names this one; `--fix` applies a
    choice only when asked for it (`--prefer`) or when it is the rule's documented default."""

    _fields = ("description", "edits", "safe", "choice", "default")
    description: str
    edits: tuple[Edit, ...]
    safe: bool
    choice: str | None
    default: bool

    def __init__(self, description: str, edits: tuple[Edit, ...], safe: bool = True, choice: str | None = None,
                 default: bool = False) -> None:
        self._set("description", description)
        self._set("edits", edits)
        self._set("safe", safe)
        self._set("choice", choice)
        self._set("default", default)

    def to_json(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "applicability": "safe" if self.safe else "unsafe",
            "choice": self.choice,
            "edits": [e.to_json() for e in self.edits],
        }


class Related(Frozen):
    """A secondary location, e.g. the first of two duplicate keys."""

    _fields = ("message", "line", "column", "end_line", "end_column", "pointer")
    message: str
    line: int
    column: int
    end_line: int
    end_column: int
    pointer: str

    def __init__(self, message: str, line: int, column: int, end_line: int, end_column: int,
                 pointer: str = "") -> None:
        self._set("message", message)
        self._set("line", line)
        self._set("column", column)
        self._set("end_line", end_line)
        self._set("end_column", end_column)
        self._set("pointer", pointer)


FAILS_AT = ("parse", "initialize", "step", None)


class Finding(Record):
    """A rule's raw result (made by the view); the engine turns it into a located `Diagnostic`.

    `at` ("key" | "value" | "member") says which part of the member the caret goes under; `span`, an explicit
    character span (parse findings), overrides it. `severity` is per finding, when a rule grades its cases.
    `related` holds (pointer or span, message) pairs. `fails_at` says when DeepSpeed fails on what this finding
    reports, as the message claims: "parse" (DeepSpeedConfig(...) raises), "initialize" (deepspeed.initialize
    raises), "step" (the first training step raises), or None (no claim of a failure: a silent no-op, a risk, a
    style issue). tests/differential holds "parse" claims to DeepSpeed's own parse."""

    _fields = ("pointer", "message", "help", "at", "span", "severity", "fixes", "related", "fails_at")
    pointer: str
    message: str
    help: str | None
    at: str
    span: tuple[int, int] | None
    severity: Severity | None
    fixes: list[Fix]
    related: list[tuple[str | tuple[int, int], str]]
    fails_at: str | None

    def __init__(self, pointer: str, message: str, help: str | None = None, at: str = "key",
                 span: tuple[int, int] | None = None, severity: Severity | None = None,
                 fixes: list[Fix] | None = None, related: list[tuple[str | tuple[int, int], str]] | None = None,
                 fails_at: str | None = None) -> None:
        if fails_at not in FAILS_AT:
            raise ValueError(f"fails_at must be one of {FAILS_AT}, not {fails_at!r}")
        self.pointer = pointer
        self.message = message
        self.help = help
        self.at = at
        self.span = span
        self.severity = severity
        self.fixes = [] if fixes is None else fixes
        self.related = [] if related is None else related
        self.fails_at = fails_at


class Diagnostic(Record):
    """One finding, located in its file: what the reporters and the fixer consume.

    `start`/`end` are the character offsets of the highlighted span, for the fixer and snippets; `fails_at` as in
    `Finding`. `rule` is the rule that made it (a Rule or a policy rule), for reporters that describe rules
    (SARIF); None when the diagnostic was made outside the engine. It is not part of the diagnostic's value.
    `uses`: where check read the repository's uses (docs/uses.md), the uses of the config this finding holds for
    (dicts: where, launcher, consumer, world_size; project/uses.py), None otherwise."""

    _fields = ("file", "code", "name", "severity", "message", "pointer", "line", "column", "end_line", "end_column",
               "help", "url", "fixes", "related", "start", "end", "fails_at", "uses")
    _extra = ("rule",)
    file: str
    code: str
    name: str
    severity: Severity
    message: str
    pointer: str
    line: int
    column: int
    end_line: int
    end_column: int
    help: str | None
    url: str | None
    fixes: list[Fix]
    related: list[Related]
    start: int
    end: int
    fails_at: str | None
    uses: list[dict[str, Any]] | None
    rule: Any  # _extra: not part of the value

    def __init__(self, file: str, code: str, name: str, severity: Severity, message: str, pointer: str, line: int,
                 column: int, end_line: int, end_column: int, help: str | None = None, url: str | None = None,
                 fixes: list[Fix] | None = None, related: list[Related] | None = None, start: int = 0,
                 end: int = 0, fails_at: str | None = None, rule: Any = None,
                 uses: list[dict[str, Any]] | None = None) -> None:
        self.file = file
        self.code = code
        self.name = name
        self.severity = severity
        self.message = message
        self.pointer = pointer
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column
        self.help = help
        self.url = url
        self.fixes = [] if fixes is None else fixes
        self.related = [] if related is None else related
        self.start = start
        self.end = end
        self.fails_at = fails_at
        self.rule = rule
        self.uses = uses

    @property
    def fix(self) -> Fix | None:
        """The fix `--fix` would apply: the only one, or the documented default among alternatives."""
        if len(self.fixes) == 1 and self.fixes[0].choice is None:
            return self.fixes[0]
        for f in self.fixes:
            if f.default:
                return f
        return None

    def sort_key(self) -> tuple:
        return (self.file, self.line, self.column, self.code, self.pointer)

    def to_json(self) -> dict[str, Any]:
        fix = self.fix
        out = {
            "file": self.file,
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "help": self.help,
            "url": self.url,
            "fix": fix.to_json() if fix else None,
            "alternatives": [f.to_json() for f in self.fixes if f is not fix],
            "related": [
                {"message": r.message, "pointer": r.pointer, "line": r.line, "column": r.column,
                 "end_line": r.end_line, "end_column": r.end_column}
                for r in self.related
            ],
        }
        if self.fails_at is not None:
            out["fails_at"] = self.fails_at
        if self.uses is not None:
            out["uses"] = self.uses
        return out
