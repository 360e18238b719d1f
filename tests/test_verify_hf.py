"""`zerolint verify --target hf|accelerate` through the real HF Trainer and Accelerate on the CPU (the [hf] extra),
and `--training-args` on both the real and the replayed path. No mocks: each run is `python -m zerolint verify`,
whose child runs transformers 5.24 / accelerate 1.15 / DeepSpeed 0.19.8 on a tiny random GPT-2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, require

from zerolint.verify.hf_args import TrainingArgsError, read_training_args

pytestmark = [pytest.mark.slow, pytest.mark.deepspeed]

MISMATCH = """{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": "auto",
  "gradient_clipping": "auto",
  "zero_optimization": {"stage": 2},
  "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "weight_decay": "auto", "torch_adam": true}}
}
"""
AUTO = """{
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "train_batch_size": "auto",
  "gradient_clipping": "auto",
  "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto"},
  "scheduler": {"type": "WarmupLR",
                "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto", "warmup_num_steps": "auto"}}
}
"""
ARGS_YAML = "learning_rate: 2.0e-5\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 2\n" \
            "output_dir: /etc/zerolint-must-not-write-here\nhub_token: secret\n"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    require("deepspeed")
    require("transformers")
    require("accelerate")
    ext = os.environ.get("TORCH_EXTENSIONS_DIR", str(ROOT / ".cache" / "torch_extensions"))
    return {**os.environ, "NO_COLOR": "1", "TORCH_EXTENSIONS_DIR": ext,
            "ZEROLINT_CACHE_DIR": str(tmp_path_factory.mktemp("zerolint-cache"))}


def verify(env, config, *args):
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", str(config), "--cpu", "--format", "json", "-q",
                        "--no-cache", "--isolated", *args], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=900)
    try:
        return p.returncode, json.loads(p.stdout), p.stderr
    except ValueError:
        raise AssertionError(f"no JSON report (exit {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")


def changes(run) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c in run["changes"]:
        out.setdefault(c["pointer"], []).append(c["message"])
    return out


def test_real_trainer_reproduces_hfs_mismatch_error_at_the_key(env, tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text(MISMATCH)
    code, report, _ = verify(env, cfg, "--target", "hf")
    assert code == 1
    run = report["verify"]["runs"][0]
    assert report["verify"]["verdict"] == "fail"
    assert changes(run)[""][0] == ('"auto" is filled and checked by the HF Trainer itself (transformers 5.24.0, '
                                  "accelerate 1.15.0)")
    f = run["failure"]
    assert f["stage"] == "initialize"
    assert (f["pointer"], f["line"], f["column"]) == ("/train_micro_batch_size_per_gpu", 2, 3)
    assert f["message"] == ("ValueError: Please correct the following DeepSpeed config values that mismatch "
                            "TrainingArguments values: ds train_micro_batch_size_per_gpu=4 vs hf "
                            "per_device_train_batch_size=8; ds optimizer.params.lr=0.0001 vs hf learning_rate=5e-05")
    assert f["where"] == "transformers/integrations/deepspeed.py:260 (trainer_config_finalize)"
    assert f["related"] == [{"pointer": "/optimizer/params/lr",
                             "message": "ds optimizer.params.lr=0.0001 vs hf learning_rate=5e-05"}]
    [d] = [d for d in report["diagnostics"] if d["code"] == "ZL990"]
    assert (d["line"], d["column"], d["severity"]) == (2, 3, "error")
    assert d["message"].startswith("the HF Trainer fails at initialize: ValueError: Please correct the following")


def test_real_trainer_fills_warmup_with_at_least_one_step_and_passes(env, tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text(AUTO)
    args = tmp_path / "args.yaml"
    args.write_text(ARGS_YAML)
    code, report, _ = verify(env, cfg, "--target", "hf", "--training-args", str(args))
    assert code == 0, report
    run = report["verify"]["runs"][0]
    assert run["status"] == "pass"
    ch = changes(run)
    # HF's own fill (transformers/integrations/deepspeed.py:252-256: max(1, warmup steps))
    assert ch["/scheduler/params/warmup_num_steps"] == ['"auto" filled by the HF Trainer: 1']
    assert ch["/scheduler/params/warmup_max_lr"] == ['"auto" filled by the HF Trainer: 2e-05']
    assert ch["/train_micro_batch_size_per_gpu"] == ['"auto" filled by the HF Trainer: 2']
    assert ch["/zero_optimization/reduce_bucket_size"] == ['"auto" filled by the HF Trainer: 4096']
    assert (run["facts"]["train_batch_size"], run["facts"]["micro_batch"], run["facts"]["grad_accum"]) == (4, 2, 2)
    assert not os.path.exists("/etc/zerolint-must-not-write-here")
    assert [(c["message"], c["kind"]) for c in run["changes"] if c["message"].startswith("--training-args")] == [
        ("--training-args output_dir not honoured: not used by a verify run (it names a path, the network, or a "
         "feature the run does not exercise)", "neutralised"),
        ("--training-args hub_token not honoured: not used by a verify run (it names a path, the network, or a "
         "feature the run does not exercise)", "neutralised")]


REPLAY = """{
  "train_micro_batch_size_per_gpu": "auto",
  "zero_optimization": {"stage": 2},
  "optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto", "torch_adam": true}}
}
"""
MISMATCHED_ARGS = {"learning_rate": 1e-4, "per_device_train_batch_size": 2}


def test_training_args_mismatch_is_reported_statically_on_the_replayed_path(env, tmp_path):
    """Without HF, the mismatch is ZL523's (the static check, with the same --training-args)."""
    cfg = tmp_path / "ds.json"
    cfg.write_text(MISMATCH)
    args = tmp_path / "args.json"
    args.write_text(json.dumps(MISMATCHED_ARGS))
    code, report, _ = verify(env, cfg, "--target", "hf", "--hf", "replay", "--training-args", str(args))
    assert code == 1
    assert [(d["code"], d["pointer"], d["line"], d["column"]) for d in report["diagnostics"]
            if d["code"] == "ZL523"] == [("ZL523", "/train_micro_batch_size_per_gpu", 2, 37)]


