"""The op build phase of `zerolint verify`: build (or load) the DeepSpeed ops a run needs before the timed run, in
a child of its own, under its own limit (`--build-timeout`), with progress; and `zerolint verify --prepare`.

A first JIT build of cpu_adam takes minutes on a busy 2-core machine: inside the run's `--timeout` it made the
config look slow (or hang) when only the build was. Here the parent (never importing torch or deepspeed) starts
`python -m zerolint.verify.ops --ext DIR --progress FILE OP...`, which imports deepspeed and calls each op
builder's `load()` under a BuildLock (zerolint/verify/locks.py) and appends one JSON line per event to FILE.

The record (`build` in the run record, docs/verify.md): status ok | build-timeout | build-failed, the op in
progress, per-op status (built | cached | unavailable | failed) and seconds, wall_s, notices.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Callable

from .lifeline import CLEANUP_VAR, PARENT_VAR
from .sandbox import scrubbed

# DeepSpeed op name -> the builder class an accelerator's create_op_builder() knows it by.
BUILDERS = {"deepspeed_shm_comm": "ShareMemCommBuilder", "cpu_adam": "CPUAdamBuilder",
            "fused_adam": "FusedAdamBuilder", "async_io": "AsyncIOBuilder", "cpu_adagrad": "CPUAdagradBuilder",
            "cpu_lion": "CPULionBuilder"}
TICK_S = 30.0  # how often a long build says how long it has taken


def is_built(ext_dir: str, op: str) -> bool:
    """An op's library is in its build directory: <op>.so, or <op>_vN.so when torch bumped its version."""
    try:
        names = os.listdir(os.path.join(ext_dir, op))
    except OSError:
        return False
    return any(n == f"{op}.so" or (n.startswith(f"{op}_v") and n.endswith(".so")) for n in names)


def ninja_says_current(build_dir: str) -> bool | None:
    """Whether a built op is current, as the ninja the run will use says (toolchain.dry_run: the same ninja and
    PATH as torch inside the run, its log left as it was): False when a source, a header it includes or its build
    command changed since (a reinstalled torch or DeepSpeed), so that torch's loader would rebuild it inside the
    run's timeout. None when ninja cannot tell (no build.ninja, no ninja, an error)."""
    from .toolchain import dry_run

    return dry_run(build_dir, toolchain_env())


def toolchain_env() -> dict:
    """The environment the build child and every run child get for building and loading ops (sandbox.scrubbed,
    the PATH pinned to verify's ninja: toolchain.py), so that the up-to-date check answers for the run's build."""
    from .resolve import normalize_arch_list
    from .toolchain import pin

    env = pin(scrubbed(os.environ))
    arch = normalize_arch_list(env.get("TORCH_CUDA_ARCH_LIST"))  # as runner.child_env: the same nvcc flags
    if arch is not None:
        env["TORCH_CUDA_ARCH_LIST"] = arch
    return env


def is_current(ext_dir: str, op: str) -> bool:
    """Built, and not out of date as far as ninja can tell."""
    from .locks import op_dir

    return is_built(ext_dir, op) and ninja_says_current(op_dir(ext_dir, op)) is not False


def needs_phase(ext_dir: str, op: str, current: bool | None = None) -> bool:
    """True when the op must go through the build phase: not built yet, out of date (ninja_says_current), or a
    torch `lock` (live or stale) in its directory, which a run would otherwise wait on. `current`: is_current's
    answer when the caller has it already (it runs ninja)."""
    from .locks import TORCH_LOCK, op_dir

    if current is None:
        current = is_current(ext_dir, op)
    return not current or os.path.lexists(os.path.join(op_dir(ext_dir, op), TORCH_LOCK))


# -- the parent side --------------------------------------------------------------------------------------------------

def _events(path: str) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(x) for x in f if x.strip()]
    except (OSError, ValueError):
        return []


