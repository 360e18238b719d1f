"""The GitHub Action (action.yml): valid metadata, and its run steps executed with bash in a simulated GitHub
environment (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_BASE_REF, a pull request in a temporary git repository).
`uses:` steps (setup-python, upload-sarif) are GitHub's part and are not run here. The install step runs, offline:
ZEROLINT_ACTION_VENV (workflow env, documented in action.yml) points it at the virtual environment running these
tests instead of creating one and pip-installing into it; everything after that (the `-I` calls by absolute path,
from the pull request's checkout as working directory) is the action's real code path."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml
from action_runner import ACTION, STEPS, Runner, git
from conftest import ROOT, SEED, missing

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


_git = git


@pytest.fixture
def pull_request(tmp_path):
    """A repository whose `main` is on a bare origin and whose checked-out branch is a pull request that changes
    configs/ds_config.json (now broken), adds zero3.json (broken), and touches a file that is not a config. A broken
    config the PR does not touch, legacy/ds_config_old.json, must not be linted."""
    if shutil.which("git") is None:
        missing("git is not installed")
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


def test_pull_request_lints_only_the_changed_configs(pull_request, tmp_path):
    runner = Runner(pull_request, tmp_path, {"sarif": "zerolint.sarif"}, base_ref="main")
    assert runner.run("install").returncode == 0
    r = runner.run("files")
    assert r.returncode == 0, r.stderr
    assert runner.outputs["files"]["count"] == "2"
    r = runner.run("run")
    assert r.returncode == 0, r.stderr
    annotated = sorted({m.group(1) for m in re.finditer(r"^::\w+ file=([^,]+),", r.stdout, re.M)})
    assert annotated == ["configs/ds_config.json", "zero3.json"]
    assert "::error file=configs/ds_config.json,line=7,col=5," in r.stdout
    assert runner.outputs["run"] == {"sarif": str(tmp_path / "zerolint.sarif"), "exit-code": "1", "files": "2",
                                     "skipped": "0"}
    assert not (pull_request / "zerolint.sarif").exists()  # under $RUNNER_TEMP, never in the checkout
    sarif = json.loads((tmp_path / "zerolint.sarif").read_text())
    uris = {res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for res in sarif["runs"][0]["results"]}
    assert uris == {"configs/ds_config.json", "zero3.json"}
    summary = runner.summary.read_text()
    assert summary.startswith("## zerolint") and "zero3.json" in summary
    fail = runner.run("Fail on findings")
    assert fail.returncode == 1


def test_files_input_and_inputs_reach_zerolint(pull_request, tmp_path):
    runner = Runner(pull_request, tmp_path, {"files": "legacy/*.json\n  configs", "fail-on": "warning",
                                             "target": "hf", "world-size": "8", "deepspeed-version": "0.19.8"})
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    assert runner.outputs["files"]["count"] == "2"
    r = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "1", r.stdout + r.stderr
    assert "file=legacy/ds_config_old.json" in r.stdout and "file=configs/ds_config.json" in r.stdout
    # target hf: json.load rejects the missing comma, so ZL002 is an error
    assert "::error file=legacy/ds_config_old.json,line=8,col=5" in r.stdout


def test_files_output_counts_the_files_linted_not_the_arguments(pull_request, tmp_path):
    """`files: configs/` is one argument: the output counts the configs zerolint linted in it, and the skipped."""
    configs = pull_request / "configs"
    for i in range(4):
        (configs / f"run{i}.json").write_text(CLEAN)
    (configs / "package.json").write_text('{"name": "x", "version": "1.0.0", "scripts": {}}')
    (configs / "accelerate.yaml").write_text("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n")
    runner = Runner(pull_request, tmp_path, {"files": "configs/"})
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    r = runner.run("run")
    assert (runner.outputs["run"]["files"], runner.outputs["run"]["skipped"]) == ("6", "1"), r.stdout + r.stderr
    assert "Linted 6 file(s); skipped 1 that are not DeepSpeed configs" in r.stdout


def test_push_without_a_pull_request_lints_every_tracked_config(pull_request, tmp_path):
    runner = Runner(pull_request, tmp_path, {})
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    assert runner.outputs["files"]["count"] == "3"  # configs/ds_config.json, legacy/ds_config_old.json, zero3.json
    runner.run("run")
    assert (runner.outputs["run"]["files"], runner.outputs["run"]["skipped"]) == ("3", "0")


def test_no_changed_config_is_a_clean_pass_with_a_summary(pull_request, tmp_path):
    _git("checkout", "-q", "-b", "docs-only", "HEAD~1", cwd=pull_request)
    (pull_request / "README.md").write_text("docs\n")
    _git("commit", "-q", "-am", "docs", cwd=pull_request)
    runner = Runner(pull_request, tmp_path, {"sarif": "out.sarif"}, base_ref="main")
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    assert runner.outputs["files"]["count"] == "0"
    r = runner.run("run")
    assert r.returncode == 0 and runner.outputs["run"]["exit-code"] == "0", r.stderr
    assert "No DeepSpeed config files to lint." in runner.summary.read_text()
    assert json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"] == []
    assert runner.run("Fail on findings").returncode == 0  # (its `if:` skips it on GitHub; exit 0 either way)


def test_not_a_checkout_is_a_clear_error(tmp_path):
    (tmp_path / "ws").mkdir()
    runner = Runner(tmp_path / "ws", tmp_path, {})
    r = runner.run("files")
    assert r.returncode == 2 and "run actions/checkout" in r.stdout


# -- security (issue 12 items 1, 2, 6, 7, 8; docs/security.md) ---------------------------------------------------------

def _commit_pr_files(work: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "pr: more", cwd=work)


def test_modules_in_the_pull_request_never_run(pull_request, tmp_path):
    """Item 1: a PR adds modules that shadow zerolint, its dependencies, the stdlib and pip; each would leave a
    marker and turn the check green (exit 0). Run with `python -m` from the checkout, they all did."""
    markers = tmp_path / "markers"
    markers.mkdir()
    payload = ("import os, sys\n"
               f"open(os.path.join({str(markers)!r}, {{name!r}}), 'w').write('ran')\n"
               "os._exit(0)\n")
    planted = {name: payload.format(name=name.replace("/", "_"))
               for name in ("zerolint/__init__.py", "zerolint/__main__.py", "click.py", "json.py", "pip/__init__.py",
                            "pip/__main__.py", "sitecustomize.py", "yaml.py", "encodings_extra.py")}
    _commit_pr_files(pull_request, planted)
    runner = Runner(pull_request, tmp_path, {"sarif": "zerolint.sarif"}, base_ref="main")
    install = runner.run("install")
    assert install.returncode == 0, install.stderr
    assert runner.run("files").returncode == 0
    r = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "1", r.stdout + r.stderr
    assert "::error file=configs/ds_config.json,line=7,col=5," in r.stdout
    assert json.loads((tmp_path / "zerolint.sarif").read_text())["runs"][0]["results"]
    assert sorted(os.listdir(markers)) == []
    assert runner.run("Fail on findings").returncode == 1


def test_no_changed_config_writes_the_empty_sarif_with_the_isolated_interpreter(pull_request, tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    _git("checkout", "-q", "-b", "docs-only", "HEAD~1", cwd=pull_request)
    _commit_pr_files(pull_request, {"json.py": f"open({str(markers / 'json')!r}, 'w')\n",
                                    "zerolint/__init__.py": f"open({str(markers / 'zl')!r}, 'w')\n"})
    runner = Runner(pull_request, tmp_path, {"sarif": "reports/empty.sarif"}, base_ref="main")
    assert runner.run("install").returncode == 0
    # (the two .py files are candidates, as launch scripts may be: the gate reads them for the configs they launch,
    # never imports them; they launch none)
    assert runner.run("files").returncode == 0 and runner.outputs["files"]["count"] == "2"
    r = runner.run("run")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "reports" / "empty.sarif").read_text())["runs"][0]["results"] == []
    assert os.listdir(markers) == []


def test_symlinks_in_the_pull_request_are_neither_read_nor_written_through(pull_request, tmp_path):
    """Items 2 and 6: a PR commits `zerolint.sarif` as a link to a file outside the checkout (the report would
    overwrite it) and a config that links to a secret (it would be echoed into annotations and SARIF)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.sh"
    victim.write_text("echo original\n")
    secret = outside / "secret.json"
    secret.write_text('{"auths": {"registry": {"auth": "SECRET-TOKEN-1234"}}, "fp16": {"enabled": true},\n'
                      ' "bf16": {"enabled": true}}\n')
    (pull_request / "zerolint.sarif").symlink_to(victim)
    (pull_request / "ds_config_secret.json").symlink_to(secret)
    _git("add", ".", cwd=pull_request)
    _git("commit", "-q", "-m", "pr: links", cwd=pull_request)
    runner = Runner(pull_request, tmp_path, {"sarif": "zerolint.sarif"}, base_ref="main")
    assert runner.run("install").returncode == 0
    runner.run("files")
    assert runner.outputs["files"]["count"] == "3"  # the link is a candidate; zerolint's gate never follows it
    r = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "1", r.stdout + r.stderr
    assert runner.outputs["run"]["skipped"] == "1"
    assert victim.read_text() == "echo original\n"
    sarif = (tmp_path / "zerolint.sarif").read_text()
    for text in (r.stdout, r.stderr, sarif, runner.summary.read_text()):
        assert "SECRET-TOKEN" not in text
    # named as skipped, with the reason, in the annotations and the job summary (issue 22: no silent skip)
    assert ("::notice file=ds_config_secret.json,title=zerolint skipped::not linted: a symbolic link, not followed "
            "by the CI gate (its target is linted where it is a candidate itself)") in r.stdout
    assert "| ds_config_secret.json | a symbolic link, not followed by the CI gate" in runner.summary.read_text()


