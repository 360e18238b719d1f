"""Model size and shape for the memory estimate: from `--params 7B` or from a Hugging Face `config.json`.

Pure Python: no torch, no transformers, no weights, no download. For the architectures below the parameter tensors
are enumerated module by module exactly as transformers builds them, so that

- `params` (P) is the number of distinct parameters (tied embeddings counted once, as DeepSpeed's
  `model_to_params` does with `data_ptr`), and
- `largest_layer` (L) is DeepSpeed's `largest_layer_params`: the most parameters held directly (non-recursively) by
  one module (runtime/zero/stage3.py `model_to_params`) -- usually the embedding or the LM head,
- `tensor_numels` lets the estimate apply ZeRO-3's `stage3_param_persistence_threshold` exactly.

Checked against the published counts (tests/test_modelspec.py): TinyLlama-1.1B 1,100,048,384; Llama-2-7B
6,738,415,616; GPT-2 124,439,808; Mistral-7B 7,241,732,096; Qwen2-0.5B 494,032,768; pythia-160m 162,322,944;
t5-small 60,506,624.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

ARCHITECTURES = ("llama", "mistral", "qwen2", "gpt2", "gpt_neox", "t5")

_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}


class ModelSpecError(ValueError):
    """A model size or config.json that cannot be understood."""


def parse_count(text: str | int | float) -> int:
    """'125M', '7B', '1.1B', '70e9', '1,100,048,384', 350000000 -> an int."""
    if isinstance(text, bool):
        raise ModelSpecError(f"{text!r} is not a parameter count")
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        s = str(text).strip().replace(",", "").replace("_", "")
        m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMbBgGtT]?)", s)
        if not m:
            raise ModelSpecError(f"{text!r} is not a parameter count (examples: 125M, 1.1B, 7B, 70e9)")
        value = float(m.group(1)) * _SUFFIX[m.group(2).lower()]
    if not math.isfinite(value) or value < 1:
        raise ModelSpecError(f"{text!r} is not a positive parameter count")
    return int(round(value))


@dataclass
class Shape:
    """What the activation term needs. All optional: the estimate leaves activations out when it lacks them."""

    hidden: int | None = None
    layers: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    intermediate: int | None = None
    vocab: int | None = None
    gated_mlp: bool = True  # SwiGLU-style MLP (gate, up, down): llama, mistral, qwen2, t5 v1.1
    dropout: bool = False  # dropout masks are saved for backward (gpt2, t5)
    # RMSNorm computed in fp32 (transformers' LlamaRMSNorm, Qwen2RMSNorm, T5LayerNorm): each norm saves an fp32
    # copy of its input for backward beside its 16-bit output
    norm_upcast: bool = False
    # the norms' weights are trained (False in adapter runs: the normalised input is then not saved for them)
    norm_weights_train: bool = True
    fused_qkv: bool = False  # one projection to q, k and v (gpt2's c_attn, gpt_neox's query_key_value)
    tied_embeddings: bool = False  # the LM head is the input embedding (counted once in P)


@dataclass
class ModelSpec:
    params: int
    largest_layer: int | None = None  # DeepSpeed's largest_layer_params (non-recursive module)
    largest_tensor: int | None = None  # the largest single parameter tensor
    tensor_numels: tuple[int, ...] | None = None  # every distinct parameter tensor (for persistence)
    shape: Shape = field(default_factory=Shape)
    name: str = ""
    source: str = "params"  # params | config.json | heuristic
    assumptions: list[str] = field(default_factory=list)

    def persistent_numel(self, threshold: int) -> int | None:
        """Parameters in tensors of at most `threshold` elements (ZeRO-3 keeps those gathered), or None.

        At most, not below: DeepSpeed marks a parameter persistent when `param.ds_numel <= param_threshold`
        (runtime/zero/parameter_offload.py:325 mark_persistent_parameters; partition_parameters.py:1292 under
        zero.Init)."""
        if self.tensor_numels is None:
            if self.shape.hidden and self.shape.layers:
                # norms: two per layer and a final one, hidden wide (llama-like); biases not counted
                h = self.shape.hidden
                return (2 * self.shape.layers + 1) * h if h <= threshold else 0
            return None
        return sum(n for n in self.tensor_numels if n <= threshold)


# -- from a bare parameter count -----------------------------------------------------------------------------------

def from_params(params: int | str, largest_layer: int | str | None = None, name: str = "") -> ModelSpec:
    """A model known only by its size. L is a heuristic unless given: a llama-like shape with layers = hidden/128
    (P ~ 12 * layers * hidden^2) and a 32000-token embedding, L = 32000 * hidden."""
    p = parse_count(params)
    spec = ModelSpec(params=p, name=name or _human(p), source="params")
    if largest_layer is not None:
        spec.largest_layer = parse_count(largest_layer)
        spec.largest_tensor = spec.largest_layer
    else:
        hidden = max(64, int(round((p / 0.09375) ** (1 / 3) / 64)) * 64)
        spec.largest_layer = min(p, 32000 * hidden)
        spec.largest_tensor = spec.largest_layer
        spec.source = "heuristic"
        spec.assumptions.append(
            f"largest layer L = {_human(spec.largest_layer)} guessed from P (a llama-like shape with hidden ~{hidden}"
            " and a 32000-token embedding); pass --largest-layer or --model for the real value")
    return spec


def _human(n: int) -> str:
    for div, suf in ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K")):
        if n >= div:
            return f"{n / div:.3g}{suf}"
    return str(n)


# -- from a Hugging Face config.json ---------------------------------------------------------------------------------

def load_hf_config(path: str) -> ModelSpec:
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except OSError as e:
        raise ModelSpecError(f"{path}: cannot be read ({e.strerror or e})") from None
    except json.JSONDecodeError as e:
        raise ModelSpecError(f"{path}: not JSON ({e})") from None
    if not isinstance(cfg, dict):
        raise ModelSpecError(f"{path}: a config.json is a JSON object")
    spec = from_hf_config(cfg)
    if not spec.name:
        spec.name = path
    return spec


def from_hf_config(cfg: dict[str, Any]) -> ModelSpec:
    model_type = str(cfg.get("model_type", "")).lower()
    builders = {"llama": _llama, "mistral": _llama, "qwen2": _qwen2, "gpt2": _gpt2, "gpt_neox": _gpt_neox, "t5": _t5}
    if model_type not in builders:
        raise ModelSpecError(f"model_type {model_type!r} is not supported (supported: {', '.join(ARCHITECTURES)}); "
                             "use --params (and --largest-layer) instead")
    try:
        modules, shape = builders[model_type](cfg)
    except (KeyError, TypeError, ValueError) as e:
        raise ModelSpecError(f"{model_type} config.json lacks or has a bad field: {e}") from None
    return _spec(modules, shape, name=str(cfg.get("_name_or_path") or cfg.get("name_or_path") or ""),
                 model_type=model_type)


# A module: (name, [(tensor name, numel), ...]). A tied tensor appears under both modules with the same name key.
Module = tuple[str, list[tuple[str, int]]]


def _spec(modules: list[Module], shape: Shape, name: str, model_type: str) -> ModelSpec:
    distinct: dict[str, int] = {}
    largest_layer = 0
    for _mod, tensors in modules:
        largest_layer = max(largest_layer, sum(n for _t, n in tensors))
        for key, n in tensors:
            distinct[key] = n
    numels = tuple(distinct.values())
    return ModelSpec(params=sum(numels), largest_layer=largest_layer, largest_tensor=max(numels),
                     tensor_numels=numels, shape=shape, name=name or model_type, source="config.json")


def _int(cfg: dict[str, Any], *keys: str, default: Any = KeyError) -> int:
    for k in keys:
        v = cfg.get(k)
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or v < 0:
                raise ValueError(f"{k} = {v!r}")
            return int(v)
    if default is KeyError:
        raise KeyError(keys[0])
    return default


def _linear(name: str, fan_in: int, fan_out: int, bias: bool) -> Module:
    tensors = [(f"{name}.weight", fan_in * fan_out)]
    if bias:
        tensors.append((f"{name}.bias", fan_out))
    return name, tensors


def _norm(name: str, width: int, bias: bool) -> Module:
    return name, [(f"{name}.weight", width)] + ([(f"{name}.bias", width)] if bias else [])


def _llama(cfg: dict[str, Any], *, qkv_bias: bool | None = None) -> tuple[list[Module], Shape]:
    """LlamaForCausalLM / MistralForCausalLM (transformers models/llama, models/mistral): RMSNorm (weight only),
    q/k/v/o projections (bias = attention_bias), SwiGLU MLP (bias = mlp_bias), untied LM head unless
    tie_word_embeddings."""
    v, h = _int(cfg, "vocab_size"), _int(cfg, "hidden_size")
    n_layers, n_heads = _int(cfg, "num_hidden_layers"), _int(cfg, "num_attention_heads")
    kv = _int(cfg, "num_key_value_heads", default=n_heads)
    inter = _int(cfg, "intermediate_size")
    head_dim = _int(cfg, "head_dim", default=h // n_heads)
    attn_bias = bool(cfg.get("attention_bias", False)) if qkv_bias is None else qkv_bias
    o_bias = bool(cfg.get("attention_bias", False)) if qkv_bias is None else False
    mlp_bias = bool(cfg.get("mlp_bias", False))
    mods: list[Module] = [("model.embed_tokens", [("model.embed_tokens.weight", v * h)])]
    for i in range(n_layers):
        p = f"model.layers.{i}"
        mods += [
            _linear(f"{p}.self_attn.q_proj", h, n_heads * head_dim, attn_bias),
            _linear(f"{p}.self_attn.k_proj", h, kv * head_dim, attn_bias),
            _linear(f"{p}.self_attn.v_proj", h, kv * head_dim, attn_bias),
            _linear(f"{p}.self_attn.o_proj", n_heads * head_dim, h, o_bias),
            _linear(f"{p}.mlp.gate_proj", h, inter, mlp_bias),
            _linear(f"{p}.mlp.up_proj", h, inter, mlp_bias),
            _linear(f"{p}.mlp.down_proj", inter, h, mlp_bias),
            _norm(f"{p}.input_layernorm", h, False),
            _norm(f"{p}.post_attention_layernorm", h, False),
        ]
    mods.append(_norm("model.norm", h, False))
    tied = bool(cfg.get("tie_word_embeddings", False))
    mods.append(("lm_head", [("model.embed_tokens.weight" if tied else "lm_head.weight", v * h)]))
    return mods, Shape(hidden=h, layers=n_layers, heads=n_heads, kv_heads=kv, intermediate=inter, vocab=v,
                       gated_mlp=True, dropout=False, norm_upcast=True, tied_embeddings=tied)


def _qwen2(cfg: dict[str, Any]) -> tuple[list[Module], Shape]:
    """Qwen2ForCausalLM: as llama, but q/k/v always carry a bias and o_proj never does (models/qwen2)."""
    return _llama(cfg, qkv_bias=True)


def _gpt2(cfg: dict[str, Any]) -> tuple[list[Module], Shape]:
    """GPT2LMHeadModel: learned position embeddings, LayerNorm (weight+bias), Conv1D layers with bias, GELU MLP of
    n_inner (default 4*n_embd), LM head tied to wte unless tie_word_embeddings is false."""
    v, h = _int(cfg, "vocab_size"), _int(cfg, "n_embd", "hidden_size")
    n_layers, n_heads = _int(cfg, "n_layer", "num_hidden_layers"), _int(cfg, "n_head", "num_attention_heads")
    pos = _int(cfg, "n_positions", "max_position_embeddings")
    inner = _int(cfg, "n_inner", default=4 * h)
    mods: list[Module] = [("transformer.wte", [("transformer.wte.weight", v * h)]),
                          ("transformer.wpe", [("transformer.wpe.weight", pos * h)])]
    for i in range(n_layers):
        p = f"transformer.h.{i}"
        mods += [
            _norm(f"{p}.ln_1", h, True),
            _linear(f"{p}.attn.c_attn", h, 3 * h, True),
            _linear(f"{p}.attn.c_proj", h, h, True),
            _norm(f"{p}.ln_2", h, True),
            _linear(f"{p}.mlp.c_fc", h, inner, True),
            _linear(f"{p}.mlp.c_proj", inner, h, True),
        ]
    mods.append(_norm("transformer.ln_f", h, True))
    tied = bool(cfg.get("tie_word_embeddings", True))
    mods.append(("lm_head", [("transformer.wte.weight" if tied else "lm_head.weight", v * h)]))
    dropout = any(float(cfg.get(k, 0.1) or 0) > 0 for k in ("resid_pdrop", "attn_pdrop", "embd_pdrop"))
    return mods, Shape(hidden=h, layers=n_layers, heads=n_heads, kv_heads=n_heads, intermediate=inner, vocab=v,
                       gated_mlp=False, dropout=dropout, fused_qkv=True, tied_embeddings=tied)


def _gpt_neox(cfg: dict[str, Any]) -> tuple[list[Module], Shape]:
    """GPTNeoXForCausalLM (pythia): LayerNorm with bias, fused query_key_value and dense with bias
    (attention_bias, default true), GELU MLP of intermediate_size with bias, untied embed_out by default."""
    v, h = _int(cfg, "vocab_size"), _int(cfg, "hidden_size")
    n_layers, n_heads = _int(cfg, "num_hidden_layers"), _int(cfg, "num_attention_heads")
    inter = _int(cfg, "intermediate_size", default=4 * h)
    bias = bool(cfg.get("attention_bias", True))
    mods: list[Module] = [("gpt_neox.embed_in", [("gpt_neox.embed_in.weight", v * h)])]
    for i in range(n_layers):
        p = f"gpt_neox.layers.{i}"
        mods += [
            _norm(f"{p}.input_layernorm", h, True),
            _norm(f"{p}.post_attention_layernorm", h, True),
            _linear(f"{p}.attention.query_key_value", h, 3 * h, bias),
            _linear(f"{p}.attention.dense", h, h, bias),
            _linear(f"{p}.mlp.dense_h_to_4h", h, inter, True),
            _linear(f"{p}.mlp.dense_4h_to_h", inter, h, True),
        ]
    mods.append(_norm("gpt_neox.final_layer_norm", h, True))
    tied = bool(cfg.get("tie_word_embeddings", False))
    mods.append(("embed_out", [("gpt_neox.embed_in.weight" if tied else "embed_out.weight", v * h)]))
    return mods, Shape(hidden=h, layers=n_layers, heads=n_heads, kv_heads=n_heads, intermediate=inter, vocab=v,
                       gated_mlp=False, dropout=False, fused_qkv=True, tied_embeddings=tied)


def _t5(cfg: dict[str, Any]) -> tuple[list[Module], Shape]:
    """T5ForConditionalGeneration: one shared embedding (encoder and decoder embed_tokens are the same tensor),
    bias-free attention q/k/v/o of num_heads*d_kv, a relative position bias in the first block of each stack,
    RMS-style T5LayerNorm (weight only), a ReLU (wi) or gated-GELU (wi_0, wi_1) feed-forward, and an LM head tied
    to the shared embedding unless tie_word_embeddings is false (t5 v1.1)."""
    v, d = _int(cfg, "vocab_size"), _int(cfg, "d_model")
    d_kv, d_ff, heads = _int(cfg, "d_kv"), _int(cfg, "d_ff"), _int(cfg, "num_heads")
    n_enc = _int(cfg, "num_layers")
    n_dec = _int(cfg, "num_decoder_layers", default=n_enc)
    buckets = _int(cfg, "relative_attention_num_buckets", default=32)
    gated = str(cfg.get("feed_forward_proj", "relu")).startswith("gated")
    inner = heads * d_kv
    mods: list[Module] = [("shared", [("shared.weight", v * d)])]

    def attention(prefix: str, relative: bool) -> list[Module]:
        out = [_linear(f"{prefix}.{x}", d, inner, False) for x in ("q", "k", "v")]
        out.append(_linear(f"{prefix}.o", inner, d, False))
        if relative:
            out.append((f"{prefix}.relative_attention_bias",
                        [(f"{prefix}.relative_attention_bias.weight", buckets * heads)]))
        return out

    def ff(prefix: str) -> list[Module]:
        if gated:
            return [_linear(f"{prefix}.wi_0", d, d_ff, False), _linear(f"{prefix}.wi_1", d, d_ff, False),
                    _linear(f"{prefix}.wo", d_ff, d, False)]
        return [_linear(f"{prefix}.wi", d, d_ff, False), _linear(f"{prefix}.wo", d_ff, d, False)]

    for stack, n, cross in (("encoder", n_enc, False), ("decoder", n_dec, True)):
        mods.append((f"{stack}.embed_tokens", [("shared.weight", v * d)]))
        for i in range(n):
            p = f"{stack}.block.{i}.layer"
            mods += attention(f"{p}.0.SelfAttention", i == 0)
            mods.append(_norm(f"{p}.0.layer_norm", d, False))
            k = 1
            if cross:
                mods += attention(f"{p}.1.EncDecAttention", False)
                mods.append(_norm(f"{p}.1.layer_norm", d, False))
                k = 2
            mods += ff(f"{p}.{k}.DenseReluDense")
            mods.append(_norm(f"{p}.{k}.layer_norm", d, False))
        mods.append(_norm(f"{stack}.final_layer_norm", d, False))
    tied = bool(cfg.get("tie_word_embeddings", True))
    mods.append(("lm_head", [("shared.weight" if tied else "lm_head.weight", v * d)]))
    return mods, Shape(hidden=d, layers=n_enc + n_dec, heads=heads, kv_heads=heads, intermediate=d_ff, vocab=v,
                       gated_mlp=gated, dropout=float(cfg.get("dropout_rate", 0.1) or 0) > 0, norm_upcast=True,
                       tied_embeddings=tied)


def resolve(params: int | str | None = None, model: str | None = None, largest_layer: int | str | None = None,
            hidden: int | None = None, layers: int | None = None, vocab: int | None = None) -> ModelSpec | None:
    """The model from command-line style options: `model` (a config.json path) wins for P and L; `params`
    alone gives a bare size; hidden/layers/vocab fill in a shape for the activation term. None when neither
    `params` nor `model` is given."""
    if model:
        spec = load_hf_config(model)
        if params is not None and parse_count(params) != spec.params:
            spec.assumptions.append(f"--params {params} ignored: {model} gives P = {spec.params:,}")
        if largest_layer is not None:
            spec.largest_layer = parse_count(largest_layer)
    elif params is not None:
        spec = from_params(params, largest_layer)
    else:
        return None
    if hidden:
        spec.shape.hidden = int(hidden)
    if layers:
        spec.shape.layers = int(layers)
    if vocab:
        spec.shape.vocab = int(vocab)
    return spec
