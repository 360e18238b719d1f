"""The DeepSpeed side of the runtime differential: one long-lived process that imports torch and deepspeed once
and forks a child per config, which runs verify's job body (zerolint/verify/child.py `Child`: the tiny model,
`deepspeed.initialize`, 3 steps, `engine_facts`) on that config.

Run by tests/runtime_differential/runner.py as `python rt_worker.py --accelerator cpu|cuda`. Protocol: one JSON
object per line on stdin, `{"i": <id>, "b64": <the config file's bytes, base64>}`; one JSON object per line on the
original stdout, `{"i": <id>, "phase": "parse"|"initialize"|"step"|"ran"|"timeout"|"crash", ...}`. The first line
out is `{"ready": true, "deepspeed": "0.19.8", "torch": "..."}`. DeepSpeed's own output goes to /dev/null.

Per config, in the forked child (its own temp directory as working directory and HOME, world size 1 through the
env:// rendezvous on a free port):
  1. parse: `DeepSpeedConfig(load_ds_config(path))`, what `deepspeed.initialize(config="ds.json")` does first
     (deepspeed/__init__.py:534-554);
  2. the dict `load_ds_config` returned, with path and module keys pointed into the temp dir and monitors off
     (verify's `resolve.neutralise`, listed in the reply), goes to verify's `Child`: zero.Init at stage 3, the
     model, `deepspeed.initialize` (with a client torch AdamW when the config has no optimizer section, as a raw
     training script passes one), 3 steps, then the engine's facts.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time

for _var in [v for v in os.environ if v.startswith(("OMPI_", "PMI_", "PMIX_", "MV2_", "SLURM_"))]:
    del os.environ[_var]
for _var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
             "CROSS_RANK", "CROSS_SIZE"):
    os.environ.pop(_var, None)
os.environ.setdefault("OMP_NUM_THREADS", "1")  # a tiny model: one thread is fastest and leaves the other core free

STEPS = 3
# The client optimizer a raw training script passes when the config has no optimizer section.
CLIENT_OPTIMIZER = ("AdamW", {"lr": 5e-5, "weight_decay": 0.0})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--accelerator", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    os.environ["DS_ACCELERATOR"] = args.accelerator
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    import logging
    import warnings

    warnings.simplefilter("ignore")
    import deepspeed
    import torch

    logging.getLogger("DeepSpeed").setLevel(logging.CRITICAL)
    # The job body's modules, imported here once so that every forked child has them.
    from deepspeed.runtime import config as _ds_config  # noqa: F401
    from deepspeed.runtime.tensor_parallel import init_utils as _init_utils  # noqa: F401

    import zerolint.verify.child  # noqa: F401
    import zerolint.verify.model  # noqa: F401
    import zerolint.verify.resolve  # noqa: F401

    t = time.monotonic()
    ops = preload_ops(args.accelerator)
    out.write(json.dumps({"ready": True, "deepspeed": deepspeed.__version__, "torch": torch.__version__,
                          "accelerator": args.accelerator, "ops": ops,
                          "ops_seconds": round(time.monotonic() - t, 1)}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        reply = run_one(base64.b64decode(req["b64"]), args.accelerator, args.timeout)
        out.write(json.dumps({"i": req["i"], **reply}, default=str) + "\n")
    return 0


# The JIT-built ops a config can reach (init_distributed's shared-memory allreduce on CPU, the offload optimizers,
# the fused GPU optimizers): built (once, into TORCH_EXTENSIONS_DIR) and loaded here, before any fork, so that each
# child finds them in the op builder's cache (op_builder/builder.py `_loaded_ops`) instead of loading or, on a cold
# cache, compiling them inside its time limit.
PRELOAD = {"cpu": ("ShareMemCommBuilder", "CPUAdamBuilder", "CPUAdagradBuilder", "CPULionBuilder", "FusedAdamBuilder"),
           "cuda": ("CPUAdamBuilder", "CPUAdagradBuilder", "CPULionBuilder", "FusedAdamBuilder", "FusedLambBuilder",
                    "FusedLionBuilder")}


def preload_ops(accelerator: str) -> dict[str, str]:
    import deepspeed.ops
    from deepspeed.accelerator import get_accelerator

    done = {}
    for name in PRELOAD[accelerator]:
        try:
            builder = get_accelerator().create_op_builder(name)
            if builder is None or not deepspeed.ops.__compatible_ops__.get(builder.NAME, False):
                done[name] = "not available"
                continue
            builder.load(verbose=False)
            done[name] = "loaded"
        except Exception as exc:  # noqa: BLE001 - a child that needs it reports DeepSpeed's own error
            done[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return done


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_one(data: bytes, accelerator: str, timeout: float) -> dict:
    work = tempfile.mkdtemp(prefix="zl-rtdiff-")
    try:
        port = _free_port()
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                code = child(data, work, port, accelerator)
            finally:
                os._exit(code)
        status = _wait(pid, timeout)
        reply = _collect(work, status)
        reply["seconds"] = round(time.monotonic() - t0, 3)
        return reply
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _wait(pid: int, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                return f"signal {os.WTERMSIG(status)}"
            return "exited"
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return "timeout"
        select.select([], [], [], 0.02)


def _collect(work: str, status: str) -> dict:
    """The reply: the phase reached, the error, the engine's facts, what was neutralised."""
    meta = _read_json(os.path.join(work, "meta.json")) or {}
    result = _read_json(os.path.join(work, "result-rank0.json"))
    last = None
    try:
        with open(os.path.join(work, "progress-rank0.jsonl"), encoding="utf-8") as f:
            for line in f:
                last = json.loads(line).get("phase", last)
    except OSError:
        pass
    reply: dict = {"neutralised": meta.get("neutralised", []), "client_optimizer": meta.get("client_optimizer")}
    if meta.get("parse_error") is not None:
        return {**reply, "phase": "parse", "error": meta["parse_error"]}
    if status == "timeout" or result is None:
        return {**reply, "phase": "timeout" if status == "timeout" else "crash", "last": last,
                "error": {"type": status.upper(), "message": f"the child ended ({status}) after phase {last}"}}
    reply.update(facts=result.get("facts", {}), losses=result.get("losses"),
                 skipped_steps=result.get("skipped_steps"), status=result.get("status"))
    if result.get("status") == "pass":
        return {**reply, "phase": "ran"}
    where = result.get("phase", last) or ""
    phase = "step" if where.startswith("step") else "initialize" if where in ("model", "initialize") else where
    return {**reply, "phase": phase, "step": int(where.split()[1]) if phase == "step" else None,
            "error": _short_error(result.get("error") or {}), "reason": result.get("reason")}


def _short_error(err: dict) -> dict:
    frames = err.get("frames") or []
    ds = [f for f in frames if f.get("file", "").startswith(("deepspeed/", "torch/"))]
    at = (ds or frames or [{}])[-1]
    return {"type": err.get("type", ""), "message": " ".join(str(err.get("message", "")).split())[:600],
            "where": f"{at.get('file', '')}:{at.get('line', '')}"}


def _read_json(path: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def child(data: bytes, work: str, port: int, accelerator: str) -> int:
    os.setpgid(0, 0)  # its own group: a timeout kills everything it started
    os.chdir(work)
    os.environ.update({"HOME": work, "TMPDIR": work, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
                       "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"})
    _limit_memory()
    import deepspeed
    from deepspeed.runtime.config import DeepSpeedConfig
    from deepspeed.runtime.tensor_parallel.init_utils import load_ds_config

    from zerolint.verify import child as job
    from zerolint.verify import resolve

    meta: dict = {}
    path = os.path.join(work, "ds_config.json")
    with open(path, "wb") as f:
        f.write(data)
    deepspeed.init_distributed(verbose=False)
    try:
        parsed = DeepSpeedConfig(load_ds_config(path))
        config = load_ds_config(path)
    except BaseException as exc:  # noqa: BLE001 - every way the parse can end is a verdict
        meta["parse_error"] = _short_error(job.describe_error(exc))
        _write_json(os.path.join(work, "meta.json"), meta)
        return 1
    changes: list = []
    resolve.neutralise(config, os.path.join(work, "scratch"), changes)
    for mon in resolve.MONITORS:
        sec = config.get(mon)
        if isinstance(sec, dict) and sec.get("enabled") not in (False, None):
            sec["enabled"] = False
            changes.append(resolve.Change(f"/{mon}/enabled", f"{mon} switched off", True, False))
    meta["neutralised"] = [c.pointer for c in changes]
    spec = {"accelerator": accelerator, "config": config, "zero_stage": parsed.zero_optimization_stage,
            "model": resolve.model_spec().to_json(), "steps": STEPS}
    if config.get("optimizer") is None:
        spec["client_optimizer"], spec["client_optimizer_args"] = CLIENT_OPTIMIZER
        meta["client_optimizer"] = CLIENT_OPTIMIZER[0]
    _write_json(os.path.join(work, "meta.json"), meta)
    return job.Child(spec, work, 0, 0).run()


def _write_json(path: str, value: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, default=str)


def _limit_memory(extra: int = 8 << 30) -> None:
    """A crafted size (a 1e12 bucket) becomes a MemoryError in this child, not the machine's OOM killer."""
    import resource

    try:
        with open("/proc/self/status") as f:
            data_kb = next(int(line.split()[1]) for line in f if line.startswith("VmData:"))
        resource.setrlimit(resource.RLIMIT_DATA, (data_kb * 1024 + extra, resource.RLIM_INFINITY))
    except (OSError, ValueError, StopIteration):
        pass


if __name__ == "__main__":
    sys.exit(main())