def test_file_names_cannot_issue_workflow_commands(pull_request, tmp_path):
    """Item 7: a PR adds a config whose name holds a newline and workflow commands. The listing prints it quoted on
    one line between ::stop-commands:: markers, and the annotations escape it."""
    name = "zero\n::add-mask::x\n::warning title=pwned::y.json"
    _commit_pr_files(pull_request, {name: BROKEN})
    runner = Runner(pull_request, tmp_path, {}, base_ref="main")
    assert runner.run("install").returncode == 0
    files = runner.run("files")
    assert files.returncode == 0 and runner.outputs["files"]["count"] == "3", files.stdout + files.stderr
    lines = files.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("::stop-commands::"))
    token = lines[start].split("::")[2]
    assert len(token) > 30
    end = lines.index(f"::{token}::")
    assert all(line.startswith("  ") for line in lines[start + 1:end]) and end - start - 1 == 3
    assert [line for line in lines if line.startswith("::")] == [lines[start], lines[end]]
    assert "  $'zero\\n::add-mask::x\\n::warning title=pwned::y.json'" in lines
    r = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "1"
    commands = [line for line in r.stdout.splitlines() if line.startswith("::")]
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in commands), commands
    assert "file=zero%0A%3A%3Aadd-mask%3A%3Ax%0A%3A%3Awarning title=pwned%3A%3Ay.json," in r.stdout


