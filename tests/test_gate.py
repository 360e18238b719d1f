"""The CI gate (`check --only-configs`: the pre-commit hooks, the Action and its verify step) decides by trusted
rules, not by the pull request's content (issue 22, item 1). Each attack reproduced first: on the main before this
change, every one of them gave "All checks passed in 0 files. 1 file skipped" and exit 0 on a file DeepSpeed
rejects."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import DATA, require, run_cli

from zerolint.base.fsio import Limits
from zerolint.model.detect import judge, judge_bytes
from zerolint.model.dsfacts.sections import SHARED_KEY_SHAPES, SHARED_TOP_LEVEL_KEYS, TOP_LEVEL_KEYS

BOTH_PRECISIONS = {"train_micro_batch_size_per_gpu": 1, "fp16": {"enabled": True}, "bf16": {"enabled": True}}
ZL301 = ("ZL301", "error", "/bf16/enabled",
         'fp16 and bf16 are both enabled; DeepSpeed fails at parse with "bfloat16 and fp16 modes cannot be '
         'simultaneously enabled"')


def _errors(stdout: bytes) -> list[tuple]:
    return [(d["code"], d["severity"], d["pointer"], d["message"]) for d in json.loads(stdout)["diagnostics"]
            if d["severity"] == "error"]


def _write(path, value) -> str:
    path.write_text(json.dumps(value, indent=2) + "\n")
    return path.name


@pytest.mark.parametrize("extra", [
    {"_a": 1, "_b": 2, "_c": 3, "_d": 4},  # notes, as ZL103's help suggests
    {"comment": "x", "note": "y", "author": "z", "version": "1"},
    {f"k{i}": i for i in range(200)},  # any share of foreign keys
])
def test_foreign_keys_cannot_hide_a_config(tmp_path, extra):
    name = _write(tmp_path / "ds.json", {**extra, **BOTH_PRECISIONS, "train_micro_batch_size_per_gpu": 1})
    r = run_cli("check", "--only-configs", "--format", "json", name, cwd=tmp_path)
    assert r.returncode == 1, r.stdout
    assert _errors(r.stdout) == [ZL301]
    r = run_cli("check", "--only-configs", "--show-files", name, cwd=tmp_path)
    assert r.stdout.decode().splitlines()[0] == \
        "lint  ds.json  (DeepSpeed config: holds train_micro_batch_size_per_gpu, a key only DeepSpeed reads)"


def test_shared_keys_count_with_deepspeeds_value_shape(tmp_path):
    """fp16/bf16 objects (TrainingArguments writes booleans there) make a config without any key only DeepSpeed
    reads."""
    name = _write(tmp_path / "ds.json", {"_a": 1, "_b": 2, "_c": 3, "_d": 4, "fp16": {"enabled": True},
                                        "bf16": {"enabled": True}})
    r = run_cli("check", "--only-configs", "--format", "json", name, cwd=tmp_path)
    assert r.returncode == 1
    assert ZL301 in _errors(r.stdout)


@pytest.mark.parametrize("text,why", [
    ('{"a": 1, "b": 2, "c": 3, "zero_optimisation": {"stage": 3}}',
     "DeepSpeed config: holds zero_optimisation, a near miss of a key only DeepSpeed reads"),
    ('{"a": 1, "b": 2, "c": 3, "optimizer": {"type": "Adam", "params": {"lr": 1}}}',
     'DeepSpeed config: optimizer has DeepSpeed\'s {"type", "params"} form'),
    ('{"a": 1, "b": 2, "c": 3, "wandb": {"project": "p", "enabled": true}}',
     "DeepSpeed config: wandb holds project, a key of DeepSpeed's wandb section"),
    ('{"a": 1, "b": 2, "c": 3, "wandb": {"enabled": true}}',
     "DeepSpeed config: wandb holds enabled, a key of DeepSpeed's wandb section"),
    ('{"a": 1, "b": 2, "c": 3, "bf16": {"enabled": true}}',
     "DeepSpeed config: bf16 is an object, as DeepSpeed reads it (other tools write a boolean there)"),
    ('{a: 1, b: 2, c: 3\n steps_per_print: 1}', "DeepSpeed config: holds steps_per_print, a key only DeepSpeed reads"),
    ("\x00\x01binary", "does not parse as a JSON or hjson object, so it cannot be judged: reported"),
    ("", "does not parse as a JSON or hjson object, so it cannot be judged: reported"),
])
def test_strict_judgement(text, why):
    pick = judge_bytes(text.encode("utf-8"), "x.json", 256, strict=True)
    assert (pick.picked, pick.why) == (True, why)


@pytest.mark.parametrize("text,why", [
    ('{"model": {}, "optimizer": {"type": "AdamW"}, "scheduler": {}, "data": {}, "trainer": {}}',
     "not a DeepSpeed config: 2 of 5 top-level keys are DeepSpeed's"),
    ('{"a": 1, "b": 2, "c": 3, "gradient_accumulation_steps": 4}',
     "not a DeepSpeed config: 1 of 4 top-level keys are DeepSpeed's"),
    ('[1, 2]', "a JSON array, not an object"),
])
def test_strict_judgement_still_skips_other_files(text, why):
    pick = judge_bytes(text.encode("utf-8"), "x.json", 256, strict=True)
    assert (pick.picked, pick.why) == (False, why)


NOT_CONFIGS = ("generation_config.json", "hf_llama_config.json", "launch.json", "package.json", "results.json",
               "special_tokens_map.json", "tokenizer_config.json", "training_args.json", "tsconfig.json")


@pytest.mark.parametrize("name", NOT_CONFIGS)
def test_real_files_that_are_not_configs_stay_skipped_on_the_gate(name):
    lax, strict = judge(str(DATA / "not-configs" / name), Limits()), \
        judge(str(DATA / "not-configs" / name), Limits(), strict=True)
    assert (strict.picked, strict.why) == (False, lax.why)


def test_every_corpus_config_is_picked_on_the_gate(corpus_files):
    for path in corpus_files:
        assert judge(str(path), Limits(), strict=True).picked, path.name


def test_shared_keys_cover_every_training_arguments_field_deepspeed_also_reads():
    """A TrainingArguments dump must not be picked for holding `fp16: false`: every TrainingArguments field that
    is also a DeepSpeed top-level key is a shared key, counted only with DeepSpeed's value shape."""
    transformers = require("transformers")
    fields = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    assert fields & TOP_LEVEL_KEYS <= SHARED_TOP_LEVEL_KEYS
    assert SHARED_TOP_LEVEL_KEYS <= TOP_LEVEL_KEYS and set(SHARED_KEY_SHAPES) <= SHARED_TOP_LEVEL_KEYS


