"""Real architectures for the verify child (realshape.py describes them): pure torch, random weights, the tensors
transformers builds module by module (so the parameter count, the largest layer and the saved activations are a
real model's), and the loss computed in the forward in fp32 as transformers' ForCausalLMLoss does (the 16-bit
logits are freed before backward). Imported by the verify child only.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class LoRALinear(nn.Module):
    """A frozen projection plus B @ A of rank r, B zero at the start (Hu et al. 2021; PEFT's LoRA layer)."""

    def __init__(self, d_in: int, d_out: int, bias: bool, rank: int) -> None:
        super().__init__()
        self.base = nn.Linear(d_in, d_out, bias=bias)
        self.base.requires_grad_(False)
        self.lora_a = nn.Linear(d_in, rank, bias=False)
        self.lora_b = nn.Linear(rank, d_out, bias=False)
        nn.init.zeros_(self.lora_b.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + self.lora_b(self.lora_a(x))


def _linear(d_in: int, d_out: int, bias: bool, rank: int) -> nn.Module:
    return LoRALinear(d_in, d_out, bias, rank) if rank else nn.Linear(d_in, d_out, bias=bias)


class RMSNorm(nn.Module):
    """transformers' LlamaRMSNorm: computed in fp32, cast back, then scaled."""

    def __init__(self, width: int, eps: float) -> None:
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(width)), eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.to(torch.float32)
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * y.to(x.dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, s: dict) -> None:
        super().__init__()
        h, r = s["hidden"], s["lora_rank"]
        self.nh, self.kv, self.hd = s["heads"], s["kv_heads"], s["head_dim"]
        self.q_proj = _linear(h, self.nh * self.hd, s["qkv_bias"], r)
        self.k_proj = _linear(h, self.kv * self.hd, s["qkv_bias"], r)
        self.v_proj = _linear(h, self.kv * self.hd, s["qkv_bias"], r)
        self.o_proj = _linear(self.nh * self.hd, h, s["o_bias"], r)
        self.gate_proj = _linear(h, s["intermediate"], s["mlp_bias"], r)
        self.up_proj = _linear(h, s["intermediate"], s["mlp_bias"], r)
        self.down_proj = _linear(s["intermediate"], h, s["mlp_bias"], r)
        self.input_layernorm = RMSNorm(h, s["norm_eps"])
        self.post_attention_layernorm = RMSNorm(h, s["norm_eps"])

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        y = self.input_layernorm(x)
        q = self.q_proj(y).view(b, t, self.nh, self.hd).transpose(1, 2)
        k = self.k_proj(y).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(y).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv != self.nh)
        x = x + self.o_proj(a.transpose(1, 2).reshape(b, t, self.nh * self.hd))
        y = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y))


