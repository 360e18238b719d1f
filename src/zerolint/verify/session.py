"""One `zerolint verify` session, for one or many configs: the static phase (the pipeline, as `check` lints each
file, at the run's world size), the op build phase, the runs (single-rank ones through one warm runner, a lone
config and `--compare-fix` included; several ranks through the launcher), the reports.

The click command (zerolint/cli/app.py) and the GitHub Action's verify step (zerolint/cli/action.py) are thin shells
over it. Never imports torch or deepspeed (the children do).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass

from ..base.fsio import UnreadableFile
from ..base.version import __version__
from ..model.document import Document
from ..model.trainer import training_args_dict
from ..model.view import View
from ..pipeline import FileSetup, Options, Pipeline, Result, Run, lint_bytes
from ..report.output import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, pair_outputs  # the exit codes every command shares
from . import cache
from .hf_args import TrainingArgs, TrainingArgsError, read_training_args
from .hf_plan import build_hf_plan, hf_fill_changes, hf_versions
from .ops import build_ops
from .options import Progress, UsageError, VerifyOptions, with_nodes
from .report import RunReport, analyse, print_rich, render_json, render_sarif, render_text, verdict
from .resolve import NEUTRALISED, Change, build_plan, model_spec, parse_params
from .runner import RunOptions, cpu_model, detect_gpus, needed_ops, run_plan, signals_as_interrupt

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

    from ..model.diagnostics import Diagnostic
    from ..rules.engine import Selection
    from .resolve import Plan


def op_cache_dir(opts: VerifyOptions, device_kind: str) -> str:
    """The op cache this verify uses (cache.extensions_dir), refused when someone else could have written the
    code DeepSpeed would load from it (cache.check_op_cache)."""
    ext_dir = cache.extensions_dir(device_kind, opts.op_cache)
    try:
        cache.check_op_cache(ext_dir)
    except cache.OpCacheRefused as e:
        raise UsageError(str(e)) from None
    return ext_dir


def accelerator_of(opts: VerifyOptions) -> tuple[str, str]:
    if opts.cpu:
        return "cpu", f"cpu:{cpu_model()}"
    n, name = detect_gpus()
    if n == 0:
        return "cpu", f"cpu:{cpu_model()}"
    if opts.gpus > n:
        raise UsageError(f"--gpus {opts.gpus}: only {n} GPU{'s' if n != 1 else ''} visible (use --cpu for CPU ranks)")
    return "cuda", f"cuda:{name}"


def _read_for_deepspeed(doc: Document, target: str) -> tuple[dict | None, dict | None]:
    """The dict the consumer hands DeepSpeed, or a reader error record: DeepSpeed reads a file with hjson and
    rejects duplicate keys (runtime/config_utils.py:205-212); HF and Accelerate use json.load."""
    if target == "deepspeed":
        if doc.hjson_error is not None:
            e = doc.hjson_error
            return None, {"type": "HjsonDecodeError", "message": e.message, "offset": e.offset,
                          "reader_name": "DeepSpeed's hjson reader"}
        dups = [n for n in doc.notes if n.kind == "duplicate-key"]
        if dups:
            return None, {"type": "ValueError", "offset": dups[0].start, "reader_name": "DeepSpeed's config loader",
                          "message": f"Duplicate keys in DeepSpeed config: {dups[0].message} "
                                     "(runtime/config_utils.py:205-212)"}
        import hjson

        data = json.loads(json.dumps(hjson.loads(doc.text)))
    else:
        if doc.json_error is not None:
            e = doc.json_error
            return None, {"type": "JSONDecodeError", "message": e.message, "offset": e.offset,
                          "reader_name": f"{'the HF Trainer' if target == 'hf' else 'Accelerate'}'s json.load",
                          "help": "DeepSpeed's own hjson reader accepts it; the HF Trainer and Accelerate do not"}
        data = json.loads(doc.text)
    if not isinstance(data, dict):
        return None, {"type": "TypeError", "message": "the config is not a JSON object", "offset": 0,
                      "reader_name": "DeepSpeed"}
    return data, None


def training_args_of(opts: VerifyOptions) -> TrainingArgs | None:
    """--training-args FILE, read and checked (hf_args.py); a usage error when it cannot be used."""
    if opts.training_args is None:
        return None
    try:
        return read_training_args(opts.training_args)
    except TrainingArgsError as e:
        raise UsageError(f"--training-args: {e}") from None


def _plan(data: dict, target: str, opts: VerifyOptions, accelerator: str, tmpdir: str, args: TrainingArgs | None):
    """The real HF Trainer / Accelerate when the target is theirs and the [hf] extra is installed (hf_plan.py),
    else zerolint's replay of their fill (resolve.py), which the report then says."""
    plan = _plan_of(data, target, opts, accelerator, tmpdir, args)
    for name, why in (args.dropped if args is not None else []):  # listed, as a neutralised key is
        plan.changes.append(Change("", f"--training-args {name} not honoured: {why}", kind=NEUTRALISED))
    return plan


