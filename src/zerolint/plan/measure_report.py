"""`zerolint plan --verify`'s part of the output: each measured candidate beside its estimate and modelled step
time, the measured pick, the ranking's agreement (text), and the same figures under "verify" (`--format json`)."""

from __future__ import annotations

from ..estimate.memory import gib
from .measure import CUDA_CONTEXT, Measured, Verification


def _gib(n: int | None) -> str:
    return "-" if n is None else f"{gib(n):.1f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.0%}"


def row(m: Measured, rank: int) -> dict:
    s = m.scored
    return {
        "rank_in_plan": rank,
        "config": s.candidate.to_dict(),
        "summary": s.candidate.describe(),
        "status": m.status,
        "fits": m.fits,
        "verdict": m.verdict,
        "measured": {"step_seconds": m.step_seconds, "step_s": (m.record.get("timings") or {}).get("step_s"),
                     "peak_allocated_bytes": m.peak_allocated, "peak_reserved_bytes": m.peak_reserved,
                     "host_rss_peak_bytes": m.host_rss,
                     "params_built": (m.record.get("facts") or {}).get("params_total"),
                     "params_trained": (m.record.get("facts") or {}).get("params_trained")},
        "estimate": {"per_gpu_bytes": s.per_gpu_bytes, "per_gpu_covered_bytes": s.estimate.per_gpu_covered_bytes,
                     "per_node_host_bytes": s.per_node_host_bytes, "step_seconds": round(s.time.seconds, 6),
                     "allocated_vs_covered": None if m.estimate_error is None else round(m.estimate_error, 4)},
        "wall_s": m.record.get("wall_s"),
    }


def to_dict(v: Verification, ranked: list) -> dict:
    pick = v.pick
    rank = {id(s): i + 1 for i, s in enumerate(ranked)}
    return {
        "device": v.device,
        "accelerator": v.accelerator,
        "candidates": [row(m, rank.get(id(m.scored), 0)) for m in v.measured],
        "pick": None if pick is None else row(pick, rank.get(id(pick.scored), 0)),
        "plans_pick_vs_fastest": None if v.pick_ratio() is None else round(v.pick_ratio() or 0.0, 4),
        "spearman": None if v.spearman() is None else round(v.spearman() or 0.0, 4),
        "estimate_errors": [m.scored.candidate.describe() for m in v.measured if m.status == "oom"],
        "above_estimate": [m.scored.candidate.describe() for m in v.measured if m.above_estimate],
    }


def render_text(v: Verification, ranked: list) -> str:
    rank = {id(s): i + 1 for i, s in enumerate(ranked)}
    cuda = v.accelerator == "cuda"
    lines = ["", f"Measured on {v.device.split(':', 1)[-1]} ({len(v.measured)} candidates, the median of the timed "
             "steps after a warm-up step):",
             f" {'#':>2}  {'config':<56} {'need GiB':>8} {'alloc':>6} {'reserved':>8} {'vs est':>7} "
             f"{'model s':>8} {'step s':>8}  verdict"]
    for m in v.measured:
        step = "-" if m.step_seconds is None else f"{m.step_seconds:.3g}"
        lines.append(f" {rank.get(id(m.scored), '-')!s:>2}  {m.scored.candidate.describe():<56} "
                     f"{gib(m.scored.per_gpu_bytes):8.1f} {_gib(m.peak_allocated):>6} {_gib(m.peak_reserved):>8} "
                     f"{_pct(m.estimate_error):>7} {m.scored.time.seconds:8.3g} {step:>8}  {m.verdict}")
    pick = v.pick
    lines.append("")
    if pick is None:
        lines.append("No measured candidate fits: nothing is picked.")
    else:
        lines.append(f"Pick (measured): {pick.scored.candidate.describe()}, {pick.step_seconds:.3g} s per step"
                     + (f", {_gib(pick.peak_reserved)} GiB reserved" if cuda else ""))
        ratio = v.pick_ratio()
        if ratio is not None:
            lines.append(f"The plan's own pick measured {ratio:.2f}x the fastest"
                         + (" (it was the fastest)." if ratio <= 1.0 else "."))
    rho = v.spearman()
    if rho is not None:
        lines.append(f"Step-time model against the measurements: Spearman {rho:.2f} over "
                     f"{sum(m.step_seconds is not None for m in v.measured)} candidates.")
    errors = [m for m in v.measured if m.status == "oom"]
    for m in errors:
        lines.append(f"Estimate error: {m.scored.candidate.describe()} ran out of memory although the estimate "
                     f"gave {gib(m.scored.per_gpu_bytes):.1f} GiB with its margin.")
    for m in v.measured:
        if m.above_estimate:
            lines.append(f"Above the estimate: {m.scored.candidate.describe()} reserved "
                         f"{gib((m.peak_reserved or 0) + CUDA_CONTEXT):.1f} GiB with the CUDA context, the estimate "
                         f"with its margin {gib(m.scored.per_gpu_bytes):.1f} GiB: a plan near the limit may not fit.")
    if not cuda:
        lines.append("On the CPU: step times only; no GPU memory was measured.")
    lines.append("need GiB: the estimate with its margin (what the fit is judged on); vs est: the measured peak "
                 "allocated against the estimate before its margin (docs/estimate-accuracy.md).")
    return "\n".join(lines) + "\n"
