"""The Action's `verify` input (issue 15 item 4; docs/github-action.md), run in the simulated runner of
tests/action_runner.py on the CPU: `zerolint verify` for real (DeepSpeed 0.19.8's initialize and steps, no mocks) on
the configs a pull request changes, the verdict table in the job summary, verify's findings as annotations at the
key, and the job's exit code. The op cache is TORCH_EXTENSIONS_DIR (scripts/test.sh sets it; shm_comm is the only
op these configs need: no optimizer section, so no fused_adam or cpu_adam)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil

import pytest
from action_runner import Runner, git
from conftest import SEED, missing, oracle

GOOD = json.dumps({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
                   "zero_optimization": {"stage": 1}, "gradient_clipping": 1.0}, indent=4) + "\n"
BAD = (SEED / "ds_fp16_bf16.json").read_text()  # fp16 and bf16 both on: DeepSpeed fails at parse, at line 4
ZL990 = ("::error file=configs/bad.json,line=4,col=14,endLine=4,endColumn=23,title=ZL990 verify-failed::"
         "DeepSpeed fails at parse: AssertionError: bfloat16 and fp16 modes cannot be simultaneously enabled "
         "[deepspeed/runtime/config.py:511 (_initialize_params)]%0Ahelp: enable one of fp16 and bf16")

def needs_deepspeed(test):
    for mark in (pytest.mark.slow, pytest.mark.deepspeed,
                 oracle(importlib.util.find_spec("deepspeed") is None or importlib.util.find_spec("torch") is None,
                        "needs torch and deepspeed (pip install '.[verify]')")):
        test = mark(test)
    return test


@pytest.fixture
def pull_request(tmp_path):
    """main: configs/base.json (clean) and legacy/old.json (fp16+bf16, untouched by the PR: never verified).
    The PR adds configs/good.json and configs/bad.json (fp16+bf16), touches README.md, and plants modules that
    would leave a marker if anything imported them from the checkout."""
    if shutil.which("git") is None:
        missing("git is not installed")
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    git("init", "-q", "--bare", str(origin), cwd=tmp_path)
    git("init", "-q", "-b", "main", str(work), cwd=tmp_path)
    for name, text in {"configs/base.json": GOOD, "legacy/old.json": BAD, "README.md": "hello\n"}.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "base", cwd=work)
    git("remote", "add", "origin", str(origin), cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    git("checkout", "-q", "-b", "feature", cwd=work)
    markers = tmp_path / "markers"
    markers.mkdir()
    planted = {name: f"open({str(markers / name.replace('/', '_'))!r}, 'w').write('ran')\n"
               for name in ("zerolint/__init__.py", "zerolint/__main__.py", "json.py", "deepspeed/__init__.py",
                            "torch/__init__.py", "sitecustomize.py")}
    for name, text in {"configs/good.json": GOOD, "configs/bad.json": BAD, "README.md": "hello again\n",
                       **planted}.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "pr", cwd=work)
    git("branch", "-q", "-D", "main", cwd=work)
    git("update-ref", "-d", "refs/remotes/origin/main", cwd=work)
    return work


def runner_for(work, tmp_path, inputs, base_ref="main") -> Runner:
    cache = tmp_path / "zerolint-cache"  # a private verify result cache: every run is a real run
    cache.mkdir(mode=0o700, exist_ok=True)
    return Runner(work, tmp_path, inputs, base_ref=base_ref,
                  env={"ZEROLINT_CACHE_DIR": str(cache), "DS_ACCELERATOR": "cpu"})


@needs_deepspeed
def test_a_pr_with_a_good_and_a_bad_config_gets_a_verdict_table_an_annotation_and_exit_1(pull_request, tmp_path):
    runner = runner_for(pull_request, tmp_path, {"verify": "cpu"})
    assert runner.run("install").returncode == 0
    files = runner.run("files")
    # (the PR's planted torch/ and zerolint/ .py files are candidates too, read for the configs they launch)
    assert files.returncode == 0 and runner.outputs["files"]["count"] == "8", files.stdout + files.stderr
    check = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "1", check.stdout + check.stderr  # check: ZL301 on bad.json
    r = runner.run("verify")
    assert r.returncode == 0, r.stdout + r.stderr
    assert runner.outputs["verify"] == {"verify-exit-code": "1", "verified": "2"}, r.stdout + r.stderr
    commands = [line for line in r.stdout.splitlines() if line.startswith("::") and "stop-commands" not in line
                and not re.fullmatch(r"::zerolint-[0-9a-f]{32}::", line)]
    assert commands == [ZL990]
    summary = runner.summary.read_text()
    section = summary[summary.index("## zerolint verify"):]
    rows = [line for line in section.splitlines() if line.startswith("| configs/")]
    assert len(rows) == 2, section
    assert re.fullmatch(r"\| configs/bad\.json \| :x: fail \| parse \(line 4\): AssertionError: bfloat16 and fp16 "
                        r"modes cannot be simultaneously enabled \| \d+\.\d s \|", rows[0]), rows
    assert re.fullmatch(r"\| configs/good\.json \| :white_check_mark: pass \|  \| \d+\.\d s \|", rows[1]), rows
    assert "1 fail, 1 pass of 2 configs." in section
    assert "legacy/old.json" not in section and "configs/base.json" not in section
    assert re.search(r"DeepSpeed 0\.19\.8, torch \S+ on cpu", section), section
    assert os.listdir(tmp_path / "markers") == []
    fail = runner.run("Fail on findings")
    assert fail.returncode == 1, fail.stdout + fail.stderr


@needs_deepspeed
def test_only_the_good_config_changed_passes(pull_request, tmp_path):
    """`files: configs/` lints every config in the directory, but verify runs only the one the PR changes; a
    clean check and a passing verify: exit 0."""
    git("rm", "-q", "configs/bad.json", cwd=pull_request)
    git("commit", "-q", "-m", "drop bad", cwd=pull_request)
    runner = runner_for(pull_request, tmp_path, {"verify": "cpu", "files": "configs/"})
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    check = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "0" and runner.outputs["run"]["files"] == "2", check.stdout
    r = runner.run("verify")
    assert runner.outputs["verify"] == {"verify-exit-code": "0", "verified": "1"}, r.stdout + r.stderr
    section = runner.summary.read_text().split("## zerolint verify", 1)[1]
    assert [line.split(" | ")[0] for line in section.splitlines() if line.startswith("| configs/")] == \
        ["| configs/good.json"]
    assert "1 pass of 1 config." in section
    assert runner.run("Fail on findings").returncode == 0


def test_verify_off_does_nothing(pull_request, tmp_path):
    runner = runner_for(pull_request, tmp_path, {})
    assert runner.inputs["verify"] == "off"
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    r = runner.run("verify")
    assert (r.returncode, r.stdout, runner.outputs["verify"]) == (0, "", {})


def test_a_pr_that_changes_no_config_verifies_nothing(pull_request, tmp_path):
    git("checkout", "-q", "-b", "docs-only", "HEAD~1", cwd=pull_request)
    (pull_request / "README.md").write_text("docs\n")
    git("commit", "-q", "-am", "docs", cwd=pull_request)
    runner = runner_for(pull_request, tmp_path, {"verify": "cpu"})
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    r = runner.run("verify")
    assert r.returncode == 0 and runner.outputs["verify"] == {"verify-exit-code": "0", "verified": "0"}, r.stderr
    assert "No changed DeepSpeed config to verify." in r.stdout
    assert "## zerolint verify\n\nNo DeepSpeed config to verify.\n" in runner.summary.read_text()


def test_a_bad_verify_value_is_a_usage_error(pull_request, tmp_path):
    runner = runner_for(pull_request, tmp_path, {"verify": "yes"})
    r = runner.run("install")
    assert r.returncode == 2 and "::error title=zerolint::verify must be off, cpu or gpu" in r.stdout
