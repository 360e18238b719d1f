"""Writing a fixed config back without ever damaging the user's file.

- the new content goes to a temporary file in the same directory (same filesystem), is fsync'ed, gets the
  original's permission bits, and replaces the original with one atomic `os.replace`; the directory is fsync'ed
  after. A crash at any point leaves either the old file or the new one, never a mix (and at worst a stray
  `.<name>.*.zerolint-tmp` file, which is never read as a config and is removed by the next write of that file);
- a read-only file, another user's file, and a file with hard links are not replaced (reported instead); the
  owner, group and extended attributes of the original are kept, or nothing is written;
- a file that changed since it was read (mtime, size or content hash) is not replaced;
- a symlink whose target lies outside the tree being checked (the working directory or the root given on the
  command line) is not followed for writing; a symlink inside it is written through (the link stays a link).

Report files (`write_output`) and reads of configs (`check_read`) follow the same out-of-tree rule; the threat
model is in docs/security.md.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable

from .errors import ZerolintError
from .record import Frozen, Record

# Test hook: called with the temporary file's path after it is written and synced, before the rename.
_before_replace: Callable[[str], None] | None = None


class WriteRefused(Exception):
    """The fixed text was not written; the message says why. The original is untouched."""


class Snapshot(Frozen):
    """What a file looked like when it was read."""

    _fields = ("path", "mtime_ns", "size", "sha256")
    path: str
    mtime_ns: int
    size: int
    sha256: str

    def __init__(self, path: str, mtime_ns: int, size: int, sha256: str) -> None:
        self._set("path", path)
        self._set("mtime_ns", mtime_ns)
        self._set("size", size)
        self._set("sha256", sha256)

    @classmethod
    def of(cls, path: str, data: bytes) -> "Snapshot":
        import hashlib  # here, not at the top: only a fix writes (a check never needs hashlib, ~2 ms to import)

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
    """Replace `path` with `data` atomically (see the module docstring). Everything after the path is checked is
    done relative to a descriptor of its directory, opened one component at a time without following a link: a
    directory swapped for a symlink meanwhile cannot send the write out of the tree (the walk refuses the link, and
    once it holds the descriptor the rename happens in the directory that was checked)."""
    real = check_target(path, roots)
    directory, base = os.path.split(real)
    dfd = _open_dir_nofollow(path, directory or ".")
    try:
        _write_in(dfd, directory, base, path, data, snapshot)
    finally:
        os.close(dfd)


def _open_dir_nofollow(path: str, directory: str) -> int:
    """A descriptor of `directory` (a real path), each component opened relative to the one above it with
    O_NOFOLLOW: raises WriteRefused when one of them is (now) a symlink or not a directory."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    absolute = os.path.abspath(directory)
    fd = os.open(os.sep, flags)
    walked = os.sep
    try:
        for part in [p for p in absolute.split(os.sep) if p]:
            walked = os.path.join(walked, part)
            try:
                nxt = os.open(part, flags, dir_fd=fd)
            except OSError as e:
                raise WriteRefused(f"{path}: {walked} is no longer the directory that was checked "
                                   f"({e.strerror or e}: a symlink swapped in?); not written") from None
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_in(dfd: int, directory: str, base: str, path: str, data: bytes, snapshot: Snapshot | None) -> None:
    try:
        st = os.stat(base, dir_fd=dfd, follow_symlinks=False)
    except OSError as e:
        raise WriteRefused(f"{path}: cannot be checked before writing ({e.strerror or e}); not written") from None
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"{path}: not a regular file (a symlink swapped in?); not written")
    _check_replaceable(path, st, writable=os.access(base, os.W_OK, dir_fd=dfd))
    _remove_stale_temps(dfd, base)
    nofollow = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    tmp = f".{base}.{os.urandom(6).hex()}{TEMP_SUFFIX}"  # a random name, created O_EXCL, mode 0600 for now
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow, 0o600, dir_fd=dfd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            _keep_owner(path, f.fileno(), st)
            os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode))  # after fchown, which may clear set-id bits
            _copy_xattrs(path, dfd, base, f.fileno())
            os.fsync(f.fileno())
        if _before_replace is not None:
            _before_replace(os.path.join(directory, tmp))
        if snapshot is not None:
            _check_unchanged(dfd, base, snapshot)
        os.replace(tmp, base, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except FileNotFoundError:
            pass
        raise
    try:
        os.fsync(dfd)
    except OSError:  # pragma: no cover
        pass


TEMP_SUFFIX = ".zerolint-tmp"
STALE_TEMP_SECONDS = 600  # a temp file this old is a leftover of a killed run (a live write takes milliseconds)


def _check_replaceable(path: str, st: os.stat_result, writable: bool | None = None) -> None:
    """Refuse what a rename over the file would damage: a read-only file (its mode says "do not change me"), another
    user's file (the new file would be ours), a file with hard links (the other names would keep the old text)."""
    if not st.st_mode & 0o222 or not (os.access(path, os.W_OK) if writable is None else writable):
        raise WriteRefused(f"{path}: read-only (mode {stat.S_IMODE(st.st_mode):04o}); not written (make it writable "
                           "to fix it)")
    euid = os.geteuid() if hasattr(os, "geteuid") else st.st_uid
    if euid != 0 and st.st_uid != euid:
        raise WriteRefused(f"{path}: owned by another user (uid {st.st_uid}); replacing it would make it yours; "
                           "not written")
    if st.st_nlink > 1:
        raise WriteRefused(f"{path}: has {st.st_nlink} hard links; replacing it would split them (the other names "
                           "would keep the old text); not written")


def _keep_owner(path: str, fd: int, st: os.stat_result) -> None:
    now = os.fstat(fd)
    if (now.st_uid, now.st_gid) == (st.st_uid, st.st_gid) or not hasattr(os, "fchown"):
        return
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except PermissionError:  # e.g. a group we are not in
        raise WriteRefused(f"{path}: its owner and group ({st.st_uid}:{st.st_gid}) cannot be kept; not written") \
            from None


def _copy_xattrs(path: str, dfd: int, base: str, fd: int) -> None:
    """Extended attributes (ACLs, user.* tags, macOS-style metadata) go to the new file; a file whose attributes
    cannot be kept is not replaced. The SELinux label is the exception: the new file gets its directory's. The
    original is read through a descriptor opened in the checked directory (no link followed)."""
    if not hasattr(os, "listxattr"):
        return
    try:
        src = os.open(base, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), dir_fd=dfd)
    except OSError as e:
        raise WriteRefused(f"{path}: cannot be opened to read its extended attributes ({e.strerror or e}); not "
                           "written") from None
    try:
        try:
            names = os.listxattr(src)
        except OSError as e:
            if e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
                return
            raise WriteRefused(f"{path}: its extended attributes cannot be read ({e.strerror or e}); not written") \
                from None
        for name in names:
            try:
                os.setxattr(fd, name, os.getxattr(src, name))
            except OSError as e:
                if name == "security.selinux":
                    continue
                raise WriteRefused(f"{path}: its extended attribute {name} cannot be kept ({e.strerror or e}); "
                                   "not written") from None
    finally:
        os.close(src)


