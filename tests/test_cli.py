"""CLI behaviour: exit codes, formats, options; text and JSON output are snapshot-tested."""

from __future__ import annotations

import json
import re

from conftest import SEED, run_cli
from snapshot import assert_snapshot


def test_seed_broken_text_snapshot():
    r = run_cli("check", "--target", "deepspeed", "fixtures/examples/seed/ds_offload_broken.json")
    assert r.returncode == 1
    assert_snapshot("check_seed_broken.txt", r.stdout.decode())


def test_seed_broken_for_hf_reports_json_load_position():
    r = run_cli("check", "--target", "hf", "--format", "json", "fixtures/examples/seed/ds_offload_broken.json")
    out = json.loads(r.stdout)
    found = {(d["code"], d["pointer"], d["line"], d["column"], d["severity"]) for d in out["diagnostics"]}
    assert ("ZL002", "/offload_optimizer", 8, 5, "error") in found
    assert ("ZL101", "/offload_optimizer", 7, 5, "error") in found


def test_seed_all_json_snapshot():
    r = run_cli("check", "--format", "json", *sorted(str(p.relative_to(SEED.parents[2])) for p in SEED.glob("*.json")))
    assert r.returncode == 1
    out = json.loads(r.stdout)
    for d in out["diagnostics"]:  # the contract of ../shared/DESIGN.md
        assert {"file", "code", "name", "severity", "message", "pointer", "line", "column", "end_line",
                "end_column", "fix"} <= d.keys()
    assert_snapshot("check_seed_all.json", r.stdout.decode())


def test_seed_expected_findings():
    def codes(name, *extra):
        r = run_cli("check", "--format", "json", *extra, f"fixtures/examples/seed/{name}")
        return r.returncode, {(d["code"], d["pointer"]) for d in json.loads(r.stdout)["diagnostics"]
                              if d["severity"] == "error"}

    assert codes("ds_fp16_bf16.json") == (1, {("ZL301", "/bf16/enabled")})
    assert codes("ds_offload_param_stage2.json") == (1, {("ZL201", "/zero_optimization/offload_param")})
    assert codes("ds_offload_broken.json") == (1, {("ZL101", "/offload_optimizer")})
    assert codes("ds_offload_broken.json", "--target", "hf") == (
        1, {("ZL101", "/offload_optimizer"), ("ZL002", "/offload_optimizer")})
    for clean in ("ds_zero1.json", "ds_zero2.json", "ds_zero3_offload.json"):
        assert codes(clean, "--fail-on", "info") == (0, set()), clean


def test_exit_codes():
    assert run_cli("check", "fixtures/examples/seed/ds_zero1.json").returncode == 0
    assert run_cli("check", "fixtures/examples/seed/ds_fp16_bf16.json").returncode == 1
    missing = run_cli("check", "does/not/exist.json")
    assert missing.returncode == 2
    assert b"does/not/exist.json: no such file" in missing.stderr
    assert run_cli("check", "--target", "nonsense", "x.json").returncode == 2
    assert run_cli("check", "--select", "ZL9999", "x.json").returncode == 2


def test_directory_is_not_a_file_error_and_glob(tmp_path):
    (tmp_path / "a.json").write_text('{"train_micro_batch_size_per_gpu": 1, "gradient_clipping": 1.0}')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.json").write_text('{"train_micro_batch_size_per_gpu": 1, "zero_optimisation": {}}')
    r = run_cli("check", "--format", "json", str(tmp_path))
    files = {d["file"] for d in json.loads(r.stdout)["diagnostics"]}
    assert files == {str(tmp_path / "sub" / "b.json")}
    assert json.loads(r.stdout)["summary"]["files"] == 2
    r = run_cli("check", str(tmp_path / "*.json"))
    assert r.returncode == 0


def test_fail_on_warning():
    cfg = b'{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2, "sub_group_size": 1}}'
    assert run_cli("check", "-", input=cfg).returncode == 0
    assert run_cli("check", "--fail-on", "warning", "-", input=cfg).returncode == 1


def test_stdin_and_stdin_filename():
    r = run_cli("check", "--stdin-filename", "ds.json", "-",
                input=b'{"train_micro_batch_size_per_gpu": 1, "stage": 3, "gradient_clipping": 0}')
    assert r.returncode == 1
    assert r.stdout.decode().startswith("ds.json:1:39: error ZL101")


