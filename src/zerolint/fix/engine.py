"""Apply the fixes rules attach to their diagnostics.

`fix_text(text, path, settings, selection, unsafe=False, prefer=())` is the one entry point (the CLI's
`check --fix` / `--diff`, `upgrade` and `verify --compare-fix` all use it):

1. lint the text; pick one fix per diagnostic: the alternative named by `prefer` (`--prefer bf16`), else the
   diagnostic's `fix` (its only fix, or the rule's documented default); unsafe ones only with `unsafe=True`;
2. apply the picked fixes whose edits do not overlap (diagnostics in file order: the first wins, the rest wait
   for the next pass, when they are recomputed on the new text);
3. re-lint and verify: the new text must parse with every reader that accepted the old one (`json.loads` and
   DeepSpeed's hjson), no rule may crash, no fixed diagnostic may come back (same code at the same pointer), and
   without `unsafe` no comment may be lost (a "safe" fix that would delete one is refused: the builders keep
   comments, this catches any that does not).
   A pass that fails is retried fix by fix; a fix that fails on its own is dropped and reported in `failed`;
4. repeat until nothing is left to apply (at most `max_passes` passes).

Nothing is fixed in a document that DeepSpeed's reader cannot parse (ZL001): edits computed on a partial tree
are guesses.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ..model.diagnostics import Diagnostic, Edit, Fix
from ..model.document import Document, parse
from ..model.edits import apply_edits, overlaps
from ..model.view import Settings
from ..rules.engine import Selection, run_rules
from ..rules.ruleset import RuleSet

MAX_PASSES = 10


@dataclass
class AppliedFix:
    diagnostic: Diagnostic  # as reported on the text the fix was applied to
    fix: Fix
    reason: str = ""  # for failed fixes: why it was dropped

    @property
    def code(self) -> str:
        return self.diagnostic.code

    @property
    def pointer(self) -> str:
        return self.diagnostic.pointer

    def to_json(self) -> dict:
        d = self.diagnostic
        out = {"code": d.code, "pointer": d.pointer, "line": d.line, "column": d.column,
               "description": self.fix.description, "applicability": "safe" if self.fix.safe else "unsafe",
               "choice": self.fix.choice}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class FixPass:
    before: str
    edits: tuple[Edit, ...]
    after: str


@dataclass
class FixResult:
    text: str
    applied: list[AppliedFix] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)  # diagnostics of the fixed text
    failed: list[AppliedFix] = field(default_factory=list)  # fixes dropped: they broke parsing or did not fix
    passes: list[FixPass] = field(default_factory=list)
    document: Document | None = None  # the fixed text, parsed
    original: str = ""
    skipped: str = ""  # why nothing was attempted (e.g. a syntax error), "" otherwise

    @property
    def changed(self) -> bool:
        return self.text != self.original


def choose_fix(d: Diagnostic, unsafe: bool = False, prefer: Sequence[str] = ()) -> Fix | None:
    """The fix `--fix` applies to this diagnostic, or None."""
    fix = None
    for p in prefer:
        fix = next((f for f in d.fixes if f.choice is not None and f.choice.lower() == p.lower()), None)
        if fix is not None:
            break
    if fix is None:
        fix = d.fix
    if fix is None or not fix.edits or (not fix.safe and not unsafe):
        return None
    return fix


def _key(d: Diagnostic, f: Fix) -> tuple:
    return (d.code, d.pointer, f.description)


class _Linter:
    def __init__(self, path: str, settings: Settings | None, selection: Selection | None, rules=None) -> None:
        # `rules`: a RuleSet, a list of rules (upgrade, tests) or None (the built-in RuleSet), built once per file
        ruleset = rules if rules is None or isinstance(rules, RuleSet) else RuleSet.of(rules)
        self.path, self.settings, self.selection, self.rules = path, settings, selection, ruleset or RuleSet.builtin()

    def __call__(self, text: str) -> tuple[Document, list[Diagnostic]]:
        doc = parse(text, self.path)
        return doc, run_rules(doc, self.settings, self.selection, self.rules)


def _comment_texts(doc: Document) -> Counter:
    # whitespace-insensitive: a moved block comment is re-indented, not lost
    return Counter(" ".join(doc.text[n.start:n.end].split()) for n in doc.notes if n.kind == "comment")


def _verify(before: Document, before_diags: list[Diagnostic], after: Document, after_diags: list[Diagnostic],
            picked: Iterable[tuple[Diagnostic, Fix]], keep_comments: bool = False) -> str:
    """'' when the pass is acceptable, else why not. `keep_comments`: no comment may be lost (safe fixes only)."""
    if before.json_error is None and after.json_error is not None:
        return f"the result is not valid JSON any more ({after.json_error.message})"
    if before.hjson_error is None and after.hjson_error is not None:
        return f"DeepSpeed's hjson reader cannot read the result ({after.hjson_error.message})"
    if after.fatal and not before.fatal:
        return "the result does not parse"
    crashed = {d.message for d in after_diags if d.code == "ZL000"} - {d.message for d in before_diags
                                                                         if d.code == "ZL000"}
    if crashed:
        return "a rule crashed on the result: " + sorted(crashed)[0]
    if keep_comments and _comment_texts(before) - _comment_texts(after):
        return "it would delete a comment (only an unsafe fix may: --unsafe-fixes)"
    edits = sorted((e for _, f in picked for e in f.edits), key=lambda e: (e.start, e.end))
    for d, _ in picked:
        lo, hi = map_offset(d.start, edits, "lo"), map_offset(max(d.end, d.start), edits, "hi")
        for a in after_diags:
            if a.code == d.code and a.pointer == d.pointer and lo <= a.start <= hi:
                return f"{d.code} still reports {d.pointer or 'the document'} after the fix"
    return ""


def map_offset(p: int, edits: Sequence[Edit], side: str = "lo") -> int:
    """Where offset `p` of the old text lands in the new text (edits sorted). Inside a replaced span it maps to
    the start ("lo") or the end ("hi") of the replacement; an insertion at `p` itself falls after "lo" and
    before "hi"."""
    delta = 0
    for e in edits:
        size = len(e.text) - (e.end - e.start)
        if e.end < p or (e.end == p and (e.start < p or side == "hi")):
            delta += size
        elif e.start < p < e.end:
            return e.start + delta + (len(e.text) if side == "hi" else 0)
        else:
            break
    return p + delta


def fix_text(text: str, path: str = "<string>", settings: Settings | None = None,
             selection: Selection | None = None, unsafe: bool = False, prefer: Sequence[str] = (),
             max_passes: int = MAX_PASSES, rules: RuleSet | None = None,
             protected: Callable[[Diagnostic], bool] | None = None) -> FixResult:
    """Fix `text` (see the module docstring). Returns the fixed text, the fixes applied (in order), the
    diagnostics that remain on the fixed text, and the fixes dropped because they failed verification.
    `protected(d)`: a finding never to fix (one a suppression or the baseline hides: accepted on purpose)."""
    lint = _Linter(path, settings, selection, rules)
    prefer = tuple(prefer)
    result = FixResult(text=text, original=text)
    doc, diags = lint(text)
    if doc.hjson_error is not None or doc.fatal or any(n.kind in ("depth-limit", "size-limit", "value-limit")
                                                       for n in doc.notes):
        result.skipped = "the config does not parse; fix the syntax error first"
        result.remaining, result.document = diags, doc
        return result
    dropped: set[tuple] = set()
    for _ in range(max_passes):
        candidates = []
        for d in diags:
            f = choose_fix(d, unsafe, prefer) if protected is None or not protected(d) else None
            if f is not None and _key(d, f) not in dropped:
                candidates.append((d, f))
        if not candidates:
            break
        picked: list[tuple[Diagnostic, Fix]] = []
        for d, f in candidates:
            if not any(overlaps(f.edits, g.edits) for _, g in picked):
                picked.append((d, f))
        outcome = _attempt(text, doc, diags, picked, lint, unsafe)
        if outcome is None:
            # Something in the batch failed: try each fix on its own and drop those that fail alone.
            good = []
            for d, f in picked:
                if _attempt(text, doc, diags, [(d, f)], lint, unsafe) is None:
                    dropped.add(_key(d, f))
                    result.failed.append(AppliedFix(d, f, _why(text, doc, diags, d, f, lint, unsafe)))
                else:
                    good.append((d, f))
            if not good:
                continue  # re-pick: the dropped ones are excluded now
            outcome = _attempt(text, doc, diags, good, lint, unsafe)
            if outcome is None:  # they only fail together: one per pass
                good = good[:1]
                outcome = _attempt(text, doc, diags, good, lint, unsafe)
            picked = good
            if outcome is None:  # pragma: no cover - good[0] passed on its own above
                break
        new_text, new_doc, new_diags, edits = outcome
        result.passes.append(FixPass(text, edits, new_text))
        result.applied += [AppliedFix(d, f) for d, f in picked]
        text, doc, diags = new_text, new_doc, new_diags
        dropped.clear()  # the text changed: what failed before may work now (e.g. after a neighbour's fix)
    result.text, result.remaining, result.document = text, diags, doc
    # Report each failure once, and only those still offered on the final text.
    still = {_key(d, f) for d in diags if (f := choose_fix(d, unsafe, prefer)) is not None
             and (protected is None or not protected(d))}
    seen: set[tuple] = set()  # seen.add(k) below is None: an idiom, on purpose (the checker flags its use)
    result.failed = [a for a in reversed(result.failed) if (k := _key(a.diagnostic, a.fix)) in still
                     and not (k in seen or seen.add(k))][::-1]  # type: ignore[func-returns-value]
    return result


def _attempt(text, doc, diags, picked, lint, unsafe=False):
    edits = tuple(e for _, f in picked for e in f.edits)
    try:
        new_text = apply_edits(text, edits)
    except (ValueError, IndexError):
        return None
    if new_text == text:
        return None
    new_doc, new_diags = lint(new_text)
    if _verify(doc, diags, new_doc, new_diags, picked, keep_comments=not unsafe):
        return None
    return new_text, new_doc, new_diags, edits


def _why(text, doc, diags, d, f, lint, unsafe=False) -> str:
    try:
        new_text = apply_edits(text, f.edits)
    except (ValueError, IndexError) as e:
        return f"the edits do not apply: {e}"
    if new_text == text:
        return "the fix changes nothing"
    new_doc, new_diags = lint(new_text)
    return _verify(doc, diags, new_doc, new_diags, [(d, f)], keep_comments=not unsafe) or "unknown"


def reader_of(text: str) -> str:
    """The reader a fixed file must still satisfy: "json" when `json.loads` reads the original (HF, Accelerate),
    else "hjson" (DeepSpeed). YAML files are never edited."""
    import json

    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return "hjson"
    return "json"


def reread_error(reader: str, text: str) -> str:
    """'' when `text` still parses with `reader`, else why not: the last check before anything is written (fix_text
    verifies every pass already; this holds even if a fixer, e.g. upgrade's, did not)."""
    try:
        if reader == "json":
            import json

            json.loads(text)
        else:
            import hjson

            hjson.loads(text)
    except Exception as e:  # any failure of the reader means the file would no longer load
        return f"the fixed text does not parse with {reader} any more ({type(e).__name__}: {str(e)[:200]})"
    return ""


def _lines(s: str) -> list[str]:
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", s)


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff of a fix, keeping the file's own line ends. Control characters from the config (an escape
    sequence that sets the terminal title, clears the screen or writes the clipboard with OSC 52) and from the file
    name are printed as visible escapes, never raw."""
    import difflib

    from ..base.escape import safe, safe_line

    a = _lines(before)
    b = _lines(after)
    out = []
    rel = not path.startswith(("/", "<")) and not re.match(r"[A-Za-z]:[\\/]", path)
    name = safe_line(path)
    for line in difflib.unified_diff(a, b, fromfile=f"a/{name}" if rel else name, tofile=f"b/{name}" if rel else name):
        body = line.rstrip("\r\n")
        line = safe(body) + line[len(body):]
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)
