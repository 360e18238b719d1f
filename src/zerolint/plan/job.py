"""What is to be trained: the model, the batch, the sequence, the precision, full or adapter training, and who
reads the config (the consumer `--write` writes for)."""

from __future__ import annotations

from dataclasses import dataclass

from ..estimate.modelspec import ModelSpec


class PlanError(ValueError):
    """A job or hardware that cannot be planned (the message says which input and why)."""


@dataclass(frozen=True)
class Job:
    model: ModelSpec
    seq_len: int = 2048
    global_batch: int | None = None  # sequences per optimizer step, all GPUs together
    micro_batch: int | None = None  # fixed micro batch per GPU (with global_batch: the accumulation follows)
    precision: str = "bf16"  # bf16 | fp16 | fp32
    lora_rank: int | None = None  # adapter training: only the adapters are trained
    checkpointing: str = "allowed"  # allowed | never | always
    target: str = "deepspeed"  # deepspeed | hf | accelerate
    lr: float = 1e-5  # written into the optimizer section where the consumer does not fill it

    def adapter_params(self) -> int:
        """Trainable parameters of an adapter run: rank r on every attention and MLP projection of every layer,
        r x (d_in + d_out) each (LoRA, Hu et al. 2021; PEFT's `target_modules="all-linear"`)."""
        s = self.model.shape
        if self.lora_rank is None:
            return 0
        if not (s.hidden and s.layers):
            raise PlanError("--lora-rank needs the model's shape: --model config.json, or --hidden and --layers")
        h = s.hidden
        heads = s.heads or 1
        kv = (s.kv_heads or heads) * (h // heads)
        inter = s.intermediate or 4 * h
        # q, k, v, o; one fused q/k/v projection (gpt2's c_attn) carries one adapter
        attn = (h + h + 2 * kv) + (h + h) if s.fused_qkv else (h + h) + (h + kv) + (h + kv) + (h + h)
        mlp = (h + inter) * (3 if s.gated_mlp else 2)  # gate, up, down (or up, down)
        return self.lora_rank * (attn + mlp) * s.layers

    def trainable_params(self) -> int:
        return self.adapter_params() if self.lora_rank else self.model.params

    def describe(self) -> str:
        what = (f"adapters of rank {self.lora_rank} ({self.adapter_params():,} trainable parameters)"
                if self.lora_rank else "full fine-tuning")
        name = self.model.name or f"{self.model.params:,} parameters"
        batch = (f"global batch {self.global_batch}" if self.global_batch else f"micro batch {self.micro_batch}")
        return f"{name}, {what}, {self.precision}, sequence {self.seq_len}, {batch}, for {self.target}"
