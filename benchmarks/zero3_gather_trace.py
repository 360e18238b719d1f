#!/usr/bin/env python3
"""How many ZeRO-3 parameters are gathered over a training step: DeepSpeed's own coordinator on the CPU.

    DS_ACCELERATOR=cpu python benchmarks/zero3_gather_trace.py [--offload] [--hidden 128 --layers 23 --vocab 2000]

Builds zerolint verify's model (zerolint/verify/model.py) under deepspeed.zero.Init at a small size, scales
DeepSpeed's size settings (stage3_max_live_parameters, stage3_max_reuse_distance, stage3_prefetch_bucket_size,
reduce_bucket_size, all at their defaults for a 1.29e9-parameter model) by the same factor as the parameters, runs
3 steps on one CPU rank and records, after every module fetch and release and at every bucket reduction, the
non-persistent parameters that are gathered. It checks the rows `gathered parameters`, `gathered parameters still
needed` and `gathered parameters (module being reduced)` of docs/estimate.md without a GPU. Result with the
defaults (P = 5.07e6, scaled like the 1.3B verify model): step 1 (trace being recorded) one module at a time; steps
2-3: 0.78 P at the end of the forward (= stage3_max_live_parameters), at most 0.83 P; 0.62 P when the first bucket
(0.38 P of gradients) is reduced; the two embeddings when the last one is. `--live 1e8` (0.08 P): still 0.39 P at the
end of the forward (= max_reuse_distance / 2: modules whose backward comes within the reuse distance are kept), 0.09 P
when the first bucket is reduced; `--live 1e8 --reuse 3e8`: 0.12 P (= 0.23 P / 2). Same with --offload.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL_P = 1_289_840_640  # the 1.3B model of docs/data/verify-gpu-2026-11-30.json


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=23)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--offload", action="store_true", help="offload_param and offload_optimizer to the CPU")
    ap.add_argument("--live", type=float, default=1e9, help="stage3_max_live_parameters at the 1.3B size")
    ap.add_argument("--reuse", type=float, default=1e9, help="stage3_max_reuse_distance at the 1.3B size")
    ap.add_argument("--json", metavar="PATH", help="write every step's trace here")
    args = ap.parse_args()
    for k, v in (("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", str(29500 + os.getpid() % 1000)), ("RANK", "0"),
                 ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"), ("LOCAL_WORLD_SIZE", "1"), ("DS_ACCELERATOR", "cpu")):
        os.environ.setdefault(k, v)
    sys.path.insert(0, os.path.join(ROOT, "src"))
    import deepspeed
    import torch
    from deepspeed.runtime.zero import partitioned_param_coordinator as ppc
    from deepspeed.runtime.zero import stage3
    from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus

    from zerolint.verify.model import build

    h, n, v = args.hidden, args.layers, args.vocab
    P = n * (12 * h * h + 13 * h) + v * h + args.seq * h + 2 * h + v * h
    k = P / REAL_P
    z = {"stage": 3, "stage3_max_reuse_distance": int(args.reuse * k),
         "stage3_max_live_parameters": int(args.live * k),
         "stage3_prefetch_bucket_size": int(5e7 * k), "reduce_bucket_size": int(5e8 * k),
         "stage3_param_persistence_threshold": 4 * h + 1}  # vectors persist, matrices do not (as at h = 2048)
    if args.offload:
        z["offload_param"] = {"device": "cpu"}
        z["offload_optimizer"] = {"device": "cpu"}
    cfg = {"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": True}, "zero_optimization": z,
           "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}}}
    deepspeed.init_distributed()
    with deepspeed.zero.Init(config_dict_or_path=cfg):
        model = build({"vocab": v, "hidden": h, "layers": n, "heads": 4, "seq": args.seq})
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    params = [p for p in model.parameters() if not p.ds_persist]
    p_np = sum(p.ds_numel for p in params)
    log: list = []

    def gathered() -> int:
        return sum(p.ds_numel for p in params if p.ds_status != ZeroParamStatus.NOT_AVAILABLE)

    C = ppc.PartitionedParameterCoordinator
    fetch, release = C.fetch_sub_module, C.release_sub_module

    def traced_fetch(self, module, forward):
        fetch(self, module, forward)
        log.append(("fetch" if forward else "bwd fetch", type(module).__name__, gathered()))

    def traced_release(self, module, forward=False):
        release(self, module, forward)
        log.append(("release" if forward else "bwd release", type(module).__name__, gathered()))

    Z = stage3.DeepSpeedZeroOptimizer_Stage3
    reduce = Z._DeepSpeedZeroOptimizer_Stage3__reduce_and_partition_ipg_grads

    def traced_reduce(self, dtype):
        log.append(("bucket reduced", self.ipg_buckets[dtype].elements, gathered()))
        return reduce(self, dtype)

    C.fetch_sub_module, C.release_sub_module = traced_fetch, traced_release
    Z._DeepSpeedZeroOptimizer_Stage3__reduce_and_partition_ipg_grads = traced_reduce
    gen = torch.Generator().manual_seed(0)
    steps = []
    for step in range(1, 4):
        log.clear()
        ids = torch.randint(0, v, (1, args.seq + 1), generator=gen)
        loss = engine(ids[:, :-1], ids[:, 1:])
        fwd_end = gathered()
        engine.backward(loss)
        engine.step()
        reductions = [(elements, g) for kind, elements, g in log if kind == "bucket reduced"]
        steps.append({"step": step, "forward_end": fwd_end, "max": max(g for *_, g in log),
                      "reductions": reductions, "trace": list(log)})
        print(f"step {step}: gathered at the end of the forward {fwd_end / p_np:.2f} P, at most "
              f"{max(g for *_, g in log) / p_np:.2f} P; bucket reductions (gradients in the bucket, gathered): "
              + ", ".join(f"({e / P:.2f} P, {g / p_np:.2f} P)" for e, g in reductions))
    print(f"P = {P:,} (non-persistent {p_np:,}); sizes scaled by {k:.3g}: max_live "
          f"{z['stage3_max_live_parameters']:,} ({z['stage3_max_live_parameters'] / p_np:.2f} P), max_reuse "
          f"{z['stage3_max_reuse_distance']:,} ({z['stage3_max_reuse_distance'] / p_np:.2f} P), "
          f"reduce_bucket_size {z['reduce_bucket_size']:,}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"P": P, "P_non_persistent": p_np, "config": cfg, "steps": steps}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
