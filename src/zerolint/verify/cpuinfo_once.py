"""Ask py-cpuinfo once per process tree instead of once per call.

DeepSpeed asks `cpuinfo.get_cpu_info()` for the CPU's vendor and SIMD flags each time it loads a C++ op (twice:
`cpu_arch`, `simd_width`) and again in `DeepSpeedCPUAdam.__init__`; py-cpuinfo answers every call by starting a
Python process of its own (`python cpuinfo.py --json`), ~1.2 s each on the 2-core CI machine. A config with CPU
optimizer offload paid three of them, ~3.5 s of a run that otherwise takes ~2 s. The answer describes the machine,
which does not change under a run, so the first answer is kept and each caller gets its own copy of it. DeepSpeed's
code is unchanged: only where the (identical) answer comes from.

`remember()` installs the memo (the verify child calls it first: a cold run asks once, not three times);
`prefetch()` asks in a thread while the fork server imports torch, and `settle()` waits for it before the first
fork, so every forked child finds the answer already there.
"""

from __future__ import annotations

import copy
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


class _Memo:
    """cpuinfo.get_cpu_info, answered once; a failure is not kept (the next call asks again, as before)."""

    def __init__(self, ask) -> None:
        self.answer: dict | None
        self.ask, self.answer, self.lock = ask, None, threading.Lock()
        self.asked = 0  # how often py-cpuinfo itself was asked (a fork inherits the server's count)

    def __call__(self) -> dict:
        with self.lock:
            if self.answer is None:
                self.asked += 1
                self.answer = self.ask()
            return copy.deepcopy(self.answer)


def _module() -> ModuleType | None:
    try:
        import cpuinfo
    except ImportError:  # DeepSpeed falls back to lscpu itself
        return None
    return cpuinfo


def remember() -> _Memo | None:
    """Install the memo on the cpuinfo module (idempotent); None when py-cpuinfo is not installed."""
    module = _module()
    if module is None:
        return None
    current = module.get_cpu_info
    if isinstance(current, _Memo):
        return current
    memo = _Memo(current)
    setattr(module, "get_cpu_info", memo)  # a module's attribute, by name: ModuleType declares none
    return memo


def asked() -> int:
    """How often this process (or the server it was forked from) really asked py-cpuinfo; 0 without the memo."""
    module = _module()
    memo = getattr(module, "get_cpu_info", None)
    return memo.asked if isinstance(memo, _Memo) else 0


def prefetch() -> threading.Thread | None:
    """Start asking in the background; `settle` the thread before forking (a fork must not copy a running thread)."""
    memo = remember()
    if memo is None:
        return None
    thread = threading.Thread(target=_ask_quietly, args=(memo,), name="zerolint-cpuinfo", daemon=True)
    thread.start()
    return thread


def settle(thread: threading.Thread | None) -> None:
    if thread is not None:
        thread.join()


def _ask_quietly(memo: _Memo) -> None:
    try:
        memo()
    except Exception:  # noqa: BLE001 - DeepSpeed's own call will meet (and report) the same failure
        pass
