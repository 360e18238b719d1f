"""Diagnostics: what a rule found, where, and how to fix it. Reporters and the fixer only consume these."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
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


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] (character offsets into the original text) with `text`."""

    start: int
    end: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "text": self.text}


@dataclass(frozen=True)
class Fix:
    """A set of edits applied together. `safe` fixes keep the config's meaning for DeepSpeed (or restore the
    meaning its author evidently intended with no other reading); unsafe ones change behaviour."""

    description: str
    edits: tuple[Edit, ...]
    safe: bool = True
    # When a diagnostic offers alternatives (keep bf16 / keep fp16), `choice` names this one; `--fix` applies a
    # choice only when asked for it (`--prefer`) or when it is the rule's documented default.
    choice: str | None = None
    default: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "applicability": "safe" if self.safe else "unsafe",
            "choice": self.choice,
            "edits": [e.to_json() for e in self.edits],
        }


@dataclass(frozen=True)
class Related:
    """A secondary location, e.g. the first of two duplicate keys."""

    message: str
    line: int
    column: int
    end_line: int
    end_column: int
    pointer: str = ""


FAILS_AT = ("parse", "initialize", "step", None)


@dataclass
class Finding:
    """A rule's raw result (made by the view); the engine turns it into a located `Diagnostic`."""

    pointer: str
    message: str
    help: str | None = None
    at: str = "key"  # "key" | "value" | "member": which part of the member the caret goes under
    span: tuple[int, int] | None = None  # explicit character span (parse findings); overrides `at`
    severity: Severity | None = None  # per-finding severity, when a rule grades its cases
    fixes: list[Fix] = field(default_factory=list)
    related: list[tuple[str | tuple[int, int], str]] = field(default_factory=list)  # (pointer or span, message)
    # When DeepSpeed fails on what this finding reports, as the message claims: "parse" (DeepSpeedConfig(...)
    # raises), "initialize" (deepspeed.initialize raises), "step" (the first training step raises), or None (no
    # claim of a failure: a silent no-op, a risk, a style issue). tests/differential holds "parse" claims to
    # DeepSpeed's own parse.
    fails_at: str | None = None

    def __post_init__(self) -> None:
        if self.fails_at not in FAILS_AT:
            raise ValueError(f"fails_at must be one of {FAILS_AT}, not {self.fails_at!r}")


@dataclass
class Diagnostic:
    """One finding, located in its file: what the reporters and the fixer consume."""

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
    help: str | None = None
    url: str | None = None
    fixes: list[Fix] = field(default_factory=list)
    related: list[Related] = field(default_factory=list)
    start: int = 0  # character offsets of the highlighted span, for the fixer and snippets
    end: int = 0
    fails_at: str | None = None  # "parse" | "initialize" | "step" | None: see Finding.fails_at
    # The rule that made it (a Rule or a policy rule), for reporters that describe rules (SARIF); None when the
    # diagnostic was made outside the engine. Not part of the diagnostic's value.
    rule: Any = field(default=None, repr=False, compare=False)

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
        return out
