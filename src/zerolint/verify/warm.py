"""The warm runner: many single-rank verify runs through one process that imported torch and DeepSpeed once.

zerolint never imports torch or deepspeed; the server (zerolint/verify/forkserver.py) does, once, and forks a child
per config that runs the ordinary child body. What each fork gets is what a cold run's child gets
(zerolint/verify/runner.py): the allow-listed environment (sandbox.py) with its own run id and MASTER_PORT, its own
working and temp directory, its own session, the lifeline (it dies with the server and with zerolint), and the
timeout, which kills its process group and everything carrying its run id. The server itself starts through the
lifeline too, so it dies with zerolint, and its reaper removes the warm runner's temp dirs after a SIGKILL.

    with WarmServer("cpu", ext_dir) as server:
        job = server.submit(spec, timeout=300)    # spec: runner.spec_of(plan, "cpu")
        result = server.wait(job)                 # the child's per-rank result dict (child.py), or a
                                                  # {"status": "crash" | "timeout", ...} one when it wrote none

`run_plans` runs plans side by side (`--jobs`) and returns the runner's record for each (run_plan's shape).
Multi-rank runs (--gpus N > 1) keep the launcher path (runner.run_plan): the server runs single-rank jobs only.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

from . import cache
from .lifeline import CLEANUP_VAR, PARENT_VAR
from .procs import kill_run, processes_of
from .resolve import Plan
from .runner import LIFELINE, RunOptions, _aggregate, _phases, _read_json, _tail, child_env, free_port, spec_of
from .sandbox import scrubbed

START_TIMEOUT_S = 600.0  # importing torch + deepspeed on a loaded 2-core machine can take a minute
KILL_WAIT_S = 15.0  # after asking the server to kill a child: its SIGTERM grace (5 s) and a margin


class WarmError(RuntimeError):
    """The server could not start (torch/deepspeed import failed, CUDA was initialised) or stopped."""


@dataclass
class Job:
    id: str
    run_id: str
    work: str
    out: str
    timeout: float
    progress: Callable[[str], None] | None = None
    port: int = 0  # its MASTER_PORT
    pid: int | None = None
    started: float = field(default_factory=time.monotonic)
    deadline: float = 0.0
    exit: dict | None = None  # the server's exit event
    timed_out: bool = False
    phase_at_timeout: str | None = None
    seen: int = 0
    kill_sent: float | None = None
    pending: list[str] = field(default_factory=list)  # ops still to JIT-build when it started (runner.needed_ops)
    before: set = field(default_factory=set)  # ops built before it started
    pooled: bool = False  # a pooled child, warming up (or warmed) before its config came
    given: bool = True  # its config was handed to it (always, for a child forked for its config)

    @property
    def done(self) -> bool:
        return self.exit is not None


class WarmServer:
    """A fork server with torch and DeepSpeed imported. Not thread-safe: one caller drives it (submit, poll)."""

    def __init__(self, accelerator: str, extensions_dir: str, python: str = sys.executable,
                 cleanup: tuple[str, ...] = (), pool: bool | None = None, preload_hf: bool = False) -> None:
        self.accelerator, self.extensions_dir, self.python = accelerator, extensions_dir, python
        self.cleanup = cleanup
        # Children warmed up before their config comes (forkserver.py): on a GPU each later config then costs
        # what DeepSpeed costs, not a CUDA context, lazy kernel loading and NCCL's first collective. Off on the
        # CPU by default, where there is little to warm and a warming child takes a core from the running one.
        self.pool = accelerator == "cuda" if pool is None else pool
        self.preload_hf = preload_hf  # the server imports transformers and accelerate too (configs they run)
        self.warm_jobs: list[Job] = []  # pooled children not yet given a config, oldest first
        self.run_id = uuid.uuid4().hex[:16]
        self.base = ""
        self.proc: subprocess.Popen | None = None
        self.req_w = self.evt_r = -1
        self.buf = b""
        self.jobs: dict[str, Job] = {}
        self._envs: dict[str, dict] = {}  # job id -> its environment, until it is sent
        self.info: dict = {}

    # -- life -----------------------------------------------------------------------------------------------------
    def start(self, timeout: float = START_TIMEOUT_S) -> dict:
        self.base = tempfile.mkdtemp(prefix="zerolint-warm-")
        env = scrubbed(os.environ)
        opts = RunOptions(accelerator=self.accelerator, extensions_dir=self.extensions_dir)
        env.update({k: v for k, v in child_env(None, opts, self.run_id, 0).items()
                    if k not in ("MASTER_PORT", "MASTER_ADDR", "RANK", "WORLD_SIZE", "LOCAL_RANK",
                                 "LOCAL_WORLD_SIZE")})
        env["HOME"] = self.base
        env["TMPDIR"] = self.base
        # torch.cuda.is_available() through NVML, not the CUDA runtime: no CUDA initialisation before a fork.
        env["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
        env[CLEANUP_VAR] = os.pathsep.join((self.base, *self.cleanup))
        req_r, self.req_w = os.pipe()
        self.evt_r, evt_w = os.pipe()
        log = open(os.path.join(self.base, "server.log"), "ab")
        try:
            self.proc = subprocess.Popen(
                [self.python, "-m", LIFELINE, "zerolint.verify.forkserver", str(req_r), str(evt_w),
                 *(["--preload-hf"] if self.preload_hf else [])], env=env,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, pass_fds=(req_r, evt_w),
                start_new_session=True, cwd=self.base)
        except OSError as e:
            self.close()
            raise WarmError(f"the warm verify server did not start: {e}") from None
        finally:
            log.close()
            os.close(req_r)
            os.close(evt_w)
        deadline = time.monotonic() + timeout
        while not self.info:
            for ev in self._read(0.2):
                if ev.get("event") == "ready":
                    self.info = ev
                elif ev.get("event") == "error":
                    self.close()
                    raise WarmError(f"the warm verify server stopped: {ev.get('message')}")
            if self.proc.poll() is not None and not self.info:
                tail = _tail(os.path.join(self.base, "server.log"), 2000)
                self.close()
                raise WarmError(f"the warm verify server exited (code {self.proc.returncode}): {tail.strip()}")
            if time.monotonic() > deadline and not self.info:
                self.close()
                raise WarmError(f"the warm verify server did not import torch and deepspeed within {timeout:g} s")
        return self.info

    def close(self) -> None:
        """Kill every job still running, stop the server, leave no process and no temp dir behind."""
        if self.req_w >= 0:
            os.close(self.req_w)  # the server kills its children and exits on end of input
            self.req_w = -1
        if self.proc is not None:
            try:
                self.proc.wait(timeout=KILL_WAIT_S)
            except subprocess.TimeoutExpired:
                pass
            kill_run(self.proc, self.run_id)
        for job in self.jobs.values():
            if processes_of(job.run_id):
                kill_run(None, job.run_id)
            self._remove_shm(job)  # a pooled child never given a config made its segment in its warm-up too
        if self.evt_r >= 0:
            os.close(self.evt_r)
            self.evt_r = -1
        if self.base:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> "WarmServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- jobs -----------------------------------------------------------------------------------------------------
    def prewarm(self, n: int = 1) -> None:
        """Keep `n` pooled children warming up (or warm) for configs to come (a no-op without the pool)."""
        while self.pool and self.info and len(self.warm_jobs) < n:
            job = self._new_job(None, START_TIMEOUT_S, None, None)
            job.pooled, job.given = True, False
            self.warm_jobs.append(job)
            self._send({"op": "warm", "id": job.id, "out": job.out, "work": job.work, "env": self._env_of(job)})

    def submit(self, spec: dict, timeout: float, env: dict | None = None,
               progress: Callable[[str], None] | None = None, pooled: bool | None = None) -> Job:
        """Start `spec`: in a pooled child that is warm or warming (its clock starts now), else in a fresh fork.
        `env`: the job's environment (runner.child_env) for a fresh fork; by default one built here, with its own
        run id and a free MASTER_PORT (a pooled child has its own, made when it was started). `pooled`: False for
        a fresh fork even with the pool (the first config: nothing ran that its warm-up could overlap)."""
        if not self.info:
            raise WarmError("the warm verify server is not running")
        if self.pool and (pooled is not False or self.warm_jobs):
            self.prewarm(1)
            job = self.warm_jobs.pop(0)
            job.given, job.progress, job.timeout = True, progress, timeout
            job.started = time.monotonic()
            job.deadline = job.started + timeout
            self._send({"op": "go", "id": job.id, "spec": spec})
            return job
        return self._fork(spec, timeout, env, progress)

    def release_warm(self) -> None:
        """End every pooled child not given a config (the pool is off, or no config will come for them)."""
        for job in self.warm_jobs:
            self._send({"op": "kill", "id": job.id})
            kill_run(None, job.run_id)
            self.forget(job)
        self.warm_jobs = []

    def _new_job(self, spec: dict | None, timeout: float, env: dict | None,
                 progress: Callable[[str], None] | None) -> Job:
        job_id = uuid.uuid4().hex[:12]
        work = tempfile.mkdtemp(prefix="job-", dir=self.base)
        out, tmp = os.path.join(work, "out"), os.path.join(work, "tmp")
        os.makedirs(out)
        os.makedirs(tmp)
        if env is None:
            opts = RunOptions(accelerator=self.accelerator, extensions_dir=self.extensions_dir)
            env = child_env(None, opts, uuid.uuid4().hex[:16], free_port(self.ports_in_use()))
        env = {**env, "TMPDIR": tmp}
        env.pop(CLEANUP_VAR, None)  # the server's reaper cleans the whole warm directory
        job = Job(id=job_id, run_id=env["ZEROLINT_VERIFY_RUN"], work=work, out=out, timeout=timeout,
                  progress=progress, port=int(env.get("MASTER_PORT") or 0))
        job.deadline = time.monotonic() + timeout
        self.jobs[job_id] = job
        self._envs[job_id] = env
        return job

    def _env_of(self, job: Job) -> dict:
        return self._envs.pop(job.id)

    def _fork(self, spec: dict, timeout: float, env: dict | None, progress: Callable[[str], None] | None) -> Job:
        job = self._new_job(spec, timeout, env, progress)
        self._send({"op": "run", "id": job.id, "spec": spec, "out": job.out, "work": job.work,
                    "env": self._env_of(job)})
        return job

    def poll(self, wait: float = 0.2) -> list[Job]:
        """Read the server's events, forward progress lines, kill jobs past their deadline; the jobs that ended."""
        ended = []
        for ev in self._read(wait):
            job = self.jobs.get(ev.get("id", ""))
            if job is None:
                continue
            if ev.get("event") == "started":
                job.pid = ev.get("pid")
            elif ev.get("event") == "exit":
                job.exit = ev
                self._progress(job)
                ended.append(job)
        now = time.monotonic()
        for job in self.jobs.values():
            if job.done:
                continue
            self._progress(job)
            if not job.timed_out and now > job.deadline:
                phases = _phases(job.out)
                job.timed_out, job.phase_at_timeout = True, phases[-1] if phases else "launch"
                job.kill_sent = now
                self._send({"op": "kill", "id": job.id})
            elif job.timed_out and job.kill_sent is not None and now > job.kill_sent + KILL_WAIT_S:
                kill_run(None, job.run_id)  # the server did not answer: end what carries the run id ourselves
                job.exit = {"event": "exit", "id": job.id, "rc": None, "signal": None}
                ended.append(job)
        if self.proc is not None and self.proc.poll() is not None and any(not j.done for j in self.jobs.values()):
            for job in self.jobs.values():
                if not job.done:
                    job.exit = {"event": "exit", "id": job.id, "rc": None, "signal": None, "server_gone": True}
                    ended.append(job)
        for job in [j for j in ended if not j.given]:  # a pooled child that ended while warming: not a config's
            ended.remove(job)
            if job in self.warm_jobs:
                self.warm_jobs.remove(job)
            self.forget(job)
        return ended

    def extend(self, seconds: float) -> None:
        """Move every running job's deadline by `seconds` (the time zerolint spent building an op meanwhile)."""
        for job in self.jobs.values():
            if not job.done:
                job.deadline += seconds

    def ports_in_use(self) -> set[int]:
        """The MASTER_PORTs of the jobs still running: a new job must not get one of them."""
        return {job.port for job in self.jobs.values() if not job.done and job.port}

    def wait(self, job: Job) -> dict:
        """Block until `job` ends; its per-rank result (child.py's result-rank0.json), or a crash/timeout one."""
        while not job.done:
            self.poll()
        return self.result(job)

    def run(self, spec: dict, timeout: float) -> dict:
        return self.wait(self.submit(spec, timeout))

    def result(self, job: Job) -> dict:
        res = _read_json(os.path.join(job.out, "result-rank0.json"))
        if job.timed_out:
            return {"rank": 0, "status": "timeout", "phase": job.phase_at_timeout, "timeout_s": job.timeout}
        if res is not None:
            return res
        ev = job.exit or {}
        how = (f"was killed by signal {ev['signal']}" if ev.get("signal") else
               "was lost with the warm verify server" if ev.get("server_gone") else f"exited with code {ev.get('rc')}")
        return {"rank": 0, "status": "crash", "phase": (_phases(job.out) or ["launch"])[-1],
                "error": {"type": "ChildExited", "message": f"the verify child {how} without writing a result"},
                "log_tail": _tail(os.path.join(job.work, "child.log"))}

    def forget(self, job: Job) -> None:
        """Drop a finished job and its directory (and its shm_comm segment, which DeepSpeed never unlinks)."""
        self.jobs.pop(job.id, None)
        self._remove_shm(job)
        shutil.rmtree(job.work, ignore_errors=True)

    def _remove_shm(self, job: Job) -> None:
        if self.accelerator == "cpu" and job.port:
            from .procs import remove_shm_buffers

            remove_shm_buffers("127.0.0.1", {job.port})

    # -- pipes ----------------------------------------------------------------------------------------------------
    def _send(self, msg: dict) -> None:
        data = (json.dumps(msg) + "\n").encode()
        try:
            while data:
                n = os.write(self.req_w, data)
                data = data[n:]
        except OSError as e:
            raise WarmError(f"the warm verify server stopped: {e}") from None

    def _read(self, wait: float) -> list[dict]:
        if self.evt_r < 0:
            return []
        ready, _, _ = select.select([self.evt_r], [], [], wait)
        if ready:
            chunk = os.read(self.evt_r, 65536)
            self.buf += chunk
        events = []
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return events

    def _progress(self, job: Job) -> None:
        if job.progress is None:
            return
        phases = _phases(job.out)
        for phase in phases[job.seen:]:
            job.progress(phase)
        job.seen = len(phases)


