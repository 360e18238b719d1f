#!/usr/bin/env python3
"""Time to verdict of `zerolint verify` per config, with a warm op cache (the JIT builds already done) and the
result cache off (--no-cache): what a user waits for once the machine has verified anything before.

    python benchmarks/verify_time.py                         # the seed configs, CPU or GPU (whatever verify picks)
    python benchmarks/verify_time.py --cpu --gpus 2 a.json   # 2 CPU ranks
    python benchmarks/verify_time.py --json out.json         # also write the figures

Each config is run once untimed first (to build any missing op), then `--repeat` times; the figure is the wall
time of the whole `python -m zerolint verify` process (parse + static check + child + report). Prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "examples" / "seed"


def verify(path: str, args, extra=()) -> tuple[float, dict | None]:
    cmd = [sys.executable, "-m", "zerolint", "verify", path, "--format", "json", "-q", "--no-cache",
           "--gpus", str(args.gpus), "--timeout", str(args.timeout), *extra]
    if args.cpu:
        cmd.append("--cpu")
    if args.target:
        cmd += ["--target", args.target]
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t
    try:
        return wall, json.loads(p.stdout)
    except ValueError:
        sys.stderr.write(p.stderr[-2000:])
        return wall, None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("configs", nargs="*")
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--target", default=None)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", default=None, help="write the figures to this file")
    args = ap.parse_args()
    configs = args.configs or sorted(str(p.relative_to(ROOT)) for p in SEED.glob("*.json"))
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(ROOT / ".cache" / "torch_extensions"))
    rows = []
    for c in configs:
        verify(c, args)  # warm-up: JIT-builds whatever this config needs
        times, report = [], None
        for _ in range(args.repeat):
            wall, report = verify(c, args)
            times.append(wall)
        run = (report or {}).get("verify", {}).get("runs", [{}])[0]
        t = run.get("timings") or {}
        rows.append({"config": c, "status": run.get("status", "error"), "device": run.get("device_name")
                     or run.get("accelerator"), "world_size": run.get("world_size"),
                     "verdict_s": round(statistics.median(times), 2), "child_s": t.get("wall_s"),
                     "import_s": t.get("import_s"), "initialize_s": t.get("initialize_s"),
                     "steps_s": round(sum(t.get("step_s") or []), 3)})
    w = max(len(r["config"]) for r in rows)
    print(f"{'config':<{w}}  {'status':<7} {'device':<22} ranks  verdict_s  child_s  import_s  init_s  steps_s")
    for r in rows:
        print(f"{r['config']:<{w}}  {r['status']:<7} {str(r['device'])[:22]:<22} {r['world_size']!s:>5}  "
              f"{r['verdict_s']:>9}  {r['child_s']!s:>7}  {r['import_s']!s:>8}  {r['initialize_s']!s:>6}  "
              f"{r['steps_s']!s:>7}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
