"""The one path every command takes: sources -> per-file settings -> parse -> lint -> suppressions and baseline
-> report, or -> fix -> re-lint -> report.

`Options` is what a command was asked to do; `Pipeline(options)` resolves each file's settings (project/settings.py),
lints (`lint`) or fixes (`fix`) every source with THAT file's settings, selection and rules (the project's policies
included), and filters the findings through the suppressions and the baseline (`findings`). `check`, `--fix`,
`upgrade`, verify's static phase and `zerolint.lint()` are thin shells over it. Reading a file is base/fsio.py's
job, parsing model/'s, running the rules rules/engine.py's, rendering report/'s.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from .base.fsio import Limits, read_bytes
from .base.record import Frozen, Record
from .model.detect import is_yaml
from .model.diagnostics import Diagnostic
from .model.document import Document, parse, parse_bytes
from .model.view import Settings
from .rules.engine import Selection, run_rules
from .rules.ruleset import RuleSet

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

    from .project.suppress import Suppressions


class Result(Record):
    """One file's findings; `named_by`: the Accelerate YAML that names this DeepSpeed config, if any."""

    _fields = ("path", "document", "diagnostics", "named_by")
    path: str
    document: Document | None
    diagnostics: list[Diagnostic]
    named_by: str | None

    def __init__(self, path: str, document: Document | None, diagnostics: list[Diagnostic] | None = None,
                 named_by: str | None = None) -> None:
        self.path = path
        self.document = document
        self.diagnostics = [] if diagnostics is None else diagnostics
        self.named_by = named_by


def lint_bytes(data: bytes, path: str, settings: Settings | None = None, selection: Selection | None = None,
               limits: Limits | None = None, rules: RuleSet | None = None) -> Result:
    """`rules`: the rules to run (default: the built-in ones; a project's adds its policy rules)."""
    doc = document_of(data, path, limits or Limits())
    return Result(path, doc, run_rules(doc, settings, selection, rules))


def document_of(data: bytes, path: str, limits: Limits) -> Document:
    """The parsed document, or a fatal one whose note says the file is over the size limit."""
    if len(data) > limits.max_bytes:
        doc = parse("", path)
        doc.notes[:] = []
        from .model.document import Note

        doc.notes.append(Note("size-limit", 0, 0,
                              f"the file is larger than the {limits.max_bytes:,}-byte limit"))
        doc.fatal = True
        return doc
    return parse_bytes(data, path, limits.max_depth, limits.max_values)


def lint_path(path: str, settings: Settings | None = None, selection: Selection | None = None,
              limits: Limits | None = None, rules: RuleSet | None = None) -> Result:
    limits = limits or Limits()
    return lint_bytes(read_bytes(path, limits), path, settings, selection, limits, rules)


def lint_accelerate(path: str, settings, selection, limits, rules=None) -> list:
    """Results for an Accelerate config YAML: its own findings (located in the YAML) and, when it names a
    DeepSpeed config file, that file linted with target `accelerate`."""
    from .base.record import replace
    from .integrations.hf import NOT_CHECKED, launch_dirs, read_accelerate_yaml, resolve_ds_file
    from .model.trainer import PLUGIN_TO_POINTER, REJECTED_WITH_FILE, ds_key
    from .rules.engine_rules import ACCELERATE_FIELDS, ACCELERATE_FILE_MISSING, ACCELERATE_YAML_INVALID

    raw = read_bytes(path, limits)
    cfg, problem, problem_span = read_accelerate_yaml(path, raw, limits.max_depth)
    doc = Document(path=path, text=cfg.text if cfg else raw.decode("utf-8", errors="replace"))
    found: list[Diagnostic] = []

    def report(rule, span, message, help_, pointer=""):
        if not selection.enabled(rule):
            return
        (line, col), (end_line, end_col) = doc.position(span[0]), doc.position(max(span[1], span[0]))
        found.append(Diagnostic(file=path, code=rule.code, name=rule.name, severity=selection.severity_for(rule, None),
                                message=message, pointer=pointer, line=line, column=col, end_line=end_line,
                                end_column=end_col, help=help_, url=rule.url, start=span[0], end=span[1]))

    def result() -> Any:
        return Result(path, doc, sorted(found, key=Diagnostic.sort_key))

    if problem is not None:
        claim = "" if problem.endswith(NOT_CHECKED) else "; accelerate launch fails before any process starts"
        report(ACCELERATE_YAML_INVALID, problem_span, problem + claim,
               "fix the YAML, or regenerate it with `accelerate config`")
        return [result()]
    assert cfg is not None  # read_accelerate_yaml returns no config only with a problem
    ds = cfg.deepspeed
    name = ds.get("deepspeed_config_file")
    if not isinstance(name, str) or not name or name == "none":
        return [result()]  # DeepSpeed settings live in the YAML itself: nothing else to lint

    fields = [k for k in REJECTED_WITH_FILE if k in ds]
    if cfg.data.get("mixed_precision") is not None:
        fields.append("mixed_precision")
    for key in fields:
        span_key = key if key == "mixed_precision" else f"deepspeed_config.{key}"
        span = cfg.spans.get(f"key:{span_key}", (0, 1))
        where = ("in the DeepSpeed config file" if key == "mixed_precision"
                 else f"in the DeepSpeed config file as {ds_key(PLUGIN_TO_POINTER[key])}")
        report(ACCELERATE_FIELDS, span,
               f"{key} is set here and deepspeed_config_file is given: Accelerate raises \"ValueError: When using "
               f"`deepspeed_config_file`, the following accelerate config variables will be ignored\" at start-up",
               f"delete {key} from this YAML and set it {where}", pointer=f"/{span_key.replace('.', '/')}")

    ds_path = resolve_ds_file(path, name)
    if ds_path is None:
        tried = ("; ".join(f"{what} {_shown_dir(d)}" for what, d in launch_dirs(path)) if not os.path.isabs(name)
                 else "as written")
        report(ACCELERATE_FILE_MISSING, cfg.spans.get("deepspeed_config.deepspeed_config_file", (0, 1)),
               f"deepspeed_config_file {name!r} does not exist (looked from where a launch can start: {tried}); "
               "Accelerate fails with FileNotFoundError", "fix the path",
               pointer="/deepspeed_config/deepspeed_config_file")
        return [result()]
    shown = os.path.relpath(ds_path) if not os.path.isabs(name) else ds_path
    ds_settings = replace(settings, target="accelerate", accelerate=cfg,
                          world_size=settings.world_size or cfg.world_size)
    named = lint_path(shown, ds_settings, selection, limits, rules=rules)
    named.named_by = path
    return [result(), named]


