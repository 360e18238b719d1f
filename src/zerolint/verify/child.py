"""The verify child: `python -m zerolint.verify.child --spec SPEC.json --out DIR`.

The only zerolint module that imports torch and deepspeed. One process per rank (launched alone with the dist
variables set by the parent, or by `torch.distributed.run` / the `deepspeed` launcher). Everything runs under the
`__main__` guard: some DeepSpeed features spawn workers that re-import the main module.

It appends a progress line per stage to DIR/progress-rank<R>.jsonl (so a timeout can say how far it got) and
writes DIR/result-rank<R>.json at the end: status (pass | fail | skip), the phase that failed (import, model,
initialize, step N) with the exception's type, message, frames and pydantic errors, what the engine actually
built (facts), memory peaks and timings.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

T0 = time.monotonic()


class Child:
    def __init__(self, spec: dict, out: str, rank: int, local_rank: int) -> None:
        self.spec, self.out, self.rank, self.local_rank = spec, out, rank, local_rank
        self.phase = "start"
        self.result: dict = {"rank": rank, "status": "fail", "timings": {}, "memory": {}, "facts": {}}
        from .cpuinfo_once import asked

        self.cpuinfo_before = asked()

    # -- files ------------------------------------------------------------------------------------------------
    def progress(self, phase: str, **extra) -> None:
        self.phase = phase
        line = json.dumps({"t": round(time.monotonic() - T0, 3), "phase": phase, **extra})
        with open(os.path.join(self.out, f"progress-rank{self.rank}.jsonl"), "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def write(self) -> None:
        self.result["timings"]["process_s"] = round(time.monotonic() - T0, 3)
        # what DeepSpeed's CPU shm_comm names its /dev/shm segment after: the parent removes it (procs.py)
        self.result["master_addr"], self.result["master_port"] = os.environ.get("MASTER_ADDR"), \
            os.environ.get("MASTER_PORT")
        from .cpuinfo_once import asked

        # py-cpuinfo processes this run started (~1 s each): 0 in a fork of the warm server, at most 1 otherwise
        self.result["timings"]["cpuinfo_processes"] = asked() - self.cpuinfo_before
        path = os.path.join(self.out, f"result-rank{self.rank}.json")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(self.result, f, indent=1, default=str)
        os.replace(path + ".tmp", path)

    # -- the job ------------------------------------------------------------------------------------------------
    def run(self) -> int:
        from .opguard import OpNotBuilt, loaded

        try:
            self._run()
        except OpNotBuilt as stop:  # an op would be built (or waited for) inside the clock: the parent builds it
            self.result.update(status="needs-op", phase=self.phase, op=stop.op, why=stop.why, ops_loaded=loaded())
            self.write()
            self.progress("needs-op", op=stop.op)
            return 1
        except BaseException as exc:  # noqa: BLE001 - everything is reported, nothing escapes
            self.result["status"] = "fail"
            self.result["phase"] = self.phase
            self.result["error"] = describe_error(exc)
            self.result["ops_loaded"] = loaded()
            self._memory()
            self.write()
            self.progress("failed")
            return 1
        self.result["ops_loaded"] = loaded()
        self.write()
        self.progress("done")
        return 0

    def _run(self) -> None:
        spec = self.spec
        self.progress("import")
        t = time.monotonic()
        import torch

        self.result["versions"] = {"torch": torch.__version__, "python": sys.version.split()[0]}
        accel = spec["accelerator"]
        if accel == "cpu" and spec.get("fp16") and not _cpu_fp16_supported(torch):
            self.result["status"] = "skip"
            self.result["reason"] = ("fp16 cannot be verified on this CPU: it lacks fp16 support in oneDNN "
                                     "(torch.ops.mkldnn._is_mkldnn_fp16_supported() is False, no AVX512-FP16/AMX), "
                                     "so DeepSpeed stops with 'Type fp16 is not supported on your device.' "
                                     "Verify it on a GPU, or on a CPU with AVX512-FP16")
            return
        import deepspeed
        from deepspeed.accelerator import get_accelerator

        from . import opguard

        opguard.install()  # no op build inside the clock (the fork server installed it already)

        self.result["versions"]["deepspeed"] = deepspeed.__version__
        self.result["timings"]["import_s"] = round(time.monotonic() - t, 3)
        acc = get_accelerator()
        self.result["accelerator"] = acc.device_name()
        if accel == "cuda":
            acc.set_device(self.local_rank)
            self.result["device_name"] = torch.cuda.get_device_name(self.local_rank)
        single_rank_group(torch, accel)
        deepspeed.init_distributed()
        import deepspeed.comm as dist

        world = dist.get_world_size()
        self.result["world_size"] = world
        if spec.get("hf"):  # the real HF Trainer / Accelerate run the job (hf_plan.py, hf_child.py)
            from . import hf_child

            hf_child.run(self, torch, world, engine_facts, estimates)
            return

        self.progress("model")
        t = time.monotonic()
        from .model import build

        config = spec["config"]
        torch.manual_seed(1234)
        zero_init = spec.get("zero_stage") == 3
        if zero_init:  # as HF from_pretrained does under ZeRO-3
            with deepspeed.zero.Init(config_dict_or_path=config):
                model = build(spec["model"])
        else:
            model = build(spec["model"])
        self.result["facts"]["zero_init"] = zero_init
        self.result["timings"]["model_s"] = round(time.monotonic() - t, 3)

        self.progress("initialize")
        t = time.monotonic()
        client = None
        opt = spec.get("client_optimizer")
        if opt == "AdamW":
            client = torch.optim.AdamW(model.parameters(), **spec.get("client_optimizer_args", {}))
        elif opt == "DeepSpeedCPUAdam":
            from deepspeed.ops.adam import DeepSpeedCPUAdam

            client = DeepSpeedCPUAdam(model.parameters(), **spec.get("client_optimizer_args", {}))
        # the trained parameters only (an adapter run freezes the rest, as a PEFT script passes them)
        trained = [p for p in model.parameters() if p.requires_grad]
        engine, _, _, _ = deepspeed.initialize(model=model, optimizer=client,
                                               model_parameters=None if client is not None else trained,
                                               config=config)
        self.result["timings"]["initialize_s"] = round(time.monotonic() - t, 3)
        self._memory("after_initialize")

        m = spec["model"]
        micro, gas = engine.train_micro_batch_size_per_gpu(), engine.gradient_accumulation_steps()
        gen = torch.Generator(device="cpu").manual_seed(4321 + self.rank)
        step_times, losses, lrs = [], [], []
        for step in range(1, spec.get("steps", 3) + 1):
            self.progress(f"step {step}", step=step)
            t = time.monotonic()
            for _ in range(gas):
                ids = torch.randint(0, m["vocab"], (micro, m["seq"] + 1), generator=gen).to(engine.device)
                loss = engine(ids[:, :-1], ids[:, 1:])
                engine.backward(loss)
                engine.step()
            if accel == "cuda":
                torch.cuda.synchronize()
            step_times.append(round(time.monotonic() - t, 4))
            losses.append(float(loss.detach().float().item()))
            lrs.append(_first_lr(engine))
        self.result["timings"]["step_s"] = step_times
        self.result["losses"] = losses
        self.result["skipped_steps"] = int(getattr(engine, "skipped_steps", 0) or 0)
        self.progress("inspect")
        self.result["facts"].update(engine_facts(engine, torch, world), lr_per_step=lrs)
        self._memory()
        self.result["estimates"] = estimates(spec, self.result["facts"], world)
        self.result["listening"] = listening_sockets()
        self.result["status"] = "pass"
        try:
            dist.barrier()
        except Exception:  # noqa: BLE001
            pass

    def _memory(self, label: str | None = None) -> None:
        mem = self.result["memory"]
        try:
            import resource

            mem["host_rss_peak_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        except Exception:  # noqa: BLE001
            pass
        torch = sys.modules.get("torch")
        if torch is not None and self.spec.get("accelerator") == "cuda" and torch.cuda.is_initialized():
            alloc, reserved = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
            if label:
                mem[f"{label}_allocated_bytes"] = torch.cuda.memory_allocated()
                mem[f"{label}_peak_allocated_bytes"] = alloc
            else:
                mem["peak_allocated_bytes"], mem["peak_reserved_bytes"] = alloc, reserved


def _first_lr(engine) -> float | None:
    """The first parameter group's learning rate after a step (what the scheduler set), None when unreadable."""
    try:
        return float(engine.get_lr()[0])
    except Exception:  # noqa: BLE001 - a client optimizer without param groups
        return None


