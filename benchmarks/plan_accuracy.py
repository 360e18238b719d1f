#!/usr/bin/env python3
"""`zerolint plan` against what its candidates did on a GPU (benchmarks/plan_gpu_probe.py's JSON): per model, the
step-time model's ranking against the measured one (Spearman), whether the pick was within 10 % of the fastest
measured candidate, and per case the estimate against the measured peaks.

    python benchmarks/plan_accuracy.py docs/data/plan-gpu-h200-2026-12-02.json [--markdown]

The model figures are recomputed with this checkout's plan/steptime.py and estimate (not the ones the probe
recorded when it ran), so a change of the model is judged on the same measurements; the recorded figures are shown
beside them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from zerolint.estimate.memory import GiB  # noqa: E402
from zerolint.estimate.modelspec import load_hf_config  # noqa: E402
from zerolint.plan.candidates import Candidate  # noqa: E402
from zerolint.plan.hardware import Hardware, preset  # noqa: E402
from zerolint.plan.job import Job  # noqa: E402
from zerolint.plan.search import score  # noqa: E402


def ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1  # ties share their mean rank
        i = j + 1
    return out


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    var = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return cov / var if var else 1.0


def candidate_of(case: dict) -> Candidate:
    z = case["config"]["zero_optimization"]
    return Candidate(stage=z["stage"], offload_optimizer=z.get("offload_optimizer", {}).get("device", "none"),
                     offload_param=z.get("offload_param", {}).get("device", "none"),
                     micro_batch=case["micro_batch"], grad_accum=case["grad_accum"],
                     checkpointing=case["checkpointing"])


def rescore(case: dict, host_memory: int):
    job = Job(model=load_hf_config(case["model_config_local"]), global_batch=case["micro_batch"] * case["grad_accum"],
              seq_len=case["seq_len"], lora_rank=case["lora_rank"], lr=1e-4)
    return score(candidate_of(case), job, Hardware(host_memory=host_memory, **preset("h200")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    doc = json.loads(Path(a.data).read_text())
    host = doc.get("host_memory", 120 * GiB) if isinstance(doc.get("host_memory"), int) else 120 * GiB
    by_model: dict[str, list[dict]] = {}
    for c in doc["cases"]:
        c["model_config_local"] = str(ROOT / "fixtures" / "models" / Path(c["model_config"]).name)
        s = rescore(c, host)
        c["now_step_s"], c["now_est"], c["now_cov"] = s.time.seconds, s.per_gpu_bytes, s.estimate.per_gpu_covered_bytes
        c["measured_step_s"] = statistics.median(c["step_s"])
        by_model.setdefault(c["model"], []).append(c)
    lines = ["| case | config | measured step s | model s (now) | model s (at the run) | estimate + margin GiB | "
             "peak reserved GiB | covered GiB | peak allocated GiB |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    summary = ["| model | candidates | pick measured / fastest measured | Spearman (now) | Spearman (at the run) |",
               "| --- | ---: | ---: | ---: | ---: |"]
    for name, cases in by_model.items():
        meas = [c["measured_step_s"] for c in cases]
        pick = min(cases, key=lambda c: (c["rank_in_plan"]))
        now_pick = min(cases, key=lambda c: c["now_step_s"])
        summary.append(f"| {name} | {len(cases)} | {pick['measured_step_s'] / min(meas):.2f} (now: "
                       f"{now_pick['measured_step_s'] / min(meas):.2f}) | "
                       f"{spearman([c['now_step_s'] for c in cases], meas):.2f} | "
                       f"{spearman([c['model_step_seconds'] for c in cases], meas):.2f} |")
        for c in cases:
            lines.append(f"| {c['name']} | {c['summary']} | {c['measured_step_s']:.3f} | {c['now_step_s']:.3f} | "
                         f"{c['model_step_seconds']:.3f} | {c['now_est'] / GiB:.1f} | "
                         f"{c['peak_reserved_bytes'] / GiB:.1f} | {c['now_cov'] / GiB:.1f} | "
                         f"{c['peak_allocated_bytes'] / GiB:.1f} |")
    within = [c for cs in by_model.values() for c in cs
              if abs(c["now_est"] / c["peak_reserved_bytes"] - 1) <= 0.10]
    covered = [c for cs in by_model.values() for c in cs if c["now_est"] >= c["peak_reserved_bytes"]]
    n = sum(len(cs) for cs in by_model.values())
    tail = [f"Estimate + margin within 10 % of the measured peak reserved: {len(within)} of {n}; at or above it "
            f"(the fit is safe): {len(covered)} of {n}."]
    print("\n".join(summary + [""] + lines + [""] + tail))
    return 0


if __name__ == "__main__":
    sys.exit(main())