# -- the one path every command takes ---------------------------------------------------------------------------------

FIX_MODES = ("none", "fix", "diff", "fix-only")


class Options(Frozen):
    """Everything a run of `check` (with or without --fix), `upgrade` or verify's static phase is asked to do, as
    the command line gave it (None: not given, the file's settings decide).

    `severity`: (code, level) pairs, the command line's --severity; `caps`: findings shown per file, per report
    (report/cap.py); `write_baseline`: "" = the default baseline file; `training_args`: the parsed TrainingArguments
    dict; `memory`: (Settings field, value): params, model, gpu_memory, ...; `fix`: FIX_MODES; `only_configs`:
    judge the files named on the command line by content too, strictly: the CI gate (pre-commit, the Action;
model/detect.py); `include`: globs (relative to the working directory) of files that are DeepSpeed configs
whatever their content, as the settings' `include`; `fail_on_skipped`: a candidate skipped as not a DeepSpeed
config fails the run (exit 1); `uses`: check each config once per way the repository uses it (consumer and world
size from its launch lines, YAMLs and training code: project/uses.py); `settings`: (key, value) pairs of
`--config KEY = VALUE`, validated (project/settings.inline_settings); `color`: True (colour on a terminal), False
(never) or "always"; `show_info`: show info
    findings in the formats people read (report/output.py HIDES_INFO); `statistics`: a count per rule instead of the
    findings (text, concise); `exit_zero`: findings exit 0 (usage errors and unreadable files still 2); `fixer`:
    path -> (text -> FixResult): replaces fix_text (`upgrade`)."""

    _fields = ("files", "exclude", "target", "world_size", "deepspeed_version", "torch_version", "select", "ignore",
               "severity", "fail_on", "limits", "caps", "isolated", "config_file", "settings", "baseline",
               "write_baseline",
               "training_args", "memory", "fix", "unsafe", "prefer", "formats", "outputs", "quiet", "color",
               "stdin_filename", "only_configs", "show_info", "statistics", "exit_zero", "fixer", "include",
               "fail_on_skipped", "uses")
    files: tuple[str, ...]
    exclude: tuple[str, ...]
    target: str | None
    world_size: int | None
    deepspeed_version: str | None
    torch_version: str | None
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    severity: tuple[tuple[str, str], ...]
    fail_on: str | None
    limits: Limits
    caps: tuple[int | None, int | None]
    isolated: bool
    config_file: str | None
    settings: tuple[tuple[str, Any], ...]
    baseline: str | None
    write_baseline: str | None
    training_args: Any
    memory: tuple[tuple[str, Any], ...]
    fix: str
    unsafe: bool
    prefer: tuple[str, ...]
    formats: tuple[str, ...]
    outputs: tuple[str, ...]
    quiet: bool
    color: bool | str
    stdin_filename: str | None
    only_configs: bool
    show_info: bool
    statistics: bool
    exit_zero: bool
    fixer: Callable | None
    include: tuple[str, ...]
    fail_on_skipped: bool
    uses: bool

    def __init__(self, files: tuple[str, ...] = (), exclude: tuple[str, ...] = (), target: str | None = None,
                 world_size: int | None = None, deepspeed_version: str | None = None, select: tuple[str, ...] = (),
                 torch_version: str | None = None,
                 ignore: tuple[str, ...] = (), severity: tuple[tuple[str, str], ...] = (), fail_on: str | None = None,
                 limits: Limits | None = None, caps: tuple[int | None, int | None] = (None, None),
                 isolated: bool = False, config_file: str | None = None,
                 settings: tuple[tuple[str, Any], ...] = (), baseline: str | None = None,
                 write_baseline: str | None = None, training_args: Any = None,
                 memory: tuple[tuple[str, Any], ...] = (), fix: str = "none", unsafe: bool = False,
                 prefer: tuple[str, ...] = (), formats: tuple[str, ...] = (), outputs: tuple[str, ...] = (),
                 quiet: bool = False, color: bool | str = True, stdin_filename: str | None = None,
                 only_configs: bool = False, show_info: bool = False, statistics: bool = False,
                 exit_zero: bool = False, fixer: Callable | None = None, include: tuple[str, ...] = (),
                 fail_on_skipped: bool = False, uses: bool = False) -> None:
        self._set("files", files)
        self._set("exclude", exclude)
        self._set("target", target)
        self._set("world_size", world_size)
        self._set("deepspeed_version", deepspeed_version)
        self._set("torch_version", torch_version)
        self._set("select", select)
        self._set("ignore", ignore)
        self._set("severity", severity)
        self._set("fail_on", fail_on)
        self._set("limits", Limits() if limits is None else limits)
        self._set("caps", caps)
        self._set("isolated", isolated)
        self._set("config_file", config_file)
        self._set("settings", tuple(settings))
        self._set("baseline", baseline)
        self._set("write_baseline", write_baseline)
        self._set("training_args", training_args)
        self._set("memory", memory)
        self._set("fix", fix)
        self._set("unsafe", unsafe)
        self._set("prefer", prefer)
        self._set("formats", formats)
        self._set("outputs", outputs)
        self._set("quiet", quiet)
        self._set("color", color)
        self._set("stdin_filename", stdin_filename)
        self._set("only_configs", only_configs)
        self._set("show_info", show_info)
        self._set("statistics", statistics)
        self._set("exit_zero", exit_zero)
        self._set("fixer", fixer)
        self._set("include", include)
        self._set("fail_on_skipped", fail_on_skipped)
        self._set("uses", uses)
        if fix not in FIX_MODES:  # pragma: no cover - a programming error
            raise ValueError(f"fix mode {fix!r} is not one of {FIX_MODES}")