def test_a_pull_requests_own_settings_cannot_turn_the_check_green(pull_request, tmp_path):
    """Item 8: the PR adds a .zerolint.toml that excludes one broken config and ignores every rule, and a baseline
    that records the other's findings. On a pull request the action ignores them (isolated: auto)."""
    _commit_pr_files(pull_request, {".zerolint.toml": 'exclude = ["zero3.json"]\nignore = ["ALL"]\n'})
    runner = Runner(pull_request, tmp_path, {}, base_ref="main")
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    r = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "1", r.stdout + r.stderr
    assert "::error file=zero3.json," in r.stdout and "::error file=configs/ds_config.json,line=7,col=5," in r.stdout
    assert "All checks passed" not in runner.summary.read_text()


def test_honoured_repository_settings_are_announced_in_every_summary(pull_request, tmp_path):
    """Item 8: with `isolated: false` the settings apply, and the annotations and the step summary say what they
    turned off and which file did it."""
    _commit_pr_files(pull_request, {".zerolint.toml": 'exclude = ["zero3.json"]\nignore = ["ALL"]\n'})
    runner = Runner(pull_request, tmp_path, {"isolated": "false"}, base_ref="main")
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    r = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "0", r.stdout + r.stderr
    assert r.stdout.splitlines() == ["::notice title=zerolint settings::1 file excluded by .zerolint.toml (exclude)",
                                     "::notice title=zerolint settings::rules turned off by .zerolint.toml: ALL",
                                     "Linted 1 file(s); skipped 0 that are not DeepSpeed configs"]
    summary = runner.summary.read_text()
    assert "All checks passed in 1 file." in summary
    assert "- :warning: 1 file excluded by .zerolint.toml (exclude)" in summary
    assert "- :warning: rules turned off by .zerolint.toml: ALL" in summary


def test_trusted_config_input_applies_on_a_pull_request(pull_request, tmp_path):
    trusted = tmp_path / "trusted" / ".zerolint.toml"
    trusted.parent.mkdir()
    trusted.write_text('ignore = ["ZL002"]\n')
    _commit_pr_files(pull_request, {".zerolint.toml": 'ignore = ["ALL"]\n'})
    runner = Runner(pull_request, tmp_path, {"config": str(trusted)}, base_ref="main")
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    r = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "1", r.stdout + r.stderr
    assert "ZL002" not in r.stdout.split("::notice")[0] and "::error file=configs/ds_config.json" in r.stdout
    assert f"rules turned off by {trusted}: ZL002" in r.stdout


