"""The parent side of the runtime differential's DeepSpeed runs: one `python rt_worker.py` process (torch and
deepspeed imported once, a fork per config); `run_all` streams configs through it and returns what each reached.

A config the worker itself dies on (not its forked child: that is a "crash" verdict the worker reports) restarts
the worker and becomes a "worker-crash" run, so one bad config cannot stop the rest.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
WORKER = HERE / "rt_worker.py"
ROOT = HERE.parents[1]
PHASES = ("parse", "initialize", "step", "ran")  # in order; "timeout" / "crash" / "worker-crash" are not DeepSpeed's


@dataclass
class Run:
    """What DeepSpeed did with one config."""

    phase: str  # "parse" | "initialize" | "step" | "ran" | "timeout" | "crash" | "worker-crash"
    step: int | None = None  # the step that failed, for phase "step"
    error: dict[str, Any] = field(default_factory=dict)  # type, message, where (the innermost DeepSpeed frame)
    facts: dict[str, Any] = field(default_factory=dict)  # verify/child.py engine_facts, when it ran
    client_optimizer: str | None = None
    neutralised: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.phase != "ran"

    def short(self) -> str:
        if self.phase == "ran":
            return "ran 3 steps"
        at = f"step {self.step}" if self.phase == "step" else self.phase
        return f"fails at {at}: {self.error.get('type', '')}: {self.error.get('message', '')[:200]} " \
               f"[{self.error.get('where', '')}]"

    @classmethod
    def from_reply(cls, r: dict) -> "Run":
        return cls(r["phase"], r.get("step"), r.get("error") or {}, r.get("facts") or {}, r.get("client_optimizer"),
                   r.get("neutralised") or [], r.get("seconds", 0.0))

    def to_json(self) -> dict:
        return {"phase": self.phase, "step": self.step, "error": self.error, "facts": self.facts,
                "client_optimizer": self.client_optimizer, "neutralised": self.neutralised, "seconds": self.seconds}


class RuntimeWorker:
    def __init__(self, accelerator: str = "cpu", python: str = sys.executable, timeout: float = 120.0) -> None:
        self.accelerator, self.python, self.timeout = accelerator, python, timeout
        self.proc: subprocess.Popen | None = None
        self.hello: dict = {}

    def __enter__(self) -> "RuntimeWorker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _start(self) -> None:
        env = {**os.environ, "DS_ACCELERATOR": self.accelerator, "PYTHONUTF8": "1", "PYTHONHASHSEED": "0",
               "TORCH_EXTENSIONS_DIR": os.environ.get("TORCH_EXTENSIONS_DIR", str(ROOT / ".cache" /
                                                                                  "torch_extensions"))}
        self.proc = subprocess.Popen([self.python, str(WORKER), "--accelerator", self.accelerator,
                                      "--timeout", str(self.timeout)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     encoding="utf-8", bufsize=1, env=env)
        line = self._get(self._reader(), 300)
        if not isinstance(line, dict) or not line.get("ready"):
            raise RuntimeError("the runtime differential worker did not start (are torch and deepspeed installed?)")
        self.hello = line

    def _reader(self) -> queue.Queue:
        q: queue.Queue = queue.Queue()
        proc = self.proc

        def read() -> None:
            for line in proc.stdout:
                q.put(json.loads(line))
            q.put("worker-crash")

        threading.Thread(target=read, daemon=True).start()
        self._q = q
        return q

    @staticmethod
    def _get(q: queue.Queue, timeout: float):
        try:
            return q.get(timeout=timeout)
        except queue.Empty:
            return "worker-crash"

    def close(self) -> None:
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except Exception:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def run_all(self, datas: list[bytes], while_waiting: Callable[[], None] | None = None,
                progress: Callable[[int], None] | None = None) -> list[Run]:
        """Every config's run, in order. `while_waiting` runs in this thread while the worker works (the zerolint
        side, so that the two use both cores)."""
        results: list[Run | None] = [None] * len(datas)
        i, waited = 0, False
        while i < len(datas):
            if self.proc is None:
                self._start()
            q = self._q
            threading.Thread(target=self._write, args=(range(i, len(datas)), datas), daemon=True).start()
            if not waited and while_waiting is not None:
                waited = True
                while_waiting()
            while i < len(datas):
                item = self._get(q, self.timeout + 60)
                if isinstance(item, dict):
                    results[item["i"]] = Run.from_reply(item)
                    i = item["i"] + 1
                    if progress:
                        progress(i)
                    continue
                results[i] = Run("worker-crash", error={"type": "WORKER-CRASH", "message": "the worker died"})
                i += 1
                self.proc.kill()
                self.proc.wait()
                self.proc = None
                break
        if not waited and while_waiting is not None:
            while_waiting()
        return [r if r is not None else Run("worker-crash") for r in results]

    def _write(self, indices, datas: list[bytes]) -> None:
        proc = self.proc
        try:
            for i in indices:
                proc.stdin.write(json.dumps({"i": i, "b64": base64.b64encode(datas[i]).decode()}) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass
