"""verify's op builds use the toolchain the run uses, never inside the run's clock (issue 21, items 1-3).

Reproduced first: with Debian's ninja 1.11 first on PATH and the venv not activated, the up-to-date check asked one
ninja and torch built with the other; the check's dry run deleted the build log and the next run rebuilt the op
inside its timeout. And an op the plan did not know (Lion with offload: cpu_lion) was built inside the run."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import test_verify_cpu as cold
from conftest import oracle

from zerolint.verify import cache, toolchain
from zerolint.verify.opguard import GUARD_VAR
from zerolint.verify.opplan import planned_ops

ROOT = Path(__file__).resolve().parents[1]
NEEDS_DEEPSPEED = oracle(importlib.util.find_spec("deepspeed") is None or importlib.util.find_spec("torch") is None,
                         "needs torch and deepspeed (pip install '.[verify]')")

ops_built = cold.ops_built  # the session's op build (shm_comm, fused_adam, cpu_adam), shared

BUILD_NINJA = "rule cp\n  command = cp $in $out\nbuild out.txt: cp in.txt\n"


def _build_dir(tmp_path: Path) -> Path:
    d = tmp_path / "op"
    d.mkdir()
    (d / "build.ninja").write_text(BUILD_NINJA)
    (d / "in.txt").write_text("x")
    return d


def test_the_dry_run_leaves_ninjas_log_as_it_was(tmp_path):
    """A build log another ninja version wrote: ninja itself deletes it on a dry run ("starting over"); the
    up-to-date check puts it back byte for byte, so torch's next load still finds its own log."""
    d = _build_dir(tmp_path)
    old_log = b"# ninja log v4\n0\t1\t0\tout.txt\tdeadbeef\n"
    (d / ".ninja_log").write_bytes(old_log)
    exe = toolchain.ninja()
    assert exe is not None
    subprocess.run([exe, "-C", str(d), "-n"], capture_output=True)
    assert not (d / ".ninja_log").exists() or (d / ".ninja_log").read_bytes() != old_log  # ninja's own behaviour
    (d / ".ninja_log").write_bytes(old_log)
    assert toolchain.dry_run(str(d)) is False  # out.txt is missing: work to do
    assert (d / ".ninja_log").read_bytes() == old_log


def test_every_child_finds_the_interpreters_ninja_first(tmp_path):
    spy = tmp_path / "bin"
    spy.mkdir()
    (spy / "ninja").write_text("#!/bin/sh\ntouch \"$0.called\"\nexit 1\n")
    (spy / "ninja").chmod(0o755)
    path = toolchain.pinned_path({"PATH": f"{spy}{os.pathsep}/usr/bin{os.pathsep}/bin"})
    first = path.split(os.pathsep)[0]
    assert first == toolchain.bin_dir()
    assert toolchain.ninja(path) == os.path.join(toolchain.bin_dir(), "ninja")
    from zerolint.verify.ops import toolchain_env
    from zerolint.verify.runner import RunOptions, child_env

    for env in (toolchain_env(), child_env(None, RunOptions(extensions_dir="/x"), "run", 1)):
        assert env["PATH"].split(os.pathsep)[0] == toolchain.bin_dir()


def test_the_op_cache_is_keyed_by_installation(monkeypatch):
    """Two installations with the same versions (two venvs) get two op caches instead of rebuilding over each
    other: every build names its venv's paths."""
    base = dict(toolchain.identity())
    names = set()
    for torch_dir in ("/venv-a/lib/python3.11/site-packages/torch", "/venv-b/lib/python3.11/site-packages/torch"):
        monkeypatch.setattr(toolchain, "identity", lambda d=torch_dir: {**base, "torch": d})
        names.add(cache.op_cache_name("cpu:x"))
    assert len(names) == 2
    monkeypatch.setattr(toolchain, "identity", lambda: {**base, "ninja_version": "1.11.1"})
    assert cache.op_cache_name("cpu:x") not in names


def test_an_op_cache_others_can_write_is_refused(tmp_path):
    root = tmp_path / "ops"
    leaf = Path(cache.extensions_dir("cpu:x", str(root)))
    assert leaf.parent == root
    (leaf / "cpu_adam").mkdir(parents=True)
    (leaf / "cpu_adam" / "cpu_adam.so").write_bytes(b"\x7fELF")
    cache.check_op_cache(str(leaf))  # ours, 0755/0644: trusted
    (leaf / "cpu_adam" / "cpu_adam.so").chmod(0o666)
    with pytest.raises(cache.OpCacheRefused) as e:
        cache.check_op_cache(str(leaf))
    assert "cpu_adam.so: writable by others (mode 666)" in str(e.value)
    (leaf / "cpu_adam" / "cpu_adam.so").chmod(0o644)
    (leaf / "cpu_adam" / "cpu_adam.so").unlink()
    (leaf / "cpu_adam" / "cpu_adam.so").symlink_to(tmp_path / "elsewhere.so")
    with pytest.raises(cache.OpCacheRefused, match="cpu_adam.so: a symlink"):
        cache.check_op_cache(str(leaf))


