"""View helpers behind the ZeRO-combination and memory rules: effective values, overlap_comm, reduce buffers,
template placeholders."""

from __future__ import annotations

import pytest

from zerolint.model.document import parse
from zerolint.model.dsfacts import placeholder_text
from zerolint.model.view import MISSING, Settings, View


def view(text: str, **kw) -> View:
    return View(parse(text, "ds_config.json"), Settings(**kw))


@pytest.mark.parametrize("value,quoteless,expected", [
    ("CONFIG_BATCH_SIZE,", True, "CONFIG_BATCH_SIZE"),  # hjson keeps the comma in a quoteless value
    ("${zero_stage}", True, "${zero_stage}"),
    ("{{ micro_batch }}", False, "{{ micro_batch }}"),
    ("$STAGE", False, "$STAGE"),
    ("%(bs)d", False, "%(bs)d"),
    ("<BATCH_SIZE>", False, "<BATCH_SIZE>"),
    ("CONFIG_BATCH_SIZE", False, None),  # a quoted upper-case string is a value
    ("WARN", True, None),  # DeepSpeed's own upper-case values have no underscore
    ("${OUTPUT_DIR}/tb", False, None),  # a string that contains a variable is not a whole placeholder
    ("auto", False, None),
])
def test_placeholder_text(value, quoteless, expected):
    assert placeholder_text(value, quoteless) == expected


def test_effective_defaults_auto_and_placeholders():
    v = view('{"gradient_clipping": "auto", "zero_optimization": {"stage": 2, "reduce_scatter": "auto", '
             '"overlap_comm": "true", "reduce_bucket_size": 2e8, "sub_group_size": "${sg}"}}', target="deepspeed")
    assert v.effective("/zero_optimization/reduce_scatter", "bool") is True  # strict: "auto" dropped -> default
    assert v.effective("/zero_optimization/overlap_comm", "bool") is True  # pydantic's lax "true"
    assert v.effective("/zero_optimization/reduce_bucket_size", "int") == 200_000_000
    assert v.effective("/zero_optimization/sub_group_size", "int") is None  # a placeholder: unknown
    assert v.effective("/gradient_clipping", "number") is MISSING  # lax: raw DeepSpeed keeps the string
    assert v.effective("/zero_optimization/contiguous_gradients", "bool") is True  # absent -> default


def test_effective_gradient_clipping_default_drift():
    text = '{"train_batch_size": 8}'
    assert view(text, deepspeed_version="0.19.8").effective("/gradient_clipping", "number") == 1.0
    assert view(text, deepspeed_version="0.19.2").effective("/gradient_clipping", "number") == 0.0
    assert view('{"gradient_clipping": "auto"}', target="hf").effective("/gradient_clipping", "number") is None


@pytest.mark.parametrize("zero,expected", [
    ('{"stage": 3}', True), ('{"stage": 2}', False), ('{"stage": 2, "overlap_comm": null}', False),
    ('{"stage": 1, "overlap_comm": true}', True), ('{"stage": 3, "overlap_comm": false}', False),
])
def test_overlap_comm(zero, expected):
    assert view(f'{{"zero_optimization": {zero}}}').overlap_comm is expected


@pytest.mark.parametrize("text,expected", [
    ('{"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}', (500_000_000, "bf16")),
    ('{"zero_optimization": {"stage": 2, "reduce_bucket_size": 1e8}}', (100_000_000, "fp32")),
    # ZeRO-1 buffers use the accumulation dtype when it differs from the model dtype
    ('{"fp16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}, "zero_optimization": {"stage": 1}}',
     (500_000_000, "fp32")),
    # ZeRO-1 + bf16 + fp32 accumulation without CPU offload runs the BF16_Optimizer: no ZeRO buckets
    ('{"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}, "zero_optimization": {"stage": 1}}',
     None),
    ('{"zero_optimization": {"stage": 3}}', None),
])
def test_zero12_reduce_buffer(text, expected):
    assert view(text).zero12_reduce_buffer() == expected


def test_is_placeholder_needs_a_string_node():
    v = view('{"a": CONFIG_X,\n "b": "CONFIG_X", "c": 3}')
    assert v.is_placeholder(v.node("/a"))
    assert not v.is_placeholder(v.node("/b"))
    assert not v.is_placeholder(v.node("/c"))