class GPT2Block(nn.Module):
    def __init__(self, s: dict) -> None:
        super().__init__()
        h, r = s["hidden"], s["lora_rank"]
        self.nh, self.p = s["heads"], s["dropout"]
        self.ln_1, self.ln_2 = nn.LayerNorm(h, eps=s["norm_eps"]), nn.LayerNorm(h, eps=s["norm_eps"])
        self.c_attn, self.c_proj = _linear(h, 3 * h, True, r), _linear(h, h, True, r)
        self.c_fc, self.mlp_proj = _linear(h, s["intermediate"], True, r), _linear(s["intermediate"], h, True, r)
        self.drop = nn.Dropout(self.p)

    def forward(self, x: torch.Tensor, cos=None, sin=None) -> torch.Tensor:
        b, t, h = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).view(b, t, 3, self.nh, h // self.nh).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.p if self.training else 0.0)
        x = x + self.drop(self.c_proj(a.transpose(1, 2).reshape(b, t, h)))
        return x + self.drop(self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")))


class NeoXBlock(nn.Module):
    """transformers' GPTNeoXLayer: q, k and v interleaved per head in one projection, rotary on the first
    `rotary_dims` of each head, the MLP beside the attention (parallel residual) unless the config says not."""

    def __init__(self, s: dict) -> None:
        super().__init__()
        h, r = s["hidden"], s["lora_rank"]
        self.nh, self.hd, self.rot, self.parallel = s["heads"], s["head_dim"], s["rotary_dims"], s["parallel_residual"]
        self.input_layernorm = nn.LayerNorm(h, eps=s["norm_eps"])
        self.post_attention_layernorm = nn.LayerNorm(h, eps=s["norm_eps"])
        self.query_key_value, self.dense = _linear(h, 3 * h, s["qkv_bias"], r), _linear(h, h, s["o_bias"], r)
        self.dense_h_to_4h = _linear(h, s["intermediate"], True, r)
        self.dense_4h_to_h = _linear(s["intermediate"], h, True, r)

    def _attn(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, h = x.shape
        q, k, v = self.query_key_value(x).view(b, t, self.nh, 3 * self.hd).transpose(1, 2).chunk(3, dim=-1)
        n = self.rot

        def rope(y: torch.Tensor) -> torch.Tensor:
            r, rest = y[..., :n], y[..., n:]
            return torch.cat((r * cos + _rotate_half(r) * sin, rest), dim=-1)

        a = F.scaled_dot_product_attention(rope(q), rope(k), v, is_causal=True)
        return self.dense(a.transpose(1, 2).reshape(b, t, h))

    def _mlp(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense_4h_to_h(F.gelu(self.dense_h_to_4h(x)))

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        if self.parallel:
            return x + self._attn(self.input_layernorm(x), cos, sin) + self._mlp(self.post_attention_layernorm(x))
        x = x + self._attn(self.input_layernorm(x), cos, sin)
        return x + self._mlp(self.post_attention_layernorm(x))


BLOCKS = {"llama": LlamaBlock, "gpt2": GPT2Block, "neox": NeoXBlock}


class CausalLM(nn.Module):
    def __init__(self, s: dict) -> None:
        super().__init__()
        self.s = s
        h, v = s["hidden"], s["vocab"]
        llama, rotary = s["arch"] == "llama", s["arch"] in ("llama", "neox")
        self.embed = nn.Embedding(v, h)
        self.pos = None if rotary else nn.Embedding(s["positions"], h)
        self.blocks = nn.ModuleList(BLOCKS[s["arch"]](s) for _ in range(s["layers"]))
        self.norm: nn.Module = RMSNorm(h, s["norm_eps"]) if llama else nn.LayerNorm(h, eps=s["norm_eps"])
        self.lm_head = nn.Linear(h, v, bias=False)
        if s["tied"]:
            self.lm_head.weight = self.embed.weight
        if rotary:
            dims = s.get("rotary_dims") or s["head_dim"]
            inv = 1.0 / (s["rope_theta"] ** (torch.arange(0, dims, 2, dtype=torch.float32) / dims))
            self.register_buffer("inv_freq", inv, persistent=False)
        if s["lora_rank"]:  # PEFT: everything but the adapters is frozen
            for name, p in self.named_parameters():
                p.requires_grad_("lora_" in name)

    def _rope(self, t: int, like: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        if self.pos is not None:
            return None, None
        freqs = torch.outer(torch.arange(t, device=like.device, dtype=torch.float32), self.inv_freq.to(like.device))
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(like.dtype), emb.sin().to(like.dtype)

    def forward(self, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        if self.pos is not None:
            x = x + self.pos(torch.arange(ids.shape[1], device=ids.device))
        cos, sin = self._rope(ids.shape[1], x)
        for blk in self.blocks:
            if self.s["checkpointing"] and self.training:
                x = checkpoint(blk, x, cos, sin, use_reentrant=False)
            else:
                x = blk(x, cos, sin)
        logits = self.lm_head(self.norm(x))
        return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1))


def build(spec: dict) -> CausalLM:
    return CausalLM(spec)
