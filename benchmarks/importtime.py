"""Where `zerolint check` spends its start-up: `python -X importtime`, medians over several runs.

    python benchmarks/importtime.py                        # this checkout
    python benchmarks/importtime.py --tree /tmp/before     # another tree (e.g. `git archive OLD | tar -x -C ...`)

Prints the whole-process wall time, the sum of all imports, and the top modules by cumulative and by self time
(microseconds, medians of --runs). The config checked is the seed ZeRO-3 example, copied into a directory of its
own. Rule modules loaded through importlib.import_module (or the rule bundle) do not show in -X importtime: their
cost is in the `[rules]` line, measured separately.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "fixtures" / "examples" / "seed" / "ds_zero3_offload.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=None, help="run zerolint from this source tree (PYTHONPATH)")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if args.tree:
        env["PYTHONPATH"] = str(args.tree / "src") if (args.tree / "src").is_dir() else str(args.tree)
    tmp = Path(tempfile.mkdtemp(prefix="zerolint-importtime-"))
    shutil.copy(CONFIG, tmp / CONFIG.name)
    cmd = [sys.executable, "-X", "importtime", "-m", "zerolint", "check", "--quiet", CONFIG.name]
    rules_cmd = [sys.executable, "-c", "import time, zerolint.rules.engine; t = time.perf_counter(); "
                 "from zerolint.rules.ruleset import RuleSet; RuleSet.builtin(); print(time.perf_counter() - t)"]
    subprocess.run(cmd, cwd=tmp, env=env, capture_output=True)  # bytecode, caches
    subprocess.run(rules_cmd, cwd=tmp, env=env, capture_output=True)
    cum, self_, wall, totals, rules = collections.defaultdict(list), collections.defaultdict(list), [], [], []
    for _ in range(args.runs):
        t = time.perf_counter()
        err = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True).stderr
        wall.append(time.perf_counter() - t)
        total = 0
        for line in err.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            s, c, name = line[len("import time:"):].split("|")
            depth = (len(name) - len(name.lstrip())) // 2
            name = name.strip()
            self_[name].append(int(s))
            cum[name].append(int(c))
            if depth == 0:
                total += int(c)
        totals.append(total)
        out = subprocess.run(rules_cmd, cwd=tmp, env=env, capture_output=True, text=True).stdout
        rules.append(float(out.strip() or 0))
    shutil.rmtree(tmp, ignore_errors=True)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"
    print(f"tree: {args.tree or ROOT}   runs: {args.runs}   load average: {load}")
    print(f"wall (with -X importtime): {1e3 * statistics.median(wall):.1f} ms   all imports: "
          f"{statistics.median(totals) / 1e3:.1f} ms   [rules] RuleSet.builtin(): "
          f"{1e3 * statistics.median(rules):.1f} ms")
    for title, table in (("cumulative", cum), ("self", self_)):
        print(f"\ntop {args.top} by {title} time (us, median):")
        rows = sorted(((statistics.median(v), k) for k, v in table.items()), reverse=True)[:args.top]
        for us, name in rows:
            print(f"  {us:8.0f}  {name}")


if __name__ == "__main__":
    main()