def build_ops(ops: list[str], ext_dir: str, accelerator: str, timeout: float, say: Callable[[str], None],
              note: Callable[[str], None] | None = None, python: str = sys.executable,
              cleanup: tuple[str, ...] = (), force: bool = False) -> dict:
    """Build or load `ops` in a child under `timeout` seconds; the build record. Ops already built, with no lock
    in their directory, are not touched (no child at all when that is all of them), unless `force` (a run found
    them not current: the child loads them, which builds what is out of date). `cleanup`: more temp dirs of this
    verify for the child's reaper to remove should zerolint be killed (zerolint/verify/lifeline.py)."""
    from .procs import kill_run, processes_of

    note = note or say
    ops = list(dict.fromkeys(ops))
    current = {op: is_current(ext_dir, op) for op in ops}  # one ninja dry run per op
    todo = [op for op in ops if force or needs_phase(ext_dir, op, current[op])]
    record: dict = {"status": "ok", "ops": {op: {"status": "cached"} for op in ops if op not in todo},
                    "timeout_s": timeout, "wall_s": 0.0, "notices": []}
    if not todo:
        return record
    run_id = uuid.uuid4().hex[:16]
    work = tempfile.mkdtemp(prefix="zerolint-build-")
    progress, log_path = os.path.join(work, "progress.jsonl"), os.path.join(work, "build.log")
    os.makedirs(os.path.join(work, "tmp"))
    # The allow-listed environment of the run's children (sandbox.py), PYTHONPATH only zerolint's own root, and
    # HOME inside the build's directory; the op cache stays where TORCH_EXTENSIONS_DIR says.
    env = {**toolchain_env(), "TORCH_EXTENSIONS_DIR": ext_dir, "DS_ACCELERATOR": accelerator,
           "PYTHONUNBUFFERED": "1", "ZEROLINT_VERIFY_RUN": run_id, PARENT_VAR: str(os.getpid()),
           "TMPDIR": os.path.join(work, "tmp"), "HOME": work, CLEANUP_VAR: os.pathsep.join((work, *cleanup)),
           "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}
    cmd = [python, "-m", "zerolint.verify.ops", "--ext", ext_dir, "--progress", progress, *todo]
    watch = _Watch(record, todo, {op: not current[op] for op in todo}, say, note)
    t0 = time.monotonic()
    proc, seen = None, 0
    try:
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, cwd=work)
            while True:
                done = proc.poll() is not None
                events = _events(progress)
                for ev in events[seen:]:
                    watch.event(ev)
                seen = len(events)
                if done:
                    break
                watch.tick()
                if time.monotonic() - t0 > timeout:
                    kill_run(proc, run_id)
                    op = watch.current or next((o for o in todo if o not in record["ops"]), todo[0])
                    record.update(status="build-timeout", phase=f"build {op}", op=op)
                    break
                time.sleep(0.2)
        if record["status"] == "ok":
            failed = [op for op in todo if record["ops"].get(op, {}).get("status") not in ("built", "cached")]
            if failed:
                op = failed[0]
                record.update(status="build-failed", op=op, phase=f"build {op}", log_tail=_tail(log_path))
                record["ops"].setdefault(op, {"status": "failed", "error": f"the build child exited with code "
                                                                          f"{proc.returncode}"})
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM/SIGHUP turned into one
        for ev in _events(progress)[seen:]:  # what the child had started: "interrupted while building X" says so
            watch.event(ev)
        if proc is not None:
            kill_run(proc, run_id)
        raise
    finally:
        if processes_of(run_id):
            kill_run(None, run_id)
        _sweep(ext_dir, todo, note)
        shutil.rmtree(work, ignore_errors=True)
        record["wall_s"] = round(time.monotonic() - t0, 2)
    return record


MAX_OP_STOPS = 8  # a config that reaches more unbuilt ops than this in a row is reported, not run for ever


