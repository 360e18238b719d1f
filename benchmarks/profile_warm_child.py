#!/usr/bin/env python3
"""Where a warm-runner fork spends its time: import torch, DeepSpeed and forkserver.PRELOAD as the server does (with
py-cpuinfo asked once), fork, and run one config's child body under cProfile; print the child's phase times and the
functions with the most cumulative time.

    python benchmarks/profile_warm_child.py fixtures/examples/seed/ds_zero3_offload.json [--cpu] [--top 40]

Several configs are profiled one after another, each in a fresh fork of the same process (as the server does).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import tempfile
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    accelerator = "cpu" if args.cpu else "cuda"
    os.environ["DS_ACCELERATOR"] = accelerator
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"  # as the server: no CUDA before the fork

    from zerolint.verify.resolve import build_plan, model_spec
    from zerolint.verify.runner import free_port, normalize_arch_list, spec_of

    arch = normalize_arch_list(os.environ.get("TORCH_CUDA_ARCH_LIST"))
    if arch is not None:
        os.environ["TORCH_CUDA_ARCH_LIST"] = arch
    specs = []
    for path in args.configs:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
        plan = build_plan(cfg, target="deepspeed", world_size=1, steps=3, model=model_spec(None, None),
                          tmpdir=tempfile.gettempdir())
        specs.append((path, spec_of(plan, accelerator)))

    t = time.monotonic()
    import importlib

    from zerolint.verify import cpuinfo_once, forkserver

    asking = cpuinfo_once.prefetch()
    for name in ("torch", "deepspeed", *forkserver.PRELOAD):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - as the server: a module of another DeepSpeed version
            pass
    cpuinfo_once.settle(asking)
    print(f"server-side imports {time.monotonic() - t:.2f} s", flush=True)

    for path, spec in specs:
        out = tempfile.mkdtemp(prefix="zerolint-profile-")
        os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port(set())), "RANK": "0",
                           "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"})
        t = time.monotonic()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                from zerolint.verify import child

                child.T0 = time.monotonic()
                prof = cProfile.Profile()
                prof.enable()
                code = child.Child(spec, out, 0, 0).run()
                prof.disable()
                prof.dump_stats(os.path.join(out, "child.prof"))
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        wall = time.monotonic() - t
        with open(os.path.join(out, "result-rank0.json"), encoding="utf-8") as f:
            result = json.load(f)
        print(f"\n== {path}: {result['status']} in {wall:.2f} s (fork to exit); timings {result['timings']}")
        text = io.StringIO()
        pstats.Stats(os.path.join(out, "child.prof"), stream=text).sort_stats("cumulative").print_stats(args.top)
        print(text.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
