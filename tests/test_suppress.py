"""Suppressions that fit JSON: pointer-scoped entries in the config, a baseline keyed by file/code/pointer, and
ZL090 for entries that matched nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import SEED, run_cli

BROKEN = SEED / "ds_offload_broken.json"


def _check(tmp_path, *args, input=None):
    r = run_cli("check", "--format", "json", *args, cwd=tmp_path, input=input)
    assert r.returncode in (0, 1), r.stderr.decode()
    return r, json.loads(r.stdout)["diagnostics"]


def test_config_suppression_hides_exactly_its_pointer_and_reports_unused(tmp_path):
    (tmp_path / "ds").mkdir()
    shutil.copy(BROKEN, tmp_path / "ds" / "zero3.json")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.zerolint.suppress]\n'
        '"ds/zero3.json" = [\n'
        '  { code = "ZL101", pointer = "/offload_optimizer", reason = "kept on purpose" },\n'
        '  { code = "misplaced-key", pointer = "/zero_optimization/stage3_max_live_parameters" },\n'
        ']\n'
        '"ds/other.json" = [{ code = "ZL002", pointer = "" }]\n', "utf-8")
    r, diags = _check(tmp_path, "ds/zero3.json")
    codes = [(d["code"], d["file"]) for d in diags]
    assert ("ZL101", "ds/zero3.json") not in codes and ("ZL002", "ds/zero3.json") in codes
    unused = [d for d in diags if d["code"] == "ZL090"]
    # the second entry matched nothing; the entry for ds/other.json is not reported: that file was not checked
    assert len(unused) == 1
    u = unused[0]
    assert u["file"] == "pyproject.toml" and u["severity"] == "warning" and u["line"] == 4
    assert u["pointer"] == "/zero_optimization/stage3_max_live_parameters"
    assert "unused suppression for ds/zero3.json" in u["message"]
    # a rule that did not run does not make its suppressions "unused"
    _, diags = _check(tmp_path, "--select", "ZL0", "ds/zero3.json")
    assert [d["code"] for d in diags] == ["ZL002"]


def test_baseline_survives_edits_elsewhere_and_reports_new_findings(tmp_path):
    cfg = tmp_path / "ds_config.json"
    shutil.copy(BROKEN, cfg)
    r = run_cli("check", "--write-baseline", "--", "ds_config.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert "wrote 2 baseline entries" in r.stderr.decode()
    baseline = json.loads((tmp_path / ".zerolint-baseline.json").read_text())
    assert baseline["zerolint-baseline"] == 1
    assert {(e["file"], e["code"], e["pointer"]) for e in baseline["entries"]} == {
        ("ds_config.json", "ZL101", "/offload_optimizer"), ("ds_config.json", "ZL002", "/offload_optimizer")}
    # picked up automatically from the working directory, and never linted as a config itself
    r, diags = _check(tmp_path, "ds_config.json")
    assert diags == [] and r.returncode == 0
    r, diags = _check(tmp_path, ".")
    assert diags == [] and r.returncode == 0
    # lines move: still suppressed (keyed by pointer, not line)
    moved = BROKEN.read_text().replace('"gradient_accumulation_steps": 4,',
                                       '"steps_per_print": 10,\n    "gradient_accumulation_steps": 4,')
    cfg.write_text("\n\n\n" + moved)
    _, diags = _check(tmp_path, "ds_config.json")
    assert diags == []
    # a new finding of the same code elsewhere is reported
    cfg.write_text(BROKEN.read_text().replace('"gradient_clipping": 1.0', '"gradient_clipping": 1.0,\n'
                                              '    "offload_param": {"device": "cpu"}'))
    _, diags = _check(tmp_path, "ds_config.json")
    assert [(d["code"], d["pointer"]) for d in diags] == [("ZL101", "/offload_param")]


def test_baseline_unused_entries_are_located_in_the_baseline_file(tmp_path):
    shutil.copy(BROKEN, tmp_path / "ds_config.json")
    shutil.copy(BROKEN, tmp_path / "untouched.json")
    assert run_cli("check", "--write-baseline=base.json", "ds_config.json", "untouched.json",
                   cwd=tmp_path).returncode == 0
    fixed = BROKEN.read_text().replace('    "offload_optimizer": {"device": "cpu", "pin_memory": true}\n', "")
    (tmp_path / "ds_config.json").write_text(fixed)
    r, diags = _check(tmp_path, "--baseline", "base.json", "ds_config.json")
    assert {d["code"] for d in diags} == {"ZL090"}
    text = (tmp_path / "base.json").read_text().splitlines()
    for d in diags:
        assert d["file"] == "base.json"
        assert '"pointer": "/offload_optimizer"' in text[d["line"] - 1]
        assert "unused baseline entry for ds_config.json" in d["message"]
    assert r.returncode == 0  # ZL090 is a warning
    # --ignore ZL090 silences them
    _, diags = _check(tmp_path, "--baseline", "base.json", "--ignore", "ZL090", "ds_config.json")
    assert diags == []


def test_baseline_errors_are_usage_errors(tmp_path):
    shutil.copy(BROKEN, tmp_path / "ds_config.json")
    r = run_cli("check", "--baseline", "missing.json", "ds_config.json", cwd=tmp_path)
    assert r.returncode == 2 and "baseline file not found" in r.stderr.decode()
    (tmp_path / "bad.json").write_text('{"entries": 3}')
    r = run_cli("check", "--baseline", "bad.json", "ds_config.json", cwd=tmp_path)
    assert r.returncode == 2 and "not a zerolint baseline" in r.stderr.decode()


def test_write_baseline_refuses_to_overwrite_a_file_that_is_not_a_baseline(tmp_path):
    shutil.copy(BROKEN, tmp_path / "ds_config.json")
    before = (tmp_path / "ds_config.json").read_bytes()
    r = run_cli("check", "--write-baseline=ds_config.json", "ds_config.json", cwd=tmp_path)
    assert r.returncode == 2 and "not a zerolint baseline" in r.stderr.decode()
    assert (tmp_path / "ds_config.json").read_bytes() == before
    assert Path(tmp_path / "ds_config.json").exists()