def warm_up(accelerator: str) -> dict:
    """What every run pays before its config matters, done before the config is known (the warm runner's pool,
    forkserver.py): the CUDA context on its device, the first kernels' lazy loading (the verify model's forward,
    backward and an AdamW step in fp32, bf16 and fp16), and the process group over this run's MASTER_ADDR/PORT with
    its first collectives (NCCL creates its communicator there). DeepSpeed's `init_distributed` then finds the group
    and reuses it. Everything it allocated is freed and the peak-memory counters reset, so the run's figures are
    its own. Returns its timings."""
    t = time.monotonic()
    import deepspeed
    import torch

    device = "cpu"
    if accelerator == "cuda":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        device = f"cuda:{local}"
    single_rank_group(torch, accelerator)
    deepspeed.init_distributed()
    import deepspeed.comm as dist

    from .model import build
    from .resolve import model_spec

    spec = model_spec().to_json()
    dtypes = (torch.float32, torch.bfloat16, torch.float16) if accelerator == "cuda" else (torch.float32,)
    for dtype in dtypes:
        model = build(spec).to(device=device, dtype=dtype)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        ids = torch.randint(0, spec["vocab"], (2, spec["seq"] + 1), device=device)
        loss = model(ids[:, :-1], ids[:, 1:])
        loss.backward()
        opt.step()
        del model, opt, ids, loss
    probe = torch.zeros(1, device=device)
    dist.broadcast(probe, 0)
    dist.all_reduce(probe)
    dist.barrier()
    del probe
    if accelerator == "cuda":
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    return {"warm_s": round(time.monotonic() - t, 3)}