class FileSetup(Record):
    """What applies to one file: its settings, rule selection and rules (with its project's policies), the
    limits its reads stay within, and its project settings (for suppressions and the fail threshold).

    `resolved`: project.settings.Resolved."""

    _fields = ("path", "resolved", "settings", "selection", "rules", "limits")
    path: str
    resolved: Any
    settings: Settings
    selection: Selection
    rules: RuleSet
    limits: Limits

    def __init__(self, path: str, resolved: Any, settings: Settings, selection: Selection, rules: RuleSet,
                 limits: Limits) -> None:
        self.path = path
        self.resolved = resolved
        self.settings = settings
        self.selection = selection
        self.rules = rules
        self.limits = limits


class Run(Record):
    """What one run found: results in report order, the files it could not read, and (for --fix) per file what
    was fixed.

    `picks`: model.detect.Pick for every candidate, picked or skipped, in order; `fixes`: FileFix, in order (fix
    modes only); `refused`: fixed text not written, and why; `stdin_out`: --fix on `-`: the text to print."""

    _fields = ("results", "unreadable", "excluded", "paths", "picks", "fixes", "refused", "any_diff", "stdin_out")
    results: list[Result]
    unreadable: list[str]
    excluded: dict[str, int]
    paths: list[str]
    picks: list
    fixes: list
    refused: list[str]
    any_diff: bool
    stdin_out: bytes | None

    def __init__(self, results: list[Result] | None = None, unreadable: list[str] | None = None,
                 excluded: dict[str, int] | None = None, paths: list[str] | None = None, picks: list | None = None,
                 fixes: list | None = None, refused: list[str] | None = None, any_diff: bool = False,
                 stdin_out: bytes | None = None) -> None:
        self.results = [] if results is None else results
        self.unreadable = [] if unreadable is None else unreadable
        self.excluded = {} if excluded is None else excluded
        self.paths = [] if paths is None else paths
        self.picks = [] if picks is None else picks
        self.fixes = [] if fixes is None else fixes
        self.refused = [] if refused is None else refused
        self.any_diff = any_diff
        self.stdin_out = stdin_out


class FileFix(Record):
    """`result`: fix.engine.FixResult, or None when the file was not fixed; `note`: why the file was not fixed / not
    written."""

    _fields = ("path", "result", "original", "note")
    path: str
    result: Any
    original: str | None
    note: str

    def __init__(self, path: str, result: Any = None, original: str | None = None, note: str = "") -> None:
        self.path = path
        self.result = result
        self.original = original
        self.note = note

    @property
    def written(self) -> bool:
        return self.note != "not written"