def test_verify_refuses_an_untrusted_op_cache_with_a_message(tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text('{"train_micro_batch_size_per_gpu": 1}')
    root = tmp_path / "ops"
    leaf = Path(cache.extensions_dir(f"cpu:{_cpu_model()}", str(root)))
    leaf.mkdir(parents=True)
    leaf.chmod(0o777)
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", "--prepare", "--dry-run", "--cpu", "--op-cache",
                        str(root), str(cfg)], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith(f"zerolint: error: op cache {leaf} refused: DeepSpeed would load code that someone "
                               f"else could have written ({leaf}: writable by others (mode 777))"), p.stderr


def _cpu_model() -> str:
    from zerolint.verify.runner import cpu_model

    return cpu_model()


@pytest.mark.parametrize("config,accelerator,client,ops", [
    ({"optimizer": {"type": "AdamW"}}, "cpu", None, ["deepspeed_shm_comm", "fused_adam"]),
    ({"optimizer": {"type": "AdamW", "params": {"torch_adam": "torch_impl"}}}, "cuda", None, []),
    ({"optimizer": {"type": "Adam"}, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}},
     "cuda", None, ["cpu_adam"]),
    ({"optimizer": {"type": "Adam"}, "zero_optimization": {"stage": 1, "cpu_offload": True}}, "cuda", None,
     ["cpu_adam"]),
    ({"optimizer": {"type": "Lion"}}, "cuda", None, ["fused_lion"]),
    ({"optimizer": {"type": "Lion"}, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}},
     "cpu", None, ["deepspeed_shm_comm", "cpu_lion"]),
    ({"optimizer": {"type": "Lamb"}}, "cuda", None, ["fused_lamb"]),
    ({"optimizer": {"type": "Adagrad"}}, "cuda", None, []),
    ({"optimizer": {"type": "Adagrad"}, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme"}}},
     "cuda", None, ["pin_memory", "async_io", "cpu_adagrad"]),
    ({"zero_optimization": {"stage": 3, "zero_quantized_weights": True}}, "cuda", "AdamW", ["quantizer"]),
    ({"zero_optimization": {"stage": 2, "zero_quantized_gradients": True}}, "cuda", "AdamW", []),
    ({}, "cpu", "DeepSpeedCPUAdam", ["deepspeed_shm_comm", "cpu_adam"]),
    ({"optimizer": {"type": "Muon"}}, "cuda", None, ["fused_adam"]),
    ({"checkpoint": {"writer": {}}}, "cuda", "AdamW", ["pin_memory", "async_io"]),
    ({"checkpoint": {"writer": {"type": "mock"}}}, "cuda", "AdamW", []),
    ({"checkpoint": {"writer": {"type": "Fast"}}, "aio": {"use_gds": True}}, "cuda", "AdamW", ["gds"]),
])
def test_the_op_plan(config, accelerator, client, ops):
    assert planned_ops(config, accelerator, client) == ops


def _private_ops(tmp_path: Path, without: tuple[str, ...]) -> Path:
    """A private copy of the session's op cache (mtimes kept), without some ops."""
    ext = tmp_path / "ext"
    shutil.copytree(cold.EXT_DIR, ext, symlinks=True, ignore=shutil.ignore_patterns(*without, "lock", "*.lock"))
    return ext


def _verify(env: dict, cfg: Path, *args: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", str(cfg), "--cpu", "--no-cache", "--format",
                        "json", "-q", *args], capture_output=True, text=True, env=env, cwd=cfg.parent, timeout=1500)
    try:
        return json.loads(p.stdout)["verify"]
    except ValueError:
        raise AssertionError(f"no JSON report (exit {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")


@pytest.mark.slow
@pytest.mark.deepspeed
@NEEDS_DEEPSPEED
def test_an_unplanned_op_is_built_outside_the_clock_and_a_second_run_builds_nothing(tmp_path, ops_built):
    """A run that reaches an op that is not built (here cpu_lion, dropped from a private op cache) stops before
    building it; verify builds it in its build phase and runs the config again. Started the way a user starts an
    installed tool, with the venv not activated and another ninja first on PATH (a spy that records any call), the
    second run builds nothing, loads the first's op, and the op's ninja log is untouched."""
    ext = _private_ops(tmp_path, ("cpu_lion",))
    spy = tmp_path / "other-bin"
    spy.mkdir()
    (spy / "ninja").write_text("#!/bin/sh\ntouch \"$0.called\"\nexec /bin/false\n")
    (spy / "ninja").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "TORCH_EXTENSIONS_DIR")}
    env.update(PATH=f"{spy}{os.pathsep}/usr/bin{os.pathsep}/bin", NO_COLOR="1", TORCH_EXTENSIONS_DIR=str(ext),
               ZEROLINT_CACHE_DIR=str(tmp_path / "zc"))
    cfg = tmp_path / "lion.json"
    cfg.write_text(json.dumps({"train_micro_batch_size_per_gpu": 2, "optimizer": {"type": "Lion", "params": {
        "lr": 1e-4}}, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}))
    first = _verify(env, cfg, "--timeout", "60")["runs"][0]
    assert first["status"] == "pass", first
    assert first["op_stops"] == []  # cpu_lion is planned (opplan.py): built in the build phase, before the clock
    assert first["build"]["ops"]["cpu_lion"]["status"] == "built"
    assert "cpu_lion" in first["ops_loaded"] and first["facts"]["optimizer_inner"] == "DeepSpeedCPULion"
    log = (ext / "cpu_lion" / ".ninja_log").read_bytes()
    second = _verify(env, cfg, "--timeout", "60")["runs"][0]
    assert second["status"] == "pass" and second["op_stops"] == []
    assert {op: info["status"] for op, info in second["build"]["ops"].items()} == {
        "deepspeed_shm_comm": "cached", "cpu_lion": "cached"}
    assert (ext / "cpu_lion" / ".ninja_log").read_bytes() == log
    assert not (spy / "ninja.called").exists()


