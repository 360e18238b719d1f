"""`zerolint estimate` from the command line: snapshots of the seed configs for TinyLlama-1.1B on 1, 2 and 8 GPUs
(the worked example of docs/estimate.md), --compare, JSON, exit codes.

Update the snapshots after an intended change with `ZEROLINT_UPDATE_SNAPSHOTS=1 python -m pytest
tests/test_estimate_cli.py` and review the diff."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from zerolint.cli import main

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = ROOT / "tests" / "snapshots" / "estimate"
MODEL = "fixtures/models/tinyllama-1.1b.json"
SEED = "fixtures/examples/seed"
UPDATE = os.environ.get("ZEROLINT_UPDATE_SNAPSHOTS") == "1"


@pytest.fixture(autouse=True)
def _cwd(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)


def run(*args):
    return CliRunner().invoke(main, ["estimate", *args])


def snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if UPDATE or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed (ZEROLINT_UPDATE_SNAPSHOTS=1 to accept)"


@pytest.mark.parametrize("config", ["ds_zero1", "ds_zero2", "ds_zero3_offload"])
@pytest.mark.parametrize("gpus", [1, 2, 8])
def test_seed_configs_for_tinyllama(config, gpus):
    r = run(f"{SEED}/{config}.json", "--model", MODEL, "--gpus-per-node", str(gpus), "--gpu-memory", "24GB")
    assert r.exit_code in (0, 1), r.output
    snapshot(f"{config}-{gpus}gpu.txt", r.output)
    assert "Per GPU, peak at" in r.output and "Per node host" in r.output


def test_why_stage3_offload_fits_where_stage1_does_not():
    r = run(f"{SEED}/ds_zero1.json", "--compare", f"{SEED}/ds_zero3_offload.json", "--model", MODEL,
            "--gpu-memory", "24GB", "--seq-len", "512")
    snapshot("compare-zero1-zero3_offload-1gpu.txt", r.output)
    assert "A does NOT fit, B fits" in r.output
    assert "Why: ds_zero3_offload.json needs" in r.output and "(on the host)" in r.output
    assert r.exit_code == 1  # the first config does not fit


def test_json_output():
    r = run(f"{SEED}/ds_zero3_offload.json", "--params", "7B", "--gpus-per-node", "8", "--nodes", "2",
            "--gpu-memory", "80GB", "--host-memory", "1TB", "--format", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["cluster"] == {"nodes": 2, "gpus_per_node": 8, "world_size": 16}
    assert d["per_gpu_bytes"] == d["per_gpu_covered_bytes"] + d["per_gpu_margin_bytes"]
    assert d["per_node_host_bytes"] > 0 and d["verdict"] == "fits"
    assert all({"name", "bytes", "where", "formula"} <= set(row) for row in d["breakdown"])
    assert any("largest layer" in a for a in d["assumptions"])  # --params alone: L is a guess, and it says so


def test_json_compare():
    r = run(f"{SEED}/ds_zero1.json", "--compare", f"{SEED}/ds_zero2.json", "--params", "1.1B", "--format", "json")
    d = json.loads(r.output)
    assert set(d) == {"a", "b", "difference"}
    assert d["difference"]["per_gpu_bytes"] == d["b"]["per_gpu_bytes"] - d["a"]["per_gpu_bytes"]


def test_explain_shows_formulas():
    r = run(f"{SEED}/ds_zero2.json", "--params", "1.1B", "--explain")
    assert "= 2 x reduce_bucket_size" not in r.output  # ds_zero2 has overlap_comm false: one buffer
    assert "1 x reduce_bucket_size (2e+08) x 2 B" in r.output


def test_activations_with_a_model_shape():
    r = run(f"{SEED}/ds_zero2.json", "--params", "1.1B", "--hidden", "2048", "--layers", "22", "--vocab", "32000",
            "--seq-len", "1024", "--format", "json")
    d = json.loads(r.output)
    assert any(row["key"] == "activations" and row["bytes"] > 0 for row in d["breakdown"])
    assert d["workload"] == {"seq_len": 1024, "micro_batch": 4, "checkpointing": False}


@pytest.mark.parametrize("args,code,text", [
    ([f"{SEED}/ds_zero1.json"], 2, "give the model"),
    ([f"{SEED}/ds_zero1.json", "--params", "seven"], 2, "not a parameter count"),
    ([f"{SEED}/ds_zero1.json", "--params", "7B", "--gpu-memory", "lots"], 2, "not a memory size"),
    (["missing.json", "--params", "7B"], 2, "no such file"),
    ([f"{SEED}/ds_zero1.json", "--model", "fixtures/models/nope.json"], 2, "cannot be read"),
])
def test_usage_errors(args, code, text):
    r = run(*args)
    assert r.exit_code == code
    assert text in r.output


def test_exit_code_follows_the_verdict():
    assert run(f"{SEED}/ds_zero1.json", "--model", MODEL, "--gpu-memory", "24GB").exit_code == 1
    assert run(f"{SEED}/ds_zero1.json", "--model", MODEL, "--gpu-memory", "80GB").exit_code == 0
    assert run(f"{SEED}/ds_zero1.json", "--model", MODEL).exit_code == 0


def test_check_reports_will_not_fit():
    r = CliRunner().invoke(main, ["check", f"{SEED}/ds_zero1.json", "--model", MODEL, "--gpu-memory", "24GB",
                                  "--select", "ZL801"])
    assert r.exit_code == 1 and "ZL801" in r.output and "will not fit in 24.00 GiB" in r.output
    r = CliRunner().invoke(main, ["check", f"{SEED}/ds_zero1.json", "--model", MODEL, "--gpu-memory", "24GB",
                                  "--world-size", "8", "--select", "ZL801"])
    assert r.exit_code == 0, r.output


def test_import_of_the_cli_stays_light():
    code = ("import sys, zerolint.cli; heavy = [m for m in ('rich', 'torch', 'deepspeed', 'zerolint.estimate.memory', "
            "'zerolint.report.estimate') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"
