"""Run the rules over a document and turn their findings into located diagnostics."""

from __future__ import annotations

import re

from ..base.record import Record
from ..model.diagnostics import Diagnostic, Finding, Related, Severity
from ..model.document import Document
from ..model.view import Settings, View
from .rule import Rule
from .ruleset import RuleSet

INTERNAL_ERROR = ("ZL000", "internal-error")
_CODE_PREFIX = re.compile(r"[A-Z]{2,}\d*")


class Selection(Record):
    """Which rules run and how loud they are. Entries are codes (`ZL101`), code prefixes (`ZL1`), rule names,
    or `ALL`; `severity` maps a code, name or prefix to error|warning|info."""

    _fields = ("select", "ignore", "severity")
    select: list[str]
    ignore: list[str]
    severity: dict[str, str]

    def __init__(self, select: list[str] | None = None, ignore: list[str] | None = None,
                 severity: dict[str, str] | None = None) -> None:
        self.select = ["ALL"] if select is None else select
        self.ignore = [] if ignore is None else ignore
        self.severity = {} if severity is None else severity
        # enabled(), by (select, ignore, rule code, name, aliases): every file asks again for every rule. It lives
        # and dies with this Selection (one per resolved settings), never in the module.
        self._enabled: dict[tuple, bool] = {}

    @staticmethod
    def _matches(rule: Rule, entry: str) -> bool:
        e = entry.strip()
        if e.upper() == "ALL":
            return True
        if e.lower() == rule.name or e in rule.aliases:
            return True
        # A code or code prefix: ZL1, ZL101, or a user policy's ORG, ORG001 (letters, then digits).
        return _CODE_PREFIX.fullmatch(e.upper()) is not None and rule.code.startswith(e.upper())

    def _specificity(self, rule: Rule, entries: list[str]) -> int:
        best = -1
        for e in entries:
            if self._matches(rule, e):
                best = max(best, 99 if e.lower() == rule.name else 0 if e.upper() == "ALL" else len(e))
        return best

    def enabled(self, rule: Rule) -> bool:
        # The most specific entry wins, as in ruff: --select ZL1 --ignore ZL101 keeps ZL102. The key holds the
        # entries too, so a Selection whose lists are edited afterwards still answers right.
        key = (tuple(self.select), tuple(self.ignore), rule.code, rule.name, rule.aliases)
        hit = self._enabled.get(key)
        if hit is None:
            hit = self._enabled[key] = self._specificity(rule, self.select) > self._specificity(rule, self.ignore)
        return hit

    def severity_for(self, rule: Rule, found: Severity | None) -> Severity:
        best, level = -1, None
        for entry, sev in self.severity.items():
            spec = self._specificity(rule, [entry])
            if spec > best:
                best, level = spec, sev
        if level is not None:
            return Severity.parse(level)
        return found or rule.default_severity


def run_rules(doc: Document, settings: Settings | None = None, selection: Selection | None = None,
              ruleset: RuleSet | None = None) -> list[Diagnostic]:
    """Every rule of `ruleset` (default: `RuleSet.builtin()`) that `selection` enables and that applies to the
    config's target and DeepSpeed version, as located diagnostics in order."""
    view = View(doc, settings)
    selection = selection or Selection()
    ruleset = ruleset or RuleSet.builtin()
    out: list[Diagnostic] = []
    for rule in ruleset.checks:
        if not selection.enabled(rule) or view.target not in rule.targets or not view.since(rule.versions or "*"):
            continue
        found = 0
        try:
            for f in rule.run(view):
                if found == MAX_FINDINGS_PER_RULE:  # a hostile file: stop paying for this rule (issue 22, item 3)
                    out.append(_stopped(doc, rule, f, ruleset))
                    break
                severity = selection.severity_for(rule, f.severity)
                out.append(locate(doc, rule, _say_the_guess(view, rule, f, severity), severity))
                found += 1
        except Exception as exc:  # a broken rule must not take the run down
            out.append(internal_error(doc, rule, exc))
    out.sort(key=Diagnostic.sort_key)
    return out


