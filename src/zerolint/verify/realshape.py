"""A real architecture for the verify child (`zerolint plan --verify`): the layout transformers builds for a
config.json's model, with random weights, no download and no transformers import. Pure Python: the child builds
the torch modules from `to_json()` (archs.py).

Built: llama, mistral and qwen2 (RMSNorm in fp32, rotary q/k, grouped-query SDPA, SwiGLU MLP, the LM head tied or
not), gpt2 (learned positions, LayerNorm, fused qkv, GELU MLP, dropout, the head tied) and gpt_neox (pythia:
LayerNorm, fused per-head qkv, rotary on a fraction of each head, GELU MLP, parallel residual, the head untied).
The parameter count is the config.json's as `zerolint estimate` counts it (estimate/modelspec.py); the child reports
what it built.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

LLAMA_LIKE = ("llama", "mistral", "qwen2")
BUILT = (*LLAMA_LIKE, "gpt2", "gpt_neox")


class ShapeError(ValueError):
    """A config.json whose model the child cannot build."""


@dataclass
class RealShape:
    arch: str  # "llama" (llama, mistral, qwen2) | "gpt2" | "neox"
    model_type: str
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    seq: int
    positions: int = 0  # gpt2's learned position table
    tied: bool = False
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    dropout: float = 0.0
    rotary_dims: int = 0  # gpt_neox: the leading dimensions of each head that are rotated (0: all of them)
    parallel_residual: bool = False  # gpt_neox: x + attn(ln1(x)) + mlp(ln2(x))
    lora_rank: int = 0  # rank-r adapters on every projection (PEFT's all-linear); everything else frozen
    checkpointing: bool = False  # every layer under torch.utils.checkpoint
    params: int = 0  # what the estimate counts (base + adapters), checked against the built model
    largest_layer_params: int = 0

    def to_json(self) -> dict:
        return asdict(self)


def _int(cfg: dict[str, Any], *keys: str, default: int | None = None) -> int:
    for k in keys:
        v = cfg.get(k)
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or v <= 0:
                raise ShapeError(f"config.json {k} = {v!r}: not a positive integer")
            return int(v)
    if default is None:
        raise ShapeError(f"config.json has no {keys[0]}")
    return default


def from_hf_config(cfg: dict[str, Any], *, seq: int, lora_rank: int = 0, checkpointing: bool = False,
                   params: int = 0, largest_layer_params: int = 0) -> RealShape:
    model_type = str(cfg.get("model_type", "")).lower()
    if model_type not in BUILT:
        raise ShapeError(f"model_type {model_type!r} is not built by verify (built: {', '.join(BUILT)})")
    common = dict(model_type=model_type, seq=seq, lora_rank=lora_rank, checkpointing=checkpointing, params=params,
                  largest_layer_params=largest_layer_params)
    if model_type == "gpt2":
        h, heads = _int(cfg, "n_embd", "hidden_size"), _int(cfg, "n_head", "num_attention_heads")
        positions = _int(cfg, "n_positions", "max_position_embeddings")
        if seq > positions:
            raise ShapeError(f"--seq-len {seq} is longer than gpt2's {positions} positions")
        return RealShape(arch="gpt2", vocab=_int(cfg, "vocab_size"), hidden=h,
                         layers=_int(cfg, "n_layer", "num_hidden_layers"), heads=heads, kv_heads=heads,
                         head_dim=h // heads, intermediate=_int(cfg, "n_inner", default=4 * h), positions=positions,
                         tied=bool(cfg.get("tie_word_embeddings", True)), qkv_bias=True, o_bias=True, mlp_bias=True,
                         norm_eps=float(cfg.get("layer_norm_epsilon", 1e-5)),
                         dropout=float(cfg.get("resid_pdrop", 0.1) or 0.0), **common)  # type: ignore[arg-type]
    if model_type == "gpt_neox":
        h, heads = _int(cfg, "hidden_size"), _int(cfg, "num_attention_heads")
        bias = bool(cfg.get("attention_bias", True))
        rotary = int(h // heads * float(cfg.get("rotary_pct", 0.25)))
        return RealShape(arch="neox", vocab=_int(cfg, "vocab_size"), hidden=h, layers=_int(cfg, "num_hidden_layers"),
                         heads=heads, kv_heads=heads, head_dim=h // heads,
                         intermediate=_int(cfg, "intermediate_size", default=4 * h),
                         tied=bool(cfg.get("tie_word_embeddings", False)), qkv_bias=bias, o_bias=bias, mlp_bias=True,
                         norm_eps=float(cfg.get("layer_norm_eps", 1e-5)),
                         rope_theta=float(cfg.get("rotary_emb_base", cfg.get("rope_theta", 10000.0))),
                         rotary_dims=max(2, rotary - rotary % 2),
                         parallel_residual=bool(cfg.get("use_parallel_residual", True)), **common)  # type: ignore[arg-type]
    h, heads = _int(cfg, "hidden_size"), _int(cfg, "num_attention_heads")
    qwen = model_type == "qwen2"
    return RealShape(arch="llama", vocab=_int(cfg, "vocab_size"), hidden=h, layers=_int(cfg, "num_hidden_layers"),
                     heads=heads, kv_heads=_int(cfg, "num_key_value_heads", default=heads),
                     head_dim=_int(cfg, "head_dim", default=h // heads), intermediate=_int(cfg, "intermediate_size"),
                     tied=bool(cfg.get("tie_word_embeddings", False)),
                     qkv_bias=True if qwen else bool(cfg.get("attention_bias", False)),
                     o_bias=False if qwen else bool(cfg.get("attention_bias", False)),
                     mlp_bias=bool(cfg.get("mlp_bias", False)), norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
                     rope_theta=float(cfg.get("rope_theta", 10000.0)), **common)  # type: ignore[arg-type]
