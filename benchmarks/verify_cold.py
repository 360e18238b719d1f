#!/usr/bin/env python3
"""The first verify on a machine: the six seed configs from an empty op cache, one `zerolint verify` command, the
way a new user starts it (the venv not activated: the interpreter by path; the result cache empty), quiet or beside
a busy loop on one core.

    python benchmarks/verify_cold.py                  # quiet
    python benchmarks/verify_cold.py --busy           # a busy loop on one core beside it
    python benchmarks/verify_cold.py --json out.json  # the figures, for docs/benchmarks.md

Prints the whole command's wall time, the op build phase (each op's build seconds), each config's time from
submission to verdict, and what is left once the builds are taken out. Then runs the same command again on the now
warm op cache, which must build nothing. Target (issue 21, item 4): the op builds are the only cold cost, each op is
built once per toolchain, and the cold six-config verify takes at most 6 min on a quiet 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "examples" / "seed"
TARGET_S = 360.0


def _busy() -> None:  # pragma: no cover - a CPU hog in a process of its own
    while True:
        pass


def run(configs: list[str], op_cache: str, cache: str) -> tuple[float, dict, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TORCH_EXTENSIONS_DIR", "VIRTUAL_ENV")}
    env.update(ZEROLINT_CACHE_DIR=cache, NO_COLOR="1")
    cmd = [sys.executable, "-m", "zerolint", "verify", "--cpu", "--op-cache", op_cache, "--format", "json", *configs]
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.monotonic() - t
    try:
        return wall, json.loads(p.stdout), p.stderr
    except ValueError:
        sys.stderr.write(p.stderr[-4000:])
        raise SystemExit(2)


def figures(wall: float, report: dict) -> dict:
    entries = report["verify"] if isinstance(report["verify"], list) else [report["verify"]]
    runs = [e["runs"][0] for e in entries]
    build = next((r.get("build") for r in runs if r.get("build")), {}) or {}
    ops = {op: info for op, info in (build.get("ops") or {}).items()}
    built_s = sum(float(info.get("seconds") or 0) for info in ops.values() if info.get("status") == "built")
    stops = [s for r in runs for s in (r.get("op_stops") or [])]
    return {"wall_s": round(wall, 1), "build_phase_s": build.get("wall_s", 0.0), "ops_built_s": round(built_s, 1),
            "ops": {op: [info.get("status"), info.get("seconds")] for op, info in ops.items()},
            "op_stops": [s["op"] for s in stops],
            "configs": [[e["file"], e["verdict"], (e["runs"][0].get("timings") or {}).get("wall_s")] for e in entries],
            "without_builds_s": round(wall - float(build.get("wall_s") or 0.0), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy", action="store_true", help="a busy loop on one core beside the run")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    configs = sorted(str(p.relative_to(ROOT)) for p in SEED.glob("*.json"))
    hog = None
    if args.busy:
        hog = multiprocessing.Process(target=_busy, daemon=True)
        hog.start()
    try:
        with tempfile.TemporaryDirectory(prefix="zl-cold-") as tmp:
            op_cache, cache = os.path.join(tmp, "ops"), os.path.join(tmp, "cache")
            cold = figures(*run(configs, op_cache, cache)[:2])
            warm = figures(*run(configs, op_cache, os.path.join(tmp, "cache2"))[:2])
    finally:
        if hog is not None:
            hog.terminate()
    print(f"cold verify of {len(configs)} seed configs{' beside a busy loop' if args.busy else ''}: "
          f"{cold['wall_s']:.1f} s (target <= {TARGET_S:.0f} s quiet); op build phase {cold['build_phase_s']:.1f} s")
    for op, (status, seconds) in cold["ops"].items():
        print(f"  {op:22s} {status:8s} {seconds if seconds is not None else '-'} s")
    print(f"  without the builds: {cold['without_builds_s']:.1f} s; ops stopped at inside runs: "
          f"{cold['op_stops'] or 'none'}")
    for name, verdict, seconds in cold["configs"]:
        print(f"  {name:60s} {verdict:6s} {seconds} s")
    print(f"the same command again (warm op cache): {warm['wall_s']:.1f} s; ops built: "
          f"{[op for op, (status, _) in warm['ops'].items() if status == 'built'] or 'none'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"busy": args.busy, "cold": cold, "warm": warm}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
