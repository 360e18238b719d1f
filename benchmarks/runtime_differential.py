"""The runtime differential as a table: zerolint against DeepSpeed's own initialize + 3 steps, per config.

    python benchmarks/runtime_differential.py                          # the full set on CPU, as a table
    python benchmarks/runtime_differential.py --write-doc              # ... and regenerate the doc's CPU section
    DS_ACCELERATOR=cuda python benchmarks/runtime_differential.py --accelerator cuda --out h200.json   # on a GPU host
    python benchmarks/runtime_differential.py --from h200.json --write-doc   # that file into the doc's "H200 run"

`--out FILE` saves every config with DeepSpeed's run (phase, error, facts); `--from FILE` compares a saved run with
the zerolint of this checkout without running DeepSpeed again.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from differential.mutations import Case  # noqa: E402
from runtime_differential import cases as rt_cases  # noqa: E402
from runtime_differential import compare  # noqa: E402
from runtime_differential.runner import Run, RuntimeRunner  # noqa: E402

DOC = ROOT / "docs" / "runtime-differential.md"
FULL_COUNT, SEED = 320, 0


def inputs(count: int, seed: int, subset: int | None = None) -> list[Case]:
    bases = rt_cases.base_cases()
    todo = bases + rt_cases.mutations(count, seed, bases)
    return todo if subset is None else subset_of(todo, subset)


def subset_of(todo: list[Case], n: int) -> list[Case]:
    """A deterministic spread: every k-th case (so every kind and base family keeps its share)."""
    if n >= len(todo):
        return todo
    step = len(todo) / n
    return [todo[int(i * step)] for i in range(n)]


def save(path: str, outcomes, hello: dict) -> None:
    data = {"hello": hello, "cases": [{"id": o.case.id, "kind": o.case.kind, "source": o.case.source,
                                        "what": o.case.what, "b64": base64.b64encode(o.case.data).decode(),
                                        "run": o.run.to_json()} for o in outcomes]}
    Path(path).write_text(json.dumps(data, indent=1, default=str), "utf-8")


def load(path: str, accelerator: str):
    data = json.loads(Path(path).read_text("utf-8"))
    allow = compare.load_allowlist()
    outcomes = []
    for c in data["cases"]:
        case = Case(c["id"], c["kind"], base64.b64decode(c["b64"]), c.get("source", ""), c.get("what", ""))
        diagnostics = compare.lint(case.data, data["hello"].get("torch"))  # the torch the run used (ZL612)
        outcomes.append(compare.compare(case, Run.from_json(c["run"]), diagnostics, allow,
                                        data["hello"].get("accelerator", accelerator)))
    return outcomes, data["hello"], allow


def report(outcomes, allow, hello: dict) -> str:
    slow = max(outcomes, key=lambda o: o.run.seconds or 0)
    lines = [f"{len(outcomes)} configs, DeepSpeed {hello.get('deepspeed')}, torch {hello.get('torch')}, "
             f"accelerator {hello.get('accelerator')} ({hello.get('machine', '')}); "
             f"{hello.get('seconds', '?')} s in all, slowest config {slow.run.seconds:.1f} s ({slow.case.id})", "",
             compare.format_table(compare.table(outcomes)), "", "Per rule (claims of a failure, and silent claims):",
             "", compare.format_table(compare.rule_table(outcomes), "rule")]
    bad = [o for o in outcomes if o.disagreements]
    lines += ["", f"Disagreements: {len(bad)}"]
    lines += ["", "```", *["\n".join([compare.describe(o, 300), ""]) for o in bad], "```"] if bad else []
    gaps = sorted({d.code for o in outcomes for d, s in o.silent if s == "gap"})
    lines += ["", "Silent claims with no predicate on the facts (gaps): " + (", ".join(gaps) or "none")]
    reviewed = sorted({d.code for o in outcomes for d, s in o.silent if s == "reviewed"})
    lines += ["", "Silent claims no fact can show, reviewed (compare.NO_FACT): " + (", ".join(
        f"{c} ({compare.NO_FACT[c]})" for c in reviewed) or "none")]
    used = [f"{e.id} ({e.used})" for e in allow if e.used]
    lines += ["", "Allowlisted: " + (", ".join(used) or "none")]
    return "\n".join(lines)


def write_doc(section: str, text: str) -> None:
    start, end = f"<!-- {section}:start -->", f"<!-- {section}:end -->"
    doc = DOC.read_text("utf-8")
    if start not in doc or end not in doc:
        raise SystemExit(f"{DOC} has no {start} ... {end} markers")
    head, rest = doc.split(start, 1)
    _, tail = rest.split(end, 1)
    DOC.write_text(f"{head}{start}\n{text}\n{end}{tail}", "utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=FULL_COUNT, help="mutations (besides every example and corpus config)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--subset", type=int, default=None, help="a deterministic spread of this many configs")
    ap.add_argument("--accelerator", default=os.environ.get("DS_ACCELERATOR", "cpu"), choices=("cpu", "cuda"))
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per config")
    ap.add_argument("--jobs", type=int, default=1, help="configs run side by side (forks of one warm server)")
    ap.add_argument("--out", help="save the configs and DeepSpeed's runs to this JSON file")
    ap.add_argument("--from", dest="from_file", help="compare a saved run instead of running DeepSpeed")
    ap.add_argument("--write-doc", action="store_true", help="put the table into docs/runtime-differential.md")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    if args.from_file:
        outcomes, hello, allow = load(args.from_file, args.accelerator)
    else:
        allow = compare.load_allowlist()
        todo = inputs(args.count, args.seed, args.subset)
        with RuntimeRunner(args.accelerator, timeout=args.timeout) as runner:
            hello = {"accelerator": args.accelerator, **runner.info.get("versions", {}),
                     "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                     "count": args.count, "seed": args.seed, "subset": args.subset, "jobs": args.jobs}
            outcomes = compare.run(todo, runner, allow, jobs=args.jobs, progress=lambda i: print(
                f"\r{i}/{len(todo)}", end="", file=sys.stderr, flush=True))
            print(file=sys.stderr)
        hello["seconds"] = round(time.monotonic() - t0)  # the run's own time, kept for a later --from
        if args.out:
            save(args.out, outcomes, hello)
    text = report(outcomes, allow, hello)
    print(text)
    if args.write_doc:
        write_doc("h200-run" if hello.get("accelerator") == "cuda" else "cpu-run", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
