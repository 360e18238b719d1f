"""What a rule is: metadata plus a `check(view)` generator of findings.

A rule lives in one small module under `rules/` (installed as `zerolint.rules`):

    '''Rationale: why this matters, what DeepSpeed does with it. (The docstring is the rule's long docs.)'''
    from zerolint.rule import Rule

    RULE = Rule(code="ZL123", name="slug-name", severity="error", summary="...", versions=">=0.17.1",
                evidence="https://github.com/deepspeedai/DeepSpeed/...")

    @RULE.check
    def check(view):
        yield view.finding("/pointer", "message", help="how to fix it")

Its bad and good examples live in `fixtures/rules/<CODE>.toml`; they are run as tests and rendered into the
rule's docs page. The engine finds rules by listing the package; it knows none of them by name.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from .diagnostics import DOCS_BASE, Fix, Severity

if TYPE_CHECKING:
    from .view import View

TARGETS = ("deepspeed", "hf", "accelerate")
FAILS_AT = ("parse", "initialize", "step", None)


@dataclass
class Finding:
    """A rule's raw result; the engine turns it into a located `Diagnostic`."""

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
        from . import rules as package

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


def _rule_modules(package) -> list[tuple[str, object]]:
    """(name, module, or the exception its import raised) for every rule module, in name order.

    Importing ~90 small modules one at a time costs a finder lookup, a file read and a module set-up each: several
    milliseconds of every `zerolint check`. So the compiled rule modules are also kept together in one cache file,
    `rules/__pycache__/rules-bundle.<cache tag>.marshal`, written like .pyc files are (never under
    PYTHONDONTWRITEBYTECODE) and keyed by every rule file's name, size and mtime: adding, editing or removing a rule
    makes it stale, and then the modules are imported one by one, as before, and the bundle is rewritten. The
    bundle is only a cache of the files; nothing here knows a rule by name."""
    directory = package.__path__[0] if len(package.__path__) == 1 else None
    sources = _rule_sources(directory) if directory else None
    bundle = _read_bundle(directory, sources) if sources is not None else None
    if bundle is not None:
        return [(name, _exec_rule_module(package, directory, name, code)) for name, code in bundle]
    out: list[tuple[str, object]] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        try:
            out.append((info.name, importlib.import_module(f"{package.__name__}.{info.name}")))
        except Exception as exc:
            out.append((info.name, exc))
    if sources is not None and not sys.dont_write_bytecode and not any(isinstance(m, Exception) for _, m in out):
        _write_bundle(directory, sources)
    return out


def _bundle_path(directory: str) -> str | None:
    tag = sys.implementation.cache_tag
    return os.path.join(directory, "__pycache__", f"rules-bundle.{tag}.marshal") if tag else None


def _rule_sources(directory: str) -> list[tuple[str, int, int]] | None:
    """(module name, size, mtime_ns) of every rule file; None when the directory holds anything but plain .py
    modules (a package, an extension: left to the import system)."""
    out = []
    try:
        with os.scandir(directory) as entries:
            for e in entries:
                if e.name.startswith("_"):  # __init__.py, __pycache__
                    continue
                if not (e.name.endswith(".py") and e.is_file()):
                    return None
                st = e.stat()
                out.append((e.name[:-3], st.st_size, st.st_mtime_ns))
    except OSError:
        return None
    return sorted(out)


def _read_bundle(directory: str, sources: list) -> list | None:
    import marshal

    path = _bundle_path(directory)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(data, dict) or data.get("version") != 1 or data.get("sources") != sources:
        return None
    return data.get("modules")


def _write_bundle(directory: str, sources: list) -> None:
    import marshal

    path = _bundle_path(directory)
    if path is None:
        return
    try:
        modules = []
        for name, _, _ in sources:
            file = os.path.join(directory, name + ".py")
            with open(file, "rb") as f:
                modules.append((name, compile(f.read(), file, "exec", dont_inherit=True)))
        if _rule_sources(directory) != sources:
            return  # changed while we read it
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            marshal.dump({"version": 1, "sources": sources, "modules": modules}, f)
        os.replace(tmp, path)
    except (OSError, SyntaxError, ValueError):
        pass  # a read-only install, a rule being edited: the per-module imports keep working


def _exec_rule_module(package, directory: str, name: str, code) -> object:
    """Set up one rule module from its bundled code, as the import system would (sys.modules, __file__, __spec__,
    the package attribute); the exception it raised, when it did."""
    import types
    from importlib.machinery import ModuleSpec

    fullname = f"{package.__name__}.{name}"
    if fullname in sys.modules:  # imported already (by another rule, or before the bundle existed)
        return sys.modules[fullname]
    module = types.ModuleType(fullname)
    spec = ModuleSpec(fullname, None, origin=os.path.join(directory, name + ".py"))
    spec.has_location = True
    module.__spec__, module.__file__, module.__package__ = spec, spec.origin, package.__name__
    sys.modules[fullname] = module
    try:
        exec(code, module.__dict__)
    except Exception as exc:
        sys.modules.pop(fullname, None)
        return exc
    setattr(package, name, module)
    return module


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
