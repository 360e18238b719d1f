"""The estimate against measured GPU peaks (benchmarks/estimate_accuracy.py over docs/data/): the targets of issue 7
hold, and docs/estimate-accuracy.md is what the benchmark generates from the data now in the tree."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("estimate_accuracy", ROOT / "benchmarks" / "estimate_accuracy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def files():
    spec = importlib.util.spec_from_file_location("estimate_accuracy", ROOT / "benchmarks" / "estimate_accuracy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.default_files()


@pytest.fixture(scope="module")
def rows(bench):
    return [bench.row(source, raw) for source, raw in bench.load_files(files())]


def test_published_h200_measurements_are_transcribed(rows):
    h200 = [r for r in rows if r["source"] == "verify-feasibility-h200.json"]
    assert len(h200) == 28 and all(r["alloc"] for r in h200)


def test_estimate_within_10_percent_of_measured_peaks(rows):
    measured = [r for r in rows if r["ratio"] is not None]
    within = [r for r in measured if r["within_10"]]
    assert len(within) >= 0.9 * len(measured), [(r["case"], round(r["ratio"], 2)) for r in measured
                                                 if not r["within_10"]]
    assert all(0.8 <= r["ratio"] <= 1.15 for r in measured)


def test_margin_covers_measured_reserved(rows):
    assert all(r["margin_covers"] for r in rows if r["margin_covers"] is not None), \
        [r["case"] for r in rows if r["margin_covers"] is False]


def test_host_margin_covers_measured_rss_in_most_cases(rows):
    host = [r for r in rows if r["rss"]]
    assert sum(1 for r in host if r["host_margin_covers"]) >= 0.9 * len(host)


def test_far_better_than_deepspeeds_own_estimators(rows):
    both = [r for r in rows if r["ds_ratio"] and r["ratio"]]
    assert both and all(abs(r["ratio"] - 1) < abs(r["ds_ratio"] - 1) for r in both)


def test_lenient_reader_accepts_other_field_spellings(bench, tmp_path):
    p = tmp_path / "verify-gpu-test.json"
    p.write_text('{"results": [{"case": {"id": "x", "params": 1.3e9, "largest_layer": 6.6e7, "zero_stage": 3, '
                 '"offload": "optimizer+param", "gpus": 2, "micro_batch_size": 2, "seq": 512}, '
                 '"memory": {"max_memory_allocated_bytes": 3000000000, "max_memory_reserved_gib": 4.0, '
                 '"rss_peak_mib": 9000}}]}')
    (r,) = [bench.row(s, raw) for s, raw in bench.load_files([str(p)])]
    assert (r["stage"], r["offload"], r["world"], r["alloc"]) == (3, "opt+param", 2, 3_000_000_000)
    assert r["reserved"] == 4 * 2**30 and r["rss"] == 9000 * 2**20 and not r["activations"]


def test_doc_is_regenerated(bench):
    doc = ROOT / "docs" / "estimate-accuracy.md"
    rows = [bench.row(s, raw) for s, raw in bench.load_files(files())]
    expected = bench.markdown(rows, [os.path.basename(f) for f in files()],
                              {os.path.basename(f): bench.describe(f) for f in files()}, bench.pending_rows(rows))
    assert doc.read_text(encoding="utf-8") == expected, f"stale: run {bench.COMMAND}"


def test_probe_matrix_shapes_are_in_the_benchmark(bench, rows):
    """Every case of the GPU probe's default matrix (issue 14 section 5) is either measured in docs/data/ or listed
    with its estimate under "Awaiting measurement"; the probe's case dicts carry what the estimate reads."""
    names = [c["name"] for c in bench.probe_cases()]
    assert len(names) == len(set(names)) == 14
    pending = bench.pending_rows(rows)
    measured = {r["case"] for r in rows if r["alloc"] is not None}
    assert {r["case"] for r in pending} | (measured & set(names)) == set(names)
    by_name = {r["case"]: r for r in pending}
    if "1.3B-z2-offopt-short-1gpu" in by_name:
        assert by_name["1.3B-z2-offopt-short-1gpu"]["peak_moment"] == "init"
    doc = (ROOT / "docs" / "estimate-accuracy.md").read_text(encoding="utf-8")
    assert all(f"| {r['case']} |" in doc for r in pending)


def test_probe_json_alone_gives_the_table(bench, tmp_path, capsys):
    """What the lead runs on the probe's output: estimate vs measured for each case of the file."""
    case = dict(bench.probe_cases()[12], status="ok", peak_allocated_bytes=30 * 2**30, peak_reserved_bytes=36 * 2**30,
                host_rss_peak_bytes=6 * 2**30)
    assert case["name"] == "1.3B-z3-clientadamw-1gpu" and "optimizer" not in case["config"]
    p = tmp_path / "estimate-gpu-h200.json"
    p.write_text(json.dumps({"source": "probe", "cases": [case]}))
    assert bench.main([str(p)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("| estimate-gpu-h200 | 1.3B-z3-clientadamw-1gpu |"))
    assert "| 3 | - | 1 | yes | 28.34 | step: update | 30.00 | 1.06 | yes |" in line


def test_real_shapes_hold_the_same_standard():
    """The plan's candidates on five real architectures (docs/data/plan-verify-*.json, plan-gpu-*.json; 64 runs on
    an H200): the covered estimate within 10 % of every measured peak allocated, the estimate with its margin at or
    above the peak reserved in all but two (GPT-2 at ZeRO-3 and at micro batch 32, 0.1 % and 1.6 % under)."""
    if str(ROOT / "benchmarks") not in sys.path:  # a benchmark module (dataclasses need it importable by name)
        sys.path.insert(0, str(ROOT / "benchmarks"))
    module = importlib.import_module("plan_measured")
    rows = module.memory_rows(module.load())
    assert len(rows) == 64 and {r["set"] for r in rows} == {"A", "B", "C"}
    assert [r for r in rows if abs(r["ratio"] - 1) > 0.10] == []
    under = [(r["set"], r["model"], r["summary"]) for r in rows if not r["covers"]]
    assert under == [("A", "gpt2", "ZeRO-3, no offload, micro 16 x accum 1"),
                     ("B", "gpt2", "ZeRO-0, no offload, micro 32 x accum 1")]
