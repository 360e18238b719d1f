"""`zerolint check`: lint DeepSpeed configs, or fix them (--fix, --diff), and report. A thin shell over
pipeline.Pipeline: the options become a pipeline.Options (cli/options.py), the pipeline lints or fixes every file
with its own settings, report/output.py renders and picks the exit code."""

from __future__ import annotations

import dataclasses
import os
import sys

import click

from ..report.output import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, _exit, default_formats, emit_reports
from .options import CheckCommand, _check_rule_codes, build_options, lint_options


@click.command(cls=CheckCommand)
@click.argument("files", nargs=-1)
@lint_options
def check(files, **kw) -> None:
    """Lint DeepSpeed config FILES (files, directories, globs, or - for stdin)."""
    from ..pipeline import Pipeline
    from ..project.settings import ConfigError

    options = build_options(files, kw)
    if not options.files and not kw["show_settings"]:
        raise click.UsageError("Missing argument 'FILES...'.")
    try:
        if kw["training_args"] is not None:
            from ..model.trainer import TrainingArgsError, training_args_dict

            try:
                options = dataclasses.replace(options, training_args=training_args_dict(kw["training_args"]))
            except TrainingArgsError as e:
                raise ConfigError(f"--training-args: {e}") from None
        pipeline = Pipeline(options)
        first = pipeline.project.resolve(pipeline.first_path())
    except ConfigError as e:
        _fail(str(e))
    known = first.ruleset()  # the built-in rules and the first file's policy rules
    _check_rule_codes(list(options.select), "--select", known)
    _check_rule_codes(list(options.ignore), "--ignore", known)
    _check_rule_codes([c for c, _ in options.severity], "--severity", known)
    if kw["show_settings"]:
        click.echo(first.show(), nl=False)
        sys.exit(EXIT_OK)
    if options.fix != "none":
        from .fix import report_fixes

        try:
            run = pipeline.fix()
            code = report_fixes(pipeline, run)
        except ConfigError as e:
            _fail(str(e))
        sys.exit(code)

    try:
        run = pipeline.lint()
        if options.write_baseline is not None:
            _write_baseline(pipeline, run, first)
        diagnostics, summary = pipeline.findings(run)
        failing = pipeline.failing(diagnostics)
    except ConfigError as e:
        _fail(str(e))
    if options.unsafe:  # `--unsafe-fixes` alone: the unsafe fixes count as available to --fix --unsafe-fixes
        summary["fixable"], summary["unsafe_fixable"] = summary["fixable"] + summary["unsafe_fixable"], 0
    failed_outputs = emit_reports(options.formats or default_formats(options.outputs), options.outputs, diagnostics,
                                  pipeline.documents(run), summary, quiet=options.quiet, color=options.color,
                                  caps=options.caps)

    from ..base.escape import safe_line  # file names can hold terminal escapes and newlines too

    for msg in [*run.unreadable, *failed_outputs]:
        click.echo(f"zerolint: error: {safe_line(msg)}", err=True)
    if run.unreadable or failed_outputs:
        _exit(EXIT_USAGE)
    _exit(EXIT_FINDINGS if failing else EXIT_OK)


def _write_baseline(pipeline, run, first) -> None:
    from ..project.suppress import write_baseline

    diagnostics, _ = pipeline.suppressions().apply(run.results)
    target_file = pipeline.options.write_baseline or os.path.relpath(first.baseline_path(for_writing=True))
    count = write_baseline(target_file, diagnostics)
    click.echo(f"zerolint: wrote {count} baseline {'entry' if count == 1 else 'entries'} "
               f"({len(diagnostics)} findings) to {target_file}", err=True)
    from ..base.escape import safe_line

    for msg in run.unreadable:
        click.echo(f"zerolint: error: {safe_line(msg)}", err=True)
    sys.exit(EXIT_USAGE if run.unreadable else EXIT_OK)


def _fail(message: str):
    click.echo(f"zerolint: error: {message}", err=True)
    sys.exit(EXIT_USAGE)
