#!/usr/bin/env python3
"""The GPU evidence for `zerolint verify` (docs/verify-results.md), in one process that writes under --out.

Groups (pick with --groups, default all):
  a  tiny model, 1 and 2 GPUs: ZeRO stages 0-3 x bf16/fp16; optimizer offload (stage 2, 3), parameter offload
     (stage 3, with and without optimizer offload), fp16 + optimizer offload, stage 0 + optimizer offload
  b  the seed configs (fixtures/examples/seed) with --compare-fix, 1 and 2 GPUs
  c  --params 125M / 350M / 1.3B, 1 and 2 GPUs, stages 1-3 with and without optimizer offload, and stage 3 with
     parameter + optimizer offload: peak memory next to DeepSpeed's estimators (memory.json)

Every case is one `python -m zerolint verify ... --format json --no-cache` process. One-GPU cases run in one lane
per GPU (CUDA_VISIBLE_DEVICES) so each has its GPU to itself; two-GPU cases run one at a time, except group c
(--c-per-gpu per GPU, --c-concurrency two-GPU cases at once: memory figures are per process; their times are
then marked concurrent). Results are
appended to OUT/results.jsonl as they finish, so a call cut short still returns what ran; --deadline stops
launching new cases after that many seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "examples" / "seed"
T0 = time.monotonic()
LOCK = threading.Lock()


def cfg(stage: int, precision: str = "bf16", opt_off: bool = False, param_off: bool = False,
        optimizer: bool = True) -> dict:
    c: dict = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1, "gradient_clipping": 1.0,
               precision: {"enabled": True}, "zero_optimization": {"stage": stage}, "steps_per_print": 100}
    if optimizer:
        c["optimizer"] = {"type": "AdamW", "params": {"lr": 1e-4, "weight_decay": 0.0}}
    if opt_off:
        c["zero_optimization"]["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if param_off:
        c["zero_optimization"]["offload_param"] = {"device": "cpu", "pin_memory": True}
    return c


def cases(groups: str, tmp: Path) -> list[dict]:
    out = []

    def add(group, name, config, gpus, extra=(), meta=None):
        if isinstance(config, dict):
            path = tmp / f"{group}-{name}.json"
            path.write_text(json.dumps(config, indent=1))
        else:
            path = config
        out.append({"group": group, "name": name, "config": str(path), "gpus": gpus, "extra": list(extra),
                    "meta": meta or {}})

    for gpus in (1, 2):
        if "a" in groups:
            for stage in range(4):
                for prec in ("bf16", "fp16"):
                    add("a", f"s{stage}-{prec}-g{gpus}", cfg(stage, prec), gpus)
            add("a", f"s2-bf16-optoff-g{gpus}", cfg(2, opt_off=True), gpus)
            add("a", f"s3-bf16-optoff-g{gpus}", cfg(3, opt_off=True), gpus)
            add("a", f"s3-bf16-paramoff-g{gpus}", cfg(3, param_off=True), gpus)
            add("a", f"s3-bf16-bothoff-g{gpus}", cfg(3, opt_off=True, param_off=True), gpus)
            if gpus == 1:
                add("a", "s2-fp16-optoff-g1", cfg(2, "fp16", opt_off=True), 1)
                add("a", "s0-bf16-optoff-g1", cfg(0, opt_off=True), 1)
        if "b" in groups:
            for p in sorted(SEED.glob("*.json")):
                add("b", f"{p.stem}-g{gpus}", p, gpus, ["--compare-fix", "--prefer", "bf16"])
        if "c" in groups:
            for size in ("125M", "350M", "1.3B"):
                combos = [(s, o, False) for s in (1, 2, 3) for o in (False, True)] + [(3, True, True)]
                for stage, opt_off, param_off in combos:
                    tag = "bothoff" if param_off else "optoff" if opt_off else "nooff"
                    add("c", f"{size}-s{stage}-{tag}-g{gpus}", cfg(stage, opt_off=opt_off, param_off=param_off), gpus,
                        ["--params", size], {"size": size, "stage": stage, "opt_off": opt_off, "param_off": param_off})
    return out


def run_case(case: dict, out: Path, lane_env: dict, timeout: float, concurrent: bool) -> dict:
    cmd = [sys.executable, "-m", "zerolint", "verify", case["config"], "--gpus", str(case["gpus"]), "--format",
           "json", "-q", "--no-cache", "--timeout", str(timeout), *case["extra"]]
    env = {**os.environ, **lane_env}
    t = time.monotonic()
    started = round(t - T0, 1)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout + 120)
        stdout, stderr, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        stdout, stderr, rc = "", f"driver timeout: {e}", -1
    wall = round(time.monotonic() - t, 2)
    try:
        report = json.loads(stdout)
    except ValueError:
        report = None
    rec = {**case, "rc": rc, "wall_s": wall, "started_s": started, "concurrent": concurrent,
           "lane": lane_env.get("CUDA_VISIBLE_DEVICES", "all"), "cmd": " ".join(cmd[1:])}
    if report is None:
        rec["error"] = stderr[-3000:]
    else:
        v = report["verify"]
        rec["runs"] = v["runs"]
        rec["compare_fix"] = {k: v["compare_fix"][k] for k in ("available", "applied", "reason", "fixed_verdict")
                              if k in v["compare_fix"]} if v.get("compare_fix") else None
        rec["diagnostics"] = [(d["code"], d["line"], d["pointer"], d["message"][:300]) for d in report["diagnostics"]]
    with LOCK:
        with open(out / "results.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps(rec, default=str) + "\n")
        r0 = (rec.get("runs") or [{}])[0]
        print(f"[{time.monotonic() - T0:6.0f}s] {case['group']} {case['name']:<32} "
              f"{r0.get('status', 'ERROR'):<8} {wall:6.1f}s lane={rec['lane']}", flush=True)
    return rec


def run_all(todo: list[dict], out: Path, args) -> None:
    def over() -> bool:
        return time.monotonic() - T0 > args.deadline

    def lanes(items: list[dict], per_gpu: int, concurrent: bool) -> None:
        slots = [str(g) for g in range(args.gpus) for _ in range(per_gpu)]

        def worker(lane: str, mine: list[dict]) -> None:
            for c in mine:
                if over():
                    return
                run_case(c, out, {"CUDA_VISIBLE_DEVICES": lane}, args.timeout, concurrent)

        threads = [threading.Thread(target=worker, args=(lane, items[i::len(slots)])) for i, lane in enumerate(slots)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def pool(items: list[dict], workers: int, concurrent: bool) -> None:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as ex:
            for c in items:
                ex.submit(lambda c=c: None if over() else run_case(c, out, {}, args.timeout, concurrent))

    size = {"125M": 0, "350M": 1, "1.3B": 2}
    ab1 = [c for c in todo if c["gpus"] == 1 and c["group"] != "c"]
    ab2 = [c for c in todo if c["gpus"] > 1 and c["group"] != "c"]
    c1 = sorted((c for c in todo if c["gpus"] == 1 and c["group"] == "c"), key=lambda c: -size[c["meta"]["size"]])
    c2 = sorted((c for c in todo if c["gpus"] > 1 and c["group"] == "c"), key=lambda c: -size[c["meta"]["size"]])
    if args.pool:
        # Everything after the exclusive seed runs shares the GPUs: 1-GPU cases alternate between them, in the
        # order of `priority` (the core combinations of every size first), `args.pool` processes at a time.
        exclusive = [c for c in ab1 + ab2 if c["group"] == "b"]
        shared = [c for c in ab1 + ab2 if c["group"] != "b"] + sorted(c1 + c2, key=priority)
        pool(exclusive, 1, False)
        with ThreadPoolExecutor(max_workers=args.pool) as ex:
            for i, c in enumerate(shared):
                env = {"CUDA_VISIBLE_DEVICES": str(i % args.gpus)} if c["gpus"] == 1 else {}
                ex.submit(lambda c=c, env=env: None if over() else run_case(c, out, env, args.timeout, True))
        return
    lanes(ab1, 1, False)  # one case per GPU at a time: fair times
    pool(ab2, 1, False)
    lanes(c1, args.c_per_gpu, args.c_per_gpu > 1)  # memory is per process; times are marked concurrent
    pool(c2, args.c_concurrency, args.c_concurrency > 1)


COMBO_ORDER = [(3, True, True), (2, True, False), (2, False, False), (3, False, False), (1, False, False),
               (3, True, False), (1, True, False)]


def priority(c: dict) -> tuple:
    m = c["meta"]
    return (COMBO_ORDER.index((m["stage"], m["opt_off"], m["param_off"])), ["125M", "1.3B", "350M"].index(m["size"]),
            c["gpus"])


def memory_table(out: Path, date: str) -> None:
    """docs/data/verify-gpu-<date>.json: one case per group-c run (the estimate work reads it)."""
    rows = []
    for line in (out / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["group"] != "c" or not r.get("runs"):
            continue
        run = r["runs"][0]
        m, f, mem, est = run.get("model") or {}, run.get("facts") or {}, run.get("memory") or {}, \
            run.get("estimates") or {}
        stage = r["meta"]["stage"]
        ds = est.get("zero3" if stage == 3 else "zero2") or {}
        rows.append({
            "case": r["name"], "status": run.get("status"), "params": m.get("params"),
            "largest_layer_params": m.get("largest_layer_params"), "hidden": m.get("hidden"),
            "layers": m.get("layers"), "vocab": m.get("vocab"), "heads": m.get("heads"),
            "intermediate": 4 * (m.get("hidden") or 0), "seq_len": m.get("seq"),
            "micro_batch": f.get("micro_batch"), "stage": stage, "precision": "bf16",
            "optimizer": f"{f.get('optimizer_outer')} / {f.get('optimizer_inner')}",
            "offload_optimizer": "cpu" if r["meta"]["opt_off"] else "none",
            "offload_param": "cpu" if r["meta"]["param_off"] else "none",
            "world_size": r["gpus"], "gpus_per_node": r["gpus"], "zero_init": f.get("zero_init"),
            "peak_allocated_bytes": mem.get("peak_allocated_bytes"),
            "peak_reserved_bytes": mem.get("peak_reserved_bytes"),
            "host_rss_peak_bytes": mem.get("host_rss_peak_bytes"),
            "after_initialize_allocated_bytes": mem.get("after_initialize_allocated_bytes"),
            "ds_estimate_gpu_bytes": ds.get("gpu_bytes"), "ds_estimate_cpu_bytes": ds.get("cpu_bytes"),
            "ds_estimates": est, "device": run.get("device_name"), "versions": run.get("versions"),
            "wall_s": r["wall_s"], "concurrent": r["concurrent"], "intent": run.get("intent"),
            "config": json.loads(Path(r["config"]).read_text()) if Path(r["config"]).exists() else None,
        })
    (out / f"verify-gpu-{date}.json").write_text(json.dumps(
        {"source": "benchmarks/gpu_matrix.py --groups c (zerolint verify --params)", "date": date, "cases": rows},
        indent=1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    ap.add_argument("--groups", default="abc")
    ap.add_argument("--gpus", type=int, default=2, help="GPUs on the machine (one lane each for 1-GPU cases)")
    ap.add_argument("--c-per-gpu", type=int, default=2, help="group c: concurrent 1-GPU cases per GPU")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--deadline", type=float, default=540)
    ap.add_argument("--c-concurrency", type=int, default=2)
    ap.add_argument("--date", default=time.strftime("%Y-%m-%d"))
    ap.add_argument("--only", default=None, help="a regular expression: run only the cases whose name matches")
    ap.add_argument("--pool", type=int, default=0, help="after the seed runs, run the rest N at a time, sharing "
                                                         "the GPUs (times marked concurrent)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="zl-gpu-matrix-") as tmp:
        todo = cases(args.groups, Path(tmp))
        if args.only:
            todo = [c for c in todo if re.search(args.only, c["name"])]
        print(f"{len(todo)} cases, groups {args.groups}", flush=True)
        # Warm the op cache once (fused_adam, cpu_adam) so that no lane pays the build inside a timed case.
        warm = []
        for i, (name, config) in enumerate((("fused_adam", cfg(2)), ("cpu_adam", cfg(3, opt_off=True,
                                                                                       param_off=True)))):
            path = Path(tmp) / f"warmup-{name}.json"
            path.write_text(json.dumps(config))
            case = {"group": "warmup", "name": name, "config": str(path), "gpus": 1, "extra": [], "meta": {}}
            warm.append(threading.Thread(target=run_case, args=(case, out, {"CUDA_VISIBLE_DEVICES": str(
                i % args.gpus)}, args.timeout, True)))
        for t in warm:  # the two op builds in parallel
            t.start()
        for t in warm:
            t.join()
        run_all(todo, out, args)
        if "c" in args.groups:
            memory_table(out, args.date)
    print(f"done in {time.monotonic() - T0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
