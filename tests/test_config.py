"""zerolint's own configuration: discovery, validation, precedence, --show-settings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import SEED, run_cli

BROKEN = SEED / "ds_offload_broken.json"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, "utf-8")
    return tmp_path


def _json(result) -> list[dict]:
    assert result.returncode in (0, 1), result.stderr.decode()
    return json.loads(result.stdout)["diagnostics"]


def test_pyproject_table_applies_to_files_below_it(tmp_path):
    _tree(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\n\n[tool.zerolint]\ntarget = "hf"\nignore = ["ZL101"]\n',
        "ds/sub/ds_config.json": BROKEN.read_text(),
    })
    diags = _json(run_cli("check", "--format", "json", "ds/sub/ds_config.json", cwd=tmp_path))
    codes = {d["code"]: d["severity"] for d in diags}
    assert "ZL101" not in codes
    assert codes["ZL002"] == "error"  # target hf: json.load rejects the missing comma


def test_zerolint_toml_wins_over_pyproject_in_the_same_directory(tmp_path):
    _tree(tmp_path, {
        "pyproject.toml": '[tool.zerolint]\nignore = ["ZL002"]\n',
        ".zerolint.toml": 'ignore = ["ZL101"]\n',
        "ds_config.json": BROKEN.read_text(),
    })
    codes = {d["code"] for d in _json(run_cli("check", "--format", "json", "ds_config.json", cwd=tmp_path))}
    assert codes == {"ZL002"}


def test_nearest_config_wins_and_pyproject_without_table_is_passed_over(tmp_path):
    _tree(tmp_path, {
        ".zerolint.toml": 'ignore = ["ZL002"]\n',
        "inner/pyproject.toml": '[project]\nname = "inner"\n',  # no [tool.zerolint]: keep looking up
        "inner/ds_config.json": BROKEN.read_text(),
        "other/.zerolint.toml": 'ignore = ["ZL101"]\n',
        "other/ds_config.json": BROKEN.read_text(),
    })
    diags = _json(run_cli("check", "--format", "json", "inner/ds_config.json", "other/ds_config.json", cwd=tmp_path))
    by_file = {}
    for d in diags:
        by_file.setdefault(Path(d["file"]).parent.name, set()).add(d["code"])
    assert by_file == {"inner": {"ZL101"}, "other": {"ZL002"}}


def test_cli_flags_override_the_file_and_severity_tables_merge(tmp_path):
    _tree(tmp_path, {
        ".zerolint.toml": 'ignore = ["ZL101"]\nseverity = { ZL002 = "info", ZL101 = "warning" }\nfail-on = "info"\n',
        "ds_config.json": BROKEN.read_text(),
    })
    r = run_cli("check", "--format", "json", "--ignore", "ZL3", "--severity", "ZL101=info", "--fail-on", "error",
                "ds_config.json", cwd=tmp_path)
    sev = {d["code"]: d["severity"] for d in _json(r)}
    assert sev == {"ZL101": "info", "ZL002": "info"}
    assert r.returncode == 0  # --fail-on error from the command line beats fail-on = "info"


def test_per_file_ignores_extend_select_and_exclude(tmp_path):
    _tree(tmp_path, {
        ".zerolint.toml": ('select = ["ZL0"]\nextend-select = ["ZL101"]\n'
                           'per-file-ignores = { "legacy/*.json" = ["ZL002"] }\nexclude = ["**/*_TEMPLATE.json"]\n'),
        "legacy/ds_config.json": BROKEN.read_text(),
        "new/ds_config.json": BROKEN.read_text(),
        "new/ds_TEMPLATE.json": "{ not json",
    })
    diags = _json(run_cli("check", "--format", "json", ".", cwd=tmp_path))
    seen = {(Path(d["file"]).parent.name, d["code"]) for d in diags}
    assert seen == {("legacy", "ZL101"), ("new", "ZL101"), ("new", "ZL002")}


@pytest.mark.parametrize("toml,message", [
    ('taget = "hf"\n', "unknown key `taget`; did you mean `target`?"),
    ('world_size = 8\n', "did you mean `world-size`?"),
    ('target = "hff"\n', "`target` = 'hff' is not one of auto, deepspeed, hf, accelerate; did you mean 'hf'?"),
    ('ignore = "ZL101"\nselect = 3\n', "`select` must be a list of strings, not int 3"),
    ('world-size = 0\n', "`world-size` must be an integer >= 1"),
    ('ignore = ["ZL9999"]\n', "unknown rule 'ZL9999'"),
    ('severity = { ZL101 = "fatal" }\n', "`severity.ZL101` = 'fatal' is not one of error, warning, info"),
    ('[suppress]\n"a.json" = [{ code = "ZL101", pointr = "/x" }]\n', "unknown key `pointr`"),
    ('deepspeed-version = "zero"\n', "`deepspeed-version`"),
    ('target = \n', "not valid TOML"),
])
def test_broken_config_is_exit_2_naming_key_and_file(tmp_path, toml, message):
    _tree(tmp_path, {".zerolint.toml": toml, "ds_config.json": "{}"})
    r = run_cli("check", "ds_config.json", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert message in err and ".zerolint.toml" in err


def test_show_settings_says_where_each_value_came_from(tmp_path):
    _tree(tmp_path, {"pyproject.toml": '[tool.zerolint]\ntarget = "accelerate"\nfail-on = "warning"\n',
                     "ds/ds_config.json": "{}"})
    r = run_cli("check", "--show-settings", "--world-size", "8", "ds/ds_config.json", cwd=tmp_path)
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr.decode()
    lines = {line.split("=")[0].strip(): line for line in out.splitlines() if " = " in line}
    cfg = str(tmp_path / "pyproject.toml")
    assert lines["target"].endswith(f"# {cfg}") and '"accelerate"' in lines["target"]
    assert lines["world-size"].endswith("# CLI") and "8" in lines["world-size"]
    assert lines["select"].endswith("# default")
    assert f"config file: {cfg}" in out
    # without files: the settings for the working directory (stdin)
    r = run_cli("check", "--show-settings", cwd=tmp_path)
    assert r.returncode == 0 and "config file: " + cfg in r.stdout.decode()


def test_explicit_config_and_stdin_use_the_working_directory(tmp_path):
    _tree(tmp_path, {".zerolint.toml": 'ignore = ["ZL101"]\n', "other.toml": 'ignore = ["ZL002"]\n'})
    codes = {d["code"] for d in _json(run_cli("check", "--format", "json", "-", input=BROKEN.read_bytes(),
                                              cwd=tmp_path))}
    assert codes == {"ZL002"}
    codes = {d["code"] for d in _json(run_cli("check", "--format", "json", "--config", "other.toml", "-",
                                              input=BROKEN.read_bytes(), cwd=tmp_path))}
    assert codes == {"ZL101"}


def test_unknown_policy_code_on_the_command_line_is_a_usage_error(tmp_path):
    shutil.copy(BROKEN, tmp_path / "ds_config.json")
    r = run_cli("check", "--ignore", "ORG001", "ds_config.json", cwd=tmp_path)
    assert r.returncode == 2 and "unknown rule 'ORG001'" in r.stderr.decode()