def single_rank_group(torch, accelerator: str) -> None:
    """A single-rank run of verify's own (not a launcher's) gets its process group from a file store in its own
    working directory: torch's TCPStore would listen on every interface of the machine on MASTER_PORT, whatever
    MASTER_ADDR says. DeepSpeed's `init_distributed` then finds the group and uses it. Gloo and NCCL are held to
    the loopback interface by runner.child_env (GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME)."""
    import torch.distributed as tdist

    if os.environ.get("WORLD_SIZE") != "1" or "ZEROLINT_VERIFY_RUN" not in os.environ or tdist.is_initialized():
        return
    store = os.path.join(os.getcwd(), f"pg-store-{os.getpid()}")
    tdist.init_process_group(backend="nccl" if accelerator == "cuda" else "gloo", init_method=f"file://{store}",
                             rank=0, world_size=1)


def listening_sockets() -> list[str]:
    """The TCP sockets this process listens on, as "address:port" (Linux /proc/net/tcp*): a fact of the run, so
    that what verify opens to the network is on the record (tests/test_verify_safety.py: loopback only)."""
    try:
        inodes = set()
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        out = []
        for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
            with open(table, encoding="ascii") as f:
                for line in f.readlines()[1:]:
                    parts = line.split()
                    if len(parts) > 9 and parts[3] == "0A" and parts[9] in inodes:  # 0A: LISTEN
                        addr, port = parts[1].split(":")
                        out.append(f"{_address(addr, width)}:{int(port, 16)}")
        return sorted(out)
    except OSError:
        return []


def _address(hex_addr: str, width: int) -> str:
    import ipaddress
    import socket
    import struct

    raw = bytes.fromhex(hex_addr)
    if width == 8:
        return str(ipaddress.IPv4Address(struct.pack("<I", struct.unpack(">I", raw)[0])))
    words = struct.unpack("<4I", raw)
    return str(ipaddress.IPv6Address(socket.inet_ntop(socket.AF_INET6, struct.pack(">4I", *words))))


def _cpu_fp16_supported(torch) -> bool:
    if os.environ.get("ZEROLINT_VERIFY_CPU_FP16") in ("0", "1"):  # for tests on CPUs that have it
        return os.environ["ZEROLINT_VERIFY_CPU_FP16"] == "1"
    try:  # the check DeepSpeed's CPU accelerator makes (accelerator/cpu_accelerator.py:228)
        return bool(torch.ops.mkldnn._is_mkldnn_fp16_supported())
    except Exception:  # noqa: BLE001
        return False