def _plan_of(data: dict, target: str, opts: VerifyOptions, accelerator: str, tmpdir: str, args: TrainingArgs | None):
    model = model_spec(parse_params(opts.params), opts.seq_len)
    versions = hf_versions()
    if target in ("hf", "accelerate") and opts.hf != "replay" and versions is not None:
        plan = build_hf_plan(data, target=target, world_size=opts.ranks, steps=opts.steps, precision=opts.precision,
                             accelerator=accelerator, model=model, tmpdir=tmpdir, training_args=args)
        who = "the HF Trainer" if target == "hf" else "Accelerate"
        plan.changes.insert(0, Change("", f'"auto" is filled and checked by {who} itself (transformers '
                                          f"{versions['transformers']}, accelerate {versions['accelerate']})"))
        return plan
    plan = build_plan(data, target=target, world_size=opts.ranks, steps=opts.steps, precision=opts.precision,
                      model=model, tmpdir=tmpdir, client_optimizer=opts.client_optimizer, training_args=args)
    if target in ("hf", "accelerate"):
        from ..base.version import install_hint

        why = ("--hf replay" if opts.hf == "replay" else
               f"transformers/accelerate are not installed: {install_hint('hf')} to run HF's own")
        plan.changes.insert(0, Change("", f'"auto" is filled by zerolint\'s replay of the HF fill ({why})'))
    return plan


def pipeline_for(configs: list[str], opts: VerifyOptions) -> Pipeline:
    """The pipeline verify's static phase goes through, as `check CONFIG` with the same options: each file's
    settings from the nearest .zerolint.toml / [tool.zerolint] (unless --isolated or --config), its selection,
    its project's policy rules, suppressions and baseline."""
    from ..project.settings import ConfigError

    try:
        args = training_args_of(opts)
        return Pipeline(Options(files=tuple(configs), target=opts.target, select=tuple(opts.select),
                                world_size=opts.ranks,  # the static phase judges the job that runs
                                training_args=training_args_dict(args.values) if args is not None else None,
                                ignore=tuple(opts.ignore), fail_on=opts.fail_on, isolated=opts.isolated,
                                config_file=opts.config_file))
    except ConfigError as e:
        raise UsageError(str(e)) from None


def static_phase(pipeline: Pipeline, config: str) -> tuple[FileSetup, Result]:
    """CONFIG's settings and its static findings (before suppressions), exactly as the pipeline lints it for
    `check`. A usage error for what verify cannot run: stdin, an Accelerate YAML, an unreadable file, a broken
    zerolint config, an unknown rule code."""
    from ..project.settings import ConfigError

    if config == "-" or config.lower().endswith((".yaml", ".yml")):
        raise UsageError(f"{config}: verify runs a DeepSpeed config file; for an Accelerate YAML, verify the "
                         "deepspeed_config_file it names with --target accelerate")
    try:
        setup = pipeline.setup(config)
        for codes, option in ((pipeline.options.select, "--select"), (pipeline.options.ignore, "--ignore")):
            for code in codes:
                why = setup.rules.unknown(code)
                if why is not None:
                    raise UsageError(f"Invalid value for {option}: {why}")
        [result] = pipeline.lint_one(config)
    except UnreadableFile as e:
        raise UsageError(str(e)) from None
    except ConfigError as e:
        raise UsageError(str(e)) from None
    return setup, result


@dataclass
class Prepared:
    """A config ready to run: its report (no record yet), plan and cache key; `nvme_dir` is removed after the run."""
    rep: RunReport
    plan: Plan
    key: str
    nvme_dir: str
    base: dict
    selection: Selection


