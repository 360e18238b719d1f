"""verify's verdict is the one the user's own run would get (issue 21, item 5). Each case reproduced first: on the
main before this change, monitors were switched off (a config with wandb on passed where the package is missing),
the replay path passed a config whose values mismatch --training-args, the --compare-fix table said `pass` where its
own block said FAIL, and a config with a checkpoint writer failed with KeyError 'CROSS_SIZE' (verify's launch, not
the config). Real CPU runs of DeepSpeed 0.19.8, no mocks."""

from __future__ import annotations

import importlib.util
import json

import pytest
import test_verify_cpu as cold
from test_verify_cpu import ADAMW, run0, verify, write

from zerolint.verify import resolve
from zerolint.verify.report import RunReport, analyse

pytestmark = cold.pytestmark
ops_built, env = cold.ops_built, cold.env


def _failure(rep: dict) -> tuple:
    [d] = [d for d in rep["diagnostics"] if d["code"] == "ZL990"]
    return d["pointer"], d["line"], d["column"], d["message"], d["help"]


@pytest.mark.parametrize("monitor,package", [("wandb", "wandb"), ("tensorboard", "tensorboard")])
def test_a_monitor_whose_package_is_missing_fails_as_deepspeed_does(env, tmp_path, monitor, package):
    if importlib.util.find_spec(package) is not None:
        pytest.fail(f"{package} is installed in the test venv: this test needs it missing")
    cfg = write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW,
                                      monitor: {"enabled": True}})
    rc, rep = verify(env, cfg, "--no-cache")
    assert (rc, rep["verify"]["verdict"]) == (1, "fail")
    lines = cfg.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if '"enabled"' in text and i > lines.index(f'  "{monitor}": {{'))
    assert _failure(rep) == (
        f"/{monitor}/enabled", line, lines[line - 1].index('"enabled"') + 1,
        f"DeepSpeed fails at initialize: ModuleNotFoundError: No module named '{package}' [deepspeed/monitor/utils.py:"
        f"{21 if monitor == 'wandb' else 13} (check_{'wandb' if monitor == 'wandb' else 'tb'}_availability)]",
        f"install {package} where the job runs (pip install {package}), or set {monitor}.enabled to false")


def test_a_monitor_that_needs_no_package_runs_and_writes_only_into_the_runs_directory(env, tmp_path):
    out = tmp_path / "logs"
    cfg = write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW,
                                      "csv_monitor": {"enabled": True, "output_path": str(out), "job_name": "j"}})
    rc, rep = verify(env, cfg, "--no-cache")
    run = run0(rep)
    assert (rc, run["status"]) == (0, "pass"), run
    assert not out.exists()  # pointed into the run's temp dir (resolve.neutralise), removed with it
    assert [c["pointer"] for c in run["changes"] if c["kind"] == "neutralised"] == [
        "/csv_monitor/output_path", "/csv_monitor/job_name"]
    assert not [c for c in run["changes"] if c["pointer"].endswith("/enabled")]  # never switched off


def test_comet_runs_offline():
    changes: list = []
    cfg = {"comet": {"enabled": True, "api_key": "k"}}
    resolve.make_safe(cfg, "/tmp/run", changes)
    assert cfg["comet"] == {"enabled": True, "api_key": "k", "online": False}
    assert [(c.pointer, c.kind) for c in changes] == [("/comet/online", "neutralised")]


def test_the_replay_applies_the_trainers_mismatch_check(env, tmp_path):
    """--hf replay (as without transformers installed): a value that differs from --training-args fails as the HF
    Trainer fails, at the same keys as ZL523, and DeepSpeed is not run."""
    cfg = write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": "auto",
                                      "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "weight_decay": "auto"}},
                                      "bf16": {"enabled": "auto"}})
    args = write(tmp_path, "args.json", {"per_device_train_batch_size": 8, "learning_rate": 2e-5})
    rc, rep = verify(env, cfg, "--no-cache", "--target", "hf", "--hf", "replay", "--training-args", str(args))
    assert (rc, rep["verify"]["verdict"]) == (1, "fail")
    run = run0(rep)
    assert run["timings"]["wall_s"] == 0.0 and run["ops_loaded"] == []
    ptr, line, col, message, help_ = _failure(rep)
    assert (ptr, line, col) == ("/train_micro_batch_size_per_gpu", 2, 3)
    assert message == ("the HF Trainer fails at initialize: ValueError: Please correct the following DeepSpeed config "
                       "values that mismatch TrainingArguments values: ds train_micro_batch_size_per_gpu=4 vs hf "
                       "per_device_train_batch_size=8; ds optimizer.params.lr=0.0001 vs hf learning_rate=2e-05 "
                       "[transformers/integrations/deepspeed.py:0 (trainer_config_finalize)]")
    static = sorted((d["pointer"], d["line"]) for d in rep["diagnostics"] if d["code"] == "ZL523")
    assert static == [("/optimizer/params/lr", 7), ("/train_micro_batch_size_per_gpu", 2)]