def engine_facts(engine, torch, world: int) -> dict:
    """What the engine actually built: stage, precision, where parameters and optimizer states live."""
    f: dict = {}
    f["zero_stage"] = int(engine.zero_optimization_stage())
    f["precision"] = "bf16" if engine.bfloat16_enabled() else "fp16" if engine.fp16_enabled() else "fp32"
    f["train_batch_size"] = engine.train_batch_size()
    f["micro_batch"] = engine.train_micro_batch_size_per_gpu()
    f["grad_accum"] = engine.gradient_accumulation_steps()
    f["world_size"] = world
    f["gradient_clipping"] = engine.gradient_clipping()
    params = [p for p in engine.module.parameters()]
    z3 = [p for p in params if hasattr(p, "ds_tensor")]
    f["params_total"] = int(sum(getattr(p, "ds_numel", p.numel()) for p in params))
    f["params_trained"] = int(sum(getattr(p, "ds_numel", p.numel()) for p in params if p.requires_grad))
    f["zero3_managed"] = bool(params) and len(z3) == len(params)
    if z3:
        local = sum(p.ds_tensor.numel() for p in z3)
        total = sum(p.ds_numel for p in z3)
        f["param_dtype"] = str(z3[0].ds_tensor.dtype).replace("torch.", "")
        f["param_devices"] = sorted({str(p.ds_tensor.device) for p in z3})
        f["partition_share"] = round(local / max(total, 1), 4)
        f["params_released"] = sum(1 for p in z3 if p.data.numel() == 0)
        f["params_persistent"] = sum(1 for p in z3 if getattr(p, "ds_persist", False))
        f["param_count"] = len(z3)
    else:
        f["param_dtype"] = str(params[0].dtype).replace("torch.", "") if params else None
        f["param_devices"] = sorted({str(p.device) for p in params})
        f["partition_share"] = 1.0
    outer = getattr(engine, "optimizer", None)
    basic = getattr(engine, "basic_optimizer", None)
    f["optimizer_outer"] = type(outer).__name__ if outer is not None else None
    f["optimizer_inner"] = type(basic).__name__ if basic is not None else None
    state_devices, master_devices, state_bytes = set(), set(), 0
    if basic is not None:
        for st in basic.state.values():
            for v in st.values():
                if torch.is_tensor(v) and v.numel() > 1:
                    state_devices.add(str(v.device))
                    state_bytes += v.numel() * v.element_size()
        for g in basic.param_groups:
            for p in g["params"]:
                if torch.is_tensor(p) and p.numel() > 0:
                    master_devices.add(str(p.device))
    f["optimizer_state_devices"] = sorted(state_devices)
    f["optimizer_state_bytes"] = state_bytes
    # ZeRO-3 partial offload (offload_optimizer.ratio < 1): where each optimizer sub-group went (stage3.py:1100-1108;
    # the states of the GPU ones live in a second, torch optimizer that basic.state above does not show).
    placed = getattr(outer, "subgroup_to_device", None)
    if isinstance(placed, dict) and placed:
        counts: dict[str, int] = {}
        for device in placed.values():
            counts[str(device)] = counts.get(str(device), 0) + 1
        f["optimizer_subgroup_devices"] = counts
    f["master_param_devices"] = sorted(master_devices)
    # The ZeRO optimizers' own flags (stage_1_and_2.py:220-225, stage3.py:820-832).
    f["zero_cpu_offload"] = bool(getattr(outer, "cpu_offload", False) or getattr(outer, "offload_optimizer", False))
    f["zero_param_offload"] = bool(getattr(outer, "offload_param", False))
    f["optimizer_offload"] = (f["zero_cpu_offload"] or f["optimizer_inner"] in ("DeepSpeedCPUAdam", "ZenFlowCPUAdam")
                              ) and (not state_devices or state_devices <= {"cpu"})
    f["param_offload_device"] = ("cpu" if z3 and f["param_devices"] == ["cpu"] and (
        f["zero_param_offload"] or str(engine.device) != "cpu") else None)
    if f["zero_param_offload"] and z3 and getattr(outer, "params_in_nvme_and_cpu", False):
        f["param_offload_device"] = "nvme"
    f["engine_device"] = str(engine.device)
    aio = engine.aio_config() if hasattr(engine, "aio_config") else None  # what the NVMe swapper will use
    f["aio_intra_op_parallelism"] = aio.get("intra_op_parallelism") if isinstance(aio, dict) else None
    if engine.fp16_enabled():
        scale = getattr(outer, "cur_scale", None) or getattr(getattr(outer, "loss_scaler", None), "cur_scale", None)
        f["loss_scale"] = float(scale) if scale is not None else None
    return f


