"""The options of `check`, declared once as data, with no click in sight.

Two readers share this table: cli/options.py builds the click command from it (so `--help`, click's messages and
every other command stay click's), and cli/fast.py reads the common case `zerolint check [options] FILES...` from
it without importing click (click is ~34 ms of a ~95 ms one-file check in a normal install). Both turn the values
into the same pipeline.Options through `build_options`, which raises OptionError (click-free) for a bad value.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from collections.abc import Sequence

TARGETS = ("auto", "deepspeed", "hf", "accelerate")
FORMATS = ("text", "concise", "json", "sarif", "github", "gitlab", "rdjson", "junit")
LEVELS = ("error", "warning", "info")


class Opt:
    """One option of `check`. kind: "flag" (is_flag), "value" (a string), "int" (an integer in [low, high]),
    "choice" (one of `choices`), "path" (a file name: not an existing directory, readable, writable if asked),
    "optional-value" (a value that may be left out: the flag value is ""). `multiple`: repeatable, a tuple."""

    __slots__ = ("flags", "dest", "kind", "multiple", "choices", "low", "high", "writable", "metavar", "help")

    def __init__(self, flags: tuple[str, ...], dest: str, kind: str = "value", *, multiple: bool = False,
                 choices: tuple[str, ...] = (), low: int | None = None, high: int | None = None,
                 writable: bool = False, metavar: str | None = None, help: str = "") -> None:
        self.flags, self.dest, self.kind, self.multiple = flags, dest, kind, multiple
        self.choices, self.low, self.high, self.writable = choices, low, high, writable
        self.metavar, self.help = metavar, help

    def default(self):
        return False if self.kind == "flag" else () if self.multiple else None


CHECK_OPTIONS = (
    Opt(("--output-format", "--format"), "formats", "choice", multiple=True, choices=FORMATS,
        help="Output format (repeatable): text, concise (one line per finding), json, sarif, github (workflow "
             "annotations), gitlab (Code Quality JSON), rdjson (reviewdog, with the safe fixes as suggestions), "
             "junit. Default: text, or github when GITHUB_ACTIONS=true and no --output."),
    Opt(("--output", "-o"), "outputs", "path", multiple=True, writable=True,
        help="Write a report to FILE (repeatable: the last N formats go to the N files, in order; the others to "
             "stdout). `--format text --format sarif -o zerolint.sarif`."),
    Opt(("--target",), "target", "choice", choices=TARGETS,
        help="Who reads the config: raw DeepSpeed, the HF Trainer, Accelerate; auto = hf when the file holds "
             '"auto" values, else deepspeed [default: auto].'),
    Opt(("--world-size",), "world_size", "int", low=1,
        help="Data-parallel world size the job runs with (enables the batch-size equation)."),
    Opt(("--deepspeed-version",), "deepspeed_version", metavar="X.Y.Z",
        help="DeepSpeed version to check against [default: the installed one, else 0.19.8]."),
    Opt(("--torch-version",), "torch_version", metavar="X.Y",
        help="The training machine's torch version, for the rules that depend on it (where torch is not installed "
             "here: CI, pre-commit) [default: the installed one, else unknown]."),
    Opt(("--fail-on",), "fail_on", "choice", choices=LEVELS,
        help="Exit 1 when a finding at or above this severity is reported [default: error]."),
    Opt(("--select",), "select", multiple=True,
        help="Rules to run (codes, prefixes like ZL2, names; comma-separated)."),
    Opt(("--ignore",), "ignore", multiple=True, help="Rules to skip (codes, prefixes, names; comma-separated)."),
    Opt(("--severity",), "severity_overrides", multiple=True, metavar="CODE=LEVEL",
        help="Override a rule's severity, e.g. --severity ZL401=warning."),
    Opt(("--quiet", "-q"), "quiet", "flag", help="Print only the summary line (text format)."),
    Opt(("--show-info",), "show_info", "flag",
        help="Show info findings in text, concise, github, gitlab, rdjson and junit output (they are always counted "
             "in the summary, always in json and sarif, and shown with --fail-on info)."),
    Opt(("--statistics",), "statistics", "flag",
        help="Print how many findings each rule reported instead of the findings (text and concise output)."),
    Opt(("--exit-zero",), "exit_zero", "flag",
        help="Exit 0 even when findings are reported (2 still means a usage error or an unreadable file)."),
    Opt(("--show-files",), "show_files", "flag",
        help="List the files that would be linted and why, and the files found but skipped and why, then exit."),
    Opt(("--uses",), "uses", "flag",
        help="Check each config as the launch lines, framework YAMLs and training code of its repository use it "
             "(the default): the consumer and world size from each use (explicit --target / --world-size win, "
             "ZL091 says where a use disagrees); a finding that holds for one use only says which (docs/uses.md)."),
    Opt(("--no-uses",), "no_uses", "flag",
        help="Check each config on its own: the consumer guessed from its \"auto\" values, the world size only "
             "from --world-size; the repository is not read."),
    Opt(("--show-uses",), "show_uses", "flag",
        help="List each config with the launch lines, framework YAMLs and training code in its repository that use "
             "it, and what was read from each (file:line), then exit."),
    Opt(("--watch",), "watch", "flag",
        help="Check, then check again whenever a file it depends on changes (the files named, the configs, launch "
             "scripts and training code under the directories named or the repository, zerolint settings files), "
             "until Ctrl-C."),
    Opt(("--only-configs",), "only_configs", "flag",
        help="Judge the files named on the command line by content too, as those found in directories and by "
             "globs are: lint only DeepSpeed configs and Accelerate YAMLs that configure DeepSpeed (pre-commit, "
             "CI)."),
    Opt(("--include",), "include", multiple=True, metavar="GLOB",
        help="Files matching this glob are DeepSpeed configs whatever their content: linted in directories and "
             "with --only-configs, never skipped (repeatable; relative to the working directory; the settings' "
             "`include` does the same from a trusted zerolint config)."),
    Opt(("--fail-on-skipped",), "fail_on_skipped", "flag",
        help="Exit 1 when a candidate file is skipped as not a DeepSpeed config (a CI gate that must not let a "
             "config through unlinted; the skipped files and why are in every report's summary)."),
    Opt(("--color",), "color_when", "choice", choices=("auto", "always", "never"), metavar="[auto|always|never]",
        help="Colour the text output: auto (on a terminal, unless NO_COLOR=1; FORCE_COLOR=1 colours it anywhere), "
             "always, never [default: auto]."),
    Opt(("--no-color",), "no_color", "flag",
        help="Never colour the text output (the same as --color never; also NO_COLOR=1)."),
    Opt(("--stdin-filename",), "stdin_filename", help="Name to report for `-` (stdin)."),
    Opt(("--max-bytes",), "max_bytes", "int", low=1, help="Largest file to read [default: 16 MiB]."),
    Opt(("--max-depth",), "max_depth", "int", low=1, high=5000, help="Deepest nesting to parse [default: 256]."),
    Opt(("--max-values",), "max_values", "int", low=1, help="Most values (keys and items) to parse in one file "
                                                            "[default: 10,000]."),
    Opt(("--exclude",), "exclude", multiple=True, help="Glob of paths to skip when expanding directories."),
    Opt(("--max-findings-per-file",), "max_findings_per_file", "int", low=0, metavar="N",
        help="Show at most N findings per file, errors first (0: no limit) [default: 1000]. The counts and the exit "
             "code still include every finding."),
    Opt(("--max-findings",), "max_findings", "int", low=0, metavar="N",
        help="Show at most N findings in the whole report (0: no limit) [default: 10000]."),
    Opt(("--config",), "config_file", "path", multiple=True, metavar="FILE|KEY=VALUE",
        help="Use this zerolint config (.zerolint.toml or pyproject.toml) for every file instead of the nearest one "
             "above each file; or, as `KEY = VALUE` (TOML, repeatable), one setting of [tool.zerolint] over the "
             "config files, e.g. --config 'world-size = 8' --config 'ignore = [\"ZL705\"]'."),
    Opt(("--isolated",), "isolated", "flag",
        help="Ignore every zerolint config file in the tree (.zerolint.toml, [tool.zerolint], the default "
             "baseline): for untrusted checkouts such as pull requests. --config and --baseline still apply."),
    Opt(("--show-settings",), "show_settings", "flag",
        help="Print the resolved settings, and where each came from, for the first file (or the working directory) "
             "and exit."),
    Opt(("--baseline",), "baseline", "path",
        help="Hide the findings recorded in this baseline file (see --write-baseline)."),
    Opt(("--write-baseline",), "write_baseline", "optional-value", metavar="[FILE]",
        help="Record every current finding in a baseline file [default: the config's `baseline`, else "
             ".zerolint-baseline.json] and exit 0."),
    Opt(("--training-args",), "training_args", "path", metavar="FILE.json",
        help="A TrainingArguments dump (args.to_json_string()): report every value the HF Trainer would reject as "
             "a mismatch with the DeepSpeed config."),
    Opt(("--fix",), "fix", "flag", help="Apply the safe fixes in place, then report what remains."),
    Opt(("--unsafe-fixes",), "unsafe_fixes", "flag",
        help="With --fix/--diff also apply the unsafe fixes (they change behaviour); alone, count them as "
             "available."),
    Opt(("--diff",), "diff", "flag", help="Print the fixes as a unified diff and write nothing (exit 1 if any)."),
    Opt(("--fix-only",), "fix_only", "flag", help="Apply the fixes and do not report the remaining findings."),
    Opt(("--prefer",), "prefer", multiple=True, metavar="CHOICE",
        help="Pick this alternative where a finding offers several (e.g. --prefer bf16); repeatable."),
    Opt(("--params",), "params", metavar="N",
        help="Model size (125M, 7B, 70e9) for the memory rules (ZL801, with --gpu-memory)."),
    Opt(("--model",), "model_config", metavar="CONFIG.JSON",
        help="A Hugging Face config.json giving the model size and shape (no weights are read)."),
    Opt(("--gpu-memory",), "gpu_memory", metavar="SIZE", help="Memory per GPU, e.g. 24GB, 80GB (GB = GiB)."),
    Opt(("--host-memory",), "host_memory", metavar="SIZE", help="Host memory per node, e.g. 512GB."),
    Opt(("--gpus-per-node",), "gpus_per_node", "int", low=1,
        help="GPUs per node [default: the world size, one node] (memory rules)."),
)


class OptionError(Exception):
    """A bad option value: click's command turns it into click.BadParameter (usage, message, exit 2); the fast
    path hands the whole command line to click, which says the same."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def split_codes(values) -> list[str]:
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def parse_severity_overrides(values) -> dict[str, str]:
    out = {}
    for v in values:
        if "=" not in v:
            raise OptionError(f"{v!r}: expected CODE=LEVEL, e.g. ZL301=warning", "--severity")
        code, level = v.split("=", 1)
        if level.strip().lower() not in LEVELS:
            raise OptionError(f"{v!r}: level must be error, warning or info", "--severity")
        out[code.strip()] = level.strip().lower()
    return out


