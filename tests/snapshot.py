"""Tiny snapshot helper: compare text with tests/snapshots/<name>; ZEROLINT_UPDATE_SNAPSHOTS=1 rewrites."""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "snapshots"


def assert_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("ZEROLINT_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        if os.environ.get("ZEROLINT_UPDATE_SNAPSHOTS") != "1":
            raise AssertionError(f"snapshot {name} did not exist; written — review it and re-run")
        return
    expected = path.read_text("utf-8")
    assert text == expected, f"snapshot {name} differs (ZEROLINT_UPDATE_SNAPSHOTS=1 to accept after review)"
