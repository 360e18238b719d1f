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
    out: list[int] = []
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


SHM_DIR = "/dev/shm"
SHM_BUFFER = "deepspeed_allreduce_buffer"  # deepspeed/ops/csrc/cpu/comm/shm.cpp SHM_BUFFER_NAME


def remove_shm_buffers(addr: str, ports: set[int] | set[str]) -> list[str]:
    """DeepSpeed's CPU shared-memory allreduce (shm_comm) creates `/dev/shm/deepspeed_allreduce_buffer_<uid>_<addr>_
    <port>_<rank>` (about 67 MB) for every run and never unlinks it: a few hundred verify runs filled a 24 GB
    /dev/shm and the machine started swapping. After a run, its buffers (its MASTER_ADDR and ports, our uid) that
    no live process still maps are removed; the names removed are returned."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    prefixes = tuple(f"{SHM_BUFFER}_{uid}_{addr}_{port}_" for port in ports if str(port))
    try:
        names = [n for n in os.listdir(SHM_DIR) if prefixes and n.startswith(prefixes)]
    except OSError:
        return []
    if not names:
        return []
    mapped = _mapped_shm()
    removed = []
    for n in names:
        path = os.path.join(SHM_DIR, n)
        if path in mapped:
            continue
        try:
            st = os.lstat(path)
            if st.st_uid == uid:
                os.unlink(path)
                removed.append(n)
        except OSError:
            pass
    return removed


def _mapped_shm() -> set[str]:
    """The /dev/shm files some live process maps (Linux /proc/*/maps)."""
    out: set[str] = set()
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return out
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as f:
                for line in f:
                    at = line.find(SHM_DIR + "/")
                    if at >= 0:
                        out.add(line[at:].strip())
        except OSError:
            continue
    return out
