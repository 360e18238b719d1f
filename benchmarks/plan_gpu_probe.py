#!/usr/bin/env python3
"""Measure `zerolint plan`'s top candidates on a GPU: for each model, the plan for this machine (one GPU, its host
memory), then each of its top candidates run for real -- the model built from the project's config.json with random
weights (pure torch, the same parameter count as the estimate's; under deepspeed.zero.Init at stage 3),
`deepspeed.initialize` with the config `plan --write` writes, one warm-up and STEPS timed optimizer steps -- and
the measured peak memory and step time set against the estimate and the step-time model.

    python benchmarks/plan_gpu_probe.py --out OUT [--host-memory 120GB] [--deadline 540] [--models a,b]
    python benchmarks/plan_gpu_probe.py --child CASE.json      # one case

Writes OUT/plan-gpu.json; benchmarks/plan_accuracy.py turns it into the table of docs/plan.md. Offline GPU hosts:
carry DeepSpeed and its dependencies as wheels (/work/shared/gpu.md) and put zerolint's src on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "fixtures" / "models"
# name -> (config.json, global batch, seq, lora rank, candidates to run)
RUNS = {
    "gpt2": ("gpt2.json", 16, 1024, None, 5),
    "qwen2-0.5b": ("qwen2-0.5b.json", 8, 1024, None, 5),
    "tinyllama-1.1b": ("tinyllama-1.1b.json", 8, 1024, None, 5),
    "llama-3.2-3b": ("llama-3.2-3b.json", 8, 1024, None, 4),
    "llama-3-8b-lora": ("llama-3-8b.json", 8, 1024, 16, 4),
}
STEPS = 3


def diverse_top(ranked, k: int):
    """The pick, then the best of each kind of alternative the ranking is to be checked on (a smaller micro batch,
    checkpointing flipped, optimizer offload, ZeRO-3, ZeRO-3 with parameter offload), up to k: runs that differ
    only in bucket size or between stages 0-2 on one GPU would tie in the model and tell little."""
    if not ranked:
        return []
    pick = ranked[0].candidate
    kinds = [
        lambda c: c.micro_batch < pick.micro_batch and c.offload_optimizer == pick.offload_optimizer,
        lambda c: c.checkpointing != pick.checkpointing,
        lambda c: c.offload_optimizer != "none" and pick.offload_optimizer == "none",
        lambda c: c.stage == 3 and c.offload_param == "none" and pick.stage != 3,
        lambda c: c.stage == 3 and c.offload_param != "none",
    ]
    out = [ranked[0]]
    for kind in kinds:
        if len(out) == k:
            break
        best = next((s for s in ranked if kind(s.candidate) and not s.candidate.small_buckets and s not in out),
                    None)
        if best is not None:
            out.append(best)
    return out


def make_cases(out: Path, host_memory: int, names: list[str]) -> list[dict]:
    sys.path.insert(0, str(ROOT / "src"))
    from zerolint.estimate.modelspec import load_hf_config
    from zerolint.plan.hardware import Hardware, preset
    from zerolint.plan.job import Job
    from zerolint.plan.search import plan
    from zerolint.plan.write import config_for

    hw = Hardware(host_memory=host_memory, **preset("h200"))
    cases = []
    for name in names:
        cfg_file, batch, seq, lora, k = RUNS[name]
        model = load_hf_config(str(MODELS / cfg_file))
        job = Job(model=model, global_batch=batch, seq_len=seq, lora_rank=lora, target="deepspeed", lr=1e-4)
        result = plan(job, hw)
        for rank, s in enumerate(diverse_top(result.ranked, k), 1):
            c = s.candidate
            case = {"name": f"{name}-{rank}", "model": name, "model_config": str(MODELS / cfg_file),
                    "rank_in_plan": result.ranked.index(s) + 1, "summary": c.describe(), "seq_len": seq,
                    "micro_batch": c.micro_batch, "grad_accum": c.grad_accum, "checkpointing": c.checkpointing,
                    "lora_rank": lora, "stage": c.stage, "params": model.params,
                    "trainable_params": job.trainable_params(),
                    "config": config_for(c, job, 1), "estimate_per_gpu_bytes": s.per_gpu_bytes,
                    "estimate_per_gpu_covered_bytes": s.estimate.per_gpu_covered_bytes,
                    "estimate_host_bytes": s.per_node_host_bytes, "model_step_seconds": s.time.seconds,
                    "result": str(out / f"{name}-{rank}.result.json")}
            cases.append(case)
    return cases


# -- one case --------------------------------------------------------------------------------------------------------

def child(case_path: str) -> int:
    import resource

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.checkpoint import checkpoint

    case = json.loads(Path(case_path).read_text())
    cfg = json.loads(Path(case["model_config"]).read_text())
    for k, v in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                 ("MASTER_PORT", "29611")):
        os.environ.setdefault(k, v)
    torch.cuda.set_device(0)
    lora = case["lora_rank"]
    gpt2 = cfg["model_type"] == "gpt2"

    class LoRALinear(nn.Module):
        """A frozen base projection plus B @ A of rank r, B zero at the start (Hu et al. 2021)."""

        def __init__(self, d_in, d_out, bias):
            super().__init__()
            self.base = nn.Linear(d_in, d_out, bias=bias)
            self.base.requires_grad_(False)
            self.a = nn.Linear(d_in, lora, bias=False)
            self.b = nn.Linear(lora, d_out, bias=False)
            nn.init.zeros_(self.b.weight)

        def forward(self, x):
            return self.base(x) + self.b(self.a(x))

    def linear(d_in, d_out, bias):
        return LoRALinear(d_in, d_out, bias) if lora else nn.Linear(d_in, d_out, bias=bias)

    class RMSNorm(nn.Module):
        def __init__(self, h, eps):
            super().__init__()
            self.weight, self.eps = nn.Parameter(torch.ones(h)), eps

        def forward(self, x):
            y = x.float()
            return (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight

    class LlamaBlock(nn.Module):
        def __init__(self):
            super().__init__()
            h, nh = cfg["hidden_size"], cfg["num_attention_heads"]
            kv = cfg.get("num_key_value_heads", nh)
            self.nh, self.kv, self.hd = nh, kv, h // nh
            qkv_bias = cfg["model_type"] == "qwen2" or cfg.get("attention_bias", False)
            o_bias = cfg.get("attention_bias", False) and cfg["model_type"] != "qwen2"
            self.q, self.k = linear(h, nh * self.hd, qkv_bias), linear(h, kv * self.hd, qkv_bias)
            self.v, self.o = linear(h, kv * self.hd, qkv_bias), linear(nh * self.hd, h, o_bias)
            inter = cfg["intermediate_size"]
            self.gate, self.up, self.down = linear(h, inter, False), linear(h, inter, False), linear(inter, h, False)
            eps = cfg.get("rms_norm_eps", 1e-6)
            self.n1, self.n2 = RMSNorm(h, eps), RMSNorm(h, eps)

        def forward(self, x):
            b, t, h = x.shape
            y = self.n1(x)
            q = self.q(y).view(b, t, self.nh, self.hd).transpose(1, 2)
            k = self.k(y).view(b, t, self.kv, self.hd).transpose(1, 2)
            v = self.v(y).view(b, t, self.kv, self.hd).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv != self.nh)
            x = x + self.o(a.transpose(1, 2).reshape(b, t, h))
            y = self.n2(x)
            return x + self.down(F.silu(self.gate(y)) * self.up(y))

    class GPT2Block(nn.Module):
        def __init__(self):
            super().__init__()
            h = cfg["n_embd"]
            self.nh = cfg["n_head"]
            inner = cfg.get("n_inner") or 4 * h
            self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
            self.qkv, self.proj = linear(h, 3 * h, True), linear(h, h, True)
            self.fc, self.out = linear(h, inner, True), linear(inner, h, True)
            self.drop = nn.Dropout(cfg.get("resid_pdrop", 0.1))

        def forward(self, x):
            b, t, h = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.nh, h // self.nh).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.1 if self.training else 0.0)
            x = x + self.drop(self.proj(a.transpose(1, 2).reshape(b, t, h)))
            return x + self.drop(self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh")))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            if gpt2:
                h, layers, v = cfg["n_embd"], cfg["n_layer"], cfg["vocab_size"]
                self.pos = nn.Embedding(cfg["n_positions"], h)
                self.norm = nn.LayerNorm(h)
                block = GPT2Block
                tied = cfg.get("tie_word_embeddings", True)
            else:
                h, layers, v = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
                self.pos = None
                self.norm = RMSNorm(h, cfg.get("rms_norm_eps", 1e-6))
                block = LlamaBlock
                tied = cfg.get("tie_word_embeddings", False)
            self.emb = nn.Embedding(v, h)
            self.blocks = nn.ModuleList(block() for _ in range(layers))
            self.head = nn.Linear(h, v, bias=False)
            if tied:
                self.head.weight = self.emb.weight
            if lora:
                for m in (self.emb, self.head, self.norm, *(self.pos,) * (self.pos is not None)):
                    m.requires_grad_(False)
                for blk in self.blocks:
                    for m in blk.modules():
                        if isinstance(m, (nn.LayerNorm, RMSNorm)):
                            m.requires_grad_(False)

        def forward(self, ids):
            x = self.emb(ids)
            if self.pos is not None:
                x = x + self.pos(torch.arange(ids.shape[1], device=ids.device))
            for blk in self.blocks:
                x = checkpoint(blk, x, use_reentrant=False) if case["checkpointing"] else blk(x)
            return self.head(self.norm(x))

    t0 = time.time()
    import deepspeed

    conf = case["config"]
    torch.cuda.reset_peak_memory_stats()
    if case["stage"] == 3:
        with deepspeed.zero.Init(config_dict_or_path=conf):
            model = LM()
    else:
        model = LM()
    built = time.time()
    params = {id(p): p for p in model.parameters()}.values()
    n_params = sum(getattr(p, "ds_numel", p.numel()) for p in params)
    trainable = [p for p in params if p.requires_grad]
    engine, *_ = deepspeed.initialize(model=model, model_parameters=trainable, config=conf)
    init_s = time.time() - built
    vocab = cfg["vocab_size"]
    gen = torch.Generator(device="cuda").manual_seed(0)
    step_s = []
    for step in range(1 + STEPS):
        torch.cuda.synchronize()
        t = time.time()
        for _ in range(case["grad_accum"]):
            ids = torch.randint(0, vocab, (case["micro_batch"], case["seq_len"] + 1), device="cuda", generator=gen)
            logits = engine(ids[:, :-1])
            loss = F.cross_entropy(logits.float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
            engine.backward(loss)
            engine.step()
        torch.cuda.synchronize()
        if step:
            step_s.append(time.time() - t)
    out = {"peak_allocated_bytes": torch.cuda.max_memory_allocated(),
           "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
           "host_rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "params_built": int(n_params), "trainable_built": int(sum(getattr(p, "ds_numel", p.numel())
                                                                    for p in trainable)),
           "loss": float(loss), "build_s": built - t0, "init_s": init_s, "step_s": step_s,
           "optimizer": type(engine.optimizer).__name__, "device": torch.cuda.get_device_name(),
           "torch": torch.__version__, "deepspeed": deepspeed.__version__}
    Path(case["result"]).write_text(json.dumps(out))
    return 0


# -- the runs ---------------------------------------------------------------------------------------------------------

def build_ops() -> dict:
    """DeepSpeed's JIT ops the configs need, built before any clock starts (FusedAdam, DeepSpeedCPUAdam)."""
    out = {}
    from deepspeed.ops.op_builder import CPUAdamBuilder, FusedAdamBuilder

    for b in (FusedAdamBuilder(), CPUAdamBuilder()):
        t = time.time()
        b.load()
        out[b.name] = round(time.time() - t, 1)
    return out


