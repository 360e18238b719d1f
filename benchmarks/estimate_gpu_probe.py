#!/usr/bin/env python3
"""Measure real peaks for docs/estimate-accuracy.md on a GPU machine: a pure-torch GPT-like model of a given size,
`deepspeed.initialize` with a small config matrix, 3 steps on random tokens, then peak allocated / reserved GPU
memory and peak host RSS per rank.

    python benchmarks/estimate_gpu_probe.py --out OUT [--deadline 420] [--matrix new|2026-11-30]
                                                                          # writes OUT/estimate-gpu-h200.json
    python benchmarks/estimate_gpu_probe.py --child CASE.json             # one case (torchrun for several ranks)

The matrix uses `"torch_adam": true` (torch AdamW, on the CPU copies with offload) so no DeepSpeed op is
JIT-built; the estimate models its temporaries. Copy OUT/estimate-gpu-h200.json to docs/data/estimate-gpu-<date>.json
and run `python benchmarks/estimate_accuracy.py --write docs/estimate-accuracy.md`. Offline GPU hosts: install
DeepSpeed and its dependencies from wheels first (/work/shared/gpu.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SHAPES = {  # name -> (hidden, layers, heads, vocab)
    "1.3B": (2048, 24, 16, 32000),
    "2.7B": (2560, 32, 20, 32000),
    "350M": (1024, 24, 16, 32000),
}


def shape_params(hidden: int, layers: int, vocab: int) -> tuple[int, int]:
    """Parameters of the model below and DeepSpeed's largest_layer_params (the embedding = the head)."""
    block = 2 * hidden + (3 * hidden * hidden + 3 * hidden) + (hidden * hidden + hidden) + 2 * hidden \
        + (4 * hidden * hidden + 4 * hidden) + (4 * hidden * hidden + hidden)
    return 2 * vocab * hidden + layers * block + 2 * hidden, vocab * hidden


