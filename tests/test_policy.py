"""User policy rules (YAML + JMESPath) loaded with extend-rules: the examples in fixtures/policies/."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT, run_cli

POLICIES = ROOT / "fixtures" / "policies"


def _project(tmp_path, config: dict, extra_toml: str = "") -> None:
    shutil.copytree(POLICIES, tmp_path / "policies")
    (tmp_path / ".zerolint.toml").write_text('extend-rules = ["policies/*.yaml"]\n' + extra_toml, "utf-8")
    (tmp_path / "ds_config.json").write_text(json.dumps(config, indent=2), "utf-8")


def _run(tmp_path, *args):
    r = run_cli("check", "--format", "json", *args, "ds_config.json", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr.decode()
    return r.returncode, [(d["code"], d["name"], d["severity"], d["pointer"], d["message"])
                          for d in json.loads(r.stdout)["diagnostics"]]


def test_policies_report_at_their_pointer_with_the_value(tmp_path):
    _project(tmp_path, {"train_micro_batch_size_per_gpu": 32, "fp16": {"enabled": True},
                        "zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/nvme"}}})
    rc, found = _run(tmp_path)
    policy = [f for f in found if not f[0].startswith("ZL")]
    assert policy == [
        ("ORG010", "micro-batch-limit", "warning", "/train_micro_batch_size_per_gpu",
         "micro batch 32 is above the 16 our 80 GB GPUs fit for the models we train"),
        ("ORG001", "bf16-only", "error", "/fp16/enabled", "our A100 cluster trains in bf16 only (found true)"),
        ("ORG002", "no-nvme-offload", "error", "/zero_optimization/offload_param/device",
         'NVMe offload is not available on our nodes (device "nvme")'),
    ]
    assert rc == 1


def test_compliant_config_passes(tmp_path):
    _project(tmp_path, {"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": True},
                        "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}})
    rc, found = _run(tmp_path)
    assert [f for f in found if not f[0].startswith("ZL")] == [] and rc == 0


def test_policy_codes_work_with_select_ignore_severity_and_suppress(tmp_path):
    _project(tmp_path, {"train_micro_batch_size_per_gpu": 32, "fp16": {"enabled": True},
                        "zero_optimization": {"stage": 2}},
             extra_toml='severity = { ORG010 = "error" }\n'
                        '[suppress]\n"ds_config.json" = [{ code = "ORG001", pointer = "/fp16/enabled" }]\n')
    rc, found = _run(tmp_path)
    policy = {f[0]: f[2] for f in found if not f[0].startswith("ZL")}
    assert policy == {"ORG010": "error"}  # ORG001 suppressed at its pointer
    _, found = _run(tmp_path, "--ignore", "ORG")
    assert [f for f in found if f[0].startswith("ORG")] == []
    _, found = _run(tmp_path, "--select", "ORG010")
    assert [f[0] for f in found] == ["ORG010"]


@pytest.mark.parametrize("policy,message", [
    ("id: ORG1\ncondition: 'a ==='\nmessage: m\n", "is not valid JMESPath"),
    ("id: zl001\ncondition: a\nmessage: m\n", "must be upper-case letters then digits"),
    ("id: ZL999\ncondition: a\nmessage: m\n", "not ZL"),
    ("id: ORG1\nconditon: a\nmessage: m\n", "unknown key `conditon`; did you mean `condition`?"),
    ("id: ORG1\ncondition: a\n", "`message` is required"),
    ("id: ORG1\ncondition: a\nmessage: m\nseverity: fatal\n", "severity 'fatal'"),
    ("id: ORG1\ncondition: a\nmessage: m\npointer: fp16/enabled\n", "pointer must be a JSON pointer"),
    ("rules: [unclosed\n", "not valid YAML"),
])
def test_broken_policy_files_are_usage_errors(tmp_path, policy, message):
    (tmp_path / "p.yaml").write_text(policy, "utf-8")
    (tmp_path / ".zerolint.toml").write_text('extend-rules = ["p.yaml"]\n', "utf-8")
    (tmp_path / "ds_config.json").write_text("{}", "utf-8")
    r = run_cli("check", "ds_config.json", cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr.decode() and "p.yaml" in r.stderr.decode()


def test_extend_rules_pattern_matching_nothing_is_an_error(tmp_path):
    (tmp_path / ".zerolint.toml").write_text('extend-rules = ["policies/*.yaml"]\n', "utf-8")
    (tmp_path / "ds_config.json").write_text("{}", "utf-8")
    r = run_cli("check", "ds_config.json", cwd=tmp_path)
    assert r.returncode == 2 and "matches no file" in r.stderr.decode()


def test_a_condition_that_fails_to_evaluate_is_an_internal_error_for_that_rule(tmp_path):
    (tmp_path / "p.yaml").write_text("id: ORG1\ncondition: 'length(zero_optimization.stage) > `1`'\nmessage: m\n")
    (tmp_path / ".zerolint.toml").write_text('extend-rules = ["p.yaml"]\n', "utf-8")
    (tmp_path / "ds_config.json").write_text('{"zero_optimization": {"stage": 2}}', "utf-8")
    rc, found = _run(tmp_path)
    internal = [f for f in found if f[0] == "ZL000"]
    assert len(internal) == 1 and "ORG1" in internal[0][4] and "JMESPath" in internal[0][4]
    assert rc == 1


@pytest.mark.parametrize("micro", ["auto", "32", True, None, [64], {"n": 64}])
def test_an_ordering_condition_on_a_value_that_is_not_a_number_is_false_not_a_crash(tmp_path, micro):
    # JMESPath: `<`, `>` ... on anything but two numbers (or two strings) is null. The README's example policy
    # (micro batch > `16`) crashed with ZL000 on every "auto" micro batch.
    _project(tmp_path, {"train_micro_batch_size_per_gpu": micro, "train_batch_size": "auto",
                        "bf16": {"enabled": True}})
    rc, found = _run(tmp_path, "--target", "hf")
    assert [f for f in found if not f[0].startswith("ZL") or f[0] == "ZL000"] == []


def test_string_comparisons_still_order_strings(tmp_path):
    (tmp_path / "p.yaml").write_text("id: ORG7\ncondition: \"zero_optimization.offload_param.device > 'cpu'\"\n"
                                     "pointer: /zero_optimization/offload_param/device\nmessage: m {value}\n")
    (tmp_path / ".zerolint.toml").write_text('extend-rules = ["p.yaml"]\nignore = ["ZL"]\n', "utf-8")
    (tmp_path / "ds_config.json").write_text('{"zero_optimization": {"stage": 3, "offload_param": '
                                             '{"device": "nvme", "nvme_path": "/n"}}}', "utf-8")
    rc, found = _run(tmp_path)
    assert found == [("ORG7", "org7", "error", "/zero_optimization/offload_param/device", 'm "nvme"')] and rc == 1
