"""zerolint (`check --target deepspeed --world-size 1`, in-process) against what DeepSpeed did with each config
(runner.py: parse / initialize / step N / ran, and the engine's facts).

Per config:
  - DeepSpeed FAILED at phase P (parse, initialize or step):
      caught       an error (not ZL000) whose `fails_at` is P;
      wrong-stage  errors, but none whose `fails_at` is P (a claim of another phase, or none);
      conditional  no error claims P, but a warning does, from a rule whose failure depends on code zerolint
                   cannot see (CONDITIONAL, each with its reason): counted apart from `caught`;
      missed       no error at all.
  - A claim is a diagnostic with `fails_at` set (any severity), or a parse claim made in words only
    (tests/differential/harness.py `claims_parse_rejection`). A claim is FALSE when the config got past the
    phase it names: it ran, or it failed at a later phase. A claim of a later phase than the real failure is
    masked (the run never got there), not contradicted.
  - SILENT claims ("silently ...", "has no effect", "nothing is offloaded"), on a config that ran: confirmed or
    contradicted by the predicate of its rule on the engine's facts (PREDICATES); a silent claim whose rule has no
    predicate is a gap, listed in the table. On a config that failed they are masked.
Reviewed exceptions (DeepSpeed or machine behaviour, never a zerolint bug) are in allowlist.toml.
"""

from __future__ import annotations

import re
import sys
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
ALLOWLIST = HERE / "allowlist.toml"
ORDER = {"parse": 0, "initialize": 1, "step": 2, "ran": 3}
SILENT = re.compile(r"\bsilently\b|\bhas no effect\b|\bnothing is offloaded\b", re.IGNORECASE)


def lint(data: bytes, torch: str | None = None) -> list:
    """zerolint's diagnostics, as the parse differential lints (`--target deepspeed --world-size 1`), for the torch
    version the run used (a rule's verdict may depend on it: ZL612), else the installed one."""
    from differential.harness import zerolint_settings

    from zerolint.base.record import replace
    from zerolint.pipeline import lint_bytes

    settings = zerolint_settings()
    if torch:
        settings = replace(settings, torch_version=torch)
    return lint_bytes(data, "ds_config.json", settings).diagnostics


def claimed_phase(d: Any) -> str | None:
    from differential.harness import claims_parse_rejection

    when = getattr(d, "fails_at", None)
    if when is not None:
        return when
    return "parse" if claims_parse_rejection(d) else None


# -- silent claims: a predicate on the engine's facts per rule ----------------------------------------------------
def _cfg(text: str) -> dict:
    import hjson

    try:
        v = hjson.loads(text)
    except Exception:  # noqa: BLE001
        return {}
    return v if isinstance(v, dict) else {}


def _key(d: Any) -> str:
    return d.pointer.rstrip("/").rsplit("/", 1)[-1] if d.pointer else ""


def _misplaced(d, facts, cfg) -> bool | None:
    """ZL101: a known key outside its section has no effect: what runs is what zero_optimization says."""
    key = _key(d)
    z = cfg.get("zero_optimization") if isinstance(cfg.get("zero_optimization"), dict) else {}
    stage = z.get("stage", 0)
    if key in ("offload_optimizer", "offload_param"):
        inner = z.get(key) if isinstance(z.get(key), dict) else {}
        on = inner.get("device") in ("cpu", "nvme") and stage in ((1, 2, 3) if key == "offload_optimizer" else (3,))
        got = facts.get("optimizer_offload") if key == "offload_optimizer" else facts.get("param_offload_device")
        return bool(got) == on
    if key == "stage":
        return facts.get("zero_stage") == stage
    return None


def _unknown(d, facts, cfg) -> bool | None:
    """ZL103: a typo of a real key keeps that setting's default."""
    key = _key(d).lower()
    if key.startswith("zero_optimi") and key != "zero_optimization":
        return facts.get("zero_stage") == 0
    return None


def _offload_param_below_3(d, facts, cfg) -> bool | None:
    return facts.get("zero_stage", 0) < 3 and facts.get("param_offload_device") is None


def _nvme_optimizer_below_3(d, facts, cfg) -> bool | None:
    return facts.get("zero_stage", 0) < 3 and bool(facts.get("optimizer_offload"))


def _bfloat16_shadowed(d, facts, cfg) -> bool | None:
    bf16 = cfg.get("bf16")
    on = isinstance(bf16, dict) and bf16.get("enabled") in (True, "true", 1)
    return (facts.get("precision") == "bf16") == on