def test_compare_fix_table_and_blocks_agree(env, tmp_path):
    """The original runs but its intent check fails (offload_param below stage 3 is ignored): its block says FAIL,
    and so does the table's result row."""
    cfg = write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW,
                                      "zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}})
    rc, rep = verify(env, cfg, "--no-cache", "--compare-fix", "--unsafe-fixes")
    original, fixed = rep["verify"]["runs"]
    assert rep["verify"]["verdict"] == "fail" and original["status"] == "pass"
    assert rep["verify"]["compare_fix"]["fixed_verdict"] == "pass"
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", str(cfg), "--cpu", "--compare-fix",
                        "--unsafe-fixes"], capture_output=True, text=True, env={**env, "COLUMNS": "200"},
                       cwd=tmp_path, timeout=900)
    [row] = [line for line in p.stdout.splitlines() if line.split()[:1] == ["result"]]  # the table, not "result:"
    assert row.split()[1:] == ["fail", "(ran;", "intent", "checks", "failed)", "pass"], row


def test_a_checkpoint_writer_fails_as_under_deepspeeds_launcher(env, tmp_path):
    """DeepSpeed's checkpoint writer reads CROSS_RANK/CROSS_SIZE, which DeepSpeed's own launcher sets: a single-rank
    verify sets them as it does. Before, the run failed with KeyError 'CROSS_SIZE', a failure of verify's launch;
    now it meets what DeepSpeed 0.19.8's own run meets there, its writer's AttributeError, at the writer's key."""
    cfg = write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW,
                                      "checkpoint": {"writer": {"type": "mock"}}})
    rc, rep = verify(env, cfg, "--no-cache")
    ptr, line, col, message, help_ = _failure(rep)
    assert (rc, ptr) == (1, "/checkpoint/writer")
    assert message == ("DeepSpeed fails at initialize: AttributeError: 'UniversalParallelInfo' object has no "
                       "attribute 'dp_rank' [deepspeed/runtime/model_checkpointing/data_parallel_writer_factory.py:95 "
                       "(_get_data_parallel_config)]")
    assert "CROSS_SIZE" not in json.dumps(rep)


def test_a_failure_at_a_key_verify_changed_is_not_the_configs(tmp_path):
    """A run that fails at a path verify pointed into its temp dir says so (not verified) instead of blaming the
    config: what the user's run does with the real path cannot be told."""
    from zerolint.model.document import parse
    from zerolint.model.view import Settings, View

    text = json.dumps({"train_micro_batch_size_per_gpu": 2,
                       "flops_profiler": {"enabled": True, "output_file": "/data/prof.txt"}}, indent=2)
    doc = parse(text, "ds.json")
    plan = resolve.build_plan(json.loads(text), target="deepspeed", tmpdir=str(tmp_path))
    [changed] = [c for c in plan.changes if c.kind == resolve.NEUTRALISED]
    record = {"status": "fail", "phase": "step 1", "error": {
        "type": "PermissionError", "message": f"[Errno 13] Permission denied: '{changed.after}'",
        "frames": [{"file": "deepspeed/profiling/flops_profiler/profiler.py", "line": 1, "func": "print_model_profile",
                    "code": ""}]}}
    rep = analyse(RunReport(label="original", path="ds.json", doc=doc, view=View(doc, Settings()), plan=plan,
                            record=record, static=[]))
    assert rep.status == "skip"
    [d] = rep.verify
    assert (d.code, d.pointer) == ("ZL993", "/flops_profiler/output_file")
    assert d.message.startswith("not verified: the run failed at /flops_profiler/output_file, which verify changed "
                                "for safety (flops_profiler.output_file not honoured:")


def test_the_coloured_report_is_the_plain_one_with_colours(tmp_path, capsys, monkeypatch):
    """On a terminal verify prints through rich and report/text.py's colours: the same text as the plain report
    once the escape sequences are dropped (it once imported a function report/text.py no longer has)."""
    import re

    from zerolint.model.document import parse
    from zerolint.model.view import Settings, View
    from zerolint.report.output import make_summary
    from zerolint.verify.report import print_rich, render_text

    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    text = json.dumps({"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2}}, indent=2)
    doc = parse(text, "ds.json")
    plan = resolve.build_plan(json.loads(text), target="deepspeed", tmpdir=str(tmp_path))
    record = {"status": "fail", "phase": "initialize", "error": {"type": "ValueError", "message": "boom",
                                                                  "frames": []}}
    rep = analyse(RunReport(label="original", path="ds.json", doc=doc, view=View(doc, Settings()), plan=plan,
                            record=record, static=[]))
    summary = make_summary(rep.diagnostics, 1)
    print_rich([rep], None, {"ds.json": doc}, summary)
    out = capsys.readouterr().out
    assert "\x1b[" in out
    plain = render_text([rep], None, {"ds.json": doc}, summary)
    assert re.sub(r"\x1b\[[0-9;]*m", "", out).split() == plain.split()
