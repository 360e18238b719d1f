"""Where verify keeps things: results keyed by (config, DeepSpeed, torch, device kind, world size, options), and
the JIT-built DeepSpeed ops (TORCH_EXTENSIONS_DIR) so the 40-75 s builds are paid once per machine.

A cached result is a verdict, so a record that is not ours must never be read (a planted PASS record once turned
a failing config green): each record holds its key and is used only when the key inside matches; the key covers
zerolint's own sources, Python, torch (with its CUDA build) and the GPU driver as well as the job; a cache
directory that others can write to, or that is not ours, is ignored with a notice, and a record that is a symlink,
or writable by others, is never opened as one."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..model.versions import installed_version

CACHE_FORMAT = 2  # 2: records are {"format", "key", "record"}; the key covers sources, Python, CUDA, driver


def cache_dir() -> Path:
    """$ZEROLINT_CACHE_DIR, else $XDG_CACHE_HOME/zerolint, else ~/.cache/zerolint."""
    env = os.environ.get("ZEROLINT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "zerolint"


def package_version(name: str) -> str | None:
    """An installed package's version from its metadata: no import (the parent never imports torch/deepspeed)."""
    return installed_version(name)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", text).strip("-")[:80]


def op_cache_name(device_kind: str) -> str:
    """The op cache's directory name for this installation: Python, torch, DeepSpeed, the device kind, and a hash of
    the toolchain and install paths (toolchain.identity), since every build names its venv's paths: two
    installations with the same versions get two caches instead of rebuilding over each other."""
    from .toolchain import digest

    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    return (f"{py}-torch{package_version('torch')}-ds{package_version('deepspeed')}-{_slug(device_kind)}-"
            f"{digest()}")


def extensions_dir(device_kind: str, op_cache: str | None = None) -> str:
    """Where verify's op builds live (TORCH_EXTENSIONS_DIR of its children): `<op_cache>/<op_cache_name>` with
    `--op-cache DIR` (the directory CI keeps between runs); else an existing TORCH_EXTENSIONS_DIR, as it is (the
    user's own choice, which DeepSpeed uses too); else `<cache>/torch_extensions/<op_cache_name>`."""
    if op_cache:
        return os.path.join(os.path.abspath(op_cache), op_cache_name(device_kind))
    env = os.environ.get("TORCH_EXTENSIONS_DIR")
    if env:
        return env
    return str(cache_dir() / "torch_extensions" / op_cache_name(device_kind))


class OpCacheRefused(Exception):
    """The op cache holds a directory or a library that someone else could have written: DeepSpeed would load it."""


def check_op_cache(ext_dir: str) -> None:
    """Raise OpCacheRefused unless the op cache can be trusted with code: DeepSpeed loads every `<op>.so` it finds
    there, so the directory, each op's directory and every file in them must be yours and writable by no one else
    (group or others), and none may be a symlink. A missing cache is fine (it is created private)."""
    try:
        st = os.lstat(ext_dir)
    except FileNotFoundError:
        return
    except OSError as e:
        raise OpCacheRefused(f"op cache {ext_dir}: {e.strerror}") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise OpCacheRefused(f"op cache {ext_dir}: not a directory (a symlink or a file)")
    problems = []
    why = _untrusted(st)
    if why:
        problems.append(f"{ext_dir}: {why}")
    try:
        entries = list(os.scandir(ext_dir))
    except OSError as e:
        raise OpCacheRefused(f"op cache {ext_dir}: {e.strerror}") from None
    for entry in entries:
        for path in [entry.path] + (_files(entry.path) if entry.is_dir(follow_symlinks=False) else []):
            try:
                est = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(est.st_mode):
                problems.append(f"{path}: a symlink")
            else:
                why = _untrusted(est)
                if why:
                    problems.append(f"{path}: {why}")
        if len(problems) > 3:
            break
    if problems:
        raise OpCacheRefused(f"op cache {ext_dir} refused: DeepSpeed would load code that someone else could have "
                             f"written ({'; '.join(problems[:3])}); chmod -R go-w it, or use a private "
                             "--op-cache DIR")


def _files(directory: str) -> list[str]:
    try:
        return [e.path for e in os.scandir(directory)]
    except OSError:
        return []


def built_ops(ext_dir: str) -> set[str]:
    """Names of the ops already built in an extensions directory (<dir>/<op>/<op>.so)."""
    out = set()
    try:
        for entry in os.scandir(ext_dir):
            if entry.is_dir() and os.path.exists(os.path.join(entry.path, f"{entry.name}.so")):
                out.add(entry.name)
    except OSError:
        pass
    return out


# -- the result cache -------------------------------------------------------------------------------------------

def _notice(text: str) -> None:
    print(f"zerolint verify: {text}", file=sys.stderr, flush=True)


