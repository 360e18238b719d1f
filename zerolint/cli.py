"""The `zerolint` command line. Heavy modules (rich, pydantic, torch, deepspeed) are imported inside the commands
that need them, never at import time: `zerolint check` must start fast."""

from __future__ import annotations

import gc
import os
import sys

# A command-line run allocates a lot and frees little (modules, rules, then documents kept for the report): with
# the default thresholds the collector runs hundreds of times for nothing, ~3 ms of every start. Cycles are still
# collected, just less often.
gc.set_threshold(20_000, 20, 100)

import click  # noqa: E402

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
    try:  # every command resolves paths against it; a deleted working directory is a usage error, not a traceback
        os.getcwd()
    except OSError as e:
        click.echo(f"zerolint: error: the working directory is not accessible ({e.strerror or e}); cd to an "
                   "existing directory", err=True)
        sys.exit(EXIT_USAGE)


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
                           "baseline": baseline}, config_path=config_file, isolated=isolated)
        excluded = project.excluded_by(paths)
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
    if params is not None or model_config is not None or gpu_memory is not None or host_memory is not None:
        _memory_settings(settings, params, model_config, gpu_memory, host_memory, gpus_per_node)
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
    notes = project.weakened(paths, excluded, suppressions.hidden_by())
    if notes:  # what the repository's settings files turned off, shown by every format
        summary["notes"] = notes
    if unsafe_fixes:  # `--unsafe-fixes` alone: the unsafe fixes count as available to --fix --unsafe-fixes
        summary["fixable"], summary["unsafe_fixable"] = summary["fixable"] + summary["unsafe_fixable"], 0
    from .reporters.cap import MAX_PER_FILE, MAX_PER_REPORT

    caps = (MAX_PER_FILE if max_findings_per_file is None else max_findings_per_file,
            MAX_PER_REPORT if max_findings is None else max_findings)
    failed_outputs = emit_reports(formats or default_formats(outputs), outputs, diagnostics, documents, summary,
                                  quiet=quiet, color=not no_color, caps=caps)

    from .reporters import safe_line  # file names can hold terminal escapes and newlines too

    for msg in [*unreadable, *failed_outputs]:
        click.echo(f"zerolint: error: {safe_line(msg)}", err=True)
    if unreadable or failed_outputs:
        _exit(EXIT_USAGE)
    _exit(EXIT_FINDINGS if any(d.severity.rank >= fail_ranks[d.file] for d in diagnostics) else EXIT_OK)


def _exit(code: int) -> None:
    """End a `zerolint check` process. The interpreter's own teardown (freeing every module, rule and document one
    by one) costs ~10 ms of a ~70 ms run and does nothing a finished check needs, so a real `zerolint` process
    flushes its output and leaves with os._exit when no atexit handler is waiting. Called in-process (tests,
    CliRunner, `python -c`), it raises SystemExit as usual."""
    argv0 = sys.argv[0] if sys.argv else ""
    ours = os.path.basename(argv0) in ("zerolint", "zerolint.exe", "zerolint-script.py") or \
        argv0.endswith(os.path.join("zerolint", "__main__.py"))
    if ours and not sys.flags.interactive:
        import atexit

        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # a closed pipe: let the normal exit report it
            sys.exit(code)
        if getattr(atexit, "_ncallbacks", lambda: 1)() == 0:
            os._exit(code)
    sys.exit(code)


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
    """`emit_reports`, then exit 2 with a message for each report that could not be written."""
    errors = emit_reports(formats, outputs, diagnostics, documents, summary, quiet=quiet, color=color)
    if errors:
        from .reporters import safe_line

        for msg in errors:
            click.echo(f"zerolint: error: {safe_line(msg)}", err=True)
        _exit(EXIT_USAGE)