def test_a_file_padded_past_the_size_limit_is_reported_not_skipped(tmp_path):
    text = json.dumps(BOTH_PRECISIONS)
    (tmp_path / "ds.json").write_text(text[:-1] + " " * (16 * 1024 * 1024) + "}")
    r = run_cli("check", "--only-configs", "--format", "concise", "ds.json", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stdout.decode().splitlines()[0] == (
        "ds.json:1:1: error ZL007 the file is larger than the 16,777,216-byte limit; the file was not "
        "checked past this point")
    r = run_cli("check", "--only-configs", "--show-files", "ds.json", cwd=tmp_path)
    assert r.stdout.decode().splitlines()[0] == (
        "lint  ds.json  (larger than the 16,777,216-byte limit, so it cannot be judged: reported)")


def test_an_unparseable_candidate_is_reported(tmp_path):
    (tmp_path / "ds.json").write_bytes(b"\x00\x01binary")
    r = run_cli("check", "--only-configs", "--format", "json", "ds.json", cwd=tmp_path)
    assert r.returncode == 1
    assert _errors(r.stdout) == [("ZL005", "error", "", "the config is a string, not an object; DeepSpeed needs "
                                                        '{"key": value, ...} at the top level')]


def test_a_symlink_is_never_followed_by_the_gate(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"auth": "SECRET-TOKEN", "zero_optimization": {"stage": 9}}')
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "ds.json").symlink_to(secret)
    r = run_cli("check", "--only-configs", "--format", "json", "ds.json", cwd=tmp_path / "repo")
    assert r.returncode == 0 and b"SECRET" not in r.stdout
    assert json.loads(r.stdout)["summary"]["skipped_files"] == [{
        "file": "ds.json", "why": "a symbolic link, not followed by the CI gate (its target is linted where it is a "
                                  "candidate itself)"}]


