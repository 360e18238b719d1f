"""Caps on the findings a report shows: 100,000 misspelled keys made a 105 MB SARIF (GitHub rejects more than
10 MB) and took minutes to render (issue 12 item 9). The cap only trims what is shown: the summary counts and the
exit code come from every finding, and every format says how many were left out."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.diagnostics import Diagnostic

MAX_PER_FILE = 1_000
MAX_PER_REPORT = 10_000


def cap_findings(diagnostics: Sequence[Diagnostic], summary: dict, per_file: int | None = MAX_PER_FILE,
                 per_report: int | None = MAX_PER_REPORT) -> tuple[list[Diagnostic], dict]:
    """The diagnostics to show (in their order) and the summary to show with them. The most severe findings are
    kept first, so a thousand warnings cannot hide an error; `summary["not_shown"]` counts the rest (by file in
    `not_shown_by_file`) and a note says which limit applied. None or 0: no limit. Unchanged when nothing is cut."""
    per_file = len(diagnostics) if not per_file else per_file  # None or 0: no limit
    per_report = len(diagnostics) if not per_report else per_report
    if len(diagnostics) <= min(per_file, per_report):
        return list(diagnostics), summary
    by_rank = sorted(range(len(diagnostics)), key=lambda i: -diagnostics[i].severity.rank)  # stable: file order
    kept: set[int] = set()
    in_file: dict[str, int] = {}
    for i in by_rank:
        if len(kept) >= per_report:
            break
        file = diagnostics[i].file
        if in_file.get(file, 0) < per_file:
            in_file[file] = in_file.get(file, 0) + 1
            kept.add(i)
    if len(kept) == len(diagnostics):
        return list(diagnostics), summary
    shown = [d for i, d in enumerate(diagnostics) if i in kept]
    hidden: dict[str, dict[str, int]] = {}
    for i, d in enumerate(diagnostics):
        if i not in kept:
            counts = hidden.setdefault(d.file, {"error": 0, "warning": 0, "info": 0})
            counts[d.severity.value] += 1
    not_shown = len(diagnostics) - len(kept)
    note = (f"{not_shown:,} of {len(diagnostics):,} findings not shown (at most {per_file:,} per file, "
            f"--max-findings-per-file; at most {per_report:,} per report, --max-findings; errors first); the counts "
            "and the exit code include them")
    summary = {**summary, "not_shown": not_shown, "not_shown_by_file": hidden,
               "limits": {"max_findings_per_file": per_file, "max_findings": per_report}, "limit_note": note}
    return shown, summary
