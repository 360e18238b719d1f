"""The toolchain DeepSpeed's JIT op builds use inside a verify run, pinned so that every step agrees on it.

torch builds an op by running `ninja` found on the child's PATH (torch.utils.cpp_extension `_run_ninja_build`:
`['ninja', '-v']`, `verify_ninja_availability`: `['ninja', '--version']`), with the compiler `CXX` names, else `c++`
on that PATH. Started as `venv/bin/zerolint` without the venv activated, PATH holds the system's ninja (Debian's
1.11) while the venv has pip's (1.13, DeepSpeed's own dependency): an up-to-date check with one and a build with the
other disagree, and ninja, reading a build log another version wrote, deletes it ("starting over"), so the op was
rebuilt inside the next run. Here:

- `ninja()` is the one ninja of a verify: the one beside the interpreter (the venv's, pipx's, the image's), else the
  first on PATH; `pinned_path(env)` puts its directory first on the PATH every child gets (the build child, the
  run, the warm server and its forks), so torch inside the run uses it too;
- `dry_run(build_dir)` asks that ninja, with that PATH, whether an op is current, and never changes what it
  inspects: ninja's own log and deps files are restored byte for byte after the dry run;
- `identity()` names the toolchain and the installation (interpreter, torch and DeepSpeed install paths and builds,
  ninja, compiler): the op cache is keyed by it, so two installations on one machine never rebuild over each other.

Nothing here imports torch or deepspeed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from functools import lru_cache
from typing import Mapping

NINJA_STATE = (".ninja_log", ".ninja_deps")  # what ninja rewrites (or deletes) in a build directory
DRY_RUN_TIMEOUT_S = 30


def bin_dir() -> str:
    """The directory of the running interpreter (a venv's bin/, even when the venv is not activated)."""
    return os.path.dirname(os.path.abspath(sys.executable))


def ninja(path: str | None = None) -> str | None:
    """The ninja a verify uses: beside the interpreter first (DeepSpeed installs pip's `ninja` there), else PATH's."""
    here = os.path.join(bin_dir(), "ninja")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which("ninja", path=path if path is not None else os.environ.get("PATH", os.defpath))


def pinned_path(env: Mapping[str, str]) -> str:
    """`env`'s PATH with the directory of `ninja()` (and the interpreter's) first: what every child of a verify gets,
    so torch's `['ninja', ...]` inside the run finds the same ninja as the up-to-date check."""
    old = env.get("PATH", os.defpath)
    found = ninja(old)
    first = [bin_dir()] + ([os.path.dirname(found)] if found else [])
    parts = list(dict.fromkeys(first + [p for p in old.split(os.pathsep) if p]))
    return os.pathsep.join(parts)


def pin(env: dict[str, str]) -> dict[str, str]:
    """`env` (a child's environment) with its PATH pinned; returned for chaining."""
    env["PATH"] = pinned_path(env)
    return env


def _snapshot(build_dir: str) -> dict[str, bytes | None]:
    state: dict[str, bytes | None] = {}
    for name in NINJA_STATE:
        try:
            with open(os.path.join(build_dir, name), "rb") as f:
                state[name] = f.read()
        except OSError:
            state[name] = None
    return state


def _restore(build_dir: str, state: dict[str, bytes | None]) -> None:
    for name, data in state.items():
        path = os.path.join(build_dir, name)
        if data is None:
            continue
        try:
            with open(path, "rb") as f:
                if f.read() == data:
                    continue
        except OSError:
            pass
        tmp = f"{path}.zerolint-restore.{os.getpid()}"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def dry_run(build_dir: str, env: Mapping[str, str] | None = None, pin_path: bool = True) -> bool | None:
    """ninja's own answer (`ninja -n`: it stats files and compares its log, executes nothing) to whether the op
    built in `build_dir` is current: False when a source, a header or the command changed since (a reinstalled
    torch or DeepSpeed), True when there is no work to do, None when ninja cannot tell (no build.ninja, no
    ninja, an error). The directory's ninja log and deps are left exactly as they were. `pin_path`: the PATH
    pinned as every child of verify gets it; False inside a run, to ask the very ninja torch will run there (a rank
    another launcher started has a PATH of its own)."""
    if not os.path.isfile(os.path.join(build_dir, "build.ninja")):
        return None
    env = dict(os.environ if env is None else env)
    if pin_path:
        env["PATH"] = pinned_path(env)
        exe = ninja(env["PATH"])
    else:  # torch's own lookup: `ninja` on this PATH (cpp_extension._run_ninja_build)
        exe = shutil.which("ninja", path=env.get("PATH", os.defpath))
    if exe is None:
        return None
    state = _snapshot(build_dir)
    try:
        p = subprocess.run([exe, "-C", build_dir, "-n"], capture_output=True, text=True, timeout=DRY_RUN_TIMEOUT_S,
                           stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        _restore(build_dir, state)
    if p.returncode != 0:
        return None
    return "no work to do" in p.stdout


def _version_of(exe: str | None, flag: str = "--version") -> str:
    if not exe:
        return ""
    try:
        p = subprocess.run([exe, flag], capture_output=True, text=True, timeout=DRY_RUN_TIMEOUT_S,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return ""
    return (p.stdout or p.stderr).strip().splitlines()[0] if (p.stdout or p.stderr).strip() else ""


def _package_dir(name: str) -> str:
    try:
        import importlib.util

        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return ""
    locations = list(spec.submodule_search_locations or []) if spec else []
    return os.path.realpath(locations[0]) if locations else ""


def _compiler(path: str) -> str | None:
    cxx = os.environ.get("CXX")
    if cxx:
        return shutil.which(cxx, path=path) or cxx
    return shutil.which("c++", path=path)


@lru_cache(maxsize=1)
def identity() -> dict[str, str]:
    """What an op build depends on besides the op's own sources: the interpreter, where torch and DeepSpeed are
    installed (their paths are in every build command), torch's build, ninja and the compiler."""
    path = pinned_path(os.environ)
    torch_dir = _package_dir("torch")
    build = ""
    if torch_dir:
        try:
            with open(os.path.join(torch_dir, "version.py"), "rb") as f:
                build = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            pass
    exe, cxx = ninja(path), _compiler(path)
    return {"python": os.path.realpath(sys.executable), "prefix": os.path.realpath(sys.prefix),
            "torch": torch_dir, "torch_build": build, "deepspeed": _package_dir("deepspeed"),
            "ninja": os.path.realpath(exe) if exe else "", "ninja_version": _version_of(exe),
            "compiler": os.path.realpath(cxx) if cxx else "", "compiler_version": _version_of(cxx)}


def digest() -> str:
    """A short hash of `identity()`: the last part of the op cache's directory name."""
    import json

    return hashlib.sha256(json.dumps(identity(), sort_keys=True).encode()).hexdigest()[:12]
