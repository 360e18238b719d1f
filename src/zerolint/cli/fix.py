"""`zerolint check --fix / --diff / --fix-only` and `zerolint upgrade`: report what pipeline.Pipeline.fix did.

The pipeline fixes every file with its own settings, selection and rules, leaves suppressed and baselined findings
alone and writes safely; this module prints the diffs, the remaining findings (through the suppressions and the
baseline, as `check` does), what was applied or refused, and picks the exit code.
"""

from __future__ import annotations

import sys

from ..base.console import echo


def report_fixes(pipeline, run, verb: str = "Fixed", show_applied: bool = False) -> int:
    """Print the outcome of `pipeline.fix()`; returns the exit code. Raises ConfigError (a broken baseline)."""
    from ..base.escape import safe  # file names and fix descriptions carry text from the config
    from ..fix.engine import unified_diff
    from ..report.output import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, default_formats

    o = pipeline.options
    diff, fix_only = o.fix == "diff", o.fix == "fix-only"
    failed_outputs: list[str] = []
    for f in run.fixes:
        if diff and f.result is not None and f.result.changed:
            echo(unified_diff(f.path, f.original, f.result.text), nl=False)
    if run.stdin_out is not None:
        sys.stdout.buffer.write(run.stdin_out)
        sys.stdout.flush()
    to_err = diff or run.stdin_out is not None
    remaining, summary = pipeline.findings(run)
    formats = o.formats or default_formats(o.outputs)
    if show_applied:  # `upgrade`: what it rewrote first, then what is left for a person
        _print_applied(run, diff, err=to_err)
    if not diff and not fix_only and show_applied:
        from ..report.text import format_diagnostic

        documents = pipeline.documents(run)
        for d in remaining:  # no "All checks passed" line: the "Upgraded ..." line below counts what remains
            echo("".join(text for _, text in format_diagnostic(d, documents.get(d.file))))
    elif not diff and not fix_only:
        from .report_step import report_findings

        failed_outputs = report_findings(pipeline, run, remaining, summary, err=to_err)
    for f in run.fixes:
        for a in (f.result.failed if f.result is not None else []):
            d = a.diagnostic
            echo(safe(f"zerolint: {f.path}:{d.line}:{d.column}: {d.code} fix not applied "
                            f"({a.fix.description}): {a.reason}"), err=True)
        if f.note and f.written:
            echo(safe(f"zerolint: {f.path}: {f.note}"), err=True)
    written = [f for f in run.fixes if f.result is not None and f.written]
    fixed, n_files = sum(len(f.result.applied) for f in written), sum(f.result.changed for f in written)
    head = "Would fix" if diff else verb
    line = (f"{head} {fixed} finding{'s' * (fixed != 1)} in {n_files} file{'s' * (n_files != 1)} "
            f"({len(remaining)} {'would remain' if diff else 'remaining'}).")
    reported = not diff and not fix_only  # the report's own summary line already counts the unsafe fixes
    hidden = sum(1 for d in remaining if d.fix is not None and not d.fix.safe) if not (o.unsafe or reported) else 0
    if hidden:
        line += f" {hidden} more with --unsafe-fixes."
    choices = sum(1 for d in remaining if d.fix is None and any(f.choice for f in d.fixes))
    if choices:
        line += f" {choices} with alternatives: pick one with --prefer CHOICE."
    plain_text = not to_err and not o.outputs and formats == ("text",)
    echo(line, err=not plain_text)
    for msg in [*run.refused, *run.unreadable, *failed_outputs]:
        echo(f"zerolint: error: {safe(msg)}", err=True)
    if run.unreadable or run.refused or failed_outputs:
        return EXIT_USAGE
    if diff:
        return EXIT_FINDINGS if run.any_diff else EXIT_OK
    if fix_only:
        return EXIT_OK
    return EXIT_FINDINGS if pipeline.failing(remaining, summary) else EXIT_OK


def _print_applied(run, diff: bool, err: bool) -> None:
    from ..base.escape import safe

    for f in run.fixes:
        if f.result is not None and f.written:
            for a in f.result.applied:
                d = a.diagnostic
                echo(safe(f"{f.path}:{d.line}:{d.column}: {'would ' if diff else ''}{a.fix.description}"),
                           err=err)
