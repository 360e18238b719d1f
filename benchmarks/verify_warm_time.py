#!/usr/bin/env python3
"""The warm runner's time per config: N configs through one `zerolint verify A B C ...` (one server, torch and
DeepSpeed imported once), with a warm op cache and the result cache off (--no-cache).

    python benchmarks/verify_warm_time.py --cpu                 # the seed configs, 1 rank on the CPU
    python benchmarks/verify_warm_time.py --jobs 2 a.json b.json
    python benchmarks/verify_warm_time.py --json out.json

Prints the whole command's wall time, the server's start (the imports), each config's time from submission to
verdict (the record's wall_s), and the ratio of each later config to the first. Targets (issue 15): each config
after the first <= 5 s on a 2-core CPU with the tiny model, <= 3 s on an H200, the first <= 15 s on an H200; issue
21 (the pool of warmed-up children on a GPU): later configs <= 1.5 s median and <= 2 s max, the first <= 10 s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "examples" / "seed"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("configs", nargs="*")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--target", default=None)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", default=None, help="write the figures to this file")
    args = ap.parse_args()
    configs = args.configs or sorted(str(p.relative_to(ROOT)) for p in SEED.glob("*.json"))
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(ROOT / ".cache" / "torch_extensions"))
    cmd = [sys.executable, "-m", "zerolint", "verify", *configs, "--format", "json", "--no-cache", "--jobs",
           str(args.jobs), "--timeout", str(args.timeout)] + (["--cpu"] if args.cpu else []) + (
        ["--target", args.target] if args.target else [])
    subprocess.run([sys.executable, "-m", "zerolint", "verify", "--prepare", *configs] + (["--cpu"] if args.cpu
                                                                                           else []), cwd=ROOT)
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    total = time.monotonic() - t
    try:
        report = json.loads(p.stdout)
    except ValueError:
        sys.stderr.write(p.stderr[-3000:])
        return 2
    ready = re.search(r"warm runner ready in ([0-9.]+) s", p.stderr)
    rows = [{"config": v["file"], "verdict": v["verdict"], "launcher": v["runs"][0].get("launcher"),
             "device": v["runs"][0].get("device_name") or v["runs"][0].get("accelerator"),
             "seconds": v["runs"][0]["timings"].get("wall_s") or 0.0,
             "pooled": bool(v["runs"][0]["timings"].get("pooled")), "warm_s": v["runs"][0]["timings"].get("warm_s"),
             "process_s": v["runs"][0]["timings"].get("process_s"), "timings": v["runs"][0]["timings"],
             "op_stops": [x["op"] for x in v["runs"][0].get("op_stops") or []]} for v in report["verifications"]]
    start = float(ready.group(1)) if ready else 0.0
    first = start + rows[0]["seconds"]  # the first verdict waits for the server's imports too
    w = max(len(r["config"]) for r in rows)
    print(f"warm verify of {len(rows)} configs (--jobs {args.jobs}) in {total:.1f} s; server start (imports) "
          f"{ready.group(1) if ready else '?'} s; exit {p.returncode}")
    print(f"{'config':<{w}}  {'verdict':<13} {'device':<22} {'seconds':>7}  ratio to the first")
    for i, r in enumerate(rows):
        s = first if i == 0 else r["seconds"]
        print(f"{r['config']:<{w}}  {r['verdict']:<13} {str(r['device'])[:22]:<22} {s:>7.2f}  {s / first:.2f}"
              + ("  (server start included)" if i == 0 else ""))
    later = [r["seconds"] for r in rows[1:]]
    if later:
        median = sorted(later)[len(later) // 2] if len(later) % 2 else sum(sorted(later)[len(later) // 2 - 1:
                                                                                        len(later) // 2 + 1]) / 2
        print(f"first {first:.2f} s (server start {start:.2f} s + run {rows[0]['seconds']:.2f} s); "
              f"later: median {median:.2f} s, max {max(later):.2f} s, mean {sum(later) / len(later):.2f} s,"
              f" mean ratio {sum(later) / len(later) / first:.2f}; pooled children: "
              f"{sum(r['pooled'] for r in rows)} of {len(rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"total_s": round(total, 2), "server_start_s": float(ready.group(1))
                                               if ready else None, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