def check_rule_codes(codes, option: str, ruleset=None) -> None:
    """Each code must name a rule of `ruleset` (default: the built-in one; pass the project's, with its policies)."""
    from ..rules.ruleset import RuleSet

    rules = ruleset or RuleSet.builtin()
    for c in codes:
        why = rules.unknown(c)
        if why is not None:
            raise OptionError(why, option)


def rewrite_write_baseline(args: list[str]) -> list[str]:
    """`--write-baseline` takes an optional value, so click would read `--write-baseline configs` as the baseline
    FILE `configs` and then miss FILES. A following word that is a directory or an existing file that is not a
    baseline is a FILES argument (the option becomes `--write-baseline=`); `--write-baseline=FILE` always names the
    baseline."""
    args = list(args)
    for i, arg in enumerate(args[:-1]):
        if arg == "--":
            break
        nxt = args[i + 1]
        if arg == "--write-baseline" and (os.path.isdir(nxt) or (os.path.isfile(nxt) and not is_baseline_file(nxt))):
            args[i] = "--write-baseline="  # the default baseline file; `nxt` stays a FILES argument
    return args


def is_baseline_file(path: str) -> bool:
    import json

    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f).get("zerolint-baseline") is not None
    except (OSError, ValueError, AttributeError, RecursionError):
        return False