def _say_the_guess(view: View, rule: Rule, f: Finding, severity: Severity) -> Finding:
    """An error that holds for one consumer only, where that consumer is zerolint's guess (`--target auto`, from the
    file's "auto" values), says so: the same file passed to deepspeed.initialize gets another verdict (ZL504)."""
    if view.target_requested != "auto" or "deepspeed" in rule.targets or severity is not Severity.ERROR:
        return f
    if getattr(view.settings, "training_args", None) or getattr(view.settings, "accelerate", None):
        return f  # TrainingArguments or an Accelerate YAML name the consumer: not a guess
    guess = (f" (as {view.consumer} reads it: the consumer is guessed from the file's \"auto\" values; --target "
             "says which)")
    return Finding(f.pointer, f.message + guess, help=f.help, at=f.at, span=f.span, severity=f.severity,
                   fixes=f.fixes, related=f.related, fails_at=f.fails_at)


# Findings one rule reports in one document before it stops looking: a DeepSpeed config has a few, and each costs up
# to ~0.1 ms, so a file of tens of thousands of bad keys stays cheap. The reports show at most 1,000 per file anyway.
MAX_FINDINGS_PER_RULE = 1_000


def _stopped(doc: Document, rule: Rule, next_finding: Finding, ruleset: RuleSet) -> Diagnostic:
    """ZL007 at the first finding a rule was not let report: it stopped looking in this file."""
    limit = ruleset.find("ZL007") or rule
    stop = Finding(next_finding.pointer, f"{rule.code} reported {MAX_FINDINGS_PER_RULE:,} findings in this file and "
                   "stopped looking for more here; the file was not checked past this point for it",
                   span=next_finding.span, at=next_finding.at,
                   help="a DeepSpeed config has a few findings: check that this is the file you meant")
    return locate(doc, limit, stop, limit.default_severity)


def _span(doc: Document, f: Finding) -> tuple[int, int]:
    if f.span is not None:
        return f.span
    pointer = f.pointer
    while True:
        node = doc.node(pointer)
        member = doc.member(pointer)
        if node is not None:
            if member is not None and f.at == "key":
                return member.key_start, member.key_end
            if member is not None and f.at == "member":
                return member.key_start, node.end
            if node.members is not None or node.items is not None:
                return node.start, node.start + 1  # the opening bracket; the whole block would be noise
            return node.start, node.end
        if not pointer:
            return 0, 0
        pointer = pointer[: pointer.rfind("/")]  # the nearest existing ancestor


def locate(doc: Document, rule: Rule, f: Finding, severity: Severity) -> Diagnostic:
    start, end = _span(doc, f)
    line, col = doc.position(start)
    end_line, end_col = doc.position(max(end, start))
    related = []
    for where, message in f.related:
        if isinstance(where, tuple):
            rs, re_ = where
            rptr = ""
        else:
            rs, re_ = _span(doc, Finding(where, ""))
            rptr = where
        (rl, rc), (rel, rec) = doc.position(rs), doc.position(re_)
        related.append(Related(message, rl, rc, rel, rec, rptr))
    return Diagnostic(
        file=doc.path, code=rule.code, name=rule.name, severity=severity, message=f.message, pointer=f.pointer,
        line=line, column=col, end_line=end_line, end_column=end_col, help=f.help, url=rule.url,
        fixes=list(f.fixes), related=related, start=start, end=end, fails_at=f.fails_at, rule=rule,
    )


def internal_error(doc: Document, rule: Rule, exc: Exception) -> Diagnostic:
    import traceback  # only when a rule crashed: not on every run's import path

    where = traceback.extract_tb(exc.__traceback__)[-1]
    return Diagnostic(
        file=doc.path, code=INTERNAL_ERROR[0], name=INTERNAL_ERROR[1], severity=Severity.ERROR,
        message=f"rule {rule.code} ({rule.name}) crashed: {type(exc).__name__}: {exc} "
                f"[{where.filename.rsplit('/', 1)[-1]}:{where.lineno}]; the other rules ran",
        pointer="", line=1, column=1, end_line=1, end_column=1,
        help="please report this with the config that triggers it", url=None,
    )
