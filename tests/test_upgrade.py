"""`zerolint upgrade`: deprecated and renamed keys rewritten for a target DeepSpeed version."""

from __future__ import annotations

import json

import hjson
from conftest import run_cli

from zerolint.fix.upgrade import upgrade_text

OLD = """{
  "train_micro_batch_size_per_gpu": 4,
  "bfloat16": {"enabled": true},
  "zero_optimization": {
    "stage": 3,
    "cpu_offload": true,
    "cpu_offload_param": false,
    "cpu_offload_use_pin_memory": true,
    "stage3_gather_fp16_weights_on_model_save": true
  },
  "aio": {"block_size": 1048576, "thread_count": 2},
  "amp": {"enabled": false}
}
"""

NEW_0198 = """{
  "train_micro_batch_size_per_gpu": 4,
  "bf16": {"enabled": true},
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": {"device": "cpu"},
    "stage3_gather_16bit_weights_on_model_save": true
  },
  "aio": {"block_size": 1048576, "intra_op_parallelism": 2},
  "amp": {"enabled": false}
}
"""


def test_upgrade_to_0_19_8():
    r = upgrade_text(OLD, "ds.json", to="0.19.8")
    assert r.text == NEW_0198
    assert [d.pointer for d in r.remaining] == ["/amp"]
    assert "use fp16, bf16 or torch_autocast" in r.remaining[0].message
    json.loads(r.text)
    assert upgrade_text(r.text, "ds.json", to="0.19.8").text == r.text  # stable


def test_remove_removed_deletes_the_block():
    r = upgrade_text(OLD, "ds.json", to="0.19.8", remove_removed=True)
    assert r.text == NEW_0198.replace('"intra_op_parallelism": 2},\n  "amp": {"enabled": false}\n',
                                      '"intra_op_parallelism": 2}\n')
    assert r.remaining == []


def test_version_gates():
    r = upgrade_text(OLD, "ds.json", to="0.16.2")
    assert '"thread_count": 2' in r.text  # renamed only from 0.16.4
    assert '"amp"' in r.text and r.remaining == []  # amp still exists before 0.19.8


def test_cpu_offload_param_true_and_crlf_and_conflicts():
    text = ('{\r\n  "zero_optimization": {\r\n    "stage": 3,\r\n    "cpu_offload_param": "true",\r\n'
            '    "stage3_gather_fp16_weights_on_model_save": false,\r\n'
            '    "stage3_gather_16bit_weights_on_model_save": true\r\n  },\r\n'
            '  "bfloat16": {"enabled": true},\r\n  "bf16": {"enabled": false}\r\n}\r\n')
    r = upgrade_text(text, "ds.json", to="0.19.8")
    assert r.text == ('{\r\n  "zero_optimization": {\r\n    "stage": 3,\r\n    "offload_param": {"device": "cpu"},\r\n'
                      '    "stage3_gather_fp16_weights_on_model_save": false,\r\n'
                      '    "stage3_gather_16bit_weights_on_model_save": true\r\n  },\r\n'
                      '  "bf16": {"enabled": false}\r\n}\r\n')
    # both spellings set: DeepSpeed refuses the config; which one is meant is the author's call
    assert [d.pointer for d in r.remaining] == ["/zero_optimization/stage3_gather_fp16_weights_on_model_save"]
    assert "refuses the config" in r.remaining[0].message


def test_hjson_keeps_its_style():
    text = "{\n  zero_optimization: {\n    stage: 2\n    cpu_offload: true\n  }\n}\n"
    r = upgrade_text(text, "ds.hjson", to="0.19.8")
    assert r.text == '{\n  zero_optimization: {\n    stage: 2\n    offload_optimizer: {"device": "cpu"}\n  }\n}\n'
    assert hjson.loads(r.text) == {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}


def test_upgrade_cli(tmp_path):
    p = tmp_path / "ds.json"
    p.write_text(OLD)
    r = run_cli("upgrade", "--to", "0.19.8", "--diff", "ds.json", cwd=tmp_path)
    assert r.returncode == 1 and p.read_text() == OLD
    assert '-  "bfloat16": {"enabled": true},\n+  "bf16": {"enabled": true},' in r.stdout.decode()
    assert b"would rename bfloat16 to bf16" in r.stderr
    r = run_cli("upgrade", "--to", "0.19.8", "ds.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert p.read_text() == NEW_0198
    out = r.stdout.decode()
    assert "ds.json:3:3: rename bfloat16 to bf16" in out
    assert "ds.json:10:3: warning ZL700 [upgrade] amp was removed in DeepSpeed 0.19.8" in out
    assert "Upgraded 6 findings in 1 file (1 remaining)." in out
    assert run_cli("upgrade", "--to", "nonsense", "ds.json", cwd=tmp_path).returncode == 2
