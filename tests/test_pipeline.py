"""The one pipeline (issue 13 item 1): every file is linted AND fixed with its own settings, selection and rules;
suppressed or baselined findings are never fixed; sources; messages that agree with the exit code (item 4)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

OFFLOAD_PARAM_STAGE2 = """{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}
}
"""
FIXED_STAGE2 = """{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {"stage": 2}
}
"""


def _found(r) -> list[tuple[str, str, int, int]]:
    return [(d["file"], d["code"], d["line"], d["column"]) for d in json.loads(r.stdout)["diagnostics"]]


# -- the two --fix bugs -----------------------------------------------------------------------------------------------

def test_fix_uses_each_files_own_settings(tmp_path):
    """main applied the first file's settings to every file: d1's ZL201 block was deleted although d1's
    .zerolint.toml ignores ZL201."""
    for d in ("d1", "d2"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "ds.json").write_text(OFFLOAD_PARAM_STAGE2)
    (tmp_path / "d1" / ".zerolint.toml").write_text('ignore = ["ZL201"]\n')
    r = run_cli("check", "--fix", "--select", "ZL201", "d2/ds.json", "d1/ds.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "d1" / "ds.json").read_text() == OFFLOAD_PARAM_STAGE2
    assert (tmp_path / "d2" / "ds.json").read_text() == FIXED_STAGE2
    assert r.stdout.decode() == ("All checks passed in 2 files.\n"
                                 "note: rules turned off by d1/.zerolint.toml: ZL201\n"
                                 "Fixed 1 finding in 1 file (0 remaining).\n")


def test_fix_leaves_a_suppressed_finding_alone(tmp_path):
    """main deleted the block whose ZL201 finding [tool.zerolint.suppress] accepts with a reason."""
    (tmp_path / "ds.json").write_text(OFFLOAD_PARAM_STAGE2)
    (tmp_path / ".zerolint.toml").write_text(
        '[suppress]\n"ds.json" = [{ code = "ZL201", pointer = "/zero_optimization/offload_param", '
        'reason = "kept for the stage-3 variant" }]\n')
    r = run_cli("check", "--fix", "--quiet", "--select", "ZL201", "ds.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ds.json").read_text() == OFFLOAD_PARAM_STAGE2
    assert r.stdout.decode() == ("All checks passed in 1 file.\n"
                                 "note: 1 finding suppressed by .zerolint.toml\n"
                                 "Fixed 0 findings in 0 files (0 remaining).\n")


def test_fix_leaves_a_baselined_finding_alone(tmp_path):
    (tmp_path / "ds.json").write_text(OFFLOAD_PARAM_STAGE2)
    r = run_cli("check", "--select", "ZL201", "--write-baseline", "ds.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode() == "zerolint: wrote 1 baseline entry (1 findings) to .zerolint-baseline.json\n"
    r = run_cli("check", "--fix", "--quiet", "--select", "ZL201", "ds.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ds.json").read_text() == OFFLOAD_PARAM_STAGE2
    assert r.stdout.decode() == ("All checks passed in 1 file.\n"
                                 "note: 1 finding suppressed by .zerolint-baseline.json\n"
                                 "Fixed 0 findings in 0 files (0 remaining).\n")


def test_fix_runs_the_projects_policy_rules(tmp_path):
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "limits.yaml").write_text(
        (Path(__file__).parent.parent / "fixtures" / "policies" / "limits.yaml").read_text())
    (tmp_path / ".zerolint.toml").write_text('extend-rules = ["policies/*.yaml"]\nselect = ["ZL101", "ORG010"]\n')
    (tmp_path / "ds.json").write_text('{\n  "train_micro_batch_size_per_gpu": 32,\n'
                                      '  "offload_optimizer": {"device": "cpu"},\n'
                                      '  "zero_optimization": {"stage": 2}\n}\n')
    r = run_cli("check", "--fix", "--format", "json", "ds.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ds.json").read_text() == ('{\n  "train_micro_batch_size_per_gpu": 32,\n'
                                                  '  "zero_optimization": {"stage": 2, '
                                                  '"offload_optimizer": {"device": "cpu"}}\n}\n')
    assert _found(r) == [("ds.json", "ORG010", 2, 37)]
    assert r.stderr.decode() == "Fixed 1 finding in 1 file (1 remaining).\n"


# -- sources ----------------------------------------------------------------------------------------------------------

ACCELERATE_YAML = """compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: ds.json
  zero_stage: 2
