"""Hostile inputs under the size limits (issue 12 item 9): time and peak memory of `zerolint check` on each.

    python benchmarks/dos.py                 # every case, one subprocess each, 300 s limit per case
    python benchmarks/dos.py --only array    # one case

Each case runs `zerolint check --format json -o /dev/null FILE` (and a SARIF report, whose size is printed) in a
process of its own; the figures are the wall time, the peak resident memory (ru_maxrss of the child) and the exit
code. Before/after figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def yaml_alias_bomb() -> tuple[str, bytes]:
    lines = ["a0: &a0 [bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "acc.yaml", ("\n".join(lines) + "\nmixed_precision: *a8\ndistributed_type: DEEPSPEED\n").encode()


def yaml_deep() -> tuple[str, bytes]:
    return "acc.yaml", ("mixed_precision: " + "[" * 5000 + "]" * 5000 + "\n").encode()


def json_array_one_line() -> tuple[str, bytes]:
    return "ds.json", ('{"train_batch_size": 8, "x": [' + ",".join(["1"] * 2_000_000) + "]}").encode()


def long_string() -> tuple[str, bytes]:
    return "ds.json", ('{"train_batch_size": 8, "x": "' + "a" * (16 * 1024 * 1024 - 64) + '"}').encode()


def many_keys() -> tuple[str, bytes]:
    return "ds.json", ("{" + ",".join(f'"k{i}": {i}' for i in range(900_000)) + "}").encode()


def misspelled_keys() -> tuple[str, bytes]:
    members = ",\n".join(f'  "zero_optimisation_{i}": {{}}' for i in range(100_000))
    return "ds.json", ("{\n" + members + "\n}\n").encode()


def zeros_2mb() -> tuple[str, bytes]:  # issue 22: 47.7 s and 356 MB (json.load 0.5 s)
    return "ds.json", ('{"train_batch_size": 8, "x": [' + ",".join(["0"] * 1_000_000) + "]}").encode()


def array_16mb() -> tuple[str, bytes]:
    return "ds.json", ('{"train_batch_size": 8, "x": [' + ",".join(["1"] * 8_000_000) + "]}").encode()[:16_000_000]


def million_keys() -> tuple[str, bytes]:
    return "ds.json", ("{" + ",".join(f'"k{i}": {i}' for i in range(1_000_000)) + "}").encode()[:16_700_000]


def near_miss_sections() -> tuple[str, bytes]:  # 300k section names one edit from a DeepSpeed one
    return "ds.json", ('{"train_batch_size": 8, ' + ", ".join(f'"zero_optimisation_{i}": {{}}' for i in range(300_000))
                       + "}").encode()


def duplicate_keys() -> tuple[str, bytes]:
    return "ds.json", ("{" + ", ".join(['"train_batch_size": 8'] * 700_000) + "}").encode()


def flat_yaml() -> tuple[str, bytes]:  # a flat 10 MB Accelerate YAML
    return "acc.yaml", ("distributed_type: DEEPSPEED\n" + "".join(f"k{i}: v{i}\n" for i in range(600_000))).encode()


CASES = {"yaml-alias": yaml_alias_bomb, "yaml-depth": yaml_deep, "array": json_array_one_line,
         "string": long_string, "keys": many_keys, "misspelled": misspelled_keys, "zeros-2mb": zeros_2mb,
         "array-16mb": array_16mb, "keys-1m": million_keys, "near-miss-300k": near_miss_sections,
         "duplicates-700k": duplicate_keys, "yaml-flat-10mb": flat_yaml}


def reader_seconds(file_name: str, data: bytes) -> float | None:
    """What the consumer's own reader takes on the bytes (json.loads; yaml.safe_load for YAML, in C when present):
    the baseline of "within 10x per MB"."""
    t = time.perf_counter()
    try:
        if file_name.endswith(".yaml"):
            import yaml

            yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        else:
            json.loads(data)
    except Exception:  # noqa: BLE001 - a hostile input may not parse: then no baseline
        return None
    return time.perf_counter() - t


def run(name: str, limit: float) -> str:
    file_name, data = CASES[name]()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / file_name
        path.write_bytes(data)
        sarif = Path(d) / "out.sarif"
        cmd = [sys.executable, "-m", "zerolint", "check", "--format", "json", "--format", "sarif", "-o", "out.json",
               "-o", str(sarif), file_name]
        t = time.perf_counter()
        with open(Path(d) / "stderr", "wb") as err:
            p = subprocess.Popen(cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=err,
                                 env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
            rc = "timeout"
            while True:  # os.wait4: the child's own peak memory (RUSAGE_CHILDREN would accumulate over cases)
                pid, status, usage = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    rc = str(os.waitstatus_to_exitcode(status))
                    break
                if time.perf_counter() - t > limit:
                    p.kill()
                    _, _, usage = os.wait4(p.pid, 0)
                    break
                time.sleep(0.05)
            p.returncode = 0  # reaped above
        tail = (Path(d) / "stderr").read_text(errors="replace").strip().splitlines()[-1:] or [""]
        wall = time.perf_counter() - t
        base = reader_seconds(file_name, data)
        ratio = f"{wall / base:6.1f}x the reader" if base else "   (the reader fails)"
        rss = usage.ru_maxrss
        size = sarif.stat().st_size if sarif.exists() else 0
        return (f"{name:15} {len(data) / 1e6:6.1f} MB  {wall:7.1f} s  {ratio}  peak RSS {rss / 1024:7.0f} MB  "
                f"exit {rc:>7}  SARIF {size / 1e6:6.2f} MB  {tail[0][:100]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=sorted(CASES), action="append")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds per case")
    args = ap.parse_args()
    for name in args.only or CASES:
        print(run(name, args.limit), flush=True)


if __name__ == "__main__":
    main()
