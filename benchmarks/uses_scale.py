#!/usr/bin/env python
"""Use discovery at repository scale (issue 24): `check .` (which reads the uses) against `check --no-uses .` on a
generated tree.

    python benchmarks/uses_scale.py [--files 10000] [--runs 3]

The tree (in a temp dir, removed after) holds FILES files in nested directories, in the mix of a large training
monorepo: 2% DeepSpeed configs, 8% launch scripts naming them (deepspeed / torchrun / accelerate launch, with
variables), 40% Python (a tenth of it training code with a Trainer or deepspeed.initialize), 20% Markdown, 30% other
text and data. Prints the wall time of each command (best of RUNS), the ratio, and the time per file; and the same
for half the files, and what each added file costs between the two sizes, to show that the cost grows linearly.
Aim (issue 24): `check .` within 1.5x of `check --no-uses .` at 10,000 files. The scan runs in child processes
(one per core but the caller's) from the moment the pipeline is made, so on several cores most of it hides behind
the loading of the rules and the search for the files to lint.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

CONFIG = '{{"train_micro_batch_size_per_gpu": {mb}, "gradient_accumulation_steps": 1,\n' \
         ' "zero_optimization": {{"stage": {stage}}}, "bf16": {{"enabled": true}}}}\n'


def build(root: str, files: int, seed: int = 0) -> None:
    rnd = random.Random(seed)
    os.makedirs(os.path.join(root, ".git"))
    configs = []
    for i in range(files):
        d = os.path.join(root, f"pkg{i % 50}", f"sub{i % 7}")
        os.makedirs(d, exist_ok=True)
        kind = rnd.random()
        if kind < 0.02:
            name = f"ds_{i}.json"
            configs.append(os.path.relpath(os.path.join(d, name), root))
            text = CONFIG.format(mb=rnd.choice([1, 2, 4]), stage=rnd.choice([1, 2, 3]))
        elif kind < 0.10:
            name = f"run_{i}.sh"
            cfg = rnd.choice(configs) if configs else "ds.json"
            launcher = rnd.choice(["deepspeed --num_gpus 8", "torchrun --nproc_per_node 4 --nnodes 2",
                                   "accelerate launch --num_processes 8"])
            text = f"#!/bin/bash\nCFG={cfg}\n{launcher} train_{i}.py \\\n  --deepspeed $CFG --bf16\n"
        elif kind < 0.50:
            name = f"mod_{i}.py"
            if rnd.random() < 0.1:
                text = ("import deepspeed\nfrom transformers import Trainer\n"
                        f"def main():\n    Trainer(model=None).train()  # {i}\n")
            else:
                text = "".join(f"def f{j}(x):\n    return x * {j}\n\n" for j in range(rnd.randint(5, 40)))
        elif kind < 0.70:
            name = f"doc_{i}.md"
            text = "# Notes\n\n" + "Some prose about training. " * rnd.randint(10, 200) + "\n"
        else:
            name = f"data_{i}.txt"
            text = "\n".join(str(rnd.random()) for _ in range(rnd.randint(10, 300))) + "\n"
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(text)


def timed(cmd: list[str], cwd: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        best = min(best, time.perf_counter() - t0)
        if p.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-2000:]}")
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    base = [sys.executable, "-m", "zerolint", "check", "--output-format", "concise", "--exit-zero"]
    print(f"cores: {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()}")
    print(f"{'files':>7} {'--no-uses':>9} {'check .':>9} {'ratio':>6} {'ms/file (uses)':>15}")
    rows = []
    for n in (args.files // 2, args.files):
        root = tempfile.mkdtemp(prefix="zerolint-uses-")
        try:
            build(root, n)
            plain = timed(base + ["--no-uses", "."], root, args.runs)
            uses = timed(base + ["."], root, args.runs)
            rows.append((n, plain, uses))
            print(f"{n:>7} {plain:>8.2f}s {uses:>8.2f}s {uses / plain:>6.2f} {1000 * uses / n:>15.3f}")
        finally:
            shutil.rmtree(root, ignore_errors=True)
    (n0, p0, u0), (n1, p1, u1) = rows
    print(f"each file added between {n0} and {n1}: --no-uses {1e6 * (p1 - p0) / (n1 - n0):.1f} us, "
          f"check . {1e6 * (u1 - u0) / (n1 - n0):.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