def _auto_dropped(d, facts, cfg) -> bool | None:
    """ZL501: "auto" in a strict section is deleted before validation, so the default applies."""
    p = d.pointer
    if p == "/zero_optimization/stage":
        return facts.get("zero_stage") == 0
    if p in ("/fp16/enabled", "/bf16/enabled", "/bfloat16/enabled"):
        return facts.get("precision") != p.split("/")[1].replace("bfloat16", "bf16")
    if p == "/zero_optimization/offload_optimizer/device":
        return not facts.get("optimizer_offload")
    if p == "/zero_optimization/offload_param/device":
        return facts.get("param_offload_device") is None
    return None


def _offload_ignored_at_stage_0(d, facts, cfg) -> bool | None:
    """ZL202's silent case: ZeRO off and no CPU optimizer built, so nothing is offloaded."""
    return facts.get("zero_stage") == 0 and not facts.get("optimizer_offload") and \
        facts.get("optimizer_inner") not in ("DeepSpeedCPUAdam", "DeepSpeedCPUAdagrad", "DeepSpeedCPULion")


def _aio_renamed(d, facts, cfg) -> bool | None:
    """ZL901: the old aio.thread_count is ignored; the I/O parallelism DeepSpeed parsed is its default (1)."""
    value = facts.get("aio_intra_op_parallelism")
    return None if value is None else value == 1


def _clipping_default(d, facts, cfg) -> bool | None:
    return facts.get("gradient_clipping") == 1.0


PREDICATES: dict[str, Callable[[Any, dict, dict], bool | None]] = {
    "ZL101": _misplaced, "ZL103": _unknown, "ZL201": _offload_param_below_3, "ZL202": _offload_ignored_at_stage_0,
    "ZL207": _nvme_optimizer_below_3, "ZL901": _aio_renamed,
    "ZL302": _bfloat16_shadowed, "ZL501": _auto_dropped, "ZL705": _clipping_default,
}


# -- the allowlist ---------------------------------------------------------------------------------------------------
DIRECTIONS = ("missed", "wrong-stage", "false-claim", "silent-contradicted", "harness")


@dataclass
class AllowEntry:
    id: str
    direction: str
    reason: str
    phase: str = ""  # DeepSpeed's phase (regex)
    ds_type: str = ""  # regex on DeepSpeed's exception type
    ds_message: str = ""  # regex on DeepSpeed's message
    code: str = ""  # the zerolint code (false-claim, silent-contradicted)
    message: str = ""  # regex on zerolint's message
    config: str = ""  # regex the config text must match
    accelerator: str = ""  # only on this accelerator ("cpu" / "cuda"); empty: any
    used: int = 0

    def matches(self, direction: str, text: str, run, accelerator: str, d: Any = None) -> bool:
        if self.direction != direction or (self.accelerator and self.accelerator != accelerator):
            return False
        if self.code and (d is None or d.code != self.code):
            return False
        return (re.search(self.phase, run.phase) is not None
                and re.search(self.ds_type, str(run.error.get("type", ""))) is not None
                and re.search(self.ds_message, str(run.error.get("message", ""))) is not None
                and re.search(self.message, d.message if d is not None else "") is not None
                and re.search(self.config, text) is not None)


def load_allowlist(path: Path = ALLOWLIST) -> list[AllowEntry]:
    raw = tomllib.loads(path.read_text("utf-8")) if path.is_file() else {}
    out = []
    for e in raw.get("entry", []):
        unknown = set(e) - (set(AllowEntry.__dataclass_fields__) - {"used"})
        if unknown:
            raise ValueError(f"allowlist entry {e.get('id')!r}: unknown keys {sorted(unknown)}")
        if e.get("direction") not in DIRECTIONS:
            raise ValueError(f"allowlist entry {e.get('id')!r}: direction must be one of {DIRECTIONS}")
        if len(e.get("reason", "").strip()) < 40:
            raise ValueError(f"allowlist entry {e.get('id')!r}: give a reason")
        out.append(AllowEntry(**e))
    return out


# -- comparing ---------------------------------------------------------------------------------------------------------
@dataclass
class Outcome:
    case: Any  # differential.mutations.Case
    run: Any  # runner.Run
    diagnostics: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    verdict: str = ""  # "ran-clean" | "ran-warned" | "caught" | "conditional" | "wrong-stage" | "missed" | "harness"
    false_claims: list = field(default_factory=list)  # (diagnostic, claimed phase)
    masked_claims: list = field(default_factory=list)
    silent: list = field(default_factory=list)  # (diagnostic, "confirmed" | "contradicted" | "gap" | "masked")
    internal: list = field(default_factory=list)
    allowed: list = field(default_factory=list)
    lint_seconds: float = 0.0

    @property
    def disagreements(self) -> list[str]:
        out = []
        if self.verdict in ("wrong-stage", "missed", "harness"):
            out.append(self.verdict)
        out += ["false-claim"] * len(self.false_claims)
        out += ["silent-contradicted" for _, s in self.silent if s == "contradicted"]
        out += ["ZL000"] * len(self.internal)
        return out


