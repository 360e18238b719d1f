"""The pre-commit hooks, for real: `pre-commit try-repo` against this checkout installs zerolint into pre-commit's
own virtualenv (pip, from the repository at HEAD) and runs the hook on a throw-away repository holding the seed's
broken config. Needs git, pre-commit (the test extra) and a package index for pip (PyPI, as in CI)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, SEED, missing

pytestmark = pytest.mark.slow

FIXED = {
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 4,
    "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": True}},
    "bf16": {"enabled": True},
    "gradient_clipping": 1.0,
}


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    if shutil.which("git") is None:
        missing("git is not installed")
    try:
        _git("rev-parse", "--git-dir", cwd=ROOT)
    except subprocess.CalledProcessError:
        missing(f"{ROOT} is not a git checkout: try-repo needs one")
    if subprocess.run([sys.executable, "-m", "pre_commit", "--version"], capture_output=True).returncode != 0:
        missing("pre-commit is not installed (pip install -e '.[test]')")
    return tmp_path_factory.mktemp("pre-commit-home")


def _user_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "user-project"
    (repo / "configs").mkdir(parents=True)
    shutil.copy(SEED / "ds_offload_broken.json", repo / "configs" / "ds_config.json")
    (repo / "configs" / "notes.json").write_text('{"title": "release notes", "items": ["faster"]}\n', "utf-8")
    _git("init", "-q", cwd=repo)
    _git("add", ".", cwd=repo)
    return repo


def _try_repo(repo: Path, hook: str, home: Path) -> subprocess.CompletedProcess:
    # HEAD of this checkout: the committed hook definitions and package (try-repo would otherwise build a shadow
    # repository from the uncommitted changes of whoever shares the working tree).
    head = _git("rev-parse", "HEAD", cwd=ROOT)
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), hook, "--ref", head,
                           "--all-files", "--color", "never"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=900)


def test_zerolint_hook_fails_on_the_broken_config_then_passes_after_the_fix(tmp_path, pre_commit_home):
    repo = _user_repo(tmp_path)
    r = _try_repo(repo, "zerolint", pre_commit_home)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "configs/ds_config.json:7:5: error ZL101 [misplaced-key]" in out, out
    # not a DeepSpeed config: judged by content (--only-configs), skipped, and listed with the reason
    assert "1 file skipped (not DeepSpeed configs; listed below).\n" in out, out
    assert "skipped: configs/notes.json: not a DeepSpeed config: 0 of 2 top-level keys are DeepSpeed's\n" in out, out

    (repo / "configs" / "ds_config.json").write_text(json.dumps(FIXED, indent=4) + "\n", "utf-8")
    _git("add", ".", cwd=repo)
    r = _try_repo(repo, "zerolint", pre_commit_home)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"zerolint\.+Passed", r.stdout), r.stdout


def test_zerolint_fix_hook_rewrites_the_file(tmp_path, pre_commit_home):
    repo = _user_repo(tmp_path)
    before = (repo / "configs" / "ds_config.json").read_text()
    r = _try_repo(repo, "zerolint-fix", pre_commit_home)
    after = (repo / "configs" / "ds_config.json").read_text()
    assert r.returncode == 1, r.stdout + r.stderr  # files were modified (and ZL101 may remain)
    assert after != before
    json.loads(after)  # the missing comma is fixed: json.load (HF, Accelerate) reads it now


def test_hooks_take_json_hjson_and_yaml_and_judge_them_by_content():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    patterns = {h["id"]: h["files"] for h in hooks}
    assert set(patterns) == {"zerolint", "zerolint-fix"} and len(set(patterns.values())) == 1
    assert all(h["entry"].startswith("zerolint check --only-configs") for h in hooks)
    pattern = re.compile(patterns["zerolint"])
    for name in ("ds_config.json", "configs/ds_config_zero3.json", "a/b/zero2.json", "train.hjson",
                 "config.json", "accelerate/default_config.yaml", "deepspeed.yml"):
        assert pattern.search(name), name
    for name in ("scripts/run.sh", "train.py", "job.slurm"):  # launchers: they bring the configs they use
        assert pattern.search(name), name
    for name in ("README.md", "ds_config.json.bak", "notes.txt"):
        assert not pattern.search(name), name
