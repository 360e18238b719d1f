"""Parameter counts from Hugging Face config.json files (zerolint/estimate/modelspec.py) against the published
counts."""

from __future__ import annotations

import json
import os

import pytest

from zerolint.estimate.modelspec import (
    ModelSpecError,
    Shape,
    from_hf_config,
    from_params,
    load_hf_config,
    parse_count,
    resolve,
)

MODELS = os.path.join(os.path.dirname(__file__), "..", "fixtures", "models")

# Published parameter counts (model cards / `sum(p.numel() for p in model.parameters())` in transformers).
PUBLISHED = {
    "tinyllama-1.1b.json": 1_100_048_384,
    "llama-2-7b.json": 6_738_415_616,
    "gpt2.json": 124_439_808,
    "mistral-7b.json": 7_241_732_096,
    "qwen2-0.5b.json": 494_032_768,
    "pythia-160m.json": 162_322_944,
    "t5-small.json": 60_506_624,
}
# DeepSpeed's largest_layer_params: the biggest module's own parameters (the embedding or LM head here).
LARGEST = {
    "tinyllama-1.1b.json": 32000 * 2048,
    "llama-2-7b.json": 32000 * 4096,
    "gpt2.json": 50257 * 768,
    "mistral-7b.json": 32000 * 4096,
    "qwen2-0.5b.json": 151936 * 896,
    "pythia-160m.json": 50304 * 768,
    "t5-small.json": 32128 * 512,
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_parameter_counts(name):
    spec = load_hf_config(os.path.join(MODELS, name))
    assert spec.params == PUBLISHED[name]
    assert spec.largest_layer == LARGEST[name]
    assert spec.source == "config.json"
    assert sum(spec.tensor_numels) == spec.params


def test_tied_embeddings_are_counted_once():
    cfg = json.load(open(os.path.join(MODELS, "tinyllama-1.1b.json")))
    untied = from_hf_config(cfg).params
    tied = from_hf_config({**cfg, "tie_word_embeddings": True}).params
    assert untied - tied == 32000 * 2048
    gpt2 = json.load(open(os.path.join(MODELS, "gpt2.json")))
    assert from_hf_config({**gpt2, "tie_word_embeddings": False}).params == 124_439_808 + 50257 * 768


def test_t5_v1_1_gated_and_untied():
    cfg = json.load(open(os.path.join(MODELS, "t5-small.json")))
    v11 = from_hf_config({**cfg, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False})
    # one more d_model x d_ff matrix per block (12 blocks) and a separate LM head
    assert v11.params == 60_506_624 + 12 * 512 * 2048 + 32128 * 512
    assert v11.shape.gated_mlp


def test_shape_for_activations():
    s = load_hf_config(os.path.join(MODELS, "mistral-7b.json")).shape
    assert (s.hidden, s.layers, s.heads, s.kv_heads, s.intermediate, s.vocab) == (4096, 32, 32, 8, 14336, 32000)


def test_persistent_parameters_follow_the_threshold():
    spec = load_hf_config(os.path.join(MODELS, "tinyllama-1.1b.json"))
    assert spec.persistent_numel(100_000) == (2 * 22 + 1) * 2048  # the RMSNorm weights
    assert spec.persistent_numel(1) == 0
    # a tensor of exactly the threshold is persistent: DeepSpeed tests ds_numel <= threshold
    # (parameter_offload.py:325)
    assert spec.persistent_numel(2048) == (2 * 22 + 1) * 2048
    assert spec.persistent_numel(2047) == 0


def test_persistence_threshold_is_inclusive_without_tensor_sizes():
    spec = from_params(1_000_000_000, 65_536_000)
    spec.shape = Shape(hidden=2048, layers=24)
    assert spec.persistent_numel(2048) == (2 * 24 + 1) * 2048
    assert spec.persistent_numel(2047) == 0


@pytest.mark.parametrize("text,value", [("125M", 125_000_000), ("7B", 7_000_000_000), ("70e9", 70_000_000_000),
                                        ("1.1B", 1_100_000_000), ("1,100,048,384", 1_100_048_384),
                                        ("350m", 350_000_000), (1.3e9, 1_300_000_000), ("2T", 2 * 10**12)])
def test_parse_count(text, value):
    assert parse_count(text) == value


@pytest.mark.parametrize("text", ["", "7X", "-5B", "0", "B", "nan", True])
def test_parse_count_rejects(text):
    with pytest.raises(ModelSpecError):
        parse_count(text)


def test_bare_params_guess_the_largest_layer_and_say_so():
    spec = from_params("7B")
    assert 100e6 < spec.largest_layer < 200e6  # llama-7B's embedding is 131M
    assert spec.source == "heuristic" and spec.assumptions
    exact = from_params("7B", "131072000")
    assert exact.largest_layer == 131_072_000 and not exact.assumptions


def test_unsupported_architecture(tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({"model_type": "bert", "hidden_size": 768}))
    with pytest.raises(ModelSpecError, match="not supported"):
        load_hf_config(str(p))
    p.write_text(json.dumps({"model_type": "llama", "hidden_size": 768}))
    with pytest.raises(ModelSpecError, match="vocab_size"):
        load_hf_config(str(p))


def test_resolve_prefers_the_config():
    spec = resolve(params="7B", model=os.path.join(MODELS, "gpt2.json"))
    assert spec.params == 124_439_808 and "ignored" in spec.assumptions[0]
    assert resolve() is None
    assert resolve(params="1B", hidden=2048, layers=16).shape.layers == 16