@pytest.mark.slow
@pytest.mark.deepspeed
@NEEDS_DEEPSPEED
@pytest.mark.parametrize("warm", [False, True])
def test_a_run_that_reaches_an_unbuilt_op_stops_and_runs_again(tmp_path, ops_built, warm):
    """The guard itself, through the real runners (runner.run_plan and the warm runner's run_plans), called
    without the build phase before them, so the run reaches cpu_adam unbuilt: it stops there, the op is built
    outside the clock, and the config runs again (`op_stops`), under a timeout far below a build's time."""
    from zerolint.verify.resolve import build_plan
    from zerolint.verify.runner import RunOptions, run_plan
    from zerolint.verify.warm import WarmServer, run_plans

    ext = _private_ops(tmp_path, ("cpu_adam",))
    plan = build_plan({"train_micro_batch_size_per_gpu": 2, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},
                       "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}},
                      target="deepspeed", tmpdir=str(tmp_path))
    said: list[str] = []
    opts = RunOptions(accelerator="cpu", extensions_dir=str(ext), timeout=30, progress=said.append)
    if warm:
        with WarmServer("cpu", str(ext)) as server:
            [rec] = run_plans(server, [plan], opts)
    else:
        rec = run_plan(plan, opts)
    assert rec["status"] == "pass", rec
    assert [(s["op"], s["why"], s["rerun"], s["build"]["ops"]["cpu_adam"]["status"]) for s in rec["op_stops"]] == [
        ("cpu_adam", "not built yet", True, "built")]
    assert "cpu_adam" in rec["ops_loaded"] and rec["facts"]["optimizer_inner"] == "DeepSpeedCPUAdam"
    assert any("the run reached cpu_adam (not built yet); it was stopped" in line for line in said), said
    assert stat.S_IMODE(os.stat(ext / "cpu_adam").st_mode) & 0o022 == 0


_LOAD_UNDER_A_LOCK = r"""
import os, sys, threading, time
from zerolint.verify import opguard
opguard.install()
opguard.LOCK_GRACE_S = float(sys.argv[2])
lock = os.path.join(sys.argv[1], "deepspeed_shm_comm", "lock")
open(lock, "x").close()  # another process's load holds torch's lock (FileBaton.try_acquire)
if float(sys.argv[3]) >= 0:
    threading.Timer(float(sys.argv[3]), os.remove, [lock]).start()  # ... and releases it (FileBaton.release)
from deepspeed.accelerator import get_accelerator
try:
    get_accelerator().create_op_builder("ShareMemCommBuilder").load()
    print("loaded", opguard.loaded(), os.path.exists(lock))
except opguard.OpNotBuilt as e:
    print("stopped", e)
"""


@pytest.mark.deepspeed
@NEEDS_DEEPSPEED
@pytest.mark.parametrize("release_after,grace,out", [
    # two runs load one built op at once (the pool's warm-ups): torch takes the lock for its up-to-date check on
    # every load; the one that waits goes on once it is released, the op current (it was a check, not a build)
    (0.5, 10, "loaded ['deepspeed_shm_comm'] False"),
    # a lock held past the grace is a build in another process: the run stops rather than wait inside its clock
    (-1, 1, "stopped deepspeed_shm_comm: another process is building it (its lock is held)"),
])
def test_a_load_waiting_on_a_lock_goes_on_after_a_check_and_stops_for_a_build(tmp_path, ops_built, release_after,
                                                                                grace, out):
    ext = _private_ops(tmp_path, ("cpu_adam", "fused_adam", "cpu_lion", "cpu_adagrad", "pin_memory"))
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": str(ext), "DS_ACCELERATOR": "cpu", GUARD_VAR: "1"}
    p = subprocess.run([sys.executable, "-c", _LOAD_UNDER_A_LOCK, str(ext), str(grace), str(release_after)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.stdout.strip().splitlines()[-1:] == [out], p.stdout[-2000:] + p.stderr[-3000:]
