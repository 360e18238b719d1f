"""The body of `zerolint plan`, free of click: build the job and the hardware, search, print, write the pick and
check what was written (through the same pipeline as `zerolint check`). Returns the exit code: 0 a pick (and, with
--from, the user's config fits), 1 nothing fits (or the user's config does not), 2 bad input (PlanError)."""

from __future__ import annotations

import sys
from dataclasses import replace

from ..base.console import echo
from ..estimate.memory import Plan
from .candidates import Candidate, from_plan
from .hardware import Hardware
from .job import Job, PlanError
from .measure import MeasureOptions
from .report import render_json, render_text
from .search import plan
from .write import config_text


def start_candidate(path: str, job: Job, hw: Hardware) -> tuple[Candidate, Plan, Job]:
    """`--from`: the candidate the user's config is, the estimate's reading of it, and the job with its batch
    where the flags leave it open."""
    from ..base.fsio import Limits, UnreadableFile, read_bytes
    from ..estimate.memory import EstimateError, plan_from_view
    from ..model.document import parse_bytes
    from ..model.view import Settings, View

    try:
        data = read_bytes(path, Limits())
    except UnreadableFile as e:
        raise PlanError(str(e)) from None
    doc = parse_bytes(data, path)
    if doc.root is None:
        raise PlanError(f"--from {path}: cannot be parsed as a config (run `zerolint check {path}`)")
    view = View(doc, Settings(target=job.target, world_size=hw.world))
    try:
        p = plan_from_view(view, job.model)
    except EstimateError as e:
        raise PlanError(f"--from {path}: {e}") from None
    micro = p.micro_batch or job.micro_batch
    gas_node = view.node("/gradient_accumulation_steps")
    gas = view.number(gas_node) if gas_node is not None else None
    accum = int(gas) if isinstance(gas, (int, float)) and not isinstance(gas, bool) and gas >= 1 else None
    if micro is None:
        if job.global_batch is None:
            raise PlanError(f"--from {path}: its micro batch is not a number (\"auto\"?): give --micro-batch or "
                            "--global-batch")
        micro = 1
    if job.global_batch is None:
        job = replace(job, global_batch=micro * (accum or 1) * hw.world, micro_batch=None)
    assert job.global_batch is not None  # given, or set just above
    per_gpu = job.global_batch // hw.world
    if per_gpu % micro:
        raise PlanError(f"--from {path}: its micro batch {micro} does not divide the {per_gpu} sequences per GPU")
    return from_plan(p, micro, per_gpu // micro, job.checkpointing == "always"), replace(p, micro_batch=micro), job


def run(job: Job, hw: Hardware, *, top: int = 5, fmt: str = "text", write: str | None = None,
        start_from: str | None = None, verify: MeasureOptions | None = None) -> int:
    """`verify`: run the top candidates here (plan --verify); the pick is then the fastest measured one that fits,
    and that is what `write` writes."""
    start = start_plan = None
    if start_from is not None:
        start, start_plan, job = start_candidate(start_from, job, hw)
    result = plan(job, hw, start, start_plan)
    measured = None
    if verify is not None:
        from .measure import measure

        say = (lambda text: None) if verify.quiet else (lambda text: echo(f"zerolint plan: {text}", err=True))
        measured = measure(result, job, hw, verify, say)
    echo(_render(result, top, fmt, measured), nl=False)
    pick = result.best.candidate if result.best is not None else None
    if measured is not None:
        pick = measured.pick.scored.candidate if measured.pick is not None else None
    if write is not None and pick is not None:
        _write(write, pick, job, hw)
    elif write is not None:
        echo(f"zerolint: {'no measured candidate fits' if measured is not None else 'nothing fits'}: {write} not "
             "written", err=True)
    if pick is None or (result.start is not None and not result.start.fits):
        return 1
    return 0


def _render(result, top: int, fmt: str, measured) -> str:
    if fmt == "json":
        from .measure_report import to_dict as measured_dict

        return render_json(result, top, None if measured is None else {"verify": measured_dict(measured,
                                                                                                result.ranked)})
    text = render_text(result, top)
    if measured is not None:
        from .measure_report import render_text as measured_text

        text += measured_text(measured, result.ranked)
    return text


def _write(path: str, c: Candidate, job: Job, hw: Hardware) -> None:
    """Write the pick and lint it as `zerolint check --target T --world-size N` would: the result goes to stderr
    (stdout holds the report), every finding with its code."""
    from ..base.fsio import OutputError, write_output
    from ..model.view import Settings
    from ..pipeline import lint_bytes

    text = config_text(c, job, hw.gpus_per_node)
    try:
        write_output(path, text)
    except OutputError as e:
        raise PlanError(str(e)) from None
    res = lint_bytes(text.encode(), path, Settings(target=job.target, world_size=hw.world))
    shown = [d for d in res.diagnostics if d.severity.value != "info"]
    if not shown:
        echo(f"zerolint: wrote {path} ({job.target}); zerolint check: no errors or warnings", err=True)
        return
    echo(f"zerolint: wrote {path} ({job.target}); zerolint check reports:", err=True)
    for d in shown:
        echo(f"  {d.line}:{d.column}: {d.severity.value} {d.code} {d.message}", err=True)


def fail(message: str) -> None:
    echo(f"zerolint: error: {message}", err=True)
    sys.exit(2)
