"""`pip install .` (not editable) must ship everything the engine reads: rules, schemas, rule cases."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import missing

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


def _tracked(*folders: str) -> set[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--", *folders], cwd=ROOT, capture_output=True, check=True).stdout
    return {p for p in out.decode().split("\0") if p and (ROOT / p).is_file()}


def test_sdist_carries_its_tests_and_license(tmp_path):
    """The sdist runs its own tests: every tracked file under tests/, fixtures/, docs/, scripts/, benchmarks/,
    playground/ and editors/ is in it (their node_modules never), with the LICENSE; setuptools builds it without a
    license-format warning."""
    import tarfile

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        missing("not a git checkout: the tracked files cannot be listed")
    out = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
                        "print(b.build_sdist(sys.argv[1]))", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "license" not in r.stderr.lower(), r.stderr  # SetuptoolsDeprecationWarning on `license = {text=...}`
    from zerolint.base.version import __version__

    sdist = out / r.stdout.strip().splitlines()[-1]
    assert sdist.name == f"zerolint-{__version__}.tar.gz"
    prefix = f"zerolint-{__version__}/"
    with tarfile.open(sdist) as tar:
        names = {n[len(prefix):] for n in tar.getnames() if n.startswith(prefix)}
        pkg_info = tar.extractfile(prefix + "PKG-INFO").read().decode()
    expected = _tracked("tests", "fixtures", "docs", "scripts", "benchmarks", "playground", "editors")
    assert len(expected) > 100
    assert sorted(expected - names) == []
    assert {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "action.yml", ".pre-commit-hooks.yaml",
            ".github/workflows/release.yml"} <= names
    assert "License-Expression: Apache-2.0" in pkg_info and "License-File: LICENSE" in pkg_info
    assert not any("__pycache__" in n or "node_modules" in n for n in names)


def test_snippets_name_refs_that_exist():
    """The README's and the docs' install lines, pre-commit `rev:` and `uses: zerolint/zerolint@REF` name `main`
    or a tag the repository has (no release tag exists until the release workflow makes one)."""
    import re

    tags = set(subprocess.run(["git", "tag"], capture_output=True, text=True, cwd=ROOT).stdout.split())
    files = [ROOT / "README.md", ROOT / ".pre-commit-hooks.yaml", *(ROOT / "docs").glob("*.md")]
    found = []
    for f in files:
        text = f.read_text("utf-8")
        found += [(f.name, ref) for ref in re.findall(r"(?:zerolint/zerolint@|github\.com/zerolint/zerolint@|rev: )"
                                                      r"([\w.\-/]+)", text)]
    assert found
    bad = [(name, ref) for name, ref in found if ref != "main" and ref not in tags]
    assert not bad, f"refs that do not exist: {bad}"


def test_the_release_workflow_builds_checks_and_publishes_with_trusted_publishing():
    import yaml

    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text("utf-8"))
    assert flow[True]["push"]["tags"] == ["v*"]  # (YAML 1.1 reads `on` as true)
    build, publish = flow["jobs"]["build"], flow["jobs"]["publish"]
    run = "\n".join(step.get("run", "") for step in build["steps"])
    assert "python -m build" in run and "twine check --strict" in run and "$GITHUB_REF_NAME" in run
    assert publish["needs"] == "build" and publish["permissions"] == {"id-token": "write"}
    assert publish["steps"][-1]["uses"] == "pypa/gh-action-pypi-publish@release/v1"
    assert "password" not in str(publish)  # no stored token
