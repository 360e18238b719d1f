"""The warm runner's server process: `python -m zerolint.verify.lifeline zerolint.verify.forkserver REQ_FD EVT_FD`.

It imports torch and DeepSpeed once, never touches the GPU (no CUDA call before a fork: a CUDA context does not
survive fork, so a child would fail with "CUDA initialization error"), and then forks one child per config spec.
Each child runs the ordinary child body (zerolint/verify/child.py `Child.run`) in isolation:

- its own session and process group (setsid), its own working directory and temp dir, its own MASTER_PORT and
  run id: the allow-listed environment the parent built for that config (runner.child_env), replacing ours;
- it dies with this server (PR_SET_PDEATHSIG) and with zerolint (a watch on zerolint's pid, lifeline.watch);
- it ends with os._exit, so nothing of the server (atexit, buffered stdio) runs twice.

A crash (a signal, os._exit), a hang or a CUDA error in one child ends that process only: the server holds no
state a child can change (fork copies memory), and the next config gets a fresh fork of the untouched server.

A pooled child (`warm`) isolates the same way, then warms up before its config is known (child.warm_up: the CUDA
context, the first kernels, the process group and its first collectives) and waits; `go` hands it its config, and
its clock starts there. Each child still runs one config only.

Protocol, JSON lines on two pipes the parent (zerolint/verify/warm.py) passes in:
  requests  {"op": "run", "id", "spec", "out", "work", "env"} | {"op": "warm", "id", "out", "work", "env"}
            | {"op": "go", "id", "spec"} | {"op": "kill", "id"}
  events    {"event": "ready", "import_s", ...} | {"event": "started", "id", "pid"}
            | {"event": "exit", "id", "rc", "signal"} | {"event": "error", "message"}
End of the request pipe: every child is killed and the server exits.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time

KILL_GRACE_S = 5.0  # SIGTERM, then SIGKILL this much later (as procs.kill_run)
WARM_UP_FAILED = 71  # a pooled child's exit code when its warm-up raised (warm.py runs its config afresh)
WARM_UP_NEEDS_OP = 72  # ... when its warm-up stopped at an op that was not built yet (warm.py warms another)
# Test-only failures, named by the spec the parent builds (runner.spec_of never copies a config's keys into the
# spec, so a config cannot set this): how the tests make a child segfault, exit without a result, or hang.
TEST_FAILURES = ("segfault", "exit", "hang")
# What deepspeed.initialize and the first steps import lazily (measured: 1,500+ modules on a CPU run, 2.5-5 s of a
# 2-core machine per config): imported once here instead of in every child. None of them initialises CUDA (checked
# after the imports: torch.cuda.is_initialized()). Best effort: a module missing in this DeepSpeed is skipped.
PRELOAD = (
    "torch.utils.cpp_extension",  # the op loader (and setuptools/distutils under it)
    "torch._dynamo",  # DeepSpeed's @torch.compile decorators (muon, superoffload) import it on first use
    "deepspeed.ops.op_builder.all_ops",
    "deepspeed.runtime.engine",
    "deepspeed.runtime.zero.stage_1_and_2",
    "deepspeed.runtime.zero.stage3",
    "deepspeed.runtime.zero.partition_parameters",
    "deepspeed.runtime.zero.muon.muon_optimizer",
    "deepspeed.runtime.superoffload.superoffload_stage3",
    "deepspeed.module_inject.auto_ep_layer",
    "deepspeed.runtime.bf16_optimizer",
    "deepspeed.runtime.fp16.fused_optimizer",
    "deepspeed.runtime.lr_schedules",
    "deepspeed.ops.adam",
    "zerolint.verify.child",
    "zerolint.verify.model",
)
# With a config the real HF Trainer / Accelerate run (hf_child.py: `--preload-hf`): their modules too.
PRELOAD_HF = ("transformers", "transformers.trainer", "transformers.integrations.deepspeed", "accelerate",
              "zerolint.verify.hf_child")


class Server:
    def __init__(self, req_fd: int, evt_fd: int) -> None:
        self.req_fd, self.evt_fd = req_fd, evt_fd
        self.children: dict[int, str] = {}  # pid -> job id
        self.run_ids: dict[str, str] = {}  # job id -> run id (grandchildren carry it in their environment)
        self.kill_at: dict[int, float] = {}  # pid -> when SIGKILL follows the SIGTERM
        self.spec_w: dict[str, int] = {}  # job id -> the write end of a pooled child's spec pipe (until "go")
        self.buf = b""

    def send(self, event: dict) -> None:
        data = (json.dumps(event) + "\n").encode()
        while data:
            n = os.write(self.evt_fd, data)
            data = data[n:]

    # -- the loop -------------------------------------------------------------------------------------------------
    def serve(self) -> None:
        while True:
            ready, _, _ = select.select([self.req_fd], [], [], 0.05)
            if ready:
                chunk = os.read(self.req_fd, 65536)
                if not chunk:  # the parent closed the pipe (or died): stop every child, then ourselves
                    self.stop_all()
                    return
                self.buf += chunk
                while b"\n" in self.buf:
                    line, self.buf = self.buf.split(b"\n", 1)
                    if line.strip():
                        self.handle(json.loads(line))
            self.reap()
            self.escalate()

    def handle(self, req: dict) -> None:
        if req.get("op") in ("run", "warm"):
            spec_r = spec_w = -1
            if req["op"] == "warm":
                spec_r, spec_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                if spec_w >= 0:
                    os.close(spec_w)
                run_child(req, self.req_fd, self.evt_fd, spec_r, tuple(self.spec_w.values()))  # never returns
            self.children[pid] = req["id"]
            self.run_ids[req["id"]] = req["env"].get("ZEROLINT_VERIFY_RUN", "")
            if spec_r >= 0:
                os.close(spec_r)
                self.spec_w[req["id"]] = spec_w
            self.send({"event": "started", "id": req["id"], "pid": pid})
        elif req.get("op") == "go":
            w = self.spec_w.pop(req["id"], -1)
            if w >= 0:
                data = (json.dumps(req["spec"]) + "\n").encode()
                try:
                    while data:
                        data = data[os.write(w, data):]
                except OSError:  # the child is gone: its exit event says so
                    pass
                os.close(w)
        elif req.get("op") == "kill":
            for pid, job in list(self.children.items()):
                if job == req["id"]:
                    self.terminate(pid)

    def terminate(self, pid: int) -> None:
        """SIGTERM the child's process group and everything carrying its run id; SIGKILL follows (escalate)."""
        self._signal(pid, signal.SIGTERM)
        self.kill_at.setdefault(pid, time.monotonic() + KILL_GRACE_S)

    def _signal(self, pid: int, sig: int) -> None:
        from .procs import processes_of

        # The child is ours and not yet reaped, so its pid (= its process group, setsid) cannot have been reused.
        for target in (lambda: os.killpg(pid, sig), lambda: os.kill(pid, sig)):
            try:
                target()
            except OSError:
                pass
        run_id = self.run_ids.get(self.children.get(pid, ""), "")
        for other in processes_of(run_id) if run_id else []:  # what it exec'd: ninja, compilers, workers
            try:
                os.kill(other, sig)
            except OSError:
                pass

    def escalate(self) -> None:
        now = time.monotonic()
        for pid, when in list(self.kill_at.items()):
            if pid in self.children and now >= when:
                self._signal(pid, signal.SIGKILL)
                del self.kill_at[pid]

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            job = self.children.pop(pid, None)
            self.kill_at.pop(pid, None)
            if job is None:
                continue
            w = self.spec_w.pop(job, -1)  # a pooled child that ended before its config came
            if w >= 0:
                os.close(w)
            # Anything the child left behind in its process group goes with it.
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
            self.send({"event": "exit", "id": job, "rc": rc, "signal": sig})

    def stop_all(self) -> None:
        for pid in list(self.children):
            self.terminate(pid)
        deadline = time.monotonic() + KILL_GRACE_S + 2
        while self.children and time.monotonic() < deadline:
            self.reap()
            self.escalate()
            time.sleep(0.05)


