"""The parent side of a verify run: launch the child (never importing torch or deepspeed here), watch its
progress, enforce the timeout, and leave nothing running.

Process model (docs/verify.md):
- one rank: `python -m zerolint.verify.child` with MASTER_ADDR/MASTER_PORT (a free port)/RANK/WORLD_SIZE/LOCAL_RANK
  set here (without them DeepSpeed tries MPI discovery, which fails where mpi4py is missing);
- several ranks: `python -m torch.distributed.run --standalone --nproc_per_node N -m zerolint.verify.child`, or
  the `deepspeed` launcher (`python -m deepspeed.launcher.runner --num_gpus N --module ...`; it appends
  --local_rank, which the child accepts);
- several nodes (zerolint/verify/launch.py): torchrun with --nnodes/--rdzv-endpoint, the deepspeed launcher with
  a hostfile, one rank per Slurm task, or srun; each rank starts through `python -m zerolint.verify.launch rank`.
  Only this node's results are here: rank 0's decides when it ran here, else this node's ranks decide;
- the child starts a new session (its own process group). Every process of the run carries
  ZEROLINT_VERIFY_RUN=<id> in its environment; on timeout (or Ctrl-C, SIGTERM, SIGHUP, or leftovers after exit)
  each such process and its process group get SIGTERM, then SIGKILL. torchrun starts its workers in sessions of
  their own, so killing the launcher's group alone would not be enough;
- the child, the launcher and every rank start through zerolint/verify/lifeline.py, which ties them to this
  process (PR_SET_PDEATHSIG and a watch on our pid): a SIGKILL of zerolint, which no handler sees, still ends them;
- TMPDIR of the run points into the run's own directory (torchelastic's temp dirs included), removed at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Collection, Iterator

from . import cache, sandbox
from .launch import Nodes
from .launch import command as nodes_command
from .lifeline import CLEANUP_VAR, PARENT_VAR
from .procs import kill_run, processes_of, remove_shm_buffers
from .resolve import Plan, normalize_arch_list
from .toolchain import pin

MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
# A monitor the config enables runs as in the user's run, off the network (resolve.py, step 4): wandb offline, in
# the run's directory (its working directory and HOME).
MONITORS_OFFLINE = {"WANDB_MODE": "offline", "WANDB_SILENT": "true"}
# One node, as DeepSpeed's own launcher sets them for every rank (launcher/launch.py:179-182): DeepSpeed reads them,
# e.g. its checkpoint writer (runtime/model_checkpointing/utils.py:76-78: KeyError 'CROSS_SIZE' without them).
ONE_NODE = {"CROSS_RANK": "0", "CROSS_SIZE": "1", "LOCAL_SIZE": "1"}
# One host: gloo's and NCCL's own sockets on the loopback interface only (a single rank's process group comes from a
# file store, child.single_rank_group, so nothing listens on MASTER_PORT).
LOOPBACK_ONLY = {"GLOO_SOCKET_IFNAME": "lo", "NCCL_SOCKET_IFNAME": "lo"}
DIST_VARS = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
             "ROLE_RANK", "TORCHELASTIC_RUN_ID", "CROSS_RANK", "CROSS_SIZE", "LOCAL_SIZE")


@dataclass
class RunOptions:
    accelerator: str = "cpu"  # cpu | cuda
    world_size: int = 1
    launcher: str = "torchrun"  # torchrun | deepspeed (used when world_size > 1)
    timeout: float = 300.0
    extensions_dir: str = ""
    python: str = sys.executable
    progress: Callable[[str], None] | None = None
    keep_dir: str | None = None  # keep the run's files here (spec, log, results) instead of a temp dir
    cleanup: tuple[str, ...] = ()  # more temp dirs of this verify, removed by the reaper if zerolint is killed
    nodes: Nodes | None = None  # a multi-node run (launch.py); world_size is then this node's ranks
    build_timeout: float = 1800.0  # an op a run stops at is built under this limit (ops.build_stopped)
    note: Callable[[str], None] | None = None  # lines that stay (build notices), besides `progress`


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled as Ctrl-C is: every process of the run is killed, temp dirs are removed, and
    `zerolint verify` exits 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def exit_code(exc: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP: what a shell reports for a process the signal ended."""
    return 128 + getattr(exc, "signum", signal.SIGINT)


@contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM, SIGHUP and SIGINT into `Interrupted` for the duration (main thread only; a no-op elsewhere).
    Only the first signal raises: a second Ctrl-C must not cut short the killing of the run's processes."""
    stopping: list[int] = []

    def handler(signum, frame):
        if stopping:  # already stopping: let the cleanup (bounded: kill_run's grace) finish
            return
        stopping.append(signum)
        raise Interrupted(signum)

    previous = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: leave signals alone
        pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def ephemeral_range() -> tuple[int, int]:
    """The ports the kernel hands out for outgoing connections and bind(0) (Linux: ip_local_port_range)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            low, high = (int(x) for x in f.read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default; other systems use a range above it (49152-65535)


def free_port(avoid: Collection[int] = ()) -> int:
    """A port for MASTER_PORT that nothing listens on, outside the ephemeral range and not in `avoid` (the ports of
    runs still going). A port from the ephemeral range (bind to port 0) can be taken, between this check and the
    child's bind, by any outgoing connection on the machine, the gloo/NCCL sockets of other runs included: with
    several configs side by side that happened (EADDRINUSE in 12 of 404 runs on an H200 with 6 jobs). Ports below
    the range are only ever taken by a process that binds them by number. The scan starts at a place derived from
    our pid, so that two zerolint processes do not try the same ports in the same order."""
    low = 10000
    high = min(ephemeral_range()[0], 65536)
    span = high - low
    if span > 100:
        start = (os.getpid() * 7919) % span
        for i in range(200):
            port = low + (start + i * 97) % span
            if port in avoid:
                continue
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # no room below the range: let the kernel pick
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def detect_gpus() -> tuple[int, str | None]:
    """(number of visible NVIDIA GPUs, the first one's name) without importing torch."""
    names: list[str] = []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30)
        if out.returncode == 0:
            names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError):
        names = []
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None:
        visible = [x for x in cvd.split(",") if x.strip() and x.strip() != "-1"]
        names = names[: len(visible)]
    return len(names), (names[0] if names else None)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def needed_ops(plan: Plan, accelerator: str) -> list[str]:
    """The DeepSpeed ops the run will load (opplan.py), built before the clock starts."""
    from .opplan import planned_ops

    return planned_ops(plan.config, accelerator, plan.client_optimizer)


def child_env(plan: Plan | None, opts: RunOptions, run_id: str, port: int | None) -> dict:
    env = sandbox.scrubbed(os.environ)  # an allow-list: no secrets, no user PYTHONPATH, no HOME (sandbox.py)
    pin(env)  # torch's op loader finds verify's ninja first, the one the up-to-date check asked (toolchain.py)
    env.update(MULTICAST_OFF)
    env.update(MONITORS_OFFLINE)
    env["ZEROLINT_VERIFY_RUN"] = run_id
    env[PARENT_VAR] = str(os.getpid())
    env["PYTHONUNBUFFERED"] = "1"
    env["DS_ACCELERATOR"] = opts.accelerator
    env["TORCH_EXTENSIONS_DIR"] = opts.extensions_dir
    arch = normalize_arch_list(env.get("TORCH_CUDA_ARCH_LIST"))
    if arch is not None:
        env["TORCH_CUDA_ARCH_LIST"] = arch
    # Make sure the child imports this zerolint (installed or not).
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if opts.nodes is None:  # this host's parent builds what a run stops at (opguard.py); other hosts build their own
        from .opguard import GUARD_VAR

        env[GUARD_VAR] = "1"
        env.update(LOOPBACK_ONLY)  # every rank is on this host: their sockets need no other interface
    if opts.nodes is not None:
        env.update(opts.nodes.task_env)  # Slurm: this task's rank (launch.slurm_env); the launchers set their own
    elif opts.world_size == 1:
        env.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": "0", "WORLD_SIZE": "1",
                    "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1", **ONE_NODE})
    return env


LIFELINE = "zerolint.verify.lifeline"  # `python -m LIFELINE MODULE ARGS`: MODULE, tied to zerolint


