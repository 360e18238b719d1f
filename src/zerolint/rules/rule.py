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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from ..model.diagnostics import DOCS_BASE, Finding, Severity

if TYPE_CHECKING:
    from ..model.view import View

TARGETS = ("deepspeed", "hf", "accelerate")
@dataclass
class Rule:
    """A rule's metadata and its check function."""

    code: str
    name: str
    severity: str
    summary: str
    versions: str = ""  # DeepSpeed versions the rule applies to, e.g. ">=0.19.7"; "" = all
    evidence: str = ""  # a URL or source citation backing the rule
    targets: tuple[str, ...] = TARGETS  # consumers the rule applies to
    fixable: str | None = None  # "safe" | "unsafe" | "alternatives" | None, for docs and `zerolint rules`
    aliases: tuple[str, ...] = ()  # old codes/names kept working after a rename
    rationale: str = ""  # filled from the module docstring
    func: Callable[["View"], Iterable[Finding]] | None = None

    def __post_init__(self) -> None:
        if not re.fullmatch(r"ZL\d{3}", self.code):
            raise ValueError(f"rule code {self.code!r} must be ZL followed by three digits")
        if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", self.name):
            raise ValueError(f"rule name {self.name!r} must be a lower-case slug")
        Severity.parse(self.severity)

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
