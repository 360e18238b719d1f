"""The warm runner for real on the CPU (DeepSpeed 0.19.8, no mocks): one server imports torch and DeepSpeed once and
forks a child per config. One config's crash (a DeepSpeed exception, a segfault, an exit without a result) or hang
does not touch the next; Ctrl-C in a multi-config verify exits 130 and leaves no process and no temp dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import test_verify_cpu as cold
from test_verify_cpu import ADAMW, ROOT, interrupt_once_forked, processes_marked, write

from zerolint.verify.resolve import build_plan, model_spec
from zerolint.verify.runner import RunOptions, spec_of
from zerolint.verify.warm import WarmServer, run_plans

pytestmark = cold.pytestmark
ops_built, env = cold.ops_built, cold.env  # the session's op build and the module's environment, shared

GOOD = {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW, "zero_optimization": {"stage": 2}}
BAD = '{"train_micro_batch_size_per_gpu": 2,\n "zero_optimization": {"stage": 2, "offload_optimiser": {}}}\n'


def plan(cfg: dict):
    return build_plan(cfg, target="deepspeed", world_size=1, steps=2, model=model_spec(None, None), tmpdir="/tmp")


@pytest.fixture
def server(ops_built, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", ops_built)
    s = WarmServer("cpu", ops_built)
    s.start()
    yield s
    s.close()
    assert processes_marked(os.getpid()) == []  # the server and every fork are gone
    assert not os.path.exists(s.base)


def test_a_crash_or_a_hang_does_not_touch_the_next_config(server):
    spec = spec_of(plan(GOOD), "cpu")
    seg = server.run({**spec, "test_failure": "segfault"}, timeout=60)
    assert (seg["status"], seg["error"]["message"]) == (
        "crash", "the verify child was killed by signal 11 without writing a result")
    gone = server.run({**spec, "test_failure": "exit"}, timeout=60)
    assert (gone["status"], gone["error"]["message"]) == (
        "crash", "the verify child exited with code 3 without writing a result")
    t = time.monotonic()
    hang = server.run({**spec, "test_failure": "hang"}, timeout=2)
    assert hang == {"rank": 0, "status": "timeout", "phase": "launch", "timeout_s": 2}
    assert time.monotonic() - t < 15
    ok = server.run(spec, timeout=120)
    assert (ok["status"], ok["facts"]["zero_stage"], ok["facts"]["optimizer_outer"], len(ok["losses"])) == (
        "pass", 2, "DeepSpeedZeroOptimizer", 2)
    assert ok["timings"]["import_s"] < 0.5  # torch and deepspeed came with the fork


def test_forks_find_the_cpu_described_already(server):
    """py-cpuinfo starts a process per question (~1 s; DeepSpeed asks three times for a CPU-offload config): the
    server asks once before forking, and a fork running DeepSpeedCPUAdam asks no more."""
    cfg = {**GOOD, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    for _ in range(2):
        rec = server.run(spec_of(plan(cfg), "cpu"), timeout=120)
        assert (rec["status"], rec["facts"]["optimizer_inner"], rec["timings"]["cpuinfo_processes"]) == (
            "pass", "DeepSpeedCPUAdam", 0)


def test_partial_offload_reports_where_each_sub_group_went(server):
    """offload_optimizer.ratio < 1 at ZeRO-3: DeepSpeed places whole sub-groups (stage3.py:1100-1108); the run says
    how many went where (on the CPU all are on the CPU; docs/verify-results.md has the H200's split)."""
    cfg = {**GOOD, "zero_optimization": {"stage": 3, "sub_group_size": 50000,
                                         "offload_optimizer": {"device": "cpu", "ratio": 0.5}}}
    rec = server.run(spec_of(plan(cfg), "cpu"), timeout=120)
    assert (rec["status"], rec["facts"]["optimizer_subgroup_devices"]) == ("pass", {"cpu": 3})


def test_a_deepspeed_exception_then_a_pass_side_by_side(server, ops_built):
    bad = plan(json.loads(BAD))
    opts = RunOptions(accelerator="cpu", extensions_dir=ops_built, timeout=120)
    seen: list[tuple[int, str]] = []
    recs = run_plans(server, [bad, plan(GOOD), bad], opts, jobs=2, progress=lambda i, p: seen.append((i, p)))
    assert [(r["status"], r["launcher"], r.get("phase")) for r in recs] == [
        ("fail", "warm", "initialize"), ("pass", "warm", None), ("fail", "warm", "initialize")]
    assert recs[0]["error"]["type"] == "ValidationError" and "offload_optimiser" in recs[0]["error"]["message"]
    assert len({r["run_id"] for r in recs}) == 3
    assert (1, "step 2") in seen and (0, "failed") in seen


def test_several_configs_one_table_and_exit_1(env, tmp_path):
    good, bad = write(tmp_path, "a_good.json", GOOD), write(tmp_path, "b_bad.json", BAD)
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", str(tmp_path), str(good), "--cpu", "--no-cache",
                        "--format", "json", "--format", "text", "-o", str(tmp_path / "out.txt"), "--jobs", "2"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert p.returncode == 1, p.stderr[-3000:]
    rep = json.loads(p.stdout)
    assert [(v["file"], v["verdict"], v["runs"][0]["launcher"]) for v in rep["verify"]] == [
        (str(good), "pass", "warm"), (str(bad), "fail", "warm")]  # a file named twice runs once
    [fail] = [d for d in rep["diagnostics"] if d["code"] == "ZL990"]
    assert (fail["file"], fail["line"], fail["column"], fail["severity"]) == (str(bad), 2, 36, "error")
    assert rep["summary"]["verify"] == {"pass": 1, "fail": 1}
    table = (tmp_path / "out.txt").read_text().splitlines()[-4:]
    assert [line.split()[:2] for line in table[:3]] == [["config", "verdict"], [str(good), "pass"],
                                                        [str(bad), "fail"]]
    assert table[3] == "1 pass, 1 fail of 2 configs"
    assert f"zerolint verify: [2/2] {bad}: fail in " in p.stderr
    assert "warm runner ready in " in p.stderr


def test_ctrl_c_during_several_configs_exits_130_and_leaves_nothing(env, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cfgs = [str(write(tmp_path, f"c{i}.json", {**GOOD, "steps_per_print": 1000 + i})) for i in range(3)]
    proc = subprocess.Popen([sys.executable, "-m", "zerolint", "verify", *cfgs, "--cpu", "--no-cache", "--format",
                             "json", "--steps", "100"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, "TMPDIR": str(tmp)}, cwd=ROOT)
    out, err = interrupt_once_forked(proc)
    assert (proc.returncode, out) == (130, ""), err[-3000:]
    assert "zerolint verify: interrupted; every process of the run was stopped" in err
    assert processes_marked(proc.pid) == []
    assert list(tmp.iterdir()) == []


def test_pooled_children_warm_up_before_their_config_and_each_runs_one(ops_built, monkeypatch):
    """The pool (on by default on a GPU, here on the CPU): each later config goes to a child that already holds
    its process group and ran the first kernels before the config came (the first one, with nothing to overlap
    its warm-up with, gets a fresh fork at once); its clock starts at the hand-over, and each child runs one
    config only (three configs, three run ids)."""
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", ops_built)
    opts = RunOptions(accelerator="cpu", extensions_dir=ops_built, timeout=120)
    with WarmServer("cpu", ops_built, pool=True) as server:
        recs = run_plans(server, [plan(GOOD), plan(json.loads(BAD)), plan(GOOD)], opts)
        assert server.warm_jobs == []  # no child warms for a config that will not come
    assert [(r["status"], r["pooled"]) for r in recs] == [("pass", False), ("fail", True), ("pass", True)], [
        (r.get("error"), (r.get("log_tail") or "")[-1500:]) for r in recs if r["status"] == "crash"]
    assert len({r["run_id"] for r in recs}) == 3
    for r in recs[1:]:
        assert r["timings"]["pooled"] is True and r["timings"]["warm_s"] > 0
        assert r["timings"]["process_s"] <= r["wall_s"] + 0.5  # the child's clock starts after its warm-up


@pytest.mark.slow
def test_a_pool_that_warmed_before_an_op_was_built_warms_again_and_stays_on(tmp_path, ops_built, monkeypatch):
    """A cold op cache (a fresh clone): the first config's fork stops at shm_comm (not built), which is built, and
    the children that were warming meanwhile stopped at it too. They are warmed again, not taken for a broken
    warm-up: the later configs still run pooled, and no child is left warming for a config that will not come."""
    import shutil

    ext = tmp_path / "ext"
    shutil.copytree(ops_built, ext, symlinks=True,
                    ignore=shutil.ignore_patterns("deepspeed_shm_comm", "lock", "*.lock"))
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(ext))
    opts = RunOptions(accelerator="cpu", extensions_dir=str(ext), timeout=120, build_timeout=1500)
    with WarmServer("cpu", str(ext), pool=True) as server:
        recs = run_plans(server, [plan(GOOD), plan(json.loads(BAD)), plan(GOOD)], opts)
        assert server.pool and server.warm_jobs == []
    # the first config's second run, after the build, goes to a child warmed meanwhile: pooled too
    assert [(r["status"], r["pooled"]) for r in recs] == [("pass", True), ("fail", True), ("pass", True)], [
        (r.get("error"), (r.get("log_tail") or "")[-1500:]) for r in recs if r["status"] == "crash"]
    assert [s["op"] for s in recs[0]["op_stops"]] == ["deepspeed_shm_comm"]


def test_pooled_children_never_given_a_config_leave_no_shm_segment(ops_built, monkeypatch):
    """A pooled child's warm-up runs DeepSpeed's first collectives, so shm_comm makes its /dev/shm segment (~67 MB,
    never unlinked by DeepSpeed) before any config comes; a child the run never needed must not leave it behind."""
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", ops_built)
    with WarmServer("cpu", ops_built, pool=True) as server:
        server.prewarm(2)
        ports = {job.port for job in server.warm_jobs}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not _segments(ports):
            time.sleep(0.5)  # until the warm-ups made theirs
        assert _segments(ports), "the warm-ups made no segment to clean up"
    assert _segments(ports) == []


def _segments(ports: set[int]) -> list[str]:
    names = os.listdir("/dev/shm") if os.path.isdir("/dev/shm") else []
    return [n for n in names for p in ports if n.startswith("deepspeed_allreduce_buffer_") and f"_127.0.0.1_{p}_" in n]