def test_select_ignore_and_severity_override():
    cfg = b'{"gradient_clipping": 1.0, "zero_optimization": {"stage": 2, "sub_group_size": 1}}'
    r = run_cli("check", "--format", "json", "--ignore", "ZL401", "-", input=cfg)
    assert {d["code"] for d in json.loads(r.stdout)["diagnostics"]} == {"ZL203"}
    r = run_cli("check", "--format", "json", "--select", "ZL2", "--severity", "ZL203=error", "-", input=cfg)
    out = json.loads(r.stdout)["diagnostics"]
    assert [(d["code"], d["severity"]) for d in out] == [("ZL203", "error")]
    assert r.returncode == 1
    r = run_cli("check", "--format", "json", "--select", "stage3-key-below-stage-3", "-", input=cfg)
    assert {d["code"] for d in json.loads(r.stdout)["diagnostics"]} == {"ZL203"}


def test_rules_and_rule_commands():
    r = run_cli("rules")
    assert r.returncode == 0 and b"ZL101  misplaced-key" in r.stdout
    r = run_cli("rule", "ZL101")
    assert r.returncode == 0 and b"# ZL101 `misplaced-key`" in r.stdout and b"## Bad" in r.stdout
    assert run_cli("rule", "misplaced-key").stdout == r.stdout
    bad = run_cli("rule", "ZL1O1")
    assert bad.returncode == 2 and b"did you mean" in bad.stderr


def test_schema_command():
    r = run_cli("schema", "--deepspeed-version", "0.19.8")
    schema = json.loads(r.stdout)
    assert schema["x-zerolint"]["deepspeed_version"] == "0.19.8"
    r = run_cli("schema", "--deepspeed-version", "0.16.2")
    assert json.loads(r.stdout)["$id"].endswith("deepspeed-0.16.json")


def test_unreadable_file_does_not_stop_the_others(tmp_path):
    good = tmp_path / "ds.json"
    good.write_text('{"stage": 2, "train_micro_batch_size_per_gpu": 1}')
    r = run_cli("check", str(good), str(tmp_path / "missing.json"))
    assert r.returncode == 2
    assert b"ZL101" in r.stdout and b"missing.json: no such file" in r.stderr


def test_terminal_escapes_in_config_are_neutralised():
    cfg = '{"train_micro_batch_size_per_gpu": 1, "\x1b[2Jevil": 1}'.encode()
    r = run_cli("check", "-", input=cfg)
    assert b"\x1b" not in r.stdout and b"\\x1b[2Jevil" in r.stdout


