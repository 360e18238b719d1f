#!/usr/bin/env python3
"""`zerolint plan` against what its candidates did on a GPU: per set of runs and model, whether the plan's pick was
the fastest measured candidate, the step-time model's ranking against the measured one (Spearman, as the plan ran
and as this checkout's model ranks the same runs), and per case the estimate against the measured peaks.

    python benchmarks/plan_measured.py [--markdown]            # every set in docs/data
    python benchmarks/plan_measured.py FILE...                  # these files

Two kinds of data file: docs/data/plan-verify-*.json (benchmarks/plan_verify_gpu.py: `zerolint plan --verify`'s JSON
per model) and docs/data/plan-gpu-*.json (the first set, 2026-12-02, from a probe that preceded `plan --verify`
and, unlike the HF Trainer and verify's child, kept the 16-bit logits alive across backward: D x V bytes per token
are added to the estimate for its cases). Also imported by benchmarks/estimate_accuracy.py for its real-shapes
section.
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from zerolint.estimate.memory import GiB, parse_bytes  # noqa: E402
from zerolint.estimate.modelspec import load_hf_config  # noqa: E402
from zerolint.plan.candidates import Candidate  # noqa: E402
from zerolint.plan.hardware import Hardware, preset  # noqa: E402
from zerolint.plan.job import Job  # noqa: E402
from zerolint.plan.measure import spearman  # noqa: E402
from zerolint.plan.search import score  # noqa: E402

DATA = ROOT / "docs" / "data"
MODELS = ROOT / "fixtures" / "models"


@dataclass
class Case:
    set: str
    model: str
    summary: str
    candidate: Candidate
    job: Job
    hw: Hardware
    rank_in_plan: int
    step_s: float
    alloc: int
    reserved: int
    rss: int
    model_s_at_run: float
    held_logits: int = 0  # bytes the run kept beyond what the estimate models (the first set's probe)

    def now(self):
        return score(self.candidate, self.job, self.hw)


def _candidate(k: dict) -> Candidate:
    return Candidate(stage=k["stage"], offload_optimizer=k["offload_optimizer"], offload_param=k["offload_param"],
                     micro_batch=k["micro_batch"], grad_accum=k["gradient_accumulation_steps"],
                     checkpointing=k["checkpointing"], small_buckets=k.get("small_buckets", False),
                     hpz=k.get("hpz", False))


def _verify_file(path: str) -> list[Case]:
    doc = json.loads(Path(path).read_text())
    host = parse_bytes(doc.get("host_memory", "120GB"))
    out = []
    for run in doc["runs"]:
        plan = run.get("plan")
        if not plan or not plan.get("verify"):
            continue
        args = run["command"]
        model_cfg = Path(args[args.index("--model") + 1]).name
        lora = int(args[args.index("--lora-rank") + 1]) if "--lora-rank" in args else None
        rate = float(args[args.index("--cpu-adam-rate") + 1]) if "--cpu-adam-rate" in args else None
        hw = Hardware(host_memory=host, **preset("h200"))
        if rate:
            hw = replace(hw, cpu_adam_params_per_s=rate)
        job = Job(model=load_hf_config(str(MODELS / model_cfg)), global_batch=run["global_batch"],
                  seq_len=run["seq_len"], lora_rank=lora)
        for c in plan["verify"]["candidates"]:
            m = c["measured"]
            if m["step_seconds"] is None:
                continue
            out.append(Case(run.get("set", "B"), run["name"].removesuffix("-c"), c["summary"],
                            _candidate(c["config"]), job, hw, c["rank_in_plan"], m["step_seconds"],
                            m["peak_allocated_bytes"], m["peak_reserved_bytes"], m["host_rss_peak_bytes"],
                            c["estimate"]["step_seconds"]))
    return out


def _probe_file(path: str) -> list[Case]:
    doc = json.loads(Path(path).read_text())
    host = doc["host_memory"] if isinstance(doc.get("host_memory"), int) else 120 * GiB
    out = []
    for c in doc["cases"]:
        if c.get("status") != "ok":
            continue
        z = c["config"]["zero_optimization"]
        cand = Candidate(stage=z["stage"], offload_optimizer=z.get("offload_optimizer", {}).get("device", "none"),
                         offload_param=z.get("offload_param", {}).get("device", "none"), micro_batch=c["micro_batch"],
                         grad_accum=c["grad_accum"], checkpointing=c["checkpointing"])
        spec = load_hf_config(str(MODELS / Path(c["model_config"]).name))
        job = Job(model=spec, global_batch=c["micro_batch"] * c["grad_accum"], seq_len=c["seq_len"],
                  lora_rank=c["lora_rank"])
        held = 2 * (spec.shape.vocab or 0) * c["micro_batch"] * c["seq_len"]
        out.append(Case("A", c["model"], c["summary"], cand, job, Hardware(host_memory=host, **preset("h200")),
                        c["rank_in_plan"], statistics.median(c["step_s"]), c["peak_allocated_bytes"],
                        c["peak_reserved_bytes"], c["host_rss_peak_bytes"], c["model_step_seconds"], held))
    return out


def load(files: list[str] | None = None) -> list[Case]:
    files = files or [*sorted(glob.glob(str(DATA / "plan-gpu-*.json"))),
                      *sorted(glob.glob(str(DATA / "plan-verify-*.json")))]
    cases: list[Case] = []
    for f in files:
        cases += _probe_file(f) if Path(f).name.startswith("plan-gpu-") else _verify_file(f)
    return cases


def groups(cases: list[Case]) -> dict[tuple[str, str], list[Case]]:
    out: dict[tuple[str, str], list[Case]] = {}
    for c in cases:
        out.setdefault((c.set, c.model), []).append(c)
    return out


def model_rows(cases: list[Case]) -> list[dict]:
    rows = []
    for (s, model), cs in groups(cases).items():
        fastest = min(c.step_s for c in cs)
        now = [c.now().time.seconds for c in cs]
        pick = min(cs, key=lambda c: c.rank_in_plan)
        rows.append({"set": s, "model": model, "n": len(cs), "pick_vs_fastest": pick.step_s / fastest,
                     "now_pick_vs_fastest": cs[min(range(len(cs)), key=lambda i: now[i])].step_s / fastest,
                     "spearman_at_run": spearman([c.model_s_at_run for c in cs], [c.step_s for c in cs]),
                     "spearman_now": spearman(now, [c.step_s for c in cs])})
    return rows


def memory_rows(cases: list[Case]) -> list[dict]:
    rows = []
    for c in cases:
        s = c.now()
        covered = s.estimate.per_gpu_covered_bytes + c.held_logits
        need = s.per_gpu_bytes + c.held_logits
        rows.append({"set": c.set, "model": c.model, "summary": c.summary, "covered": covered, "alloc": c.alloc,
                     "ratio": c.alloc / covered, "need": need, "reserved": c.reserved, "covers": need >= c.reserved,
                     "host": s.per_node_host_bytes, "rss": c.rss, "step_s": c.step_s,
                     "model_s": s.time.seconds, "model_s_at_run": c.model_s_at_run, "held": c.held_logits})
    return rows


def markdown(cases: list[Case]) -> str:
    lines = ["| set | model | candidates | plan's pick / fastest measured (now) | Spearman at the run | "
             "Spearman now |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    for r in model_rows(cases):
        lines.append(f"| {r['set']} | {r['model']} | {r['n']} | {r['pick_vs_fastest']:.2f} "
                     f"({r['now_pick_vs_fastest']:.2f}) | {r['spearman_at_run']:.2f} | {r['spearman_now']:.2f} |")
    lines += ["", "| set | model | config | step s | model s now (at the run) | covered GiB | alloc GiB | alloc / "
              "covered | need GiB | reserved GiB | host GiB | RSS GiB |",
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in memory_rows(cases):
        lines.append(f"| {r['set']} | {r['model']} | {r['summary']} | {r['step_s']:.3f} | {r['model_s']:.3f} "
                     f"({r['model_s_at_run']:.3f}) | {r['covered'] / GiB:.1f} | {r['alloc'] / GiB:.1f} | "
                     f"{r['ratio']:.2f} | {r['need'] / GiB:.1f} | {r['reserved'] / GiB:.1f} | "
                     f"{r['host'] / GiB:.1f} | {r['rss'] / GiB:.1f} |")
    mem = memory_rows(cases)
    within = sum(abs(r["ratio"] - 1) <= 0.10 for r in mem)
    lines += ["", f"Covered estimate within 10 % of the measured peak allocated: {within} of {len(mem)}; estimate + "
              f"margin at or above the measured peak reserved: {sum(r['covers'] for r in mem)} of {len(mem)}."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--markdown", action="store_true", help="(the default) the tables of docs/plan.md")
    a = ap.parse_args()
    sys.stdout.write(markdown(load(a.files or None)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