def emit_reports(formats, outputs, diagnostics, documents, summary, quiet=False, color=True,
                 caps: tuple[int | None, int | None] | None = None) -> list[str]:
    """Write each requested format: the last len(outputs) formats to the --output files, in order; the others to
    stdout. With the github format and $GITHUB_STEP_SUMMARY set, also append a Markdown summary there. Files come
    first, each written whole or not at all and never through a link (fsio.write_output), so that a closed stdout
    cannot cost the report file; returns the errors (a file not written, stdout closed) for an exit code 2.
    `caps`: the most findings shown per file and per report (reporters/cap.py; default 1,000 and 10,000)."""
    from .reporters.cap import cap_findings

    diagnostics, summary = cap_findings(diagnostics, summary, *(caps or ()))
    if isinstance(outputs, str):
        outputs = (outputs,)
    outputs = tuple(outputs or ())
    if len(outputs) > len(formats):
        raise click.UsageError(f"{len(outputs)} --output files but {len(formats)} --format; give a --format for each "
                               "file (the last formats go to the files)")
    files = dict(zip(range(len(formats) - len(outputs), len(formats)), outputs))
    errors: list[str] = []
    if files:
        from .fsio import OutputError, write_output

        for i, path in files.items():
            try:
                write_output(path, render(formats[i], diagnostics, documents, summary, quiet=quiet))
            except OutputError as e:
                errors.append(str(e))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if "github" in formats and step_summary:  # the runner's own file (not from the checkout): appended to
        from .reporters.github import step_summary as markdown

        try:
            with open(step_summary, "a", encoding="utf-8") as f:
                f.write(markdown(diagnostics, summary))
        except OSError as e:
            errors.append(f"$GITHUB_STEP_SUMMARY {step_summary}: cannot write ({e.strerror or e})")
    try:
        for i, fmt in enumerate(formats):
            if i in files:
                continue
            if fmt == "text" and color and sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
                from .reporters.text import print_rich

                print_rich(diagnostics, documents, summary, quiet=quiet)
            else:
                click.echo(render(fmt, diagnostics, documents, summary, quiet=quiet), nl=False)
    except OSError as e:  # EPIPE (`| head` closed early), ENOSPC (> /dev/full), ...
        errors.append(_stdout_lost(e))
    return errors


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
    from .extra_rules import known_rules  # the rules plus the engine-level codes (ZL090, ZL520, ...)

    rules = known_rules()
    if fmt == "json":
        import json

        click.echo(json.dumps([
            {"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary, "versions": r.versions,
             "targets": list(r.targets), "fixable": r.fixable, "url": r.url} for r in rules], indent=2))
        return
    if fmt == "markdown":
        click.echo("| code | name | severity | fix | summary |\n| --- | --- | --- | --- | --- |")
        for r in rules:
            link = f"{r.code}.md" if r.url.endswith(f"/{r.code}.md") else r.url  # engine-level codes: their docs
            click.echo(f"| [{r.code}]({link}) | `{r.name}` | {r.severity} | {r.fixable or ''} | {r.summary} |")
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
        from .extra_rules import find

        rule = find(code_or_name)
    if rule is None:
        from .suggest import closest

        rules = all_rules()
        hint = closest(code_or_name, [r.code for r in rules] + [r.name for r in rules])
        raise click.UsageError(f"no rule {code_or_name!r}" + (f"; did you mean {hint}?" if hint else ""))
    click.echo(render_rule(rule, terminal=True), nl=False)


def _memory_settings(settings, params, model_config, gpu_memory, host_memory, gpus_per_node) -> None:
    """Validate --params/--model/--gpu-memory/--host-memory up front and carry them in the settings."""
    from .estimate import parse_bytes
    from .modelspec import ModelSpecError, resolve

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


@main.command("estimate")
@click.argument("config")
@click.option("--params", default=None, metavar="N", help="Model size: 125M, 1.1B, 7B, 70e9.")
@click.option("--model", "model_config", default=None, metavar="CONFIG.JSON",
              help="A Hugging Face config.json (llama, mistral, qwen2, gpt2, gpt_neox, t5): exact P, largest layer "
                   "and shape. No weights, no download.")
