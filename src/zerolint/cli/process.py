"""How a command runs as the `zerolint` process (the click group and the fast `check` path alike): the CLI's GC
thresholds for the call only, and no interpreter teardown for a real `zerolint` process."""

from __future__ import annotations

import gc
import os
import sys

# A command-line run allocates a lot and frees little (modules, rules, then documents kept for the report): with
# the default thresholds the collector runs hundreds of times for nothing, ~3 ms of every start. Cycles are still
# collected, just less often. Only while `main()` runs: importing zerolint.cli changes nothing in the host process.
CLI_GC_THRESHOLDS = (20_000, 20, 100)


def as_cli_process(run):
    """Run a command as the `zerolint` process: the GC thresholds hold for this call only, and a real `zerolint`
    process leaves without the interpreter's teardown (`_leave_now`). Used by the click group and the fast path."""
    before = gc.get_threshold()
    gc.set_threshold(*CLI_GC_THRESHOLDS)
    try:
        return run()
    except SystemExit as e:
        if _is_zerolint_process() and (e.code is None or isinstance(e.code, int)):
            _leave_now(e.code or 0)
        raise
    finally:
        gc.set_threshold(*before)


def _is_zerolint_process() -> bool:
    """The `zerolint` console script or `python -m zerolint`, not a host that calls main() (tests, CliRunner)."""
    argv0 = sys.argv[0] if sys.argv else ""
    return not sys.flags.interactive and (
        os.path.basename(argv0) in ("zerolint", "zerolint.exe", "zerolint-script.py")
        or argv0.endswith(os.path.join("zerolint", "__main__.py")))


def _leave_now(code: int) -> None:
    """End a finished `zerolint` process with os._exit: the interpreter's teardown (freeing every module, rule and
    document one by one) costs ~10 ms of a ~70 ms run and does nothing a finished command needs. Only when the
    output is flushed and no atexit handler is waiting; otherwise returns and the normal exit runs."""
    import atexit

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: let the normal exit report it
        return
    if getattr(atexit, "_ncallbacks", lambda: 1)() == 0:
        os._exit(code)
