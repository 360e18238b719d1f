"""`--output-format concise`: one line per finding, then the summary (as `ruff check --output-format concise`).

    configs/ds.json:8:5: error ZL201 [*] offload_param needs ZeRO stage 3; ...

`[*]`: a safe fix exists (`--fix` applies it). File names and messages go through safe_line: one line each."""

from __future__ import annotations

from typing import Mapping, Sequence

from ..base.escape import safe_line
from ..model.diagnostics import Diagnostic
from ..model.document import Document
from .text import note_lines, summary_line


def line_of(d: Diagnostic) -> str:
    fix = d.fix
    mark = " [*]" if fix is not None and fix.safe else ""
    return f"{safe_line(d.file)}:{d.line}:{d.column}: {d.severity.value} {d.code}{mark} {safe_line(d.message)}"


def render(diagnostics: Sequence[Diagnostic], documents: Mapping[str, Document], summary: dict,
           quiet: bool = False) -> str:
    lines = [] if quiet else [line_of(d) for d in diagnostics]
    lines += [summary_line(summary), *note_lines(summary)]
    return "\n".join(lines) + "\n"
