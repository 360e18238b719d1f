"""Build locks that die with their owner, for DeepSpeed's JIT-built ops.

torch.utils.cpp_extension builds an op in `<TORCH_EXTENSIONS_DIR>/<op name>/` (`_get_build_directory`; zerolint
always sets TORCH_EXTENSIONS_DIR for its children, so the default `~/.cache/torch_extensions/py311_cpu/` root does
not apply) and guards it with a `FileBaton` on `<op dir>/lock`: the builder creates the file with O_CREAT|O_EXCL,
keeps that descriptor open while it builds, and deletes the file when done; every other process polls until the
file is gone (file_baton.py `wait`), with no limit. A builder that was killed leaves the file behind and every later
load waits forever.

So, before an op is loaded:
- we hold our own lock, `fcntl.flock` on `<op dir>/zerolint-build.lock` (the kernel drops it when the process dies,
  however it dies), with the holder's pid and host written in it: two zerolint builds of one op take turns, and a
  waiting one can say whom it waits for;
- a torch `lock` file that no live process holds open (checked in /proc/*/fd: the FileBaton keeps its descriptor
  for the whole build) was left by a killed build: it is removed, with a notice. One that a live process holds
  (another zerolint, or the user's own training job building the same op) is waited for, saying so.

Nothing here imports torch or deepspeed.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from typing import Callable

TORCH_LOCK = "lock"  # torch.utils.cpp_extension._jit_compile: FileBaton(os.path.join(build_directory, 'lock'))
OUR_LOCK = "zerolint-build.lock"
POLL_S = 0.25


class LockTimeout(Exception):
    """The lock was still held by a live build when the deadline came."""


def op_dir(ext_dir: str, op: str) -> str:
    return os.path.join(ext_dir, op)


def holders(path: str) -> list[int]:
    """Pids of the processes (that we may inspect) with `path` open. Linux /proc; empty where there is none."""
    try:
        target = os.stat(path)
    except OSError:
        return []
    out = []
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return []
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
                out.append(int(pid))
                break
    return out


def _describe(pids: list[int]) -> str:
    names = []
    for pid in pids[:3]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()[:80]
        except OSError:
            cmd = "?"
        names.append(f"pid {pid} ({cmd})")
    return ", ".join(names)


def clear_stale(ext_dir: str, op: str, say: Callable[[str], None], ignore_pid: int | None = None,
                notice: str = "removed a stale build lock left by a killed build") -> bool:
    """Remove `<op dir>/lock` when no live process (but `ignore_pid`) holds it; True if one was removed."""
    path = os.path.join(op_dir(ext_dir, op), TORCH_LOCK)
    if not os.path.lexists(path):
        return False
    if [p for p in holders(path) if p != ignore_pid]:
        return False
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    say(f"{notice}: {path}")
    return True


class BuildLock:
    """Our flock for one op's build directory, held for the build (or load) of that op.

    `acquire` waits for a live holder (zerolint's flock, then torch's `lock` file held open by a live process),
    telling `say` whom it waits for, and removes a torch `lock` nobody holds. `release` (or the process's death)
    lets the next one in.
    """

    def __init__(self, ext_dir: str, op: str, say: Callable[[str], None]) -> None:
        self.ext_dir, self.op, self.say = ext_dir, op, say
        self.dir = op_dir(ext_dir, op)
        self.path = os.path.join(self.dir, OUR_LOCK)
        self.torch_lock = os.path.join(self.dir, TORCH_LOCK)
        self.fd: int | None = None

    def acquire(self, deadline: float) -> None:
        os.makedirs(self.dir, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.path, flags, 0o644)
        try:
            self._flock(fd, deadline)
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "op": self.op,
                                      "since": time.time()}).encode() + b"\n", 0)
            self._torch_lock(deadline)
        except BaseException:
            os.close(fd)  # closing the descriptor drops the flock
            raise
        self.fd = fd

    def _flock(self, fd: int, deadline: float) -> None:
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
            if not told:
                told = True
                self.say(f"waiting for a live build of {self.op} by {self._owner(fd)} (it holds {self.path})")
            if time.monotonic() > deadline:
                raise LockTimeout(f"{self.op}: still built by {self._owner(fd)} ({self.path})")
            time.sleep(POLL_S)

    @staticmethod
    def _owner(fd: int) -> str:
        try:
            info = json.loads(os.pread(fd, 4096, 0).decode("utf-8", "replace") or "{}")
            return f"pid {int(info['pid'])} on {str(info['host'])[:64]}"
        except (OSError, ValueError, KeyError, TypeError):
            return "another zerolint process"

    def _torch_lock(self, deadline: float) -> None:
        told = False
        while os.path.lexists(self.torch_lock):
            live = [p for p in holders(self.torch_lock) if p != os.getpid()]
            if not live:
                clear_stale(self.ext_dir, self.op, self.say, ignore_pid=os.getpid())
                continue
            if not told:
                told = True
                self.say(f"waiting for a live build of {self.op} by {_describe(live)} (it holds {self.torch_lock})")
            if time.monotonic() > deadline:
                raise LockTimeout(f"{self.op}: still built by {_describe(live)} ({self.torch_lock})")
            time.sleep(POLL_S)

    def release(self) -> None:
        """Drop our flock; a torch `lock` that only this process held (a build interrupted in torch's own code
        before its `finally`) goes too."""
        if self.fd is None:
            return
        try:
            clear_stale(self.ext_dir, self.op, self.say, ignore_pid=os.getpid(),
                        notice="removed the build lock of the interrupted build")
        finally:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> "BuildLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