# -- plans, as the runner's records ---------------------------------------------------------------------------------

POOL_AHEAD = 2  # pooled children warming beyond the running ones (a CUDA context each: ~0.5 GiB of the GPU)
WARM_UP_FAILED = 71  # a pooled child's exit code when its warm-up raised (forkserver.run_child)
WARM_UP_NEEDS_OP = 72  # ... when its warm-up stopped at an op not built when it started (forkserver.run_child)


def record_of(server: WarmServer, job: Job, opts: RunOptions, pending: list[str], before: set) -> dict:
    """The runner's record for a finished job (run_plan's shape, docs/verify.md), with `warm: true` (and `pooled:
    true` for a child that was warmed up before its config came)."""
    record: dict = {"run_id": job.run_id, "world_size": 1, "accelerator": opts.accelerator, "launcher": "warm",
                    "timeout_s": job.timeout, "jit_pending": pending, "warm": True, "pooled": job.pooled,
                    "command": ["zerolint.verify.forkserver", f"fork of pid {server.info.get('pid')}"],
                    "wall_s": round(time.monotonic() - job.started, 2)}
    res = server.result(job)
    if res.get("status") == "timeout":
        record.update(status="timeout", phase=res.get("phase"), leftover_after_kill=processes_of(job.run_id))
    elif res.get("status") == "crash":
        record.update(status="crash", phase=res.get("phase"), error=res.get("error"))
    else:
        _aggregate(record, [res], (job.exit or {}).get("rc") or 0, os.path.join(job.work, "child.log"))
    record["jit_built"] = sorted(cache.built_ops(opts.extensions_dir) - before)
    record["leftover_pids"] = processes_of(job.run_id)
    if opts.accelerator == "cpu":  # DeepSpeed's shm_comm never unlinks its segment (procs.remove_shm_buffers)
        from .procs import remove_shm_buffers
        from .runner import shm_names

        for addr, ports in shm_names(record, job.port or None).items():
            remove_shm_buffers(addr, ports)
    if record["status"] not in ("pass", "skip"):
        record["log_tail"] = _tail(os.path.join(job.work, "child.log"))
    return record