def build_options(files: Sequence[str], kw: dict):
    """pipeline.Options from the parsed options (a dict by Opt.dest): validated; a bad value raises OptionError."""
    from ..base.fsio import Limits
    from ..model.versions import Version
    from ..pipeline import Options
    from ..report.cap import MAX_PER_FILE, MAX_PER_REPORT

    for dest, flag in (("deepspeed_version", "--deepspeed-version"), ("torch_version", "--torch-version")):
        if kw[dest] is not None:
            try:
                Version(kw[dest])
            except ValueError as e:
                raise OptionError(str(e), flag) from None
    overrides = parse_severity_overrides(kw["severity_overrides"])
    config_file, settings = _configs(kw["config_file"])
    memory = _memory_settings(kw["params"], kw["model_config"], kw["gpu_memory"], kw["host_memory"],
                              kw["gpus_per_node"])
    fix = "diff" if kw["diff"] else "fix-only" if kw["fix_only"] else "fix" if kw["fix"] else "none"
    limits = Limits(**{k: kw[k] for k in ("max_bytes", "max_depth", "max_values") if kw[k] is not None})
    caps = (MAX_PER_FILE if kw["max_findings_per_file"] is None else kw["max_findings_per_file"],
            MAX_PER_REPORT if kw["max_findings"] is None else kw["max_findings"])
    return Options(
        files=tuple(files), exclude=tuple(kw["exclude"]), target=kw["target"], world_size=kw["world_size"],
        deepspeed_version=kw["deepspeed_version"], torch_version=kw["torch_version"],
        select=tuple(split_codes(kw["select"])),
        ignore=tuple(split_codes(kw["ignore"])), severity=tuple(overrides.items()), fail_on=kw["fail_on"],
        limits=limits, caps=caps, isolated=kw["isolated"], config_file=config_file, settings=settings,
        baseline=kw["baseline"],
        write_baseline=kw["write_baseline"], memory=memory, fix=fix, unsafe=kw["unsafe_fixes"],
        prefer=tuple(kw["prefer"]), formats=tuple(kw["formats"]), outputs=tuple(kw["outputs"]), quiet=kw["quiet"],
        color=_color(kw["color_when"], kw["no_color"]), stdin_filename=kw["stdin_filename"],
        only_configs=kw["only_configs"],
        show_info=kw["show_info"], statistics=kw["statistics"], exit_zero=kw["exit_zero"],
        include=tuple(kw["include"]), fail_on_skipped=kw["fail_on_skipped"],
        uses=not kw["no_uses"])


