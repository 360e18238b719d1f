"""check's ruff-grade flags and formats: --output-format (concise, gitlab, rdjson; the old --format names),
--statistics, --exit-zero, --show-info, -V, NO_COLOR / FORCE_COLOR."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import SEED, require, run_cli
from snapshot import assert_snapshot

from zerolint.base.version import __version__

# One info finding (ZL705: gradient_clipping left to DeepSpeed's default) and nothing else.
INFO_ONLY = '{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": {"stage": 2}\n}\n'


@pytest.fixture
def seed(tmp_path):
    for p in SEED.glob("*.json"):
        shutil.copy(p, tmp_path / p.name)
    (tmp_path / "info.json").write_text(INFO_ONLY)
    return tmp_path


def test_concise_is_one_line_per_finding(seed):
    r = run_cli("check", "--output-format", "concise", ".", cwd=seed)
    assert r.returncode == 1
    assert_snapshot("check_seed_concise.txt", r.stdout.decode())


def test_statistics_counts_per_rule(seed):
    r = run_cli("check", "--statistics", ".", cwd=seed)
    assert r.returncode == 1
    assert_snapshot("check_seed_statistics.txt", r.stdout.decode())


# GitLab's Code Quality report format (docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format): the
# required fields and the severity values it accepts.
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "lines": {"type": "object", "required": ["begin"],
                              "properties": {"begin": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}


def test_gitlab_code_quality_report(seed):
    jsonschema = require("jsonschema")
    r = run_cli("check", "--output-format", "gitlab", "--show-info", ".", cwd=seed)
    assert r.returncode == 1
    issues = json.loads(r.stdout)
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert [(i["check_name"], i["severity"], i["location"]["path"], i["location"]["lines"]["begin"])
            for i in issues if i["location"]["path"] in ("ds_offload_param_stage2.json", "info.json")] == [
        ("ZL219", "minor", "ds_offload_param_stage2.json", 7), ("ZL201", "major", "ds_offload_param_stage2.json", 8),
        ("ZL705", "info", "info.json", 1)]
    assert_snapshot("check_seed_gitlab.json", r.stdout.decode())


def test_rdjson_suggestions_are_the_safe_fix(seed):
    """Applying the rdjson suggestions (byte columns) gives the file `--fix` writes."""
    name = "ds_offload_param_stage2.json"
    # ZL201 alone: its safe fix is what the suggestions must reproduce (ZL219, a warning there, has no fix)
    r = run_cli("check", "--output-format", "rdjson", "--select", "ZL201", name, cwd=seed)
    assert r.returncode == 1
    result = json.loads(r.stdout)
    assert result["source"] == {"name": "zerolint", "url": "https://github.com/zerolint/zerolint"}
    (d,) = result["diagnostics"]
    assert (d["severity"], d["code"]["value"], d["location"]["path"], d["location"]["range"]["start"]) == (
        "ERROR", "ZL201", name, {"line": 8, "column": 9})
    lines = (seed / name).read_bytes().splitlines(keepends=True)

    def offset(pos):
        return sum(len(x) for x in lines[: pos["line"] - 1]) + pos["column"] - 1

    data = (seed / name).read_bytes()
    for s in sorted(d["suggestions"], key=lambda s: -offset(s["range"]["start"])):
        data = data[: offset(s["range"]["start"])] + s["text"].encode() + data[offset(s["range"]["end"]):]
    assert run_cli("check", "--fix", "--quiet", "--select", "ZL201", name, cwd=seed).returncode == 0
    assert data == (seed / name).read_bytes()
    assert_snapshot("check_rdjson.json", r.stdout.decode())


def test_rdjson_columns_count_utf8_bytes(tmp_path):
    (tmp_path / "u.json").write_text('{"train_batch_size": 8, "élan_é": 1}\n', encoding="utf-8")
    r = run_cli("check", "--output-format", "rdjson", "u.json", cwd=tmp_path)
    (d,) = [d for d in json.loads(r.stdout)["diagnostics"] if d["code"]["value"] == "ZL103"]  # unknown key
    # the quoted key starts at character 25, byte 25 (ASCII before it); it is 8 characters but 10 bytes long
    assert d["location"]["range"] == {"start": {"line": 1, "column": 25}, "end": {"line": 1, "column": 35}}
    assert run_cli("check", "--output-format", "concise", "u.json", cwd=tmp_path).stdout.decode().startswith(
        "u.json:1:25: warning ZL103 unknown key 'élan_é' at the top level")


def test_the_old_format_option_is_an_alias(seed):
    a = run_cli("check", "--format", "json", "ds_fp16_bf16.json", cwd=seed)
    b = run_cli("check", "--output-format", "json", "ds_fp16_bf16.json", cwd=seed)
    assert a.stdout == b.stdout and a.returncode == b.returncode == 1


def test_exit_zero(seed):
    r = run_cli("check", "--exit-zero", "--quiet", "ds_offload_param_stage2.json", cwd=seed)
    assert (r.returncode, r.stdout.decode()) == (0, "Found 1 error, 1 warning in 1 file. 1 fixable with --fix.\n")
    assert run_cli("check", "--exit-zero", "missing.json", cwd=seed).returncode == 2  # still a usage error


def test_info_is_counted_but_shown_only_when_asked(seed):
    r = run_cli("check", "info.json", cwd=seed)
    assert (r.returncode, r.stdout.decode()) == (
        0, "Found 1 info in 1 file. 1 more with --unsafe-fixes. 1 info hidden (--show-info).\n")
    shown = run_cli("check", "--show-info", "--output-format", "concise", "info.json", cwd=seed)
    assert shown.stdout.decode().splitlines()[0].startswith("info.json:1:1: info ZL705 gradient_clipping is not set")
    failing = run_cli("check", "--fail-on", "info", "--output-format", "concise", "info.json", cwd=seed)
    assert failing.returncode == 1 and failing.stdout.decode().splitlines()[0].startswith("info.json:1:1: info ZL705")
    for fmt in ("json", "sarif"):  # the machine contracts keep every finding
        out = run_cli("check", "--output-format", fmt, "info.json", cwd=seed).stdout.decode()
        assert "ZL705" in out and "info hidden" not in out
    for fmt in ("github", "gitlab", "rdjson"):
        assert "ZL705" not in run_cli("check", "--output-format", fmt, "info.json", cwd=seed).stdout.decode()


def test_no_color_and_force_color(seed):
    def out(*args, **env):
        return run_cli("check", *args, "ds_zero2.json", cwd=seed, env=env).stdout.decode()

    assert "\x1b[" in out(NO_COLOR="", FORCE_COLOR="1")  # not a terminal, coloured anyway
    assert "\x1b[" not in out(NO_COLOR="1", FORCE_COLOR="1")  # NO_COLOR wins
    assert "\x1b[" not in out("--no-color", NO_COLOR="", FORCE_COLOR="1")
    assert "\x1b[" not in out(NO_COLOR="", FORCE_COLOR="")  # empty: not set (both specifications)


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag):
    r = run_cli(flag)
    assert (r.returncode, r.stdout.decode()) == (0, f"zerolint, version {__version__}\n")


def test_help_lists_every_new_flag_and_format():
    text = " ".join(run_cli("check", "--help").stdout.decode().split())
    for flag in ("--output-format", "--format", "--statistics", "--exit-zero", "--show-files", "--show-info",
                 "--only-configs", "--no-color", "NO_COLOR", "FORCE_COLOR"):
        assert flag in text, flag
    for fmt in ("concise", "gitlab", "rdjson"):
        assert fmt in text, fmt
