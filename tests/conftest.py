from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "real-world"
SEED = ROOT / "fixtures" / "examples" / "seed"


def run_cli(*args: str, input: bytes | None = None, cwd: Path | None = None, env: dict | None = None):
    """Run `python -m zerolint ...` in a fresh process, the way users and CI do."""
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", **(env or {})}
    full_env.pop("GITHUB_ACTIONS", None) if env is None or "GITHUB_ACTIONS" not in env else None
    return subprocess.run([sys.executable, "-m", "zerolint", *args], input=input, capture_output=True,
                          cwd=cwd or ROOT, env=full_env)


@pytest.fixture
def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        pytest.skip(f"real-world corpus not found at {CORPUS}")
    return sorted(CORPUS.glob("*.json"))
