"""No op build inside a run's clock: the child side (imported only in verify's children, where torch and DeepSpeed
are).

Every DeepSpeed op is loaded through `OpBuilder.load` (deepspeed/ops/op_builder/builder.py), which JIT-builds it
with torch.utils.cpp_extension when no prebuilt one is installed. That build belongs to the build phase, under
`--build-timeout` with progress (zerolint/verify/ops.py), never to the run's `--timeout`. `install()` wraps, in the
child (and in the warm server, before it forks):

- `OpBuilder.load`: every op the run asks for is recorded (`loaded()`: the result's `ops_loaded`), so a test can
  check the op plan against what DeepSpeed really loaded;
- torch's `_run_ninja_build`: before ninja runs in an op's build directory, the same ninja is asked, with a dry
  run (toolchain.dry_run, which leaves the directory as it was), whether it has work to do. If so, the build would
  happen inside the run: `OpNotBuilt` stops the run instead, and the parent builds the op in its build phase and
  runs the config again (runner.py, warm.py);
- torch's `FileBaton.wait`: a run that would wait for another process's build of the op (the lock in its
  directory) stops the same way, so that a lock wait is never inside the clock either. torch takes that lock on
  every load, built or not, to ask ninja; a guarded holder never builds (it stops instead), so a lock released
  within LOCK_GRACE_S was only such a check (two runs loading one op at once: the pool's warm-ups): the waiter
  then asks ninja itself, holding the lock, and goes on when the op is current.

The stop is armed only where the parent can build (GUARD_VAR, set by runner.child_env for runs on this host: the
single child, the warm runner's forks, torchrun's local ranks); a rank another launcher starts on another host
builds what it lacks itself, as DeepSpeed does, since nobody there could build it for it.

`OpNotBuilt` is a BaseException: DeepSpeed's own `except Exception` fallbacks must not swallow it and run the
config down another path than the user's run would take.
"""

from __future__ import annotations

import os
import time

GUARD_VAR = "ZEROLINT_VERIFY_OP_GUARD"
LOCK_GRACE_S = 10.0  # a lock held longer than this is a build (a no-op check takes well under a second)
_LOADED: list[str] = []  # this process's loads, in order (a fork starts from the server's, which loads none)


class OpNotBuilt(BaseException):
    """The run reached an op that would be built (or waited for) inside its clock."""

    def __init__(self, op: str, why: str) -> None:
        super().__init__(f"{op}: {why}")
        self.op, self.why = op, why


def loaded() -> list[str]:
    return list(dict.fromkeys(_LOADED))


def _op_of(build_directory: str) -> str:
    return os.path.basename(os.path.normpath(build_directory))


def _stop_unless_current(build_directory: str) -> None:
    """OpNotBuilt unless the op in `build_directory` is current to the ninja torch runs, on this process's PATH."""
    from .toolchain import dry_run

    if dry_run(build_directory, pin_path=False) is not True:
        built = any(n.endswith(".so") for n in os.listdir(build_directory))
        raise OpNotBuilt(_op_of(build_directory), "out of date (a source, a header or its build command changed "
                         "since it was built)" if built else "not built yet")


def install() -> None:
    """Wrap the op loader (once per process; a fork inherits the wrapped one)."""
    from deepspeed.ops.op_builder.builder import OpBuilder
    from torch.utils import cpp_extension, file_baton

    if getattr(OpBuilder.load, "_zerolint_guard", False):
        return
    real_load, real_ninja, real_wait = OpBuilder.load, cpp_extension._run_ninja_build, file_baton.FileBaton.wait

    def load(self, *args, **kwargs):
        _LOADED.append(str(getattr(self, "name", "") or type(self).__name__))
        return real_load(self, *args, **kwargs)

    def run_ninja_build(build_directory, *args, **kwargs):
        if os.environ.get(GUARD_VAR) != "1":
            return real_ninja(build_directory, *args, **kwargs)
        _stop_unless_current(build_directory)
        return real_ninja(build_directory, *args, **kwargs)

    def wait(self, *args, **kwargs):
        if os.environ.get(GUARD_VAR) != "1":
            return real_wait(self, *args, **kwargs)
        build_directory = os.path.dirname(self.lock_file_path)
        deadline = time.monotonic() + LOCK_GRACE_S
        while time.monotonic() < deadline:
            mine = file_baton.FileBaton(self.lock_file_path)
            if mine.try_acquire():  # the holder is gone: was it a check or a build? ask ninja, holding the lock
                try:
                    _stop_unless_current(build_directory)
                finally:
                    mine.release()
                return None  # current: torch imports the built op, as after its own wait
            time.sleep(0.05)
        raise OpNotBuilt(_op_of(build_directory), "another process is building it (its lock is held)")

    load._zerolint_guard = True  # type: ignore[attr-defined]  # a marker on the wrapper, on purpose
    OpBuilder.load = load
    cpp_extension._run_ninja_build = run_ninja_build
    file_baton.FileBaton.wait = wait
