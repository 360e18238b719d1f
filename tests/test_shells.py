"""verify's static phase and `zerolint.lint()` are thin shells over the one pipeline (issue 13 item 1): they report
exactly what `zerolint check` reports for the same file with the same options."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import oracle, run_cli

import zerolint

ROOT = Path(__file__).resolve().parents[1]
SEED = "fixtures/examples/seed"

# Both readers stop before DeepSpeed runs, so verify answers at once (no op build, no child): the HF Trainer's
# json.load at the missing comma (line 5), DeepSpeed's loader at the duplicate key.
CONFIG = """{
  "train_micro_batch_size_per_gpu": 32,
  "train_micro_batch_size_per_gpu": 32,
  "offload_optimizer": {"device": "cpu"}
  "zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}},
  "fp16": {"enabled": true}
}
"""
PROJECT = """target = "hf"
extend-rules = ["policies/*.yaml"]
ignore = ["ZL201"]

[suppress]
"ds.json" = [
  { code = "ZL101", pointer = "/offload_optimizer", reason = "moved in the next release" },
  { code = "ZL401", pointer = "/gradient_clipping", reason = "no such finding: reported as unused" },
]
"""
VERIFY_CODES = {f"ZL99{i}" for i in range(10)}


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "limits.yaml").write_text((ROOT / "fixtures" / "policies" / "limits.yaml").read_text())
    (tmp_path / ".zerolint.toml").write_text(PROJECT)
    (tmp_path / "ds.json").write_text(CONFIG)
    return tmp_path


def _json(r) -> dict:
    try:
        return json.loads(r.stdout)
    except ValueError:
        raise AssertionError(f"no JSON report (exit {r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}")


needs_verify = oracle(importlib.util.find_spec("deepspeed") is None or importlib.util.find_spec("torch") is None,
                      "needs torch and deepspeed (pip install '.[verify]')")


@needs_verify
@pytest.mark.parametrize("isolated, target, codes", [
    ((), "hf", ["ORG010", "ZL002", "ZL003", "ZL090", "ZL705"]),
    (("--isolated",), "deepspeed", ["ZL002", "ZL003", "ZL101", "ZL201", "ZL705"]),
])
def test_verify_reports_the_static_findings_check_reports(project, isolated, target, codes):
    """The project's target, ignore, policy rule and suppressions (ZL090 for the unused entry) apply to verify's
    static phase as to check; --isolated turns them all off for both."""
    r = run_cli("check", "--format", "json", *isolated, "ds.json", cwd=project)
    checked = _json(r)
    assert r.returncode == 1, r.stderr
    assert sorted({d["code"] for d in checked["diagnostics"]}) == sorted(codes)

    r = run_cli("verify", "--cpu", "--format", "json", "-q", *isolated, "ds.json", cwd=project)
    verified = _json(r)
    assert r.returncode == 1, r.stderr
    static = [d for d in verified["diagnostics"] if d["code"] not in VERIFY_CODES]
    assert static == checked["diagnostics"]
    assert [d["code"] for d in verified["diagnostics"] if d["code"] in VERIFY_CODES] == ["ZL990"]
    assert verified["summary"].get("notes") == checked["summary"].get("notes")
    run = verified["verify"]["runs"][0]
    assert (run["target"], run["status"], run["failure"]["stage"]) == (target, "fail", "parse")


@needs_verify
def test_verify_obeys_the_projects_ignore_for_its_own_codes(project):
    """The project's selection applies to verify's codes too: ZL990 ignored, the reader error stays the verdict."""
    (project / ".zerolint.toml").write_text(PROJECT.replace('ignore = ["ZL201"]', 'ignore = ["ZL201", "ZL990"]'))
    r = run_cli("verify", "--cpu", "--format", "json", "-q", "ds.json", cwd=project)
    verified = _json(r)
    assert "ZL990" not in {d["code"] for d in verified["diagnostics"]}
    assert verified["verify"]["verdict"] == "fail" and r.returncode == 1  # ZL002/ZL003 are errors


@needs_verify
def test_verify_usage_errors_from_the_pipeline(project):
    (project / ".zerolint.toml").write_text('select = ["ZL999999"\n')
    r = run_cli("verify", "--cpu", "-q", "ds.json", cwd=project)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode().startswith("zerolint: error: ") and ".zerolint.toml" in r.stderr.decode()
    r = run_cli("verify", "--cpu", "-q", "--isolated", "--select", "ZL99x", "ds.json", cwd=project)
    assert (r.returncode, r.stderr.decode()) == (
        2, "zerolint: error: Invalid value for --select: unknown rule 'ZL99x'; did you mean 'ZL990'?\n")
    (project / "acc.yaml").write_text("distributed_type: DEEPSPEED\n")
    r = run_cli("verify", "--cpu", "-q", "acc.yaml", cwd=project)
    assert (r.returncode, r.stderr.decode()) == (
        2, "zerolint: error: acc.yaml: verify runs a DeepSpeed config file; for an Accelerate YAML, verify the "
           "deepspeed_config_file it names with --target accelerate\n")


# -- zerolint.lint() ---------------------------------------------------------------------------------------------------

SEEDS = ["ds_offload_broken.json", "ds_fp16_bf16.json", "ds_offload_param_stage2.json", "ds_zero3_offload.json"]


def _api(diagnostics) -> list[dict]:
    return json.loads(json.dumps([d.to_json() for d in diagnostics]))


@pytest.mark.parametrize("name", SEEDS)
@pytest.mark.parametrize("kwargs, flags", [
    ({}, ()),
    ({"target": "hf", "world_size": 4}, ("--target", "hf", "--world-size", "4")),
    ({"select": ["ZL1", "ZL3"], "ignore": ["ZL301"]}, ("--select", "ZL1,ZL3", "--ignore", "ZL301")),
])
def test_lint_returns_what_check_reports(monkeypatch, name, kwargs, flags):
    monkeypatch.chdir(ROOT)
    path = f"{SEED}/{name}"
    r = run_cli("check", "--isolated", "--format", "json", *flags, path)
    assert r.returncode in (0, 1), r.stderr
    checked = _json(r)["diagnostics"]
    assert _api(zerolint.lint(path, **kwargs)) == checked
    text = (ROOT / path).read_text()
    as_text = [{**d, "file": path} for d in _api(zerolint.lint(text, **kwargs))]
    assert as_text == checked


def test_seed_findings_through_the_api():
    """Not an empty comparison: what the seeds hold."""
    found = {name: [(d.code, d.line, d.column) for d in zerolint.lint(ROOT / SEED / name)] for name in SEEDS}
    assert [c for c, _, _ in found["ds_offload_broken.json"]] == ["ZL101", "ZL002"]
    assert ("ZL002", 8, 5) in found["ds_offload_broken.json"]
    assert [c for c, _, _ in found["ds_fp16_bf16.json"]] == ["ZL301", "ZL802"]
    # ZL219 (line 7): offload_optimizer with no optimizer section; ZL201 (line 8): offload_param below stage 3
    assert [c for c, _, _ in found["ds_offload_param_stage2.json"]] == ["ZL219", "ZL201"]
    assert found["ds_zero3_offload.json"] == []


def test_lint_reads_no_project_config(project):
    """The API's arguments are its settings (as `check --isolated`): a .zerolint.toml beside the file changes
    nothing."""
    r = run_cli("check", "--isolated", "--format", "json", "ds.json", cwd=project)
    assert _api(zerolint.lint(project / "ds.json")) == [{**d, "file": str(project / "ds.json")}
                                                       for d in _json(r)["diagnostics"]]
    assert "ZL201" in {d.code for d in zerolint.lint(str(project / "ds.json"))}