def _configs(values) -> tuple[str | None, tuple]:
    """--config: (the one config file, the inline settings as (key, value) pairs). A value holding `=` that names no
    file is a setting (ruff's form); more than one file is an error."""
    values = [values] if isinstance(values, str) else list(values or ())
    inline = [v for v in values if "=" in v and not os.path.exists(v)]
    files = [v for v in values if v not in inline]
    if len(files) > 1:
        raise OptionError(f"one zerolint config file, not {len(files)} ({', '.join(files)}); settings go as "
                          "--config 'KEY = VALUE'", "--config")
    settings: tuple = ()
    if inline:
        from ..project.settings import ConfigError, inline_settings

        try:
            settings = tuple(inline_settings(inline).items())
        except ConfigError as e:
            raise OptionError(str(e), "--config") from None
    return (files[0] if files else None), settings


def _color(when: str | None, no_color: bool) -> bool | str:
    """pipeline.Options.color: True (on a terminal), False (never) or "always"; --no-color wins over --color."""
    if no_color or when == "never":
        return False
    return "always" if when == "always" else True


def _memory_settings(params, model_config, gpu_memory, host_memory, gpus_per_node) -> tuple:
    """Validate --params/--model/--gpu-memory/--host-memory up front; the Settings fields they set."""
    if params is None and model_config is None and gpu_memory is None and host_memory is None:
        return ()
    from ..estimate.memory import parse_bytes
    from ..estimate.modelspec import ModelSpecError, resolve

    try:
        resolve(params=params, model=model_config)
    except ModelSpecError as e:
        raise OptionError(str(e), "--model" if model_config else "--params") from None
    for value, hint in ((gpu_memory, "--gpu-memory"), (host_memory, "--host-memory")):
        if value is not None:
            try:
                parse_bytes(value)
            except ValueError as e:
                raise OptionError(str(e), hint) from None
    return (("params", params), ("model", model_config), ("gpu_memory", gpu_memory), ("host_memory", host_memory),
            ("gpus_per_node", gpus_per_node))