# Rules that claim a failure as a WARNING because it depends on what the training code does, which a config does
# not say. The harness plays the usual script (a client torch AdamW when the config has no optimizer section), so
# DeepSpeed fails; the same config runs for a script that does the other thing. Reviewed, with the reason.
CONDITIONAL = {
    "ZL219": "ZeRO-Offload with no optimizer section fails at initialize for a client torch AdamW (the harness's "
             "script) and runs for DeepSpeedCPUAdam, which Megatron-DeepSpeed's --cpu-optimizer passes: the rule "
             "warns, stating the condition, rather than fail configs that work",
}


# Silent claims that no engine fact can confirm, reviewed, with the reason: the claim is that a key has no effect at
# all, and an effect that does not exist leaves nothing to observe. Counted as "silent reviewed", not as gaps.
NO_FACT = {
    "ZL905": "a key DeepSpeed parses and never reads (zero_optimization.allgather_partitions: exposed by "
             "engine.zero_allgather_partitions(), read by no ZeRO optimizer in runtime/zero/): the evidence is the "
             "source, and the run confirms only that the config runs",
}


def compare(case: Any, run: Any, diagnostics: list, allow: list[AllowEntry], accelerator: str = "cpu") -> Outcome:
    o = Outcome(case, run, diagnostics)
    text = case.data.decode("utf-8", "replace")
    o.internal = [d for d in diagnostics if d.code == "ZL000"]
    o.errors = [d for d in diagnostics if d.severity.value == "error" and d.code != "ZL000"]

    def excused(direction: str, d: Any = None) -> bool:
        entry = next((e for e in allow if e.matches(direction, text, run, accelerator, d)), None)
        if entry is not None:
            entry.used += 1
            o.allowed.append(entry.id)
        return entry is not None

    real = run.phase
    if real not in ORDER:
        o.verdict = "allowlisted" if excused("harness") else "harness"
    elif real == "ran":
        o.verdict = "ran-warned" if diagnostics else "ran-clean"
    elif any(claimed_phase(d) == real for d in o.errors):
        o.verdict = "caught"
    elif any(claimed_phase(d) == real and d.code in CONDITIONAL for d in diagnostics):
        o.verdict = "conditional"
    elif o.errors:
        o.verdict = "allowlisted" if excused("wrong-stage") else "wrong-stage"
    else:
        o.verdict = "allowlisted" if excused("missed") else "missed"
    for d in diagnostics:
        when = claimed_phase(d)
        if when is None or d.code == "ZL000" or real not in ORDER:
            continue
        if ORDER[when] < ORDER[real]:
            if not excused("false-claim", d):
                o.false_claims.append((d, when))
        elif ORDER[when] > ORDER[real]:
            o.masked_claims.append((d, when))
    cfg = None
    for d in diagnostics:
        if d.code == "ZL000" or not SILENT.search(d.message):
            continue
        if real != "ran":
            o.silent.append((d, "masked"))
            continue
        pred = PREDICATES.get(d.code)
        cfg = _cfg(text) if cfg is None else cfg
        holds = pred(d, run.facts, cfg) if pred is not None else None
        if holds is None:
            o.silent.append((d, "reviewed" if d.code in NO_FACT else "gap"))
        elif holds:
            o.silent.append((d, "confirmed"))
        elif excused("silent-contradicted", d):
            o.silent.append((d, "allowlisted"))
        else:
            o.silent.append((d, "contradicted"))
    return o


def run(cases: list, runner, allow: list[AllowEntry] | None = None, progress=None, jobs: int = 1) -> list[Outcome]:
    """DeepSpeed's runs and zerolint's diagnostics for every case, compared (zerolint lints while the first
    config runs)."""
    allow = load_allowlist() if allow is None else allow
    diags: list[list] = []
    seconds: list[float] = []

    torch = (getattr(runner, "info", None) or {}).get("versions", {}).get("torch")

    def lint_all() -> None:
        for c in cases:
            t = time.perf_counter()
            diags.append(lint(c.data, torch))
            seconds.append(time.perf_counter() - t)

    runs = runner.run_all([c.data for c in cases], while_waiting=lint_all, progress=progress, jobs=jobs)
    outcomes = [compare(c, r, d, allow, runner.accelerator) for c, r, d in zip(cases, runs, diags)]
    for o, t in zip(outcomes, seconds):
        o.lint_seconds = t
    return outcomes


