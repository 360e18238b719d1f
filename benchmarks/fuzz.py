"""The long fuzz run: >= 100,000 hostile inputs through parse -> view -> rules -> every reporter, and a sample
through the command line. Results go to docs/fuzzing.md.

    python benchmarks/fuzz.py --cases 100000              # about 20-40 minutes on 2 busy cores
    python benchmarks/fuzz.py --cases 2000 --start 5000   # a slice; case numbers are seeds, so reruns are exact
    python tests/fuzzcases.py SEED GENERATOR > case.bin   # the bytes of one case

Case N is `tests/fuzzcases.py make_case(random.Random(N))` linted under `random_settings` of the same generator
(target, DeepSpeed version, world size, sometimes model size and GPU memory); 5% of cases run with --max-depth
5000. Each case must pass `check_case` (no exception, no ZL000, located diagnostics, well-formed and escaped
output in all five formats) within --timeout seconds. Every --cli-every-th case also goes through `zerolint check
- --format F` in-process (click's runner: exit code 0, 1 or 2, no exception), and --processes cases through a
real `python -m zerolint` process (exit 0/1/2, no "Traceback" on stderr).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

import fuzzcases as fc  # noqa: E402


class Timeout(BaseException):  # not an Exception: check_case must not turn it into an ordinary failure
    pass


def _alarm(signum, frame):
    raise Timeout()


def cli_in_process(runner, data: bytes, fmt: str) -> str | None:
    from zerolint.cli import main

    r = runner.invoke(main, ["check", "--format", fmt, "-"], input=data)
    if r.exit_code not in (0, 1, 2):
        return f"exit code {r.exit_code}"
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return f"{type(r.exception).__name__}: {r.exception}"
    return None


def run(args) -> dict:
    from click.testing import CliRunner

    from zerolint.base.fsio import Limits

    runner = CliRunner()
    signal.signal(signal.SIGALRM, _alarm)
    try:  # a runaway case fails with MemoryError instead of waking the OOM killer
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (args.memory_gb << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ImportError, ValueError, OSError):
        pass
    per_gen: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    failures: dict[str, dict] = {}
    codes: collections.Counter = collections.Counter()
    slowest: list[tuple[float, int, str, int]] = []
    cli_runs = 0
    t0 = time.perf_counter()
    last = t0
    for seed in range(args.start, args.start + args.cases):
        rnd = random.Random(seed)
        name, data = fc.make_case(rnd)
        settings = fc.random_settings(rnd)
        limits = Limits(max_depth=5000) if rnd.random() < 0.05 else None
        per_gen[name]["cases"] += 1
        t = time.perf_counter()
        problem = None
        signal.alarm(args.timeout)
        try:
            out = fc.check_case(data, settings, limits)
            codes.update(out.codes)
            per_gen[name]["diagnostics"] += out.diagnostics
            if args.cli_every and seed % args.cli_every == 0 and len(data) <= 1_000_000:
                problem = cli_in_process(runner, data, fc.FORMATS[seed // args.cli_every % len(fc.FORMATS)])
                cli_runs += 1
                if problem:
                    problem = "cli: " + problem
        except fc.InvariantError as e:
            problem = str(e)
        except Timeout:
            problem = f"took more than {args.timeout} s"
        finally:
            signal.alarm(0)
        dt = time.perf_counter() - t
        slowest.append((dt, seed, name, len(data)))
        if len(slowest) > 200:
            slowest = sorted(slowest, reverse=True)[:20]
        if problem:
            per_gen[name]["failures"] += 1
            key = problem[:160]
            if key not in failures:
                failures[key] = {"seed": seed, "generator": name, "count": 0, "message": problem[:1000]}
                print(f"FAIL case {seed} ({name}): {problem[:300]}", flush=True)
            failures[key]["count"] += 1
        now = time.perf_counter()
        if now - last > 30:
            done = seed - args.start + 1
            print(f"  {done} cases, {now - t0:.0f} s, {sum(f['count'] for f in failures.values())} failures",
                  flush=True)
            last = now
    elapsed = time.perf_counter() - t0

    # A sample through real processes: exit status and stderr as a user sees them.
    proc_fail = []
    rnd = random.Random(args.start)
    for i in range(args.processes):
        name, data = fc.make_case(rnd)
        if len(data) > 2_000_000:
            continue
        fmt = fc.FORMATS[i % len(fc.FORMATS)]
        p = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", fmt, "-"], input=data,
                           capture_output=True, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"}, timeout=120)
        if p.returncode not in (0, 1, 2) or b"Traceback" in p.stderr:
            proc_fail.append({"i": i, "generator": name, "exit": p.returncode, "stderr": p.stderr[-500:].decode()})
    return {
        "cases": args.cases, "start": args.start, "seconds": round(elapsed, 1),
        "cases_per_s": round(args.cases / elapsed, 1), "cli_in_process": cli_runs, "processes": args.processes,
        "process_failures": proc_fail, "failures": list(failures.values()),
        "per_generator": {k: dict(v) for k, v in sorted(per_gen.items())},
        "codes_seen": dict(codes.most_common()),
        "slowest": [{"seconds": round(s, 2), "seed": sd, "generator": g, "bytes": b}
                    for s, sd, g, b in sorted(slowest, reverse=True)[:10]],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--start", type=int, default=0, help="first case number (seed)")
    ap.add_argument("--timeout", type=int, default=60, help="seconds one case may take")
    ap.add_argument("--memory-gb", type=int, default=6, help="address-space limit of the run (GiB)")
    ap.add_argument("--cli-every", type=int, default=10, help="run every Nth case through the CLI in-process (0: none)")
    ap.add_argument("--processes", type=int, default=100, help="cases run through a real `python -m zerolint`")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    args = ap.parse_args()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"
    print(f"fuzzing {args.cases} cases from seed {args.start} (load average {load})", flush=True)
    res = run(args)
    res["load_before"] = load
    res["load_after"] = " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() \
        else "n/a"
    total_fail = sum(f["count"] for f in res["failures"]) + len(res["process_failures"])
    print(f"\n{res['cases']} cases in {res['seconds']} s ({res['cases_per_s']}/s), {res['cli_in_process']} also "
          f"through the CLI in-process, {res['processes']} through real processes: {total_fail} failures")
    print(f"{'generator':<14} {'cases':>7} {'diagnostics':>12} {'failures':>9}")
    for g, c in res["per_generator"].items():
        print(f"{g:<14} {c.get('cases', 0):>7} {c.get('diagnostics', 0):>12} {c.get('failures', 0):>9}")
    for f in res["failures"]:
        print(f"FAIL x{f['count']} first case {f['seed']} ({f['generator']}): {f['message'][:300]}")
    for f in res["process_failures"]:
        print(f"PROCESS FAIL {f}")
    print("slowest:", ", ".join(f"{s['seconds']} s (case {s['seed']}, {s['generator']}, {s['bytes']:,} bytes)"
                                 for s in res["slowest"][:5]))
    print(f"rule codes seen: {len(res['codes_seen'])}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    sys.exit(1 if total_fail else 0)


if __name__ == "__main__":
    main()
