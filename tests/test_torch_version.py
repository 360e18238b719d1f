"""Rules whose verdict depends on the torch version (ZL612): the installed torch from package metadata, a version
asked for in Settings, `--torch-version` and the settings' `torch-version` (issue 23, item 4: the torch-dependent
rules speak for the training machine's torch where it is not the one installed here: CI, pre-commit), and the
warning that states the condition when no torch is installed. And the note for a `--deepspeed-version` outside the
covered lines."""

from __future__ import annotations

import json
import subprocess
import sys

from zerolint.model import versions
from zerolint.model.view import Settings
from zerolint.pipeline import lint_bytes
from zerolint.rules.engine import Selection

CONFIG = b'{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}, "optimizer": {"type": "Adagrad"}}\n'


def zl612(settings: Settings):
    return [(d.severity.value, d.line, d.column, d.message, d.fails_at)
            for d in lint_bytes(CONFIG, "ds.json", settings, Selection(select=["ZL612"])).diagnostics]


def test_torch_version_from_settings_drops_the_local_suffix():
    assert versions.torch_version(Settings(torch_version="2.11.0+cu130")).text == "2.11.0"


def test_installed_torch_is_read_from_metadata_without_importing_it():
    import sys

    had = "torch" in sys.modules
    found = versions.installed_torch()
    assert found is not None and "+" not in found  # the suite runs with torch installed (an oracle)
    assert ("torch" in sys.modules) == had


def test_without_torch_the_finding_states_the_condition(monkeypatch):
    monkeypatch.setattr(versions, "installed_torch", lambda: None)
    assert zl612(Settings(target="deepspeed")) == [(
        "warning", 1, 88, "Adagrad with bf16 and ZeRO off (stage 0): the bf16 wrapper (FP16_UnfusedOptimizer) takes a "
        "first optimizer step on fp32 copies of the parameters, for which torch's Adagrad before 2.12 created no "
        "state, so with torch < 2.12 deepspeed.initialize fails with KeyError: 'sum' (torch is not installed here, so "
        "zerolint cannot tell which torch runs it)", None)]


def test_old_torch_is_an_error_new_torch_nothing():
    assert [x[0] for x in zl612(Settings(target="deepspeed", torch_version="2.11.0"))] == ["error"]
    assert zl612(Settings(target="deepspeed", torch_version="2.12.0")) == []


# -- from the command line and the settings file -------------------------------------------------------------
CLI_CONFIG = '{"train_micro_batch_size_per_gpu": 2, "optimizer": {"type": "Adagrad", "params": {"lr": 1e-3}}, ' \
         '"bf16": {"enabled": true}}\n'


def _codes(tmp_path, *args):
    (tmp_path / "ds.json").write_text(CLI_CONFIG)
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "ds.json", "--target", "deepspeed", "--format",
                        "json", *args], capture_output=True, text=True, cwd=tmp_path)
    return p.returncode, [(d["code"], d["severity"], d.get("fails_at")) for d in json.loads(p.stdout)["diagnostics"]
                          if d["code"] == "ZL612"] if p.stdout else p.stderr


def test_the_flag_names_the_training_machines_torch(tmp_path):
    assert _codes(tmp_path, "--torch-version", "2.11") == (1, [("ZL612", "error", "initialize")])
    assert _codes(tmp_path, "--torch-version", "2.12.1") == (0, [])


def test_the_settings_file_says_it_too_and_the_flag_wins(tmp_path):
    (tmp_path / ".zerolint.toml").write_text('torch-version = "2.10"\n')
    assert _codes(tmp_path) == (1, [("ZL612", "error", "initialize")])
    assert _codes(tmp_path, "--torch-version", "2.13") == (0, [])


def test_a_bad_version_is_a_usage_error(tmp_path):
    code, err = _codes(tmp_path, "--torch-version", "latest")
    assert code == 2 and "Invalid value for --torch-version: not a version: 'latest'" in err


def test_a_deepspeed_version_outside_the_covered_lines_gets_a_note(tmp_path):
    """`--deepspeed-version 0.12.6` (LLaVA's pin) was accepted silently, with `schema` then printing 0.16's."""
    (tmp_path / "ds.json").write_text(CLI_CONFIG)
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "ds.json", "--deepspeed-version", "0.12.6"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert ("zerolint: note: DeepSpeed 0.12.6 is older than the lines zerolint has facts for (0.14 to 0.19): it "
            "checks with the 0.14 line's schema and facts, so what changed between 0.12 and 0.14 is not known to "
            "it\n") in p.stderr
    p = subprocess.run([sys.executable, "-m", "zerolint", "schema", "--deepspeed-version", "0.13.5"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0 and json.loads(p.stdout)["$id"].endswith("deepspeed-0.14.json")
    assert p.stderr == ("zerolint: note: DeepSpeed 0.13.5 is older than the lines zerolint has facts for (0.14 to "
                        "0.19): it prints the 0.14 line's schema, so what changed between 0.13 and 0.14 is not known "
                        "to it\n")
    # the 0.14 and 0.15 lines have their own schemas (0.14.5's pydantic v1 models): no note
    for version, line in (("0.14.5", "0.14"), ("0.15.4", "0.15")):
        p = subprocess.run([sys.executable, "-m", "zerolint", "schema", "--deepspeed-version", version],
                           capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 0 and json.loads(p.stdout)["$id"].endswith(f"deepspeed-{line}.json")
        assert p.stderr == ""
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "ds.json", "--deepspeed-version", "0.19.8"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert "note: DeepSpeed" not in p.stderr