HIDDEN = json.dumps({"_a": 1, "_b": 2, "_c": 3, "_d": 4, "fp16": {"enabled": True}, "bf16": {"enabled": True}},
                    indent=2) + "\n"


def test_a_pull_request_cannot_hide_a_broken_config_from_the_gate(pull_request, tmp_path):
    """Issue 22, item 1, end to end: on the main before it, a config with four extra top-level keys gave
    exit-code 0 and "All checks passed in 0 files. 1 file skipped" while DeepSpeed rejects it (fp16 and bf16)."""
    _commit_pr_files(pull_request, {"configs/ds_config.json": HIDDEN,
                                    "configs/padded.json": HIDDEN[:-2] + " " * (16 * 1024 * 1024) + "}\n"})
    runner = Runner(pull_request, tmp_path, {}, base_ref="main")
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    r = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "1", r.stdout + r.stderr
    assert "::error file=configs/ds_config.json,line=10,col=5,endLine=10,endColumn=20,title=ZL301 fp16-and-bf16::" \
        in r.stdout
    assert "::error file=configs/padded.json,line=1,col=1," in r.stdout and "title=ZL007 input-limit" in r.stdout
    assert runner.run("Fail on findings").returncode == 1


def test_fail_on_skipped_fails_the_job_and_configs_names_files(pull_request, tmp_path):
    """A candidate the gate skips fails the job with `fail-on-skipped: true`; the workflow's `configs` patterns
    make a file a config whatever its content."""
    _commit_pr_files(pull_request, {"configs/notes.json": '{"owner": "me", "gradient_accumulation_steps": "x", '
                                                          '"a": 1, "b": 2}\n'})
    runner = Runner(pull_request, tmp_path, {"fail-on-skipped": "true"}, base_ref="main")
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    r = runner.run("run")
    assert (runner.outputs["run"]["exit-code"], runner.outputs["run"]["skipped"]) == ("1", "1"), r.stdout
    assert ("::error file=configs/notes.json,title=zerolint skipped::not linted: not a DeepSpeed config: 1 of 4 "
            "top-level keys are DeepSpeed's") in r.stdout
    assert "| configs/notes.json | not a DeepSpeed config: 1 of 4 top-level keys are DeepSpeed's |" in \
        runner.summary.read_text()
    runner = Runner(pull_request, tmp_path, {"configs": "configs/*.json", "fail-on-skipped": "true"}, base_ref="main")
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    r = runner.run("run")
    assert (runner.outputs["run"]["exit-code"], runner.outputs["run"]["skipped"]) == ("1", "0"), r.stdout
    assert "::error file=configs/notes.json,line=1,col=48,endLine=1,endColumn=51,title=ZL104 wrong-type::" in r.stdout


def test_args_reach_zerolint_split_as_words_and_never_expanded(pull_request, tmp_path):
    """`args`: more check options, split by shlex (a quoted value stays one word; `$HOME` and `*` stay text)."""
    runner = Runner(pull_request, tmp_path, {"files": "legacy/*.json", "target": "hf",
                                             "args": "--ignore ZL002 --config 'world-size = 8' --select '$HOME*'"})
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    r = runner.run("run")
    # --select '$HOME*' reached zerolint as the text it is: an unknown rule, a usage error (exit 2)
    assert runner.outputs["run"]["exit-code"] == "2", r.stdout + r.stderr
    assert "'$HOME*'" in r.stdout + r.stderr
    runner = Runner(pull_request, tmp_path, {"files": "legacy/*.json", "target": "hf",
                                             "args": "--ignore ZL002,ZL101 --config 'world-size = 8'"})
    assert runner.run("install").returncode == 0 and runner.run("files").returncode == 0
    r = runner.run("run")
    assert "ZL002" not in r.stdout and "::error file=legacy" not in r.stdout, r.stdout
    runner = Runner(pull_request, tmp_path, {"files": "legacy/*.json", "args": "--ignore 'ZL002"})
    assert runner.run("install").returncode == 0 and runner.run("files").returncode == 0
    r = runner.run("run")
    assert runner.outputs["run"]["exit-code"] == "2"
    assert "::error title=zerolint::args does not split into words (an unclosed quote?)" in r.stdout
