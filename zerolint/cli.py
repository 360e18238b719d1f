"""The `zerolint` command line. Heavy modules (rich, pydantic, torch, deepspeed) are imported inside the commands
that need them, never at import time: `zerolint check` must start fast."""

from __future__ import annotations

import os
import sys

import click

from . import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
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
    from .extra_rules import known_rules  # built-in, engine-level and the loaded policy rules

    rules = known_rules()
    for c in codes:
        if c.upper() == "ALL" or c.upper() == "ZL" or any(
            c.lower() == r.name or r.code.startswith(c.upper()) or c in r.aliases for r in rules
        ):
            continue
        from .suggest import closest

        hint = closest(c, [r.code for r in rules] + [r.name for r in rules])
        raise click.BadParameter(f"unknown rule {c!r}" + (f"; did you mean {hint!r}?" if hint else ""),
                                 param_hint=option)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="zerolint")
def main() -> None:
    """zerolint: find the mistakes in a DeepSpeed config before the job starts."""


@main.command()
@click.argument("files", nargs=-1)
@click.option("--format", "formats", multiple=True, type=click.Choice(["text", "json", "sarif", "github", "junit"]),
              help="Output format (repeatable). Default: text, or github when GITHUB_ACTIONS=true and no --output.")
@click.option("--output", "-o", "outputs", multiple=True, type=click.Path(dir_okay=False, writable=True),
              help="Write a report to FILE (repeatable: the last N formats go to the N files, in order; the others "
                   "to stdout). `--format text --format sarif -o zerolint.sarif`.")
@click.option("--target", type=click.Choice(TARGETS), default=None,
              help="Who reads the config: raw DeepSpeed, the HF Trainer, Accelerate; auto = hf when the file holds "
                   '"auto" values, else deepspeed [default: auto].')
@click.option("--world-size", type=click.IntRange(min=1), default=None,
              help="Data-parallel world size the job runs with (enables the batch-size equation).")
@click.option("--deepspeed-version", metavar="X.Y.Z", default=None,
              help="DeepSpeed version to check against [default: the installed one, else 0.19.8].")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Exit 1 when a finding at or above this severity is reported [default: error].")
@click.option("--select", multiple=True, help="Rules to run (codes, prefixes like ZL2, names; comma-separated).")
@click.option("--ignore", multiple=True, help="Rules to skip (codes, prefixes, names; comma-separated).")
@click.option("--severity", "severity_overrides", multiple=True, metavar="CODE=LEVEL",
              help="Override a rule's severity, e.g. --severity ZL401=warning.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary line (text format).")
@click.option("--no-color", is_flag=True, help="Never colour the text output.")
@click.option("--stdin-filename", default=None, help="Name to report for `-` (stdin).")
@click.option("--max-bytes", type=click.IntRange(min=1), default=None,
              help="Largest file to read [default: 16 MiB].")
@click.option("--max-depth", type=click.IntRange(min=1, max=5000), default=None,
              help="Deepest nesting to parse [default: 256].")
@click.option("--exclude", multiple=True, help="Glob of paths to skip when expanding directories.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="Use this zerolint config (.zerolint.toml or pyproject.toml) for every file instead of the "
                   "nearest one above each file.")
@click.option("--show-settings", is_flag=True, help="Print the resolved settings, and where each came from, for the "
              "first file (or the working directory) and exit.")
@click.option("--baseline", type=click.Path(dir_okay=False), default=None,
              help="Hide the findings recorded in this baseline file (see --write-baseline).")
@click.option("--write-baseline", is_flag=False, flag_value="", default=None, metavar="[FILE]",
              help="Record every current finding in a baseline file [default: the config's `baseline`, else "
                   ".zerolint-baseline.json] and exit 0.")
@click.option("--training-args", type=click.Path(dir_okay=False), default=None, metavar="FILE.json",
              help="A TrainingArguments dump (args.to_json_string()): report every value the HF Trainer would "
                   "reject as a mismatch with the DeepSpeed config.")
