"""Every process a verify run (or an op build) started, found by the run id in its environment, and killing them all.

runner.py and ops.py both end their children through here (they import this module, never each other's cleanup).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time


def processes_of(run_id: str) -> list[int]:
    """Every live process whose environment carries this run's id (Linux /proc; empty elsewhere)."""
    return processes_with("ZEROLINT_VERIFY_RUN", run_id, skip_self=True)


def processes_with(var: str, value: str, skip_self: bool) -> list[int]:
    """Pids of the live processes whose environment has `var=value` (Linux /proc; empty elsewhere)."""
    marker = f"{var}={value}".encode()
    out = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for d in entries:
        if not d.isdigit() or (skip_self and int(d) == os.getpid()):
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if marker in f.read().split(b"\0"):
                    out.append(int(d))
        except OSError:
            continue
    return out


def _signal_all(pids: list[int], sig: int, own_pgid: int) -> None:
    groups = set()
    for pid in pids:
        try:
            groups.add(os.getpgid(pid))
        except OSError:
            pass
    for g in groups - {own_pgid}:
        try:
            os.killpg(g, sig)
        except OSError:
            pass
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def kill_run(proc: subprocess.Popen | None, run_id: str, grace: float = 5.0) -> list[int]:
    """SIGTERM every process of the run (and their groups), wait `grace`, SIGKILL what is left. Returns the pids
    that were still alive after SIGKILL (should be empty)."""
    own = os.getpgid(0)
    pids = processes_of(run_id)
    if proc is not None and proc.poll() is None and proc.pid not in pids:
        pids.append(proc.pid)
    if pids:
        _signal_all(pids, signal.SIGTERM, own)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if proc is not None:
            proc.poll()
        if not processes_of(run_id) and (proc is None or proc.poll() is not None):
            break
        time.sleep(0.1)
    left = processes_of(run_id)
    if left or (proc is not None and proc.poll() is None):
        _signal_all(left + ([proc.pid] if proc is not None and proc.poll() is None else []), signal.SIGKILL, own)
    if proc is not None:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    time.sleep(0.05)
    return processes_of(run_id)
