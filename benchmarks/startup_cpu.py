"""CPU time of a one-file `zerolint check` against a bare `json.load` of the same file, in whole processes.

    python benchmarks/startup_cpu.py --zerolint main=/tmp/a/venv/bin/zerolint --zerolint new=/tmp/b/venv/bin/zerolint \
        [--runs 30] [FILE]

Each `--zerolint NAME=PATH` is the console script of an install (for the issue-13 figure: a normal, non-editable
install, a wheel built from `git archive` of a commit into its own venv; docs/benchmarks.md). The baseline runs
`json.load` with the interpreter of the first install's venv. Runs are interleaved (json, each install, json, ...),
so load changes hit all alike; each child's CPU time (user + system) comes from `wait4`, which load disturbs less
than wall time. Prints the medians and each install's ratio to the baseline.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SEED = Path(__file__).resolve().parent.parent / "fixtures" / "examples" / "seed" / "ds_zero3_offload.json"


def cpu_of(cmd: list[str], cwd: str) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit status) of one run of `cmd`."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - start, os.waitstatus_to_exitcode(status)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zerolint", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("file", nargs="?", default=str(SEED))
    args = ap.parse_args()
    installs = [z.split("=", 1) for z in args.zerolint]
    if any(len(i) != 2 for i in installs):
        ap.error("--zerolint takes NAME=PATH")
    target = os.path.abspath(args.file)
    python = str(Path(installs[0][1]).parent / "python")
    commands = {"json.load": [python, "-c", "import json, sys; json.load(open(sys.argv[1]))", target]}
    commands.update({name: [path, "check", target] for name, path in installs})
    cwd = os.path.dirname(target)  # the file's own directory: what a user's check would see
    cpu: dict[str, list[float]] = {n: [] for n in commands}
    wall: dict[str, list[float]] = {n: [] for n in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            c, w, rc = cpu_of(cmd, cwd)
            if rc not in (0, 1):
                print(f"{name}: exit status {rc} ({' '.join(cmd)})", file=sys.stderr)
                return 2
            cpu[name].append(c)
            wall[name].append(w)
    base = statistics.median(cpu["json.load"])
    print(f"{'command':<12} {'CPU median':>11} {'CPU min':>9} {'wall median':>12} {'vs json.load':>13}")
    for name in commands:
        med = statistics.median(cpu[name])
        print(f"{name:<12} {med * 1000:9.1f} ms {min(cpu[name]) * 1000:6.1f} ms "
              f"{statistics.median(wall[name]) * 1000:9.1f} ms {med / base:12.2f}x")
    print(f"{args.runs} interleaved runs each; load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
