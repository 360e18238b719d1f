"""A verify run as diagnostics (codes ZL990-ZL999) and as a report: text (plain, or rich on a terminal), json
(the `check` payload plus a `verify` object) and sarif (the `check` SARIF plus `runs[0].properties.verify`)."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from typing import Any

from ..model.diagnostics import Diagnostic, Finding
from ..model.document import Document
from ..model.view import View
from ..rules import engine_rules as codes
from ..rules.engine import Selection, locate
from .intent import IntentCheck, check_intent
from .mapping import Mapped, map_error
from .resolve import Plan, fmt_bytes


@dataclass
class RunReport:
    label: str  # original | fixed
    path: str
    doc: Document
    view: View
    plan: Plan | None
    record: dict
    static: list[Diagnostic] = field(default_factory=list)
    verify: list[Diagnostic] = field(default_factory=list)
    intent: list[IntentCheck] = field(default_factory=list)
    mapped: Mapped | None = None
    cached: bool = False

    @property
    def status(self) -> str:
        return self.record.get("status", "crash")

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """In check's order: the config's findings (verify's among them) sorted, then those in other files (ZL090
        for an unused suppression, located in the zerolint config)."""
        own = [d for d in self.static + self.verify if d.file == self.path]
        return sorted(own, key=Diagnostic.sort_key) + [d for d in self.static if d.file != self.path]


def verdict(rep: RunReport) -> str:
    """The run's verdict, as the text headline, the JSON `verdict` and the exit code say it: a run that passed but
    has an error-level verify finding (a failed intent check ZL994-ZL997, a non-finite loss ZL998) is a fail;
    otherwise its status (pass, fail, skip, timeout, build-timeout, crash)."""
    from ..model.diagnostics import Severity

    if rep.status == "pass" and any(d.severity == Severity.ERROR for d in rep.verify):
        return "fail"
    return rep.status


def _diag(doc: Document, rule, finding: Finding, selection: Selection | None) -> Diagnostic | None:
    if selection is not None and not selection.enabled(rule):
        return None
    sev = selection.severity_for(rule, finding.severity) if selection is not None else rule.default_severity
    return locate(doc, rule, finding, sev)


def analyse(rep: RunReport, selection: Selection | None = None) -> RunReport:
    """Fill the report's verify diagnostics, intent checks and error mapping from its run record."""
    rec, doc, out = rep.record, rep.doc, []
    status = rep.status

    def add(rule, finding: Finding) -> None:
        d = _diag(doc, rule, finding, selection)
        if d is not None:
            out.append(d)

    if status == "fail":
        err = rec.get("error") or {}
        if "offset" in err:  # the reader (hjson / json) stopped: no DeepSpeed run
            rep.mapped = Mapped("parse", "", f"{err.get('type')}: {err.get('message')}", where=err.get("reader", ""))
            add(codes.FAILED, Finding("", f"{err.get('reader_name', 'the reader')} cannot read the file: "
                                      f"{err.get('message')}", span=(err["offset"], err["offset"] + 1),
                                      help=err.get("help")))
        else:
            m = map_error(err, rec.get("phase") or "initialize", doc, rep.plan.config if rep.plan else {},
                          rep.view.bf16_section)
            changed = _neutralised_cause(rep, m, err)
            if changed is not None:  # the key verify changed for safety, not the config, may be what failed
                rec["status"], rec["reason"] = "skip", (
                    f"the run failed at {changed.pointer or '/'}, which verify changed for safety ({changed.message}); "
                    f"what your own run does there cannot be told from this run ({m.message})")
                add(codes.SKIPPED, Finding(changed.pointer, f"not verified: {rec['reason']}"))
                rep.verify = out
                return rep
            rep.mapped = m
            where = f" [{m.where}]" if m.where else ""
            rank = f" on rank {rec['failed_rank']}" if rec.get("failed_rank") else ""
            add(codes.FAILED, Finding(m.pointer, f"{m.who} fails at {m.stage}{rank}: {m.message}{where}",
                                      help=m.help, related=m.related))  # type: ignore[arg-type]  # (pointer, why)
    elif status == "timeout":
        phase = rec.get("phase") or "launch"
        msg = (f"the verify run timed out after {rec.get('timeout_s', 0):g} s (last stage reached: {phase}); "
               f"all of its processes were stopped; no op was built or waited for inside that time (verify stops a "
               f"run that reaches one, builds it outside the clock and runs again), so the config's own run used it")
        help_ = None
        if rec.get("jit_pending"):
            help_ = (f"the run had to JIT-build {', '.join(rec['jit_pending'])} itself (the build phase did not): "
                     "run `zerolint verify --prepare CONFIG` first, or raise --timeout")
        add(codes.TIMEOUT, Finding("", msg, help=help_))
    elif status == "build-timeout":  # the op build, not the config, was slow: the config did not run at all
        build = rec.get("build") or {}
        msg = (f"not verified: building DeepSpeed's {build.get('op', 'ops')} op did not finish within --build-timeout "
               f"{build.get('timeout_s', 0):g} s; the build, not the config, was slow, and the config was not run")
        add(codes.TIMEOUT, Finding("", msg, help="build the ops ahead of time with `zerolint verify --prepare "
                                                 "CONFIG` (no limit you did not set), or raise --build-timeout"))
    elif status in ("crash", "unavailable"):
        err = rec.get("error") or {}
        tail = [ln for ln in (rec.get("log_tail") or "").splitlines() if ln.strip()][-3:]
        msg = f"the verify run ended without a result: {err.get('type', '')}: {err.get('message', '')}".rstrip(": ")
        if tail:
            msg += " | log: " + " / ".join(x.strip()[:200] for x in tail)
        add(codes.CRASHED, Finding("", msg, help=err.get("help")))
    elif status == "skip":
        ptr = "/fp16/enabled" if doc.node("/fp16/enabled") is not None else ""
        add(codes.SKIPPED, Finding(ptr, f"not verified: {rec.get('reason')}"))
    elif status == "pass":
        facts = rec.get("facts") or {}
        rep.intent = check_intent(rep.view, facts, rec.get("world_size", 1))
        for c in rep.intent:
            if not c.ok:
                add(codes.BY_CHECK[c.check], Finding(c.pointer, c.message, help=c.help))
        losses = rec.get("losses") or []
        if losses and not math.isfinite(losses[-1]) and not rec.get("skipped_steps"):
            add(codes.LOSS, Finding("", f"the loss after step {len(losses)} is {losses[-1]} and no step was skipped"))
    rep.verify = out
    return rep


