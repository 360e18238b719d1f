"""Rendering `zerolint estimate`: a plain table (pipes, CI, tests), a rich table on a terminal, JSON, and the
side-by-side `--compare` view. Imported only by the `estimate` command."""

from __future__ import annotations

import json
from typing import Any

from ..estimate.memory import Component, Estimate, GiB

BAR_WIDTH = 24


def _g(n: int | float) -> str:
    return f"{n / GiB:.2f}"


def _bar(nbytes: int, scale: int, width: int = BAR_WIDTH, full: str = "#", empty: str = ".") -> str:
    if scale <= 0:
        return ""
    n = nbytes / scale * width
    filled = int(round(n))
    if nbytes > 0 and filled == 0:
        return "|" + empty * (width - 1)
    if filled > width:
        return full * width + "+"
    return full * filled + empty * (width - filled)


def _rows(est: Estimate, where: str) -> tuple[str, list[Component], list[Component], list[Component]]:
    peak = est.gpu_peak_moment if where == "gpu" else est.host_peak_moment
    rows = [c for c in est.components if c.where == where and not c.margin]
    at = [c for c in rows if peak in c.moments and c.bytes > 0]
    off = [c for c in rows if peak not in c.moments and c.bytes > 0]
    margins = [c for c in est.components if c.where == where and c.margin]
    return peak, at, off, margins


def _verdict_text(need: int, have: int | None) -> str:
    if have is None:
        return ""
    pct = need / have * 100
    if need > have:
        return f"does NOT fit in {_g(have)} GiB ({pct:.0f}%)"
    if need > 0.9 * have:
        return f"fits in {_g(have)} GiB but within 10% of it ({pct:.0f}%)"
    return f"fits in {_g(have)} GiB ({pct:.0f}%)"


def header(est: Estimate) -> list[str]:
    m, w = est.model, est.workload
    lines = [f"zerolint estimate  {est.config_path}"]
    ll = f", largest layer {m.largest_layer:,}" if m.largest_layer else ""
    lines.append(f"  model  {m.name}: P = {m.params:,}{ll} (from {m.source})")
    lines.append(f"  job    {est.cluster.describe()}; {est.plan.describe()}")
    mb = est.micro_batch
    if est.activations_known:
        lines.append(f"  batch  micro-batch {mb} x seq {w.seq_len}"
                     + (", activation checkpointing" if w.checkpointing else "") + " (activations included)")
    else:
        lines.append("  batch  activations not included (give --seq-len and a model shape)")
    return lines


def render_text(est: Estimate, explain: bool = False) -> str:
    out = header(est)
    out += [""] + _section(est, "gpu", explain)
    out += [""] + _section(est, "host", explain)
    if est.per_node_nvme_bytes:
        out.append(f"  NVMe per node: {_g(est.per_node_nvme_bytes)} GiB")
    out += _explain_peak(est)
    if est.suggestions:
        out += ["", "What would make it fit (each recomputed):"]
        for s in est.suggestions:
            mark = "fits " if s.fits else "still"
            out.append(f"  {mark}  {s.title}: {_g(s.per_gpu_bytes)} GiB/GPU, {_g(s.per_node_host_bytes)} GiB host/node")
            out.append(f"         {json.dumps(s.change)}")
    if est.assumptions:
        out += ["", "Assumptions:"] + [f"  - {a}" for a in est.assumptions]
    out += ["", "Not covered (the margin is for these): " + "; ".join(est.not_covered) + "."]
    return "\n".join(out) + "\n"


