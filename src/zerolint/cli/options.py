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


def _check_rule_codes(codes: list[str], option: str, ruleset=None) -> None:
    """Each code must name a rule of `ruleset` (default: the built-in one; pass the project's, with its policies)."""
    from ..rules.ruleset import RuleSet

    rules = (ruleset or RuleSet.builtin()).known()
    for c in codes:
        if c.upper() == "ALL" or c.upper() == "ZL" or any(
            c.lower() == r.name or r.code.startswith(c.upper()) or c in r.aliases for r in rules
        ):
            continue
        from ..base.suggest import closest

        hint = closest(c, [r.code for r in rules] + [r.name for r in rules])
        raise click.BadParameter(f"unknown rule {c!r}" + (f"; did you mean {hint!r}?" if hint else ""),
                                 param_hint=option)


# -- the options `check` takes, declared once, and the pipeline.Options built from them -------------------------------

FORMATS = ("text", "json", "sarif", "github", "junit")

LINT_OPTIONS = [
    click.option("--format", "formats", multiple=True, type=click.Choice(FORMATS),
                 help="Output format (repeatable). Default: text, or github when GITHUB_ACTIONS=true and no "
                      "--output."),
    click.option("--output", "-o", "outputs", multiple=True, type=click.Path(dir_okay=False, writable=True),
                 help="Write a report to FILE (repeatable: the last N formats go to the N files, in order; the "
                      "others to stdout). `--format text --format sarif -o zerolint.sarif`."),
    click.option("--target", type=click.Choice(TARGETS), default=None,
                 help="Who reads the config: raw DeepSpeed, the HF Trainer, Accelerate; auto = hf when the file "
                      'holds "auto" values, else deepspeed [default: auto].'),
    click.option("--world-size", type=click.IntRange(min=1), default=None,
                 help="Data-parallel world size the job runs with (enables the batch-size equation)."),
    click.option("--deepspeed-version", metavar="X.Y.Z", default=None,
                 help="DeepSpeed version to check against [default: the installed one, else 0.19.8]."),
    click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
                 help="Exit 1 when a finding at or above this severity is reported [default: error]."),
    click.option("--select", multiple=True, help="Rules to run (codes, prefixes like ZL2, names; comma-separated)."),
    click.option("--ignore", multiple=True, help="Rules to skip (codes, prefixes, names; comma-separated)."),
    click.option("--severity", "severity_overrides", multiple=True, metavar="CODE=LEVEL",
                 help="Override a rule's severity, e.g. --severity ZL401=warning."),
    click.option("--quiet", "-q", is_flag=True, help="Print only the summary line (text format)."),
    click.option("--no-color", is_flag=True, help="Never colour the text output."),
    click.option("--stdin-filename", default=None, help="Name to report for `-` (stdin)."),
    click.option("--max-bytes", type=click.IntRange(min=1), default=None,
                 help="Largest file to read [default: 16 MiB]."),
    click.option("--max-depth", type=click.IntRange(min=1, max=5000), default=None,
                 help="Deepest nesting to parse [default: 256]."),
    click.option("--exclude", multiple=True, help="Glob of paths to skip when expanding directories."),
    click.option("--max-findings-per-file", type=click.IntRange(min=0), default=None, metavar="N",
                 help="Show at most N findings per file, errors first (0: no limit) [default: 1000]. The counts and "
                      "the exit code still include every finding."),
    click.option("--max-findings", type=click.IntRange(min=0), default=None, metavar="N",
                 help="Show at most N findings in the whole report (0: no limit) [default: 10000]."),
    click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
                 help="Use this zerolint config (.zerolint.toml or pyproject.toml) for every file instead of the "
                      "nearest one above each file."),
    click.option("--isolated", is_flag=True,
                 help="Ignore every zerolint config file in the tree (.zerolint.toml, [tool.zerolint], the default "
                      "baseline): for untrusted checkouts such as pull requests. --config and --baseline still "
                      "apply."),
    click.option("--show-settings", is_flag=True, help="Print the resolved settings, and where each came from, for "
                 "the first file (or the working directory) and exit."),
    click.option("--baseline", type=click.Path(dir_okay=False), default=None,
                 help="Hide the findings recorded in this baseline file (see --write-baseline)."),
    click.option("--write-baseline", is_flag=False, flag_value="", default=None, metavar="[FILE]",
                 help="Record every current finding in a baseline file [default: the config's `baseline`, else "
                      ".zerolint-baseline.json] and exit 0."),
    click.option("--training-args", type=click.Path(dir_okay=False), default=None, metavar="FILE.json",
                 help="A TrainingArguments dump (args.to_json_string()): report every value the HF Trainer would "
                      "reject as a mismatch with the DeepSpeed config."),
    click.option("--fix", is_flag=True, help="Apply the safe fixes in place, then report what remains."),
    click.option("--unsafe-fixes", is_flag=True,
                 help="With --fix/--diff also apply the unsafe fixes (they change behaviour); alone, count them as "
                      "available."),
    click.option("--diff", is_flag=True, help="Print the fixes as a unified diff and write nothing (exit 1 if any)."),
    click.option("--fix-only", is_flag=True, help="Apply the fixes and do not report the remaining findings."),
    click.option("--prefer", multiple=True, metavar="CHOICE",
                 help="Pick this alternative where a finding offers several (e.g. --prefer bf16); repeatable."),
    click.option("--params", default=None, metavar="N",
                 help="Model size (125M, 7B, 70e9) for the memory rules (ZL801, with --gpu-memory)."),
    click.option("--model", "model_config", default=None, metavar="CONFIG.JSON",
                 help="A Hugging Face config.json giving the model size and shape (no weights are read)."),
    click.option("--gpu-memory", default=None, metavar="SIZE", help="Memory per GPU, e.g. 24GB, 80GB (GB = GiB)."),
    click.option("--host-memory", default=None, metavar="SIZE", help="Host memory per node, e.g. 512GB."),
    click.option("--gpus-per-node", type=click.IntRange(min=1), default=None,
                 help="GPUs per node [default: the world size, one node] (memory rules)."),
]