def _neutralised_cause(rep: RunReport, m: Mapped, err: dict):
    """The neutralised change (resolve.NEUTRALISED: a path pointed into the run's temp dir, a module list dropped)
    the failure is at, or names, else None: there the failure may be verify's change, not the config's."""
    from .resolve import NEUTRALISED

    if rep.plan is None:
        return None
    text = f"{err.get('message', '')} {(err.get('cause') or {}).get('message', '')}"
    for c in rep.plan.changes:
        if c.kind != NEUTRALISED or not c.pointer:
            continue
        at = m.pointer and (m.pointer == c.pointer or m.pointer.startswith(c.pointer + "/"))
        named = isinstance(c.after, str) and len(c.after) > 8 and c.after in text
        if at or named:
            return c
    return None


# -- what DeepSpeed did ---------------------------------------------------------------------------------------------

def did(facts: dict) -> dict[str, str]:
    if not facts or "zero_stage" not in facts:
        return {}
    opt = facts.get("optimizer_outer")
    if facts.get("optimizer_inner") and facts.get("optimizer_inner") != opt:
        opt = f"{opt} / {facts.get('optimizer_inner')}"
    states = ", ".join(facts.get("optimizer_state_devices") or []) or "-"
    params = ", ".join(facts.get("param_devices") or []) or "-"
    share = facts.get("partition_share")
    part = (f"partitioned, {share:.0%} per rank" if facts.get("zero3_managed") else "not partitioned")
    return {
        "zero stage": str(facts.get("zero_stage")),
        "precision": f"{facts.get('precision')} (parameters {facts.get('param_dtype')})",
        "optimizer": str(opt),
        "optimizer offload": f"{'cpu' if facts.get('optimizer_offload') else 'none'} (states on {states})",
        "param offload": f"{facts.get('param_offload_device') or 'none'} (parameters on {params}, {part})",
        "train batch": (f"{facts.get('train_batch_size')} = {facts.get('micro_batch')} micro x "
                        f"{facts.get('grad_accum')} accumulation x {facts.get('world_size')} "
                        f"rank{'s' if facts.get('world_size') != 1 else ''}"),
    }


