"""Which documents the language server lints (lsp/detect.py): a DeepSpeed config by content, by a `$schema`, or by
a config file's name; never a file of another kind named like one."""

from __future__ import annotations

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
