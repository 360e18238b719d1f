"""Issue 25, item 4: the Python API as its users' type checkers and `except` clauses see it. A user-style module
passes `mypy --strict` against the installed package (py.typed; zerolint's own modules are not checked here), and
a misspelt keyword is a type error, not a run-time one; text and path are told apart explicitly; every error
zerolint raises for bad input is a ZerolintError."""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import zerolint

ROOT = Path(__file__).resolve().parents[1]
USER = '''from __future__ import annotations

import zerolint
from zerolint import Diagnostic, Severity, ZerolintError


def main() -> int:
    found: list[Diagnostic] = zerolint.lint_path("ds.json", target="hf", world_size=8)
    found += zerolint.lint_text('{"train_batch_size": 8}', deepspeed_version="0.19.8")
    found += zerolint.lint({"train_batch_size": 8}, select=["ZL4"])
    try:
        zerolint.check_or_raise(config={"train_batch_size": 8}, world_size=8, fail_on="warning")
    except zerolint.DeepSpeedConfigError as e:
        found += e.diagnostics
    except ZerolintError as e:
        print(e)
    return sum(1 for d in found if d.code.startswith("ZL5") and d.severity is Severity.ERROR)
'''
TYPOS = '''import zerolint

zerolint.lint("ds.json", taget="hf")
zerolint.check_or_raise(config="ds.json", wrld_size=8)
'''


def mypy(tmp_path: Path, name: str, text: str) -> subprocess.CompletedProcess:
    if shutil.which("mypy") is None and not (Path(sys.executable).parent / "mypy").exists():
        pytest.fail("mypy is not installed (scripts/test.sh installs it with the test extra)")
    (tmp_path / name).write_text(text)
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
                           "--cache-dir", str(tmp_path / "cache"), name], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)


def test_a_user_module_passes_mypy_strict(tmp_path):
    r = mypy(tmp_path, "user.py", USER)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "Success: no issues found in 1 source file"


def test_a_misspelt_keyword_is_a_type_error(tmp_path):
    r = mypy(tmp_path, "typos.py", TYPOS)
    errors = [line for line in r.stdout.splitlines() if ": error: " in line]
    assert errors == [
        'typos.py:3: error: Unexpected keyword argument "taget" for "lint"; did you mean "target"?  [call-arg]',
        'typos.py:4: error: Unexpected keyword argument "wrld_size" for "check_or_raise"; did you mean '
        '"world_size"?  [call-arg]']
    with pytest.raises(TypeError, match="taget"):  # and at run time, before anything is read
        zerolint.lint("ds.json", taget="hf")


def test_the_package_is_typed_and_names_its_api():
    assert (ROOT / "src" / "zerolint" / "py.typed").is_file()
    for name in zerolint.__all__:
        assert getattr(zerolint, name) is not None
    for name in ("lint", "lint_text", "lint_path", "check_or_raise"):
        params = inspect.signature(getattr(zerolint, name)).parameters.values()
        assert all(p.kind is not p.VAR_KEYWORD for p in params), name  # no **kwargs to hide a typo


def test_every_error_for_bad_input_is_a_zerolint_error(tmp_path):
    assert all(issubclass(getattr(zerolint, n), zerolint.ZerolintError)
               for n in ("DeepSpeedConfigError", "UnreadableFile", "ConfigError", "TrainingArgsError"))
    assert issubclass(zerolint.DeepSpeedConfigError, ValueError) and issubclass(zerolint.TrainingArgsError, ValueError)
    with pytest.raises(zerolint.UnreadableFile, match="no such file"):
        zerolint.lint_path(tmp_path / "missing.json")
    with pytest.raises(zerolint.TrainingArgsError):
        zerolint.lint({"train_batch_size": 8}, training_args={"per_device_train_batch_size": "eight"})
    with pytest.raises(zerolint.DeepSpeedConfigError) as e:
        zerolint.check_or_raise(config={"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4,
                                        "gradient_accumulation_steps": 1}, target="deepspeed", world_size=4)
    assert [d.code for d in e.value.diagnostics if d.severity is zerolint.Severity.ERROR] == ["ZL402"]


def test_text_and_path_are_told_apart():
    commented = '// the run of 2026-12-01\n{"train_batch_size": "16"}'
    assert [d.code for d in zerolint.lint(commented) if d.severity.value == "error"] == ["ZL104"]  # text, not a path
    assert zerolint.lint_text(commented) == zerolint.lint(commented)
    assert [d.code for d in zerolint.lint_text(b'{"train_batch_size": "16"}') if d.severity.value == "error"] == [
        "ZL104"]
    with pytest.raises(zerolint.UnreadableFile):
        zerolint.lint_path('{"train_batch_size": 16}')  # a path, whatever it looks like