def run(out: Path, host_memory: int, deadline: float, names: list[str]) -> int:
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    env["TORCH_CUDA_ARCH_LIST"] = env.get("TORCH_CUDA_ARCH_LIST", "9.0").rstrip("af") or "9.0"
    os.environ.update(env)
    ops = build_ops()
    print(f"[{time.time() - start:6.1f}s] ops: {ops}", flush=True)
    cases = make_cases(out, host_memory, names)
    rows = []
    for case in cases:
        if time.time() - start > deadline:
            rows.append({**case, "status": "skipped (deadline)"})
            continue
        path = out / f"{case['name']}.case.json"
        path.write_text(json.dumps(case))
        t = time.time()
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(path)], env=env,
                               capture_output=True, text=True, timeout=max(30.0, deadline - (t - start) + 60))
            status, err = ("ok" if p.returncode == 0 else f"rc={p.returncode}"), p.stderr[-2500:]
        except subprocess.TimeoutExpired:
            status, err = "timeout", ""
        row = {k: v for k, v in case.items() if k != "result"}
        row["status"], row["wall_s"] = status, round(time.time() - t, 1)
        res = Path(case["result"])
        if status == "ok" and res.is_file():
            row.update(json.loads(res.read_text()))
        else:
            row["error_tail"] = err
        rows.append(row)
        print(f"[{time.time() - start:6.1f}s] {case['name']} ({case['summary']}): {status} in {row['wall_s']}s",
              flush=True)
        (out / "plan-gpu.json").write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "ops_build_s": ops,
                                                       "host_memory": host_memory, "cases": rows}, indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "plan-gpu-out"))
    ap.add_argument("--host-memory", default="120GB")
    ap.add_argument("--deadline", type=float, default=540)
    ap.add_argument("--models", default=",".join(RUNS))
    ap.add_argument("--child")
    ap.add_argument("--dry-run", action="store_true", help="print the cases and run nothing")
    a = ap.parse_args()
    if a.child:
        return child(a.child)
    sys.path.insert(0, str(ROOT / "src"))
    from zerolint.estimate.memory import parse_bytes

    names = [n for n in a.models.split(",") if n]
    if a.dry_run:
        for c in make_cases(Path(a.out), parse_bytes(a.host_memory), names):
            print(c["name"], c["summary"], f"{c['estimate_per_gpu_bytes'] / 2**30:.1f} GiB",
                  f"{c['model_step_seconds']:.3f} s")
        return 0
    return run(Path(a.out), parse_bytes(a.host_memory), a.deadline, names)


if __name__ == "__main__":
    sys.exit(main())