def memory_line(rec: dict) -> str:
    mem = rec.get("memory") or {}
    if rec.get("accelerator") == "cuda":
        gpu = (f"peak allocated {fmt_bytes(mem.get('peak_allocated_bytes'))}, peak reserved "
               f"{fmt_bytes(mem.get('peak_reserved_bytes'))} (max over ranks)")
    else:
        gpu = "no GPU memory (cpu run)"
    return f"{gpu}, host RSS peak {fmt_bytes(mem.get('host_rss_peak_bytes'))}"


def timing_line(rec: dict) -> str:
    t = rec.get("timings") or {}
    parts = [f"{rec.get('wall_s', 0):.1f} s to verdict"]
    if "import_s" in t:
        parts.append(f"import {t['import_s']:.1f} s")
    if "initialize_s" in t:
        parts.append(f"initialize {t['initialize_s']:.1f} s")
    if t.get("step_s"):
        parts.append("steps " + "/".join(f"{s:.2f}" for s in t["step_s"]) + " s")
    if rec.get("jit_built"):
        parts.append(f"JIT-built {', '.join(rec['jit_built'])}")
    build = rec.get("build") or {}
    built = [op for op, info in (build.get("ops") or {}).items() if info.get("status") == "built"]
    if built or build.get("notices"):
        parts.append(f"op build phase {build.get('wall_s', 0):.0f} s"
                     + (f" (built {', '.join(built)})" if built else ""))
    for stop in rec.get("op_stops") or []:  # the run reached an op that was not built: stopped, built, run again
        b = stop.get("build") or {}
        parts.append(f"stopped at {stop.get('op')} ({stop.get('why')}), built it in {b.get('wall_s', 0):.0f} s "
                     "outside the clock" + (", ran again" if stop.get("rerun") else ""))
    return ", ".join(parts)


def _stop_json(stop: dict) -> dict[str, Any]:
    build = {k: v for k, v in (stop.get("build") or {}).items() if k != "log_tail"}
    return {**{k: v for k, v in stop.items() if k != "build"}, "build": build}


def run_json(rep: RunReport) -> dict[str, Any]:
    rec = rep.record
    out: dict[str, Any] = {
        "label": rep.label,
        "file": rep.path,
        "status": rep.status,
        "cached": rep.cached,
        "target": rep.view.target,
        "accelerator": rec.get("accelerator"),
        "device_name": rec.get("device_name"),
        "world_size": rec.get("world_size"),
        "launcher": rec.get("launcher"),
        "versions": rec.get("versions"),
        "model": rep.plan.model.to_json() if rep.plan else None,
        "steps": rep.plan.steps if rep.plan else None,
        "client_optimizer": rep.plan.client_optimizer if rep.plan else None,
        "changes": [c.to_json() for c in rep.plan.changes] if rep.plan else [],
        "failure": None,
        "reason": rec.get("reason"),
        "did": did(rec.get("facts") or {}),
        "facts": rec.get("facts") or {},
        "intent": [c.to_json() for c in rep.intent],
        "memory": rec.get("memory") or {},
        "estimates": rec.get("estimates"),
        "timings": {**(rec.get("timings") or {}), "wall_s": rec.get("wall_s")},
        "losses": rec.get("losses"),
        "skipped_steps": rec.get("skipped_steps"),
        "jit_built": rec.get("jit_built", []),
        "ops_loaded": rec.get("ops_loaded", []),
        "listening": rec.get("listening", []),
        "op_stops": [_stop_json(stop) for stop in rec.get("op_stops") or []],
        "run_id": rec.get("run_id"),
        "command": rec.get("command"),
        "timeout_s": rec.get("timeout_s"),
    }
    if rec.get("nodes") is not None:  # a multi-node run (verify/launch.py): launcher, nodes, whose result decided
        out["nodes"] = rec["nodes"]
    if rep.mapped is not None:
        d = next((x for x in rep.verify if x.code == codes.FAILED.code), None)
        out["failure"] = {"stage": rep.mapped.stage, "message": rep.mapped.message, "pointer": rep.mapped.pointer,
                          "line": d.line if d else None, "column": d.column if d else None,
                          "where": rep.mapped.where, "error_type": (rec.get("error") or {}).get("type"),
                          "related": [{"pointer": p, "message": m} for p, m in rep.mapped.related]}
    elif rep.status in ("timeout", "crash"):
        out["failure"] = {"stage": rec.get("phase"), "message": (rec.get("error") or {}).get("message")
                          or f"timed out after {rec.get('timeout_s', 0):g} s"}
    elif rep.status == "build-timeout":
        out["failure"] = {"stage": rec.get("phase"), "message": f"the op build did not finish within "
                                                                f"{(rec.get('build') or {}).get('timeout_s', 0):g} s"}
    if rec.get("build") is not None:  # the op build phase (zerolint/verify/ops.py)
        out["build"] = {k: v for k, v in rec["build"].items() if k != "log_tail"}
    if rep.status not in ("pass", "skip") and rec.get("log_tail"):
        out["log_tail"] = rec["log_tail"][-3000:]
    return out


