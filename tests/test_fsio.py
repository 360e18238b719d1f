"""Safe writes: atomic replace, mode kept, killed mid-write, changed since read, symlinks out of the tree."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time

import pytest
from conftest import ROOT, run_cli

from zerolint.base import fsio

BROKEN = b'{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 2,\n}\n'
FIXED = b'{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 2\n}\n'


def test_fix_writes_and_keeps_mode(tmp_path):
    p = tmp_path / "ds.json"
    p.write_bytes(BROKEN)
    os.chmod(p, 0o640)
    r = run_cli("check", "--fix", "--target", "deepspeed", str(p))
    assert r.returncode == 0, r.stderr
    assert p.read_bytes() == FIXED
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert [x.name for x in tmp_path.iterdir()] == ["ds.json"]  # no temporary file left behind


def test_killed_between_write_and_rename_leaves_the_original(tmp_path):
    p = tmp_path / "ds.json"
    p.write_bytes(BROKEN)
    marker = tmp_path / "written"
    code = (
        "import sys, time, pathlib\n"
        "import zerolint.base.fsio as fsio\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "def hook(tmp):\n"
        "    staged = marker.with_name('staged')\n"
        "    staged.write_text(open(tmp).read())\n"
        "    staged.rename(marker)\n"  # the marker appears whole: the test cannot read it half written
        "    time.sleep(60)\n"
        "fsio._before_replace = hook\n"
        "from zerolint.cli import main\n"
        f"main(['check', '--fix', '--target', 'deepspeed', {str(p)!r}])\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 120  # a loaded machine: the child imports zerolint first
        while not marker.exists() and time.time() < deadline:
            time.sleep(0.05)
        assert marker.exists(), proc.stderr.read() if proc.poll() is not None else "no write within 120 s"
        assert marker.read_bytes() == FIXED  # the new content was fully written to the temporary file...
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert p.read_bytes() == BROKEN  # ...and the original is intact
    strays = [x.name for x in tmp_path.iterdir() if x.name.endswith(".zerolint-tmp")]
    assert all(s.startswith(".ds.json.") for s in strays)
    r = run_cli("check", "--fix", "--target", "deepspeed", str(p))  # a later run still works
    assert r.returncode == 0 and p.read_bytes() == FIXED


def test_changed_since_read_is_not_replaced(tmp_path, monkeypatch):
    p = tmp_path / "ds.json"
    p.write_bytes(BROKEN)
    data, snap = fsio.read_with_snapshot(str(p))

    def meddle(tmp):
        p.write_bytes(b'{"someone": "else"}\n')

    monkeypatch.setattr(fsio, "_before_replace", meddle)
    with pytest.raises(fsio.WriteRefused, match="changed since"):
        fsio.atomic_write(str(p), FIXED, snap, roots=[str(tmp_path)])
    assert p.read_bytes() == b'{"someone": "else"}\n'
    assert [x.name for x in tmp_path.iterdir()] == ["ds.json"]


def test_same_size_same_mtime_change_is_caught_by_the_hash(tmp_path, monkeypatch):
    p = tmp_path / "ds.json"
    p.write_bytes(b'{"a": 1}\n')
    data, snap = fsio.read_with_snapshot(str(p))

    def meddle(tmp):
        p.write_bytes(b'{"a": 2}\n')
        os.utime(p, ns=(snap.mtime_ns, snap.mtime_ns))

    monkeypatch.setattr(fsio, "_before_replace", meddle)
    with pytest.raises(fsio.WriteRefused):
        fsio.atomic_write(str(p), b'{"a": 3}\n', snap, roots=[str(tmp_path)])
    assert p.read_bytes() == b'{"a": 2}\n'


def test_symlink_out_of_the_tree_is_refused(tmp_path):
    outside = tmp_path / "outside"
    tree = tmp_path / "tree"
    outside.mkdir()
    tree.mkdir()
    target = outside / "real.json"
    target.write_bytes(BROKEN)
    (tree / "link.json").symlink_to(target)
    r = run_cli("check", "--fix", "--target", "deepspeed", "link.json", cwd=tree)
    assert r.returncode == 2
    assert b"outside the tree being checked" in r.stderr
    assert target.read_bytes() == BROKEN


def test_symlink_inside_the_tree_is_written_through(tmp_path):
    (tmp_path / "configs").mkdir()
    real = tmp_path / "configs" / "real.json"
    real.write_bytes(BROKEN)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    r = run_cli("check", "--fix", "--target", "deepspeed", "link.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert real.read_bytes() == FIXED and link.is_symlink()


def test_stdin_fix_prints_the_fixed_text(tmp_path):
    r = run_cli("check", "--fix", "--target", "deepspeed", "-", input=BROKEN)
    assert r.stdout == FIXED
    assert b"Fixed 1 finding in 1 file" in r.stderr
    crlf = BROKEN.replace(b"\n", b"\r\n")
    r = run_cli("check", "--fix-only", "--target", "deepspeed", "-", input=crlf)
    assert r.stdout == FIXED.replace(b"\n", b"\r\n") and r.returncode == 0


def test_not_utf8_is_not_touched(tmp_path):
    p = tmp_path / "ds.json"
    data = BROKEN.replace(b"train", b"tr\xffain")
    p.write_bytes(data)
    r = run_cli("check", "--fix", "--target", "deepspeed", str(p))
    assert p.read_bytes() == data and r.returncode == 1
    assert b"not fixed" in r.stderr
