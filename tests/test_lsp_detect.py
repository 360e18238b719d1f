"""Which documents the language server lints (lsp/detect.py): a DeepSpeed config by content, by a `$schema`, or by
a config file's name; never a file of another kind named like one."""

from __future__ import annotations

import json

import pytest

from zerolint.lsp.detect import claims, named_like_config
from zerolint.model.document import parse_bytes


@pytest.mark.parametrize("path,named", [
    ("ds_config.json", True), ("conf/deepspeed_z3.jsonc", True), ("zero3.hjson", True), ("DS-offload.JSON", True),
    ("ds_utils.js", False), ("deepspeed_launch.py", False), ("zero3.yaml", False), ("package.json", False),
])
def test_the_name_hint_holds_for_config_suffixes_only(path, named):
    assert named_like_config(path) is named


def test_an_empty_config_named_like_one_is_linted_and_a_script_is_not():
    assert claims("ds_config.json", parse_bytes(b"{}", "ds_config.json"))
    assert not claims("ds_utils.js", parse_bytes(b"{}", "ds_utils.js"))
    assert claims("notes.json", parse_bytes(b'{"train_micro_batch_size_per_gpu": 1}', "notes.json"))


def test_the_servers_world_size_reaches_the_batch_checks(tmp_path):
    """`zerolint server --world-size N` (the VS Code extension's zerolint.worldSize): the batch-size equation is
    checked with N GPUs, as `check --world-size N` checks it."""
    from conftest import run_cli

    from zerolint.lsp.lint import DocumentLinter

    text = '{"train_batch_size": 16, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}'
    path = str(tmp_path / "ds_config.json")
    (tmp_path / "ds_config.json").write_text(text)
    got = {(d.code, d.line, d.column, d.message) for d in DocumentLinter(isolated=True, world_size=8)
           .lint(path, text).diagnostics if d.severity.value == "error"}
    cli = run_cli("check", "--isolated", "--world-size", "8", "--format", "json", path, cwd=tmp_path)
    want = {(d["code"], d["line"], d["column"], d["message"]) for d in json.loads(cli.stdout)["diagnostics"]
            if d["severity"] == "error"}
    assert got == want and any(code.startswith("ZL4") for code, *_ in got), got
    assert not {d.code for d in DocumentLinter(isolated=True).lint(path, text).diagnostics} & {c for c, *_ in got}
