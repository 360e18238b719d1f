"""CPU time of a one-file `zerolint check` against a bare `json.load` of the same file, in whole processes.

    python benchmarks/startup_cpu.py --zerolint main=/tmp/a/venv/bin/zerolint --zerolint new=/tmp/b/venv/bin/zerolint \
        [--runs 30] [FILE]

Three cases, each against `json.load` of its own file: `plain` (the seed's ds_zero3_offload.json, or FILE), `color`
(the same with `--color always`, as on a terminal: escape sequences, no rich) and `auto` (a config holding "auto",
as 55 of the 77 real configs do: the HF-fill checks ask for transformers' version; `--case` picks some).

Each `--zerolint NAME=PATH` is the console script of an install (for the issue-13 figure: a normal, non-editable
install, a wheel built from `git archive` of a commit into its own venv; docs/benchmarks.md). The baseline runs
`json.load` with the interpreter of the first install's venv. Runs are interleaved (json, each install, json, ...),
so load changes hit all alike; each child's CPU time (user + system) comes from `wait4`, which load disturbs less
than wall time. Prints the medians and each install's ratio to the baseline.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEED = Path(__file__).resolve().parent.parent / "fixtures" / "examples" / "seed" / "ds_zero3_offload.json"
AUTO = Path(__file__).resolve().parent.parent / "fixtures" / "examples" / "accelerate" / "ds_zero2.json"
CASES = ("plain", "color", "auto")


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
    ap.add_argument("--case", action="append", choices=CASES, help="the cases to run [default: all]")
    ap.add_argument("file", nargs="?", default=str(SEED))
    args = ap.parse_args()
    installs = [z.split("=", 1) for z in args.zerolint]
    if any(len(i) != 2 for i in installs):
        ap.error("--zerolint takes NAME=PATH")
    python = str(Path(installs[0][1]).parent / "python")
    # Copies in a directory of their own, outside any repository: the check path itself, not a uses scan of
    # whatever repository the benchmark runs from (docs/uses.md; benchmarks/uses_scale.py measures that).
    work = tempfile.mkdtemp(prefix="zerolint-startup-")
    copies = {}
    for case, src in (("plain", args.file), ("auto", str(AUTO))):
        os.makedirs(os.path.join(work, case))
        copies[case] = shutil.copy(src, os.path.join(work, case, os.path.basename(src)))
    files = {"plain": copies["plain"], "color": copies["plain"], "auto": copies["auto"]}
    flags = {"plain": [], "color": ["--color", "always"], "auto": []}
    commands: dict[str, tuple[list[str], str]] = {}
    for case in args.case or CASES:
        target = files[case]
        cwd = os.path.dirname(target)  # the file's own directory: what a user's check would see
        commands[f"{case}:json.load"] = [python, "-c", "import json, sys; json.load(open(sys.argv[1]))", target], cwd
        commands.update({f"{case}:{name}": ([path, "check", *flags[case], target], cwd) for name, path in installs})
    cpu: dict[str, list[float]] = {n: [] for n in commands}
    wall: dict[str, list[float]] = {n: [] for n in commands}
    for _ in range(args.runs):
        for name, (cmd, cwd) in commands.items():
            c, w, rc = cpu_of(cmd, cwd)
            if rc not in (0, 1):
                print(f"{name}: exit status {rc} ({' '.join(cmd)})", file=sys.stderr)
                return 2
            cpu[name].append(c)
            wall[name].append(w)
    print(f"{'command':<18} {'CPU median':>11} {'CPU min':>9} {'wall median':>12} {'vs json.load':>13}")
    for name in commands:
        base = statistics.median(cpu[name.split(":")[0] + ":json.load"])
        med = statistics.median(cpu[name])
        print(f"{name:<18} {med * 1000:9.1f} ms {min(cpu[name]) * 1000:6.1f} ms "
              f"{statistics.median(wall[name]) * 1000:9.1f} ms {med / base:12.2f}x")
    shutil.rmtree(work, ignore_errors=True)
    print(f"{args.runs} interleaved runs each; load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
