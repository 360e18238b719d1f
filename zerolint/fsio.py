"""Writing a fixed config back without ever damaging the user's file.

- the new content goes to a temporary file in the same directory (same filesystem), is fsync'ed, gets the
  original's permission bits, and replaces the original with one atomic `os.replace`; the directory is fsync'ed
  after. A crash at any point leaves either the old file or the new one, never a mix (and at worst a stray
  `.<name>.*.zerolint-tmp` file);
- a file that changed since it was read (mtime, size or content hash) is not replaced;
- a symlink whose target lies outside the tree being checked (the working directory or the root given on the
  command line) is not followed for writing; a symlink inside it is written through (the link stays a link).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from typing import Callable, Iterable

# Test hook: called with the temporary file's path after it is written and synced, before the rename.
_before_replace: Callable[[str], None] | None = None


class WriteRefused(Exception):
    """The fixed text was not written; the message says why. The original is untouched."""


@dataclass(frozen=True)
class Snapshot:
    """What a file looked like when it was read."""

    path: str
    mtime_ns: int
    size: int
    sha256: str

    @classmethod
    def of(cls, path: str, data: bytes) -> "Snapshot":
        st = os.stat(path)
        return cls(path, st.st_mtime_ns, st.st_size, hashlib.sha256(data).hexdigest())


def read_with_snapshot(path: str) -> tuple[bytes, Snapshot]:
    with open(path, "rb") as f:
        data = f.read()
    return data, Snapshot.of(path, data)


def _within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives
        return False


def check_target(path: str, roots: Iterable[str]) -> str:
    """The real path to write for `path`. Raises WriteRefused for a link out of every root, or a non-file."""
    real = os.path.realpath(path)
    if real != os.path.abspath(path):
        allowed = [os.path.realpath(r) for r in roots]
        if not any(_within(real, r) for r in allowed):
            raise WriteRefused(f"{path}: a symlink to {real}, outside the tree being checked; not written")
    if not os.path.isfile(real):
        raise WriteRefused(f"{path}: not a regular file; not written")
    return real


def atomic_write(path: str, data: bytes, snapshot: Snapshot | None = None, roots: Iterable[str] = (".",)) -> None:
    """Replace `path` with `data` atomically (see the module docstring)."""
    real = check_target(path, roots)
    st = os.stat(real)
    directory = os.path.dirname(real) or "."
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(real)}.", suffix=".zerolint-tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode))
            try:
                os.fchown(f.fileno(), st.st_uid, st.st_gid)
            except (PermissionError, AttributeError):  # only root may give a file away; keep our ownership
                pass
            os.fsync(f.fileno())
        if _before_replace is not None:
            _before_replace(tmp)
        if snapshot is not None:
            _check_unchanged(real, snapshot)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dfd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(dfd)


def _check_unchanged(real: str, snap: Snapshot) -> None:
    try:
        st = os.stat(real)
        with open(real, "rb") as f:
            now = f.read()
    except OSError as e:
        raise WriteRefused(f"{snap.path}: cannot be re-read before writing ({e.strerror or e}); not written") from None
    if st.st_mtime_ns != snap.mtime_ns or st.st_size != snap.size or hashlib.sha256(now).hexdigest() != snap.sha256:
        raise WriteRefused(f"{snap.path}: changed since zerolint read it; not written (run again)")
