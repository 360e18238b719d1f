"""`zerolint check` as a click command: lint DeepSpeed configs, or fix them (--fix, --diff), and report. The
options come from cli/spec.py's table (cli/options.py makes them click options), become a pipeline.Options, and
cli/run_check.py does the rest, the same body the fast path (cli/fast.py) runs without click."""

from __future__ import annotations

import click

from .options import CheckCommand, click_build_options, lint_options
from .spec import OptionError


@click.command(cls=CheckCommand)
@click.argument("files", nargs=-1)
@lint_options
def check(files, **kw) -> None:
    """Lint DeepSpeed config FILES (files, directories, globs, or - for stdin; none: the working directory)."""
    from .run_check import run_check

    options = click_build_options(files or (".",), kw)  # no path: the working directory, as ruff does
    try:
        run_check(options, show_settings=kw["show_settings"], training_args=kw["training_args"],
                  show_files=kw["show_files"], show_uses=kw["show_uses"],
                  watch=kw["watch"])
    except OptionError as e:
        raise click.BadParameter(e.message, param_hint=e.hint) from None
