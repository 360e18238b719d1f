"""`--output-format gitlab`: GitLab Code Quality JSON (a merge request widget and diff annotations).

An array of issues with the fields GitLab documents as required (ci/testing/code_quality: "Code Quality report
format"): `description`, `check_name`, `fingerprint` (unique in the report), `severity` (info, minor, major,
critical or blocker) and `location.path` with `location.lines.begin`. An error (DeepSpeed fails or misbehaves) is
`major`, a warning `minor`, an info `info`. The fingerprint hashes the file, code and JSON pointer, not the line, so
an issue keeps its identity when lines move (a repeat of the same triple gets its occurrence number)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Sequence

from ..base.escape import json_safe, safe
from ..base.paths import display_path
from ..model.diagnostics import Diagnostic
from ..model.document import Document

SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def issues(diagnostics: Sequence[Diagnostic]) -> list[dict[str, Any]]:
    out = []
    seen: dict[str, int] = {}
    for d in diagnostics:
        path = display_path(d.file)
        key = "\0".join((path, d.code, d.pointer))
        n = seen[key] = seen.get(key, 0) + 1
        if n > 1:
            key += f"\0{n}"
        out.append({
            "description": f"{d.code} {safe(d.message)}",
            "check_name": d.code,
            "fingerprint": hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest(),
            "severity": SEVERITY[d.severity.value],
            "location": {"path": path, "lines": {"begin": d.line, "end": max(d.line, d.end_line)}},
            "categories": [category(d)],
        })
    return out


def category(d: Diagnostic) -> str:
    """GitLab's category: "Bug Risk" for an error or any claim that DeepSpeed fails, "Performance" for the memory
    rules (ZL8xx), "Style" for the rest (hjson-only syntax, defaults written down, ...)."""
    if d.severity.value == "error" or d.fails_at is not None:
        return "Bug Risk"
    return "Performance" if d.code.startswith("ZL8") else "Style"


def render(diagnostics: Sequence[Diagnostic], documents: Mapping[str, Document], summary: dict) -> str:
    return json_safe(json.dumps(issues(diagnostics), indent=2, ensure_ascii=False)) + "\n"