def _section(est: Estimate, where: str, explain: bool) -> list[str]:
    peak, at, off, margins = _rows(est, where)
    if where == "gpu":
        covered, total, cap = est.per_gpu_covered_bytes, est.per_gpu_bytes, est.gpu_memory
        title = "Per GPU"
        unit = ""
    else:
        g = est.cluster.gpus_per_node
        covered, total, cap = est.per_node_host_covered_bytes, est.per_node_host_bytes, est.host_memory
        title = f"Per node host ({g} process{'es' if g != 1 else ''}; rows are per process)"
        unit = ""
    scale = cap if cap else total
    per_proc = 1 if where == "gpu" else est.cluster.gpus_per_node
    cap_txt = f"of {_g(cap)} GiB" if cap else "of the total"
    lines = [f"{title}, peak at \"{peak}\"", f"  {'component':<44} {'GiB':>8}  bar ({cap_txt}{unit})"]
    for c in sorted(at, key=lambda c: -c.bytes):
        lines.append(f"  {c.name:<44} {_g(c.bytes):>8}  {_bar(c.bytes * per_proc, scale)}")
        if explain:
            lines.append(f"      = {c.formula}")
    if off and explain:
        for c in sorted(off, key=lambda c: -c.bytes):
            lines.append(f"  {'(not at the peak) ' + c.name:<44} {_g(c.bytes):>8}")
            lines.append(f"      = {c.formula}")
    elif off:
        lines.append("  not at the peak: " + ", ".join(f"{c.name} {_g(c.bytes)}" for c in
                                                       sorted(off, key=lambda c: -c.bytes)))
    lines.append(f"  {'covered' + (' per node' if where == 'host' else ''):<44} {_g(covered):>8}")
    for c in margins:
        lines.append(f"  {'+ margin: ' + c.name:<44} {_g(c.bytes * per_proc):>8}  {_bar(c.bytes * per_proc, scale)}")
        if explain:
            lines.append(f"      = {c.formula}")
    verdict = _verdict_text(total, cap)
    lines.append(f"  {'= total' + (' per GPU' if where == 'gpu' else ' per node'):<44} {_g(total):>8}  {verdict}")
    return lines


def _explain_peak(est: Estimate) -> list[str]:
    top = est.top("gpu", 3)
    if not top or not est.per_gpu_covered_bytes:
        return []
    parts = [f"{c.name} {_g(c.bytes)} GiB ({c.bytes / est.per_gpu_covered_bytes:.0%})" for c in top]
    return ["", "Largest per-GPU terms: " + "; ".join(parts) + "."]


# -- compare --------------------------------------------------------------------------------------------------------

def _gpu_at_peak(est: Estimate) -> dict[str, tuple[str, int]]:
    peak = est.gpu_peak_moment
    out: dict[str, tuple[str, int]] = {}
    for c in est.components:
        if c.margin or c.where != "gpu" or peak not in c.moments:
            continue
        name, b = out.get(c.key, (c.name, 0))
        out[c.key] = (name, b + c.bytes)
    return out


def _where(est: Estimate, key: str) -> str:
    places = {c.where for c in est.components if c.key == key and c.bytes > 0}
    return "/".join(sorted(places))


def render_compare_text(a: Estimate, b: Estimate) -> str:
    ga, gb = _gpu_at_peak(a), _gpu_at_peak(b)
    keys = list(dict.fromkeys([*ga, *gb]))
    cap = a.gpu_memory or b.gpu_memory
    na, nb = a.config_path.rsplit("/", 1)[-1], b.config_path.rsplit("/", 1)[-1]
    out = ["zerolint estimate --compare  (per GPU, each at its own peak; GiB)",
           f"  model  {a.model.name}: P = {a.model.params:,}; {a.cluster.describe()}",
           f"  A  {na}: {a.plan.describe()} (peak at \"{a.gpu_peak_moment}\")",
           f"  B  {nb}: {b.plan.describe()} (peak at \"{b.gpu_peak_moment}\")",
           "",
           f"  {'component':<40} {'A':>8} {'B':>8} {'B - A':>8}"]
    diffs = []
    for k in keys:
        # k is a key of ga or of gb: one of the two is there
        name = (ga.get(k) or gb.get(k))[0]  # type: ignore[index]
        va, vb = ga.get(k, ("", 0))[1], gb.get(k, ("", 0))[1]
        if va == 0 and vb == 0:
            continue
        ta = _g(va) if k in ga else ("host" if "host" in _where(a, k) else "-")
        tb = _g(vb) if k in gb else ("host" if "host" in _where(b, k) else "-")
        out.append(f"  {name:<40} {ta:>8} {tb:>8} {_g(vb - va):>8}")
        diffs.append((vb - va, name, k))
    out.append(f"  {'covered':<40} {_g(a.per_gpu_covered_bytes):>8} {_g(b.per_gpu_covered_bytes):>8} "
               f"{_g(b.per_gpu_covered_bytes - a.per_gpu_covered_bytes):>8}")
    out.append(f"  {'+ margin':<40} {_g(a.per_gpu_margin_bytes):>8} {_g(b.per_gpu_margin_bytes):>8} "
               f"{_g(b.per_gpu_margin_bytes - a.per_gpu_margin_bytes):>8}")
    out.append(f"  {'= per GPU':<40} {_g(a.per_gpu_bytes):>8} {_g(b.per_gpu_bytes):>8} "
               f"{_g(b.per_gpu_bytes - a.per_gpu_bytes):>8}")
    out.append(f"  {'= host per node':<40} {_g(a.per_node_host_bytes):>8} {_g(b.per_node_host_bytes):>8} "
               f"{_g(b.per_node_host_bytes - a.per_node_host_bytes):>8}")
    out.append("  (- = not on the GPU at that config's peak; host = kept in host memory)")
    if cap:
        out.append(f"  on a {_g(cap)} GiB GPU: A {_fit_word(a)}, B {_fit_word(b)}")
    out += ["", _why(a, b, diffs, na, nb)]
    return "\n".join(out) + "\n"