def prepare_text(text: str, path: str, label: str, opts: VerifyOptions, device_kind: str, setup: FileSetup,
                 accelerator: str, static=None, doc: Document | None = None) -> RunReport | Prepared:
    """The finished report when nothing has to run (a reader error, a cached result), else what to run."""
    settings, selection = setup.settings, setup.selection
    if doc is None or static is None:
        res = lint_bytes(text.encode("utf-8"), path, settings, selection, setup.limits, setup.rules)
        doc, static = res.document, res.diagnostics
        assert doc is not None  # lint_bytes always parses one
    view = View(doc, settings)
    data, reader_error = _read_for_deepspeed(doc, view.target)
    rep = RunReport(label=label, path=path, doc=doc, view=view, plan=None, record={}, static=list(static))
    base: dict[str, Any] = {"accelerator": accelerator, "world_size": opts.ranks, "timeout_s": opts.timeout,
            "versions": {"deepspeed": cache.package_version("deepspeed"), "torch": cache.package_version("torch")}}
    if reader_error is not None:
        rep.record = {**base, "status": "fail", "phase": "parse", "error": reader_error, "wall_s": 0.0}
        return analyse(rep, selection)
    assert data is not None  # _read_for_deepspeed: the data, or a reader error
    nvme_dir = tempfile.mkdtemp(prefix="zerolint-nvme-")
    try:
        plan = _plan(data, view.target, opts, accelerator, nvme_dir, training_args_of(opts))
        rep.plan = plan
        key = cache.result_key({
            "plan": json.loads(json.dumps(plan.to_json()).replace(nvme_dir, "<tmp>")), "zerolint": __version__,
            "deepspeed": base["versions"]["deepspeed"],
            "torch": base["versions"]["torch"], "device": device_kind, "world_size": opts.ranks,
            "launcher": opts.run_launcher if opts.ranks > 1 else "single",
        })
        record = None if opts.no_cache else cache.load(key)
    except BaseException:
        shutil.rmtree(nvme_dir, ignore_errors=True)
        raise
    if record is not None:
        shutil.rmtree(nvme_dir, ignore_errors=True)
        rep.cached, rep.record = True, record
        plan.changes += hf_fill_changes(plan, record)  # what the real HF Trainer filled (the hf path), as changes
        return analyse(rep, selection)
    refusal = replayed_mismatch(doc, settings, opts, plan)
    if refusal is not None:  # the HF Trainer would stop here, before DeepSpeed runs
        shutil.rmtree(nvme_dir, ignore_errors=True)
        rep.record = {**base, "status": "fail", "phase": "initialize", "error": refusal, "wall_s": 0.0,
                      "replayed": "the HF Trainer's mismatch check (transformers integrations/deepspeed.py "
                                  "trainer_config_finalize), replayed: transformers is not installed"}
        return analyse(rep, selection)
    return Prepared(rep, plan, key, nvme_dir, base, selection)


def replayed_mismatch(doc: Document, settings, opts: VerifyOptions, plan) -> dict | None:
    """On the replay path (target hf, --training-args, no real HF Trainer), the error the Trainer raises when a
    config value mismatches TrainingArguments (the same keys as ZL523, at the run's world size), else None."""
    if plan.hf is not None or plan.target != "hf" or getattr(settings, "training_args", None) is None:
        return None
    from ..base.record import replace as replace_record
    from ..model.trainer import ds_key, mismatches

    view = View(doc, replace_record(settings, world_size=opts.ranks))
    found = mismatches(view)
    if not found:
        return None
    lines = "\n".join(f"- ds {ds_key(c.pointer)}={ds} vs hf {c.hf_key}={hf}" for c, ds, hf in found)
    return {"type": "ValueError", "module": "builtins",
            "message": "Please correct the following DeepSpeed config values that mismatch TrainingArguments values:"
                       f"\n{lines}\nThe easiest method is to set these DeepSpeed config values to 'auto'.",
            "frames": [{"file": "transformers/integrations/deepspeed.py", "line": 0, "func": "trainer_config_finalize",
                        "code": "raise ValueError(...)  # replayed by zerolint"}]}


def finish(p: Prepared, record: dict) -> RunReport:
    """The report of a run: the record cached (a pass, fail or skip), the temp dir gone, the findings made."""
    shutil.rmtree(p.nvme_dir, ignore_errors=True)
    if record.get("status") in ("pass", "fail", "skip"):
        cache.store(p.key, record)
    p.rep.record = record
    p.plan.changes += hf_fill_changes(p.plan, record)  # what the real HF Trainer filled (the hf path), as changes
    return analyse(p.rep, p.selection)