def run_child(req: dict, req_fd: int, evt_fd: int, spec_fd: int = -1, others: tuple[int, ...] = ()) -> None:
    """In the forked child: isolate, then run the ordinary child body; never returns. A pooled child (`spec_fd`)
    warms up first and reads its config from `spec_fd`; `others`: other pooled children's pipes, closed here."""
    code = 70
    try:
        os.setsid()
        from .lifeline import PARENT_VAR, set_pdeathsig, watch

        server = os.getppid()
        set_pdeathsig(signal.SIGKILL)
        if os.getppid() != server:
            os._exit(code)
        for fd in (req_fd, evt_fd, *others):
            os.close(fd)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        work = req["work"]
        os.chdir(work)
        os.environ.clear()
        os.environ.update(req["env"])
        os.environ["HOME"] = work  # as child.main does: caches and "~" paths stay in the run's directory
        import tempfile

        tempfile.tempdir = None  # re-read TMPDIR (the run's own) on next use
        log = os.open(os.path.join(work, "child.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        zerolint = os.environ.get(PARENT_VAR, "")
        if zerolint.isdigit():
            watch(int(zerolint))  # threads do not survive fork: the server's watch is not ours
        from . import child

        warmed = None
        if spec_fd >= 0:
            try:
                warmed = child.warm_up(req["env"].get("DS_ACCELERATOR", "cpu"))
            except BaseException as exc:  # noqa: BLE001 - the parent runs its config in a fresh fork instead
                # (warm.py); a warm-up that stopped at an op not built yet (opguard.OpNotBuilt, a BaseException)
                # started before that op's build: the parent warms another child once it is built
                code = WARM_UP_NEEDS_OP if type(exc).__name__ == "OpNotBuilt" else WARM_UP_FAILED
                raise  # (printed to the child's log below)
            with os.fdopen(spec_fd, "rb") as f:
                line = f.readline()
            if not line:  # the server ended, or the job was withdrawn, before its config came
                os._exit(0)
            req = {**req, "spec": json.loads(line)}
        child.T0 = time.monotonic()  # the child's clock starts now, not at the server's import or the warm-up
        spec = req["spec"]
        failure = spec.get("test_failure")
        if failure == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif failure == "exit":
            os._exit(3)
        elif failure == "hang":
            while True:
                time.sleep(1)
        runner = child.Child(spec, req["out"], 0, 0)
        if warmed is not None:
            runner.result["timings"].update(warmed, pooled=True)
        code = runner.run()
    except BaseException:  # noqa: BLE001 - nothing may return into the server's loop
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def main(argv: list[str]) -> int:
    req_fd, evt_fd = int(argv[0]), int(argv[1])
    preload = PRELOAD + (PRELOAD_HF if "--preload-hf" in argv[2:] else ())
    server = Server(req_fd, evt_fd)
    t = time.monotonic()
    try:
        import importlib

        from . import cpuinfo_once

        asking = cpuinfo_once.prefetch()  # py-cpuinfo's own process runs while we import
        import deepspeed
        import torch

        for name in preload:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - an optional module of another DeepSpeed version
                pass
        from . import opguard

        opguard.install()  # no op build (or lock wait) inside a run: every fork inherits the guard
        os.umask(0o022)  # op directories torch creates are writable by no one else (cache.check_op_cache)
        cpuinfo_once.settle(asking)  # no thread may be running when we fork
        # Nothing may have created a CUDA context: a fork would inherit a context it cannot use.
        if torch.cuda.is_initialized():
            server.send({"event": "error", "message": "torch initialised CUDA while importing deepspeed; the warm "
                                                      "runner cannot fork after that"})
            return 1
        versions = {"torch": torch.__version__, "deepspeed": deepspeed.__version__}
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which falls back or says why
        server.send({"event": "error", "message": f"{type(exc).__name__}: {exc}"})
        return 1
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    server.send({"event": "ready", "import_s": round(time.monotonic() - t, 3), "versions": versions,
                 "pid": os.getpid()})
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
