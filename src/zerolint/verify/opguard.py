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
  directory) stops the same way, so that a lock wait is never inside the clock either.

The stop is armed only where the parent can build (GUARD_VAR, set by runner.child_env for runs on this host: the
single child, the warm runner's forks, torchrun's local ranks); a rank another launcher starts on another host
builds what it lacks itself, as DeepSpeed does, since nobody there could build it for it.

`OpNotBuilt` is a BaseException: DeepSpeed's own `except Exception` fallbacks must not swallow it and run the
config down another path than the user's run would take.
"""

from __future__ import annotations

import os

GUARD_VAR = "ZEROLINT_VERIFY_OP_GUARD"
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
        from .toolchain import dry_run

        if os.environ.get(GUARD_VAR) != "1":
            return real_ninja(build_directory, *args, **kwargs)
        current = dry_run(build_directory, pin_path=False)  # the ninja torch runs next, on this process's PATH
        if current is not True:
            op = _op_of(build_directory)
            built = any(n.endswith(".so") for n in os.listdir(build_directory))
            raise OpNotBuilt(op, "out of date (a source, a header or its build command changed since it was built)"
                             if built else "not built yet")
        return real_ninja(build_directory, *args, **kwargs)

    def wait(self, *args, **kwargs):
        if os.environ.get(GUARD_VAR) == "1" and os.path.exists(self.lock_file_path):
            raise OpNotBuilt(_op_of(os.path.dirname(self.lock_file_path)),
                             "another process is building it (its lock is held)")
        return real_wait(self, *args, **kwargs)

    load._zerolint_guard = True
    OpBuilder.load = load
    cpp_extension._run_ninja_build = run_ninja_build
    file_baton.FileBaton.wait = wait
