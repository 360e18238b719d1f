"""The GitHub Action (action.yml): valid metadata, and its run steps executed with bash in a simulated GitHub
environment (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_BASE_REF, a pull request in a temporary git repository).
`uses:` steps (setup-python, upload-sarif) and the install step are GitHub's part and are not run here."""

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

from conftest import ROOT, SEED

ACTION = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
STEPS = {s.get("id") or s["name"]: s for s in ACTION["runs"]["steps"]}
CLEAN = (SEED / "ds_zero2.json").read_text()
BROKEN = (SEED / "ds_offload_broken.json").read_text()


def test_action_metadata_validates_against_the_schemastore_schema():
    import jsonschema

    schema = json.loads((ROOT / "tests" / "data" / "github-action.schema.json").read_text("utf-8"))
    jsonschema.validators.validator_for(schema).check_schema(schema)
    errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(ACTION))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) >= {"files", "fail-on", "target", "world-size", "deepspeed-version", "sarif"}
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert step.get("shell") == "bash"
            # inputs reach scripts through env, never pasted into the script (no script injection)
            assert "${{" not in step["run"], step["name"]


def test_action_uses_the_pre_commit_hook_pattern():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    pattern = re.search(r"pattern='([^']+)'", STEPS["files"]["run"]).group(1)
    assert {h["files"] for h in hooks} == {pattern}