def _fit_word(e: Estimate) -> str:
    return {"fits": "fits", "tight": "fits (within 10%)", "does-not-fit": "does NOT fit", None: "?"}[e.verdict]


def _why(a: Estimate, b: Estimate, diffs: list[tuple[int, str, str]], na: str, nb: str) -> str:
    delta = b.per_gpu_bytes - a.per_gpu_bytes
    if delta == 0:
        return "Why: both need the same GPU memory."
    winner, small, big = (b, nb, na) if delta < 0 else (a, na, nb)
    # what the smaller config does not hold on the GPU at its peak: largest savings first
    savings = sorted(((-d if delta < 0 else d), name, key) for d, name, key in diffs)
    savings = [x for x in reversed(savings) if x[0] > 0][:4]
    at_peak = _gpu_at_peak(winner)
    parts = []
    for saved, name, key in savings:
        where = _where(winner, key)
        if "host" in where:
            how = "on the host"
        elif "nvme" in where:
            how = "on NVMe"
        elif key not in at_peak and where:
            how = f"not alive at its peak \"{winner.gpu_peak_moment}\""
        elif not where:
            how = "not allocated"
        else:
            how = "partitioned or smaller"
        parts.append(f"{name} -{_g(saved)} GiB ({how})")
    return (f"Why: {small} needs {_g(abs(delta))} GiB less per GPU than {big}: " + "; ".join(parts) + ".")


# -- json -------------------------------------------------------------------------------------------------------------

def render_json(est: Estimate, other: Estimate | None = None) -> str:
    if other is None:
        return json.dumps(est.to_dict(), indent=2) + "\n"
    data: dict[str, Any] = {"a": est.to_dict(), "b": other.to_dict(),
                            "difference": {"per_gpu_bytes": other.per_gpu_bytes - est.per_gpu_bytes,
                                           "per_node_host_bytes": other.per_node_host_bytes - est.per_node_host_bytes}}
    return json.dumps(data, indent=2) + "\n"


# -- rich (terminal) ------------------------------------------------------------------------------------------------