def test_training_args_on_the_replayed_path(env, tmp_path):
    # (no scheduler: the replay fills warmup_num_steps 0, which DeepSpeed rejects, until the ruleshf branch lands)
    cfg = tmp_path / "ds.json"
    cfg.write_text(REPLAY)
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"learning_rate": 2e-5, "per_device_train_batch_size": 2}))
    code, report, _ = verify(env, cfg, "--target", "hf", "--hf", "replay", "--training-args", str(args))
    assert code == 0, report
    run = report["verify"]["runs"][0]
    ch = changes(run)
    assert ch[""] == ['"auto" is filled by zerolint\'s replay of the HF fill (--hf replay)']
    assert ch["/optimizer/params/lr"] == ['"auto" filled as the HF Trainer does: learning_rate']
    assert ch["/train_micro_batch_size_per_gpu"][0] == ('"auto" filled as the HF Trainer does: '
                                                       "per_device_train_batch_size")
    assert [c["after"] for c in run["changes"] if c["pointer"] == "/optimizer/params/lr"] == [2e-5]
    assert run["facts"]["micro_batch"] == 2
    # the static phase got the same arguments: no mismatch (ZL523), only the info on the clipping default
    assert [(d["code"], d["severity"]) for d in report["diagnostics"]] == [("ZL705", "info")]