def verify_json(reports: list[RunReport], compare: dict | None) -> dict[str, Any]:
    return {"file": reports[0].path, "verdict": verdict(reports[0]), "runs": [run_json(r) for r in reports],
            "compare_fix": compare}


# -- text -----------------------------------------------------------------------------------------------------------

def _header(rep: RunReport) -> str:
    rec = rep.record
    v = rec.get("versions") or {}
    dev = rec.get("device_name") or rec.get("accelerator") or "?"
    ranks = rec.get("world_size", 1)
    bits = [f"{dev}", f"{ranks} rank{'s' if ranks != 1 else ''}", f"target {rep.view.target}"]
    if v.get("deepspeed"):
        bits.append(f"DeepSpeed {v['deepspeed']}, torch {v.get('torch')}")
    if rep.cached:
        bits.append("cached result")
    return f"verify {rep.path} ({rep.label}): " + ", ".join(bits)


def run_lines(rep: RunReport) -> list[tuple[str, str]]:
    """(style, text) lines for one run."""
    rec, lines = rep.record, []
    lines.append(("bold", _header(rep)))
    nodes = rec.get("nodes")
    if nodes:  # only this node's results are visible here (verify/launch.py)
        lines.append(("", f"  nodes:     {nodes.get('nnodes')} node{'s' if nodes.get('nnodes') != 1 else ''} x "
                          f"{nodes.get('procs_per_node')} rank{'s' if nodes.get('procs_per_node') != 1 else ''} "
                          f"through {nodes.get('launcher')}; ranks here: {nodes.get('local_ranks')}; the verdict "
                          f"rests on {nodes.get('verdict_from')}"))
    if rep.plan is not None:
        m = rep.plan.model
        lines.append(("", f"  job:       causal transformer, {m.params / 1e6:.2f} M parameters (hidden {m.hidden}, "
                          f"{m.layers} layers, seq {m.seq}), {rep.plan.steps} optimizer steps, random tokens"))
        for i, c in enumerate(rep.plan.changes):
            lines.append(("dim", f"  {'adjusted:' if i == 0 else '':<10} {c.pointer or '/'}: {c.message}"))
    status = rep.status
    style = {"pass": "bold green", "skip": "bold yellow"}.get(status, "bold red")
    headline = status.upper()
    if rep.mapped is not None:
        headline += f" at {rep.mapped.stage}"
    elif status == "timeout":
        headline += f" after {rec.get('timeout_s', 0):g} s (last stage: {rec.get('phase')})"
    elif status == "build-timeout":
        headline = (f"BUILD TIMEOUT: {rec.get('phase')} did not finish within "
                   f"{(rec.get('build') or {}).get('timeout_s', 0):g} s (the config was not run)")
    if status == "pass" and verdict(rep) == "fail":  # it ran, but not as the config meant: so is the exit code
        failed = sum(not c.ok for c in rep.intent)
        style, headline = "bold red", (f"FAIL: ran, but {failed} intent check{'s' if failed != 1 else ''} failed"
                                       if failed else "FAIL: ran, but " + ", ".join(d.code for d in rep.verify))
    lines.append((style, f"  result:    {headline}"))
    if status not in ("skip",) and rec.get("wall_s") is not None:
        lines.append(("", f"  time:      {timing_line(rec)}"))
    d = did(rec.get("facts") or {})
    for i, (k, v) in enumerate(d.items()):
        lines.append(("", f"  {'DeepSpeed:' if i == 0 else '':<10} {k}: {v}"))
    for i, ic in enumerate(rep.intent):
        lines.append(("green" if ic.ok else "bold red",
                      f"  {'intent:' if i == 0 else '':<10} {'ok  ' if ic.ok else 'FAIL'} {ic.check}: {ic.message}"))
    if status == "pass":
        lines.append(("", f"  memory:    {memory_line(rec)}"))
    return lines