num_processes: 2
"""
AUTO_STAGE2 = ('{"train_micro_batch_size_per_gpu": "auto", '
               '"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}}\n')


def _accelerate_tree(tmp_path: Path) -> None:
    (tmp_path / "acc").mkdir()
    (tmp_path / "acc" / "ds.json").write_text(AUTO_STAGE2)
    (tmp_path / "acc" / "accelerate.yaml").write_text(ACCELERATE_YAML)
    (tmp_path / "acc" / "workflow.yml").write_text("name: ci\non: push\n")  # not an Accelerate config: not picked


def test_a_directory_brings_its_accelerate_yaml(tmp_path):
    _accelerate_tree(tmp_path)
    r = run_cli("check", "--format", "json", "--select", "ZL201,ZL520", "acc", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert _found(r) == [("acc/accelerate.yaml", "ZL520", 5, 3), ("acc/ds.json", "ZL201", 1, 78)]
    assert json.loads(r.stdout)["summary"]["files"] == 2


def test_a_deepspeed_config_named_directly_and_through_a_yaml_is_reported_once(tmp_path):
    _accelerate_tree(tmp_path)
    r = run_cli("check", "--format", "json", "--select", "ZL201,ZL520", "acc/ds.json", "acc/accelerate.yaml",
                cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert _found(r) == [("acc/accelerate.yaml", "ZL520", 5, 3), ("acc/ds.json", "ZL201", 1, 78)]
    assert json.loads(r.stdout)["summary"]["files"] == 2


# -- messages that agree with the exit code ---------------------------------------------------------------------------

def test_a_missing_file_is_never_all_checks_passed(tmp_path):
    r = run_cli("check", "missing.json", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stdout.decode() == "No findings in 0 files. 1 file could not be read.\n"
    assert r.stderr.decode() == "zerolint: error: missing.json: no such file\n"
    (tmp_path / "ds.json").write_text(OFFLOAD_PARAM_STAGE2)
    r = run_cli("check", "--quiet", "--select", "ZL201", "ds.json", "missing.json", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stdout.decode() == "Found 1 error in 1 file. 1 file could not be read. 1 fixable with --fix.\n"


def test_upgrade_lists_its_rewrites_without_claiming_all_checks_passed(tmp_path):
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 4, "bfloat16": {"enabled": true}}\n')
    r = run_cli("upgrade", "--to", "0.19.8", "ds.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == ("ds.json:1:39: rename bfloat16 to bf16\n"
                                 "Upgraded 1 finding in 1 file (0 remaining).\n")
    assert (tmp_path / "ds.json").read_text() == '{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}\n'


def test_write_baseline_followed_by_a_directory_checks_the_directory(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "ds.json").write_text(OFFLOAD_PARAM_STAGE2)
    r = run_cli("check", "--select", "ZL201", "--write-baseline", "configs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode() == "zerolint: wrote 1 baseline entry (1 findings) to .zerolint-baseline.json\n"
    entries = json.loads((tmp_path / ".zerolint-baseline.json").read_text())["entries"]
    assert [(e["file"], e["code"], e["pointer"]) for e in entries] == [
        ("configs/ds.json", "ZL201", "/zero_optimization/offload_param")]


def test_write_baseline_with_equals_still_names_the_baseline_file(tmp_path):
    (tmp_path / "ds.json").write_text(OFFLOAD_PARAM_STAGE2)
    r = run_cli("check", "--write-baseline=ds.json", "ds.json", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.decode() == "zerolint: error: ds.json: exists and is not a zerolint baseline; not overwriting it\n"
    assert (tmp_path / "ds.json").read_text() == OFFLOAD_PARAM_STAGE2