def build_stopped(rec: dict, ext_dir: str, accelerator: str, timeout: float, say: Callable[[str], None],
                  note: Callable[[str], None] | None = None, cleanup: tuple[str, ...] = (),
                  earlier: list[dict] | None = None) -> dict:
    """A run stopped at an op that would have been built inside its clock (opguard.py, status `needs-op`): build
    that op here, under `timeout`, and say whether the config should run again (`rerun`). One entry of the record's
    `op_stops`: op, why, phase, build (build_ops' record), rerun."""
    op, why = str(rec.get("op") or "?"), str(rec.get("why") or "")
    earlier = earlier or []
    stop: dict = {"op": op, "why": why, "phase": rec.get("phase"), "rerun": False}
    if any(s["op"] == op for s in earlier) or len(earlier) >= MAX_OP_STOPS:
        stop["build"] = {"status": "build-failed", "op": op, "ops": {}, "notices": [],
                         "error": f"{op} was built, yet the run still found it {why}"}
        return stop
    say(f"the run reached {op} ({why}); it was stopped, so that no build is inside its --timeout: building {op}, "
        "then running the config again")
    stop["build"] = build_ops([op], ext_dir, accelerator, timeout, say, note, cleanup=cleanup, force=True)
    stop["rerun"] = stop["build"]["status"] == "ok"
    return stop


def after_stops(rec: dict, stops: list[dict]) -> dict:
    """The run record once its op stops are settled: the last run's, with `op_stops` listed; when the last stop's
    build did not finish in time, `build-timeout` (the config was not run to the end); when it failed, the failure
    DeepSpeed's own run would meet at that point (its build of the op fails the same way)."""
    if not stops:
        return rec
    rec["op_stops"] = stops
    last = stops[-1]
    if rec.get("status") == "needs-op":
        build = last["build"]
        if build.get("status") == "build-timeout":
            rec.update(status="build-timeout", phase=f"build {last['op']}", build=build)
        else:
            info = (build.get("ops") or {}).get(last["op"], {})
            detail = info.get("error") or build.get("error") or build.get("log_tail", "")[-1500:]
            rec.update(status="fail", phase=last.get("phase") or "initialize", build=build,
                       error={"type": "RuntimeError", "message": f"Error building extension '{last['op']}': "
                                                                 f"{detail}".strip(),
                              "help": "DeepSpeed JIT-builds this op when the run reaches it; the build failed in "
                                      "verify's build phase (the log tail is in build.log_tail)"})
    return rec


class _Watch:
    """Turns the build child's events into the record and progress lines."""

    def __init__(self, record: dict, todo: list[str], fresh: dict[str, bool], say, note) -> None:
        self.record, self.todo, self.fresh, self.say, self.note = record, todo, fresh, say, note
        self.current: str | None = None
        self.started = self.last_tick = time.monotonic()

    def _label(self, op: str) -> str:
        verb = "building" if self.fresh.get(op) else "loading"
        return f"{verb} {op} ({self.todo.index(op) + 1} of {len(self.todo)})"

    def event(self, ev: dict) -> None:
        kind, op = ev.get("event"), ev.get("op")
        if kind == "import":
            self.say("build phase: importing deepspeed")
        elif kind == "start" and op in self.todo:
            self.current, self.started = op, time.monotonic()
            self.last_tick = self.started
            self.say(self._label(op))
        elif kind == "notice":
            self.record["notices"].append(ev.get("message", ""))
            self.note(ev.get("message", ""))
        elif kind in ("built", "cached", "unavailable", "failed") and op in self.todo:
            self.record["ops"][op] = {"status": kind, **{k: v for k, v in ev.items()
                                                         if k in ("seconds", "error")}}
            if kind == "built":
                self.say(f"built {op} in {ev.get('seconds', 0):.0f} s")
            elif kind in ("unavailable", "failed"):
                self.note(f"{op}: {kind}: {str(ev.get('error', ''))[:300]}")
            self.current = None

    def tick(self) -> None:
        now = time.monotonic()
        if self.current is not None and now - self.last_tick >= TICK_S:
            self.say(f"{self._label(self.current)}, {now - self.started:.0f} s")
            self.last_tick = now


