"""Runs the Action's `run:` steps the way GitHub's runner does, for tests/test_action*.py: action.yml's steps by id,
`${{ inputs.* }}` and `${{ steps.*.outputs.* }}` substituted in each step's env, GITHUB_OUTPUT / GITHUB_STEP_SUMMARY
files, bash with the runner's flags, the pull request's checkout as working directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
STEPS = {s.get("id") or s["name"]: s for s in ACTION["runs"]["steps"]}


def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=cwd, check=True,
                   capture_output=True)


class Runner:
    """Runs the action's `run:` steps the way the runner does (`shell: bash` is `bash --noprofile --norc -eo pipefail
    {0}`), with `${{ inputs.* }}` and `${{ steps.*.outputs.* }}` substituted in the step's env."""

    def __init__(self, workspace: Path, tmp: Path, inputs: dict[str, str], base_ref: str = "",
                 env: dict[str, str] | None = None) -> None:
        self.workspace, self.tmp, self.env = workspace, tmp, dict(env or {})
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
            "ZEROLINT_ACTION_VENV": sys.prefix,
            "GITHUB_ACTIONS": "true", "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_OUTPUT": str(output_file), "GITHUB_STEP_SUMMARY": str(self.summary),
            "RUNNER_TEMP": str(self.tmp), "NO_COLOR": "1",
        })
        if self.base_ref:
            env["GITHUB_BASE_REF"] = self.base_ref
        env.update(self.env)  # the runner's own variables a test sets: GITHUB_EVENT_PATH, GITHUB_API_URL, ...
        env.update({k: self.expr(v) for k, v in step.get("env", {}).items()})
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=self.workspace,
                           env=env, capture_output=True, text=True, timeout=300)
        self.outputs[step_id] = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if line)
        return r