def verify_text(text: str, path: str, label: str, opts: VerifyOptions, accelerator: str, device_kind: str,
                progress: Progress, setup: FileSetup, static=None, doc: Document | None = None) -> RunReport:
    """Run `text` (CONFIG's, or its fixed text) with `setup`'s settings and selection (pipeline.setup)."""
    p = prepare_text(text, path, label, opts, device_kind, setup, accelerator, static, doc)
    if isinstance(p, RunReport):
        return p
    try:
        ext_dir = op_cache_dir(opts, device_kind)
        progress.start(f"{path} ({label})")
        try:
            build = build_ops(needed_ops(p.plan, accelerator), ext_dir, accelerator, opts.build_timeout, progress,
                              progress.note, cleanup=(p.nvme_dir,))
            if build["status"] == "build-timeout":  # the build, not the config, was slow: nothing was run
                record = {**p.base, "status": "build-timeout", "phase": build["phase"], "wall_s": build["wall_s"]}
            else:
                record = run_plan(p.plan, RunOptions(
                    accelerator=accelerator, world_size=opts.gpus, launcher=opts.launcher or "torchrun",
                    timeout=opts.timeout, extensions_dir=ext_dir, progress=progress, cleanup=(p.nvme_dir,),
                    nodes=opts.nodes, build_timeout=opts.build_timeout, note=progress.note,
                    keep_dir=os.path.join(opts.keep, label) if opts.keep else None))
            record.setdefault("build", build)
        finally:
            progress.stop()
    except BaseException:
        shutil.rmtree(p.nvme_dir, ignore_errors=True)
        raise
    return finish(p, record)


def _fixed(text: str, path: str, opts: VerifyOptions, setup: FileSetup | None = None,
           protected=None) -> tuple[dict, str | None]:
    """zerolint's fix of the text (zerolint.fix.fix_text) with the file's settings, selection and rules, never
    fixing a finding a suppression or the baseline hides (`protected`), as `check --fix` does; or why there is
    none."""
    try:
        from ..fix.engine import fix_text
    except ImportError:
        return {"available": False, "reason": "fix engine not available (zerolint.fix.fix_text not found)"}, None
    if setup is None:
        result = fix_text(text, path, unsafe=opts.unsafe_fixes, prefer=opts.prefer)
    else:
        result = fix_text(text, path, setup.settings, setup.selection, unsafe=opts.unsafe_fixes, prefer=opts.prefer,
                          rules=setup.rules, protected=protected)
    info = {"available": True, "applied": [a.to_json() for a in result.applied],
            "failed": [a.to_json() for a in result.failed], "fixed_text": result.text}
    if result.skipped:
        info.update(available=False, reason=f"no fix attempted: {result.skipped}")
        return info, None
    if not result.changed:
        info.update(available=False, reason="zerolint has no fix for this config"
                    + ("" if opts.unsafe_fixes else " (try --unsafe-fixes)"))
        return info, None
    return info, result.text


def need_torch_and_deepspeed() -> None:
    if not (cache.package_version("torch") and cache.package_version("deepspeed")):
        from ..base.version import install_hint

        raise UsageError(f"zerolint verify needs torch and deepspeed: {install_hint('verify')} (on a CPU-only "
                         "machine install the CPU build of torch first)")