def test_accelerate_target_runs_through_accelerator(env, tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text(AUTO)
    code, report, _ = verify(env, cfg, "--target", "accelerate")
    assert code == 0, report
    run = report["verify"]["runs"][0]
    ch = changes(run)
    assert ch[""][0] == '"auto" is filled and checked by Accelerate itself (transformers 5.24.0, accelerate 1.15.0)'
    # accelerator.py _prepare_deepspeed: the DataLoader's batch size, DummyScheduler's max(1, warmup)
    assert ch["/train_micro_batch_size_per_gpu"] == ['"auto" filled by Accelerate: 8']
    assert ch["/scheduler/params/warmup_num_steps"] == ['"auto" filled by Accelerate: 1']
    assert run["facts"]["optimizer_inner"] == "AdamW"


def test_training_args_are_untrusted(tmp_path):
    f = tmp_path / "args.yaml"
    f.write_text(ARGS_YAML + "warmup_ratio: 0.1\n")
    args = read_training_args(str(f))
    assert args.values == {"learning_rate": 2e-5, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 2}
    assert [name for name, _ in args.dropped] == ["output_dir", "hub_token", "warmup_ratio"]
    for text, message in (
        ('{"learning_rate": "x"}', "learning_rate must be a number, not 'x'"),
        ('{"per_device_train_batch_size": 0}', "per_device_train_batch_size must be at least 1, not 0"),
        ('{"optim": "adamw_bnb_8bit"}', "optim 'adamw_bnb_8bit' is not one verify can run"),
        ("[1]", "a TrainingArguments file must hold an object of fields, not list"),
        ('{"fp16": true, "bf16": true}', "fp16 and bf16 are both true"),
    ):
        f = tmp_path / "a.json"
        f.write_text(text)
        with pytest.raises(TrainingArgsError) as e:
            read_training_args(str(f))
        assert message in str(e.value)
    f = tmp_path / "bomb.yaml"
    f.write_text("a: &x [1]\nb: *x\n")
    with pytest.raises(TrainingArgsError, match="anchors and aliases are not accepted"):
        read_training_args(str(f))


def test_bad_training_args_is_a_usage_error(env, tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text(AUTO)
    args = tmp_path / "args.json"
    args.write_text('{"learning_rate": "fast"}')
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", str(cfg), "--cpu", "--target", "hf",
                        "--training-args", str(args)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines()[-1] == (f"zerolint: error: --training-args: {args}: learning_rate must be a "
                                                 "number, not 'fast'")
    assert "Traceback" not in p.stderr


CORPUS = ROOT / "tests" / "data" / "corpus" / "real-world"
BETAS = ("ValueError: `optimizer.params.betas` not found in kwargs. Please specify `optimizer.params.betas` without "
         "`auto` (set to correct value) in the DeepSpeed config file or pass it in kwargs.")


def test_accelerates_own_fill_against_the_static_claims(env):
    """`accelerate launch` of a loop of one's own (the real Accelerator, accelerator.prepare with DummyOptim) on
    corpus configs: each failure is at the key a static finding names, with the phase it claims (ZL534: the
    optimizer's betas, which only the HF Trainer fills; ZL502: a key nobody fills; ZL522: no zero_optimization),
    and the config with no such finding passes. No fp16 config: on a CPU without fp16 (AMD EPYC here) verify
    skips it, so its verdict would depend on the machine."""
    names = ["QwenLM__Qwen__finetune__ds_config_zero2.json", "huggingface__transformers__tests__deepspeed__"
             "ds_config_zero2_bf16.json", "deepspeedai__DeepSpeedExamples__training__gan__gan_deepspeed_config.json",
             "hiyouga__LLaMA-Factory__examples__deepspeed__ds_z3_offload_config.json"]
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", *(str(CORPUS / n) for n in names), "--cpu",
                        "--target", "accelerate", "--jobs", "2", "--format", "json", "-q", "--no-cache",
                        "--isolated"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    report = json.loads(p.stdout)
    got = {}
    for v in report["verify"]:
        f = v["runs"][0].get("failure") or {}
        static = sorted((d["code"], d["severity"], d["pointer"], d.get("fails_at")) for d in report["diagnostics"]
                        if d["file"] == v["file"] and d.get("fails_at") and d["code"] != "ZL990")
        got[os.path.basename(v["file"])] = (v["verdict"], f.get("pointer"), f.get("message"), static)
    assert got == {
        names[0]: ("fail", "/optimizer/params/betas", BETAS,
                   [("ZL534", "warning", "/optimizer/params/betas", "initialize"),
                    ("ZL534", "warning", "/optimizer/params/eps", "initialize")]),
        names[1]: ("fail", "/bfloat16/enabled", BETAS.replace("optimizer.params.betas", "bfloat16.enabled"),
                   [("ZL502", "error", "/bfloat16/enabled", "initialize"),
                    ("ZL534", "warning", "/optimizer/params/betas", "initialize"),
                    ("ZL534", "warning", "/optimizer/params/eps", "initialize")]),
        names[2]: ("fail", "", "ValueError: Please specify the ZeRO optimization config in the DeepSpeed config.",
                   [("ZL522", "error", "", "initialize")]),
        names[3]: ("pass", None, None, []),
    }, p.stderr[-3000:]
    assert p.returncode == 1
    # The same HF-style config through the HF Trainer: it fills betas and eps itself, and the run passes.
    code, report, _ = verify(env, CORPUS / names[0], "--target", "hf")
    assert (code, report["verify"]["verdict"]) == (0, "pass")
    assert [d["code"] for d in report["diagnostics"] if d["code"] == "ZL534"] == []
