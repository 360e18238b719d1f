"""Option parsing shared by the commands: targets, rule codes, severity overrides."""

from __future__ import annotations

import click

TARGETS = ("auto", "deepspeed", "hf", "accelerate")


def _parse_severity_overrides(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for v in values:
        if "=" not in v:
            raise click.BadParameter(f"{v!r}: expected CODE=LEVEL, e.g. ZL301=warning", param_hint="--severity")
        code, level = v.split("=", 1)
        if level.strip().lower() not in ("error", "warning", "info"):
            raise click.BadParameter(f"{v!r}: level must be error, warning or info", param_hint="--severity")
        out[code.strip()] = level.strip().lower()
    return out


def _split_codes(values: tuple[str, ...]) -> list[str]:
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def _check_rule_codes(codes: list[str], option: str) -> None:
    from ..rules.engine_rules import known_rules  # built-in, engine-level and the loaded policy rules

    rules = known_rules()
    for c in codes:
        if c.upper() == "ALL" or c.upper() == "ZL" or any(
            c.lower() == r.name or r.code.startswith(c.upper()) or c in r.aliases for r in rules
        ):
            continue
        from ..base.suggest import closest

        hint = closest(c, [r.code for r in rules] + [r.name for r in rules])
        raise click.BadParameter(f"unknown rule {c!r}" + (f"; did you mean {hint!r}?" if hint else ""),
                                 param_hint=option)