@lru_cache(maxsize=1)
def sources_digest() -> str:
    """sha256 over every module and data file of the installed zerolint package (rules, view, project settings,
    verify, schemas and rule cases): a result is only as good as the code that planned, ran and judged it, and a
    rule change must not be answered with a verdict an older rule made. Hashed once per process (about 1 MB)."""
    root = Path(__file__).resolve().parent.parent  # the zerolint package
    h = hashlib.sha256()
    files = [p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".json", ".toml")
             and "__pycache__" not in p.parts]
    for path in sorted(files):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"<unreadable>")
        h.update(b"\0")
    return h.hexdigest()


@lru_cache(maxsize=1)
def torch_build() -> str | None:
    """torch/version.py's text (version, CUDA / ROCm build, git revision), read without importing torch."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("torch")
        for loc in (spec.submodule_search_locations or []) if spec else []:
            path = os.path.join(loc, "version.py")
            if os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    return f.read()
    except (ImportError, ValueError, OSError):
        pass
    return None


@lru_cache(maxsize=4)
def gpu_driver(device_kind: str) -> str | None:
    """The NVIDIA driver version(s) for a GPU run (nvidia-smi); None on CPU."""
    if not device_kind.startswith("cuda"):
        return None
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def fingerprint(device_kind: str) -> dict:
    """What, besides the job, a result depends on: zerolint's sources, Python, torch's build, the GPU driver."""
    build = torch_build()
    return {"zerolint_sources": sources_digest(), "python": sys.version, "executable": sys.executable,
            "torch_build": hashlib.sha256(build.encode()).hexdigest() if build is not None else None,
            "driver": gpu_driver(device_kind)}


def result_key(payload: dict) -> str:
    data = json.dumps({"format": CACHE_FORMAT, **payload, "env": fingerprint(str(payload.get("device", "")))},
                      sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()


def _untrusted(st: os.stat_result) -> str | None:
    """Why a file or directory with this stat cannot be trusted for verdicts, or None."""
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"owned by uid {st.st_uid}, not by you"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = "others" if st.st_mode & stat.S_IWOTH else "its group"
        return f"writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def trusted_folder(notice: Callable[[str], None] = _notice) -> Path | None:
    """<cache>/verify when it and <cache> are ours and writable by no one else; None (with a notice) otherwise.
    A missing folder is fine: store() creates it private."""
    base = cache_dir()
    folder = base / "verify"
    for path in (base, folder):
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        except OSError as e:
            notice(f"result cache {path} ignored: {e.strerror}")
            return None
        if not stat.S_ISDIR(st.st_mode):
            notice(f"result cache {path} ignored: not a directory")
            return None
        why = _untrusted(st)
        if why:
            notice(f"result cache {path} ignored: {why}; every run is verified afresh (chmod go-w it, or set "
                   "ZEROLINT_CACHE_DIR to a private directory)")
            return None
    return folder


def load(key: str, notice: Callable[[str], None] = _notice) -> dict | None:
    """The run record stored under `key`, or None: no record, an untrusted folder or file, a symlink, or a record
    whose own key is not `key` (a planted or stale file under the right name)."""
    folder = trusted_folder(notice)
    if folder is None:
        return None
    path = folder / f"{key}.json"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        notice(f"cached result {path} ignored: {'a symlink' if os.path.islink(path) else e.strerror}")
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        why = "not a regular file" if not stat.S_ISREG(st.st_mode) else _untrusted(st)
        if why:
            notice(f"cached result {path} ignored: {why}")
            return None
        try:
            data = json.loads(f.read(16 * 1024 * 1024).decode("utf-8"))
        except (OSError, ValueError):
            return None
    if not (isinstance(data, dict) and data.get("format") == CACHE_FORMAT and data.get("key") == key
            and isinstance(data.get("record"), dict)):
        if isinstance(data, dict) and data.get("format") == CACHE_FORMAT:
            notice(f"cached result {path} ignored: the key recorded inside is not its name")
        return None
    return data["record"]


def store(key: str, record: dict, notice: Callable[[str], None] = _notice) -> None:
    """Write the record with its key, privately (0600 in a 0700 folder), atomically, never through a symlink."""
    if trusted_folder(notice) is None:
        return
    folder = cache_dir() / "verify"
    tmp = folder / f".{key}.{os.getpid()}.tmp"
    try:
        os.makedirs(folder.parent, mode=0o700, exist_ok=True)  # mode applies to the two folders that are checked
        folder.mkdir(mode=0o700, exist_ok=True)
        if trusted_folder(lambda _: None) is None:  # created by someone else meanwhile
            return
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"format": CACHE_FORMAT, "key": key, "record": record}, f, default=str)
        os.replace(tmp, folder / f"{key}.json")
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass  # a cache that cannot be written is not an error
