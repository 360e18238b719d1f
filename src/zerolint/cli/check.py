"""`zerolint check`: lint DeepSpeed configs, or fix them (--fix, --diff), and report."""

from __future__ import annotations

import os
import sys

import click

from ..report.output import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, _exit, default_formats, emit_reports, make_summary
from .options import TARGETS, _check_rule_codes, _parse_severity_overrides, _split_codes


@click.command()
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
@click.option("--max-findings-per-file", type=click.IntRange(min=0), default=None, metavar="N",
              help="Show at most N findings per file, errors first (0: no limit) [default: 1000]. The counts and "
                   "the exit code still include every finding.")
@click.option("--max-findings", type=click.IntRange(min=0), default=None, metavar="N",
              help="Show at most N findings in the whole report (0: no limit) [default: 10000].")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="Use this zerolint config (.zerolint.toml or pyproject.toml) for every file instead of the "
                   "nearest one above each file.")
@click.option("--isolated", is_flag=True,
              help="Ignore every zerolint config file in the tree (.zerolint.toml, [tool.zerolint], the default "
                   "baseline): for untrusted checkouts such as pull requests. --config and --baseline still apply.")
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
@click.option("--params", default=None, metavar="N",
              help="Model size (125M, 7B, 70e9) for the memory rules (ZL801, with --gpu-memory).")
@click.option("--model", "model_config", default=None, metavar="CONFIG.JSON",
              help="A Hugging Face config.json giving the model size and shape (no weights are read).")
@click.option("--gpu-memory", default=None, metavar="SIZE", help="Memory per GPU, e.g. 24GB, 80GB (GB = GiB).")
@click.option("--host-memory", default=None, metavar="SIZE", help="Host memory per node, e.g. 512GB.")
@click.option("--gpus-per-node", type=click.IntRange(min=1), default=None,
              help="GPUs per node [default: the world size, one node] (memory rules).")
def check(files, formats, outputs, target, world_size, deepspeed_version, fail_on, select, ignore, severity_overrides,
          quiet, no_color, stdin_filename, max_bytes, max_depth, exclude, config_file=None, isolated=False,
          show_settings=False,
          baseline=None, write_baseline=None, training_args=None, fix=False, unsafe_fixes=False, diff=False,
          fix_only=False, prefer=(), params=None, model_config=None, gpu_memory=None, host_memory=None,
          gpus_per_node=None, max_findings_per_file=None, max_findings=None) -> None:
    """Lint DeepSpeed config FILES (files, directories, globs, or - for stdin)."""
    from ..base.files import expand
    from ..base.fsio import Limits, UnreadableFile
    from ..model.versions import Version

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
    # Settings per file: defaults < the nearest zerolint config (project/settings.py) < these flags.
    from ..pipeline import lint_project
    from ..project.settings import ConfigError, Project

    try:
        project = Project({"select": select_codes, "ignore": ignore_codes, "severity": overrides, "target": target,
                           "world-size": world_size, "deepspeed-version": deepspeed_version, "fail-on": fail_on,
                           "baseline": baseline}, config_path=config_file, isolated=isolated)
        excluded = project.excluded_by(paths)
        paths = project.included(paths)
        first = project.resolve(paths[0] if paths else "-")
        training = None
        if training_args is not None:
            from ..model.trainer import TrainingArgsError, training_args_dict

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
    if params is not None or model_config is not None or gpu_memory is not None or host_memory is not None:
        _memory_settings(settings, params, model_config, gpu_memory, host_memory, gpus_per_node)
    selection = first.selection()
    limits = Limits(**{k: v for k, v in (("max_bytes", max_bytes), ("max_depth", max_depth)) if v is not None})
    if fix or diff or fix_only:
        from .fix import run_fixes

        sys.exit(run_fixes(files, paths, unreadable, settings, selection, limits, fix=fix or fix_only, diff=diff,
                           fix_only=fix_only, unsafe=unsafe_fixes, prefer=prefer, formats=formats, outputs=outputs,
                           quiet=quiet, color=not no_color, fail_on=fail_on, stdin_filename=stdin_filename))
    results = []
    for path in paths:
        try:
            results.extend(lint_project(project, path, limits, stdin_filename, training, template=settings))
        except UnreadableFile as e:
            unreadable.append(str(e))

    # Suppressions in the config and the baseline (zerolint/suppress.py); unused ones are reported as ZL090.
    from ..project.suppress import Suppressions
    from ..project.suppress import write_baseline as write_baseline_file

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
    notes = project.weakened(paths, excluded, suppressions.hidden_by())
    if notes:  # what the repository's settings files turned off, shown by every format
        summary["notes"] = notes
    if unsafe_fixes:  # `--unsafe-fixes` alone: the unsafe fixes count as available to --fix --unsafe-fixes
        summary["fixable"], summary["unsafe_fixable"] = summary["fixable"] + summary["unsafe_fixable"], 0
    from ..report.cap import MAX_PER_FILE, MAX_PER_REPORT

    caps = (MAX_PER_FILE if max_findings_per_file is None else max_findings_per_file,
            MAX_PER_REPORT if max_findings is None else max_findings)
    failed_outputs = emit_reports(formats or default_formats(outputs), outputs, diagnostics, documents, summary,
                                  quiet=quiet, color=not no_color, caps=caps)

    from ..base.escape import safe_line  # file names can hold terminal escapes and newlines too

    for msg in [*unreadable, *failed_outputs]:
        click.echo(f"zerolint: error: {safe_line(msg)}", err=True)
    if unreadable or failed_outputs:
        _exit(EXIT_USAGE)
    _exit(EXIT_FINDINGS if any(d.severity.rank >= fail_ranks[d.file] for d in diagnostics) else EXIT_OK)


def _memory_settings(settings, params, model_config, gpu_memory, host_memory, gpus_per_node) -> None:
    """Validate --params/--model/--gpu-memory/--host-memory up front and carry them in the settings."""
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
    settings.params, settings.model = params, model_config
    settings.gpu_memory, settings.host_memory, settings.gpus_per_node = gpu_memory, host_memory, gpus_per_node
