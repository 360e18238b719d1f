"""Security of zerolint's input and output (issue 12 items 2, 6, 7, 8, 13 and 15; docs/security.md). Each test
reproduces an attack or failure that worked before the fix: a report written through a link a pull request
committed, a config read through a link or an Accelerate YAML out of the tree, a file name or a line separator
that prints a line of its own, a repository's settings file that hides broken configs without a word, a report
lost or left empty by a missing directory, a full disk or a closed stdout."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from conftest import SEED, run_cli

BROKEN = (SEED / "ds_offload_broken.json").read_text()
FORMATS = ("text", "json", "sarif", "github", "junit")


def _stderr(r) -> str:
    err = r.stderr.decode()
    assert "Traceback" not in err, err
    return err


# -- item 2: no write through a link ----------------------------------------------------------------------------------

def test_output_through_a_symlink_is_refused_and_the_target_is_untouched(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.sh"
    victim.write_text("echo original\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "ds.json").write_text(BROKEN)
    (work / "zerolint.sarif").symlink_to(victim)  # committed in a pull request
    r = run_cli("check", "--format", "text", "--format", "sarif", "-o", "zerolint.sarif", "ds.json", cwd=work)
    assert r.returncode == 2
    assert _stderr(r) == ("zerolint: error: zerolint.sarif: is a symbolic link; zerolint does not write reports "
                          "through links (remove it or choose another path)\n")
    assert victim.read_text() == "echo original\n"
    assert os.path.islink(work / "zerolint.sarif")
    assert "Found 1 error, 1 warning in 1 file." in r.stdout.decode()  # stdout still gets its report


def test_output_into_a_symlinked_directory_out_of_the_tree_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "ds.json").write_text(BROKEN)
    (work / "reports").symlink_to(outside, target_is_directory=True)
    r = run_cli("check", "--format", "json", "-o", "reports/out.json", "ds.json", cwd=work)
    assert r.returncode == 2
    assert _stderr(r) == (f"zerolint: error: reports/out.json: its directory is a symbolic link to {outside}, "
                          "outside the working directory; not written\n")
    assert os.listdir(outside) == []


def test_baseline_is_not_written_through_a_symlink(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text('{"zerolint-baseline": 1, "entries": []}\n')
    work = tmp_path / "work"
    work.mkdir()
    (work / "ds.json").write_text(BROKEN)
    (work / ".zerolint-baseline.json").symlink_to(victim)
    r = run_cli("check", "ds.json", "--write-baseline", cwd=work)
    assert r.returncode == 2
    assert "zerolint: error: .zerolint-baseline.json: is a symbolic link" in _stderr(r)
    assert victim.read_text() == '{"zerolint-baseline": 1, "entries": []}\n'


def test_output_replaces_a_report_atomically_and_keeps_its_mode(tmp_path):
    (tmp_path / "ds.json").write_text(BROKEN)
    out = tmp_path / "report.json"
    out.write_text("old")
    os.chmod(out, 0o640)
    r = run_cli("check", "--format", "json", "-o", "report.json", "ds.json", cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == b""
    assert json.loads(out.read_text())["summary"]["counts"] == {"error": 1, "warning": 1, "info": 0}
    assert oct(out.stat().st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json", "report.json"]


# -- item 13: output errors are exit 2 with a message, never a traceback or a 0-byte file -----------------------------

def test_output_into_a_missing_directory_is_exit_2_with_a_message(tmp_path):
    (tmp_path / "ds.json").write_text(BROKEN)
    r = run_cli("check", "--format", "sarif", "-o", "no/such/dir/out.sarif", "ds.json", cwd=tmp_path)
    assert r.returncode == 2
    assert _stderr(r) == (f"zerolint: error: no/such/dir/out.sarif: cannot write: the directory "
                          f"{tmp_path}/no/such/dir does not exist\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json"]


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))  # a disk that fills after 100 bytes
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the process


def test_output_on_a_full_disk_leaves_no_partial_file(tmp_path):
    (tmp_path / "ds.json").write_text(BROKEN)
    r = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "sarif", "-o", "out.sarif", "ds.json"],
                       cwd=tmp_path, capture_output=True, preexec_fn=_limit_file_size,
                       env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode == 2
    assert _stderr(r) == "zerolint: error: out.sarif: cannot write (File too large); nothing was written\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json"]  # no 0-byte report, no temporary file


def test_stdout_on_a_full_device_is_exit_2_and_the_report_file_is_written(tmp_path):
    if not os.path.exists("/dev/full"):
        import pytest

        pytest.fail("/dev/full is missing (Linux has it)")
    (tmp_path / "ds.json").write_text(BROKEN)
    with open("/dev/full", "wb") as full:
        r = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "text", "--format", "json", "-o",
                            "out.json", "ds.json"], cwd=tmp_path, stdout=full, stderr=subprocess.PIPE,
                           env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode == 2
    assert _stderr(r) == ("zerolint: error: cannot write to stdout (No space left on device): the report was not "
                          "printed\n")
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["files"] == 1


def test_closed_stdout_is_exit_2_and_the_report_file_is_written(tmp_path):
    (tmp_path / "ds.json").write_text(BROKEN)
    read_end, write_end = os.pipe()
    os.close(read_end)  # `zerolint check ... | head` after head exited: every write gets EPIPE
    try:
        r = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "text", "--format", "sarif", "-o",
                            "out.sarif", "ds.json"], cwd=tmp_path, stdout=write_end, stderr=subprocess.PIPE,
                           env={**os.environ, "NO_COLOR": "1"})
    finally:
        os.close(write_end)
    assert r.returncode == 2
    assert _stderr(r) == "zerolint: error: stdout was closed (broken pipe): the report was not printed\n"
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    assert {res["ruleId"] for res in sarif["runs"][0]["results"]} == {"ZL101", "ZL002"}


# -- item 6: reads stay in the tree -----------------------------------------------------------------------------------

def _all_formats(cwd: Path, *args: str, env: dict | None = None) -> list[tuple[int, str]]:
    out = []
    for fmt in FORMATS:
        r = run_cli("check", "--format", fmt, *args, cwd=cwd, env=env)
        out.append((r.returncode, r.stdout.decode() + _stderr(r)))
    return out


def test_a_yaml_naming_proc_self_environ_and_a_link_out_of_the_tree_leak_nothing(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.json").write_text('{"auths": {"ghcr.io": {"auth": "DOCKER-SECRET-42"}},\n'
                                         ' "fp16": {"enabled": true}, "bf16": {"enabled": true}}\n')
    work = tmp_path / "work"
    work.mkdir()
    (work / "ds_config.json").symlink_to(outside / "config.json")
    (work / "env.yaml").write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n"
                                   "  deepspeed_config_file: /proc/self/environ\n")
    (work / "up.yaml").write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n"
                                  "  deepspeed_config_file: ../outside/config.json\n")
    env = {"ZL_TEST_SECRET": "ENVIRON-SECRET-77"}
    for args in (("ds_config.json",), ("env.yaml",), ("up.yaml",), (".",)):
        for code, text in _all_formats(work, *args, env=env):
            assert code == 2, (args, text)
            assert "DOCKER-SECRET" not in text and "ENVIRON-SECRET" not in text and "auths" not in text, (args, text)
    r = run_cli("check", "ds_config.json", "env.yaml", "up.yaml", cwd=work, env=env)
    assert _stderr(r).splitlines() == [
        f"zerolint: error: ds_config.json: resolves to {outside}/config.json, outside the tree being checked "
        f"({work}); not read",
        f"zerolint: error: /proc/self/environ: resolves to /proc/{_pid_placeholder(r)}/environ; zerolint never reads "
        "/proc",
        f"zerolint: error: {os.path.relpath(outside / 'config.json', work)}: resolves to {outside}/config.json, "
        f"outside the tree being checked ({work}); not read",
    ]


def _pid_placeholder(r) -> str:
    """The child's pid, as /proc/self resolved in it (read back from its own message)."""
    line = next(line for line in r.stderr.decode().splitlines() if "/proc/self/environ:" in line)
    return line.split("/proc/")[2].split("/")[0]


