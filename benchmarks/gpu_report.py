#!/usr/bin/env python3
"""Markdown tables from benchmarks/gpu_matrix.py results (results.jsonl files), for docs/verify-results.md.

    python benchmarks/gpu_report.py OUT1/results.jsonl [OUT2/results.jsonl ...]
"""

from __future__ import annotations

import json
import sys

GIB = 1024 ** 3


def gib(x) -> str:
    return "-" if x is None else f"{x / GIB:.2f}"


def load(paths):
    rows = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def short_opt(f: dict) -> str:
    o, i = f.get("optimizer_outer") or "-", f.get("optimizer_inner") or "-"
    o = o.replace("DeepSpeedZeroOptimizer_Stage3", "ZeRO3").replace("DeepSpeedZeroOptimizer", "ZeRO1/2")
    return o if i == o else f"{o} / {i}"


def group_ab(rows, group):
    print("\n| case | ranks | result | stage | precision (params) | optimizer | states on | params on | "
          "intent | peak alloc GiB | peak reserved GiB | host RSS GiB | init s | steps s | verdict s |")
    print("|" + " --- |" * 15)
    for r in rows:
        if r["group"] != group:
            continue
        for run in r.get("runs") or [{"status": "ERROR"}]:
            f, m, t = run.get("facts") or {}, run.get("memory") or {}, run.get("timings") or {}
            fail = run.get("failure") or {}
            res = run.get("status", "ERROR")
            if fail:
                res += f" at {fail.get('stage')}: `{fail.get('pointer')}` line {fail.get('line')}"
            intent = ", ".join(("ok " if c["ok"] else "FAIL ") + c["check"] for c in run.get("intent") or []) or "-"
            label = r["name"] + (f" ({run.get('label')})" if r.get("compare_fix") else "")
            steps = "/".join(f"{s:.2f}" for s in t.get("step_s") or [])
            print(f"| {label} | {r['gpus']} | {res} | {f.get('zero_stage', '-')} | "
                  f"{f.get('precision', '-')} ({f.get('param_dtype', '-')}) | {short_opt(f) if f else '-'} | "
                  f"{','.join(f.get('optimizer_state_devices') or []) or '-'} | "
                  f"{','.join(f.get('param_devices') or []) or '-'} | {intent} | "
                  f"{gib(m.get('peak_allocated_bytes'))} | "
                  f"{gib(m.get('peak_reserved_bytes'))} | {gib(m.get('host_rss_peak_bytes'))} | "
                  f"{t.get('initialize_s', '-')} | {steps or '-'} | {t.get('wall_s', '-')} |")


def group_c(rows):
    print("\n| model | params | largest layer | stage | offload | ranks | micro x seq | peak alloc GiB | "
          "peak reserved GiB | host RSS GiB | DS est. GPU GiB | DS est. CPU GiB | alloc / est. | result | s |")
    print("|" + " --- |" * 15)
    for r in sorted((r for r in rows if r["group"] == "c"), key=lambda r: (
            r["meta"]["size"], r["gpus"], r["meta"]["stage"], r["meta"]["opt_off"], r["meta"]["param_off"])):
        run = (r.get("runs") or [{}])[0]
        m, f, mem, est = run.get("model") or {}, run.get("facts") or {}, run.get("memory") or {}, \
            run.get("estimates") or {}
        ds = est.get("zero3" if r["meta"]["stage"] == 3 else "zero2") or {}
        off = "opt+param" if r["meta"]["param_off"] else "opt" if r["meta"]["opt_off"] else "none"
        ratio = (f"{mem['peak_allocated_bytes'] / ds['gpu_bytes']:.2f}" if mem.get("peak_allocated_bytes")
                 and ds.get("gpu_bytes") else "-")
        print(f"| {r['meta']['size']} | {m.get('params', 0) / 1e6:.1f} M | "
              f"{m.get('largest_layer_params', 0) / 1e6:.1f} M"
              f" | {r['meta']['stage']} | {off} | {r['gpus']} | {f.get('micro_batch', '-')} x {m.get('seq', '-')} | "
              f"{gib(mem.get('peak_allocated_bytes'))} | {gib(mem.get('peak_reserved_bytes'))} | "
              f"{gib(mem.get('host_rss_peak_bytes'))} | {gib(ds.get('gpu_bytes'))} | {gib(ds.get('cpu_bytes'))} | "
              f"{ratio} | {run.get('status', 'ERROR')} | {r['wall_s']}{'*' if r.get('concurrent') else ''} |")


def main() -> int:
    rows = load(sys.argv[1:])
    for g in ("warmup", "a", "b"):
        if any(r["group"] == g for r in rows):
            print(f"\n### group {g}")
            group_ab(rows, g)
    if any(r["group"] == "c" for r in rows):
        print("\n### group c")
        group_c(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
