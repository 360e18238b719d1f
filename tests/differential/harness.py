"""Differential agreement between zerolint and DeepSpeed 0.19.8's own config parse.

For each config text:
  (a) DeepSpeed: `DeepSpeedConfig(path)` in one long-lived worker process (ds_worker.py), world size 1;
      verdict accepted / rejected (exception type, message, the DeepSpeed line that raised).
  (b) zerolint: `lint_bytes(..., Settings(target="deepspeed", world_size=1, deepspeed_version="0.19.8"))`.

Agreement, per case:
  - MISSED: DeepSpeed rejects the config and zerolint reports no diagnostic of severity error (ZL000, zerolint's own
    crash, does not count as catching anything).
  - FALSE CLAIM: DeepSpeed accepts the config and a zerolint diagnostic claims DeepSpeed rejects it at parse. A
    diagnostic claims that when its `fails_at` is "parse" (the machine-readable field rules set), or, for a rule
    that does not set the field, when its message says so in words (PARSE_CLAIM below) — so a new rule that
    forgets the field is still held to what it says.
  - Findings about failures at initialize or at the first step, and silent no-ops, are not contradicted by a parse
    that passes.
Known disagreements that are DeepSpeed's oddities (not zerolint's bugs) live in allowlist.toml, each with a reason.
"""

from __future__ import annotations

import base64
import json
import math
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
WORKER = HERE / "ds_worker.py"
ALLOWLIST = HERE / "allowlist.toml"
DEEPSPEED_VERSION = "0.19.8"

# What a message says when it claims DeepSpeed rejects the config while parsing it ("fails at parse", "rejects the
# config at parse", "refuses the file", ...). Used only for diagnostics whose rule does not set `fails_at`.
PARSE_CLAIM = re.compile(
    r"\b(?:fails?|rejects?|refuses?|raises?|crash(?:es)?)\b[^.;]{0,80}?\bat parse\b"
    r"|\b(?:rejects|refuses) the (?:config|file)\b"
    r"|\bat parse\b[^.;]{0,40}\b(?:error|rejected|fails)\b",
    re.IGNORECASE,
)


# -- DeepSpeed's verdict --------------------------------------------------------------------------------------------
@dataclass
class Verdict:
    outcome: str  # "accepted" | "rejected" | "timeout" | "worker-crash"
    type: str = ""
    message: str = ""
    where: str = ""
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def rejected(self) -> bool:
        return self.outcome != "accepted"

    def short(self) -> str:
        if self.outcome == "accepted":
            return "accepted"
        return f"{self.type}: {self.message[:160]} [{self.where}]"