def test_links_inside_the_tree_and_files_the_user_names_outside_it_are_read(tmp_path):
    """The out-of-tree rule is about links and names the checked content chooses, not about the user's own
    arguments: a link within the tree is followed, and a path given outside the working directory is read."""
    work = tmp_path / "work"
    (work / "real").mkdir(parents=True)
    (work / "real" / "ds.json").write_text(BROKEN)
    (work / "ds_link.json").symlink_to(work / "real" / "ds.json")
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "ds.json").write_text(BROKEN)
    r = run_cli("check", "--quiet", "ds_link.json", str(other / "ds.json"), cwd=work)
    assert r.returncode == 1 and r.stdout.decode() == "Found 2 errors, 2 warnings in 2 files. 4 fixable with --fix.\n"


def test_proc_sys_and_dev_are_never_read_even_when_named(tmp_path):
    shm = Path("/dev/shm")
    planted = shm / f"zerolint-test-{os.getpid()}.json"
    if shm.is_dir():
        planted.write_text(BROKEN)  # a regular file under /dev
    try:
        for path in ("/sys/kernel/mm/transparent_hugepage/enabled", "/proc/self/cmdline", "/proc/self/environ",
                     *([str(planted)] if planted.exists() else [])):
            if not os.path.exists(path):
                continue
            r = run_cli("check", path, cwd=tmp_path)
            assert r.returncode == 2 and "; zerolint never reads /" in _stderr(r), path
            assert r.stdout.decode() == "No findings in 0 files. 1 file could not be read.\n"
    finally:
        planted.unlink(missing_ok=True)


# -- item 7: names with newlines stay on one line ---------------------------------------------------------------------

def test_a_file_name_with_a_newline_is_escaped_in_messages_and_findings(tmp_path):
    name = "zero\n::warning title=x::pwned.json"
    (tmp_path / name).write_text(BROKEN)
    r = run_cli("check", "--quiet", "missing\n::add-mask::x.json", cwd=tmp_path)
    assert r.returncode == 2
    assert _stderr(r) == "zerolint: error: missing\\n::add-mask::x.json: no such file\n"
    r = run_cli("check", "--format", "text", name, cwd=tmp_path)
    lines = r.stdout.decode().splitlines()
    assert lines[0].startswith("zero\\n::warning title=x::pwned.json:7:5: error ZL101")
    assert not any(line.startswith("::") for line in lines)


