"""What a rule is: metadata plus a `check(view)` generator of findings.

A rule lives in one small module `zlNNN_name.py` in `zerolint.rules.builtin`:

    '''Rationale: why this matters, what DeepSpeed does with it. (The docstring is the rule's long docs.)'''
    from ..rule import Rule

    RULE = Rule(code="ZL123", name="slug-name", severity="error", summary="...", versions=">=0.17.1",
                evidence="https://github.com/deepspeedai/DeepSpeed/...")

    @RULE.check
    def check(view):
        yield view.finding("/pointer", "message", help="how to fix it")

Its bad and good examples live in `data/rule_cases/<CODE>.toml`; they are run as tests and rendered into the
rule's docs page. `RuleSet.builtin()` (ruleset.py) finds rules by listing that package; nothing knows them by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from ..base.record import Record
from ..model.diagnostics import DOCS_BASE, Finding, Severity

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from ..model.view import View

TARGETS = ("deepspeed", "hf", "accelerate")
class Rule(Record):
    """A rule's metadata and its check function.

    `versions`: the DeepSpeed versions the rule applies to, e.g. ">=0.19.7" ("" = all); `evidence`: a URL or
    source citation backing the rule; `targets`: the consumers it applies to; `fixable`: "safe" | "unsafe" |
    "alternatives" | None, for docs and `zerolint rules`; `aliases`: old codes/names kept working after a rename;
    `rationale`: filled from the module docstring."""

    _fields = ("code", "name", "severity", "summary", "versions", "evidence", "targets", "fixable", "aliases",
               "rationale", "func")
    code: str
    name: str
    severity: str
    summary: str
    versions: str
    evidence: str
    targets: tuple[str, ...]
    fixable: str | None
    aliases: tuple[str, ...]
    rationale: str
    func: Callable[[View], Iterable[Finding]] | None

    def __init__(self, code: str, name: str, severity: str, summary: str, versions: str = "", evidence: str = "",
                 targets: tuple[str, ...] = TARGETS, fixable: str | None = None, aliases: tuple[str, ...] = (),
                 rationale: str = "", func: Callable[[View], Iterable[Finding]] | None = None) -> None:
        if not re.fullmatch(r"ZL\d{3}", code):
            raise ValueError(f"rule code {code!r} must be ZL followed by three digits")
        if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", name):
            raise ValueError(f"rule name {name!r} must be a lower-case slug")
        Severity.parse(severity)
        self.code = code
        self.name = name
        self.severity = severity
        self.summary = summary
        self.versions = versions
        self.evidence = evidence
        self.targets = targets
        self.fixable = fixable
        self.aliases = aliases
        self.rationale = rationale
        self.func = func

    @property
    def default_severity(self) -> Severity:
        return Severity.parse(self.severity)

    @property
    def url(self) -> str:
        return f"{DOCS_BASE}/{self.code}.md"

    def check(self, func: Callable[["View"], Iterable[Finding]]) -> Callable[["View"], Iterable[Finding]]:
        self.func = func
        return func

    def run(self, view: "View") -> Iterator[Finding]:
        if self.func is None:
            raise RuntimeError(f"rule {self.code} has no check function")
        yield from self.func(view)