def run_plans(server: WarmServer, plans: list[Plan], opts: RunOptions, jobs: int = 1,
              progress: Callable[[int, str], None] | None = None,
              started: Callable[[int], None] | None = None,
              ended: Callable[[int, dict], None] | None = None) -> list[dict]:
    """Run single-rank `plans` through the server, `jobs` at a time; a record per plan, in order. `progress(i,
    phase)` for each stage a plan reaches; `started(i)` when plan i is submitted, `ended(i, record)` when done."""
    from .ops import is_built
    from .runner import needed_ops

    if opts.world_size != 1:
        raise ValueError("the warm runner runs single-rank jobs; several ranks use runner.run_plan")
    from .ops import after_stops, build_stopped

    records: list[dict] = [{} for _ in plans]
    stops: dict[int, list[dict]] = {}  # plan -> the ops its runs stopped at (ops.build_stopped)
    running: dict[str, int] = {}
    records_done = 0
    todo, retried, rewarmed = list(range(len(plans))), set(), set()
    while todo or running:
        while todo and len(running) < max(1, jobs):
            i = todo.pop(0)
            plan = plans[i]
            say = (lambda phase, i=i: progress(i, phase)) if progress else None
            if started:
                started(i)
            pending = [op for op in needed_ops(plan, opts.accelerator) if not is_built(opts.extensions_dir, op)]
            before = cache.built_ops(opts.extensions_dir)
            env = child_env(plan, opts, uuid.uuid4().hex[:16], free_port(server.ports_in_use()))
            job = server.submit(spec_of(plan, opts.accelerator), opts.timeout, env=env, progress=say,
                                pooled=bool(records_done or running))  # the first: a fresh fork, at once
            job.pending, job.before = pending, before
            running[job.id] = i
        if todo:  # the next configs' children warm up while these run (the pool: GPU runs); a warm-up takes
            server.prewarm(min(max(1, jobs) + POOL_AHEAD, len(todo)))  # longer than a short config
        for job in server.poll():
            if job.id not in running:
                continue
            i = running.pop(job.id)
            rec = record_of(server, job, opts, job.pending, job.before)
            server.forget(job)
            if _port_taken(rec) and i not in retried:  # taken between free_port and the bind: once more
                retried.add(i)
                todo.insert(0, i)
                continue
            rc = (job.exit or {}).get("rc")
            if job.pooled and rc == WARM_UP_NEEDS_OP and i not in rewarmed:
                rewarmed.add(i)  # it warmed before an op was built (a cold cache): a child warmed now has it
                todo.insert(0, i)
                continue
            if job.pooled and rc in (WARM_UP_FAILED, WARM_UP_NEEDS_OP) and i not in retried:
                server.pool = False  # the warm-up itself failed (its log has why): fresh forks from now on
                server.release_warm()
                retried.add(i)
                todo.insert(0, i)
                continue
            if rec.get("status") == "needs-op":  # it reached an op that is not built: build it, then run it again
                t = time.monotonic()
                stop = build_stopped(rec, opts.extensions_dir, opts.accelerator, opts.build_timeout,
                                     opts.progress or opts.note or (lambda text: None), opts.note, opts.cleanup,
                                     stops.get(i))
                stops.setdefault(i, []).append(stop)
                server.extend(time.monotonic() - t)  # the others' clocks do not count our build either
                if stop["rerun"]:
                    todo.insert(0, i)
                    continue
            records[i] = after_stops(rec, stops.get(i, []))
            records_done += 1
            if ended:
                ended(i, records[i])
    return records

def _port_taken(rec: dict) -> bool:
    text = ((rec.get("error") or {}).get("message") or "") + (rec.get("log_tail") or "")
    return rec.get("status") in ("crash", "fail") and ("EADDRINUSE" in text or "address already in use" in text.lower())


__all__ = ["WarmServer", "WarmError", "Job", "run_plans", "record_of", "PARENT_VAR"]
