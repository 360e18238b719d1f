"""`--format github`: GitHub Actions workflow commands, one annotation per finding, plus a Markdown summary for
`$GITHUB_STEP_SUMMARY`.

    ::error file=ds.json,line=8,col=5,endLine=8,endColumn=6,title=ZL002 json-incompatible-syntax::a missing comma...

Escaping follows the runner's own rules (actions/toolkit, command.ts): in the message `%`, CR and LF become
`%25`, `%0D`, `%0A`; in properties `:` and `,` become `%3A` and `%2C` as well. Text from the config goes through
`safe()` first, so control characters and bidi overrides show as escapes and a crafted key cannot start a
workflow command of its own (every line break in it is escaped).
"""

from __future__ import annotations

import html
from typing import Mapping, Sequence

from ..base.escape import markdown_inert, safe
from ..base.paths import display_path
from ..model.diagnostics import Diagnostic
from ..model.document import Document

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
ICON = {"error": ":x:", "warning": ":warning:", "info": ":information_source:"}
MAX_SUMMARY_ROWS = 200


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic) -> str:
    props = {
        "file": display_path(d.file),
        "line": d.line,
        "col": d.column,
        "endLine": d.end_line,
        "endColumn": d.end_column,
        "title": f"{d.code} {d.name}",
    }
    body = safe(d.message) + (f"\nhelp: {safe(d.help)}" if d.help else "")
    head = ",".join(f"{k}={escape_property(safe(str(v)))}" for k, v in props.items())
    return f"::{COMMAND[d.severity.value]} {head}::{escape_data(body)}"


def render(diagnostics: Sequence[Diagnostic], documents: Mapping[str, Document], summary: dict) -> str:
    notes = "".join(f"::notice title=zerolint settings::{escape_data(safe(n))}\n" for n in summary.get("notes", ()))
    if summary.get("limit_note"):  # the findings cap (reporters/cap.py)
        notes += f"::notice title=zerolint findings limit::{escape_data(safe(summary['limit_note']))}\n"
    level = "error" if summary.get("fail_on_skipped") else "notice"  # the gate: each skipped candidate, and why
    for s in summary.get("skipped_files", ()):
        notes += (f"::{level} file={escape_property(safe(display_path(s['file'])))},title=zerolint skipped::"
                  f"{escape_data(safe('not linted: ' + s['why']))}\n")
    return "".join(annotation(d) + "\n" for d in diagnostics) + notes


def _cell(text: str) -> str:
    """Markdown table cell: no raw HTML, no column breaks, one line."""
    return markdown_inert(html.escape(safe(text), quote=False)).replace("|", "\\|").replace("\n", "<br>")


def step_summary(diagnostics: Sequence[Diagnostic], summary: dict) -> str:
    """A Markdown section for $GITHUB_STEP_SUMMARY: the summary line and a table of findings."""
    from .text import summary_line

    lines = ["## zerolint", "", summary_line(summary), ""]
    if summary.get("notes"):  # what the repository's settings files turned off
        lines += [f"- :warning: {_cell(n)}" for n in summary["notes"]] + [""]
    if summary.get("limit_note"):
        lines += [f"- :warning: {_cell(summary['limit_note'])}", ""]
    if summary.get("skipped_files"):  # the gate: every candidate it did not lint, and why
        lines += ["| Skipped (not linted) | Why |", "| --- | --- |"]
        lines += [f"| {_cell(display_path(s['file']))} | {_cell(s['why'])} |"
                  for s in summary["skipped_files"][:MAX_SUMMARY_ROWS]]
        if len(summary["skipped_files"]) > MAX_SUMMARY_ROWS:
            lines.append(f"\n{len(summary['skipped_files']) - MAX_SUMMARY_ROWS} more skipped files are in the log.")
        lines.append("")
    if diagnostics:
        lines += ["| | File | Line | Rule | Message |", "| --- | --- | --- | --- | --- |"]
        for d in diagnostics[:MAX_SUMMARY_ROWS]:
            sev = d.severity.value
            rule = f"[{d.code}]({d.url})" if d.url else d.code
            lines.append(f"| {ICON[sev]} {sev} | {_cell(display_path(d.file))} | {d.line}:{d.column} "
                         f"| {rule} {_cell(d.name)} | {_cell(d.message)} |")
        if len(diagnostics) > MAX_SUMMARY_ROWS:
            lines.append(f"\n{len(diagnostics) - MAX_SUMMARY_ROWS} more findings are in the annotations and the log.")
        lines.append("")
    return "\n".join(lines) + "\n"
