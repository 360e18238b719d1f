"""The rules of one run: the built-in rules, the engine-level codes and a project's policy rules, as one object.

A `RuleSet` is a value: it is built for a run (`RuleSet.builtin()`, then `with_policies(...)` for a project that
loads policy rules) and handed to the engine, the `--select` checks, `zerolint rules` and the reporters. Nothing
about it lives in a module global; the rule modules themselves are imported once by Python's import system, so
building a RuleSet again only lists the package and reads `sys.modules`.

The built-in rules are the modules of `zerolint.rules.builtin` (every module there is a rule, one per file); the
engine-level codes (ZL090, ZL52x, ZL99x) are `engine_rules.ENGINE_RULES`.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections import Counter
from collections.abc import Iterable

from ..base.record import Frozen
from .engine_rules import ENGINE_RULES
from .rule import Rule

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

BUILTIN_PACKAGE = "zerolint.rules.builtin"


class RuleSet(Frozen):
    """`rules`: the built-in rules; `engine`: codes reported outside the engine, known for selection and metadata
    only; `policies`: a project's policy rules (project/policy.py), which have a Rule's attributes. The engine runs
    `checks` (the rules, then the policies). Immutable; equal only to itself."""

    _fields = ("rules", "engine", "policies")
    rules: tuple[Rule, ...]
    engine: tuple[Rule, ...]
    policies: tuple[Any, ...]
    checks: tuple[Any, ...]  # the rules, then the policies (not a field)
    _index: dict[str, Any] | None  # not a field

    def __init__(self, rules: tuple[Rule, ...], engine: tuple[Rule, ...] = ENGINE_RULES,
                 policies: tuple[Any, ...] = ()) -> None:
        self._set("rules", rules)
        self._set("engine", engine)
        self._set("policies", policies)
        self._set("checks", rules + policies)
        self._set("_index", None)  # code/name/alias -> rule, built on the first lookup

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @classmethod
    def builtin(cls, package: str = BUILTIN_PACKAGE) -> RuleSet:
        """The built-in rules (sorted by code) and the engine-level codes. Cheap after the first call in a process:
        the rule modules are already imported."""
        return cls(tuple(load_rules(package)))

    @classmethod
    def of(cls, rules: Iterable[Rule]) -> RuleSet:
        """Exactly these rules (tests and tools that run one rule); the engine-level codes are still known."""
        return cls(tuple(rules))

    def with_policies(self, policy_rules: Iterable[Any]) -> RuleSet:
        """A new RuleSet that also runs `policy_rules`; this one is unchanged. A code already known is refused."""
        added = tuple(policy_rules)
        if not added:
            return self
        taken = {r.code for r in self.known()}
        clash = sorted({r.code for r in added if r.code in taken} |
                       {c for c, n in Counter(r.code for r in added).items() if n > 1})
        if clash:
            raise ValueError(f"policy rule ids already defined: {', '.join(clash)}")
        return RuleSet(self.rules, self.engine, self.policies + added)

    def known(self) -> list[Any]:
        """Every code this run can report: built-in rules, engine-level codes, policy rules."""
        return [*self.rules, *self.engine, *self.policies]

    def unknown(self, code: str) -> str | None:
        """Why a --select/--ignore/--severity code names no rule of this set ("unknown rule 'ZL9'; did you mean
        ...?"), or None when it names one (a code, a code prefix, a name, an alias, ALL)."""
        rules = self.known()
        if code.upper() in ("ALL", "ZL") or any(
                code.lower() == r.name or r.code.startswith(code.upper()) or code in r.aliases for r in rules):
            return None
        from ..base.suggest import closest

        hint = closest(code, [r.code for r in rules] + [r.name for r in rules])
        return f"unknown rule {code!r}" + (f"; did you mean {hint!r}?" if hint else "")

    def find(self, code_or_name: str) -> Any | None:
        """The rule with this code, name or alias (codes in any case), or None."""
        index = self._index
        if index is None:  # built on the first lookup: a plain check never asks
            index = {}  # code, name and aliases -> rule; the first one wins (ZL000 stand-ins share a code)
            for rule in (*self.rules, *self.engine, *self.policies):
                for key in (rule.code.upper(), rule.name, *rule.aliases, *(a.upper() for a in rule.aliases)):
                    index.setdefault(key, rule)
            self._set("_index", index)
        key = code_or_name.strip()
        return index.get(key.upper()) or index.get(key.lower()) or index.get(key)


def load_rules(package: str = BUILTIN_PACKAGE) -> list[Rule]:
    """Every rule module of `package` as its `RULE`, sorted by code; a module that fails to import becomes a ZL000
    stand-in that reports the failure when it runs. Duplicate codes or names are a RuntimeError."""
    found: list[Rule] = []
    for name, module in rule_modules(importlib.import_module(package)):
        if isinstance(module, Exception):  # a broken rule module must not take every other rule down
            found.append(_broken(name, module))
            continue
        rule = getattr(module, "RULE", None)
        if isinstance(rule, Rule):
            if not rule.rationale:  # the module docstring is the rule's long documentation
                rule.rationale = (module.__doc__ or "").strip()
            found.append(rule)
    dupes = [c for c, n in Counter(r.code for r in found if r.code != "ZL000").items() if n > 1]
    dupes += [n for n, k in Counter(r.name for r in found).items() if k > 1]
    if dupes:
        raise RuntimeError(f"duplicate rule codes or names: {sorted(dupes)}")
    return sorted(found, key=lambda r: r.code)


def rule_modules(package) -> list[tuple[str, object]]:
    """(name, module, or the exception its import raised) for every module of the package, in name order.

    Plain imports: Python's own .pyc cache makes them cheap, and nothing is written into the installed package at
    run time (an earlier bundle cache in rules/__pycache__ did, and loaded code from it unchecked)."""
    out: list[tuple[str, object]] = []
    for name in _module_names(package):
        qualified = f"{package.__name__}.{name}"
        try:
            out.append((name, sys.modules.get(qualified) or importlib.import_module(qualified)))
        except Exception as exc:  # a broken rule module must not take every other rule down
            out.append((name, exc))
    return out


def _module_names(package) -> list[str]:
    """The public module names of a package, sorted. A directory listing of the `.py` files (pkgutil takes ~0.6 ms
    for the same answer); pkgutil for anything else (a zip, a sourceless install)."""
    names: set[str] = set()
    for folder in package.__path__:
        try:
            files = os.listdir(folder)
        except OSError:
            files = []
        py = {f[:-3] for f in files if f.endswith(".py")}
        if not py:
            import pkgutil  # only for a zip or sourceless install; a plain install never imports it

            py = {i.name for i in pkgutil.iter_modules([folder])}
        names |= {n for n in py if n.isidentifier() and not n.startswith("_")}
    return sorted(names)


def _broken(module: str, exc: Exception) -> Rule:
    """Stands in for a rule module that failed to import; running it yields an internal-error diagnostic."""
    rule = Rule(code="ZL000", name=f"broken-{module.replace('_', '-').lower()}", severity="error",
                summary=f"rule module {module} failed to import", evidence=f"{type(exc).__name__}: {exc}")

    def check(view):
        raise RuntimeError(f"rule module {module} failed to import: {type(exc).__name__}: {exc}")

    rule.func = check
    return rule
