"""`--format json`: the stable machine contract (see docs/json-format.md)."""

from __future__ import annotations

import json
from typing import Sequence

from ..base.escape import json_safe
from ..model.diagnostics import Diagnostic

SCHEMA_VERSION = 1


def render(diagnostics: Sequence[Diagnostic], summary: dict) -> str:
    from ..base.version import __version__

    payload = {
        "version": SCHEMA_VERSION,
        "tool": {"name": "zerolint", "version": __version__},
        "summary": summary,
        "diagnostics": [d.to_json() for d in diagnostics],
    }
    return json_safe(json.dumps(payload, indent=2, ensure_ascii=False)) + "\n"
