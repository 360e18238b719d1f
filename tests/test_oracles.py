"""The test suite's own guarantees (tests/conftest.py): a missing oracle fails the run when CI=true and skips
otherwise; hypothesis runs the deterministic "ci" profile unless asked for "random", and always in CI."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT, missing, require

NO_SUCH_MODULE = "zerolint_no_such_oracle_module"


def _env(**changes: str | None) -> dict:
    env = {**os.environ}
    for key, value in changes.items():
        env.pop(key, None) if value is None else env.__setitem__(key, value)
    return env


def test_missing_oracle_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"^jsonschema is gone \(CI=true: a missing oracle fails"):
        missing("jsonschema is gone")
    with pytest.raises(pytest.fail.Exception, match=rf"^{NO_SUCH_MODULE} is not importable: No module named"):
        require(NO_SUCH_MODULE)


def test_missing_oracle_skips_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=rf"^{NO_SUCH_MODULE} is not importable: No module named"):
        require(NO_SUCH_MODULE)
    assert require("json").loads("[1]") == [1]  # present: the module itself


# The differential tests without deepspeed: `sys.modules["deepspeed"] = None` makes find_spec() None and any
# import fail, as on a machine where the install failed.
RUN_WITHOUT_DEEPSPEED = (
    "import sys; sys.modules['deepspeed'] = None; import pytest; "
    "sys.exit(pytest.main(['-p', 'no:cacheprovider', '-q', '-rfEs', 'tests/differential/test_differential.py']))"
)


def test_differential_without_deepspeed_fails_the_run_under_ci():
    r = subprocess.run([sys.executable, "-c", RUN_WITHOUT_DEEPSPEED], cwd=ROOT, capture_output=True, text=True,
                       env=_env(CI="true"), timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "deepspeed (CPU build) not installed (CI=true: a missing oracle fails the run instead of skipping)" in out
    assert " passed" not in out and " skipped" not in out, out


def test_differential_without_deepspeed_skips_outside_ci():
    r = subprocess.run([sys.executable, "-c", RUN_WITHOUT_DEEPSPEED], cwd=ROOT, capture_output=True, text=True,
                       env=_env(CI=None), timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "SKIPPED" in out and "deepspeed (CPU build) not installed" in out, out
    assert " failed" not in out and " error" not in out, out


PROFILE = (
    "import sys; sys.path.insert(0, 'tests'); import conftest; from hypothesis import settings; "
    "s = settings.default; print(conftest.HYPOTHESIS_PROFILE, s.derandomize, s.database, s.deadline, s.max_examples)"
)


@pytest.mark.parametrize("ci, requested, expected", [
    (None, None, "ci True None None 100"),
    (None, "random", "random False None None 1000"),
    ("true", "random", "ci True None None 100"),  # CI is always deterministic
])
def test_hypothesis_profile(ci, requested, expected):
    r = subprocess.run([sys.executable, "-c", PROFILE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env=_env(CI=ci, HYPOTHESIS_PROFILE=requested))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == expected