def prepare(configs: list[str], opts: VerifyOptions) -> int:
    """`zerolint verify --prepare CONFIG...`: build the DeepSpeed ops these configs need into the op cache, and
    nothing else (for Docker images and CI setup steps). 0 when every op is ready, 2 otherwise."""
    if not opts.dry_run:
        need_torch_and_deepspeed()
    accelerator, device_kind = accelerator_of(opts)
    pipeline = pipeline_for(configs, opts)
    ops: list[str] = []
    per_config: list[tuple[str, list[str]]] = []
    args = training_args_of(opts)
    for config in configs:
        setup, res = static_phase(pipeline, config)  # the target the run will have (the project's settings)
        assert res.document is not None  # static_phase lints a readable file: a document
        target = View(res.document, setup.settings).target
        data, reader_error = _read_for_deepspeed(res.document, target)
        if reader_error is not None:
            raise UsageError(f"{config}: {reader_error['reader_name']} cannot read it: {reader_error['message']}")
        assert data is not None  # _read_for_deepspeed: the data, or a reader error
        try:
            plan = build_plan(data, target=target, world_size=opts.ranks, steps=opts.steps, precision=opts.precision,
                              client_optimizer=opts.client_optimizer, training_args=args,
                              model=model_spec(parse_params(opts.params), opts.seq_len), tmpdir=tempfile.gettempdir())
        except ValueError as e:
            raise UsageError(f"{config}: {e}") from None
        own = needed_ops(plan, accelerator)
        per_config.append((config, own))
        ops += [op for op in own if op not in ops]
    ext_dir = op_cache_dir(opts, device_kind)
    if opts.dry_run:
        _print_plan(per_config, ops, ext_dir, accelerator, opts)
        return EXIT_OK
    progress = Progress(enabled=not opts.quiet, rich=False)
    progress.label = "prepare"
    with signals_as_interrupt():
        build = build_ops(ops, ext_dir, accelerator, opts.build_timeout, progress, progress.note)
    for op in ops:
        info = build["ops"].get(op, {})
        state = info.get("status", "not reached")
        extra = f" in {info['seconds']:.0f} s" if state == "built" and "seconds" in info else ""
        extra += f": {info['error']}" if info.get("error") else ""
        print(f"zerolint verify --prepare: {op}: {'already built' if state == 'cached' else state}{extra}",
              file=sys.stderr)
    if build["status"] == "build-timeout":
        print(f"zerolint verify --prepare: the build of {build['op']} did not finish within --build-timeout "
              f"{opts.build_timeout:g} s", file=sys.stderr)
    print(f"zerolint verify --prepare: {len(ops)} op{'s' if len(ops) != 1 else ''} "
          f"{'ready' if build['status'] == 'ok' else 'NOT ready'} in {ext_dir}", file=sys.stderr)
    return EXIT_OK if build["status"] == "ok" else EXIT_USAGE


def _print_plan(per_config: list[tuple[str, list[str]]], ops: list[str], ext_dir: str, accelerator: str,
                opts: VerifyOptions) -> None:
    """`--prepare --dry-run`: each config with the ops its run will load (verify/opplan.py), and whether each is
    built in the op cache; nothing is built."""
    from .ops import is_current

    state = {op: "built" if is_current(ext_dir, op) else "not built" for op in ops}

    def text() -> str:
        lines = [f"{c}: {', '.join(own) if own else 'no ops'}" for c, own in per_config]
        lines += [f"  {op}: {state[op]}" for op in ops]
        lines.append(f"{len(ops)} op{'s' if len(ops) != 1 else ''} for {accelerator}, op cache {ext_dir}")
        return "\n".join(lines) + "\n"

    def as_json() -> str:
        return json.dumps({"accelerator": accelerator, "op_cache": ext_dir,
                           "ops": [{"op": op, "state": state[op]} for op in ops],
                           "configs": [{"file": c, "ops": own} for c, own in per_config]}, indent=2) + "\n"

    _write_formats(opts, {"json": as_json, "text": text})


def run(config: str, opts: VerifyOptions) -> int:
    need_torch_and_deepspeed()
    if opts.params is not None:
        try:
            parse_params(opts.params)
        except ValueError as e:
            raise UsageError(f"--params: {e}") from None
    opts = with_nodes(opts)
    accelerator, device_kind = accelerator_of(opts)
    pipeline = pipeline_for([config], opts)
    setup, res = static_phase(pipeline, config)
    assert res.document is not None  # static_phase lints a readable file: a document
    with signals_as_interrupt():  # SIGTERM/SIGHUP stop the run as Ctrl-C does (the CLI exits 128 + signal)
        texts: list[tuple[str, str, list[Diagnostic] | None, Document | None]] = [
            (res.document.text, "original", res.diagnostics, res.document)]
        compare = None
        if opts.compare_fix:
            compare, fixed = _fixed(res.document.text, config, opts, setup, pipeline.suppressions().hides(config))
            if fixed is not None:
                texts.append((fixed, "fixed", None, None))
        reports = _run_texts(texts, config, opts, accelerator, device_kind, setup)
        if compare is not None and len(reports) > 1:
            compare["fixed_verdict"] = verdict(reports[1])
    diagnostics, summary, documents = _through_suppressions(pipeline, reports[0])
    summary["verify"] = verdict(reports[0])
    _emit(reports, compare, documents, summary, opts)
    return EXIT_FINDINGS if pipeline.failing(diagnostics) else EXIT_OK