class Pipeline:
    """sources -> per-file settings -> parse -> lint -> suppressions and baseline, or -> fix -> re-lint. Raises
    project.settings.ConfigError for a broken zerolint config (exit 2)."""

    def __init__(self, options: Options) -> None:
        from .project.settings import Project

        self.options = options
        o = options
        self._uses: dict = {}  # repository root -> project.uses.UseScan, then its UseIndex (--uses): one scan a tree
        if o.uses and o.fix == "none":  # (--fix reports through its own path, without the uses: docs/uses.md)
            self._start_scans()  # first: the scans run on the other cores while the rest loads
        self.project = Project({"select": list(o.select), "ignore": list(o.ignore), "severity": dict(o.severity),
                                "target": o.target, "world-size": o.world_size,
                                "deepspeed-version": o.deepspeed_version, "torch-version": o.torch_version,
                                "fail-on": o.fail_on,
                                "baseline": o.baseline}, config_path=o.config_file, isolated=o.isolated,
                               inline=dict(o.settings))
        from .rules.ruleset import RuleSet

        self.builtin = RuleSet.builtin()
        self._suppressions: Suppressions | None = None
        self._sources: tuple | None = None
        self._picked: dict = {}  # path -> model.detect.Pick: the bytes (and Document) read to judge a found file

    # -- sources ----------------------------------------------------------------------------------------------------

    def sources(self) -> Run:
        """A new Run holding the paths to lint: the files named (always), `-`, and the files directories and globs
        turn up whose content is a DeepSpeed config or an Accelerate YAML that configures DeepSpeed (model/detect.py;
        with `only_configs`, named files too); minus what a config excludes. The arguments are expanded, and the
        found files read and judged, once per pipeline."""
        if self._sources is None:
            from .base.files import expand

            candidates, problems = expand(list(self.options.files), list(self.options.exclude))
            launched: list = []
            if self.options.only_configs:  # (a fix edits only what the change holds)
                candidates, launched = _launchers_apart(candidates, self.options.uses and self.options.fix == "none")
            picks = [self._judge(p, named) for p, named in candidates]
            if launched or (self.options.only_configs and self.options.uses and self.options.fix == "none"):
                picks = _yamls_that_launch(picks, launched)
            if self.options.only_configs:
                picks = _named_elsewhere(picks)
            self._picked = {p.path: p for p in picks if p.picked}
            paths = [p.path for p in picks if p.picked]
            self._sources = (self.project.included(paths), problems, self.project.excluded_by(paths), picks)
        paths, problems, excluded, picks = self._sources
        return Run(paths=list(paths), unreadable=list(problems), excluded=dict(excluded), picks=list(picks))

    def _judge(self, path: str, named: bool):
        from .model.detect import Pick, judge

        if path == "-" or (named and not self.options.only_configs):
            return Pick(path, True, "named on the command line")
        pattern = _matching(path, self.options.include)
        if pattern is not None:
            return Pick(path, True, f"a DeepSpeed config by --include {pattern}")
        res = self.project.resolve(path)
        pattern = res.included_by(path)
        if pattern is not None:
            from .base.paths import display_path

            assert res.config is not None  # included_by matches only the patterns of a config file
            return Pick(path, True, f"a DeepSpeed config by include {pattern} in {display_path(res.config.path)}")
        from .base.fsio import read_roots
        from .base.record import replace

        limits = self.options.limits
        if limits.roots is None:  # the roots the lint's read would have (Pipeline.setup)
            limits = replace(limits, roots=read_roots(path))
        return judge(path, limits, strict=self.options.only_configs)

    def first_path(self) -> str:
        """The file --show-settings describes and whose policy rules --select may name ("-" when none)."""
        paths = self.sources().paths
        return paths[0] if paths else "-"

    # -- per-file settings ------------------------------------------------------------------------------------------

    def setup(self, path: str) -> FileSetup:
        from .base.fsio import read_roots
        from .base.record import replace

        o = self.options
        res = self.project.resolve(o.stdin_filename if path == "-" and o.stdin_filename else path)
        settings = res.settings(training_args=o.training_args, **dict(o.memory))
        if o.training_args is not None and settings.target == "auto":
            settings.target = "hf"  # TrainingArguments means the HF Trainer reads the config
        rules = res.ruleset(self.builtin)  # the built-in rules and this file's project's policies
        limits = o.limits
        if path != "-" and limits.roots is None:  # reads stay in the tree (docs/security.md), the DeepSpeed config
            limits = replace(limits, roots=read_roots(path))  # an Accelerate YAML names included
        return FileSetup(path, res, settings, res.selection(), rules, limits)

    def suppressions(self):
        from .project.suppress import Suppressions

        if self._suppressions is None:
            self._suppressions = Suppressions(self.project, use_baseline=self.options.write_baseline is None)
        return self._suppressions

    # -- lint ---------------------------------------------------------------------------------------------------------

    def lint_one(self, path: str) -> list[Result]:
        """Raises UnreadableFile."""
        s = self.setup(path)
        if path == "-":
            data = sys.stdin.buffer.read(s.limits.max_bytes + 1)
            return [lint_bytes(data, self.options.stdin_filename or "<stdin>", s.settings, s.selection, s.limits,
                               s.rules)]
        if is_yaml(path):
            return lint_accelerate(path, s.settings, s.selection, s.limits, s.rules)
        pick = self._picked.pop(path, None)  # read (and maybe parsed) when it was judged: not again
        if self.options.uses and self.uses_of(path):  # checked once per use: the plain check is not run
            doc = pick.document if pick is not None and pick.document is not None else document_of(
                pick.data if pick is not None and pick.data is not None else read_bytes(path, s.limits), path, s.limits)
            return [Result(path, doc, self.as_used(doc, s) or [])]
        if pick is not None and pick.document is not None:
            result = Result(path, pick.document, run_rules(pick.document, s.settings, s.selection, s.rules))
        elif pick is not None and pick.data is not None:
            result = lint_bytes(pick.data, path, s.settings, s.selection, s.limits, s.rules)
        else:
            result = lint_path(path, s.settings, s.selection, s.limits, s.rules)
        return [result]

    def uses_of(self, path: str) -> list:
        """The uses of the config at `path` in its repository (project/uses.py); each tree is scanned once."""
        from .project.references import repository_root

        root = repository_root(path) if path != "-" else None
        if root is None:
            return []
        from .project.uses import UseIndex, UseScan

        if not isinstance(self._uses.get(root), UseIndex):
            scan = self._uses.get(root) or UseScan(root)
            self._uses[root] = UseIndex(root, scan.result())
        return self._uses[root].of(path)

    def _start_scans(self) -> None:
        """--uses: the scans of the trees the arguments are in start now, on the other cores, while the files to
        lint are found and judged here."""
        from .project.references import repository_root

        for arg in self.options.files:
            if arg != "-" and os.path.exists(arg):
                root = repository_root(os.path.join(arg, "-") if os.path.isdir(arg) else arg)
                if root is not None and root not in self._uses:
                    from .project.uses import UseScan

                    self._uses[root] = UseScan(root)

    def _readings(self, path: str, settings: Settings) -> list[tuple[str, Settings, list]]:
        """(the uses' label, their settings, the uses) for each distinct way the repository hands `path` over: the
        consumer from the use where the target is not given, the world size from it where --world-size is not.
        Empty when no use is found (the file is then checked as it always is)."""
        from .base.record import replace
        from .model.trainer import KNOWN

        groups: dict[tuple, list] = {}
        uses = self.uses_of(path)
        training = [u for u in uses if u.launcher != "deepspeed.init_inference"]
        if uses and not training:
            return INFERENCE_ONLY
        for use in training:
            consumer = use.consumer[0] if use.consumer is not None else None
            target = settings.target if settings.target != "auto" or consumer is None else USE_TARGETS[consumer]
            world = settings.world_size if settings.world_size is not None else use.world_size
            args = _known_training_args(use) if target == "hf" and settings.training_args is None else None
            client = use.values.get("optimizer") if target == "deepspeed" else None
            prepared = {k: use.values[f"prepared_{k}"] for k in ("optimizer", "scheduler")
                        if f"prepared_{k}" in use.values} if target == "accelerate" else {}
            engine = {k: use.values[k] for k in ("no_sync",) if k in use.values} if target == "deepspeed" else {}
            key = (target, world, tuple(sorted((args or {}).get(KNOWN, {}).items())), client,
                   tuple(sorted(prepared.items())), tuple(sorted(engine.items())))
            groups.setdefault(key, []).append((use, args))
        readings = []
        for (target, world, _, client, prepared, engine), members in groups.items():
            label = members[0][0].describe() + (f" and {len(members) - 1} more" if len(members) > 1 else "")
            args = members[0][1]
            changes = {"target": target, "world_size": world, **({"training_args": args} if args else {}),
                       **({"client_optimizer": client} if client else {}),
                       **({"prepared": dict(prepared)} if prepared else {}),
                       **({"engine_calls": dict(engine)} if engine else {})}
            readings.append((label, replace(settings, **changes), [use for use, _ in members]))
        return readings

    def as_used(self, doc: Document, s: FileSetup) -> list[Diagnostic] | None:
        """The findings of the document as each use in its repository reads it (with ZL091 / ZL092), None where no
        use is found (it is then checked on its own). The language server calls this with the editor's text."""
        readings = self._readings(doc.path, s.settings)
        if readings is INFERENCE_ONLY:
            return self._inference_only(doc, s)
        if not readings:
            return None
        return sorted(_as_used(doc, readings, s) + self._overridden(doc, s), key=Diagnostic.sort_key)

    def forget_uses(self) -> None:
        """Read the repositories' uses again on the next lint (a launch script or training file changed)."""
        self._uses.clear()

    def _inference_only(self, doc: Document, s: FileSetup) -> list[Diagnostic]:
        """ZL092: the file's only uses are deepspeed.init_inference calls; no training rule runs on it."""
        from .rules.engine_rules import INFERENCE_CONFIG as rule

        if not s.selection.enabled(rule):
            return []
        uses = self.uses_of(doc.path)
        where = ", ".join(u.where for u in uses)
        return [_at_top(doc, s, rule, f"deepspeed.init_inference reads this config ({where}): an inference config "
                                      "(DeepSpeedInferenceConfig), which zerolint's training rules do not check",
                        "nothing to do; check it with a real init_inference run", uses)]

    def _overridden(self, doc: Document, s: FileSetup) -> list[Diagnostic]:
        """ZL091: where a --target or --world-size given to zerolint contradicts a use of the config."""
        from .rules.engine_rules import FLAG_OVERRIDES_USE as rule

        if not s.selection.enabled(rule):
            return []
        given = {"target": s.settings.target if s.settings.target != "auto" else None,
                 "world size": s.settings.world_size}
        flags = {"target": "--target" if self.options.target not in (None, "auto") else "target (zerolint config)",
                 "world size": "--world-size" if self.options.world_size is not None
                 else "world-size (zerolint config)"}
        out = []
        for use in self.uses_of(doc.path):
            if use.launcher == "deepspeed.init_inference":
                continue
            consumer = use.consumer[0] if use.consumer is not None else None
            theirs = {"target": USE_TARGETS.get(consumer) if consumer else None, "world size": use.world_size}
            for what, value in given.items():
                if value is None or theirs[what] is None or theirs[what] == value:
                    continue
                # theirs["target"] is set only when consumer is: the index below is never None
                shown = (f"{use.consumer[1]} hands this config to {CONSUMER_LABELS[consumer]} (target {theirs[what]})"  # type: ignore[index]
                         if what == "target" else f"{use.where} launches this config on {theirs[what]} GPUs")
                out.append(_at_top(
                    doc, s, rule, f"checked with {flags[what]} {value}, but {shown}: the setting wins, so the "
                                  "verdicts about that use are not the run's",
                    f"drop {flags[what].split(' ')[0]} to check each use as the repository runs it, or make "
                    f"{use.source} agree", [use]))
        return out

    def lint_data(self, data: bytes, name: str) -> Result:
        """Bytes that no file holds (the API's text, bytes or dict), linted as stdin is: with the settings of
        `Options.stdin_filename`, else the working directory's."""
        s = self.setup("-")
        return lint_bytes(data, name, s.settings, s.selection, s.limits, s.rules)

    def lint(self) -> Run:
        from .base.fsio import UnreadableFile

        run = self.sources()
        for path in run.paths:
            try:
                run.results.extend(self.lint_one(path))
            except UnreadableFile as e:
                run.unreadable.append(str(e))
        run.results = _once(run.results, explicit=self.options.target not in (None, "auto"))
        return run

    # -- fix ----------------------------------------------------------------------------------------------------------

    def fix(self) -> Run:
        """Fix every source with its own settings, selection and rules; a finding that a suppression or the
        baseline hides is never fixed. Writes the fixed files (not with --diff); `-` is printed by the caller."""
        from .base.fsio import UnreadableFile

        run = self.sources()
        for path in run.paths:
            try:
                self._fix_one(path, run)
            except UnreadableFile as e:
                run.unreadable.append(str(e))
        run.results = _once(run.results, prefer_named=False)
        return run

    def _fix_one(self, path: str, run: Run) -> None:

        from .base.fsio import Snapshot, WriteRefused, atomic_write
        from .fix.engine import reader_of, reread_error

        o = self.options
        s = self.setup(path)
        name = (o.stdin_filename or "<stdin>") if path == "-" else path
        stdin_out = o.fix in ("fix", "fix-only") and path == "-"
        if is_yaml(name):  # an Accelerate YAML is linted (with the DeepSpeed config it names), never edited
            if path == "-":
                data = sys.stdin.buffer.read(s.limits.max_bytes + 1)
                run.stdin_out = data if stdin_out else None
                run.results.append(Result(name, None))
                run.fixes.append(FileFix(name, note="not fixed: an Accelerate YAML is never edited"))
                return
            results = lint_accelerate(path, s.settings, s.selection, s.limits, s.rules)
            named = [r.path for r in results[1:]]
            how = f"; to fix the DeepSpeed config it names, run --fix on {named[0]}" if named else ""
            run.fixes.append(FileFix(results[0].path, note=f"not fixed: an Accelerate YAML is never edited{how}"))
            run.fixes += [FileFix(r.path) for r in results[1:]]
            run.results += results
            return
        data = sys.stdin.buffer.read(s.limits.max_bytes + 1) if path == "-" else read_bytes(path, s.limits)
        text = _fixable_text(data, s.limits)
        if text is None:
            if stdin_out:
                run.stdin_out = data
            run.results.append(lint_bytes(data, name, s.settings, s.selection, s.limits, s.rules))
            run.fixes.append(FileFix(name, note="not fixed: the file is not UTF-8 text or is over the size limit"))
            return
        result = self._fixer(name, s)(text)
        run.results.append(Result(name, result.document, result.remaining))
        outcome = FileFix(name, result, text, note=result.skipped)
        run.fixes.append(outcome)
        if o.fix == "diff":
            run.any_diff |= result.changed
        elif path == "-":
            problem = reread_error(reader_of(text), result.text) if result.changed else ""
            if problem:
                run.refused.append(f"{name}: {problem}; the input is printed unchanged")
            run.stdin_out = data if problem else result.text.encode("utf-8")
        elif result.changed:
            try:
                problem = reread_error(reader_of(text), result.text)
                if problem:
                    raise WriteRefused(f"{path}: {problem}; not written")
                atomic_write(path, result.text.encode("utf-8"), Snapshot.of(path, data), roots_for(o.files))
            except (WriteRefused, OSError) as e:
                why = str(e) if isinstance(e, WriteRefused) else f"{path}: cannot write ({e.strerror or e})"
                run.refused.append(why)
                run.results[-1] = lint_bytes(data, name, s.settings, s.selection, s.limits, s.rules)
                outcome.note = "not written"

    def _fixer(self, name: str, s: FileSetup) -> Callable:
        if self.options.fixer is not None:
            return self.options.fixer(name)
        from .fix.engine import fix_text

        hidden = self.suppressions().hides(name)
        return lambda text: fix_text(text, name, s.settings, s.selection, unsafe=self.options.unsafe,
                                     prefer=self.options.prefer, rules=s.rules, protected=hidden)

    # -- suppressions and baseline ------------------------------------------------------------------------------------

    def findings(self, run: Run) -> tuple[list[Diagnostic], dict]:
        """(the findings to report, with ZL090 for unused suppressions; the summary). Raises ConfigError."""
        from .report.output import make_summary

        suppressions = self.suppressions()
        diagnostics, unused = suppressions.apply(run.results)
        diagnostics += unused
        summary = make_summary(diagnostics, len(run.results), unreadable=len(run.unreadable))
        skipped = [p for p in run.picks if not p.picked]
        if skipped:  # found in a directory or by a glob, not a DeepSpeed config (--show-files says why)
            summary["skipped"] = len(skipped)
            if self.options.only_configs or self.options.fail_on_skipped:  # the CI gate: each one, and why
                summary["skipped_files"] = [{"file": p.path, "why": p.why} for p in skipped]
            if self.options.fail_on_skipped:
                summary["fail_on_skipped"] = True
        notes = self.project.weakened(run.paths, run.excluded, suppressions.hidden_by())
        if notes:  # what the repository's settings files turned off, shown by every format
            summary["notes"] = notes
        return diagnostics, summary

    def documents(self, run: Run) -> dict:
        return {r.path: r.document for r in run.results if r.document is not None} | self.suppressions().shown

    def info_shown(self, d: Diagnostic) -> bool:
        """Whether the formats people read show this info finding: --show-info, or its file fails on info."""
        return self.options.show_info or self.project.fail_rank(d.file) <= 0

    def failing(self, diagnostics: list[Diagnostic], summary: dict | None = None) -> bool:
        """Whether any finding is at or above its file's fail-on threshold, or (`summary` given, with
        --fail-on-skipped) a candidate was skipped."""
        if summary is not None and summary.get("fail_on_skipped") and summary.get("skipped"):
            return True
        return any(d.severity.rank >= self.project.fail_rank(d.file) for d in diagnostics)


