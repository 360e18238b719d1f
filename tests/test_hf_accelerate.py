"""HF Trainer / Accelerate awareness: Accelerate config YAMLs, --training-args, the Python API and check_or_raise."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

import zerolint
from zerolint.api import DeepSpeedConfigError
from zerolint.model.trainer import TrainingArgsError, training_args_dict

ACC = ROOT / "fixtures" / "examples" / "accelerate"


def _diags(*args, cwd=ROOT):
    r = run_cli("check", "--format", "json", *args, cwd=cwd)
    assert r.returncode in (0, 1), r.stderr.decode()
    return r.returncode, json.loads(r.stdout)["diagnostics"]


def test_accelerate_yaml_lints_the_file_it_names_with_target_accelerate():
    rc, diags = _diags(str(ACC / "accelerate_ok.yaml"))
    assert rc == 0 and [d for d in diags if d["severity"] == "error" or d["code"].startswith("ZL52")] == []
    # the same DeepSpeed file with "auto" for gradient_accumulation_steps: fine for Accelerate (it fills it)
    r = run_cli("check", "--show-settings", str(ACC / "accelerate_ok.yaml"))
    assert r.returncode == 0


def test_accelerate_conflicts_are_reported_in_the_yaml_and_in_the_deepspeed_file():
    rc, diags = _diags(str(ACC / "accelerate_conflicts.yaml"))
    assert rc == 1
    yaml_text = (ACC / "accelerate_conflicts.yaml").read_text().splitlines()
    in_yaml = [d for d in diags if d["file"].endswith("accelerate_conflicts.yaml")]
    assert {d["code"] for d in in_yaml} == {"ZL520"}
    fields = {yaml_text[d["line"] - 1].strip().split(":")[0] for d in in_yaml}
    assert fields == {"zero_stage", "gradient_accumulation_steps", "offload_optimizer_device", "mixed_precision"}
    in_ds = [d for d in diags if d["file"].endswith("ds_zero2.json") and d["code"].startswith("ZL52")]
    assert [(d["code"], d["pointer"]) for d in in_ds] == [("ZL521", "/bf16/enabled")]
    assert "mixed_precision: fp16" in in_ds[0]["message"]


def test_missing_and_invalid_accelerate_configs(tmp_path):
    rc, diags = _diags(str(ACC / "accelerate_missing_file.yaml"))
    assert [(d["code"], d["line"], d["column"]) for d in diags] == [("ZL524", 2, 26)]
    (tmp_path / "broken.yaml").write_text("deepspeed_config:\n  deepspeed_config_file: [unclosed\n")
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    (tmp_path / "python.yaml").write_text("deepspeed_config: !!python/object/apply:os.system ['echo pwned']\n")
    rc, diags = _diags("broken.yaml", "list.yaml", "python.yaml", cwd=tmp_path)
    assert [(d["file"], d["code"]) for d in diags] == [
        ("broken.yaml", "ZL525"), ("list.yaml", "ZL525"), ("python.yaml", "ZL525")]


def test_yaml_relative_path_and_world_size_from_num_processes(tmp_path):
    (tmp_path / "cfg").mkdir()
    shutil.copy(ACC / "ds_zero2.json", tmp_path / "cfg" / "ds.json")
    (tmp_path / "cfg" / "acc.yaml").write_text(
        "distributed_type: DEEPSPEED\nnum_processes: 4\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n")
    r = run_cli("check", "--format", "json", "--training-args", str(ACC / "training_args.json"), "cfg/acc.yaml",
                cwd=tmp_path)
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()


def test_training_args_mismatches_as_hf_would_raise(tmp_path):
    ds = tmp_path / "ds_config.json"
    ds.write_text(json.dumps({
        "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": "auto", "train_batch_size": 64,
        "gradient_clipping": 1.0, "bf16": {"enabled": True},
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "betas": [0.9, 0.999], "eps": 1e-8,
                                                  "weight_decay": 0.1}},
        "zero_optimization": {"stage": 2}}, indent=2))
    rc, diags = _diags("--training-args", str(ACC / "training_args.json"), "--world-size", "2", "ds_config.json",
                       cwd=tmp_path)
    found = {d["pointer"]: d["message"].split(":")[0] for d in diags}
    assert found == {
        "/train_micro_batch_size_per_gpu": "ds train_micro_batch_size_per_gpu=8 vs hf per_device_train_batch_size=4",
        "/optimizer/params/lr": "ds optimizer.params.lr=0.0001 vs hf learning_rate=2e-05",
        "/optimizer/params/weight_decay": "ds optimizer.params.weight_decay=0.1 vs hf weight_decay=0.0",
    }  # train_batch_size 64 == 2 * 4 * 8; gradient_accumulation_steps is "auto"
    assert rc == 1
    r = run_cli("check", "--training-args", "nope.json", "ds_config.json", cwd=tmp_path)
    assert r.returncode == 2 and "--training-args" in r.stderr.decode()


def test_training_args_dict_accepts_dumps_dicts_and_objects(tmp_path):
    class Args:  # what transformers.TrainingArguments offers
        world_size = 16
        deepspeed = "ds.json"

        def to_dict(self):
            return {"per_device_train_batch_size": 2, "learning_rate": 1e-5}

    args = training_args_dict(Args())
    assert args["world_size"] == 16 and args["per_device_train_batch_size"] == 2 and args["adam_beta2"] == 0.999
    assert training_args_dict('{"bf16": true}')["bf16"] is True
    with pytest.raises(TrainingArgsError):
        training_args_dict({"per_device_train_batch_size": "four"})


def test_python_api_and_check_or_raise(tmp_path):
    ds = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
          "optimizer": {"type": "AdamW", "params": {"lr": 3e-4}}, "zero_optimization": {"stage": 2}}
    args = {"per_device_train_batch_size": 4, "learning_rate": 2e-5, "deepspeed": ds}
    diags = zerolint.lint(ds, training_args=args, select=["ZL5"])
    assert [(d.code, d.pointer) for d in diags] == [("ZL523", "/optimizer/params/lr")]
    with pytest.raises(DeepSpeedConfigError) as e:
        zerolint.check_or_raise(args)
    assert "ZL523" in str(e.value) and "optimizer.params.lr=0.0003 vs hf learning_rate=2e-05" in str(e.value)
    assert e.value.diagnostics and zerolint.DeepSpeedConfigError is DeepSpeedConfigError
    args["learning_rate"] = 3e-4
    assert [d for d in zerolint.check_or_raise(args) if d.severity.value == "error"] == []
    # an Accelerate YAML through the API
    diags = zerolint.lint(ACC / "accelerate_conflicts.yaml")
    assert {d.code for d in diags if d.code.startswith("ZL52")} == {"ZL520", "ZL521"}


def test_yaml_and_jmespath_are_not_imported_by_the_cli_module():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import zerolint.cli, sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=Path(ROOT)).stdout.split()
    assert not {m for m in out if m.split(".")[0] in ("yaml", "jmespath", "jsonschema", "rich", "pydantic")}


# -- transformers versions, Accelerate's share, --target auto (issue 14 §2, §3, §3b) --------------------------------

def _codes(config, *, select, training_args=None, **settings):
    from zerolint.model.document import parse
    from zerolint.model.view import Settings
    from zerolint.rules.engine import Selection, run_rules

    args = training_args_dict(training_args) if training_args is not None else None
    diags = run_rules(parse(json.dumps(config), "ds.json"), Settings(training_args=args, **settings),
                      Selection(select=select))
    return [(d.code, d.severity.value, d.pointer, d.fails_at, d.message) for d in diags]


def test_transformers_version_from_metadata_else_newest(monkeypatch):
    from zerolint.model import trainer
    from zerolint.model.view import Settings

    assert str(trainer.transformers_version(Settings(transformers_version="5.17.0"))) == "5.17.0"
    trainer.installed_transformers.cache_clear()
    monkeypatch.setattr("importlib.metadata.version", lambda name: (_ for _ in ()).throw(
        __import__("importlib.metadata").metadata.PackageNotFoundError(name)))
    try:
        assert str(trainer.transformers_version(Settings())) == trainer.NEWEST_TRANSFORMERS == "5.24.0"
    finally:
        trainer.installed_transformers.cache_clear()


def test_hard_coded_warmup_of_one_matches_no_warmup_on_5_18_and_not_before():
    cfg = {"zero_optimization": {"stage": 2}, "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 1}}}
    args = {"max_steps": 100}
    new = _codes(cfg, select=["ZL523"], target="hf", training_args=args, transformers_version="5.18.0")
    old = _codes(cfg, select=["ZL523"], target="hf", training_args=args, transformers_version="5.17.0")
    assert new == []
    assert old == [("ZL523", "error", "/scheduler/params/warmup_num_steps", None,
                    "ds scheduler.params.warmup_num_steps=1 vs hf warmup_steps=0 (transformers 5.17.0 fills the "
                    "warm-up steps as they are): the HF Trainer raises \"Please correct the following DeepSpeed "
                    "config values that mismatch TrainingArguments values\" when training starts")]


def test_stage_auto_and_zero3_sizes_at_zero2_are_filled_under_the_trainer():
    cfg = {"train_micro_batch_size_per_gpu": "auto",
           "zero_optimization": {"stage": "auto", "stage3_prefetch_bucket_size": "auto",
                                 "stage3_param_persistence_threshold": "auto", "overlap_comm": "auto"}}
    assert _codes(cfg, select=["ZL502"], target="hf") == [
        ("ZL502", "error", "/zero_optimization/overlap_comm", "initialize",
         "the HF Trainer does not fill \"auto\" at zero_optimization.overlap_comm: Accelerate raises \"ValueError: "
         "`zero_optimization.overlap_comm` not found in kwargs. Please specify `zero_optimization.overlap_comm` "
         "without `auto` (set to correct value) in the DeepSpeed config file or pass it in kwargs.\" when "
         "trainer.train() (or accelerator.prepare) prepares the model, before deepspeed.initialize")]


def test_target_auto_names_the_consumer_and_raw_deepspeeds_verdict(tmp_path):
    (tmp_path / "ds.json").write_text('{"train_batch_size": "auto", "zero_optimization": {"stage": 2}}\n')
    rc, diags = _diags("--deepspeed-version", "0.19.8", "--select", "ZL504,ZL501", "ds.json", cwd=tmp_path)
    assert rc == 0
    # raw DeepSpeed would crash on it: a warning, not a hidden info
    assert [(d["code"], d["severity"], d["line"], d["column"]) for d in diags] == [("ZL504", "warning", 1, 22)]
    assert diags[0]["message"].startswith("checked as the HF Trainer reads it (transformers ")
    assert diags[0]["message"].endswith(" assumed), because the file holds 1 \"auto\" value; passed to "
                                        "deepspeed.initialize directly, DeepSpeed 0.19.8 fails at parse "
                                        "(train_batch_size is \"auto\": TypeError: '>' not supported between "
                                        "instances of 'str' and 'int')")
    rc, diags = _diags("--target", "deepspeed", "--select", "ZL504,ZL501", "ds.json", cwd=tmp_path)
    assert rc == 1 and [d["code"] for d in diags] == ["ZL501"]


def test_an_explicit_target_wins_over_a_yaml_in_the_same_run_and_its_reading_is_added():
    """`--target deepspeed` for a JSON that an Accelerate YAML of the same run names: the file is checked as asked
    (the YAML's reading used to replace it silently: 3 errors alone, 0 together), and what the YAML's reading finds
    besides comes with the route in its message."""
    ds = str(ACC / "ds_zero2.json")
    # (--no-uses: this repository's own files name the fixture; the question here is the run's two readings)
    _, alone = _diags(ds, "--target", "deepspeed", "--no-uses")
    rc, together = _diags(str(ACC / "accelerate_conflicts.yaml"), ds, "--target", "deepspeed", "--no-uses")
    in_ds = [(d["code"], d["pointer"]) for d in together if d["file"] == ds]
    assert [(d["code"], d["pointer"]) for d in alone] == [("ZL501", "/train_micro_batch_size_per_gpu"),
                                                          ("ZL501", "/gradient_accumulation_steps"),
                                                          ("ZL501", "/gradient_clipping")]
    assert rc == 1 and in_ds == [("ZL501", "/train_micro_batch_size_per_gpu"),
                                 ("ZL501", "/gradient_accumulation_steps"), ("ZL501", "/gradient_clipping"),
                                 ("ZL521", "/bf16/enabled")]
    [added] = [d for d in together if d["file"] == ds and d["code"] == "ZL521"]
    assert added["message"].endswith(f"(as `accelerate launch` reads it through {ACC / 'accelerate_conflicts.yaml'})")


def test_a_yamls_config_file_is_looked_for_where_a_launch_starts_and_the_places_are_named(tmp_path):
    """`accelerate launch --config_file configs/accelerate/a.yaml` typed at the repository's root opens
    `configs/ds.json` from there: found; a missing one names every place it was looked for."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "configs" / "accelerate").mkdir(parents=True)
    shutil.copy(ACC / "ds_zero2.json", repo / "configs" / "ds.json")
    yaml = (ACC / "accelerate_ok.yaml").read_text().replace("deepspeed_config_file: ds_zero2.json",
                                                            "deepspeed_config_file: configs/ds.json")
    (repo / "configs" / "accelerate" / "a.yaml").write_text(yaml)
    rc, diags = _diags("configs/accelerate/a.yaml", cwd=repo)
    assert rc == 0 and [d["code"] for d in diags if d["code"] == "ZL524"] == []
    (repo / "configs" / "ds.json").unlink()
    rc, diags = _diags("configs/accelerate/a.yaml", cwd=repo)
    [missing] = [d for d in diags if d["code"] == "ZL524"]
    assert missing["message"] == ("deepspeed_config_file 'configs/ds.json' does not exist (looked from where a launch "
                                  "can start: the repository root .; the YAML's directory configs/accelerate); "
                                  "Accelerate fails with FileNotFoundError")
