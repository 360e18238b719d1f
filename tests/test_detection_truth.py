"""Detection, round 3 (issue 23): each corrected claim, checked on the real code. Every case is linted by `zerolint
check` and run by `zerolint verify` on the CPU (DeepSpeed 0.19.8's real initialize and steps, one session for all
of them): the finding's severity and failure claim must match what the run did."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import test_verify_cpu as cold

ops_built, env = cold.ops_built, cold.env  # the session's op build and the verify environment, shared
ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Truth:
    name: str
    config: dict
    findings: list[tuple[str, str, str | None]]  # (code, severity, fails_at) that check must report, exactly
    status: str  # the run's status: pass | fail
    facts: dict = field(default_factory=dict)  # engine facts the run must show
    error_re: str = ""  # for a fail: the error DeepSpeed raised


BASE = {"train_micro_batch_size_per_gpu": 2, "steps_per_print": 1000}
TRUTHS = [
    # DeepSpeed reads torch_adam with `if torch_adam:` (engine.py:2378-2381): a string picks torch's AdamW
    Truth("torch_adam_string", {**BASE, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4,
                                                                                  "torch_adam": "torch_impl"}}},
          [("ZL104", "warning", None)], "pass", {"optimizer_inner": "AdamW"}),
    Truth("torch_adam_false_string", {**BASE, "optimizer": {"type": "Adam", "params": {"lr": 1e-4,
                                                                                       "torch_adam": "false"}}},
          [("ZL104", "warning", None)], "pass", {"optimizer_inner": "AdamW"}),
    # engine.py:1809: DtypeEnum("float8") raises in the optimizer's sanity check
    Truth("grad_accum_dtype_float8", {**BASE, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4,
                                                                                        "torch_adam": True}},
                                      "data_types": {"grad_accum_dtype": "float8"}},
          [("ZL105", "error", "initialize")], "fail", error_re="'float8' is not a valid DtypeEnum"),
    # lr_schedules.py:904-916: step 0's ratio is warmup_min_ratio, so the first learning rate is negative
    Truth("cosine_negative_start", {**BASE, "optimizer": {"type": "AdamW", "params": {"lr": 1e-3,
                                                                                      "torch_adam": True}},
                                    "scheduler": {"type": "WarmupCosineLR", "params": {
                                        "total_num_steps": 5000, "warmup_num_steps": 100, "warmup_type": "linear",
                                        "warmup_min_ratio": -0.1, "cos_min_ratio": 1.5}}},
          [("ZL610", "warning", None), ("ZL610", "warning", None)], "pass",
          {"lr_per_step": lambda lrs: lrs[0] < 0}),
    # lr_schedules.py:741-760: a "warm-up" from 1e-3 down to 1e-5
    Truth("warmup_downwards", {**BASE, "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "torch_adam": True}},
                               "scheduler": {"type": "WarmupLR", "params": {
                                   "warmup_min_lr": 1e-3, "warmup_max_lr": 1e-5, "warmup_num_steps": 10,
                                   "warmup_type": "linear"}}},
          [("ZL610", "warning", None)], "pass", {"lr_per_step": lambda lrs: lrs[2] < lrs[0]}),
    # bf16_optimizer.py:81: only the BF16_Optimizer reads immediate_grad_update; ZeRO-2 builds its own optimizer
    Truth("immediate_grad_update_zero2", {**BASE, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4,
                                                                                            "torch_adam": True}},
                                          "bf16": {"enabled": True, "immediate_grad_update": True},
                                          "zero_optimization": {"stage": 2}},
          [("ZL312", "warning", None)], "pass", {"optimizer_outer": "DeepSpeedZeroOptimizer"}),
    # engine.py:2305-2310: ZeRO-1, bf16, fp32 accumulation, no offload: the BF16_Optimizer runs and reads it
    Truth("immediate_grad_update_bf16_optimizer", {**BASE, "optimizer": {"type": "AdamW", "params": {
                                                       "lr": 1e-4, "torch_adam": True}},
                                                   "bf16": {"enabled": True, "immediate_grad_update": True},
                                                   "data_types": {"grad_accum_dtype": "fp32"},
                                                   "zero_optimization": {"stage": 1}},
          [], "pass", {"optimizer_outer": "BF16_Optimizer"}),
    # utils.py:422-427: DeepSpeed clips to the tiny norm and the run goes on, silently
    Truth("gradient_clipping_tiny", {**BASE, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4,
                                                                                       "torch_adam": True}},
                                     "gradient_clipping": 1e-7},
          [("ZL613", "warning", None)], "pass"),
    # monitor/utils.py:19-26: rank 0 imports wandb at initialize (the test environment has no wandb)
    Truth("wandb_missing", {**BASE, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}},
                            "wandb": {"enabled": True, "project": "p"}},
          [("ZL913", "warning", None)], "fail", error_re="No module named 'wandb'"),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, env):
    d = tmp_path_factory.mktemp("truth")
    paths = []
    for t in TRUTHS:
        p = d / f"{t.name}.json"
        p.write_text(json.dumps(t.config, indent=2) + "\n")
        paths.append(str(p))
    check = subprocess.run([sys.executable, "-m", "zerolint", "check", "--target", "deepspeed", "--format", "json",
                            "--show-info", *paths], capture_output=True, text=True, env=env, cwd=d, timeout=300)
    findings = json.loads(check.stdout)["diagnostics"]
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", *paths, "--cpu", "--no-cache", "--target",
                        "deepspeed", "--format", "json", "-q"], capture_output=True, text=True, env=env, cwd=d,
                       timeout=1500)
    try:
        verified = {Path(v["file"]).stem: v for v in json.loads(p.stdout)["verify"]}
    except ValueError:
        raise AssertionError(f"no JSON report (exit {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    by_file: dict[str, list] = {}
    for f in findings:
        by_file.setdefault(Path(f["file"]).stem, []).append(f)
    return by_file, verified


@pytest.mark.deepspeed
@pytest.mark.parametrize("truth", TRUTHS, ids=[t.name for t in TRUTHS])
def test_the_claim_is_what_the_run_does(runs, truth):
    by_file, verified = runs
    got = sorted((f["code"], f["severity"], f.get("fails_at")) for f in by_file.get(truth.name, [])
                 if f["severity"] != "info")
    assert got == sorted(truth.findings)
    run = verified[truth.name]["runs"][0]
    assert run["status"] == truth.status, run.get("failure")
    if truth.error_re:
        assert re.search(truth.error_re, run["failure"]["message"]), run["failure"]
        assert run["failure"]["stage"] == "initialize", run["failure"]
    for key, value in truth.facts.items():
        assert value(run["facts"][key]) if callable(value) else run["facts"][key] == value, run["facts"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RESUME = r"""