def _matching(path: str, patterns: tuple[str, ...]) -> str | None:
    """The first glob of `patterns` (relative to the working directory) that names `path`, or None."""
    if not patterns:
        return None
    from fnmatch import fnmatch

    rel = os.path.relpath(os.path.abspath(path)).replace(os.sep, "/")
    for pattern in patterns:
        p = pattern.replace(os.sep, "/").removeprefix("./")
        if rel == p or fnmatch(rel, p) or ("/" not in p and fnmatch(os.path.basename(path), p)) or \
                (p.startswith("**/") and fnmatch(rel, p[3:])):
            return pattern
    return None


def _at_top(doc: Document, s: FileSetup, rule, message: str, help_: str, uses: list) -> Diagnostic:
    """A finding of a code reported outside the rule engine (ZL091, ZL092), at the config's top-level object."""
    start = doc.root.start if doc.root is not None else 0
    (line, col), (end_line, end_col) = doc.position(start), doc.position(start + 1)
    return Diagnostic(file=doc.path, code=rule.code, name=rule.name, severity=s.selection.severity_for(rule, None),
                      message=message, pointer="", line=line, column=col, end_line=end_line, end_column=end_col,
                      help=help_, url=rule.url, start=start, end=start + 1, uses=[u.to_json() for u in uses])


