#!/usr/bin/env python3
"""`zerolint plan --verify` on this machine's GPU for real architectures (fixtures/models), one `zerolint plan`
process per model, its JSON kept: the candidates the plan ran, measured beside the estimate and the step-time model.

    python benchmarks/plan_verify_gpu.py --out OUT [--runs a,b] [--deadline 540] [--op-cache DIR] [--cpu]

Writes OUT/plan-verify.json (the runs in order, each with its command and the plan's JSON output);
benchmarks/plan_verify_report.py turns it into the tables of docs/plan.md and docs/estimate-accuracy.md. On an
offline GPU host carry zerolint and DeepSpeed as wheels and install them into one --target directory
(/work/shared/gpu.md): verify's children see zerolint's own directory on sys.path, and nothing else of the
parent's PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "fixtures" / "models"
# name -> (config.json, global batch, sequence, LoRA rank, candidates run). Other batches and sequences than
# the first H200 runs' (docs/data/plan-gpu-h200-2026-12-02.json: 8-16 x 1,024), so that they test the terms
# calibrated on those runs out of sample.
RUNS = {
    "gpt2": ("gpt2.json", 32, 1024, None, 5),
    "qwen2-0.5b": ("qwen2-0.5b.json", 8, 2048, None, 5),
    "tinyllama-1.1b": ("tinyllama-1.1b.json", 16, 2048, None, 5),
    "llama-3.2-3b": ("llama-3.2-3b.json", 8, 2048, None, 4),
    "llama-3-8b-lora": ("llama-3-8b.json", 8, 2048, 16, 4),
    # The third set (out of sample for the terms refitted on the first two): other batches and sequences again
    "gpt2-c": ("gpt2.json", 16, 512, None, 5),
    "qwen2-0.5b-c": ("qwen2-0.5b.json", 16, 1024, None, 5),
    "tinyllama-1.1b-c": ("tinyllama-1.1b.json", 8, 4096, None, 4),
    "llama-3.2-3b-c": ("llama-3.2-3b.json", 4, 4096, None, 4),
    "llama-3-8b-lora-c": ("llama-3-8b.json", 16, 1024, 16, 3),
    # CPU smoke runs of this script (--cpu): the test shapes
    "tiny-llama": (str(ROOT / "tests" / "data" / "models" / "tiny-llama.json"), 4, 64, None, 3),
}


def command(name: str, args) -> list[str]:
    cfg, batch, seq, lora, k = RUNS[name]
    cmd = [sys.executable, "-m", "zerolint", "plan", "--model", str(MODELS / cfg), "--gpu", "h200",
           "--host-memory", args.host_memory, "--global-batch", str(batch), "--seq-len", str(seq), "--verify",
           "--verify-top", str(k), "--steps", str(args.steps), "--timeout", str(args.timeout), "--format", "json"]
    if lora:
        cmd += ["--lora-rank", str(lora)]
    if args.op_cache:
        cmd += ["--op-cache", args.op_cache]
    if args.cpu_adam_rate:
        cmd += ["--cpu-adam-rate", str(args.cpu_adam_rate)]
    if args.cpu:
        cmd += ["--cpu"]
    return cmd


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "plan-verify-out"))
    ap.add_argument("--runs", default="gpt2,qwen2-0.5b,tinyllama-1.1b,llama-3.2-3b,llama-3-8b-lora")
    ap.add_argument("--host-memory", default="120GB")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--deadline", type=float, default=540, help="seconds: no model starts after this")
    ap.add_argument("--op-cache", default=None)
    ap.add_argument("--cpu-adam-rate", type=float, default=None, help="this host's DeepSpeedCPUAdam rate (plan's flag)")
    ap.add_argument("--cpu", action="store_true", help="run on the CPU (a smoke test of this script)")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    runs = []
    for name in [n for n in a.runs.split(",") if n]:
        cmd = command(name, a)
        row: dict = {"name": name, "command": cmd[1:], "global_batch": RUNS[name][1], "seq_len": RUNS[name][2],
                     "lora_rank": RUNS[name][3]}
        left = a.deadline - (time.time() - start)
        if left <= 30:
            row["status"] = "skipped (deadline)"
            runs.append(row)
            continue
        t = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=left + 60)
            row["rc"], row["stderr_tail"] = p.returncode, p.stderr[-3000:]
            try:
                row["plan"] = json.loads(p.stdout)
            except ValueError:
                row["stdout_tail"] = p.stdout[-3000:]
        except subprocess.TimeoutExpired:
            row["status"] = "timeout"
        row["wall_s"] = round(time.time() - t, 1)
        runs.append(row)
        v = (row.get("plan") or {}).get("verify") or {}
        print(f"[{time.time() - start:6.1f}s] {name}: rc={row.get('rc')} in {row['wall_s']}s; "
              + "; ".join(f"{c['summary']}: {c['status']} {c['measured']['step_seconds']}"
                          for c in v.get("candidates", [])), flush=True)
        (out / "plan-verify.json").write_text(json.dumps({"date": time.strftime("%Y-%m-%d"),
                                                          "host_memory": a.host_memory, "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
