"""The fast `check` path (cli/fast.py) against click's: for every command line it either reads exactly the
pipeline.Options that click's command reads, or declines (click reads it then). And a plain check imports no click."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zerolint.cli.check_cmd import check
from zerolint.cli.fast import parse_check
from zerolint.cli.options import CheckCommand
from zerolint.cli.spec import CHECK_OPTIONS, OptionError, build_options

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "fixtures" / "examples" / "seed" / "ds_zero3_offload.json"
DECLINED = "declined"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """ds.json, a directory of configs, a baseline file, a non-baseline JSON file, a model config."""
    (tmp_path / "ds.json").write_bytes(SEED.read_bytes())
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "a.json").write_text('{"train_batch_size": 8}')
    (tmp_path / "base.json").write_text(json.dumps({"zerolint-baseline": 1, "findings": []}))
    (tmp_path / "model.json").write_text('{"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "vocab_size": 100}')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def click_reading(args):
    """(FILES-derived Options, show_settings, training_args) as click's command reads them, or the click error."""
    try:
        ctx = check.make_context("check", list(args))
    except (click.ClickException, click.exceptions.Exit) as e:
        return ("click error", type(e).__name__)
    files, kw = ctx.params.pop("files"), ctx.params
    try:
        return build_options(files, kw), kw["show_settings"], kw["training_args"]
    except OptionError as e:
        return ("option error", e.hint)


def fast_reading(args):
    parsed = parse_check(list(args))
    if parsed is None:
        return DECLINED
    files, kw = parsed
    try:
        return build_options(files, kw), kw["show_settings"], kw["training_args"]
    except OptionError as e:
        return ("option error", e.hint)


def assert_agree(args):
    fast = fast_reading(args)
    if fast != DECLINED:
        assert fast == click_reading(args), args


VALUES = {"formats": "json", "outputs": "report.txt", "target": "hf", "world_size": "4", "deepspeed_version": "0.14.0",
          "torch_version": "2.11", "fail_on": "warning", "select": "ZL2,ZL301", "ignore": "ZL101",
          "severity_overrides": "ZL401=warning",
          "stdin_filename": "cfg.json", "max_bytes": "1000", "max_depth": "5000", "max_values": "50",
          "exclude": "*.yaml", "include": "c/*",
          "max_findings_per_file": "0", "max_findings": "7", "config_file": "ds.json", "baseline": "base.json",
          "write_baseline": "out.json", "training_args": "ta.json", "prefer": "bf16", "params": "7B",
          "model_config": "model.json", "gpu_memory": "80GB", "host_memory": "1TB", "gpus_per_node": "8",
          "color_when": "always"}

HAND_PICKED = [
    ["ds.json"], ["-"], ["*.json"], ["configs"], ["ds.json", "configs", "-"], [],
    ["--format", "json", "--format", "sarif", "-o", "r.sarif", "ds.json"], ["-o", "r.txt", "ds.json"],
    ["--format=json", "ds.json"], ["--select", "ZL2,ZL301", "--select", "ZL4", "ds.json"], ["ds.json", "--quiet"],
    ["-q", "ds.json", "-q"], ["--target", "hf", "--target", "deepspeed", "ds.json"], ["--write-baseline", "ds.json"],
    ["--write-baseline", "configs"], ["--write-baseline", "base.json", "ds.json"], ["--write-baseline"],
    ["--write-baseline=", "ds.json"], ["--write-baseline=x.json", "ds.json"], ["ds.json", "--write-baseline"],
    ["--write-baseline", "--quiet", "ds.json"], ["--write-baseline", "-", "ds.json"],
    ["--write-baseline", "new.json", "ds.json"], ["--show-settings"], ["--fix", "--unsafe-fixes", "ds.json"],
    ["--diff", "--prefer", "bf16", "ds.json"], ["--fix-only", "ds.json"], ["--severity", "ZL401=warning", "ds.json"],
    ["--severity", "ZL401", "ds.json"], ["--severity", "ZL401=loud", "ds.json"], ["--deepspeed-version", "x", "f"],
    ["--params", "7B", "--gpu-memory", "80GB", "ds.json"], ["--params", "seven", "ds.json"],
    ["--model", "model.json", "--host-memory", "1TB", "ds.json"], ["--gpu-memory", "lots", "ds.json"],
    # click's, declined: help, unknown, abbreviations, clusters, `--`, bad or missing values, odd spellings
    ["--help"], ["-h"], ["--bogus", "ds.json"], ["--form", "json", "ds.json"], ["-qo", "r.txt", "ds.json"],
    ["-or.txt", "ds.json"], ["-o=r.txt", "ds.json"], ["--", "ds.json"], ["--quiet=1", "ds.json"],
    ["--world-size", "0", "ds.json"], ["--world-size", "x", "ds.json"], ["--world-size", " 4", "ds.json"],
    ["--max-depth", "5001", "ds.json"], ["--format", "xml", "ds.json"], ["--format"], ["--select", "--quiet", "f"],
    ["-o", "configs", "ds.json"], ["--config", "configs", "ds.json"], ["--baseline", "configs", "ds.json"],
    ["-o", "a", "-o", "b", "ds.json"], ["-5", "ds.json"],
] + [[opt.flags[0], "ds.json"] if opt.kind == "flag" else [opt.flags[0], VALUES[opt.dest], "ds.json"]
     for opt in CHECK_OPTIONS]