def _launchers_apart(candidates: list, bring: bool) -> tuple[list, list]:
    """The CI gate and pre-commit pass what a change touched: a launch script or training script among it is no
    candidate config (never a skipped one, never a config that does not parse) but, with `bring`, brings the
    configs it uses, checked as it uses them (a changed `--num_gpus` can break a config nobody touched). (the other
    candidates, picks for the configs launched)."""
    from .model.detect import Pick
    from .project.uses import LAUNCHER_SUFFIXES, SHELL_NAMES, configs_used_by

    rest, launched, seen = [], [], set()
    for path, named in candidates:
        if path == "-" or not (path.endswith(LAUNCHER_SUFFIXES) or os.path.basename(path) in SHELL_NAMES):
            rest.append((path, named))
            continue
        for config, use in configs_used_by(path) if bring else ():
            key = os.path.abspath(config)
            if key not in seen:
                seen.add(key)
                launched.append(Pick(config, True, f"used by {use.describe()}, which changed"))
    return rest, launched


def _yamls_that_launch(picks: list, launched: list) -> list:
    """The gate's YAML candidates that are no DeepSpeed config but name one (a training recipe's `deepspeed:`, a CI
    workflow's launch line) bring it, as a changed launch script does, and are no skipped candidate; then the
    configs the launch scripts brought, each once."""
    from .model.detect import Pick
    from .project.uses import configs_used_by

    out, have = [], {os.path.abspath(p.path) for p in picks if p.picked}
    for p in picks:
        used = configs_used_by(p.path) if not p.picked and is_yaml(p.path) else []
        if not used:
            out.append(p)
        for config, use in used:
            launched.append(Pick(config, True, f"used by {use.describe()}, which changed"))
    for p in launched:
        if os.path.abspath(p.path) not in have:
            have.add(os.path.abspath(p.path))
            out.append(p)
    return out