def _remove_stale_temps(directory: int | str, base: str) -> None:
    """Temp files of this file left by a killed run (SIGKILL runs no cleanup): ours, regular, and older than
    STALE_TEMP_SECONDS. Their names (`.NAME.RANDOM.zerolint-tmp`) are never picked up as configs meanwhile."""
    import time

    prefix, cutoff = f".{base}.", time.time() - STALE_TEMP_SECONDS
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    try:
        with os.scandir(directory) as entries:
            for e in entries:
                if not (e.name.startswith(prefix) and e.name.endswith(TEMP_SUFFIX)):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff and euid in (None, st.st_uid):
                        if isinstance(directory, int):
                            os.unlink(e.name, dir_fd=directory)
                        else:
                            os.unlink(e.path)
                except OSError:
                    pass
    except OSError:
        pass


def _check_unchanged(dfd: int, base: str, snap: Snapshot) -> None:
    import hashlib

    try:
        fd = os.open(base, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), dir_fd=dfd)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            now = f.read()
    except OSError as e:
        raise WriteRefused(f"{snap.path}: cannot be re-read before writing ({e.strerror or e}); not written") from None
    if st.st_mtime_ns != snap.mtime_ns or st.st_size != snap.size or hashlib.sha256(now).hexdigest() != snap.sha256:
        raise WriteRefused(f"{snap.path}: changed since zerolint read it; not written (run again)")


# -- report files (-o, the Action's SARIF, verify's outputs, baselines) ------------------------------------------------

class OutputError(Exception):
    """A report file could not be written (exit code 2); nothing was left at its path."""