def _run_texts(texts: list[tuple], path: str, opts: VerifyOptions, accelerator: str, device_kind: str,
               setup: FileSetup) -> list[RunReport]:
    """A config's texts (its own, and with --compare-fix the fixed one), as one session: single-rank runs go
    through one warm runner (one import of torch and DeepSpeed for both), several ranks, several nodes and --keep
    through a process tree of their own (runner.run_plan), with a spinner on a terminal."""
    if opts.gpus > 1 or opts.nodes is not None or opts.keep:
        color = opts.color and sys.stderr.isatty() and not os.environ.get("NO_COLOR")
        progress = Progress(enabled=not opts.quiet, rich=color)
        return [verify_text(text, path, label, opts, accelerator, device_kind, progress, setup, static=static,
                            doc=doc) for text, label, static, doc in texts]
    prepared: list = []
    say = (lambda text: None) if opts.quiet else (lambda text: print(f"zerolint verify: {text}", file=sys.stderr,
                                                                        flush=True))
    try:
        for text, label, static, doc in texts:
            prepared.append(prepare_text(text, path, label, opts, device_kind, setup, accelerator, static, doc))
        return _run_prepared(prepared, opts, accelerator, device_kind, 1, say)
    finally:
        for p in prepared:
            if isinstance(p, Prepared):
                shutil.rmtree(p.nvme_dir, ignore_errors=True)


def _through_suppressions(pipeline: Pipeline, rep: RunReport) -> tuple[list, dict, dict]:
    """The report's static and verify findings through the project's suppressions and baseline, as `check`
    filters its findings (with ZL090 for an unused entry); (findings, summary, documents). Keeps in `rep` only
    what is reported."""
    from ..project.settings import ConfigError

    run = Run(results=[Result(rep.path, rep.doc, rep.static + rep.verify)], paths=[rep.path])
    try:
        diagnostics, summary = pipeline.findings(run)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    kept, from_run = {id(d) for d in diagnostics}, {id(d) for d in rep.verify}
    rep.verify = [d for d in rep.verify if id(d) in kept]
    rep.static = [d for d in diagnostics if id(d) not in from_run]  # ZL090 included
    return diagnostics, summary, pipeline.documents(run)


def _emit(reports, compare, documents, summary, opts: VerifyOptions) -> None:
    renderers = {"json": lambda: render_json(reports, compare, summary),
                 "sarif": lambda: render_sarif(reports, compare, documents, summary),
                 "text": lambda: render_text(reports, compare, documents, summary, quiet=opts.quiet)}
    _write_formats(opts, renderers, rich=lambda: print_rich(reports, compare, documents, summary, quiet=opts.quiet))


def _write_formats(opts: VerifyOptions, renderers: dict, rich=None) -> None:
    """Each --format rendered (`renderers[format]()`, text for any other) to its --output, or to stdout; text on a
    terminal through `rich` when given. The same --format/--output pairing as check."""
    formats = tuple(opts.formats or ("text",))
    if len(opts.outputs) > len(formats):  # pair_outputs' own usage error, without click
        raise UsageError(f"{len(opts.outputs)} --output files but {len(formats)} --format; give a --format for each "
                         "file (the last formats go to the files)")
    files = pair_outputs(formats, opts.outputs)
    for i, fmt in enumerate(formats):
        tty = sys.stdout.isatty() and opts.color and not os.environ.get("NO_COLOR")
        if rich is not None and fmt == "text" and i not in files and tty:
            rich()
            continue
        text = renderers.get(fmt, renderers["text"])()
        if i in files:
            from ..base.fsio import OutputError, write_output  # whole or nothing, never through a link

            try:
                write_output(files[i], text)
            except OutputError as e:
                raise UsageError(str(e)) from None
        else:
            sys.stdout.write(text)
            sys.stdout.flush()


# -- several configs: the warm runner ---------------------------------------------------------------------------------

HF_PRELOAD_FROM = 4  # real-HF configs in one session from which the warm server imports transformers too


def expand_configs(args: list[str]) -> list[str]:
    """CONFIG arguments as check expands them (base/files.py: directories, quoted globs); a glob that matches
    nothing is a usage error."""
    from ..base.files import expand

    found, problems = expand(list(args))
    if problems:
        raise UsageError("; ".join(problems))
    if not found:
        raise UsageError("no config files to verify")
    return [path for path, _named in found]  # expand() gives (path, named) pairs since content-based picking


def run_several(configs: list[str], opts: VerifyOptions, jobs: int = 1) -> int:
    """`zerolint verify A.json B.json configs/ ...`: every config's static phase, one op build phase for all of
    them, then the runs: single-rank ones through one warm server (zerolint/verify/warm.py), `jobs` at a time;
    several ranks one after another through the launcher. A progress line per config, the reports, a verdict
    table. 1 when any config fails (a finding at or above --fail-on), else 0."""
    outcome = verify_many(configs, opts, jobs)
    _emit_many(outcome.reports, outcome.diagnostics, outcome.documents, outcome.summary, opts)
    return outcome.code


