"""`zerolint server`: the language server (zerolint/lsp/), imported only when the command runs (it needs pygls,
the `lsp` extra)."""

from __future__ import annotations

import sys

import click

from ..report.output import EXIT_USAGE
from .options import TARGETS


@click.command("server")
@click.option("--stdio", is_flag=True, help="Talk LSP over stdin/stdout (the default and only transport).")
@click.option("--target", type=click.Choice(TARGETS), default=None,
              help="Who reads the configs [default: each file's [tool.zerolint] target, else auto].")
@click.option("--deepspeed-version", metavar="X.Y.Z", default=None,
              help="DeepSpeed version to check against [default: each file's settings, else the installed one].")
@click.option("--world-size", type=click.IntRange(min=1), default=None, metavar="N",
              help="GPUs in the job, for the batch-size checks [default: each file's settings, else the uses the "
                   "repository has, else none].")
@click.option("--isolated", is_flag=True, help="Ignore every zerolint settings file in the tree (as for check).")
@click.option("--debounce-ms", type=click.IntRange(min=0, max=10000), default=100, show_default=True,
              help="Milliseconds of quiet typing before a changed document is linted.")
def server(stdio, target, deepspeed_version, world_size, isolated, debounce_ms) -> None:
    """Run the language server for editors (LSP over stdio): diagnostics as you type, quick fixes, hover and
    completion from the DeepSpeed schema. Setup per editor: docs/editors.md."""
    if deepspeed_version is not None:
        from ..model.versions import Version

        try:
            Version(deepspeed_version)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--deepspeed-version") from None
    try:
        from ..lsp.server import serve
    except ImportError as e:
        from ..base.version import install_hint

        click.echo(f"zerolint: error: the language server needs pygls ({e}); install it with "
                   f"{install_hint('lsp')}", err=True)
        sys.exit(EXIT_USAGE)
    serve(target=target, deepspeed_version=deepspeed_version, isolated=isolated, debounce=debounce_ms / 1000,
          world_size=world_size)
