"""Rules whose verdict depends on the torch version (ZL612): the installed torch from package metadata, a version
asked for in Settings, and the warning that states the condition when no torch is installed."""

from __future__ import annotations

from zerolint.model import versions
from zerolint.model.view import Settings
from zerolint.pipeline import lint_bytes
from zerolint.rules.engine import Selection

CONFIG = b'{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}, "optimizer": {"type": "Adagrad"}}\n'


def zl612(settings: Settings):
    return [(d.severity.value, d.line, d.column, d.message, d.fails_at)
            for d in lint_bytes(CONFIG, "ds.json", settings, Selection(select=["ZL612"])).diagnostics]


def test_torch_version_from_settings_drops_the_local_suffix():
    assert versions.torch_version(Settings(torch_version="2.11.0+cu130")).text == "2.11.0"


def test_installed_torch_is_read_from_metadata_without_importing_it():
    import sys

    had = "torch" in sys.modules
    found = versions.installed_torch()
    assert found is not None and "+" not in found  # the suite runs with torch installed (an oracle)
    assert ("torch" in sys.modules) == had


def test_without_torch_the_finding_states_the_condition(monkeypatch):
    monkeypatch.setattr(versions, "installed_torch", lambda: None)
    assert zl612(Settings(target="deepspeed")) == [(
        "warning", 1, 88, "Adagrad with bf16 and ZeRO off (stage 0): the bf16 wrapper (FP16_UnfusedOptimizer) takes a "
        "first optimizer step on fp32 copies of the parameters, for which torch's Adagrad before 2.12 created no "
        "state, so with torch < 2.12 deepspeed.initialize fails with KeyError: 'sum' (torch is not installed here, so "
        "zerolint cannot tell which torch runs it)", None)]


def test_old_torch_is_an_error_new_torch_nothing():
    assert [x[0] for x in zl612(Settings(target="deepspeed", torch_version="2.11.0"))] == ["error"]
    assert zl612(Settings(target="deepspeed", torch_version="2.12.0")) == []