COMPARE_ROWS = ("result", "zero stage", "precision", "optimizer", "optimizer offload", "param offload", "train batch",
                "intent checks", "peak allocated", "peak reserved", "host RSS peak", "time to verdict")


def compare_rows(reports: list[RunReport]) -> list[tuple[str, list[str]]]:
    rows = []
    for name in COMPARE_ROWS:
        cells = []
        for rep in reports:
            rec, mem = rep.record, rep.record.get("memory") or {}
            d = did(rec.get("facts") or {})
            if name == "result":  # the verdict its own block gives (a pass whose intent checks failed is a fail)
                cell = verdict(rep) + (f" at {rep.mapped.stage}" if rep.mapped else "")
                if rep.status == "pass" and cell != "pass":
                    cell += " (ran; intent checks failed)" if any(not c.ok for c in rep.intent) else " (ran)"
            elif name in d:
                cell = d[name]
            elif name == "intent checks":
                bad = [c.check for c in rep.intent if not c.ok]
                cell = ("FAIL " + ", ".join(bad)) if bad else (f"{len(rep.intent)} ok" if rep.intent else "-")
            elif name == "peak allocated":
                cell = fmt_bytes(mem.get("peak_allocated_bytes")) if rec.get("accelerator") == "cuda" else "n/a (cpu)"
            elif name == "peak reserved":
                cell = fmt_bytes(mem.get("peak_reserved_bytes")) if rec.get("accelerator") == "cuda" else "n/a (cpu)"
            elif name == "host RSS peak":
                cell = fmt_bytes(mem.get("host_rss_peak_bytes"))
            elif name == "time to verdict":
                cell = f"{rec.get('wall_s', 0):.1f} s" + (" (cached)" if rep.cached else "")
            else:
                cell = "-"
            cells.append(cell)
        rows.append((name, cells))
    return rows


def compare_lines(reports: list[RunReport], compare: dict) -> list[tuple[str, str]]:
    lines = [("bold", f"compare-fix {reports[0].path}: original vs zerolint's fixed config")]
    for a in compare.get("applied", []):
        lines.append(("green", f"  fix: line {a['line']} {a['code']} {a['description']}"
                               f"{'' if a['applicability'] == 'safe' else ' (unsafe)'}"))
    rows = compare_rows(reports)
    w0 = max(len(n) for n, _ in rows)
    w1 = max(len("original"), *(len(c[0]) for _, c in rows))
    lines.append(("bold", f"  {'':<{w0}}  {'original':<{w1}}  fixed"))
    for name, cells in rows:
        style = "" if len(set(cells)) == 1 else "bold"
        lines.append((style, f"  {name:<{w0}}  {cells[0]:<{w1}}  {cells[1] if len(cells) > 1 else ''}"))
    return lines


def text_lines(reports: list[RunReport], compare: dict | None) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    for rep in reports:
        lines += run_lines(rep)
        lines.append(("", ""))
    if compare is not None:
        if compare.get("available") and len(reports) > 1:
            lines += compare_lines(reports, compare)
        else:
            lines.append(("bold yellow", f"compare-fix: {compare.get('reason')}"))
        lines.append(("", ""))
    return lines


def render_text(reports: list[RunReport], compare: dict | None, documents: dict, summary: dict,
                quiet: bool = False) -> str:
    from ..report.text import render

    head = "" if quiet else "\n".join(t for _, t in text_lines(reports, compare)) + "\n"
    return head + render(reports[0].diagnostics, documents, summary, quiet=quiet)


