"""Rules that read the model's tensor sizes from `--model config.json` (the rule cases carry only `params`)."""

from __future__ import annotations

import os

import pytest

from zerolint.model.document import parse
from zerolint.model.view import Settings
from zerolint.rules.engine import Selection, run_rules

TINYLLAMA = os.path.join(os.path.dirname(__file__), "..", "fixtures", "models", "tinyllama-1.1b.json")
EMBEDDING = 32000 * 2048  # TinyLlama's largest tensor


def _found(config: str, code: str, model: str) -> list[tuple]:
    diags = run_rules(parse(config, "ds_config.json"), Settings(target="deepspeed", model=model),
                      Selection(select=[code]))
    return [(d.code, d.severity.value, d.pointer, d.line, d.column, d.message, d.fails_at) for d in diags]


def _zl220_config(threshold: int) -> str:
    return ('{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3, '
            f'"offload_param": {{"device": "cpu"}}, "stage3_param_persistence_threshold": {threshold}}}}}')


def test_zl220_threshold_at_the_largest_tensor_keeps_everything_on_the_gpu():
    # DeepSpeed persists ds_numel <= threshold (partition_parameters.py:1292): equal is persistent.
    assert _found(_zl220_config(EMBEDDING), "ZL220", TINYLLAMA) == [(
        "ZL220", "warning", "/zero_optimization/stage3_param_persistence_threshold", 1, 147,
        f"stage3_param_persistence_threshold is {EMBEDDING}: ZeRO-3 keeps every parameter of at most that many "
        "elements whole on the GPU and offloads only larger ones; every parameter tensor of "
        "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T is at most that size (the largest has 65,536,000 "
        "elements), so offload_param (cpu) moves nothing to the host and every GPU holds the whole model", None)]


@pytest.mark.parametrize("threshold", [EMBEDDING - 1, 10**5])
def test_zl220_a_tensor_above_the_threshold_is_offloaded(threshold):
    # EMBEDDING - 1: the embedding (and the LM head) are still offloaded; 10**5, the default: every matrix is.
    assert _found(_zl220_config(threshold), "ZL220", TINYLLAMA) == []