@click.option("--largest-layer", default=None, metavar="N", help="Parameters of the largest layer (ZeRO-3).")
@click.option("--gpus-per-node", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--nodes", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--gpu-memory", default=None, metavar="SIZE", help="Memory per GPU, e.g. 24GB, 80GB (GB = GiB).")
@click.option("--host-memory", default=None, metavar="SIZE", help="Host memory per node, e.g. 1TB.")
@click.option("--seq-len", type=click.IntRange(min=1), default=None, help="Sequence length (activation term).")
@click.option("--micro-batch", type=click.IntRange(min=1), default=None,
              help="Micro-batch per GPU [default: the config's train_micro_batch_size_per_gpu].")
@click.option("--hidden", type=click.IntRange(min=1), default=None, help="Hidden size (without --model).")
@click.option("--layers", type=click.IntRange(min=1), default=None, help="Number of layers (without --model).")
@click.option("--vocab", type=click.IntRange(min=1), default=None, help="Vocabulary size (without --model).")
@click.option("--checkpointing", is_flag=True, help="The model uses activation (gradient) checkpointing.")
@click.option("--zero-init/--no-zero-init", default=None,
              help="The model is built under deepspeed.zero.Init [default: yes for HF/Accelerate at stage 3].")
@click.option("--compare", default=None, metavar="OTHER.JSON", help="A second config, shown side by side.")
@click.option("--target", type=click.Choice(TARGETS), default="auto", show_default=True)
@click.option("--deepspeed-version", metavar="X.Y.Z", default=None)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--explain", is_flag=True, help="Show the formula of every row.")
@click.option("--no-color", is_flag=True, help="Plain text even on a terminal.")
def estimate_cmd(config, params, model_config, largest_layer, gpus_per_node, nodes, gpu_memory, host_memory, seq_len,
                 micro_batch, hidden, layers, vocab, checkpointing, zero_init, compare, target, deepspeed_version, fmt,
                 explain, no_color) -> None:
    """Per-GPU and per-node host memory of CONFIG for a model, component by component; what would make it fit."""
    from .estimate import Cluster, Workload, parse_bytes
    from .estimate_report import UsageError, run
    from .modelspec import ModelSpecError, resolve

    if params is None and model_config is None:
        raise click.UsageError("give the model: --params 7B or --model config.json")
    try:
        model = resolve(params=params, model=model_config, largest_layer=largest_layer, hidden=hidden, layers=layers,
                        vocab=vocab)
    except ModelSpecError as e:
        raise click.BadParameter(str(e), param_hint="--model" if model_config else "--params") from None
    mem = {}
    for name, value in (("gpu_memory", gpu_memory), ("host_memory", host_memory)):
        try:
            mem[name] = None if value is None else parse_bytes(value)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--" + name.replace("_", "-")) from None
    try:
        code = run(config, compare, model=model, cluster=Cluster(nodes=nodes, gpus_per_node=gpus_per_node),
                   workload=Workload(seq_len=seq_len, micro_batch=micro_batch, checkpointing=checkpointing),
                   zero_init=zero_init, target=target, deepspeed_version=deepspeed_version, fmt=fmt,
                   explain=explain, color=not no_color, **mem)
    except UsageError as e:
        click.echo(f"zerolint: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(code)


@main.command("verify")
@click.argument("configs", metavar="CONFIG...", nargs=-1, required=True)
@click.option("--gpus", "--ranks", "gpus", type=click.IntRange(min=1), default=1, show_default=True,
              help="Ranks to run: GPUs, or CPU processes with --cpu (or on a machine without GPUs).")
@click.option("--cpu", is_flag=True, help="Run on the CPU (DS_ACCELERATOR=cpu, gloo) even when GPUs are present.")
@click.option("--compare-fix", is_flag=True, help="Also run zerolint's fixed config and show both side by side.")
@click.option("--unsafe-fixes", is_flag=True, help="With --compare-fix: apply unsafe fixes too.")
@click.option("--prefer", multiple=True, metavar="CHOICE", help="With --compare-fix: the alternative to apply.")
@click.option("--params", default=None, metavar="N", help="A bigger synthetic model (125M, 350M, 1.3B) for memory "
                                                          "figures [default: a 0.17 M-parameter model].")
@click.option("--seq-len", type=click.IntRange(min=1, max=65536), default=None,
              help="Sequence length [default: 32; 256 with --params].")
@click.option("--steps", type=click.IntRange(min=1, max=100), default=3, show_default=True,
              help="Optimizer steps (some errors only fire at the first step).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=300.0, show_default=True,
              help="Seconds before the run and every process it started are killed (the run only, not op builds).")
@click.option("--build-timeout", type=click.FloatRange(min=0.1), default=1800.0, show_default=True,
              help="Seconds for building the DeepSpeed ops the run needs (a phase before the run).")
@click.option("--prepare", is_flag=True, help="Only build the DeepSpeed ops these CONFIGs need (Docker images, CI "
                                              "setup steps); exit 0 when they are ready, 2 otherwise.")
@click.option("--target", type=click.Choice(TARGETS), default="auto", show_default=True,
              help='Who reads the config; hf/accelerate fill "auto" as the HF Trainer does (docs/verify.md).')
@click.option("--precision", type=click.Choice(["bf16", "fp16", "fp32"]), default="bf16", show_default=True,
              help='What fp16/bf16 "enabled": "auto" become for hf/accelerate (TrainingArguments --bf16/--fp16).')
@click.option("--client-optimizer", type=click.Choice(["auto", "none"]), default="auto", show_default=True,
              help="Without an optimizer section, pass the one HF/Accelerate would (auto) or none.")
@click.option("--launcher", type=click.Choice(["torchrun", "deepspeed"]), default="torchrun", show_default=True,
              help="How several ranks are started.")
@click.option("--no-cache", is_flag=True, help="Run even if this config was verified here before.")
@click.option("--format", "formats", multiple=True, type=click.Choice(["text", "json", "sarif"]),
              help="Output format (repeatable).")
@click.option("--output", "-o", "outputs", multiple=True, type=click.Path(dir_okay=False, writable=True),
              help="Write the last format(s) to FILE (repeatable).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="error", show_default=True)
@click.option("--select", multiple=True, help="Rules to report (codes, prefixes, names; comma-separated).")
@click.option("--ignore", multiple=True, help="Rules to skip (codes, prefixes, names; comma-separated).")
@click.option("--keep", default=None, metavar="DIR", help="Keep the run's spec, log and results under DIR.")
@click.option("--quiet", "-q", is_flag=True, help="No progress and only the findings.")
@click.option("--no-color", is_flag=True, help="Plain text even on a terminal.")
def verify_cmd(configs, gpus, cpu, compare_fix, unsafe_fixes, prefer, params, seq_len, steps, timeout, build_timeout,
               prepare, target, precision, client_optimizer, launcher, no_cache, formats, outputs, fail_on, select,
               ignore, keep, quiet, no_color) -> None:
    """Prove CONFIG with a real DeepSpeed init and optimizer steps on a tiny model (docs/verify.md).

    With --prepare, only build the DeepSpeed ops that the CONFIGs need."""
    from .verify.command import UsageError, VerifyOptions, prepare as prepare_ops, run
    from .verify.runner import exit_code

    if len(configs) > 1 and not prepare:
        raise click.UsageError("verify takes one CONFIG (several only with --prepare)")
    select_codes, ignore_codes = _split_codes(select) or ["ALL"], _split_codes(ignore)
    opts = VerifyOptions(gpus=gpus, cpu=cpu, compare_fix=compare_fix, params=params, seq_len=seq_len, steps=steps,
                         timeout=timeout, build_timeout=build_timeout, target=target, formats=formats,
                         outputs=outputs, no_cache=no_cache, launcher=launcher, precision=precision,
                         client_optimizer=client_optimizer, unsafe_fixes=unsafe_fixes, prefer=prefer,
                         fail_on=fail_on, select=select_codes, ignore=ignore_codes, quiet=quiet, color=not no_color,
                         keep=keep)
    try:
        code = prepare_ops(list(configs), opts) if prepare else run(configs[0], opts)
    except UsageError as e:
        click.echo(f"zerolint: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt as e:  # Ctrl-C, SIGTERM, SIGHUP: the run is already stopped and cleaned up
        click.echo("zerolint verify: interrupted; every process of the run was stopped", err=True)
        sys.exit(exit_code(e))
    sys.exit(code)


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