def print_rich(est: Estimate, other: Estimate | None = None, explain: bool = False) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    if other is not None:
        console.print(render_compare_text(est, other), highlight=False)
        return
    for line in header(est):
        console.print(line, highlight=False)
    for where in ("gpu", "host"):
        peak, at, off, margins = _rows(est, where)
        per_proc = 1 if where == "gpu" else est.cluster.gpus_per_node
        cap = est.gpu_memory if where == "gpu" else est.host_memory
        total = est.per_gpu_bytes if where == "gpu" else est.per_node_host_bytes
        covered = est.per_gpu_covered_bytes if where == "gpu" else est.per_node_host_covered_bytes
        scale = cap or total
        title = "Per GPU" if where == "gpu" else f"Per node host ({per_proc} process(es); rows per process)"
        t = Table(title=f"{title} - peak at \"{peak}\"", title_justify="left", show_edge=False)
        t.add_column("component")
        t.add_column("GiB", justify="right")
        t.add_column(f"of {_g(cap)} GiB" if cap else "of the total")
        if explain:
            t.add_column("formula", overflow="fold")
        for c in sorted(at, key=lambda c: -c.bytes):
            bar = Text(_bar(c.bytes * per_proc, scale, 30, "█", "·"), style="cyan")
            row: list[str | Text] = [c.name, _g(c.bytes), bar]
            t.add_row(*row, *([c.formula] if explain else []))
        for c in off:
            t.add_row(Text(c.name + " (not at peak)", style="dim"), Text(_g(c.bytes), style="dim"), "",
                      *([c.formula] if explain else []))
        t.add_row(Text("covered" + (" per node" if where == "host" else ""), style="bold"), _g(covered), "",
                  *([""] if explain else []))
        for c in margins:
            t.add_row(Text("+ " + c.name, style="yellow"), _g(c.bytes * per_proc),
                      Text(_bar(c.bytes * per_proc, scale, 30, "█", "·"), style="yellow"),
                      *([c.formula] if explain else []))
        verdict = _verdict_text(total, cap)
        style = "red bold" if cap and total > cap else "yellow" if cap and total > 0.9 * cap else "green"
        t.add_row(Text("= total" + (" per node" if where == "host" else " per GPU"), style="bold"),
                  Text(_g(total), style="bold"), Text(verdict, style=style),
                  *([""] if explain else []))
        console.print()
        console.print(t)
    rest = render_text(est).split("\n")
    start = next((i for i, line in enumerate(rest) if line.startswith("Largest per-GPU terms")), len(rest))
    console.print("\n".join(rest[start:]), highlight=False)


# -- the command ----------------------------------------------------------------------------------------------------

class UsageError(Exception):
    """Bad input to `zerolint estimate` (exit 2)."""


def load_estimate(path: str, model, cluster, workload, *, gpu_memory=None, host_memory=None, zero_init=None,
                  target: str = "auto", deepspeed_version: str | None = None) -> Estimate:
    """Read a config file and estimate it (what `zerolint estimate` does for each file)."""
    import sys

    from ..base.fsio import Limits, UnreadableFile, read_bytes
    from ..estimate.memory import EstimateError, estimate_view
    from ..model.document import parse_bytes
    from ..model.view import Settings, View

    try:
        data = sys.stdin.buffer.read() if path == "-" else read_bytes(path, Limits())
    except UnreadableFile as e:
        raise UsageError(str(e)) from None
    doc = parse_bytes(data, path)
    if doc.root is None:
        raise UsageError(f"{path}: cannot be parsed as a config (run `zerolint check {path}`)")
    settings = Settings(target=target, deepspeed_version=deepspeed_version, world_size=cluster.world)
    try:
        return estimate_view(View(doc, settings), model, cluster, workload, gpu_memory, host_memory, zero_init,
                             config_path=path)
    except EstimateError as e:
        raise UsageError(f"{path}: {e}") from None


def run(config: str, compare: str | None, *, model, cluster, workload, gpu_memory=None, host_memory=None,
        zero_init=None, target="auto", deepspeed_version=None, fmt="text", explain=False, color=True) -> int:
    """Print the estimate (or the comparison); return the exit code: 1 when the first config does not fit."""
    import os
    import sys

    kw = dict(gpu_memory=gpu_memory, host_memory=host_memory, zero_init=zero_init, target=target,
              deepspeed_version=deepspeed_version)
    a = load_estimate(config, model, cluster, workload, **kw)
    b = load_estimate(compare, model, cluster, workload, **kw) if compare else None
    if fmt == "json":
        sys.stdout.write(render_json(a, b))
    elif color and sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        print_rich(a, b, explain=explain)
    else:
        sys.stdout.write(render_compare_text(a, b) if b is not None else render_text(a, explain=explain))
    return 1 if a.verdict == "does-not-fit" else 0
