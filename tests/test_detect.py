"""Content detection (model/detect.py): directories and globs lint DeepSpeed configs and the Accelerate YAMLs that
configure DeepSpeed, judged by content; files named on the command line are always linted; --show-files says what
was picked and skipped, and why."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import CORPUS, DATA, ROOT, SEED, run_cli

from zerolint.base.fsio import Limits
from zerolint.model.detect import judge, judge_bytes, verdict
from zerolint.model.dsfacts.sections import TOP_LEVEL_KEYS

NOT_CONFIGS = DATA / "not-configs"

SKIPPED = {
    "generation_config.json": "not a DeepSpeed config: 0 of 4 top-level keys are DeepSpeed's",
    "hf_llama_config.json": "not a DeepSpeed config: 0 of 24 top-level keys are DeepSpeed's",
    "launch.json": "not a DeepSpeed config: 0 of 2 top-level keys are DeepSpeed's",
    "package.json": "not a DeepSpeed config: 0 of 6 top-level keys are DeepSpeed's",
    "results.json": "a JSON array, not an object",
    "special_tokens_map.json": "not a DeepSpeed config: 0 of 2 top-level keys are DeepSpeed's",
    "tokenizer_config.json": "not a DeepSpeed config: 0 of 14 top-level keys are DeepSpeed's",
    "training_args.json": "not a DeepSpeed config: 3 of 20 top-level keys are DeepSpeed's",
    "tsconfig.json": "not a DeepSpeed config: 0 of 3 top-level keys are DeepSpeed's",
}


def test_top_level_keys_are_the_schemas():
    union = set()
    for schema in (ROOT / "src" / "zerolint" / "data" / "schemas").glob("deepspeed-*.json"):
        union |= set(json.loads(schema.read_text("utf-8"))["properties"])
    assert TOP_LEVEL_KEYS == union


@pytest.mark.parametrize("name", sorted(SKIPPED))
def test_real_shaped_files_that_are_not_configs_are_skipped(name):
    pick = judge(str(NOT_CONFIGS / name), Limits())
    assert (pick.picked, pick.why) == (False, SKIPPED[name])
    assert pick.data is None and pick.document is None  # nothing of a skipped file is kept


def test_every_corpus_config_is_picked(corpus_files):
    assert len(corpus_files) == 77
    for path in corpus_files:
        pick = judge(str(path), Limits())
        assert pick.picked, (path.name, pick.why)
        assert pick.why.startswith("DeepSpeed config: "), pick.why


@pytest.mark.parametrize("text,picked,why", [
    ('{"train_batch_size": "auto", "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}', True,
     "DeepSpeed config: 3 of 3 top-level keys are DeepSpeed's"),
    # hjson, as DeepSpeed reads it: comments, quoteless keys, no commas (json.loads rejects it)
    ('{\n  // ZeRO-3\n  zero_optimization: {stage: 3}\n  train_micro_batch_size_per_gpu: 1\n}', True,
     "DeepSpeed config: 2 of 2 top-level keys are DeepSpeed's"),
    # a template with placeholders (DeepSpeedExamples' *_TEMPLATE.json)
    ('{\n  "train_batch_size": CONFIG_BATCH_SIZE,\n  "steps_per_print": LOG_INTERVAL\n}', True,
     "DeepSpeed config: 2 of 2 top-level keys are DeepSpeed's"),
    # misspelled keys still make a DeepSpeed config: the lint is what reports them
    ('{"train_batch_size": 8, "zero_optimisation": {"stage": 2}, "gradient_clippin": 1.0}', True,
     "DeepSpeed config: 1 of 3 top-level keys are DeepSpeed's (and 2 near misses: zero_optimisation, "
     "gradient_clippin)"),
    # a generic training config of another framework that shares two keys among many
    ('{"model": {}, "optimizer": {"type": "AdamW"}, "scheduler": {}, "data": {}, "trainer": {}}', False,
     "not a DeepSpeed config: 2 of 5 top-level keys are DeepSpeed's"),
    ("{}", False, "an empty object"),
    ("{ not a config, no colon", False, "does not parse: a syntax error before its first key"),
    ('"fp16"', False, "a JSON string, not an object"),
    ("\x00\x01binary", False, "not a JSON or hjson object"),
])
def test_judged_by_top_level_keys(text, picked, why):
    pick = judge_bytes(text.encode("utf-8"), "x.json", 256)
    assert (pick.picked, pick.why) == (picked, why)


def test_the_gate_reports_a_file_that_stops_before_its_first_key():
    """DeepSpeed's hjson reader rejects such a file too: skipping it would let a pull request break a config's first
    key and pass the gate."""
    pick = judge_bytes(b'{ "fp16" {"enabled": true}, "bf16": {"enabled": true}}', "x.json", 256, strict=True)
    assert (pick.picked, pick.why) == (True, "does not parse before its first key, so it cannot be judged: reported")


def test_verdict_needs_one_exact_key():
    assert verdict(["zero_optimisation"]) == (False, "not a DeepSpeed config: 0 of 1 top-level keys are DeepSpeed's")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A training repository: DeepSpeed configs (JSON, hjson), an Accelerate YAML, and the files beside them."""
    (tmp_path / "configs").mkdir()
    shutil.copy(SEED / "ds_zero2.json", tmp_path / "configs" / "zero2.json")
    (tmp_path / "configs" / "z3.hjson").write_text("{\n  zero_optimization: {stage: 3}\n  bf16: {enabled: true}\n}\n")
    (tmp_path / "model").mkdir()
    for name in ("hf_llama_config.json", "tokenizer_config.json"):
        shutil.copy(NOT_CONFIGS / name, tmp_path / "model" / name)
    shutil.copy(NOT_CONFIGS / "package.json", tmp_path / "package.json")
    (tmp_path / "accelerate.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n"
        "  deepspeed_config_file: configs/zero2.json\n  zero3_init_flag: false\nnum_processes: 2\n")
    (tmp_path / "ci.yml").write_text("name: ci\non: push\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_show_files_lists_what_is_picked_and_skipped_and_why(repo):
    r = run_cli("check", "--show-files", ".", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().splitlines() == [
        "lint  ./accelerate.yaml  (Accelerate config that configures DeepSpeed)",
        "skip  ./ci.yml  (YAML without deepspeed_config or distributed_type: DEEPSPEED)",
        "lint  ./configs/z3.hjson  (DeepSpeed config: 2 of 2 top-level keys are DeepSpeed's)",
        "lint  ./configs/zero2.json  (DeepSpeed config: 7 of 7 top-level keys are DeepSpeed's)",
        "skip  ./model/hf_llama_config.json  (not a DeepSpeed config: 0 of 24 top-level keys are DeepSpeed's)",
        "skip  ./model/tokenizer_config.json  (not a DeepSpeed config: 0 of 14 top-level keys are DeepSpeed's)",
        "skip  ./package.json  (not a DeepSpeed config: 0 of 6 top-level keys are DeepSpeed's)",
        "3 files to lint, 4 skipped.",
    ]


def test_a_directory_lints_only_its_deepspeed_configs_and_says_how_many_it_skipped(repo):
    r = run_cli("check", "--format", "json", ".", cwd=repo)
    report = json.loads(r.stdout)
    assert {os.path.normpath(d["file"]) for d in report["diagnostics"]} <= {
        "accelerate.yaml", "configs/zero2.json", "configs/z3.hjson"}
    assert report["summary"]["files"] == 3 and report["summary"]["skipped"] == 4
    r = run_cli("check", "--quiet", ".", cwd=repo)
    assert r.stdout.decode().rstrip("\n").endswith("4 files skipped (not DeepSpeed configs; --show-files).")


def test_a_glob_is_judged_by_content_and_a_named_file_is_always_linted(repo):
    r = run_cli("check", "--show-files", "**/*.json", cwd=repo)
    assert r.stdout.decode().splitlines()[-1] == "1 file to lint, 3 skipped."
    r = run_cli("check", "--show-files", "package.json", "configs/zero2.json", cwd=repo)
    assert r.stdout.decode().splitlines() == ["lint  package.json  (named on the command line)",
                                              "lint  configs/zero2.json  (named on the command line)",
                                              "2 files to lint, 0 skipped."]
    r = run_cli("check", "--format", "json", "package.json", cwd=repo)
    assert json.loads(r.stdout)["summary"]["files"] == 1  # linted as asked (and it has findings)
    assert r.returncode == 1


def test_only_configs_judges_named_files_too(repo):
    r = run_cli("check", "--only-configs", "--show-files", "package.json", "configs/zero2.json", "ci.yml", cwd=repo)
    assert r.stdout.decode().splitlines() == [
        "skip  package.json  (not a DeepSpeed config: 0 of 6 top-level keys are DeepSpeed's)",
        "lint  configs/zero2.json  (DeepSpeed config: 7 of 7 top-level keys are DeepSpeed's)",
        "skip  ci.yml  (YAML without deepspeed_config or distributed_type: DEEPSPEED)",
        "1 file to lint, 2 skipped.",
    ]
    r = run_cli("check", "--only-configs", "package.json", cwd=repo)
    assert (r.returncode, r.stdout.decode()) == (
        0, "All checks passed in 0 files. 1 file skipped (not DeepSpeed configs; listed below).\n"
           "skipped: package.json: not a DeepSpeed config: 0 of 6 top-level keys are DeepSpeed's\n")


def test_a_found_file_is_read_and_parsed_once(repo, monkeypatch):
    import zerolint.model.detect as detect
    import zerolint.pipeline as pipeline
    from zerolint.base import fsio

    calls = {"read": [], "parse": []}
    real_read, real_parse = fsio.read_bytes, pipeline.parse_bytes

    def read(path, limits):
        calls["read"].append(path)
        return real_read(path, limits)

    def parse(data, path, *a):
        calls["parse"].append(path)
        return real_parse(data, path, *a)

    for module in (detect, pipeline):
        monkeypatch.setattr(module, "read_bytes", read)
        monkeypatch.setattr(module, "parse_bytes", parse)
    run = pipeline.Pipeline(pipeline.Options(files=("configs",))).lint()
    assert [r.path for r in run.results] == ["configs/z3.hjson", "configs/zero2.json"]
    assert sorted(calls["read"]) == ["configs/z3.hjson", "configs/zero2.json"]
    # the hjson file went through the tolerant parser when it was judged, and that Document was linted
    assert sorted(calls["parse"]) == ["configs/z3.hjson", "configs/zero2.json"]


def test_a_file_over_the_size_limit_is_skipped_with_the_reason(repo):
    (repo / "configs" / "big.json").write_text('{"train_batch_size": 8, "x": "' + "a" * 2000 + '"}')
    r = run_cli("check", "--show-files", "--max-bytes", "1000", "configs", cwd=repo)
    assert "skip  configs/big.json  (larger than the 1,000-byte limit (--max-bytes))" in r.stdout.decode()


def test_an_unreadable_candidate_is_reported_not_skipped(repo):
    (repo / "configs" / "gone.json").symlink_to(repo / "nowhere.json")
    r = run_cli("check", "--quiet", "configs", cwd=repo)
    assert r.returncode == 2
    assert "configs/gone.json: broken symbolic link" in r.stderr.decode()


def test_corpus_directory_is_linted_whole(tmp_path):
    r = run_cli("check", "--show-files", str(CORPUS), cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.decode().splitlines()[-1] == "77 files to lint, 0 skipped."