def write_output(path: str, text: str | bytes) -> None:
    """Write a report file all or nothing, never through a link: a temporary file is created beside it with
    O_CREAT|O_EXCL|O_NOFOLLOW (relative to a descriptor of the directory, so a directory swapped for a link later
    changes nothing), written, synced and renamed over `path`. A rename replaces a link planted at `path` instead of
    following it, but a link there is refused anyway so that the user hears about it. A path written inside the
    working directory must not reach outside it through a symlinked directory (a PR can commit `reports -> /home`);
    a path the user wrote outside it (`$RUNNER_TEMP/zerolint.sarif`) is the user's choice. Raises OutputError."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    target = os.path.abspath(path)
    directory, name = os.path.split(target)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise OutputError(f"{path}: cannot write ({e.strerror or e})") from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise OutputError(f"{path}: is a symbolic link; zerolint does not write reports through links (remove it "
                          "or choose another path)")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OutputError(f"{path}: exists and is not a regular file")
    if not os.path.isdir(directory):
        raise OutputError(f"{path}: cannot write: the directory {directory} does not exist")
    cwd = os.getcwd()
    real_dir = os.path.realpath(directory)
    if _within(target, cwd) and not _within(real_dir, os.path.realpath(cwd)):
        raise OutputError(f"{path}: its directory is a symbolic link to {real_dir}, outside the working directory; "
                          "not written")
    try:
        dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise OutputError(f"{path}: cannot write ({e.strerror or e})") from None
    tmp = None
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        for _ in range(100):
            candidate = f".{name}.{os.urandom(6).hex()}.zerolint-tmp"
            try:
                fd = os.open(candidate, flags, 0o666, dir_fd=dfd)  # the umask applies, as for any new file
            except FileExistsError:
                continue
            tmp = candidate
            break
        else:  # pragma: no cover - 100 collisions of 48 random bits
            raise OutputError(f"{path}: cannot create a temporary file in {directory}")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if st is not None:  # replacing a report: keep its permission bits
                os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode))
            os.fsync(f.fileno())
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        tmp = None
        try:
            os.fsync(dfd)
        except OSError:  # pragma: no cover - filesystems without directory fsync
            pass
    except OSError as e:
        raise OutputError(f"{path}: cannot write ({e.strerror or e}); nothing was written") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
        os.close(dfd)


# -- reads stay in the tree -------------------------------------------------------------------------------------------

# Pseudo-filesystems: /proc/self/environ is a regular file full of secrets, /dev/stdin a link to a pipe.
NEVER_READ = ("/proc", "/sys", "/dev")


class ReadRefused(Exception):
    """A config path that resolves outside the tree it was found in, or into /proc, /sys or /dev."""


def read_roots(path: str) -> tuple[str, ...]:
    """The tree a config named on the command line may be read from. A path inside the working directory (as
    written, before links are resolved) is held to the working directory: the repository root in CI, so a link a
    pull request commits cannot reach ~/.docker/config.json. A path the user wrote outside it (`/data/ds.json`,
    `../other/ds.json`) is the user's choice and is held to its own directory."""
    cwd = os.getcwd()
    target = os.path.abspath(path)
    if _within(target, cwd) or _within(target, os.path.realpath(cwd)):
        return (os.path.realpath(cwd),)
    return (os.path.realpath(os.path.dirname(target)),)


def check_read(path: str, roots: Iterable[str] | None) -> None:
    """Raise ReadRefused when `path` resolves into /proc, /sys or /dev, or (with `roots`) out of every root."""
    real = os.path.realpath(path)
    for forbidden in NEVER_READ:
        # devices, FIFOs and directories there get read_bytes' own message (what the file is, how to pipe it)
        if _within(real, forbidden) and os.path.isfile(real):
            raise ReadRefused(f"{path}: resolves to {real}; zerolint never reads {forbidden}")
    if roots is not None and not any(_within(real, r) for r in roots):
        raise ReadRefused(f"{path}: resolves to {real}, outside the tree being checked ({', '.join(roots)}); "
                          "not read")


# -- reading a config --------------------------------------------------------------------------------------------

DEFAULT_MAX_DEPTH = 256
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
# Values (keys and array items) parsed before the tolerant parser stops (ZL007): the largest of 150 real configs
# holds 118, and a value costs ~7 µs to parse and up to ~0.1 ms in the rules when each is a finding, so this keeps
# any input under the limits to about a second (issue 22, item 3).
DEFAULT_MAX_VALUES = 10_000


class UnreadableFile(ZerolintError):
    """A file that cannot be read at all (missing, a directory, no permission): exit code 2."""