def test_check_with_no_path_lints_the_working_directory(tmp_path):
    """As `ruff check`: no FILES is `.` (through the console script's fast path and through click alike)."""
    (tmp_path / "ds.json").write_bytes((SEED / "ds_offload_broken.json").read_bytes())
    (tmp_path / "package.json").write_text('{"name": "x"}\n')
    r = run_cli("check", "--output-format", "concise", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stdout.decode().splitlines()[0].startswith("./ds.json:7:5: error ZL101")
    r = run_cli("check", "--output-format", "concise", "--verbose-never-an-option", cwd=tmp_path)
    assert r.returncode == 2  # (an unknown option still goes to click, and is still refused)
    r = run_cli("check", "--show-files", cwd=tmp_path)
    assert r.stdout.decode().splitlines()[-1] == "1 file to lint, 1 skipped."


def test_color_always_never_auto(tmp_path):
    (tmp_path / "ds.json").write_bytes((SEED / "ds_offload_broken.json").read_bytes())
    always = run_cli("check", "--color", "always", "ds.json", cwd=tmp_path).stdout.decode()
    assert "\x1b[1;31merror\x1b[0m" in always  # over NO_COLOR=1 (run_cli sets it): the flag is explicit
    for args in (("--color", "never"), ("--color", "auto"), ("--color", "always", "--no-color")):
        out = run_cli("check", *args, "ds.json", cwd=tmp_path, env={"FORCE_COLOR": ""}).stdout.decode()
        assert "\x1b[" not in out and "ds.json:7:5: error ZL101" in out
    # the coloured report is the plain one with escape sequences around the styled parts, each reset before its
    # line break (so that `less -R` and a terminal's scroll-back carry no colour into the next line)
    plain = run_cli("check", "--color", "never", "ds.json", cwd=tmp_path).stdout.decode()
    assert re.sub(r"\x1b\[[0-9;]*m", "", always) == plain
    assert always.splitlines()[:4] == [
        "ds.json:7:5: \x1b[1;31merror\x1b[0m \x1b[1mZL101\x1b[0m [misplaced-key] offload_optimizer belongs inside "
        "zero_optimization; DeepSpeed ignores it at the top level: nothing is offloaded",
        "\x1b[2m   |\x1b[0m",
        '\x1b[2m 7 | \x1b[0m    "offload_optimizer": {"device": "cpu", "pin_memory": true}',
        "\x1b[2m   | \x1b[0m\x1b[1;31m    ^^^^^^^^^^^^^^^^^^^\x1b[0m",
    ]
    assert always.splitlines()[-1].startswith("\x1b[1mFound ") and always.endswith("\x1b[0m\n")
    assert all(not line.startswith("\x1b[0m") for line in always.splitlines())
    r = run_cli("check", "--color", "sometimes", "ds.json", cwd=tmp_path)
    assert r.returncode == 2
    assert "Invalid value for '--color': 'sometimes' is not one of 'auto', 'always', 'never'." in r.stderr.decode()


def test_shell_completion_as_the_readme_says(tmp_path):
    """The README's completion line: click's bash completion of options and of an option's choices."""
    def complete(words: str, cword: int) -> list[str]:
        r = run_cli(env={"COMP_WORDS": words, "COMP_CWORD": str(cword), "_ZEROLINT_COMPLETE": "bash_complete"})
        return r.stdout.decode().split()

    assert complete("zerolint check --col", 2) == ["plain,--color"]
    assert complete("zerolint check --color ", 3) == ["plain,auto", "plain,always", "plain,never"]
    r = run_cli(env={"_ZEROLINT_COMPLETE": "bash_source"})
    assert r.stdout.decode().startswith("_zerolint_completion() {")


def test_config_takes_inline_settings_as_ruff_does(tmp_path):
    (tmp_path / "ds.json").write_text('{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, '
                                      '"gradient_accumulation_steps": 1}\n')
    (tmp_path / ".zerolint.toml").write_text('world-size = 8\n')

    def concise(*args: str) -> tuple[int, list[str]]:
        r = run_cli("check", "--output-format", "concise", *args, "ds.json", cwd=tmp_path)
        if r.returncode == 2:
            return 2, r.stderr.decode().strip().splitlines()[-1:]
        return r.returncode, [line for line in r.stdout.decode().splitlines() if ": " in line]

    assert concise() == (0, [])  # the config file's world size: 32 == 4 * 1 * 8
    code, lines = concise("--config", "world-size = 4")  # over the config file
    assert code == 1 and lines[0].startswith("ds.json:1:2: error ZL402 with world size 4:")
    assert concise("--config", "world-size=4", "--config", 'ignore = ["ZL402"]') == (0, [])
    assert concise("--config", "world-size = 4", "--world-size", "8") == (0, [])  # the flag wins over --config
    assert concise("--config", "wrld-size = 4") == (2, [
        "Error: Invalid value for --config: --config 'wrld-size = 4': unknown key `wrld-size`; did you mean "
        "`world-size`? (known keys: select, ignore, extend-select, extend-ignore, severity, per-file-ignores, target, "
        "world-size, deepspeed-version, torch-version, fail-on, exclude, include, suppress)"])
    assert concise("--config", 'baseline = "b.json"')[1] == [
        "Error: Invalid value for --config: --config 'baseline = \"b.json\"': `baseline` names files relative to a "
        "config file: set it in one"]
    assert concise("--config", 'ignore = ["ZL9999"]')[1] == [
        "Error: Invalid value for --config: --config 'ignore = [\"ZL9999\"]': `ignore`: unknown rule 'ZL9999'"]
    (tmp_path / "other.toml").write_text("world-size = 4\n")
    assert concise("--config", "other.toml")[0] == 1  # a file is still a config file
    assert concise("--config", "other.toml", "--config", ".zerolint.toml")[1] == [
        "Error: Invalid value for --config: one zerolint config file, not 2 (other.toml, .zerolint.toml); settings "
        "go as --config 'KEY = VALUE'"]


def test_a_missing_extra_says_how_to_install_it_both_ways():
    """zerolint is not on PyPI yet: the message names the index form and the one that works today."""
    import subprocess
    import sys

    code = ("import sys\nsys.modules['pygls'] = None  # not installed\nfrom zerolint.cli import main\n"
            "main(['server'])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.strip().endswith(
        "install it with pip install 'zerolint[lsp]' (from PyPI, once published), or today pip install "
        "'zerolint[lsp] @ git+https://github.com/zerolint/zerolint' (from a clone: pip install '.[lsp]')")
