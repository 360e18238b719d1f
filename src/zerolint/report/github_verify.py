"""`zerolint verify` in the GitHub Action: its JSON report (one config or several) as a verdict table for
$GITHUB_STEP_SUMMARY and its own findings (ZL990-ZL999) as annotations at the key. The static findings are the
check step's annotations already, so they are not repeated here. Text from configs goes through `safe()` and the
runner's escapes (report/github.py)."""

from __future__ import annotations

import html

from ..base.escape import markdown_inert, safe
from .github import COMMAND, escape_data, escape_property

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from collections.abc import Sequence

VERIFY_CODES = tuple(f"ZL99{i}" for i in range(10))
ICON = {"pass": ":white_check_mark:", "skip": ":warning:"}


def entries(payload: dict) -> list[dict]:
    """The verify objects: a list for several configs, one object for one."""
    v = payload.get("verify")
    return v if isinstance(v, list) else [v] if isinstance(v, dict) else []


def verify_diagnostics(payload: dict) -> list[dict]:
    return [d for d in payload.get("diagnostics", []) if d.get("code") in VERIFY_CODES]


def where(entry: dict, diagnostics: list[dict]) -> str:
    """Where a config failed: the stage and the key's line, or the verify codes it got."""
    run = (entry.get("runs") or [{}])[0]
    failure = run.get("failure")
    if failure:
        line = f" (line {failure['line']})" if failure.get("line") else ""
        return f"{failure.get('stage') or '?'}{line}: {failure.get('message') or ''}".strip()
    own = sorted({d["code"] for d in diagnostics if d.get("file") == entry.get("file")})
    if entry.get("verdict") != "pass" and own:
        return ", ".join(own)
    return run.get("reason") or ""


def _time(run: dict) -> str:
    if run.get("cached"):
        return "cached"
    wall = (run.get("timings") or {}).get("wall_s")
    return f"{wall:.1f} s" if isinstance(wall, (int, float)) else ""


def _cell(text: str) -> str:
    return markdown_inert(html.escape(safe(str(text)), quote=False)).replace("|", "\\|").replace("\n", "<br>")


def step_summary(payload: dict, not_verified: Sequence[tuple[str, str]] = ()) -> str:
    """A Markdown section: the device, a row per config (verdict, where, time), the counts, and the candidates that
    were not verified (an Accelerate YAML, say) with the reason."""
    rows = entries(payload)
    own = verify_diagnostics(payload)
    lines = ["## zerolint verify", ""]
    first = (rows[0].get("runs") or [{}])[0] if rows else {}
    versions = first.get("versions") or {}
    if first:
        device = first.get("device_name") or first.get("accelerator") or "?"
        lines += [f"DeepSpeed {versions.get('deepspeed', '?')}, torch {versions.get('torch', '?')} on "
                  f"{_cell(device)}: `deepspeed.initialize` and {first.get('steps') or '?'} optimizer steps on a tiny "
                  f"model per config.", ""]
    if rows:
        lines += ["| Config | Verdict | Where | Time |", "| --- | --- | --- | --- |"]
        for e in rows:
            v = e.get("verdict", "?")
            lines.append(f"| {_cell(e.get('file', '?'))} | {ICON.get(v, ':x:')} {_cell(v)} | "
                         f"{_cell(where(e, own))} | {_time((e.get('runs') or [{}])[0])} |")
        verdicts = [e.get("verdict", "?") for e in rows]
        lines += ["", ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
                  + f" of {len(rows)} config{'s' if len(rows) != 1 else ''}.", ""]
    else:
        lines += ["No DeepSpeed config to verify.", ""]
    if not_verified:
        lines += ["Not verified:", ""] + [f"- {_cell(path)}: {_cell(why)}" for path, why in not_verified] + [""]
    return "\n".join(lines) + "\n"


def annotations(payload: dict) -> str:  # type: ignore[no-redef]  # the name of the __future__ import, rebound
    """verify's own findings as workflow commands, at the line and column of the key responsible."""
    out = []
    for d in verify_diagnostics(payload):
        props = {"file": d.get("file", ""), "line": d.get("line"), "col": d.get("column"), "endLine": d.get("end_line"),
                 "endColumn": d.get("end_column"), "title": f"{d['code']} {d.get('name')}"}
        head = ",".join(f"{k}={escape_property(safe(str(v)))}" for k, v in props.items() if v is not None)
        body = safe(d.get("message") or "") + (f"\nhelp: {safe(d['help'])}" if d.get("help") else "")
        # a missing severity (None) is no key of COMMAND: 'error'
        out.append(f"::{COMMAND.get(d.get('severity'), 'error')} {head}::{escape_data(body)}\n")  # type: ignore[arg-type]
    return "".join(out)