class Limits(Record):
    """How much a read may take. `roots`: directories every read must resolve into (fsio.read_roots; the CLI sets
    them per file); None: anywhere but /proc, /sys and /dev, which are never read."""

    _fields = ("max_bytes", "max_depth", "roots", "max_values")
    max_bytes: int
    max_depth: int
    roots: tuple[str, ...] | None
    max_values: int

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH,
                 roots: tuple[str, ...] | None = None, max_values: int = DEFAULT_MAX_VALUES) -> None:
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self.roots = roots
        self.max_values = max_values


_NOT_REGULAR = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
                (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_bytes(path: str, limits: Limits) -> bytes:
    """The file's bytes (at most max_bytes + 1, so that an oversized file is detected without reading all of it).
    Only regular files are read: a FIFO without a writer would block forever and /dev/zero never ends, so those are
    refused up front (opened non-blocking, checked with fstat: no race with a file swapped in between). A path that
    resolves out of `limits.roots`, or into /proc, /sys or /dev, is not read (fsio.check_read)."""
    try:
        check_read(path, limits.roots)
    except ReadRefused as e:
        raise UnreadableFile(str(e)) from None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if os.path.islink(path):
            raise UnreadableFile(f"{path}: broken symbolic link (it points to {os.readlink(path)!r}, which does "
                                 "not exist)") from None
        raise UnreadableFile(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UnreadableFile(f"{path}: is a directory") from None
    except PermissionError:
        raise UnreadableFile(f"{path}: permission denied") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnreadableFile(f"{path}: symbolic link loop (the link resolves back to itself)") from None
        raise UnreadableFile(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UnreadableFile(f"{path}: is a directory")
        for test, what in _NOT_REGULAR:
            if test(mode):
                raise UnreadableFile(f"{path}: is {what}, not a regular file; to lint a stream, pipe it to stdin: "
                                     f"zerolint check - < {path}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            return f.read(limits.max_bytes + 1)
    except UnreadableFile:
        raise
    except PermissionError:
        raise UnreadableFile(f"{path}: permission denied") from None
    except OSError as e:
        raise UnreadableFile(f"{path}: cannot be read ({e.strerror or e})") from None
    finally:
        if fd >= 0:
            os.close(fd)


def read_walked(path: str, max_bytes: int) -> bytes | None:
    """The bytes of a file a walk found (at most max_bytes + 1), or None when it is not a regular file now or cannot
    be read. For scans of a tree whose walk never follows a link (project/references.py): the file itself is opened
    without following a link (O_NOFOLLOW), non-blocking (a FIFO swapped in never blocks) and checked with fstat, so
    no realpath per file is needed to stay in the tree; a scan skips what it cannot read instead of failing."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        chunks, left = [], max_bytes + 1
        want = min(left, st.st_size + 1)  # the whole file in one read (a short read of a regular file is its end)
        while left > 0:
            chunk = os.read(fd, want)
            chunks.append(chunk)
            left -= len(chunk)
            if len(chunk) < want:
                break
            want = min(left, 1 << 20)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


# -- files a settings file names ---------------------------------------------------------------------------------

SETTING_MAX_BYTES = {"baseline": 64 * 1024 * 1024, "extend-rules": 1024 * 1024}


class SettingFileRefused(Exception):
    """A file a settings key names that zerolint will not read: outside the tree, not a regular file, too large."""


def settings_tree(directory: str) -> str:
    """The tree a settings file may name files in: the repository it is in (the nearest directory above it that
    holds `.git`), else its own directory."""
    d = os.path.realpath(directory)
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return os.path.realpath(directory)
        d = parent


def read_setting_file(path: str, setting: str, roots: Iterable[str] | None) -> str:
    """The text of a file named by a settings key (`baseline`, `extend-rules`): a regular file inside `roots`
    (never a device, a FIFO, a socket, /proc, or a link out of the tree), at most SETTING_MAX_BYTES, UTF-8.
    Raises SettingFileRefused naming the setting and the path, never the file's content."""
    limit = SETTING_MAX_BYTES.get(setting, DEFAULT_MAX_BYTES)
    try:
        data = read_bytes(path, Limits(max_bytes=limit, roots=tuple(roots) if roots is not None else None))
    except UnreadableFile as e:
        raise SettingFileRefused(f"{setting} = {path!r}: {_reason(str(e), path)}") from None
    if len(data) > limit:
        raise SettingFileRefused(f"{setting} = {path!r}: larger than {limit:,} bytes; not read")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SettingFileRefused(f"{setting} = {path!r}: not UTF-8 text (byte {e.start})") from None


def _reason(message: str, path: str) -> str:
    """read_bytes' message without its leading path (the setting's message names it once)."""
    return message[len(path) + 2:] if message.startswith(path + ": ") else message
