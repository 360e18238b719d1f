"""The click side of `check`'s options: the click options built from cli/spec.py's table (declared there once),
the command class that reads `--write-baseline FILES` right, and click errors from spec's OptionError."""

from __future__ import annotations

import click

from .spec import CHECK_OPTIONS, TARGETS, Opt, OptionError, build_options, check_rule_codes, split_codes

__all__ = ["TARGETS", "CheckCommand", "_check_rule_codes", "_split_codes", "click_options", "lint_options"]

_split_codes = split_codes


def _check_rule_codes(codes: list[str], option: str, ruleset=None) -> None:
    """spec.check_rule_codes with click's error (usage, message, exit 2)."""
    try:
        check_rule_codes(codes, option, ruleset)
    except OptionError as e:
        raise click.BadParameter(e.message, param_hint=e.hint) from None


def click_option(opt: Opt):
    """The click option for one row of the table."""
    kw: dict = {"help": opt.help}
    if opt.kind == "flag":
        kw["is_flag"] = True
    elif opt.kind == "optional-value":
        kw.update(is_flag=False, flag_value="", default=None)
    else:
        if opt.multiple:
            kw["multiple"] = True
        else:
            kw["default"] = None
        if opt.kind == "choice":
            kw["type"] = click.Choice(opt.choices)
        elif opt.kind == "int":
            kw["type"] = click.IntRange(min=opt.low, max=opt.high)
        elif opt.kind == "path":
            kw["type"] = click.Path(dir_okay=False, writable=True) if opt.writable else click.Path(dir_okay=False)
    if opt.metavar is not None:
        kw["metavar"] = opt.metavar
    return click.option(*opt.flags, opt.dest, **kw)


def click_options() -> list:
    return [click_option(opt) for opt in CHECK_OPTIONS]


def lint_options(command):
    """Decorate a click command with every option of `check`, in the order `--help` shows them."""
    for option in reversed(click_options()):
        command = option(command)
    return command


class CheckCommand(click.Command):
    """`check`: `--write-baseline configs` names FILES, not the baseline (spec.rewrite_write_baseline)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from .spec import rewrite_write_baseline

        return super().parse_args(ctx, rewrite_write_baseline(args))


def click_build_options(files: tuple[str, ...], kw: dict):
    """spec.build_options with click's error for a bad value."""
    try:
        return build_options(files, kw)
    except OptionError as e:
        raise click.BadParameter(e.message, param_hint=e.hint) from None