@pytest.mark.parametrize("args", HAND_PICKED, ids=" ".join)
def test_the_fast_reading_is_clicks_or_declined(tree, args):
    assert_agree(args)


@pytest.mark.parametrize("args", [
    ["ds.json"], ["-"], ["--format", "json", "--format", "sarif", "-o", "r.sarif", "ds.json"],
    ["--select", "ZL2,ZL301", "ds.json"], ["--write-baseline", "configs"], ["--write-baseline=", "ds.json"],
    ["--fix", "ds.json"], ["--quiet", "--no-color", "configs"], ["--write-baseline"],
] + [[opt.flags[-1], "ds.json"] if opt.kind == "flag" else [opt.flags[-1], VALUES[opt.dest], "ds.json"]
     for opt in CHECK_OPTIONS])
def test_the_common_command_lines_take_the_fast_path(tree, args):
    fast = fast_reading(args)
    assert fast != DECLINED and fast == click_reading(args)


@pytest.mark.parametrize("args,why", [
    (["--help"], "help"), (["-qo", "r.txt", "f"], "cluster"), (["--form", "json", "f"], "abbreviation"),
    (["--", "f"], "--"), (["--format", "xml", "f"], "bad choice"), (["--world-size", "0", "f"], "out of range"),
    (["-o", "configs", "f"], "a directory as the output"), (["--select"], "missing value"),
])
def test_declines_what_click_must_say(tree, args, why):
    assert parse_check(args) is None, why


TOKENS = ([flag for opt in CHECK_OPTIONS for flag in opt.flags]
          + ["-", "--", "-h", "--help", "-qo", "--form", "--format=json", "--format=xml", "--write-baseline=",
             "--write-baseline=b.json", "--quiet=1", "-x"]
          + ["ds.json", "configs", "base.json", "model.json", "*.json", "missing.json", "", "json", "text", "sarif",
             "hf", "0", "1", "4", "5001", "x", "ZL2,ZL301", "ZL401=warning", "ZL401", "7B", "80GB", "bf16", "r.txt"])


@given(st.lists(st.sampled_from(TOKENS), max_size=9))
def test_any_command_line_is_read_as_click_reads_it_or_declined(args):
    cwd = os.getcwd()
    os.chdir(_HYPOTHESIS_TREE)
    try:
        assert_agree(args)
    finally:
        os.chdir(cwd)


_HYPOTHESIS_TREE = None


@pytest.fixture(autouse=True, scope="module")
def _hypothesis_tree(tmp_path_factory):
    global _HYPOTHESIS_TREE
    root = tmp_path_factory.mktemp("fastcli")
    (root / "ds.json").write_bytes(SEED.read_bytes())
    (root / "configs").mkdir()
    (root / "base.json").write_text(json.dumps({"zerolint-baseline": 1, "findings": []}))
    (root / "model.json").write_text('{"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "vocab_size": 100}')
    _HYPOTHESIS_TREE = root
    yield


def test_check_command_is_built_from_the_table():
    names = [p.name for p in check.params if p.name != "files"]
    assert names == [opt.dest for opt in CHECK_OPTIONS] and isinstance(check, CheckCommand)


# -- whole processes ---------------------------------------------------------------------------------------------------

def _run(code: str, *args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, env=env)


IMPORTS_CLICK = ("import sys\nsys.argv[0] = 'host'\nfrom zerolint.cli.fast import main\ntry:\n    main()\n"
                 "except SystemExit as e:\n    print('exit', e.code)\nprint('click' in sys.modules)\n")


@pytest.mark.parametrize("args,code,clicked", [
    (["check", "ds.json"], 0, False), (["check", "--format", "json", "-q", "ds.json"], 0, False),
    (["check", "--help"], 0, True), (["check", "--select", "ZL9999", "ds.json"], 2, True), (["rules"], 0, True),
])
def test_a_plain_check_process_does_not_import_click(tree, args, code, clicked):
    r = _run(IMPORTS_CLICK, *args, cwd=tree)
    assert r.stdout.splitlines()[-2:] == [f"exit {code}", str(clicked)], r.stdout + r.stderr


FAST = "import sys\nfrom zerolint.cli.fast import main\nmain(prog_name='zerolint')\n"
CLICK = "import sys\nfrom zerolint.cli import main\nmain(prog_name='zerolint')\n"


@pytest.mark.parametrize("args", [
    ["ds.json"], ["--format", "json", "ds.json"], ["--format", "sarif", "--format", "text", "-o", "r.sarif", "ds.json"],
    ["missing.json"], ["--select", "ZL9999", "ds.json"], ["--select", "ZL2", "--quiet", "ds.json"], ["--show-settings"],
    ["--diff", "bad.json"], ["--write-baseline", "configs"], ["--format", "xml", "ds.json"], ["--config", "nope.toml"],
    ["--fail-on", "info", "--no-color", "bad.json"], ["--params", "seven", "ds.json"], [],
])
def test_the_fast_process_prints_what_clicks_prints(tree, args):
    (tree / "bad.json").write_text('{"train_batch_size": 8, "fp16": {"enabled": true}, "bf16": {"enabled": true}}')
    fast = _run(FAST, "check", *args, cwd=tree)
    (tree / "r.sarif").unlink(missing_ok=True)
    (tree / ".zerolint-baseline.json").unlink(missing_ok=True)
    slow = _run(CLICK, "check", *args, cwd=tree)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
