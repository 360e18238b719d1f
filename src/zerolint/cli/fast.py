"""The `zerolint` console script: a plain `zerolint check [options] FILES...` runs without importing click.

Click is ~34 ms of a ~95 ms one-file check in a normal install (it imports inspect, typing, enum, uuid, datetime,
gettext). `parse_check` reads check's command line from the same table click's command is built from
(cli/spec.py) into the same values, and declines (returns None) whenever it is not certain to read it as click
does: --help, an unknown option, a bad value, `--`, option clusters, abbreviations, a value that looks like an
option, anything odd. A declined command line, a bad value found later and every other command go to click, so
`--help`, every message and every exit code are click's. tests/test_fast_cli.py holds the two readers side by side.
"""

from __future__ import annotations

import os
import stat
import sys

from .process import as_cli_process
from .spec import CHECK_OPTIONS, OptionError, build_options, rewrite_write_baseline

_BY_FLAG = {flag: opt for opt in CHECK_OPTIONS for flag in opt.flags}


def parse_check(args: list[str]) -> tuple[tuple[str, ...], dict] | None:
    """(FILES, values by Opt.dest) for the arguments after `check`, exactly as click would read them; None when
    not certain (click reads it then)."""
    args = rewrite_write_baseline(args)  # as CheckCommand.parse_args does
    files: list[str] = []
    values = {opt.dest: opt.default() for opt in CHECK_OPTIONS}
    multi: dict[str, list] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            files.append(arg)
            continue
        name, eq, attached = arg.partition("=")
        if not name.startswith("--"):
            name, eq = arg, ""  # a short option: only alone (`-q`, `-o FILE`), never `-qo`, `-oFILE`, `-o=FILE`
        opt = _BY_FLAG.get(name)
        if opt is None:  # --help, -h, an unknown or abbreviated option, `--`, a cluster: click's
            return None
        value: str | bool | None  # _convert's: None where click might read it otherwise
        if opt.kind == "flag":
            if eq:
                return None
            value = True
        elif eq:
            value = attached
        elif opt.kind == "optional-value" and (i == len(args) or (args[i].startswith("-") and len(args[i]) > 1)):
            value = ""  # left out: the flag value (click's rule: the next word looks like an option)
        elif i == len(args) or args[i].startswith("-"):
            return None  # missing, or a value that looks like an option: click's reading (and message)
        else:
            value = args[i]
            i += 1
        value = _convert(opt, value)  # type: ignore[arg-type]  # True only for a flag: returned as it is
        if value is None:
            return None
        if opt.multiple:
            multi.setdefault(opt.dest, []).append(value)
        else:
            values[opt.dest] = value  # repeated: the last one wins, as in click
    for dest, items in multi.items():
        values[dest] = tuple(items)
    return tuple(files), values


def _convert(opt, value: str):
    """The value as click's type converts it, or None where click might say otherwise (it reads it then)."""
    if opt.kind == "choice":
        return value if value in opt.choices else None
    if opt.kind == "int":
        if not (value.isascii() and value.isdigit()):
            return None
        number = int(value)
        if (opt.low is not None and number < opt.low) or (opt.high is not None and number > opt.high):
            return None
        return number
    if opt.kind == "path":  # click.Path(dir_okay=False[, writable=True]): readable, not a directory, if it exists
        try:
            st = os.stat(value)
        except (OSError, ValueError):
            return value if value else None
        if stat.S_ISDIR(st.st_mode) or not os.access(value, os.R_OK) or (
                opt.writable and not os.access(value, os.W_OK)):
            return None
        return value
    return value


def _pairing_ok(values: dict) -> bool:
    """More --output files than formats is a usage error that click's path reports after linting; decline it."""
    formats, outputs = values["formats"], values["outputs"]
    return len(outputs) <= (len(formats) if formats else 1)


def fast_check(args: list[str]) -> bool:
    """Run `check` without click when its command line is certain; False: not taken (nothing was printed)."""
    if any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):  # shell completion: click's
        return False
    parsed = parse_check(args)
    if parsed is None or not _pairing_ok(parsed[1]):
        return False
    files: tuple[str, ...] | list[str]
    files, values = parsed
    files = files or ["."]  # no path: the working directory, as ruff does
    try:
        os.getcwd()
    except OSError:  # the group's message
        return False
    try:
        options = build_options(files, values)
    except OptionError:
        return False
    from .run_check import run_check

    try:
        run_check(options, show_settings=values["show_settings"], training_args=values["training_args"],
                  show_files=values["show_files"], show_uses=values["show_uses"],
                  watch=values["watch"])
    except OptionError:  # an unknown rule code, found before anything was printed
        return False
    return True


def main(args: list[str] | None = None, prog_name: str | None = None) -> None:
    """The console script and `python -m zerolint`: `check` without click when certain, else the click group."""
    args = sys.argv[1:] if args is None else list(args)
    if args[:1] == ["check"] and as_cli_process(lambda: _fast_as_click(args[1:])):
        return
    from .app import main as group

    group.main(args=args, prog_name=prog_name)


def _fast_as_click(args: list[str]) -> bool:
    """fast_check with the endings the click group gives a command: Ctrl-C prints "zerolint: interrupted" (exit 130,
    cli/app.py), EOF "Aborted!" (exit 1), a closed stdout (EPIPE) exits 1 quietly, a click error raised by a lower
    layer is shown (exit 2)."""
    from ..base.console import echo

    try:
        if not fast_check(args):
            return False
        sys.exit(0)  # run_check always exits; click's ctx.exit() would say 0
    except KeyboardInterrupt:
        from ..report.output import EXIT_INTERRUPTED

        echo(err=True)
        echo("zerolint: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except EOFError:
        echo(err=True)
        echo("Aborted!", err=True)
        sys.exit(1)
    except OSError as e:
        import errno

        if e.errno != errno.EPIPE:
            raise
        sys.stdout, sys.stderr = _Pacified(sys.stdout), _Pacified(sys.stderr)
        sys.exit(1)
    except Exception as e:
        click = sys.modules.get("click")
        if click is None or not isinstance(e, click.ClickException):
            raise
        e.show()
        sys.exit(e.exit_code)


class _Pacified:
    """click's _PacifyFlushWrapper: a stream whose flush ignores EPIPE (the interpreter's final flush)."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        import errno

        try:
            self.wrapped.flush()
        except OSError as e:
            if e.errno != errno.EPIPE:
                raise

    def __getattr__(self, attr):
        return getattr(self.wrapped, attr)
