"""`zerolint check --fix / --diff / --unsafe-fixes / --fix-only / --prefer`: snapshots of what users see."""

from __future__ import annotations

import json

import pytest
from conftest import SEED, run_cli
from snapshot import assert_snapshot

# hjson-only syntax a DeepSpeed user really writes; parse rules only (--select ZL0) so that the snapshots do not
# move when other rules change.
CONFIG = (
    "{\n"
    "  // ZeRO-2 for the 1.1B run\n"
    "  train_micro_batch_size_per_gpu: 4\n"
    '  "optimizer": {\n'
    "    type: AdamW # fused on GPU\n"
    "  },\n"
    '  "zero_optimization": {"stage": 2, "stage": 3,},\n'
    "}\n"
)


def _write(tmp_path, text=CONFIG, name="ds.hjson"):
    p = tmp_path / name
    p.write_bytes(text.encode())
    return p


def _out(r) -> str:
    return "--- stdout\n" + r.stdout.decode() + "--- stderr\n" + r.stderr.decode() + f"--- exit {r.returncode}\n"


def test_diff_snapshot_writes_nothing(tmp_path):
    p = _write(tmp_path)
    r = run_cli("check", "--diff", "--target", "deepspeed", "--select", "ZL0", "ds.hjson", cwd=tmp_path)
    assert r.returncode == 1
    assert p.read_text() == CONFIG
    assert_snapshot("fix_diff.txt", _out(r))


def test_diff_unsafe_snapshot(tmp_path):
    _write(tmp_path)
    r = run_cli("check", "--diff", "--unsafe-fixes", "--prefer", "keep-first", "--target", "deepspeed", "--select",
                "ZL0", "ds.hjson", cwd=tmp_path)
    assert r.returncode == 1
    assert_snapshot("fix_diff_unsafe.txt", _out(r))


def test_fix_snapshot(tmp_path):
    p = _write(tmp_path)
    r = run_cli("check", "--fix", "--target", "deepspeed", "--select", "ZL0", "ds.hjson", cwd=tmp_path)
    assert_snapshot("fix_fix.txt", _out(r) + "--- ds.hjson\n" + p.read_text())
    again = run_cli("check", "--diff", "--target", "deepspeed", "--select", "ZL0", "ds.hjson", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == b""  # nothing left to do


def test_fix_unsafe_gives_strict_json(tmp_path):
    p = _write(tmp_path)
    r = run_cli("check", "--fix", "--unsafe-fixes", "--target", "hf", "--select", "ZL0", "ds.hjson", cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    data = json.loads(p.read_text())
    assert data == {"train_micro_batch_size_per_gpu": 4, "optimizer": {"type": "AdamW"},
                    "zero_optimization": {"stage": 3}}


def test_fix_only_and_json_format(tmp_path):
    _write(tmp_path)
    r = run_cli("check", "--fix-only", "--target", "deepspeed", "--select", "ZL0", "ds.hjson", cwd=tmp_path)
    assert r.returncode == 0 and b"error" not in r.stdout
    _write(tmp_path)
    r = run_cli("check", "--fix", "--format", "json", "--target", "deepspeed", "--select", "ZL0", "ds.hjson",
                cwd=tmp_path)
    out = json.loads(r.stdout)  # the report stays pure JSON; the fix summary goes to stderr
    assert {d["code"] for d in out["diagnostics"]} == {"ZL002", "ZL003"}
    assert b"Fixed 2 findings in 1 file (2 remaining)" in r.stderr  # the hjson constructs: one finding


def test_unsafe_fixes_alone_counts_them_as_available(tmp_path):
    _write(tmp_path, '{\n  // a note\n  "train_micro_batch_size_per_gpu": 4\n}\n', "a.json")
    plain = run_cli("check", "--target", "deepspeed", "--select", "ZL0", "a.json", cwd=tmp_path)
    assert b"1 more with --unsafe-fixes" in plain.stdout
    unsafe = run_cli("check", "--unsafe-fixes", "--target", "deepspeed", "--select", "ZL0", "a.json", cwd=tmp_path)
    assert b"1 fixable with --fix" in unsafe.stdout
    assert (tmp_path / "a.json").read_text().startswith("{\n  // a note")


def test_diff_of_a_clean_file_is_empty(tmp_path):
    _write(tmp_path, '{"train_micro_batch_size_per_gpu": 4}\n', "ok.json")
    r = run_cli("check", "--diff", "ok.json", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == b""
    assert b"Would fix 0 findings in 0 files" in r.stderr


@pytest.mark.parametrize("flags", [(), ("--statistics",), ("--max-findings", "1"), ("--max-findings-per-file", "1"),
                                   ("--show-info",), ("--quiet",), ("--format", "concise")])
def test_fix_reports_through_checks_report_step(tmp_path, flags):
    """`check --fix` (the zerolint-fix hook) prints what remains exactly as `check` prints it afterwards: the same
    caps, info hiding, --statistics and formats, then its own "Fixed ..." line."""
    for name in ("ds_fp16_bf16.json", "ds_offload_broken.json", "ds_offload_param_stage2.json",
                 "ds_zero3_offload.json"):
        (tmp_path / name).write_bytes((SEED / name).read_bytes())
    fixed = run_cli("check", "--fix", *flags, ".", cwd=tmp_path)
    after = run_cli("check", *flags, ".", cwd=tmp_path)
    if "--format" in flags:  # a report other than text: the "Fixed ..." line goes to stderr, the report is whole
        report, last = fixed.stdout.decode(), fixed.stderr.decode().splitlines()[-1]
    else:
        *lines, last = fixed.stdout.decode().splitlines(keepends=True)
        report = "".join(lines)
    assert report == after.stdout.decode()
    assert last.startswith("Fixed 2 findings in 2 files (4 remaining).") and fixed.returncode == after.returncode == 1