def _named_elsewhere(picks: list) -> list:
    """The CI gate: a skipped candidate that the tree's launch lines, YAMLs or training code name as the DeepSpeed
    config is picked after all (project/references.py)."""
    skipped = [p.path for p in picks if not p.picked]
    if not skipped:
        return picks
    from .model.detect import Pick
    from .project.references import named_configs

    named = named_configs(skipped)
    return [Pick(p.path, True, f"named as the DeepSpeed config by {named[p.path]}") if p.path in named else p
            for p in picks]


def roots_for(args) -> list[str]:
    """The trees being checked: the working directory and every directory named (or holding a file named) on the
    command line. A symlink may be written through only when its target is inside one of them."""
    roots = [os.getcwd()]
    for a in args:
        if a != "-":
            roots.append(a if os.path.isdir(a) else os.path.dirname(os.path.abspath(a)))
    return roots


def _fixable_text(data: bytes, limits: Limits) -> str | None:
    """The text to fix, or None: over the size limit, not UTF-8, or UTF-16 (BOM)."""
    if len(data) > limits.max_bytes or data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None



def _known_training_args(use) -> dict | None:
    """The TrainingArguments fields a use writes (code literals, a recipe, the launch line's flags) as a dict the
    HF rules compare only where a field is known (model/trainer.py KNOWN); None when it writes none."""
    from .model.trainer import KNOWN, TRAINING_ARGS_DEFAULTS

    fields = {k: v for k, v in use.values.items() if k in TRAINING_ARGS_DEFAULTS and isinstance(v[0], (int, float))}
    if not fields:
        return None
    known = {k: where for k, (_, where) in fields.items()}
    values = {k: value for k, (value, _) in fields.items()}
    for on, off in (("bf16", "fp16"), ("fp16", "bf16")):  # TrainingArguments refuses both: one true, the other false
        if values.get(on) is True and off not in values:
            values[off], known[off] = False, known[on]
    return {**TRAINING_ARGS_DEFAULTS, **values, KNOWN: known}