def _git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.fixture
def pull_request(tmp_path):
    """A repository whose `main` is on a bare origin and whose checked-out branch is a pull request that changes
    configs/ds_config.json (now broken), adds zero3.json (broken), and touches a file that is not a config. A broken
    config the PR does not touch, legacy/ds_config_old.json, must not be linted."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    _git("init", "-q", "--bare", str(origin), cwd=tmp_path)
    _git("init", "-q", "-b", "main", str(work), cwd=tmp_path)
    (work / "configs").mkdir()
    (work / "legacy").mkdir()
    (work / "configs" / "ds_config.json").write_text(CLEAN)
    (work / "legacy" / "ds_config_old.json").write_text(BROKEN)
    (work / "README.md").write_text("hello\n")
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "base", cwd=work)
    _git("remote", "add", "origin", str(origin), cwd=work)
    _git("push", "-q", "origin", "main", cwd=work)
    _git("checkout", "-q", "-b", "feature", cwd=work)
    (work / "configs" / "ds_config.json").write_text(BROKEN)
    (work / "zero3.json").write_text(BROKEN.replace('"stage": 2', '"stage": 3'))
    (work / "README.md").write_text("hello again\n")
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "pr", cwd=work)
    _git("branch", "-q", "-D", "main", cwd=work)  # like a CI checkout: only origin/main, fetched by the action
    _git("update-ref", "-d", "refs/remotes/origin/main", cwd=work)
    return work


class Runner:
    """Runs the action's `run:` steps the way the runner does (`shell: bash` is `bash --noprofile --norc -eo pipefail
    {0}`), with `${{ inputs.* }}` and `${{ steps.*.outputs.* }}` substituted in the step's env."""

    def __init__(self, workspace: Path, tmp: Path, inputs: dict[str, str], base_ref: str = "") -> None:
        self.workspace, self.tmp = workspace, tmp
        self.inputs = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()} | inputs
        self.outputs: dict[str, dict[str, str]] = {}
        self.summary = tmp / "summary.md"
        self.base_ref = base_ref

    def expr(self, text: str) -> str:
        def value(m):
            kind, *rest = m.group(1).strip().split(".")
            if kind == "inputs":
                return self.inputs[rest[0]]
            if kind == "steps":
                return self.outputs.get(rest[0], {}).get(rest[2], "")
            raise AssertionError(f"unexpected expression {m.group(1)}")
        return re.sub(r"\$\{\{(.*?)\}\}", value, str(text))

    def run(self, step_id: str) -> subprocess.CompletedProcess:
        step = STEPS[step_id]
        output_file = self.tmp / f"output-{step_id}"
        output_file.write_text("")
        script = self.tmp / f"{step_id}.sh"
        script.write_text(step["run"])
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "ZL_"))}
        env.update({
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            "GITHUB_ACTIONS": "true", "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_OUTPUT": str(output_file), "GITHUB_STEP_SUMMARY": str(self.summary),
            "RUNNER_TEMP": str(self.tmp), "NO_COLOR": "1",
        })
        if self.base_ref:
            env["GITHUB_BASE_REF"] = self.base_ref
        env.update({k: self.expr(v) for k, v in step.get("env", {}).items()})
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=self.workspace,
                           env=env, capture_output=True, text=True, timeout=300)
        self.outputs[step_id] = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if line)
        return r


def test_pull_request_lints_only_the_changed_configs(pull_request, tmp_path):
    runner = Runner(pull_request, tmp_path, {"sarif": "zerolint.sarif"}, base_ref="main")
    r = runner.run("files")
    assert r.returncode == 0, r.stderr
    assert runner.outputs["files"]["count"] == "2"
    r = runner.run("run")
    assert r.returncode == 0, r.stderr
    annotated = sorted({m.group(1) for m in re.finditer(r"^::\w+ file=([^,]+),", r.stdout, re.M)})
    assert annotated == ["configs/ds_config.json", "zero3.json"]
    assert "::error file=configs/ds_config.json,line=7,col=5," in r.stdout
    assert runner.outputs["run"] == {"sarif": "zerolint.sarif", "exit-code": "1"}
    sarif = json.loads((pull_request / "zerolint.sarif").read_text())
    uris = {res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for res in sarif["runs"][0]["results"]}
    assert uris == {"configs/ds_config.json", "zero3.json"}
    summary = runner.summary.read_text()
    assert summary.startswith("## zerolint") and "zero3.json" in summary
    fail = runner.run("Fail on findings")
    assert fail.returncode == 1


def test_files_input_and_inputs_reach_zerolint(pull_request, tmp_path):
    runner = Runner(pull_request, tmp_path, {"files": "legacy/*.json\n  configs", "fail-on": "warning",
                                             "target": "hf", "world-size": "8", "deepspeed-version": "0.19.8"})
    assert runner.run("files").returncode == 0
    assert runner.outputs["files"]["count"] == "2"
    r = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "1", r.stdout + r.stderr
    assert "file=legacy/ds_config_old.json" in r.stdout and "file=configs/ds_config.json" in r.stdout
    # target hf: json.load rejects the missing comma, so ZL002 is an error
    assert "::error file=legacy/ds_config_old.json,line=8,col=5" in r.stdout


def test_push_without_a_pull_request_lints_every_tracked_config(pull_request, tmp_path):
    runner = Runner(pull_request, tmp_path, {})
    assert runner.run("files").returncode == 0
    assert runner.outputs["files"]["count"] == "3"  # configs/ds_config.json, legacy/ds_config_old.json, zero3.json


def test_no_changed_config_is_a_clean_pass_with_a_summary(pull_request, tmp_path):
    _git("checkout", "-q", "-b", "docs-only", "HEAD~1", cwd=pull_request)
    (pull_request / "README.md").write_text("docs\n")
    _git("commit", "-q", "-am", "docs", cwd=pull_request)
    runner = Runner(pull_request, tmp_path, {"sarif": "out.sarif"}, base_ref="main")
    assert runner.run("files").returncode == 0
    assert runner.outputs["files"]["count"] == "0"
    r = runner.run("run")
    assert r.returncode == 0 and runner.outputs["run"]["exit-code"] == "0", r.stderr
    assert "No DeepSpeed config files to lint." in runner.summary.read_text()
    assert json.loads((pull_request / "out.sarif").read_text())["runs"][0]["results"] == []
    assert runner.run("Fail on findings").returncode == 0  # (its `if:` skips it on GitHub; exit 0 either way)


def test_not_a_checkout_is_a_clear_error(tmp_path):
    (tmp_path / "ws").mkdir()
    runner = Runner(tmp_path / "ws", tmp_path, {})
    r = runner.run("files")
    assert r.returncode == 2 and "run actions/checkout" in r.stdout