@pytest.fixture
def repo(tmp_path):
    """A repository with a config that its foreign keys would hide, and a JSON file that is not a config."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "configs").mkdir()
    _write(tmp_path / "configs" / "ds.json", {"a": 1, "b": 2, "c": 3, "gradient_accumulation_steps": "four"})
    _write(tmp_path / "data.json", {"rows": [1, 2]})
    return tmp_path


@pytest.mark.parametrize("where,text,why", [
    ("scripts/train.sh", "DS=configs/ds.json\ndeepspeed train.py \\\n  --deepspeed $DS\n",
     "scripts/train.sh:3 (--deepspeed)"),
    ("run.slurm", "#SBATCH --nodes=1\nsrun torchrun train.py --deepspeed_config=../configs/ds.json\n",
     "run.slurm:2 (--deepspeed_config)"),
    ("recipes/axolotl.yml", "base_model: m\ndeepspeed: ./configs/ds.json\n", "recipes/axolotl.yml:2 (deepspeed:)"),
    ("accelerate.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: configs/ds.json\n",
     "accelerate.yaml:3 (deepspeed_config_file:)"),
    ("train.py", "import deepspeed\n\nengine = deepspeed.initialize(config='configs/ds.json')\n",
     "train.py:3 (handed to DeepSpeed in Python code)"),
    ("finetune.py", "from transformers import TrainingArguments\nargs = TrainingArguments(\n    deepspeed=\"configs/"
                    "ds.json\",\n)\n", "finetune.py:3 (handed to DeepSpeed in Python code)"),
    ("cli.py", "import deepspeed\np.add_argument('--deepspeed', default='configs/ds.json')\n",
     "cli.py:2 (handed to DeepSpeed in Python code)"),
    ("README.md", "```bash\ndeepspeed train.py --deepspeed configs/ds.json\n```\n", "README.md:2 (--deepspeed)"),
])
def test_a_file_the_tree_hands_to_deepspeed_is_linted(repo, where, text, why):
    (repo / where).parent.mkdir(parents=True, exist_ok=True)
    (repo / where).write_text(text)
    r = run_cli("check", "--only-configs", "--show-files", "configs/ds.json", "data.json", cwd=repo)
    assert r.stdout.decode().splitlines() == [
        f"lint  configs/ds.json  (named as the DeepSpeed config by {why})",
        "skip  data.json  (not a DeepSpeed config: 0 of 1 top-level keys are DeepSpeed's)",
        "1 file to lint, 1 skipped."]
    r = run_cli("check", "--only-configs", "--format", "concise", "configs/ds.json", cwd=repo)
    assert r.returncode == 1 and b"configs/ds.json:" in r.stdout


def test_python_that_does_not_hand_the_file_to_deepspeed_names_nothing(repo):
    (repo / "other.py").write_text("open('configs/ds.json')\n")
    (repo / "train.py").write_text("import deepspeed\ntok = load('configs/ds.json')\n"
                                   "cfg = json.load(open('configs/ds.json'))\n")
    r = run_cli("check", "--only-configs", "--show-files", "configs/ds.json", cwd=repo)
    assert r.stdout.decode().splitlines()[-1] == "0 files to lint, 1 skipped."


def test_references_are_read_only_inside_the_tree(repo, tmp_path_factory):
    """A launch script that is a link to a file outside the tree is not read (and its text not shown)."""
    outside = tmp_path_factory.mktemp("outside") / "train.sh"
    outside.write_text("deepspeed x.py --deepspeed configs/ds.json\n")
    (repo / "train.sh").symlink_to(outside)
    r = run_cli("check", "--only-configs", "--show-files", "configs/ds.json", cwd=repo)
    assert r.stdout.decode().splitlines()[-1] == "0 files to lint, 1 skipped."


def test_trusted_patterns_name_configs_whatever_their_content(repo):
    r = run_cli("check", "--only-configs", "--show-files", "--include", "configs/*.json", "configs/ds.json",
                cwd=repo)
    assert r.stdout.decode().splitlines()[0] == \
        "lint  configs/ds.json  (a DeepSpeed config by --include configs/*.json)"
    trusted = repo.parent / "trusted.toml"
    trusted.write_text('include = ["**/configs/**"]\n')  # relative to its own directory
    (repo / ".zerolint.toml").write_text('include = ["configs/**"]\n')
    r = run_cli("check", "--only-configs", "--show-files", "configs/ds.json", cwd=repo)
    assert r.stdout.decode().splitlines()[0] == \
        "lint  configs/ds.json  (a DeepSpeed config by include configs/** in .zerolint.toml)"
    # --isolated (pull requests): the checkout's own settings are not read, but a trusted --config is
    r = run_cli("check", "--only-configs", "--isolated", "--show-files", "configs/ds.json", cwd=repo)
    assert r.stdout.decode().splitlines()[-1] == "0 files to lint, 1 skipped."
    r = run_cli("check", "--only-configs", "--isolated", "--config", str(trusted), "--show-files",
                "configs/ds.json", cwd=repo)
    assert r.stdout.decode().splitlines()[0].startswith("lint  configs/ds.json  (a DeepSpeed config by include")


def test_every_summary_lists_the_skipped_candidates_and_fail_on_skipped_fails(repo):
    r = run_cli("check", "--only-configs", "configs/ds.json", "data.json", cwd=repo)
    assert (r.returncode, r.stdout.decode().splitlines()) == (0, [
        "All checks passed in 0 files. 2 files skipped (not DeepSpeed configs; listed below).",
        "skipped: configs/ds.json: not a DeepSpeed config: 1 of 4 top-level keys are DeepSpeed's",
        "skipped: data.json: not a DeepSpeed config: 0 of 1 top-level keys are DeepSpeed's"])
    r = run_cli("check", "--only-configs", "--fail-on-skipped", "configs/ds.json", cwd=repo)
    assert (r.returncode, r.stdout.decode().splitlines()) == (1, [
        "No findings in 0 files. 1 file skipped (not DeepSpeed configs; --fail-on-skipped).",
        "skipped: configs/ds.json: not a DeepSpeed config: 1 of 4 top-level keys are DeepSpeed's"])
    r = run_cli("check", "--only-configs", "--fail-on-skipped", "--format", "json", "configs/ds.json", cwd=repo)
    summary = json.loads(r.stdout)["summary"]
    assert (r.returncode, summary["skipped"], summary["fail_on_skipped"]) == (1, 1, True)
    assert summary["skipped_files"] == [
        {"file": "configs/ds.json", "why": "not a DeepSpeed config: 1 of 4 top-level keys are DeepSpeed's"}]
    r = run_cli("check", "--only-configs", "--fail-on-skipped", "--format", "github", "configs/ds.json", cwd=repo,
                env={"GITHUB_ACTIONS": "true"})
    assert r.stdout.decode() == ("::error file=configs/ds.json,title=zerolint skipped::not linted: not a DeepSpeed "
                                 "config: 1 of 4 top-level keys are DeepSpeed's\n")
    r = run_cli("check", "--only-configs", "--fail-on-skipped", "--format", "junit", "configs/ds.json", cwd=repo)
    assert '<testsuite name="zerolint skipped files" errors="0" tests="1" failures="1" skipped="0">' in \
        r.stdout.decode()
    # the interactive `check .` keeps its friendlier default: a count, not a list
    r = run_cli("check", ".", cwd=repo)
    assert r.stdout.decode().splitlines() == [
        "All checks passed in 0 files. 2 files skipped (not DeepSpeed configs; --show-files)."]