# What a use's consumer means for the rules: inference configs are no training configs, so no HF rule applies
USE_TARGETS = {"hf": "hf", "accelerate": "accelerate", "deepspeed": "deepspeed", "inference": "deepspeed"}
INFERENCE_ONLY: list = [("inference only", None, [])]  # _readings' answer for a file only init_inference reads
CONSUMER_LABELS = {"hf": "HF Trainer", "accelerate": "Accelerate loop", "deepspeed": "deepspeed.initialize",
                   "inference": "DeepSpeed inference code"}


def _as_used(doc, readings: list, s: FileSetup) -> list:
    """The document checked once per reading; a finding every reading reports is kept once, a finding only some
    readings report says which use it is about, and one every reading reports names them all (`A and 2 more`):
    each verdict was reached with a use's consumer, world size and code. Each carries the uses it holds for
    (Diagnostic.uses)."""
    from .base.record import replace

    per_reading = [(label, run_rules(doc, settings, s.selection, s.rules), uses) for label, settings, uses in readings]

    def key(d):
        return d.code, d.pointer, d.message

    every_use = [u for _, _, uses in per_reading for u in uses]
    label_all = every_use[0].describe() + (f" and {len(every_use) - 1} more" if len(every_use) > 1 else "")

    holds: dict[tuple, list] = {}
    for _, diags, uses in per_reading:
        for d in diags:
            holds.setdefault(key(d), []).extend(u.to_json() for u in uses)
    everywhere = set.intersection(*({key(d) for d in diags} for _, diags, _ in per_reading))
    out, seen = [], set()
    for label, diags, uses in per_reading:
        for d in diags:
            k = key(d)
            if k in everywhere:
                if k not in seen:
                    seen.add(k)
                    out.append(replace(d, message=f"{d.message} (used by {label_all})", uses=holds[k]))
            elif (k, label) not in seen:
                seen.add((k, label))
                out.append(replace(d, message=f"{d.message} (used by {label})", uses=[u.to_json() for u in uses]))
    out.sort(key=lambda d: (d.line, d.column))
    return out


def _shown_dir(d: str) -> str:
    rel = os.path.relpath(d)
    return "." if rel == "." else rel if not rel.startswith("..") else d


def _once(results: list[Result], prefer_named: bool = True, explicit: bool = False) -> list[Result]:
    """Each file once. A DeepSpeed config named directly and through an Accelerate YAML is reported as the YAML's
    (`prefer_named`: target accelerate, as `accelerate launch` reads it), or after --fix as the file that was fixed.
    With an `explicit` --target the direct reading wins, and what the YAML's reading finds besides is added to it,
    saying so. Stdin and a file named twice by the same route keep their first result."""
    keep: dict[str, int] = {}
    keys = [None if r.path.startswith("<") else os.path.realpath(r.path) for r in results]
    for i, (r, k) in enumerate(zip(results, keys)):
        if k is None:
            continue
        if k not in keep:
            keep[k] = i
            continue
        kept = results[keep[k]]
        if explicit and (kept.named_by is None) != (r.named_by is None):
            direct, named = (kept, r) if kept.named_by is None else (r, kept)
            _add_other_reading(direct, named)
            keep[k] = next(j for j, x in enumerate(results) if x is direct)
        elif ((r.named_by is not None) == prefer_named) and ((kept.named_by is not None) != prefer_named):
            keep[k] = i
    return [r for i, (r, k) in enumerate(zip(results, keys)) if k is None or keep[k] == i]


def _add_other_reading(direct: Result, named: Result) -> None:
    """The findings of `named` (the file as an Accelerate YAML hands it on) that the direct reading lacks, added to
    `direct` with the route in their message."""
    from .base.record import replace

    seen = {(d.code, d.pointer) for d in direct.diagnostics}
    for d in named.diagnostics:
        if (d.code, d.pointer) not in seen:
            route = f" (as `accelerate launch` reads it through {named.named_by})"
            direct.diagnostics.append(replace(d, file=direct.path, message=d.message + route))
    direct.diagnostics.sort(key=lambda d: (d.line, d.column))