# -- item 15 (part): line separators in snippets -----------------------------------------------------------------------

def test_line_separators_in_a_config_are_escaped_in_every_format(tmp_path):
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 1, "x\u2028y\u2029z\x85": 1}\n', "utf-8")
    for code, text in _all_formats(tmp_path, "ds.json"):
        assert code == 0, text
        assert not any(ch in text for ch in "\u2028\u2029\x85"), text
    r = run_cli("check", "ds.json", cwd=tmp_path)
    assert ' 1 | {"train_micro_batch_size_per_gpu": 1, "x\\u2028y\\u2029z\\x85": 1}' in r.stdout.decode()


# -- item 8: a repository's settings cannot silently turn broken configs green ----------------------------------------

def _settings_tree(tmp_path: Path) -> Path:
    (tmp_path / "a.json").write_text(BROKEN)
    (tmp_path / "b.json").write_text(BROKEN)
    (tmp_path / ".zerolint.toml").write_text('exclude = ["b.json"]\nignore = ["ALL"]\n')
    return tmp_path


def test_isolated_ignores_the_repository_settings(tmp_path):
    work = _settings_tree(tmp_path)
    r = run_cli("check", "--isolated", "--quiet", "a.json", "b.json", cwd=work)
    assert r.returncode == 1
    assert r.stdout.decode() == "Found 2 errors, 2 warnings in 2 files. 4 fixable with --fix.\n"


def test_isolated_ignores_a_planted_baseline(tmp_path):
    (tmp_path / "a.json").write_text(BROKEN)
    assert run_cli("check", "a.json", "--write-baseline", cwd=tmp_path).returncode == 0
    assert run_cli("check", "a.json", cwd=tmp_path).returncode == 0  # the baseline hides both findings
    r = run_cli("check", "--isolated", "--quiet", "a.json", cwd=tmp_path)
    assert r.returncode == 1 and r.stdout.decode() == "Found 1 error, 1 warning in 1 file. 2 fixable with --fix.\n"


def test_every_summary_says_what_settings_files_turned_off(tmp_path):
    work = _settings_tree(tmp_path)
    r = run_cli("check", "a.json", "b.json", cwd=work)
    assert r.returncode == 0
    assert r.stdout.decode() == ("All checks passed in 1 file.\n"
                                 "note: 1 file excluded by .zerolint.toml (exclude)\n"
                                 "note: rules turned off by .zerolint.toml: ALL\n")
    notes = ["1 file excluded by .zerolint.toml (exclude)", "rules turned off by .zerolint.toml: ALL"]
    report = json.loads(run_cli("check", "--format", "json", "a.json", "b.json", cwd=work).stdout)
    assert report["summary"]["notes"] == notes
    sarif = json.loads(run_cli("check", "--format", "sarif", "a.json", "b.json", cwd=work).stdout)
    assert [n["message"]["text"] for n in sarif["runs"][0]["invocations"][0]["toolConfigurationNotifications"]] == \
        notes
    github = run_cli("check", "--format", "github", "a.json", "b.json", cwd=work).stdout.decode()
    assert github.splitlines() == [f"::notice title=zerolint settings::{n}" for n in notes]


def test_suppressions_and_severity_changes_are_announced(tmp_path):
    (tmp_path / "a.json").write_text(BROKEN)
    (tmp_path / ".zerolint.toml").write_text(
        'severity = { ZL002 = "info" }\n'
        '[suppress]\n"a.json" = [{ code = "ZL101", pointer = "/offload_optimizer", reason = "x" }]\n')
    r = run_cli("check", "--quiet", "a.json", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.decode().splitlines() == [
        "Found 1 info in 1 file. 1 fixable with --fix. 1 info hidden (--show-info).",
        "note: severities changed by .zerolint.toml: ZL002=info", "note: 1 finding suppressed by .zerolint.toml"]


def test_no_settings_file_no_note(tmp_path):
    shutil.copy(SEED / "ds_zero2.json", tmp_path / "ds.json")
    r = run_cli("check", "ds.json", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.decode() == "All checks passed in 1 file.\n"


def test_fix_and_diff_do_not_read_through_a_link_out_of_the_tree(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text(BROKEN.replace("{", '{"token": "FIX-SECRET-9",', 1))
    work = tmp_path / "work"
    work.mkdir()
    (work / "ds.json").symlink_to(outside / "secret.json")
    for mode in ("--diff", "--fix"):
        r = run_cli("check", mode, "ds.json", cwd=work)
        assert r.returncode == 2 and "FIX-SECRET" not in r.stdout.decode() + _stderr(r)
        assert (f"zerolint: error: ds.json: resolves to {outside}/secret.json, outside the tree being checked "
                f"({work}); not read") in _stderr(r)
    assert "FIX-SECRET-9" in (outside / "secret.json").read_text() and (work / "ds.json").is_symlink()
