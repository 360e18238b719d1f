"""The job's model: a pure-torch causal transformer (no transformers import, no downloads, built in milliseconds).

Imported by the verify child only. Layout (parameter count in `resolve.ModelSpec.params`): token and position
embeddings, `layers` pre-LN blocks (fused qkv projection, scaled_dot_product_attention, 4x GELU MLP), a final
LayerNorm and an untied LM head. The loss is an fp32 cross-entropy over random tokens. A spec with an `arch`
(realshape.py) builds a real architecture instead (archs.py).
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.fc2 = nn.Linear(4 * hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=-1)
        q, k, v = (y.view(b, t, self.heads, h // self.heads).transpose(1, 2) for y in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyCausalLM(nn.Module):
    def __init__(self, vocab: int, hidden: int, layers: int, heads: int, seq: int) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1))


def build(spec: dict) -> nn.Module:
    """The tiny model, or a real architecture (`arch` in the spec: zerolint plan --verify; archs.py)."""
    if spec.get("arch"):
        from .archs import build as build_arch

        return build_arch(spec)
    return TinyCausalLM(spec["vocab"], spec["hidden"], spec["layers"], spec["heads"], spec["seq"])
