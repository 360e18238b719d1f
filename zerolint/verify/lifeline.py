"""Tie a verify process to the `zerolint verify` that started it, so that nothing outlives zerolint, even when
zerolint is killed with SIGKILL (what CI may send on cancel) and cannot clean up.

Two ties, because launchers sit between zerolint and the ranks:
- PR_SET_PDEATHSIG (prctl): the kernel sends SIGTERM to this process when its parent dies (zerolint for the
  single child, the build child and the launcher; torchrun or DeepSpeed's launch for the ranks);
- a watcher thread on zerolint's own pid (ZEROLINT_VERIFY_PARENT, through a pidfd so a reused pid cannot fool it):
  when zerolint is gone, SIGTERM to itself, then SIGKILL if that did not end it.

`python -m zerolint.verify.lifeline MODULE ARGS...` ties itself, then runs MODULE as `python -m MODULE` would:
how the launchers (torch.distributed.run, deepspeed.launcher.runner) are started.
"""

from __future__ import annotations

import os
import runpy
import select
import signal
import sys
import threading
import time

PARENT_VAR = "ZEROLINT_VERIFY_PARENT"
PR_SET_PDEATHSIG = 1
KILL_AFTER_S = 10.0


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


def watch(pid: int) -> threading.Thread:
    """End this process (SIGTERM, then SIGKILL) when process `pid` exits."""
    def run() -> None:
        _wait_for_exit(pid)
        _end_self()

    t = threading.Thread(target=run, name="zerolint-lifeline", daemon=True)
    t.start()
    return t


def tie_to_parent() -> None:
    """Call first thing in every process verify starts."""
    parent = os.getppid()
    set_pdeathsig(signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before prctl took effect
        _end_self()
    pid = os.environ.get(PARENT_VAR, "")
    if pid.isdigit() and int(pid) != os.getpid():
        watch(int(pid))


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: python -m zerolint.verify.lifeline MODULE [ARGS...]")
    tie_to_parent()
    sys.argv = argv[:]
    runpy.run_module(argv[0], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
