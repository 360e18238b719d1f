"""The body of `zerolint check`, free of click: it runs under the click command (cli/check.py) and under the fast
path (cli/fast.py) alike. Lints or fixes through pipeline.Pipeline, prints, and ends with the exit code
(SystemExit). A rule code that names no rule raises spec.OptionError before anything is printed."""

from __future__ import annotations

import os
import sys

from ..base.console import echo
from ..base.record import replace
from ..report.output import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, _exit
from .report_step import report_findings
from .spec import check_rule_codes


def run_check(options, show_settings: bool = False, training_args: str | None = None,
              show_files: bool = False, show_uses: bool = False, watch: bool = False) -> None:
    if watch:
        from .watch import watch as watch_loop

        if "-" in options.files:
            _fail("--watch cannot read stdin (`-`): name the files or directories to watch")
        if show_settings or show_files or show_uses or options.write_baseline is not None:
            _fail("--watch re-runs a check: it does not go with --show-settings, --show-files, --show-uses or "
                  "--write-baseline")
        watch_loop(lambda: _check_once(options, show_settings, training_args, show_files, show_uses), options.files,
                   options.uses)
    _check_once(options, show_settings, training_args, show_files, show_uses)


def _check_once(options, show_settings: bool, training_args: str | None, show_files: bool, show_uses: bool) -> None:
    from ..pipeline import Pipeline
    from ..project.settings import ConfigError

    try:
        if training_args is not None:
            from ..model.trainer import TrainingArgsError, training_args_dict

            try:
                options = replace(options, training_args=training_args_dict(training_args))
            except TrainingArgsError as e:
                raise ConfigError(f"--training-args: {e}") from None
        pipeline = Pipeline(options)
        first = pipeline.project.resolve(pipeline.first_path())
    except ConfigError as e:
        _fail(str(e))
    _note_coverage(first.settings().deepspeed_version)
    known = first.ruleset(pipeline.builtin)  # the built-in rules and the first file's policy rules
    check_rule_codes(list(options.select), "--select", known)
    check_rule_codes(list(options.ignore), "--ignore", known)
    check_rule_codes([c for c, _ in options.severity], "--severity", known)
    if show_settings:
        echo(first.show(), nl=False)
        sys.exit(EXIT_OK)
    if show_files:
        _show_files(pipeline)
    if show_uses:
        _show_uses(pipeline)
    if options.fix != "none":
        from .fix import report_fixes

        try:
            run = pipeline.fix()
            code = report_fixes(pipeline, run)
        except ConfigError as e:
            _fail(str(e))
        sys.exit(EXIT_OK if code == EXIT_FINDINGS and options.exit_zero else code)

    try:
        run = pipeline.lint()
        if options.write_baseline is not None:
            _write_baseline(pipeline, run, first)
        diagnostics, summary = pipeline.findings(run)
        failing = pipeline.failing(diagnostics, summary)
    except ConfigError as e:
        _fail(str(e))
    if options.unsafe:  # `--unsafe-fixes` alone: the unsafe fixes count as available to --fix --unsafe-fixes
        summary["fixable"], summary["unsafe_fixable"] = summary["fixable"] + summary["unsafe_fixable"], 0
    failed_outputs = report_findings(pipeline, run, diagnostics, summary)

    from ..base.escape import safe_line  # file names can hold terminal escapes and newlines too

    for msg in [*run.unreadable, *failed_outputs]:
        echo(f"zerolint: error: {safe_line(msg)}", err=True)
    if run.unreadable or failed_outputs:
        _exit(EXIT_USAGE)
    _exit(EXIT_FINDINGS if failing and not options.exit_zero else EXIT_OK)


def _show_files(pipeline) -> None:
    """--show-files: every file considered, picked or skipped, and why; what a config excludes; then exit 0 (2
    when an argument matched nothing)."""
    from ..base.escape import safe_line

    run = pipeline.sources()
    linted = set(run.paths)
    picked = skipped = 0
    for pick in run.picks:
        if not pick.picked:
            skipped += 1
            echo(f"skip  {safe_line(pick.path)}  ({safe_line(pick.why)})")
        elif pick.path in linted:
            picked += 1
            echo(f"lint  {safe_line(pick.path)}  ({safe_line(pick.why)})")
        else:
            echo(f"skip  {safe_line(pick.path)}  (excluded by a zerolint config)")
    for msg in run.unreadable:
        echo(f"zerolint: error: {safe_line(msg)}", err=True)
    echo(f"{picked} file{'s' if picked != 1 else ''} to lint, {skipped} skipped.")
    sys.exit(EXIT_USAGE if run.unreadable else EXIT_OK)


def _show_uses(pipeline) -> None:
    """--show-uses: each config to lint, the places in its repository that use it, and what each says; exit 0."""
    from ..base.escape import safe_line
    from ..project.references import repository_root

    run = pipeline.sources()
    for path in run.paths:
        uses = pipeline.uses_of(path)
        echo(safe_line(path))
        if not uses and repository_root(path) is None:
            echo("  not in a repository (no .git above it): uses are read only inside one")
        elif not uses:
            echo("  no use found in the repository: the consumer is guessed from the file's content")
        for use in uses:
            echo(f"  {safe_line(use.describe())}")
            for line in use.details():
                echo(f"    {safe_line(line)}")
    for msg in run.unreadable:
        echo(f"zerolint: error: {safe_line(msg)}", err=True)
    sys.exit(EXIT_USAGE if run.unreadable else EXIT_OK)


def _write_baseline(pipeline, run, first) -> None:
    from ..project.suppress import write_baseline

    diagnostics, _ = pipeline.suppressions().apply(run.results)
    target_file = pipeline.options.write_baseline or os.path.relpath(first.baseline_path(for_writing=True))
    count = write_baseline(target_file, diagnostics)
    echo(f"zerolint: wrote {count} baseline {'entry' if count == 1 else 'entries'} "
         f"({len(diagnostics)} findings) to {target_file}", err=True)
    from ..base.escape import safe_line

    for msg in run.unreadable:
        echo(f"zerolint: error: {safe_line(msg)}", err=True)
    sys.exit(EXIT_USAGE if run.unreadable else EXIT_OK)


def _fail(message: str):
    echo(f"zerolint: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _note_coverage(asked: str | None) -> None:
    """A version asked for (flag or settings), else the installed one, outside the covered lines: say which facts
    are used, on stderr."""
    from ..model.versions import Version, coverage_note
    from ..model.view import default_deepspeed_version

    asked = asked or default_deepspeed_version()  # (cached: the lint asks it too)
    try:
        note = coverage_note(Version(asked))
    except ValueError:  # an installed version zerolint cannot read: the facts' default applies, as before
        return
    if note:
        print(f"zerolint: note: {note}", file=sys.stderr)
