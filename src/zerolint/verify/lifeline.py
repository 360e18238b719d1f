"""Tie a verify process to the `zerolint verify` that started it, so that nothing outlives zerolint, even when
zerolint is killed with SIGKILL (what CI may send on cancel) and cannot clean up.

Two ties, because launchers sit between zerolint and the ranks:
- PR_SET_PDEATHSIG (prctl): the kernel sends SIGTERM to this process when its parent dies (zerolint for the
  single child, the build child and the launcher; torchrun or DeepSpeed's launch for the ranks);
- a watcher thread on zerolint's own pid (ZEROLINT_VERIFY_PARENT, through a pidfd so a reused pid cannot fool it):
  when zerolint is gone, SIGTERM to itself, then SIGKILL if that did not end it.

After a SIGKILL zerolint cannot remove its temp dirs either: zerolint's direct child, when it sees zerolint gone,
starts a detached reaper (`python -m zerolint.verify.lifeline --reap PID DIR...`) that waits until every process
of the run has ended and then removes the dirs zerolint listed in ZEROLINT_VERIFY_CLEANUP (only `zerolint-*`
temp dirs; never a `--keep` dir).

`python -m zerolint.verify.lifeline MODULE ARGS...` ties itself, then runs MODULE as `python -m MODULE` would:
how the child and the launchers (torch.distributed.run, deepspeed.launcher.runner) are started.
"""

from __future__ import annotations

import os
import runpy
import select
import shutil
import signal
import subprocess
import sys
import threading
import time

PARENT_VAR = "ZEROLINT_VERIFY_PARENT"
CLEANUP_VAR = "ZEROLINT_VERIFY_CLEANUP"  # os.pathsep-separated temp dirs of the run
PR_SET_PDEATHSIG = 1
KILL_AFTER_S = 10.0
REAP_WAIT_S = 60.0


def set_pdeathsig(sig: int = signal.SIGTERM) -> bool:
    """Ask the kernel for `sig` when our parent dies (Linux only; False elsewhere)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _wait_for_exit(pid: int) -> None:
    """Return when process `pid` has exited."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):  # no pidfd (old kernel / not Linux): poll
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            except PermissionError:
                pass
            time.sleep(0.5)
    try:
        select.select([fd], [], [])
    finally:
        os.close(fd)


def _end_self() -> None:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(KILL_AFTER_S)
    os.kill(os.getpid(), signal.SIGKILL)


def cleanup_dirs() -> list[str]:
    """The run's temp dirs named in the environment: absolute `zerolint-*` dirs only, whatever else is there."""
    return [d for d in os.environ.get(CLEANUP_VAR, "").split(os.pathsep)
            if os.path.isabs(d) and os.path.basename(d.rstrip("/")).startswith("zerolint-")]


def _start_reaper(pid: int) -> None:
    dirs = cleanup_dirs()
    if not dirs:
        return
    env = {k: v for k, v in os.environ.items() if k not in (PARENT_VAR, CLEANUP_VAR, "ZEROLINT_VERIFY_RUN")}
    try:
        subprocess.Popen([sys.executable, "-m", "zerolint.verify.lifeline", "--reap", str(pid), *dirs], env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, cwd="/")
    except OSError:
        pass


def _marked(pid: int) -> list[int]:
    from .procs import processes_with

    return processes_with(PARENT_VAR, str(pid), skip_self=False)


def reap(pid: int, dirs: list[str]) -> None:
    """Wait (bounded) until no process of zerolint `pid`'s run is left, then remove its temp dirs."""
    deadline = time.monotonic() + REAP_WAIT_S
    while _marked(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    for d in dirs:
        if os.path.isabs(d) and os.path.basename(d.rstrip("/")).startswith("zerolint-"):
            shutil.rmtree(d, ignore_errors=True)


def watch(pid: int, reaper: bool = False) -> threading.Thread:
    """End this process (SIGTERM, then SIGKILL) when process `pid` exits; first start the reaper if asked."""
    def run() -> None:
        _wait_for_exit(pid)
        if reaper:
            _start_reaper(pid)
        _end_self()

    t = threading.Thread(target=run, name="zerolint-lifeline", daemon=True)
    t.start()
    return t


def tie_to_parent() -> None:
    """Call first thing in every process verify starts."""
    parent = os.getppid()
    pid = os.environ.get(PARENT_VAR, "")
    zerolint = int(pid) if pid.isdigit() else None
    # zerolint's direct child with temp dirs to reap is ended by its watcher (which starts the reaper first), not
    # by the kernel's signal, which could kill it before the watcher wakes up.
    direct = zerolint == parent and bool(cleanup_dirs())
    if not direct:
        set_pdeathsig(signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before prctl took effect
        _end_self()
    if zerolint is not None and zerolint != os.getpid():
        watch(zerolint, reaper=direct)


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: python -m zerolint.verify.lifeline MODULE [ARGS...]")
    if argv[0] == "--reap" and len(argv) >= 2 and argv[1].isdigit():
        reap(int(argv[1]), argv[2:])
        return
    # DeepSpeed's launcher puts `--local_rank=N` right after the module it runs (launch.py), here before ours:
    # hand it on to the module, which accepts it.
    lead = []
    while argv and argv[0].startswith(("--local_rank", "--local-rank")):
        lead.append(argv.pop(0))
        if "=" not in lead[-1] and argv:
            lead.append(argv.pop(0))
    if not argv:
        sys.exit("usage: python -m zerolint.verify.lifeline MODULE [ARGS...]")
    tie_to_parent()
    sys.argv = [argv[0], *argv[1:], *lead]
    runpy.run_module(argv[0], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
