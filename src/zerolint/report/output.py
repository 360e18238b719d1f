"""The output plumbing every command shares: exit codes, the summary, formats to stdout or files."""

from __future__ import annotations

import os
import sys

from ..base.console import echo

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT: Ctrl-C, as shells report it


def _exit(code: int) -> None:
    """End a command with `code` (SystemExit). A real `zerolint` process skips the interpreter's teardown, but
    that lives in the CLI's main() (cli/__init__.py), not here: the library never ends a host's process."""
    sys.exit(code)


def make_summary(diagnostics, files: int, unreadable: int = 0) -> dict:
    """Counts by severity and fixability; `unreadable`: files that could not be read (exit 2), present when > 0 so
    that no format claims a clean run beside them."""
    counts = {"error": 0, "warning": 0, "info": 0}
    fixable = unsafe = 0
    for d in diagnostics:
        counts[d.severity.value] += 1
        fix = d.fix
        if fix is not None:
            fixable += fix.safe
            unsafe += not fix.safe
    summary = {"files": files, "counts": counts, "fixable": fixable, "unsafe_fixable": unsafe}
    if unreadable:
        summary["unreadable"] = unreadable
    return summary


# The formats people read (a terminal, PR annotations, review comments, a CI test report) show info findings only
# when asked (--show-info, or a fail-on of info); the machine contracts (json, sarif) keep every finding and leave
# the filtering to their consumers. The summary counts every finding either way.
HIDES_INFO = ("text", "concise", "github", "gitlab", "rdjson", "junit")


def use_color(no_color_flag: bool, stream=None) -> tuple[bool, bool]:
    """(colour, forced): --no-color, then NO_COLOR (https://no-color.org: set and not empty), then FORCE_COLOR
    (https://force-color.org: set and not empty, colour even when not a terminal), else whether stdout is one."""
    if no_color_flag or os.environ.get("NO_COLOR"):
        return False, False
    if os.environ.get("FORCE_COLOR"):
        return True, True
    stream = stream or sys.stdout
    try:
        return stream.isatty(), False
    except (AttributeError, ValueError):
        return False, False


def default_formats(outputs) -> tuple[str, ...]:
    """GitHub annotations inside GitHub Actions (unless writing to a file), else text."""
    return ("github",) if os.environ.get("GITHUB_ACTIONS") == "true" and not outputs else ("text",)


def pair_outputs(formats, outputs) -> dict[int, str]:
    """{index of a format: the --output file it goes to}: the last len(outputs) formats go to the files, in order;
    the others to stdout. More files than formats is a usage error (exit 2)."""
    if isinstance(outputs, str):
        outputs = (outputs,)
    outputs = tuple(outputs or ())
    if len(outputs) > len(formats):
        import click  # a usage error of the command line (the fast `check` path declines such a command line)

        raise click.UsageError(f"{len(outputs)} --output files but {len(formats)} --format; give a --format for each "
                               "file (the last formats go to the files)")
    return dict(zip(range(len(formats) - len(outputs), len(formats)), outputs))


def emit_reports(formats, outputs, diagnostics, documents, summary, quiet=False, color=True,
                 caps: tuple[int | None, int | None] | None = None, show_info=True,
                 statistics: bool = False, err: bool = False) -> list[str]:
    """Write each requested format: the last len(outputs) formats to the --output files, in order; the others to
    stdout. With the github format and $GITHUB_STEP_SUMMARY set, also append a Markdown summary there. Files come
    first, each written whole or not at all and never through a link (fsio.write_output), so that a closed stdout
    cannot cost the report file; returns the errors (a file not written, stdout closed) for an exit code 2.
    `caps`: the most findings shown per file and per report (report/cap.py; default 1,000 and 10,000).
    `show_info`: True, or a predicate on a diagnostic: which info findings the HIDES_INFO formats show.
    `statistics`: text and concise print the count per rule instead of the findings.
    `err`: what would go to stdout goes to stderr (`check --diff` and a fixed stdin keep stdout for the diff / the
    fixed text)."""
    from .cap import cap_findings

    every = cap_findings(diagnostics, summary, *(caps or ()))
    shown = every if show_info is True else _hide_info(diagnostics, summary, show_info, caps)

    def view(fmt: str):
        return shown if fmt in HIDES_INFO else every

    def render_one(fmt: str) -> str:
        shown_diagnostics, shown_summary = view(fmt)
        if statistics and fmt in ("text", "concise"):
            from .text import statistics as table

            return table(diagnostics, summary)  # every finding, info included: a count per rule
        return render(fmt, shown_diagnostics, documents, shown_summary, quiet=quiet)

    files = pair_outputs(formats, outputs)
    errors: list[str] = []
    if files:
        from ..base.fsio import OutputError, write_output

        for i, path in files.items():
            try:
                write_output(path, render_one(formats[i]))
            except OutputError as e:
                errors.append(str(e))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if "github" in formats and step_summary:  # the runner's own file (not from the checkout): appended to
        from .github import step_summary as markdown

        try:
            with open(step_summary, "a", encoding="utf-8") as f:
                f.write(markdown(*view("github")))
        except OSError as e:
            errors.append(f"$GITHUB_STEP_SUMMARY {step_summary}: cannot write ({e.strerror or e})")
    try:
        for i, fmt in enumerate(formats):
            if i in files:
                continue
            stream = sys.stderr if err else sys.stdout
            colour, forced = (True, True) if color == "always" else use_color(not color, stream)
            if fmt == "text" and colour and not statistics:
                from .text import render_color

                shown_diagnostics, shown_summary = view(fmt)
                echo(render_color(shown_diagnostics, documents, shown_summary, quiet=quiet), nl=False, err=err,
                     color=forced)
            else:
                echo(render_one(fmt), nl=False, err=err)
    except OSError as e:  # EPIPE (`| head` closed early), ENOSPC (> /dev/full), ...
        errors.append(_stdout_lost(e))
    return errors


def _hide_info(diagnostics, summary, show, caps):
    """(diagnostics, summary) without the info findings `show` rejects; the summary counts them as hidden."""
    from .cap import cap_findings

    kept = [d for d in diagnostics if d.severity.value != "info" or show(d)]
    hidden = len(diagnostics) - len(kept)
    kept, summary = cap_findings(kept, summary, *(caps or ()))
    if hidden:
        summary = {**summary, "info_hidden": hidden}
    return kept, summary


def _stdout_lost(e: OSError) -> str:
    """The message for a stdout that cannot be written; stdout is pointed at /dev/null so that the interpreter's
    final flush does not fail (and print a traceback) a second time."""
    import errno

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # pragma: no cover - stdout without a descriptor (in-process runs)
        pass
    if e.errno == errno.EPIPE:
        return "stdout was closed (broken pipe): the report was not printed"
    return f"cannot write to stdout ({e.strerror or e}): the report was not printed"


def render(fmt, diagnostics, documents, summary, quiet=False) -> str:
    if fmt == "json":
        from .json_format import render as render_json

        return render_json(diagnostics, summary)
    if fmt == "text":
        from .text import render as render_text

        return render_text(diagnostics, documents, summary, quiet=quiet)
    if fmt == "concise":
        from .concise import render as render_concise

        return render_concise(diagnostics, documents, summary, quiet=quiet)
    import importlib

    try:
        module = importlib.import_module(f".{fmt}", __package__)
    except ImportError:
        import click

        raise click.UsageError(f"format {fmt!r} is not available in this build") from None
    return module.render(diagnostics, documents, summary)