@dataclass
class Outcome:
    """What a session over several configs found: the reports, the findings through suppressions and baseline,
    the summary, the documents (for SARIF and the text snippets), and the exit code."""
    reports: list
    diagnostics: list
    summary: dict
    documents: dict
    code: int

    def payload(self) -> dict:
        """The JSON report as a dict (verify --format json for several configs; the Action's annotations)."""
        from .report import many_payload

        return many_payload(self.reports, self.diagnostics, self.summary)


def verify_many(configs: list[str], opts: VerifyOptions, jobs: int = 1) -> Outcome:
    """The session behind run_several, without printing the reports (the Action's verify step calls it)."""
    need_torch_and_deepspeed()
    if opts.compare_fix or opts.keep:
        raise UsageError(f"{'--compare-fix' if opts.compare_fix else '--keep'} takes one CONFIG")
    nodes = with_nodes(opts).nodes
    if nodes is not None:  # a second config's launch would meet the first one's on the other nodes
        raise UsageError(f"a multi-node run (--launcher {nodes.launcher}) takes one CONFIG")
    if opts.params is not None:
        try:
            parse_params(opts.params)
        except ValueError as e:
            raise UsageError(f"--params: {e}") from None
    accelerator, device_kind = accelerator_of(opts)
    pipeline = pipeline_for(configs, opts)
    statics = [static_phase(pipeline, c) for c in configs]
    say = (lambda text: None) if opts.quiet else (lambda text: print(f"zerolint verify: {text}", file=sys.stderr,
                                                                        flush=True))
    n = len(configs)
    with signals_as_interrupt():
        prepared: list = []
        try:
            for config, (setup, res) in zip(configs, statics):
                assert res.document is not None  # static_phase lints a readable file: a document
                prepared.append(prepare_text(res.document.text, config, "original", opts, device_kind, setup,
                                             accelerator, static=res.diagnostics, doc=res.document))
            reports = _run_prepared(prepared, opts, accelerator, device_kind, jobs, say)
        finally:
            for p in prepared:
                if isinstance(p, Prepared):
                    shutil.rmtree(p.nvme_dir, ignore_errors=True)
    for i, rep in enumerate(reports):
        if rep.cached:
            say(f"[{i + 1}/{n}] {rep.path}: {verdict(rep).upper()} (cached)")
    return _findings_of_several(pipeline, reports)


def _run_prepared(prepared: list, opts: VerifyOptions, accelerator: str, device_kind: str, jobs: int,
                  say) -> list[RunReport]:
    todo = [i for i, p in enumerate(prepared) if isinstance(p, Prepared)]
    got = run_plans_here([prepared[i].plan for i in todo], [_name(prepared[i].rep) for i in todo], opts,
                         accelerator, device_kind, jobs, say, cleanup=tuple(prepared[i].nvme_dir for i in todo),
                         positions=[i + 1 for i in todo], total=len(prepared))
    records = dict(zip(todo, got))
    return [finish(p, records[i]) if isinstance(p, Prepared) else p for i, p in enumerate(prepared)]


