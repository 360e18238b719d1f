from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Everything the tests read is in the repository (tests/data/README.md says where each file came from).
DATA = ROOT / "tests" / "data"
CORPUS = DATA / "corpus" / "real-world"
SARIF_SCHEMA = DATA / "sarif-2.1.0.json"
SEED = ROOT / "fixtures" / "examples" / "seed"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


# --- hypothesis: deterministic in CI, randomized on request ------------------------------------------------------
# "ci" (the default, and always when CI=true): the same examples on every run, no example database written
# anywhere, no deadline (a loaded 2-core machine is slow, not wrong), and a failure prints the blob that replays it.
# "random" (HYPOTHESIS_PROFILE=random, outside CI): fresh examples each run and more of them, for longer runs.
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # the test files that need hypothesis fail at import, which fails the run
    pass
else:
    _hypothesis_settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
    _hypothesis_settings.register_profile("random", derandomize=False, database=None, deadline=None,
                                          print_blob=True, max_examples=1000)
    HYPOTHESIS_PROFILE = "ci" if in_ci() else os.environ.get("HYPOTHESIS_PROFILE", "ci")
    _hypothesis_settings.load_profile(HYPOTHESIS_PROFILE)
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        # hypothesis still keeps caches (the unicode tables): outside the tree, not in ./.hypothesis
        from hypothesis.configuration import set_hypothesis_home_dir

        user = getattr(os, "getuid", lambda: "user")()
        set_hypothesis_home_dir(Path(tempfile.gettempdir()) / f"zerolint-hypothesis-{user}")


# --- oracles: a missing one skips on a developer's machine, and fails the run when CI=true -----------------------

def missing(reason: str):
    """Stop this test because an oracle (deepspeed, torch, jsonschema, git, the corpus...) is missing."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a missing oracle fails the run instead of skipping)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require(module: str):
    """`pytest.importorskip` that fails under CI=true."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        missing(f"{module} is not importable: {e}")


def oracle(absent: bool, reason: str) -> pytest.MarkDecorator:
    """The `skipif` of a missing oracle, for marks: `pytestmark = oracle(find_spec("deepspeed") is None, "...")`."""
    return pytest.mark.oracle(absent=absent, reason=reason)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    for mark in item.iter_markers("oracle"):
        if mark.kwargs["absent"]:
            missing(mark.kwargs["reason"])


def run_cli(*args: str, input: bytes | None = None, cwd: Path | None = None, env: dict | None = None):
    """Run `python -m zerolint ...` in a fresh process, the way users and CI do."""
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", **(env or {})}
    full_env.pop("GITHUB_ACTIONS", None) if env is None or "GITHUB_ACTIONS" not in env else None
    return subprocess.run([sys.executable, "-m", "zerolint", *args], input=input, capture_output=True,
                          cwd=cwd or ROOT, env=full_env)


@pytest.fixture
def corpus_files() -> list[Path]:
    files = sorted(CORPUS.glob("*.json"))
    if not files:
        missing(f"the real-world corpus is not at {CORPUS}")
    return files