def config(stage: int, off_opt: bool, off_par: bool, micro: int, zero: dict | None = None,
           client_optimizer: bool = False) -> dict:
    z: dict = {"stage": stage, **(zero or {})}
    if off_opt:
        z["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if off_par:
        z["offload_param"] = {"device": "cpu", "pin_memory": True}
    cfg = {"train_micro_batch_size_per_gpu": micro, "gradient_accumulation_steps": 1, "bf16": {"enabled": True},
           "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}}, "zero_optimization": z,
           "steps_per_print": 1000}
    if client_optimizer:  # the script passes torch.optim.AdamW(lr=1e-4) with torch's defaults (foreach on CUDA)
        del cfg["optimizer"]
    return cfg


# The matrix of docs/data/estimate-gpu-h200-2026-11-30.json: (model, stage, off_opt, off_par, gpus)
MATRIX_2026_11_30 = [
    ("1.3B", 2, False, False, 1), ("1.3B", 3, False, False, 1), ("1.3B", 1, False, False, 1),
    ("1.3B", 2, True, False, 1), ("1.3B", 3, True, False, 1), ("1.3B", 3, True, True, 1),
    ("1.3B", 2, False, False, 2), ("1.3B", 3, False, False, 2), ("1.3B", 3, True, True, 2),
    ("2.7B", 2, False, False, 1), ("2.7B", 3, False, False, 1),
]

# The shapes of issue 14 section 5 (350M and 1.3B; stages 1-3; offload; a lowered stage3_max_live_parameters with
# the default and a small reuse distance; ZeRO-2 optimizer offload with a short sequence (seq 128, micro-batch 1) so
# that initialize's copies are the peak, with overlap_comm, and with the "smaller communication buckets" suggestion
# applied; ZeRO-3 with a client torch AdamW): name suffix, model, stage, off_opt, off_par, gpus, extra
# zero_optimization keys, client optimizer, seq, micro-batch.
LIVE = {"stage3_max_live_parameters": 100_000_000}
NEW = [
    ("", "350M", 1, False, False, 1, {}, False, 512, 2),
    ("", "350M", 2, False, False, 1, {}, False, 512, 2),
    ("", "350M", 3, False, False, 1, {}, False, 512, 2),
    ("", "350M", 3, True, False, 2, {}, False, 512, 2),
    ("", "1.3B", 1, False, False, 2, {}, False, 512, 2),
    ("-live1e8", "1.3B", 3, True, True, 1, LIVE, False, 512, 2),
    ("-live1e8", "1.3B", 3, False, False, 2, LIVE, False, 512, 2),
    ("-live1e8-reuse2e8", "1.3B", 3, True, True, 1, {**LIVE, "stage3_max_reuse_distance": 200_000_000}, False,
     512, 2),
    ("-short", "1.3B", 2, True, False, 1, {}, False, 128, 1),
    ("-short-overlap", "1.3B", 2, True, False, 1, {"overlap_comm": True}, False, 128, 1),
    ("-short-overlap", "350M", 2, True, False, 1, {"overlap_comm": True}, False, 128, 1),
    ("-short-smallbuckets", "1.3B", 2, True, False, 1, {"overlap_comm": False, "reduce_bucket_size": 50_000_000},
     False, 128, 1),
    ("-clientadamw", "1.3B", 3, False, False, 1, {}, True, 512, 2),
    ("-clientadamw", "350M", 3, False, False, 2, {}, True, 512, 2),
]
MATRICES = {
    "new": NEW,
    "2026-11-30": [("", m, st, oo, op, g, {}, False, None, None) for m, st, oo, op, g in MATRIX_2026_11_30],
}


def cases(matrix: list, seq: int, micro: int) -> list[dict]:
    """The case dicts of a matrix (what --child runs and what benchmarks/estimate_accuracy.py reads)."""
    out = []
    for i, (suffix, name, stage, off_opt, off_par, gpus, zero, client, c_seq, c_micro) in enumerate(matrix):
        hidden, layers, heads, vocab = SHAPES[name]
        params, largest = shape_params(hidden, layers, vocab)
        s, mb = c_seq or seq, c_micro or micro
        tag = f"{name}-z{stage}{'-offopt' if off_opt else ''}{'-offparam' if off_par else ''}{suffix}-{gpus}gpu"
        opt = "client torch AdamW (foreach)" if client else "torch AdamW" + (" on CPU" if off_opt else "")
        out.append({"name": tag, "model": f"GPT-like {name} (pure torch, untied head, 4h GELU MLP)",
                    "params": params, "largest_layer_params": largest, "hidden": hidden, "layers": layers,
                    "heads": heads, "vocab": vocab, "intermediate": 4 * hidden, "gated_mlp": False,
                    "dropout": False, "seq_len": s, "micro_batch": mb, "stage": stage, "precision": "bf16",
                    "offload_optimizer": "cpu" if off_opt else "none", "offload_param": "cpu" if off_par else "none",
                    "world_size": gpus, "gpus_per_node": gpus, "zero_init": False, "torch_adam": True,
                    "client_optimizer": client, "optimizer": opt,
                    "config": config(stage, off_opt, off_par, mb, zero, client), "port_offset": i})
    return out


# -- one case --------------------------------------------------------------------------------------------------------

def child(case_path: str) -> int:
    import resource

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    case = json.loads(Path(case_path).read_text())
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    for k, v in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                 ("MASTER_PORT", str(29600 + case["port_offset"]))):
        os.environ.setdefault(k, v)
    torch.cuda.set_device(local)
    torch.set_num_threads(max(1, (os.cpu_count() or 8) // 4))
    hidden, layers, heads, vocab = case["hidden"], case["layers"], case["heads"], case["vocab"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.qkv, self.proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
            self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

        def forward(self, x):
            b, s, h = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, heads, h // heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, h)
            x = x + self.proj(a)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(hidden)
            self.head = nn.Linear(hidden, vocab, bias=False)

        def forward(self, t):
            x = self.emb(t)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    t0 = time.time()
    import deepspeed

    model = GPT()
    built = time.time()
    torch.cuda.reset_peak_memory_stats()
    client = torch.optim.AdamW(model.parameters(), lr=1e-4) if case.get("client_optimizer") else None
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), optimizer=client,
                                      config=case["config"])
    after_init = torch.cuda.memory_allocated()
    init_s = time.time() - built
    gen = torch.Generator(device="cuda").manual_seed(rank)
    for _ in range(3):
        tokens = torch.randint(0, vocab, (case["micro_batch"], case["seq_len"] + 1), device="cuda", generator=gen)
        logits = engine(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, vocab), tokens[:, 1:].reshape(-1))
        engine.backward(loss)
        engine.step()
    torch.cuda.synchronize()
    out = {"rank": rank, "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
           "peak_reserved_bytes": torch.cuda.max_memory_reserved(), "after_initialize_allocated_bytes": after_init,
           "host_rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "loss": float(loss), "build_s": built - t0, "init_s": init_s, "total_s": time.time() - t0,
           "optimizer": type(engine.optimizer).__name__, "device": torch.cuda.get_device_name(),
           "torch": torch.__version__, "deepspeed": deepspeed.__version__}
    Path(case["result"] + f".rank{rank}.json").write_text(json.dumps(out))
    return 0


