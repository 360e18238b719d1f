"""`zerolint plan`'s output: the table of the top candidates (text), or every figure of them (`--format json`)."""

from __future__ import annotations

import json

from ..estimate.memory import gib
from .search import Result, Scored
from .write import config_for, what_to_pass

JSON_VERSION = 1


def _row(s: Scored, job) -> dict:
    c = s.candidate
    return {
        "config": c.to_dict(),
        "summary": c.describe(),
        "fits": s.fits,
        "per_gpu_bytes": s.per_gpu_bytes,
        "per_node_host_bytes": s.per_node_host_bytes,
        "per_node_nvme_bytes": s.estimate.per_node_nvme_bytes,
        "step_seconds": round(s.time.seconds, 6),
        "tokens_per_second": round(s.tokens_per_s(job), 1),
        "terms": [t.to_dict() for t in s.time.terms],
        "why": s.why,
    }


def to_dict(r: Result, top: int) -> dict:
    job, hw = r.job, r.hardware
    out: dict = {
        "zerolint_plan": JSON_VERSION,
        "job": {"model": job.model.name, "params": job.model.params, "trainable_params": job.trainable_params(),
                "seq_len": job.seq_len, "global_batch": job.global_batch, "micro_batch": job.micro_batch,
                "precision": job.precision, "lora_rank": job.lora_rank, "checkpointing": job.checkpointing,
                "target": job.target},
        "hardware": {"gpus_per_node": hw.gpus_per_node, "nodes": hw.nodes, "gpu": hw.gpu or None,
                     "gpu_memory": hw.gpu_memory, "host_memory": hw.host_memory, "nvme": hw.nvme,
                     "tflops": hw.tflops, "mfu": hw.mfu, "intra_gbps": hw.intra_gbps,
                     "network_gbps": hw.network_gbps, "pcie_gbps": hw.pcie_gbps,
                     "cpu_adam_params_per_s": hw.cpu_adam_params_per_s, "nvme_gbps": hw.nvme_gbps},
        "considered": r.considered,
        "fitting": len(r.ranked),
        "candidates": [_row(s, job) for s in r.ranked[:top]],
        "rejected": [_row(s, job) for s in r.rejected[:top]],
        "assumptions": hw.assumptions() + list(job.model.assumptions),
        "pick": None,
    }
    if r.best is not None:
        out["pick"] = {**_row(r.best, job), "written_config": config_for(r.best.candidate, job, hw.gpus_per_node),
                       "pass": what_to_pass(r.best.candidate, job)}
    if r.start is not None:
        near = r.nearest[0] if r.nearest else None
        out["from"] = {**_row(r.start, job), "smallest_change": None if near is None else {
            **_row(near, job), "changes": near.candidate.changes_from(r.start.candidate)}}
    return out


def render_json(r: Result, top: int, extra: dict | None = None) -> str:
    """`extra`: more top-level keys (plan --verify's "verify")."""
    return json.dumps({**to_dict(r, top), **(extra or {})}, indent=2) + "\n"


def _table(rows: list[tuple[int | str, Scored]], job) -> list[str]:
    head = f" {'#':>2}  {'config':<64} {'GPU GiB':>8} {'host GiB':>9} {'step s':>8} {'tokens/s':>10}  why"
    out = [head]
    for n, s in rows:
        out.append(f" {n!s:>2}  {s.candidate.describe():<64} {gib(s.per_gpu_bytes):8.1f} "
                   f"{gib(s.per_node_host_bytes):9.1f} {s.time.seconds:8.3g} {s.tokens_per_s(job):10,.0f}  {s.why}")
    return out


def render_text(r: Result, top: int) -> str:
    job, hw = r.job, r.hardware
    lines = [f"Plan for {job.describe()}", f"on {hw.describe()}",
             f"{r.considered} configs considered, {len(r.ranked)} fit (the estimate's margin included).", ""]
    if r.start is not None:
        lines += _from_lines(r)
    if r.ranked:
        lines += _table(list(enumerate(r.ranked[:top], 1)), job)
    else:
        lines.append("Nothing fits. The closest:")
        lines += _table([("-", s) for s in r.rejected[:top]], job)
    if r.ranked and r.rejected:
        lines += ["", "Closest that do not fit:"] + _table([("-", s) for s in r.rejected[:2]], job)[1:]
    best = r.best
    if best is not None:
        lines += ["", f"Pick: {best.candidate.describe()}", "Step time model (seconds per optimizer step):"]
        for t in best.time.terms:
            lines.append(f"  {t.name:<40} {t.seconds:9.4g}{'  (overlapped)' if t.overlapped else ''}  {t.formula}")
        lines.append(f"  {'step':<40} {best.time.seconds:9.4g}  max(compute, overlapped) + the rest")
        passes = what_to_pass(best.candidate, job)
        if passes:
            lines += ["With the config:"] + [f"  - {p}" for p in passes]
    lines += ["", "Assumptions:"] + [f"  - {a}" for a in hw.assumptions() + list(job.model.assumptions)]
    lines.append("  - memory: zerolint estimate's model and margin (docs/estimate.md); the step time ranks configs, "
                 "it is not a measurement")
    return "\n".join(lines) + "\n"


def _from_lines(r: Result) -> list[str]:
    s = r.start
    assert s is not None
    if s.fits:
        head = [f"Your config ({s.candidate.describe()}) fits: {gib(s.per_gpu_bytes):.1f} GiB per GPU, "
                f"{gib(s.per_node_host_bytes):.1f} GiB host per node, {s.time.seconds:.3g} s per step."]
        if r.best is not None and r.best.time.seconds < s.time.seconds * 0.95:
            head.append(f"Faster that fits: {r.best.candidate.describe()} ({r.best.time.seconds:.3g} s per step).")
        return head + [""]
    near = r.nearest[0] if r.nearest else None
    out = [f"Your config ({s.candidate.describe()}) {s.why}."]
    if near is None:
        out.append("No change among the candidates makes it fit.")
    else:
        out.append(f"Smallest change that fits: {'; '.join(near.candidate.changes_from(s.candidate))} "
                   f"({gib(near.per_gpu_bytes):.1f} GiB per GPU, {near.time.seconds:.3g} s per step).")
    return out + [""]