import json, os, sys, tempfile, torch, deepspeed
deepspeed.init_distributed(dist_backend="gloo")
config = json.loads(sys.argv[1])
saved = tempfile.mkdtemp()
def engine(cfg):
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 8)
    return deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)[0]
engine({k: v for k, v in config.items() if k != "checkpoint"}).save_checkpoint(saved)  # a regular checkpoint
try:
    engine(config).load_checkpoint(saved)
except Exception as e:
    print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
else:
    print(json.dumps({"error": None}))
"""


@pytest.mark.deepspeed
def test_load_universal_refuses_a_saved_checkpoint(tmp_path, env):
    """ZL914's condition on the real engine: with checkpoint.load_universal, resuming from a checkpoint that
    save_checkpoint wrote fails at load_checkpoint; zerolint says so as a warning."""
    config = {**BASE, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}},
              "checkpoint": {"load_universal": True}}
    path = tmp_path / "universal.json"
    path.write_text(json.dumps(config))
    check = subprocess.run([sys.executable, "-m", "zerolint", "check", "--target", "deepspeed", "--format", "json",
                            str(path)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    got = [(d["code"], d["severity"]) for d in json.loads(check.stdout)["diagnostics"] if d["severity"] != "info"]
    assert got == [("ZL914", "warning")]
    run_env = {**env, "DS_ACCELERATOR": "cpu", "RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1",
               "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port())}
    p = subprocess.run([sys.executable, "-c", RESUME, json.dumps(config)], capture_output=True, text=True,
                       env=run_env, cwd=tmp_path, timeout=600)
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    assert lines, p.stderr[-4000:]
    error = json.loads(lines[-1])["error"]
    assert error is not None and re.search(r"ValueError: Invalid for universal checkpoint: .*latest_universal does "
                                           "not exist", error), error


NO_SYNC = r"""
import json, sys, torch, deepspeed
deepspeed.init_distributed(dist_backend="gloo")
model = torch.nn.Linear(8, 8)
engine = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=json.loads(sys.argv[1]))[0]
try:
    with engine.no_sync():
        pass
except Exception as e:
    print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
else:
    print(json.dumps({"error": None}))
"""


@pytest.mark.deepspeed
@pytest.mark.parametrize("stage,error", [
    (2, "AssertionError: no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage 2"),
    (1, None)])
def test_no_sync_under_partitioned_gradients(tmp_path, env, stage, error):
    """ZL223 with the repository read: the loop calls engine.no_sync(); the real engine asserts at ZeRO-2 and not
    at ZeRO-1, and check says exactly that."""
    config = {**BASE, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}},
              "zero_optimization": {"stage": stage}}
    (tmp_path / ".git").mkdir()
    (tmp_path / "ds.json").write_text(json.dumps(config))
    (tmp_path / "run.sh").write_text("deepspeed --num_gpus 1 train.py --deepspeed ds.json\n")
    (tmp_path / "train.py").write_text("import deepspeed\nengine = deepspeed.initialize(model=m, config=cfg)[0]\n"
                                       "with engine.no_sync():\n    engine.backward(loss)\n")
    check = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "json", "ds.json"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    got = [(d["code"], d["severity"]) for d in json.loads(check.stdout)["diagnostics"] if d["severity"] != "info"]
    assert got == ([("ZL223", "error")] if error else [])
    run_env = {**env, "DS_ACCELERATOR": "cpu", "RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1",
               "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port())}
    p = subprocess.run([sys.executable, "-c", NO_SYNC, json.dumps(config)], capture_output=True, text=True,
                       env=run_env, cwd=tmp_path, timeout=600)
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    assert lines, p.stderr[-4000:]
    assert json.loads(lines[-1])["error"] == error