def command(opts: RunOptions, spec_path: str, out_dir: str, port: int | None) -> list[str]:
    child = [LIFELINE, "zerolint.verify.child", "--spec", spec_path, "--out", out_dir]
    if opts.nodes is not None and opts.nodes.launcher == "slurm":  # this task is one rank, its variables set
        return [opts.python, "-m", LIFELINE, "zerolint.verify.launch", "rank", "--spec", spec_path, "--out", out_dir]
    if opts.nodes is not None:
        return nodes_command(opts.nodes, opts.python, LIFELINE, spec_path, out_dir, port)
    if opts.world_size == 1:
        return [opts.python, "-m", *child]
    if opts.launcher == "deepspeed":
        return [opts.python, "-m", LIFELINE, "deepspeed.launcher.runner", "--num_gpus", str(opts.world_size),
                "--master_port", str(port), "--module", *child]
    return [opts.python, "-m", LIFELINE, "torch.distributed.run", "--standalone", "--nproc_per_node",
            str(opts.world_size), "-m", *child]


# -- a run ----------------------------------------------------------------------------------------------------------

def _read_json(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _tail(path: str, n: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _phases(out_dir: str, rank: int = 0) -> list[str]:
    try:
        with open(os.path.join(out_dir, f"progress-rank{rank}.jsonl"), encoding="utf-8") as f:
            return [json.loads(x)["phase"] for x in f if x.strip()]
    except (OSError, ValueError, KeyError):
        return []


def spec_of(plan: Plan, accelerator: str) -> dict:
    return {
        "config": plan.config, "model": plan.model.to_json(), "steps": plan.steps,
        "client_optimizer": plan.client_optimizer, "client_optimizer_args": plan.client_optimizer_args,
        "accelerator": accelerator, "fp16": plan.enabled("fp16") and not plan.enabled("bf16"),
        "zero_stage": plan.zero_stage, "hf": plan.hf,
    }


def run_plan(plan: Plan, opts: RunOptions) -> dict:
    """Run the plan in a child process tree; return the run record (see docs/verify.md). The ops it needs should
    be built first (zerolint/verify/ops.py); a run that still reaches one that is not built stops there
    (opguard.py), the op is built under `opts.build_timeout`, and the config runs again (`op_stops` in the record)."""
    from .ops import after_stops, build_stopped, is_built

    stops: list[dict] = []
    while True:
        run_id = uuid.uuid4().hex[:16]
        work = opts.keep_dir or tempfile.mkdtemp(prefix="zerolint-verify-")
        try:
            rec = _run_in(plan, opts, run_id, work, [op for op in needed_ops(plan, opts.accelerator)
                                                     if not is_built(opts.extensions_dir, op)])
        finally:
            if opts.keep_dir is None:
                shutil.rmtree(work, ignore_errors=True)
        if rec.get("status") != "needs-op":
            break
        stop = build_stopped(rec, opts.extensions_dir, opts.accelerator, opts.build_timeout,
                             opts.progress or (lambda s: None), opts.note, opts.cleanup, stops)
        stops.append(stop)
        if not stop["rerun"]:
            break
    return after_stops(rec, stops)


def _run_in(plan: Plan, opts: RunOptions, run_id: str, work: str, pending: list[str]) -> dict:
    os.makedirs(work, exist_ok=True)
    out_dir, tmp = os.path.join(work, "out"), os.path.join(work, "tmp")
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(tmp, exist_ok=True)
    spec_path = os.path.join(work, "spec.json")
    with open(spec_path, "w", encoding="utf-8") as f:
        json.dump(spec_of(plan, opts.accelerator), f, indent=1)
    log_path = os.path.join(work, "child.log")
    say = opts.progress or (lambda s: None)

    before = cache.built_ops(opts.extensions_dir)
    if pending:
        say(f"DeepSpeed JIT-builds {', '.join(pending)} inside this run (the build phase did not), cached in "
            f"{opts.extensions_dir}")

    record: dict = {"run_id": run_id, "world_size": opts.world_size, "accelerator": opts.accelerator,
                    "launcher": opts.launcher if opts.world_size > 1 else "single", "timeout_s": opts.timeout,
                    "jit_pending": pending}
    if opts.nodes is not None:
        record.update(world_size=opts.nodes.world_size, launcher=opts.nodes.launcher, nodes=opts.nodes.to_json())
    if opts.keep_dir is not None:
        record["workdir"] = work
    for attempt in range(2 if opts.nodes is None else 1):  # other nodes cannot follow a retry on another port
        port = free_port() if (opts.world_size == 1 or opts.launcher == "deepspeed") else None
        cmd = command(opts, spec_path, out_dir, port)
        record["command"] = cmd
        for name in os.listdir(out_dir):
            os.remove(os.path.join(out_dir, name))
        env = child_env(plan, opts, run_id, port)
        env["TMPDIR"] = tmp  # torchelastic's and DeepSpeed's temp dirs go into the run's directory, removed with it
        env[CLEANUP_VAR] = os.pathsep.join(((work,) if opts.keep_dir is None else ()) + tuple(opts.cleanup))
        t0 = time.monotonic()
        status = _launch(cmd, env, log_path, out_dir, opts, say, record)
        record["wall_s"] = round(time.monotonic() - t0, 2)
        if status == "retry" and attempt == 0:
            say("port already in use: retrying with another port")
            continue
        break
    record["jit_built"] = sorted(cache.built_ops(opts.extensions_dir) - before)
    record["leftover_pids"] = processes_of(run_id)
    if opts.accelerator == "cpu":  # DeepSpeed's shm_comm never unlinks its segment (procs.remove_shm_buffers)
        for addr, ports in shm_names(record, port if opts.world_size == 1 and opts.nodes is None else None).items():
            remove_shm_buffers(addr, ports)
    if record["status"] not in ("pass", "skip"):
        record["log_tail"] = _tail(log_path)
    return record


def _launch(cmd, env, log_path, out_dir, opts: RunOptions, say, record: dict) -> str:
    with open(log_path, "ab") as log:
        try:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, cwd=os.path.dirname(out_dir))
        except OSError as e:
            record.update(status="crash", phase="launch", error={"type": type(e).__name__, "message": str(e)})
            return "crash"
        seen, deadline = 0, time.monotonic() + opts.timeout
        try:
            while proc.poll() is None:
                phases = _phases(out_dir)
                for phase in phases[seen:]:
                    say(phase)
                seen = len(phases)
                if time.monotonic() > deadline:
                    phases = _phases(out_dir)
                    left = kill_run(proc, record["run_id"])
                    record.update(status="timeout", phase=phases[-1] if phases else "launch",
                                  leftover_after_kill=left)
                    return "timeout"
                time.sleep(0.2)
        except KeyboardInterrupt:
            kill_run(proc, record["run_id"])
            raise
        rc = proc.returncode
    # Anything the run started that outlived it (a worker, a compiler) goes too.
    if processes_of(record["run_id"]):
        kill_run(None, record["run_id"])
    record["returncode"] = rc
    if opts.nodes is not None:
        return _aggregate_nodes(record, out_dir, rc, log_path)
    ranks = []
    for r in range(opts.world_size):
        res = _read_json(os.path.join(out_dir, f"result-rank{r}.json"))
        if res is not None:
            ranks.append(res)
    return _aggregate(record, ranks, rc, log_path)


def shm_names(record: dict, port: int | None) -> dict[str, set[str]]:
    """{MASTER_ADDR: {MASTER_PORT, ...}} of a finished run's ranks (child.py writes them), and of the single rank's
    own port when it wrote nothing: what DeepSpeed's shm_comm named its /dev/shm segments after."""
    out: dict[str, set[str]] = {}
    for item in record.get("shm") or []:
        addr, _, p = item.rpartition(":")
        out.setdefault(addr, set()).add(p)
    if port is not None:
        out.setdefault("127.0.0.1", set()).add(str(port))
    return out


def _local_files(out_dir: str, kind: str) -> dict[int, dict]:
    """{rank: kind-rank<R>.json} for the ranks that ran on this node."""
    found = {}
    for name in sorted(os.listdir(out_dir)):
        stem = name[len(kind) + 5:-5] if name.startswith(f"{kind}-rank") and name.endswith(".json") else ""
        if stem.isdigit():
            data = _read_json(os.path.join(out_dir, name))
            if isinstance(data, dict):
                found[int(stem)] = data
    return found


def _aggregate_nodes(record: dict, out_dir: str, rc: int, log_path: str) -> str:
    """A multi-node run seen from this node: the other nodes' result files are on their hosts. Rank 0's result
    decides when rank 0 ran here; else this node's ranks do, and the record says so (`nodes.verdict_from`)."""
    results, where = _local_files(out_dir, "result"), _local_files(out_dir, "node")
    local = sorted(results)
    nodes = record["nodes"]
    nodes["local_ranks"] = local
    nodes["hosts"] = nodes.get("hosts") or sorted({w.get("host") for w in where.values() if w.get("host")})
    if where:  # the launcher's view (launch.py run_rank): processes per node and this node's rank
        first = where[min(where)]
        if "local_world_size" in first:
            nodes["procs_per_node"] = first["local_world_size"]
        if "group_rank" in first:  # the launcher's node rank (torchrun's c10d assigns its own, whatever --node-rank)
            nodes["node_rank"] = first["group_rank"]
    record["world_size"] = next((r["world_size"] for r in results.values() if r.get("world_size")),
                                record["world_size"])
    nodes["world_size"] = record["world_size"]
    nodes["verdict_from"] = ("rank 0" if 0 in results else
                             f"this node's ranks {local} (rank 0 ran on another node)" if local else "none")
    ordered = ([results[0]] if 0 in results else []) + [results[r] for r in local if r != 0]
    # Ranks this node should have: torchrun starts --gpus here, a Slurm task one; the deepspeed launcher and srun
    # place ranks on hosts of their choosing, so what ran here is all there is to count.
    expected = {"torchrun": record["nodes"]["procs_per_node"], "slurm": 1}.get(nodes["launcher"], len(local))
    status = _aggregate(record, ordered, rc, log_path, expected=expected)
    if not ordered and status == "crash" and nodes["launcher"] in ("deepspeed", "srun"):
        record["error"]["message"] += (" on this host: rank 0 runs on the first host of the hostfile (deepspeed) or "
                                       "of the allocation (srun); run zerolint verify there")
    return status


def _aggregate(record: dict, ranks: list[dict], rc: int, log_path: str, expected: int | None = None) -> str:
    if not ranks:
        tail = _tail(log_path)
        if "EADDRINUSE" in tail or "address already in use" in tail.lower():
            record.update(status="crash", phase="launch")
            return "retry"
        record.update(status="crash", phase="launch" if rc != 0 else "unknown",
                      error={"type": "ChildExited", "message": f"the verify child exited with code {rc} without "
                                                                f"writing a result"})
        return "crash"
    failed = [r for r in ranks if r.get("status") == "fail"]
    stopped = [r for r in ranks if r.get("status") == "needs-op"]
    r0 = next((r for r in ranks if r.get("rank") == 0), ranks[0])
    if stopped:  # an op would have been built inside the clock (opguard.py): the caller builds it and runs again
        s = stopped[0]
        record.update(status="needs-op", op=s.get("op"), why=s.get("why"), phase=s.get("phase"),
                      stopped_rank=s.get("rank"))
    elif failed:
        f = failed[0]
        msg = (f.get("error") or {}).get("message", "")
        if "EADDRINUSE" in msg or "address already in use" in msg.lower():
            record.update(status="crash", phase=f.get("phase"))
            return "retry"
        record.update(status="fail", phase=f.get("phase"), error=f.get("error"), failed_rank=f.get("rank"))
    elif all(r.get("status") == "skip" for r in ranks):
        record.update(status="skip", reason=r0.get("reason"))
    elif len(ranks) < (record["world_size"] if expected is None else expected):
        expected = record["world_size"] if expected is None else expected
        record.update(status="crash", phase="unknown", error={
            "type": "ChildExited", "message": f"only {len(ranks)} of {expected} ranks wrote a result "
                                              f"{'on this node ' if 'nodes' in record else ''}(exit code {rc})"})
    else:
        record["status"] = "pass"
    record["facts"] = r0.get("facts", {})
    record["versions"] = r0.get("versions", {})
    record["device_name"] = r0.get("device_name")
    record["losses"] = r0.get("losses")
    record["skipped_steps"] = r0.get("skipped_steps")
    record["estimates"] = r0.get("estimates")
    record["timings"] = r0.get("timings", {})
    record["ops_loaded"] = sorted({op for r in ranks for op in (r.get("ops_loaded") or [])})
    record["listening"] = sorted({s for r in ranks for s in (r.get("listening") or [])})
    record["shm"] = sorted({f"{r['master_addr']}:{r['master_port']}" for r in ranks
                            if r.get("master_addr") and r.get("master_port")})
    if r0.get("hf") is not None:  # the real HF path: the config HF handed DeepSpeed (hf_child.py)
        record["hf"] = r0["hf"]
    mem: dict = {}
    for r in ranks:
        for k, v in (r.get("memory") or {}).items():
            if isinstance(v, (int, float)):
                mem[k] = max(mem.get(k, 0), v)
    record["memory"] = mem
    record["ranks"] = [{"rank": r.get("rank"), "status": r.get("status"), "memory": r.get("memory"),
                        "timings": r.get("timings")} for r in ranks]
    return record["status"]
