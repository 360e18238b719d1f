"""Benchmark `zerolint check` against the alternatives, side by side, in one run.

    python benchmarks/bench.py                       # everything (about 3-6 minutes on 2 cores)
    python benchmarks/bench.py --runs 40 --quick     # skip DeepSpeed and the 10 MB scaling run
    python benchmarks/bench.py --one-file --quick --zerolint before=A/bin/zerolint --zerolint after=B/bin/zerolint
                                                     # normal (non-editable) installs, side by side

What it prints (and what docs/benchmarks.md records):

1. One-file whole-process wall time, median of --runs, the commands interleaved round-robin (in a shuffled order
   each round) so that load on the machine hits every command alike:
   - `zerolint check FILE` (the installed console script),
   - `python -c "import json; json.load(open(FILE))"` (the floor: interpreter start plus a JSON parse),
   - `check-jsonschema --schemafile src/zerolint/data/schemas/deepspeed-<line>.json FILE`
     (if installed: --check-jsonschema PATH or on PATH),
   - `python -c "from deepspeed.runtime.config import DeepSpeedConfig; DeepSpeedConfig(FILE)"` with
     DS_ACCELERATOR=cpu (import included), if deepspeed is importable;
   and each one's ratio to the json baseline.
2. Throughput: the real-world corpus repeated to --files files (default 10,000), linted in one process, both
   through the API (`lint_bytes` on bytes already read) and as one `zerolint check -q DIR` process.
3. Scaling: a config grown to 1, 2, 5 and 10 MB (one object with many sections, the way a huge config really
   grows), checked in-process; time per MB should stay flat (linear, not quadratic).

Subprocesses run with PYTHONDONTWRITEBYTECODE unset so that they use cached bytecode, as an installed package
does (the first, warm-up run of each command writes it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
DEFAULT_FILE = ROOT / "fixtures" / "examples" / "seed" / "ds_zero3_offload.json"
CORPUS = ROOT / "tests" / "data" / "corpus" / "real-world"


def machine() -> dict:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "platform": platform.platform()}


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def env() -> dict:
    e = dict(os.environ)
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    e.pop("GITHUB_ACTIONS", None)
    e["NO_COLOR"] = "1"
    e["DS_ACCELERATOR"] = "cpu"
    return e


def timed(cmd: list[str], environ: dict, cwd: Path | None = None) -> tuple[float, int]:
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environ, cwd=cwd)
    return time.perf_counter() - t, p.returncode


def zerolint_cmd() -> list[str]:
    script = Path(sys.executable).with_name("zerolint")
    return [str(script)] if script.exists() else [sys.executable, "-m", "zerolint"]


def commands(file: Path, args) -> dict[str, list[str]]:
    from zerolint.model.versions import Version, schema_line
    from zerolint.model.view import default_deepspeed_version

    py = sys.executable
    cmds = {
        "zerolint check": zerolint_cmd() + ["check", str(file)],
        "json.load": [py, "-c", f"import json; json.load(open({str(file)!r}))"],
    }
    for spec in args.zerolint:  # NAME=PATH: another installation's console script, e.g. a wheel in a venv
        name, _, script = spec.partition("=")
        cmds[f"zerolint check [{name}]"] = [script, "check", str(file)]
    cjs = args.check_jsonschema or shutil.which("check-jsonschema")
    if cjs:
        ds_line = schema_line(Version(default_deepspeed_version()))
        schema = ROOT / "src" / "zerolint" / "data" / "schemas" / f"deepspeed-{ds_line}.json"
        cmds["check-jsonschema"] = [cjs, "--schemafile", str(schema), str(file)]
    if not args.quick and subprocess.run([py, "-c", "import importlib.util as u; "
                                          "raise SystemExit(u.find_spec('deepspeed') is None)"]).returncode == 0:
        cmds["DeepSpeedConfig"] = [py, "-c", "from deepspeed.runtime.config import DeepSpeedConfig; "
                                             f"DeepSpeedConfig({str(file)!r})"]
    return cmds


def one_file(file: Path, args) -> dict:
    # The file sits alone in a temporary directory, as a config usually does (no pyproject.toml of zerolint's own
    # repository above it to parse), and every command runs from there.
    tmp = Path(tempfile.mkdtemp(prefix="zerolint-bench-"))
    shutil.copy(file, tmp / file.name)
    file = tmp / file.name
    cmds = commands(file, args)
    environ = env()
    times: dict[str, list[float]] = {k: [] for k in cmds}
    codes: dict[str, int] = {}
    for name, cmd in cmds.items():  # warm-up: bytecode, page cache
        _, codes[name] = timed(cmd, environ, tmp)
    slow = {"DeepSpeedConfig"}
    for i in range(args.runs):
        order = list(cmds)
        random.shuffle(order)
        for name in order:
            if name in slow and i >= args.slow_runs:
                continue
            times[name].append(timed(cmds[name], environ, tmp)[0])
    base = statistics.median(times["json.load"])
    out = {}
    for name, ts in times.items():
        med = statistics.median(ts)
        out[name] = {"median_ms": round(1e3 * med, 1), "min_ms": round(1e3 * min(ts), 1), "runs": len(ts),
                     "ratio_to_json": round(med / base, 2), "exit": codes[name], "cmd": " ".join(cmds[name])}
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def corpus_bytes() -> list[tuple[str, bytes]]:
    files = sorted(CORPUS.glob("*.json")) if CORPUS.is_dir() else []
    if not files:
        files = sorted((ROOT / "fixtures" / "examples" / "seed").glob("*.json"))
    return [(str(p), p.read_bytes()) for p in files]


def throughput(n: int) -> dict:
    from zerolint.pipeline import lint_bytes

    base = corpus_bytes()
    items = [base[i % len(base)] for i in range(n)]
    lint_bytes(items[0][1], items[0][0])  # imports, schema load
    t = time.perf_counter()
    findings = 0
    for path, data in items:
        findings += len(lint_bytes(data, path).diagnostics)
    api_s = time.perf_counter() - t

    with tempfile.TemporaryDirectory() as tmp:
        for i, (path, data) in enumerate(items):
            Path(tmp, f"{i:05d}_{Path(path).name}").write_bytes(data)
        cmd = zerolint_cmd() + ["check", "-q", tmp]
        timed(cmd, env())
        cli_s = statistics.median(timed(cmd, env())[0] for _ in range(3))
    return {"files": n, "distinct": len(base), "findings": findings, "api_s": round(api_s, 2),
            "api_files_per_s": round(n / api_s), "cli_s": round(cli_s, 2), "cli_files_per_s": round(n / cli_s)}


def big_config(target_bytes: int) -> bytes:
    """A DeepSpeed config grown to about target_bytes: the real sections, then many extra sections (unknown
    keys with nested objects, arrays and strings), as generated or concatenated configs grow."""
    base = json.loads(DEFAULT_FILE.read_text())
    parts = [json.dumps(base, indent=4)[:-2]]
    size, i = len(parts[0]), 0
    while size < target_bytes:
        block = json.dumps({f"custom_section_{i}": {"enabled": True, "ratio": i / 7, "name": f"block {i}",
                                                    "layers": list(range(i % 50)),
                                                    "nested": {"a": {"b": [i, "x", None, False]}}}}, indent=4)
        chunk = ",\n" + block[2:-2]
        parts.append(chunk)
        size += len(chunk)
        i += 1
    parts.append("\n}\n")
    return "".join(parts).encode()


def scaling(sizes_mb: list[float], reps: int) -> dict:
    from zerolint.base.fsio import Limits
    from zerolint.pipeline import lint_bytes

    lint_bytes(DEFAULT_FILE.read_bytes(), "warm")
    rows = []
    for mb in sizes_mb:
        data = big_config(int(mb * 1_000_000))
        ts, n = [], 0
        for _ in range(reps):
            t = time.perf_counter()
            n = len(lint_bytes(data, f"big-{mb}MB.json", limits=Limits(max_bytes=64 << 20)).diagnostics)
            ts.append(time.perf_counter() - t)
        med = statistics.median(ts)
        rows.append({"mb": mb, "bytes": len(data), "median_s": round(med, 3),
                     "s_per_mb": round(med / (len(data) / 1e6), 3), "findings": n})
    return {"rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", type=Path, default=DEFAULT_FILE)
    ap.add_argument("--runs", type=int, default=30, help="runs per command (medians)")
    ap.add_argument("--slow-runs", type=int, default=10, help="runs of the DeepSpeedConfig command")
    ap.add_argument("--files", type=int, default=10_000, help="files in the throughput run")
    ap.add_argument("--sizes", default="1,2,5,10", help="MB sizes for the scaling run")
    ap.add_argument("--scaling-reps", type=int, default=3)
    ap.add_argument("--check-jsonschema", default=None, help="path of the check-jsonschema executable")
    ap.add_argument("--quick", action="store_true", help="skip DeepSpeedConfig and the scaling run")
    ap.add_argument("--json", type=Path, default=None, help="also write the results as JSON here")
    ap.add_argument("--zerolint", action="append", default=[], metavar="NAME=PATH",
                    help="also time this zerolint console script (repeatable), e.g. a non-editable install")
    ap.add_argument("--one-file", action="store_true", help="only the one-file comparison")
    args = ap.parse_args()

    res = {"machine": machine(), "load_before": loadavg(), "file": str(args.file)}
    print(f"machine: {res['machine']['cores']} cores, {res['machine']['cpu']}, Python {res['machine']['python']}")
    print(f"load average before: {res['load_before']}")

    res["one_file"] = one_file(args.file, args)
    print(f"\none file ({args.file.name}), whole process, median of {args.runs} interleaved runs:")
    for name, r in res["one_file"].items():
        print(f"  {name:<28} {r['median_ms']:8.1f} ms  (min {r['min_ms']:.1f}, n={r['runs']})  "
              f"{r['ratio_to_json']:5.2f}x json.load   exit {r['exit']}")
    if args.one_file:
        return

    res["throughput"] = t = throughput(args.files)
    print(f"\nthroughput: {t['files']} files ({t['distinct']} distinct real-world configs repeated), one process:")
    print(f"  API lint_bytes      {t['api_s']:7.2f} s  {t['api_files_per_s']:6d} files/s")
    print(f"  zerolint check DIR  {t['cli_s']:7.2f} s  {t['cli_files_per_s']:6d} files/s (reads the files, prints)")

    if not args.quick:
        res["scaling"] = s = scaling([float(x) for x in args.sizes.split(",")], args.scaling_reps)
        print("\nscaling (in-process lint_bytes, median of %d):" % args.scaling_reps)
        for r in s["rows"]:
            print(f"  {r['mb']:5.1f} MB  {r['median_s']:7.3f} s  {r['s_per_mb']:6.3f} s/MB  ({r['findings']} findings)")
        per = [r["s_per_mb"] for r in s["rows"]]
        print(f"  s/MB largest/smallest: {per[-1] / per[0]:.2f} (1.0 = linear)")
    res["load_after"] = loadavg()
    print(f"\nload average after: {res['load_after']}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
