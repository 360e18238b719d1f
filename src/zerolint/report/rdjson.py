"""`--output-format rdjson`: reviewdog's Diagnostic Format (rdjson), for `reviewdog -f=rdjson`, with the safe fixes
as suggestions that reviewdog posts as suggested changes.

One DiagnosticResult: `source`, and per finding `message`, `location` (path and range), `severity` (ERROR,
WARNING, INFO), `code` (value and url) and `suggestions` (range + replacement text, one per edit of the safe fix).
Positions follow reviewdog's proto (proto/rdf/reviewdog.proto): lines and columns start at 1, columns count UTF-8
bytes, the end is exclusive."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from ..base.escape import json_safe, safe
from ..base.paths import display_path
from ..model.diagnostics import Diagnostic
from ..model.document import Document

SEVERITY = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}
SOURCE = {"name": "zerolint", "url": "https://github.com/zerolint/zerolint"}


def _position(doc: Document | None, line: int, column: int) -> dict[str, int]:
    """{line, column} with the column in UTF-8 bytes (zerolint's columns count characters)."""
    if doc is None or not 1 <= line <= doc.line_count:
        return {"line": max(1, line), "column": max(1, column)}
    before = doc.line_text(line)[: max(0, column - 1)]
    return {"line": line, "column": len(before.encode("utf-8", "surrogatepass")) + 1}


def _range(doc: Document | None, line: int, column: int, end_line: int, end_column: int) -> dict[str, Any]:
    return {"start": _position(doc, line, column), "end": _position(doc, end_line, end_column)}


def diagnostic(d: Diagnostic, doc: Document | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "message": safe(d.message) + (f"\nhelp: {safe(d.help)}" if d.help else ""),
        "location": {"path": display_path(d.file), "range": _range(doc, d.line, d.column, d.end_line, d.end_column)},
        "severity": SEVERITY[d.severity.value],
        "code": {"value": d.code, **({"url": d.url} if d.url else {})},
    }
    fix = d.fix
    if fix is not None and fix.safe and doc is not None:
        suggestions = []
        for edit in fix.edits:
            (sl, sc), (el, ec) = doc.position(edit.start), doc.position(max(edit.end, edit.start))
            suggestions.append({"range": _range(doc, sl, sc, el, ec), "text": edit.text})
        out["suggestions"] = suggestions
    return out


def build(diagnostics: Sequence[Diagnostic], documents: Mapping[str, Document]) -> dict[str, Any]:
    return {"source": SOURCE, "diagnostics": [diagnostic(d, documents.get(d.file)) for d in diagnostics]}


def render(diagnostics: Sequence[Diagnostic], documents: Mapping[str, Document], summary: dict) -> str:
    return json_safe(json.dumps(build(diagnostics, documents), indent=2, ensure_ascii=False)) + "\n"
