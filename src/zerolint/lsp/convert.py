"""zerolint's diagnostics and fixes as LSP types (lsprotocol): ranges in UTF-16 positions, fixes as code actions
(safe ones first, unsafe ones marked, alternatives listed), related locations, the rule page as the code's link."""

from __future__ import annotations

from lsprotocol import types

from ..model.diagnostics import Diagnostic, Fix, Severity
from .positions import LineIndex

SOURCE = "zerolint"
FIX_ALL_KIND = "source.fixAll.zerolint"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def lsp_range(index: LineIndex, start: int, end: int) -> types.Range:
    (sl, sc), (el, ec) = index.position(start), index.position(max(start, end))
    return types.Range(start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec))


def lsp_diagnostic(d: Diagnostic, index: LineIndex, uri: str) -> types.Diagnostic:
    related = []
    for r in d.related:
        (sl, sc), (el, ec) = index.line_character(r.line, r.column), index.line_character(r.end_line, r.end_column)
        where = types.Range(start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec))
        related.append(types.DiagnosticRelatedInformation(location=types.Location(uri=uri, range=where),
                                                          message=r.message))
    return types.Diagnostic(
        range=lsp_range(index, d.start, d.end),
        message=d.message + (f"\nhelp: {d.help}" if d.help else ""),
        severity=_SEVERITY[d.severity],
        code=d.code,
        code_description=types.CodeDescription(href=d.url) if d.url else None,
        source=SOURCE,
        related_information=related or None,
        data={"pointer": d.pointer, "name": d.name},
    )


def problem_diagnostic(message: str) -> types.Diagnostic:
    """A document that cannot be linted (a broken zerolint settings file): said at its first line."""
    at = types.Position(line=0, character=0)
    return types.Diagnostic(range=types.Range(start=at, end=at), message=message,
                            severity=types.DiagnosticSeverity.Error, source=SOURCE, code="settings")


def _title(d: Diagnostic, fix: Fix) -> str:
    notes = [d.code]
    if fix.choice is not None:
        notes.append(f"one of {sum(1 for f in d.fixes if f.choice is not None)} alternatives")
    if not fix.safe:
        notes.append("unsafe: changes behaviour")
    return f"{fix.description} ({', '.join(notes)})"


def code_actions(diagnostics: list[Diagnostic], index: LineIndex, uri: str, wanted: types.Range,
                 ) -> list[types.CodeAction]:
    """One quick fix per fix of every diagnostic that touches `wanted`: the safe ones first (the one --fix would
    apply marked preferred), then the unsafe ones."""
    safe: list[types.CodeAction] = []
    unsafe: list[types.CodeAction] = []
    for d in diagnostics:
        where = lsp_range(index, d.start, d.end)
        if _before(where.end, wanted.start) or _before(wanted.end, where.start) or not d.fixes:
            continue
        shown = lsp_diagnostic(d, index, uri)
        for fix in d.fixes:
            if not fix.edits:
                continue
            edits = [types.TextEdit(range=lsp_range(index, e.start, e.end), new_text=e.text) for e in fix.edits]
            action = types.CodeAction(
                title=_title(d, fix), kind=types.CodeActionKind.QuickFix, diagnostics=[shown],
                edit=types.WorkspaceEdit(changes={uri: edits}), is_preferred=fix.safe and fix is d.fix)
            (safe if fix.safe else unsafe).append(action)
    return safe + unsafe


def fix_all_action(uri: str, index: LineIndex, fixed: str) -> types.CodeAction:
    """Every safe fix at once (`zerolint check --fix`), as one edit of the whole document."""
    whole = lsp_range(index, 0, len(index.text))
    return types.CodeAction(title="Fix all safe zerolint findings", kind=FIX_ALL_KIND,
                            edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=fixed)]}))


def _before(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)
