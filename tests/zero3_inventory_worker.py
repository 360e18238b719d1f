"""DeepSpeed's ZeRO-3 partition buffers, counted on the CPU, for tests/test_estimate_deepspeed.py:
`python tests/zero3_inventory_worker.py fp32|bf16 OUT`.

For fp32 or bf16 training of a small model on one CPU rank (torch AdamW, no parameter or optimizer offload), it
writes to OUT: the config, P, the largest tensor, the bytes of every live tensor storage of exactly P elements (the flat
partition-sized buffers; with one rank the partition is the whole model) after `deepspeed.initialize` and after two
steps, and whether the fp32 master partition shares the storage of the model's partition. The CPU allocator is not
the GPU's, but which buffers DeepSpeed keeps alive is the same code path. A process of its own: it sets up
torch.distributed (gloo, one rank), and one engine per process (a second would find the first one's buffers).
"""

from __future__ import annotations

import gc
import json
import os
import socket
import sys


def storages_of(numel: int) -> list[int]:
    """nbytes of each distinct live storage holding exactly `numel` elements (tensors and their .grad)."""
    import torch

    seen: dict[int, int] = {}
    for obj in gc.get_objects():
        if not isinstance(obj, torch.Tensor):
            continue
        for t in (obj, obj.grad if obj.is_leaf else None):
            if t is None or t.numel() == 0:
                continue
            s = t.untyped_storage()
            if s.nbytes() == numel * t.element_size():
                seen[s.data_ptr()] = s.nbytes()
    return sorted(seen.values())


def run(precision: str) -> dict:
    import deepspeed
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.ReLU(), torch.nn.Linear(96, 80))
    P, largest = sum(p.numel() for p in model.parameters()), max(p.numel() for p in model.parameters())
    cfg = {"train_micro_batch_size_per_gpu": 2,
           "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "torch_adam": True}},
           # no persistent parameters (all are in the flat partition); a bucket that is not P elements
           "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0, "reduce_bucket_size": 1000}}
    if precision == "bf16":
        cfg["bf16"] = {"enabled": True}
    engine, _, _, _ = deepspeed.initialize(model=model, config=cfg, model_parameters=model.parameters())
    opt = engine.optimizer
    part, master = opt.fp16_partitioned_groups_flat[0], opt.fp32_partitioned_groups_flat[0]
    out = {"config": cfg, "P": P, "largest": largest, "after_init": storages_of(P),
           "master_aliases_partition": part.untyped_storage().data_ptr() == master.untyped_storage().data_ptr()}
    x = torch.randn(2, 64, dtype=torch.bfloat16 if precision == "bf16" else torch.float32)
    for _ in range(2):
        engine.backward(engine(x).float().square().mean())
        engine.step()
    out["after_steps"] = storages_of(P)
    return out


def main(precision: str, dst: str) -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1", LOCAL_RANK="0",
                      LOCAL_WORLD_SIZE="1", DS_ACCELERATOR="cpu")
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(run(precision), f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
