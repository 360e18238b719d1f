"""What a rule is: metadata plus a `check(view)` generator of findings.

A rule lives in one small module `zlNNN_name.py` in this package (`zerolint.rules`):

    '''Rationale: why this matters, what DeepSpeed does with it. (The docstring is the rule's long docs.)'''
    from .rule import Rule

    RULE = Rule(code="ZL123", name="slug-name", severity="error", summary="...", versions=">=0.17.1",
                evidence="https://github.com/deepspeedai/DeepSpeed/...")

    @RULE.check
    def check(view):
        yield view.finding("/pointer", "message", help="how to fix it")

Its bad and good examples live in `data/rule_cases/<CODE>.toml`; they are run as tests and rendered into the
rule's docs page. The engine finds rules by listing the package; it knows none of them by name.
"""

from __future__ import annotations

import importlib
import pkgutil
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


_REGISTRY: list[Rule] | None = None


def all_rules() -> list[Rule]:
    """Every built-in rule, sorted by code. Imported once per process."""
    global _REGISTRY
    if _REGISTRY is None:
        from .. import rules as package

        found: list[Rule] = []
        for name, module in _rule_modules(package):
            if isinstance(module, Exception):  # a broken rule module must not take every other rule down
                found.append(_broken(name, module))
                continue
            rule = getattr(module, "RULE", None)
            if isinstance(rule, Rule):
                rule.rationale = (module.__doc__ or "").strip()
                found.append(rule)
        codes = [r.code for r in found if r.code != "ZL000"]
        names = [r.name for r in found]
        dupes = {c for c in codes if codes.count(c) > 1} | {n for n in names if names.count(n) > 1}
        if dupes:
            raise RuntimeError(f"duplicate rule codes or names: {sorted(dupes)}")
        _REGISTRY = sorted(found, key=lambda r: r.code)
    return _REGISTRY


_RULE_MODULE = re.compile(r"zl\d{3}_\w+")


def _rule_modules(package) -> list[tuple[str, object]]:
    """(name, module, or the exception its import raised) for every rule module, in name order.

    Plain imports: Python's own .pyc cache makes them cheap, and nothing is written into the installed package at
    run time (an earlier bundle cache in rules/__pycache__ did, and loaded code from it unchecked)."""
    out: list[tuple[str, object]] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not _RULE_MODULE.match(info.name):  # the package also holds the engine, the registry, cases, docs
            continue
        try:
            out.append((info.name, importlib.import_module(f"{package.__name__}.{info.name}")))
        except Exception as exc:  # a broken rule module must not take every other rule down
            out.append((info.name, exc))
    return out


def _broken(module: str, exc: Exception) -> Rule:
    """Stands in for a rule module that failed to import; running it yields an internal-error diagnostic."""
    rule = Rule(code="ZL000", name=f"broken-{module.replace('_', '-').lower()}", severity="error",
                summary=f"rule module {module} failed to import", evidence=f"{type(exc).__name__}: {exc}")

    def check(view):
        raise RuntimeError(f"rule module {module} failed to import: {type(exc).__name__}: {exc}")

    rule.func = check
    return rule


def find_rule(code_or_name: str) -> Rule | None:
    key = code_or_name.strip()
    for r in all_rules():
        if key.upper() == r.code or key.lower() == r.name or key in r.aliases or key.upper() in r.aliases:
            return r
    return None