def print_rich(reports: list[RunReport], compare: dict | None, documents: dict, summary: dict,
               quiet: bool = False) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ..report.text import render_color

    console = Console(highlight=False, soft_wrap=True)
    if not quiet:
        for rep in reports:
            for style, text in run_lines(rep):  # style None: rich's no style (its annotation says str | Style)
                console.print(Text(text, style=style or None))  # type: ignore[arg-type]
            console.print()
        if compare is not None and compare.get("available") and len(reports) > 1:
            for style, text in compare_lines(reports, compare)[: 1 + len(compare.get("applied", []))]:
                console.print(Text(text, style=style or None))  # type: ignore[arg-type]
            table = Table(show_header=True, header_style="bold")
            table.add_column("")
            table.add_column("original")
            table.add_column("fixed")
            for name, cells in compare_rows(reports):
                table.add_row(name, *cells, style=None if len(set(cells)) == 1 else "bold")
            console.print(table)
        elif compare is not None:
            console.print(Text(f"compare-fix: {compare.get('reason')}", style="bold yellow"))
    console.file.flush()
    sys.stdout.write(render_color(reports[0].diagnostics, documents, summary, quiet=quiet))


def render_json(reports: list[RunReport], compare: dict | None, summary: dict) -> str:
    from ..report.json_format import render

    payload = json.loads(render(reports[0].diagnostics, summary))
    payload["verify"] = verify_json(reports, compare)  # the single-config object, as before
    payload["verifications"] = [payload["verify"]]  # one shape for one config and for many (docs/verify.md)
    return json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n"


def render_sarif(reports: list[RunReport], compare: dict | None, documents: dict, summary: dict) -> str:
    from ..report.sarif import build

    log = build(reports[0].diagnostics, documents, summary)
    log["runs"][0].setdefault("properties", {})["verify"] = verify_json(reports, compare)
    return json.dumps(log, indent=2, ensure_ascii=False, default=str) + "\n"


# -- several configs (zerolint verify A.json B.json ...) -------------------------------------------------------------

def verdict_rows(reports: list[RunReport]) -> list[tuple[str, str, str, str]]:
    """(config, verdict, where, time) per config: the table at the end of a multi-config verify."""
    rows = []
    for rep in reports:
        v, rec = verdict(rep), rep.record
        where = (f"{rep.mapped.stage}: line {d.line} {d.code}" if rep.mapped and (d := next(
            (x for x in rep.verify if x.code == codes.FAILED.code), None)) else
                 rep.mapped.stage if rep.mapped else
                 ", ".join(sorted({d.code for d in rep.verify})) if v != "pass" and rep.verify else "")
        time = "cached" if rep.cached else f"{rec.get('wall_s') or 0:.1f} s"
        rows.append((rep.path, v, where, time))
    return rows


def verdict_table(reports: list[RunReport]) -> list[str]:
    rows = [("config", "verdict", "where", "time"), *verdict_rows(reports)]
    widths = [max(len(r[k]) for r in rows) for k in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    verdicts = [r[1] for r in rows[1:]]
    lines.append(", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts)) + f" of {len(verdicts)} "
                 f"config{'s' if len(verdicts) != 1 else ''}")
    return lines


def render_many_text(reports: list[RunReport], diagnostics: list, documents: dict, summary: dict,
                     quiet: bool = False) -> str:
    """Each config's verify section, every finding as check prints them, then the table of verdicts."""
    from ..report.text import render

    head = "" if quiet else "\n".join(t for rep in reports for _, t in [*run_lines(rep), ("", "")]) + "\n"
    return head + render(diagnostics, documents, summary, quiet=quiet) + "\n" + "\n".join(verdict_table(reports)) + "\n"


def many_payload(reports: list[RunReport], diagnostics: list, summary: dict) -> dict:
    """The check payload over every config, with `verify` a list: one verify object (as for one config) each."""
    from ..report.json_format import render

    payload = json.loads(render(diagnostics, summary))
    payload["verify"] = [verify_json([rep], None) for rep in reports]
    payload["verifications"] = payload["verify"]  # one shape for one config and for many (docs/verify.md)
    return payload


def render_many_json(reports: list[RunReport], diagnostics: list, summary: dict) -> str:
    return json.dumps(many_payload(reports, diagnostics, summary), indent=2, ensure_ascii=False, default=str) + "\n"


def render_many_sarif(reports: list[RunReport], diagnostics: list, documents: dict, summary: dict) -> str:
    from ..report.sarif import build

    log = build(diagnostics, documents, summary)
    log["runs"][0].setdefault("properties", {})["verify"] = [verify_json([rep], None) for rep in reports]
    return json.dumps(log, indent=2, ensure_ascii=False, default=str) + "\n"