@click.option("--fix", is_flag=True, help="Apply the safe fixes in place, then report what remains.")
@click.option("--unsafe-fixes", is_flag=True,
              help="With --fix/--diff also apply the unsafe fixes (they change behaviour); alone, count them as "
                   "available.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff and write nothing (exit 1 if any).")
@click.option("--fix-only", is_flag=True, help="Apply the fixes and do not report the remaining findings.")
@click.option("--prefer", multiple=True, metavar="CHOICE",
              help="Pick this alternative where a finding offers several (e.g. --prefer bf16); repeatable.")
def check(files, formats, outputs, target, world_size, deepspeed_version, fail_on, select, ignore, severity_overrides,
          quiet, no_color, stdin_filename, max_bytes, max_depth, exclude, config_file=None, show_settings=False,
          baseline=None, write_baseline=None, training_args=None, fix=False, unsafe_fixes=False, diff=False,
          fix_only=False, prefer=()) -> None:
    """Lint DeepSpeed config FILES (files, directories, globs, or - for stdin)."""
    from .api import Limits, UnreadableFile
    from .files import expand
    from .versions import Version

    if deepspeed_version is not None:
        try:
            Version(deepspeed_version)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--deepspeed-version") from None
    select_codes, ignore_codes = _split_codes(select), _split_codes(ignore)
    overrides = _parse_severity_overrides(severity_overrides)
    if not files and not show_settings:
        raise click.UsageError("Missing argument 'FILES...'.")
    paths, problems = expand(list(files), list(exclude))
    unreadable = list(problems)
    # Settings per file: defaults < the nearest zerolint config (zerolint/config.py) < these flags.
    from .config import ConfigError, Project

    try:
        project = Project({"select": select_codes, "ignore": ignore_codes, "severity": overrides, "target": target,
                           "world-size": world_size, "deepspeed-version": deepspeed_version, "fail-on": fail_on,
                           "baseline": baseline}, config_path=config_file)
        paths = project.included(paths)
        first = project.resolve(paths[0] if paths else "-")
        training = None
        if training_args is not None:
            from .hf import TrainingArgsError, training_args_dict

            try:
                training = training_args_dict(training_args)
            except TrainingArgsError as e:
                raise ConfigError(f"--training-args: {e}") from None
    except ConfigError as e:
        click.echo(f"zerolint: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    _check_rule_codes(select_codes, "--select")
    _check_rule_codes(ignore_codes, "--ignore")
    _check_rule_codes(list(overrides), "--severity")
    if show_settings:
        click.echo(first.show(), nl=False)
        sys.exit(EXIT_OK)

    # The first file's settings serve --fix (and carry the options no config file sets, for every file).
    settings, fail_on = first.settings(training_args=training), first.get("fail-on")
    selection = first.selection()
    limits = Limits(**{k: v for k, v in (("max_bytes", max_bytes), ("max_depth", max_depth)) if v is not None})
    if fix or diff or fix_only:
        from .fixcli import run_fixes

        sys.exit(run_fixes(files, paths, unreadable, settings, selection, limits, fix=fix or fix_only, diff=diff,
                           fix_only=fix_only, unsafe=unsafe_fixes, prefer=prefer, formats=formats, outputs=outputs,
                           quiet=quiet, color=not no_color, fail_on=fail_on, stdin_filename=stdin_filename))
    results = []
    for path in paths:
        try:
            results.extend(project.lint(path, limits, stdin_filename, training, template=settings))
        except UnreadableFile as e:
            unreadable.append(str(e))

    # Suppressions in the config and the baseline (zerolint/suppress.py); unused ones are reported as ZL090.
    from .suppress import Suppressions, write_baseline as write_baseline_file

    try:
        suppressions = Suppressions(project, use_baseline=write_baseline is None)
        diagnostics, unused = suppressions.apply(results)
        if write_baseline is not None:
            target_file = write_baseline or os.path.relpath(first.baseline_path(for_writing=True))
            count = write_baseline_file(target_file, diagnostics)
            click.echo(f"zerolint: wrote {count} baseline {'entry' if count == 1 else 'entries'} "
                       f"({len(diagnostics)} findings) to {target_file}", err=True)
            sys.exit(EXIT_USAGE if unreadable else EXIT_OK)
        diagnostics += unused
        fail_ranks = {d.file: project.fail_rank(d.file) for d in diagnostics}
    except ConfigError as e:
        click.echo(f"zerolint: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    documents = {r.path: r.document for r in results if r.document is not None} | suppressions.shown
    summary = make_summary(diagnostics, len(results))
    if unsafe_fixes:  # `--unsafe-fixes` alone: the unsafe fixes count as available to --fix --unsafe-fixes
        summary["fixable"], summary["unsafe_fixable"] = summary["fixable"] + summary["unsafe_fixable"], 0
    emit(formats or default_formats(outputs), outputs, diagnostics, documents, summary, quiet=quiet,
         color=not no_color)

    for msg in unreadable:
        click.echo(f"zerolint: error: {msg}", err=True)
    if unreadable:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_FINDINGS if any(d.severity.rank >= fail_ranks[d.file] for d in diagnostics) else EXIT_OK)


def make_summary(diagnostics, files: int) -> dict:
    counts = {"error": 0, "warning": 0, "info": 0}
    fixable = unsafe = 0
    for d in diagnostics:
        counts[d.severity.value] += 1
        fix = d.fix
        if fix is not None:
            fixable += fix.safe
            unsafe += not fix.safe
    return {"files": files, "counts": counts, "fixable": fixable, "unsafe_fixable": unsafe}


def default_formats(outputs) -> tuple[str, ...]:
    """GitHub annotations inside GitHub Actions (unless writing to a file), else text."""
    return ("github",) if os.environ.get("GITHUB_ACTIONS") == "true" and not outputs else ("text",)


def emit(formats, outputs, diagnostics, documents, summary, quiet=False, color=True) -> None:
    """Write each requested format: the last len(outputs) formats to the --output files, in order; the others to
    stdout. With the github format and $GITHUB_STEP_SUMMARY set, also append a Markdown summary there."""
    if isinstance(outputs, str):
        outputs = (outputs,)
    outputs = tuple(outputs or ())
    if len(outputs) > len(formats):
        raise click.UsageError(f"{len(outputs)} --output files but {len(formats)} --format; give a --format for each "
                               "file (the last formats go to the files)")
    files = dict(zip(range(len(formats) - len(outputs), len(formats)), outputs))
    for i, fmt in enumerate(formats):
        text = render(fmt, diagnostics, documents, summary, quiet=quiet)
        if i in files:
            with open(files[i], "w", encoding="utf-8") as f:
                f.write(text)
        elif fmt == "text" and color and sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
            from .reporters.text import print_rich

            print_rich(diagnostics, documents, summary, quiet=quiet)
        else:
            click.echo(text, nl=False)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if "github" in formats and step_summary:
        from .reporters.github import step_summary as markdown

        with open(step_summary, "a", encoding="utf-8") as f:
            f.write(markdown(diagnostics, summary))


def render(fmt, diagnostics, documents, summary, quiet=False) -> str:
    if fmt == "json":
        from .reporters.json_format import render as r

        return r(diagnostics, summary)
    if fmt == "text":
        from .reporters.text import render as r

        return r(diagnostics, documents, summary, quiet=quiet)
    import importlib

    try:
        module = importlib.import_module(f".reporters.{fmt}", __package__)
    except ImportError:
        raise click.UsageError(f"format {fmt!r} is not available in this build") from None
    return module.render(diagnostics, documents, summary)


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
def rules_cmd(fmt) -> None:
    """List every rule: code, name, default severity, fix, summary."""
    from .rule import all_rules

    rules = all_rules()
    if fmt == "json":
        import json

        click.echo(json.dumps([
            {"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary, "versions": r.versions,
             "targets": list(r.targets), "fixable": r.fixable, "url": r.url} for r in rules], indent=2))
        return
    if fmt == "markdown":
        click.echo("| code | name | severity | fix | summary |\n| --- | --- | --- | --- | --- |")
        for r in rules:
            click.echo(f"| [{r.code}]({r.code}.md) | `{r.name}` | {r.severity} | {r.fixable or ''} | {r.summary} |")
        return
    width = max(len(r.name) for r in rules)
    for r in rules:
        fix = {"safe": "fix", "unsafe": "fix*", "alternatives": "fix?"}.get(r.fixable or "", "")
        click.echo(f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {fix:<4}  {r.summary}")


@main.command("rule")
@click.argument("code_or_name")
def rule_cmd(code_or_name) -> None:
    """Explain one rule: summary, rationale, bad and good examples, versions, evidence."""
    from .rule import all_rules, find_rule
    from .ruledocs import render_rule

    rule = find_rule(code_or_name)
    if rule is None:
        from .suggest import closest

        rules = all_rules()
        hint = closest(code_or_name, [r.code for r in rules] + [r.name for r in rules])
        raise click.UsageError(f"no rule {code_or_name!r}" + (f"; did you mean {hint}?" if hint else ""))
    click.echo(render_rule(rule, terminal=True), nl=False)


@main.command("schema")
@click.option("--deepspeed-version", metavar="X.Y.Z", default=None,
              help="Print the schema of this DeepSpeed version [default: the installed one, else 0.19.8].")
def schema_cmd(deepspeed_version) -> None:
    """Print the JSON Schema of the DeepSpeed config (for editors and other validators)."""
    from importlib import resources

    from .versions import Version, schema_line
    from .view import default_deepspeed_version

    try:
        version = Version(deepspeed_version or default_deepspeed_version())
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--deepspeed-version") from None
    name = f"deepspeed-{schema_line(version)}.json"
    click.echo(resources.files("zerolint.schemas").joinpath(name).read_text("utf-8"), nl=False)


@main.command("upgrade")
@click.argument("files", nargs=-1, required=True)
@click.option("--to", "to", metavar="X.Y.Z", default=None,
              help="DeepSpeed version to upgrade the config for [default: the installed one, else 0.19.8].")
@click.option("--diff", is_flag=True, help="Print the rewrites as a unified diff and write nothing (exit 1 if any).")
@click.option("--remove-removed", is_flag=True,
              help="Also delete blocks the target version removed (amp, sparse_attention, elasticity, ...); without "
                   "it they are only reported, with what replaces them.")
@click.option("--target", type=click.Choice(TARGETS), default="auto", show_default=True,
              help="Who reads the config (as for check).")
@click.option("--no-color", is_flag=True, help="Never colour the text output.")
def upgrade_cmd(files, to, diff, remove_removed, target, no_color) -> None:
    """Rewrite deprecated and renamed keys of FILES for DeepSpeed --to VERSION (cpu_offload, bfloat16,
    stage3_gather_fp16_weights_on_model_save, aio.thread_count, ...), from DeepSpeed's own deprecation metadata."""
    from .api import Limits
    from .engine import Selection
    from .files import expand
    from .fixcli import run_fixes
    from .upgrade import upgrade_text
    from .versions import Version
    from .view import Settings

    if to is not None:
        try:
            Version(to)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--to") from None
    settings = Settings(target=target, deepspeed_version=to)
    paths, problems = expand(list(files), [])

    def factory(path):
        return lambda text: upgrade_text(text, path, to=to, remove_removed=remove_removed, target=target)

    sys.exit(run_fixes(files, paths, list(problems), settings, Selection(), Limits(), fix=True, diff=diff,
                       fix_only=False, unsafe=False, prefer=(), formats=("text",), outputs=(), quiet=False,
                       color=not no_color, fail_on="error", stdin_filename=None, fixer_factory=factory,
                       verb="Upgraded", show_applied=True))


if __name__ == "__main__":  # pragma: no cover
    main()
