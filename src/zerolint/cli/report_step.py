"""The one report step of `zerolint check`, with or without `--fix`: the findings a run left, through the formats,
outputs, colour, caps (--max-findings, --max-findings-per-file), info hiding (--show-info) and --statistics that
the options ask for. `check` and `check --fix` both print through here, so that the `zerolint-fix` pre-commit hook
shows what `check` would."""

from __future__ import annotations

from ..report.output import default_formats, emit_reports


def report_findings(pipeline, run, diagnostics, summary, err: bool = False) -> list[str]:
    """Print the report of `diagnostics` (`err`: on stderr, stdout holding a diff or a fixed stdin); returns the
    errors of reports that could not be written (exit 2)."""
    o = pipeline.options
    return emit_reports(o.formats or default_formats(o.outputs), o.outputs, diagnostics, pipeline.documents(run),
                        summary, quiet=o.quiet, color=o.color, caps=o.caps, show_info=pipeline.info_shown,
                        statistics=o.statistics, err=err)