def estimates(spec: dict, facts: dict, world: int) -> dict:
    """DeepSpeed's own model-states estimators for this model and world size (bytes per GPU and per node host)."""
    out: dict = {}
    try:
        from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
        from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

        total, largest = spec["model"]["params"], spec["model"]["largest_layer_params"]
        off_opt = bool(facts.get("optimizer_offload"))
        off_param = facts.get("param_offload_device") is not None
        cpu, gpu = estimate_zero2_model_states_mem_needs(total, num_gpus_per_node=world, num_nodes=1,
                                                         cpu_offload=off_opt)
        out["zero2"] = {"gpu_bytes": int(gpu), "cpu_bytes": int(cpu), "cpu_offload": off_opt}
        cpu, gpu, largest_mem = estimate_zero3_model_states_mem_needs(
            total, largest, num_gpus_per_node=world, num_nodes=1, cpu_offload=off_opt, cpu_offload_params=off_param,
            zero_init=bool(facts.get("zero_init")))
        out["zero3"] = {"gpu_bytes": int(gpu), "cpu_bytes": int(cpu), "largest_layer_bytes": int(largest_mem),
                        "cpu_offload": off_opt, "cpu_offload_params": off_param}
    except Exception as exc:  # noqa: BLE001 - estimates are information only
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def _short(filename: str) -> str:
    """A frame's file relative to the sys.path entry it was imported from: 'deepspeed/runtime/config.py' whether
    deepspeed lives in site-packages, dist-packages or a --target directory on PYTHONPATH."""
    best = ""
    for entry in sys.path:
        entry = os.path.abspath(entry or ".").rstrip("/") + "/"
        if filename.startswith(entry) and len(entry) > len(best):
            best = entry
    if best:
        return filename[len(best):]
    for marker in ("site-packages/", "dist-packages/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def describe_error(exc: BaseException) -> dict:
    frames = [{"file": _short(f.filename), "line": f.lineno, "func": f.name, "code": (f.line or "")[:200]}
              for f in traceback.extract_tb(exc.__traceback__)]
    info: dict = {"type": type(exc).__name__, "module": type(exc).__module__, "message": str(exc)[:6000],
                  "frames": frames[-40:]}
    if type(exc).__name__ == "ValidationError" and hasattr(exc, "errors"):
        info["title"] = getattr(exc, "title", None)
        try:
            info["validation"] = [{"loc": [str(x) for x in e.get("loc", ())], "type": e.get("type"),
                                   "msg": e.get("msg"), "input": repr(e.get("input"))[:200]}
                                  for e in exc.errors(include_url=False)]
        except Exception:  # noqa: BLE001
            pass
    cause = exc.__cause__ or exc.__context__
    if cause is not None:
        info["cause"] = {"type": type(cause).__name__, "message": str(cause)[:2000]}
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m zerolint.verify.child")
    ap.add_argument("--spec", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--local_rank", "--local-rank", type=int, default=None)  # the deepspeed launcher appends it
    args, _ = ap.parse_known_args(argv)
    if "ZEROLINT_VERIFY_RUN" in os.environ:
        # The runner passes no HOME (sandbox.py): caches and "~" paths go into this run's own temp working
        # directory. Set before torch is imported, which reads it.
        os.environ["HOME"] = os.getcwd()
    with open(args.spec, encoding="utf-8") as f:
        spec = json.load(f)
    os.umask(0o022)  # op directories torch creates are writable by no one else (cache.check_op_cache)
    from .cpuinfo_once import remember

    remember()  # DeepSpeed asks py-cpuinfo up to three times per config; each answer costs a process
    rank = int(os.environ.get("RANK", "0"))
    local_rank = args.local_rank if args.local_rank is not None else int(os.environ.get("LOCAL_RANK", "0"))
    return Child(spec, args.out, rank, local_rank).run()


if __name__ == "__main__":
    sys.exit(main())
