"""A repository's settings cannot point zerolint at device files or files outside the tree (issue 22, item 2).
Reproduced first: `baseline = "/dev/zero"` made check fail with MemoryError after 10 s (and the language server grow
without end), `extend-rules = ["/dev/stdin"]` read the process's own input and hung, `/dev/urandom` gave a
traceback, and a file outside the tree had its first line shown in the error message."""

from __future__ import annotations

import os

import pytest
from conftest import run_cli

CONFIG = '{"train_micro_batch_size_per_gpu": 1}\n'


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "ds.json").write_text(CONFIG)
    return tmp_path


def _check(repo, settings: str):
    (repo / ".zerolint.toml").write_text(settings)
    return run_cli("check", "ds.json", cwd=repo, input=b"", env={"PYTHONFAULTHANDLER": "1"})


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/stdin"])
def test_a_baseline_setting_naming_a_device_is_refused(repo, device):
    r = _check(repo, f'baseline = "{device}"\n')
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err
    assert err.startswith(f"zerolint: error: baseline = '{device}': "), err
    assert "not read" in err or "not a regular file" in err, err


@pytest.mark.parametrize("device", ["/dev/stdin", "/dev/zero"])
def test_a_policy_setting_naming_a_device_is_refused(repo, device):
    r = _check(repo, f'extend-rules = ["{device}"]\n')
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err
    assert err.startswith(f"zerolint: error: extend-rules = '{device}': "), err


def test_a_file_outside_the_tree_is_not_read_and_its_content_not_shown(repo, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.yaml"
    outside.write_text("SECRET-LINE: {{ not yaml\n")
    for settings in (f'extend-rules = ["{outside}"]\n', f'baseline = "{outside}"\n',
                     f'extend-rules = ["{os.path.relpath(outside, repo)}"]\n'):
        r = _check(repo, settings)
        err = r.stderr.decode()
        assert r.returncode == 2 and "SECRET-LINE" not in err + r.stdout.decode(), err
        assert "outside the tree being checked" in err and "not read" in err, err


def test_a_link_in_the_tree_to_a_file_outside_is_not_followed(repo, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "rules.yaml"
    outside.write_text("SECRET-LINE: x\n")
    (repo / "policies").mkdir()
    (repo / "policies" / "rules.yaml").symlink_to(outside)
    r = _check(repo, 'extend-rules = ["policies/*.yaml"]\n')
    err = r.stderr.decode()
    assert r.returncode == 2 and "SECRET-LINE" not in err and "outside the tree being checked" in err, err


def test_files_in_the_tree_still_work_and_the_user_may_name_a_baseline_anywhere(repo, tmp_path_factory):
    (repo / "policies").mkdir()
    (repo / "policies" / "p.yaml").write_text(
        "rules:\n  - id: XP001\n    name: micro-one\n    severity: warning\n"
        "    message: micro batch is 1\n    condition: train_micro_batch_size_per_gpu == `1`\n"
        "    pointer: /train_micro_batch_size_per_gpu\n")
    r = _check(repo, 'extend-rules = ["policies/*.yaml"]\n')
    assert r.returncode == 0 and b"XP001" in r.stdout, r.stderr
    elsewhere = tmp_path_factory.mktemp("mine") / "base.json"
    r = run_cli("check", "--isolated", "--write-baseline", str(elsewhere), "ds.json", cwd=repo)
    assert r.returncode == 0, r.stderr
    r = run_cli("check", "--isolated", "--baseline", str(elsewhere), "ds.json", cwd=repo)
    assert r.returncode == 0, r.stderr


def test_an_oversized_policy_file_is_refused_with_its_size(repo):
    (repo / "big.yaml").write_text("# " + "x" * (1024 * 1024 + 10) + "\n")
    r = _check(repo, 'extend-rules = ["big.yaml"]\n')
    assert (r.returncode, r.stderr.decode()) == (
        2, "zerolint: error: extend-rules = '" + str(repo / "big.yaml") + "': larger than 1,048,576 bytes; not read\n")


def test_a_fifo_at_an_accelerate_yamls_path_does_not_hang_the_language_server(tmp_path):
    """Issue 22, item 8: the server compared the buffer with the file on disk by reading it, and a FIFO there
    blocked it for ever. It reads regular files only now (base/fsio.read_bytes: opened non-blocking, checked)."""
    import subprocess
    import sys

    fifo = tmp_path / "accelerate.yaml"
    os.mkfifo(fifo)
    code = ("from zerolint.lsp.lint import DocumentLinter\n"
            f"o = DocumentLinter(isolated=True).lint({str(fifo)!r}, 'distributed_type: DEEPSPEED\\n')\n"
            "print(o.diagnostics, o.claimed)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout) == (0, "[] True\n"), p.stderr