def run_plans_here(plans: list[Plan], names: list[str], opts: VerifyOptions, accelerator: str, device_kind: str,
                   jobs: int, say, cleanup: tuple = (), positions: list[int] | None = None,
                   total: int | None = None) -> list[dict]:
    """Run `plans` on this machine, a record per plan in order: one op build phase for all of them (before any
    clock), then single-rank runs through one warm server (`jobs` at a time), several ranks one after another
    through the launcher (also the fallback when the warm runner does not start). `say` gets the progress lines
    ("[i/n] name: phase"); `positions`/`total` number them within a larger session."""
    from .warm import WarmError, WarmServer, run_plans

    if not plans:
        return []
    n = total or len(plans)
    pos = positions or list(range(1, len(plans) + 1))
    records: dict[int, dict] = {}
    ext_dir = op_cache_dir(opts, device_kind)
    ops = list(dict.fromkeys(op for plan in plans for op in needed_ops(plan, accelerator)))
    progress = Progress(enabled=not opts.quiet, rich=False)
    progress.label = f"{len(plans)} config{'s' if len(plans) != 1 else ''}"
    build = build_ops(ops, ext_dir, accelerator, opts.build_timeout, progress, progress.note, cleanup=cleanup)
    if build["status"] == "build-timeout":  # the build, not the configs, was slow: nothing was run
        base = {"accelerator": accelerator, "world_size": opts.ranks, "timeout_s": opts.timeout,
                "versions": {"deepspeed": cache.package_version("deepspeed"), "torch": cache.package_version("torch")}}
        return [{**base, "status": "build-timeout", "phase": build["phase"], "wall_s": build["wall_s"],
                 "build": build} for _ in plans]
    run_opts = RunOptions(accelerator=accelerator, world_size=opts.gpus, launcher=opts.launcher or "torchrun",
                          timeout=opts.timeout, extensions_dir=ext_dir, build_timeout=opts.build_timeout,
                          note=progress.note, cleanup=cleanup)

    def phase(i: int, text: str) -> None:
        text = {"import": "starting", "model": "building the model", "initialize": "deepspeed.initialize",
                "inspect": "inspecting the engine"}.get(text, text)
        if text not in ("done", "failed"):
            say(f"[{pos[i]}/{n}] {names[i]}: {text}")

    def ended(i: int, rec: dict) -> None:
        say(f"[{pos[i]}/{n}] {names[i]}: {rec.get('status', 'crash')} in {rec.get('wall_s', 0):.1f} s")

    if opts.gpus == 1:
        hf_runs = sum(plan.hf is not None for plan in plans)
        # transformers and accelerate in the server cost its start ~8 s on an H200 and save ~2.5 s in each
        # config the real HF Trainer runs: worth it from a few of them on (docs/verify-results.md)
        server = WarmServer(accelerator, ext_dir, cleanup=run_opts.cleanup, preload_hf=hf_runs >= HF_PRELOAD_FROM)
        try:
            say(f"starting the warm runner (importing torch and deepspeed once for {len(plans)} "
                f"config{'s' if len(plans) != 1 else ''})")
            info = server.start()
            say(f"warm runner ready in {info.get('import_s', 0):.1f} s")
            got = run_plans(server, plans, run_opts, jobs=jobs, progress=phase, ended=ended)
            records.update(enumerate(got))
        except WarmError as e:  # fall back to a process per config, as a single verify runs
            say(f"{e}; running each config in a process of its own")
        finally:
            server.close()
    for k, plan in enumerate(plans):  # several ranks (the launcher path), or the warm runner did not start
        if k in records:
            continue
        say(f"[{pos[k]}/{n}] {names[k]}: starting")
        one = RunOptions(**{**run_opts.__dict__, "progress": lambda t, k=k: phase(k, t)})
        rec = run_plan(plan, one)
        ended(k, rec)
        records[k] = rec
    for rec in records.values():
        rec.setdefault("build", build)
    return [records[k] for k in range(len(plans))]


def _name(rep: RunReport) -> str:
    """A run's name in progress lines: its file, and which text (--compare-fix runs the fixed one too)."""
    return rep.path if rep.label == "original" else f"{rep.path} ({rep.label})"


def _findings_of_several(pipeline: Pipeline, reports: list[RunReport]) -> Outcome:
    from ..project.settings import ConfigError

    run = Run(results=[Result(r.path, r.doc, r.static + r.verify) for r in reports], paths=[r.path for r in reports])
    try:
        diagnostics, summary = pipeline.findings(run)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    kept = {id(d) for d in diagnostics}
    for rep in reports:
        own = {id(d) for d in rep.verify}
        rep.verify = [d for d in rep.verify if id(d) in kept]
        rep.static = [d for d in diagnostics if d.file == rep.path and id(d) not in own]
    verdicts = [verdict(r) for r in reports]
    summary["verify"] = {v: verdicts.count(v) for v in dict.fromkeys(verdicts)}
    return Outcome(reports, diagnostics, summary, pipeline.documents(run),
                   EXIT_FINDINGS if pipeline.failing(diagnostics) else EXIT_OK)


def _emit_many(reports, diagnostics, documents, summary, opts: VerifyOptions) -> None:
    from .report import render_many_json, render_many_sarif, render_many_text

    _write_formats(opts, {"json": lambda: render_many_json(reports, diagnostics, summary),
                          "sarif": lambda: render_many_sarif(reports, diagnostics, documents, summary),
                          "text": lambda: render_many_text(reports, diagnostics, documents, summary,
                                                           quiet=opts.quiet)})