def _tail(path: str, n: int = 3000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _sweep(ext_dir: str, ops: list[str], note) -> None:
    """After the build child is gone (even by SIGKILL): no torch lock of ours may stay behind."""
    from .locks import clear_stale

    for op in ops:
        clear_stale(ext_dir, op, note, notice="removed the build lock of the stopped build")


# -- the child side -----------------------------------------------------------------------------------------------

class Stop(BaseException):
    """SIGTERM / SIGHUP / SIGINT in the build child: unwind through every `finally` (torch's own FileBaton
    release and our lock's), after stopping ninja and the compilers."""


def _on_signal(signum, frame) -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)  # once is enough: the cleanup must not be interrupted in turn
    if os.getpgid(0) == os.getpid():  # ninja and the compilers, when the group is ours alone (the parent's setsid)
        try:
            os.killpg(os.getpid(), signal.SIGTERM)
        except OSError:
            pass
    raise Stop(signum)


def _builder(op: str):
    """The accelerator's builder for the op named `op` (its NAME), found among the accelerator's own builder
    classes: an op a run stopped at may be any of them (fused_lamb, quantizer, pin_memory, ...)."""
    import importlib

    from deepspeed.accelerator import get_accelerator

    acc = get_accelerator()
    if op in BUILDERS:
        return acc.create_op_builder(BUILDERS[op])
    try:
        module = importlib.import_module(acc.op_builder_dir())
    except ImportError:
        return None
    for name in sorted(dir(module)):
        cls = getattr(module, name)
        if name.endswith("Builder") and getattr(cls, "NAME", None) == op:
            return acc.create_op_builder(name)
    return None


def _child(ext_dir: str, progress: str, ops: list[str]) -> int:
    from .lifeline import tie_to_parent
    from .locks import BuildLock

    t0 = time.monotonic()

    def emit(event: str, op: str | None = None, **extra) -> None:
        line = json.dumps({"t": round(time.monotonic() - t0, 3), "event": event, "op": op, **extra})
        with open(progress, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _on_signal)
    os.umask(0o022)  # what torch creates in the op cache is writable by no one else (cache.check_op_cache)
    tie_to_parent()
    emit("import")
    from deepspeed.accelerator import get_accelerator

    ok = True
    for op in ops:
        emit("start", op)
        t = time.monotonic()
        was_built = is_current(ext_dir, op)  # an out-of-date op is rebuilt by load(): "built", not "cached"
        # op=op binds this op; the checker cannot infer a lambda with a default
        lock = BuildLock(ext_dir, op, lambda msg, op=op: emit("notice", op, message=msg))  # type: ignore[misc]
        try:
            lock.acquire(deadline=float("inf"))  # the parent's --build-timeout is the limit
            builder = _builder(op)
            if builder is None or getattr(builder, "NAME", None) != op:
                emit("unavailable", op, error=f"{get_accelerator()._name} has no builder for {op}")
                ok = False
                continue
            if not builder.is_compatible(verbose=False):
                emit("unavailable", op, error=str(builder.error_log or "").strip() or "not compatible here")
                ok = False
                continue
            builder.load(verbose=False)
            emit("cached" if was_built else "built", op, seconds=round(time.monotonic() - t, 1))
        except Exception as e:  # noqa: BLE001 - a failed build is reported, and the next op still tried
            emit("failed", op, error=f"{type(e).__name__}: {str(e)[:2000]}", seconds=round(time.monotonic() - t, 1))
            ok = False
        finally:
            lock.release()
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m zerolint.verify.ops")
    ap.add_argument("--ext", required=True)
    ap.add_argument("--progress", required=True)
    ap.add_argument("ops", nargs="+")
    args = ap.parse_args(argv)
    try:
        return _child(args.ext, args.progress, args.ops)
    except Stop as s:
        return 128 + int(s.args[0])


if __name__ == "__main__":
    sys.exit(main())
