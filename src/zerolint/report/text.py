"""`--format text`: ruff-style findings with a source snippet and a caret. Plain text unless `color`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..base.escape import safe, safe_line
from ..model.diagnostics import Diagnostic
from ..model.document import Document

_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}


def _expand(line: str) -> str:
    return line.replace("\t", "    ")


def _expanded_len(line: str, lo: int, hi: int) -> int:
    """len(_expand(line[lo:hi])) without building it (many findings on one long minified line stay linear)."""
    lo, hi = min(max(lo, 0), len(line)), min(max(hi, 0), len(line))
    return hi - lo + 3 * line.count("\t", lo, hi) if hi > lo else 0


def _caret_columns(line: str, col: int, end_col: int) -> tuple[int, int]:
    """Display columns of a 1-based character range in a line whose tabs print as 4 spaces."""
    return _expanded_len(line, 0, col - 1), max(1, _expanded_len(line, col - 1, max(end_col - 1, col)))


def _source_line(doc: Document, line: int) -> tuple[str, str]:
    """(the line, as shown: tabs expanded, control characters escaped); long lines are kept per document, so that
    thousands of findings on one minified line do not re-process it each time."""
    cache = doc.__dict__.setdefault("_shown_lines", {})
    if line in cache:
        return cache[line]
    raw = doc.line_text(line)
    shown = raw, safe(_expand(raw))
    if len(raw) > 200:
        cache[line] = shown
    return shown


def format_diagnostic(d: Diagnostic, doc: Document | None, color: bool = False) -> list[tuple[str, str]]:
    """Lines of (style, text) for one diagnostic."""
    sev = d.severity.value
    out: list[tuple[str, str]] = [
        ("", f"{safe_line(d.file)}:{d.line}:{d.column}: "),
        (_STYLE[sev], f"{sev}"),
        ("", " "),
        ("bold", f"{d.code}"),
        ("", f" [{d.name}] {safe_line(d.message)}\n"),
    ]
    if doc is not None and 1 <= d.line <= doc.line_count:
        line, shown = _source_line(doc, d.line)
        gutter = len(str(d.end_line if d.end_line == d.line else d.line))
        end_col = d.end_column if d.end_line == d.line else len(line) + 1
        start, width = _caret_columns(line, d.column, end_col)
        text = shown
        if len(text) > 200:  # keep minified or huge lines readable
            lo = max(0, start - 80)
            text, start = ("…" if lo else "") + text[lo: lo + 160] + "…", start - lo + (1 if lo else 0)
            width = min(width, 160)
        pad = " " * gutter
        out += [
            ("dim", f" {pad} |\n"),
            ("dim", f" {d.line:>{gutter}} | "), ("", f"{text}\n"),
            ("dim", f" {pad} | "), (_STYLE[sev], " " * start + "^" * min(width, max(1, len(text) - start))), ("", "\n"),
        ]
    if d.related:
        for r in d.related:
            out.append(("dim", f"   = note: {safe_line(r.message)} at {r.line}:{r.column}\n"))
    if d.help:
        out.append(("bold", "   = help: "))
        out.append(("", f"{safe_line(d.help)}\n"))
    alternatives = [f for f in d.fixes if f is not d.fix]
    fix = d.fix
    if fix is not None:
        kind = "fix" if fix.safe else "unsafe fix"
        out.append(("green", f"   = {kind}: {safe_line(fix.description)}\n"))
    for alt in alternatives:
        out.append(("green", f"   = option ({alt.choice or 'alternative'}): {safe_line(alt.description)}\n"))
    if d.url:
        out.append(("dim", f"   = docs: {d.url}\n"))
    return out


def summary_line(summary: dict) -> str:
    counts = summary["counts"]
    parts = [f"{counts[k]} {k}{'s' if counts[k] != 1 else ''}" for k in ("error", "warning", "info") if counts[k]]
    files = summary["files"]
    where = f"in {files} file{'s' if files != 1 else ''}"
    unreadable = summary.get("unreadable", 0)  # exit 2: never "passed" beside a file that was not read
    failed = f" {unreadable} file{'s' if unreadable != 1 else ''} could not be read." if unreadable else ""
    skipped = summary.get("skipped", 0)  # found in a directory or by a glob, but not a DeepSpeed config
    why = "--fail-on-skipped" if summary.get("fail_on_skipped") else \
        "listed below" if summary.get("skipped_files") else "--show-files"
    skipped_note = f" {skipped} file{'s' if skipped != 1 else ''} skipped (not DeepSpeed configs; {why})." \
        if skipped else ""
    if not parts:
        if summary.get("fail_on_skipped") and skipped:  # the gate fails on them: never "passed"
            return f"No findings {where}.{failed}{skipped_note}"
        return (f"No findings {where}.{failed}" if unreadable else f"All checks passed {where}.") + skipped_note
    line = f"Found {', '.join(parts)} {where}.{failed}"
    if summary.get("fixable"):
        line += f" {summary['fixable']} fixable with --fix."
    if summary.get("unsafe_fixable"):
        line += f" {summary['unsafe_fixable']} more with --unsafe-fixes."
    if summary.get("not_shown"):  # the findings cap (reporters/cap.py): the counts above include them
        line += f" {summary['not_shown']:,} not shown (findings limit)."
    if summary.get("info_hidden"):  # counted above, shown with --show-info (report/output.py)
        line += f" {summary['info_hidden']:,} info hidden (--show-info)."
    return line + skipped_note


def statistics(diagnostics: Sequence[Diagnostic], summary: dict) -> str:
    """`--statistics`: how many findings each rule reported, most first, then the summary line. `[*]`: every one
    of them has a safe fix, `[-]`: some have."""
    rows: dict[str, list] = {}
    for d in diagnostics:
        fix = d.fix
        row = rows.setdefault(d.code, [0, 0, d.name, d.severity.value])
        row[0] += 1
        row[1] += fix is not None and fix.safe
    ordered = sorted(rows.items(), key=lambda item: (-item[1][0], item[0]))
    width = max((len(str(row[0])) for _, row in ordered), default=1)
    code_width = max((len(code) for code, _ in ordered), default=5)
    lines = []
    for code, (count, fixable, name, severity) in ordered:
        mark = "[*]" if fixable == count else "[-]" if fixable else "   "
        lines.append(f"{count:>{width}}  {code:<{code_width}}  {mark}  {severity:<7}  {name}")
    lines += [summary_line(summary), *note_lines(summary)]
    return "\n".join(lines) + "\n"


def note_lines(summary: dict) -> list[str]:
    """What settings files turned off in this run (excluded files, ignored rules, suppressions), the findings cap,
    if it applied, and on the CI gate every candidate skipped as not a DeepSpeed config and why; one line each."""
    notes = [*summary.get("notes", ()), *([summary["limit_note"]] if summary.get("limit_note") else [])]
    skipped = [f"skipped: {safe_line(s['file'])}: {safe_line(s['why'])}" for s in summary.get("skipped_files", ())]
    return [f"note: {safe_line(n)}" for n in notes] + skipped


def render(diagnostics: Sequence[Diagnostic], documents: Mapping[str, Document], summary: dict,
           quiet: bool = False) -> str:
    chunks: list[str] = []
    if not quiet:
        for d in diagnostics:
            chunks.append("".join(text for _, text in format_diagnostic(d, documents.get(d.file))))
            chunks.append("\n")
    chunks.append(summary_line(summary) + "\n")
    chunks += [line + "\n" for line in note_lines(summary)]
    return "".join(chunks)


# SGR codes of the styles format_diagnostic uses: colour with plain escape sequences, so that a coloured check costs
# what a plain one does (rich and its dependencies cost a one-file check half its time again; docs/benchmarks.md).
_SGR = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


def _paint(style: str, text: str) -> str:
    """`text` in `style` ("bold red", ...); the reset comes before a line break, so that `| less -R` and a
    terminal's scroll-back never carry a colour into the next line."""
    if not style or not text:
        return text
    body, nl = (text[:-1], "\n") if text.endswith("\n") else (text, "")
    if not body:
        return text
    return f"\x1b[{';'.join(_SGR[part] for part in style.split())}m{body}\x1b[0m{nl}"


def render_color(diagnostics: Sequence[Diagnostic], documents: Mapping[str, Document], summary: dict,
                 quiet: bool = False) -> str:
    """The text report, coloured for a terminal: `render`'s text with escape sequences around the styled parts."""
    chunks: list[str] = []
    if not quiet:
        for d in diagnostics:
            chunks += [_paint(style, text) for style, text in format_diagnostic(d, documents.get(d.file), color=True)]
            chunks.append("\n")
    chunks.append(_paint("bold", summary_line(summary)) + "\n")
    chunks += [_paint("yellow", line) + "\n" for line in note_lines(summary)]
    return "".join(chunks)