# -- the matrix -------------------------------------------------------------------------------------------------------

def run_matrix(out: Path, deadline: float, seq: int, micro: int, matrix: str = "new") -> int:
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    cases_ = cases(MATRICES[matrix], seq, micro)
    for case in cases_:
        case["result"] = str(out / case["name"])
        (out / f"{case['name']}.case.json").write_text(json.dumps(case))

    def launch(case, gpu_ids):
        if time.time() - start > deadline:
            return case, "skipped (deadline)", ""
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=",".join(map(str, gpu_ids)), NCCL_NVLS_ENABLE="0",
                   TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
        env["TORCH_CUDA_ARCH_LIST"] = env.get("TORCH_CUDA_ARCH_LIST", "9.0").rstrip("af") or "9.0"
        me = os.path.abspath(__file__)
        case_file = str(out / f"{case['name']}.case.json")
        if len(gpu_ids) == 1:
            cmd = [sys.executable, me, "--child", case_file]
        else:
            cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={len(gpu_ids)}",
                   me, "--child", case_file]
        t = time.time()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=max(30, deadline + 120 - (t - start)))
        status = "ok" if p.returncode == 0 else f"rc={p.returncode}"
        print(f"[{time.time() - start:6.1f}s] {case['name']}: {status} in {time.time() - t:.1f}s", flush=True)
        return case, status, p.stderr[-3000:]

    import torch  # noqa: F401  (fail early where torch is missing)

    n_gpus = int(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU "))
    singles = [c for c in cases_ if c["world_size"] == 1]
    multis = [c for c in cases_ if c["world_size"] > 1]
    results = []
    lanes = max(1, n_gpus)
    with ThreadPoolExecutor(lanes) as pool:
        futs = [pool.submit(launch, c, [i % lanes]) for i, c in enumerate(singles)]
        results += [f.result() for f in futs]
    for c in multis:
        if c["world_size"] <= n_gpus:
            results.append(launch(c, list(range(c["world_size"]))))
    rows = []
    for case, status, err in results:
        ranks = [json.loads(p.read_text()) for p in sorted(out.glob(f"{case['name']}.rank*.json"))]
        row = {k: v for k, v in case.items() if k not in ("port_offset", "result")}
        row["status"] = status
        if ranks and status == "ok":
            for k in ("peak_allocated_bytes", "peak_reserved_bytes", "host_rss_peak_bytes",
                      "after_initialize_allocated_bytes"):
                row[k] = max(r[k] for r in ranks)
            row.update({k: ranks[0][k] for k in ("optimizer", "device", "torch", "deepspeed", "init_s", "total_s",
                                                 "loss")})
            row["optimizer"] = f"{case['optimizer']} ({ranks[0]['optimizer']})"
        else:
            row["error_tail"] = err[-1500:]
        rows.append(row)
    doc = {"source": "benchmarks/estimate_gpu_probe.py (pure-torch GPT-like model, deepspeed.initialize + 3 steps, "
                     "torch_adam); peaks are the maximum over ranks",
           "date": time.strftime("%Y-%m-%d"), "cases": rows}
    (out / "estimate-gpu-h200.json").write_text(json.dumps(doc, indent=1))
    print(json.dumps([(r["name"], r["status"], round(r.get("peak_allocated_bytes", 0) / 2**30, 2)) for r in rows]))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", metavar="CASE.json")
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-probe-out"))
    ap.add_argument("--deadline", type=float, default=420.0, help="launch no case after this many seconds")
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--micro-batch", type=int, default=2)
    ap.add_argument("--matrix", choices=sorted(MATRICES), default="new",
                    help="new: the shapes of issue 14 section 5; 2026-11-30: the matrix of the first probe run")
    ap.add_argument("--list", action="store_true", help="print the matrix's case names and exit")
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    if args.list:
        print("\n".join(c["name"] for c in cases(MATRICES[args.matrix], args.seq_len, args.micro_batch)))
        return 0
    return run_matrix(Path(args.out), args.deadline, args.seq_len, args.micro_batch, args.matrix)


if __name__ == "__main__":
    sys.exit(main())