class DeepSpeedWorker:
    """One `python ds_worker.py` process; `parse_all` streams configs through it (restarting it after a hang or a
    crash, which become verdicts of their own)."""

    def __init__(self, python: str = sys.executable, timeout: float = 60.0, source: str | None = None) -> None:
        self.python = python
        self.timeout = timeout  # seconds to wait for one verdict
        self.source = source  # an unpacked DeepSpeed sdist to import instead of the installed one (an older line)
        self.proc: subprocess.Popen | None = None
        self.version = ""

    def __enter__(self) -> "DeepSpeedWorker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _start(self) -> None:
        env = {**os.environ, "DS_ACCELERATOR": "cpu", "PYTHONUTF8": "1", "PYTHONHASHSEED": "0",
               "TF_CPP_MIN_LOG_LEVEL": "3"}
        if self.source is not None:
            env.update(PYTHONPATH=self.source, DS_BUILD_OPS="0")
        self.proc = subprocess.Popen([self.python, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, encoding="utf-8", bufsize=1, env=env)
        line = self._readline(timeout=120)
        if not line:
            raise RuntimeError("the DeepSpeed worker did not start (is deepspeed installed?)")
        hello = json.loads(line)
        self.version = hello.get("deepspeed", "")

    def _readline(self, timeout: float) -> str | None:
        assert self.proc is not None and self.proc.stdout is not None
        q: queue.Queue = queue.Queue()
        t = threading.Thread(target=lambda: q.put(self.proc.stdout.readline()), daemon=True)
        t.start()
        try:
            return q.get(timeout=timeout) or None
        except queue.Empty:
            return None

    def close(self) -> None:
        if self.proc is not None:
            try:
                if self.proc.stdin:
                    self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def _kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def parse_all(self, datas: list[bytes], while_waiting: Callable[[], None] | None = None) -> list[Verdict]:
        """Verdicts for every config, in order. `while_waiting` runs in this thread while the worker parses (the
        zerolint side, so that the two use both cores)."""
        results: list[Verdict | None] = [None] * len(datas)
        next_i, waited = 0, False
        while next_i < len(datas):
            if self.proc is None:
                self._start()
            pending = list(range(next_i, len(datas)))
            replies: queue.Queue = queue.Queue()
            threading.Thread(target=self._write, args=(pending, datas), daemon=True).start()
            threading.Thread(target=self._read, args=(len(pending), replies), daemon=True).start()
            if not waited and while_waiting is not None:
                waited = True
                while_waiting()
            while next_i < len(datas):
                try:
                    item = replies.get(timeout=self.timeout)
                except queue.Empty:
                    item = "timeout"
                if isinstance(item, dict):
                    results[item["i"]] = _verdict(item)
                    next_i = item["i"] + 1
                    continue
                # The worker hung or died on this case: that is its verdict; restart after it.
                results[next_i] = Verdict(item, type=item.upper(), message=f"the DeepSpeed worker: {item}")
                next_i += 1
                self._kill()
                break
        if not waited and while_waiting is not None:
            while_waiting()
        return [r if r is not None else Verdict("worker-crash", "LOST") for r in results]

    def _write(self, indices: list[int], datas: list[bytes]) -> None:
        proc = self.proc
        try:
            for i in indices:
                proc.stdin.write(json.dumps({"i": i, "b64": base64.b64encode(datas[i]).decode()}) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def _read(self, n: int, out: queue.Queue) -> None:
        proc = self.proc
        for _ in range(n):
            line = proc.stdout.readline()
            if not line:
                out.put("worker-crash")
                return
            out.put(json.loads(line))


def _verdict(reply: dict) -> Verdict:
    if reply.get("ok"):
        return Verdict("accepted", summary=reply.get("summary") or {})
    return Verdict("rejected", reply.get("type", ""), reply.get("message", ""), reply.get("where", ""))


# -- zerolint's side -----------------------------------------------------------------------------------------------
def zerolint_settings(version: str = DEEPSPEED_VERSION):
    from zerolint.model.view import Settings

    return Settings(target="deepspeed", world_size=1, deepspeed_version=version)


def lint(data: bytes, name: str = "ds_config.json", version: str = DEEPSPEED_VERSION) -> list:
    from zerolint.pipeline import lint_bytes

    return lint_bytes(data, name, zerolint_settings(version)).diagnostics


def fails_at(d: Any) -> str | None:
    return getattr(d, "fails_at", None)


def claims_parse_rejection(d: Any) -> bool:
    """Does this diagnostic say DeepSpeed rejects the config at parse?"""
    when = fails_at(d)
    if when is not None:
        return when == "parse"
    return bool(PARSE_CLAIM.search(d.message))


# -- the allowlist ---------------------------------------------------------------------------------------------------
@dataclass
class AllowEntry:
    id: str
    direction: str  # "missed" | "false-claim"
    reason: str
    ds_type: str = ""  # missed: regex on DeepSpeed's exception type
    ds_message: str = ""  # missed: regex on DeepSpeed's message
    code: str = ""  # false-claim: the zerolint code
    message: str = ""  # false-claim: regex on zerolint's message
    config: str = ""  # either: regex the config text must match
    used: int = 0

    def matches_missed(self, case_text: str, v: Verdict) -> bool:
        return (self.direction == "missed" and re.search(self.ds_type or "", v.type) is not None
                and re.search(self.ds_message or "", v.message) is not None
                and re.search(self.config or "", case_text) is not None)

    def matches_claim(self, case_text: str, d: Any) -> bool:
        return (self.direction == "false-claim" and (not self.code or d.code == self.code)
                and re.search(self.message or "", d.message) is not None
                and re.search(self.config or "", case_text) is not None)


def load_allowlist(path: Path = ALLOWLIST) -> list[AllowEntry]:
    if not path.is_file():
        return []
    raw = tomllib.loads(path.read_text("utf-8"))
    out = []
    for e in raw.get("entry", []):
        unknown = set(e) - {"id", "direction", "reason", "ds_type", "ds_message", "code", "message", "config"}
        if unknown:
            raise ValueError(f"allowlist entry {e.get('id')!r}: unknown keys {sorted(unknown)}")
        if e.get("direction") not in ("missed", "false-claim"):
            raise ValueError(f"allowlist entry {e.get('id')!r}: direction must be 'missed' or 'false-claim'")
        if len(e.get("reason", "").strip()) < 20:
            raise ValueError(f"allowlist entry {e.get('id')!r}: give a reason")
        out.append(AllowEntry(**e))
    return out


# -- comparing ---------------------------------------------------------------------------------------------------------
@dataclass
class Outcome:
    case: Any  # mutations.Case
    verdict: Verdict
    errors: list = field(default_factory=list)  # zerolint diagnostics of severity error (not ZL000)
    claims: list = field(default_factory=list)  # diagnostics that claim a parse-time rejection
    internal: list = field(default_factory=list)  # ZL000
    missed: bool = False
    false_claims: list = field(default_factory=list)  # claims on a config DeepSpeed accepts (not allowlisted)
    allowed: list = field(default_factory=list)  # allowlist entry ids that excused something here
    unmarked_claims: list = field(default_factory=list)  # claims made only in words (no fails_at)
    weak_claims: list = field(default_factory=list)  # fails_at="parse" below severity error
    lint_seconds: float = 0.0  # zerolint's time on this config (a crafted value must not make it hang)

    @property
    def ok(self) -> bool:
        return not self.missed and not self.false_claims and not self.internal


def compare(case: Any, verdict: Verdict, diagnostics: list, allow: list[AllowEntry]) -> Outcome:
    o = Outcome(case, verdict)
    o.internal = [d for d in diagnostics if d.code == "ZL000"]
    o.errors = [d for d in diagnostics if d.severity.value == "error" and d.code != "ZL000"]
    o.claims = [d for d in diagnostics if d.code != "ZL000" and claims_parse_rejection(d)]
    o.unmarked_claims = [d for d in o.claims if fails_at(d) is None]
    o.weak_claims = [d for d in o.claims if d.severity.value != "error"]
    text = case.data.decode("utf-8", "replace")
    if verdict.rejected and not o.errors:
        entry = next((e for e in allow if e.matches_missed(text, verdict)), None)
        if entry is None:
            o.missed = True
        else:
            entry.used += 1
            o.allowed.append(entry.id)
    if not verdict.rejected:
        for d in o.claims:
            entry = next((e for e in allow if e.matches_claim(text, d)), None)
            if entry is None:
                o.false_claims.append(d)
            else:
                entry.used += 1
                o.allowed.append(entry.id)
    return o


def run(cases: list, worker: DeepSpeedWorker | None = None, allow: list[AllowEntry] | None = None,
        version: str = DEEPSPEED_VERSION) -> list[Outcome]:
    """DeepSpeed's verdict and zerolint's diagnostics (checked for DeepSpeed `version`) for every case, compared."""
    allow = load_allowlist() if allow is None else allow
    diags: list[list] = []
    seconds: list[float] = []

    def lint_all() -> None:
        for c in cases:
            t = time.perf_counter()
            diags.append(lint(c.data, version=version))
            seconds.append(time.perf_counter() - t)

    own = worker is None
    worker = worker or DeepSpeedWorker()
    try:
        verdicts = worker.parse_all([c.data for c in cases], while_waiting=lint_all)
    finally:
        if own:
            worker.close()
    outcomes = [compare(c, v, d, allow) for c, v, d in zip(cases, verdicts, diags)]
    for o, t in zip(outcomes, seconds):
        o.lint_seconds = t
    return outcomes


# -- the table ---------------------------------------------------------------------------------------------------------
COLUMNS = ("cases", "DS rejected", "caught (error)", "caught (parse claim)", "missed", "allowlisted",
           "false parse claims", "ZL000")


def table(outcomes: Iterable[Outcome]) -> list[tuple[str, dict[str, int]]]:
    rows: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        for key in (o.case.kind, "TOTAL"):
            r = rows[key]
            r["cases"] += 1
            if o.verdict.rejected:
                r["DS rejected"] += 1
                r["caught (error)"] += bool(o.errors)
                r["caught (parse claim)"] += any(fails_at(d) == "parse" or claims_parse_rejection(d)
                                                 for d in o.errors)
            r["missed"] += o.missed
            r["allowlisted"] += bool(o.allowed)
            r["false parse claims"] += bool(o.false_claims)
            r["ZL000"] += bool(o.internal)
    order = ["fixture", "corpus", "seed"]
    kinds = order + sorted(k for k in rows if k not in order and k != "TOTAL") + ["TOTAL"]
    return [(k, {c: rows[k][c] for c in COLUMNS}) for k in kinds if k in rows]


def markdown_table(head: list[str], body: list[list[str]]) -> str:
    """A Markdown table: the first column left-aligned, the others right-aligned (numbers)."""
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    line = lambda cells: "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                           for i, (c, w) in enumerate(zip(cells, widths))) + " |"
    sep = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([line(head), sep, *[line(b) for b in body]])


def format_table(rows: list[tuple[str, dict[str, int]]]) -> str:
    head = ["kind", *COLUMNS, "caught %"]
    body = []
    for kind, r in rows:
        # of the rejections not excused by the allowlist
        due = r["DS rejected"] - r["allowlisted"]
        pct = 100.0 * (r["caught (error)"]) / due if due else 100.0
        body.append([kind, *[str(r[c]) for c in COLUMNS], f"{math.floor(pct * 100) / 100:.2f}"])  # never rounds up
    return markdown_table(head, body)


def describe(o: Outcome, limit: int = 400) -> str:
    """A disagreement, for a person to read."""
    text = o.case.data.decode("utf-8", "replace")
    text = text if len(text) <= limit else text[:limit] + "..."
    lines = [f"{o.case.id} [{o.case.kind}] {o.case.what}" + (f" (from {o.case.source})" if o.case.source else ""),
             f"  DeepSpeed: {o.verdict.short()}"]
    if o.missed:
        lines.append("  zerolint: no error" + (": " + "; ".join(f"{d.code} {d.severity.value}" for d in o.claims)
                                                if o.claims else ""))
    for d in o.false_claims:
        lines.append(f"  zerolint claims parse rejection: {d.code} {d.pointer} {d.message[:200]}")
    for d in o.internal:
        lines.append(f"  zerolint crashed: {d.message[:300]}")
    lines.append("  config: " + text.replace("\n", "\n          "))
    return "\n".join(lines)
