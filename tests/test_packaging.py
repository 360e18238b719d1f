"""`pip install .` (not editable) must ship everything the engine reads: rules, schemas, rule cases."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True)
    return next(out.glob("zerolint-*.whl"))


def test_wheel_contains_engine_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    pkg = ROOT / "src" / "zerolint"
    rule_files = {p.name for p in (pkg / "rules" / "builtin").glob("zl*.py")}
    assert rule_files and all(f"zerolint/rules/builtin/{f}" in names for f in rule_files)
    schemas = list((pkg / "data" / "schemas").glob("deepspeed-*.json"))
    assert schemas and all(f"zerolint/data/schemas/{s.name}" in names for s in schemas)
    cases = list((pkg / "data" / "rule_cases").glob("ZL*.toml"))
    assert cases and all(f"zerolint/data/rule_cases/{c.name}" in names for c in cases)
    assert not any(n.startswith(("tests/", "src/", "rules/", "schemas/", "fixtures/")) for n in names)


def test_installed_wheel_checks_a_config(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    # Run outside the checkout so the source tree cannot stand in for the installed package.
    r = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "json",
                        str(ROOT / "fixtures/examples/seed/ds_offload_param_stage2.json")],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    assert '"code": "ZL201"' in r.stdout
    r = subprocess.run([sys.executable, "-c", "import zerolint.cli, zerolint.rules.ruleset as r; print(r.__file__); "
                        "print(len(r.RuleSet.builtin().rules))"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert str(target) in r.stdout, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "zerolint", "rule", "ZL201"], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert "## Bad" in r.stdout, r.stderr
