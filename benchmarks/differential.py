#!/usr/bin/env python
"""Differential agreement between zerolint and DeepSpeed 0.19.8's own config parse.

    python benchmarks/differential.py --count 5000 --seed 0
    python benchmarks/differential.py --count 2000 --source .cache/deepspeed-src/0.16.9   # an older line

Runs every fixture config, every corpus config, the seed examples and COUNT seeded mutations of them through
DeepSpeed's `DeepSpeedConfig(path)` (one worker process, world size 1) and through zerolint
(`--target deepspeed --world-size 1`), and prints the agreement table (see docs/differential.md). Exit status 1
when DeepSpeed rejects a config that zerolint reports no error for, when a zerolint diagnostic claims a parse
rejection on a config DeepSpeed accepts, or when a rule crashes (ZL000) — allowlisted disagreements
(tests/differential/allowlist.toml) excepted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from differential import harness, mutations  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=5000, help="generated mutations (default 5000)")
    ap.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    ap.add_argument("--show", type=int, default=20, help="disagreements to print in full (default 20)")
    ap.add_argument("--no-bases", action="store_true", help="only the mutations, not the fixtures/corpus/seed")
    ap.add_argument("--source", help="an unpacked DeepSpeed sdist to parse with instead of the installed one "
                    "(e.g. .cache/deepspeed-src/0.16.9); zerolint then checks with --deepspeed-version set to it")
    args = ap.parse_args(argv)

    t0 = time.monotonic()
    bases = mutations.base_cases()
    cases = ([] if args.no_bases else bases) + mutations.mutations(args.count, args.seed, bases)
    t1 = time.monotonic()
    allow = harness.load_allowlist()
    with harness.DeepSpeedWorker(source=args.source) as worker:
        if args.source:
            worker._start()  # the release's version, which zerolint is then told
        version = worker.version.strip()
        outcomes = harness.run(cases, worker, allow, **({"version": version} if args.source else {}))
    t2 = time.monotonic()

    print(f"zerolint vs DeepSpeed {version} (load_ds_config + DeepSpeedConfig, as deepspeed.initialize), world size 1; "
          f"{len(cases)} configs ({args.count} mutations, seed {args.seed})\n")
    print(harness.format_table(harness.table(outcomes)))
    bad = [o for o in outcomes if not o.ok]
    unmarked = Counter(d.code for o in outcomes for d in o.unmarked_claims)
    weak = Counter(d.code for o in outcomes for d in o.weak_claims)
    print()
    slowest = max(outcomes, key=lambda o: o.lint_seconds)
    print(f"generated in {t1 - t0:.1f}s, compared in {t2 - t1:.1f}s; slowest zerolint run "
          f"{slowest.lint_seconds:.2f}s ({slowest.case.id})")
    for e in allow:
        print(f"allowlist {e.id}: {e.used} case(s)" + ("  (unused in this run)" if not e.used else ""))
    if unmarked:
        print("parse claims made only in words (the rule does not set fails_at): "
              + ", ".join(f"{c} x{n}" for c, n in sorted(unmarked.items())))
    if weak:
        print("fails_at='parse' below severity error: " + ", ".join(f"{c} x{n}" for c, n in sorted(weak.items())))
    if bad:
        print(f"\n{len(bad)} disagreement(s); the first {min(args.show, len(bad))}:\n")
        for o in bad[: args.show]:
            print(harness.describe(o))
            print()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