def lint_options(command):
    """Decorate a click command with every option of `check`, in the order `--help` shows them."""
    for option in reversed(LINT_OPTIONS):
        command = option(command)
    return command


class CheckCommand(click.Command):
    """`check`: `--write-baseline` takes an optional value, so click would read `--write-baseline configs` as the
    baseline FILE `configs` and then miss FILES. A following word that is a directory or an existing file that is
    not a baseline is a FILES argument; `--write-baseline=FILE` always names the baseline."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        import os

        args = list(args)
        for i, arg in enumerate(args[:-1]):
            if arg == "--":
                break
            nxt = args[i + 1]
            if arg == "--write-baseline" and (os.path.isdir(nxt) or (os.path.isfile(nxt) and
                                                                     not is_baseline_file(nxt))):
                args[i] = "--write-baseline="  # the default baseline file; `nxt` stays a FILES argument
        return super().parse_args(ctx, args)


def is_baseline_file(path: str) -> bool:
    import json

    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f).get("zerolint-baseline") is not None
    except (OSError, ValueError, AttributeError, RecursionError):
        return False


def build_options(files: tuple[str, ...], kw: dict):
    """pipeline.Options from the parsed click options: validated (a bad value is a click usage error, exit 2)."""
    from ..base.fsio import Limits
    from ..model.versions import Version
    from ..pipeline import Options
    from ..report.cap import MAX_PER_FILE, MAX_PER_REPORT

    if kw["deepspeed_version"] is not None:
        try:
            Version(kw["deepspeed_version"])
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--deepspeed-version") from None
    write_baseline = kw["write_baseline"]
    overrides = _parse_severity_overrides(kw["severity_overrides"])
    memory = _memory_settings(kw["params"], kw["model_config"], kw["gpu_memory"], kw["host_memory"],
                              kw["gpus_per_node"])
    fix = "diff" if kw["diff"] else "fix-only" if kw["fix_only"] else "fix" if kw["fix"] else "none"
    limits = Limits(**{k: kw[k] for k in ("max_bytes", "max_depth") if kw[k] is not None})
    caps = (MAX_PER_FILE if kw["max_findings_per_file"] is None else kw["max_findings_per_file"],
            MAX_PER_REPORT if kw["max_findings"] is None else kw["max_findings"])
    return Options(
        files=tuple(files), exclude=tuple(kw["exclude"]), target=kw["target"], world_size=kw["world_size"],
        deepspeed_version=kw["deepspeed_version"], select=tuple(_split_codes(kw["select"])),
        ignore=tuple(_split_codes(kw["ignore"])), severity=tuple(overrides.items()), fail_on=kw["fail_on"],
        limits=limits, caps=caps, isolated=kw["isolated"], config_file=kw["config_file"], baseline=kw["baseline"],
        write_baseline=write_baseline, memory=memory, fix=fix, unsafe=kw["unsafe_fixes"],
        prefer=tuple(kw["prefer"]), formats=tuple(kw["formats"]), outputs=tuple(kw["outputs"]), quiet=kw["quiet"],
        color=not kw["no_color"], stdin_filename=kw["stdin_filename"])


def _memory_settings(params, model_config, gpu_memory, host_memory, gpus_per_node) -> tuple:
    """Validate --params/--model/--gpu-memory/--host-memory up front; the Settings fields they set."""
    if params is None and model_config is None and gpu_memory is None and host_memory is None:
        return ()
    from ..estimate.memory import parse_bytes
    from ..estimate.modelspec import ModelSpecError, resolve

    try:
        resolve(params=params, model=model_config)
    except ModelSpecError as e:
        raise click.BadParameter(str(e), param_hint="--model" if model_config else "--params") from None
    for value, hint in ((gpu_memory, "--gpu-memory"), (host_memory, "--host-memory")):
        if value is not None:
            try:
                parse_bytes(value)
            except ValueError as e:
                raise click.BadParameter(str(e), param_hint=hint) from None
    return (("params", params), ("model", model_config), ("gpu_memory", gpu_memory), ("host_memory", host_memory),
            ("gpus_per_node", gpus_per_node))