# -- the tables ----------------------------------------------------------------------------------------------------
COLUMNS = ("cases", "ran", "DS failed", "at parse", "at initialize", "at step", "caught", "conditional",
           "wrong stage", "missed",
           "allowlisted", "false claims", "silent confirmed", "silent contradicted", "silent reviewed", "silent gap",
           "harness")


def table(outcomes: Iterable[Outcome]) -> list[tuple[str, dict[str, int]]]:
    rows: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        for key in (o.case.kind, "TOTAL"):
            r = rows[key]
            r["cases"] += 1
            r["ran"] += o.run.phase == "ran"
            failed = o.run.phase in ("parse", "initialize", "step")
            r["DS failed"] += failed
            if failed:
                r[f"at {o.run.phase}"] += 1
            r["caught"] += o.verdict == "caught"
            r["conditional"] += o.verdict == "conditional"
            r["wrong stage"] += o.verdict == "wrong-stage"
            r["missed"] += o.verdict == "missed"
            r["allowlisted"] += bool(o.allowed)
            r["false claims"] += bool(o.false_claims)
            r["silent confirmed"] += sum(s == "confirmed" for _, s in o.silent)
            r["silent contradicted"] += sum(s == "contradicted" for _, s in o.silent)
            r["silent reviewed"] += sum(s == "reviewed" for _, s in o.silent)
            r["silent gap"] += sum(s == "gap" for _, s in o.silent)
            r["harness"] += o.verdict == "harness"
    first = ["example", "corpus"]
    kinds = first + sorted(k for k in rows if k not in first and k != "TOTAL") + ["TOTAL"]
    return [(k, {c: rows[k][c] for c in COLUMNS}) for k in kinds if k in rows]


def rule_table(outcomes: Iterable[Outcome]) -> list[tuple[str, dict[str, int]]]:
    """Per rule code: how its claims fared."""
    cols = ("claims", "confirmed", "false", "masked", "silent confirmed", "silent contradicted", "silent gap")
    rows: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        false = {id(d) for d, _ in o.false_claims}
        masked = {id(d) for d, _ in o.masked_claims}
        for d in o.diagnostics:
            when = claimed_phase(d)
            if when is not None and d.code != "ZL000":
                r = rows[d.code]
                r["claims"] += 1
                r["false"] += id(d) in false
                r["masked"] += id(d) in masked
                r["confirmed"] += when == o.run.phase
        for d, s in o.silent:
            if s in ("confirmed", "contradicted", "gap"):
                rows[d.code][f"silent {s}"] += 1
    return [(k, {c: rows[k][c] for c in cols}) for k in sorted(rows)]


def format_table(rows: list[tuple[str, dict[str, int]]], first: str = "kind") -> str:
    cols = list(rows[0][1]) if rows else []
    head = [first, *cols]
    body = [[k, *[str(r[c]) for c in cols]] for k, r in rows]
    from differential.harness import markdown_table

    return markdown_table(head, body)


def describe(o: Outcome, limit: int = 500) -> str:
    """A disagreement, for a person to read."""
    text = o.case.data.decode("utf-8", "replace")
    text = text if len(text) <= limit else text[:limit] + "..."
    lines = [f"{o.case.id} [{o.case.kind}] {o.case.what}" + (f" (from {o.case.source})" if o.case.source else ""),
             f"  DeepSpeed: {o.run.short()}" + (f" (client {o.run.client_optimizer})" if o.run.client_optimizer
                                                else "")]
    if o.verdict in ("missed", "wrong-stage"):
        lines.append(f"  zerolint {o.verdict}: " + ("; ".join(f"{d.code} {d.severity.value} fails_at="
                                                               f"{claimed_phase(d)} {d.pointer}" for d in o.errors)
                                                    or "no error"))
    for d, when in o.false_claims:
        lines.append(f"  zerolint claims a failure at {when} that does not happen: {d.code} {d.pointer} "
                     f"{d.message[:200]}")
    for d, s in o.silent:
        if s == "contradicted":
            lines.append(f"  silent claim contradicted by the facts: {d.code} {d.pointer} {d.message[:200]}")
    for d in o.internal:
        lines.append(f"  zerolint crashed: {d.message[:300]}")
    lines.append("  config: " + text.replace("\n", "\n          "))
    return "\n".join(lines)
