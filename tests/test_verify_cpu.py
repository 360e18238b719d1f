"""`zerolint verify` for real on the CPU: DeepSpeed 0.19.8 initialize + 3 optimizer steps in a child process,
no mocks. One shared op cache (TORCH_EXTENSIONS_DIR, as scripts/test.sh sets it): the ops (shm_comm, fused_adam,
cpu_adam: 3-8 min on a busy 2-core machine) are built once per test session by `zerolint verify --prepare` in a
session fixture with its own limit, so no test builds inside its own timeout; each case then takes 4-15 s."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import oracle

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "examples" / "seed"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.deepspeed,
    oracle(importlib.util.find_spec("deepspeed") is None or importlib.util.find_spec("torch") is None,
           "needs torch and deepspeed (pip install '.[verify]')"),
]

ADAMW = {"type": "AdamW", "params": {"lr": 1e-4, "weight_decay": 0.0}}


EXT_DIR = os.environ.get("TORCH_EXTENSIONS_DIR", str(ROOT / ".cache" / "torch_extensions"))
BUILD_LIMIT_S = 1500  # the op build's own limit (cold, on a loaded 2-core machine: 3-8 min)


@pytest.fixture(scope="session")
def ops_built(tmp_path_factory):
    """Every op these tests need (deepspeed_shm_comm, fused_adam, cpu_adam), built once per session through the
    --prepare path, before any verify test starts its clock."""
    d = tmp_path_factory.mktemp("prepare")
    fused = write(d, "fused.json", {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW})
    offload = write(d, "offload.json", {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW,
                                        "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}})
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", "--prepare", "--cpu", "--build-timeout",
                        str(BUILD_LIMIT_S), str(fused), str(offload)], capture_output=True, text=True,
                       env={**os.environ, "TORCH_EXTENSIONS_DIR": EXT_DIR}, cwd=ROOT, timeout=BUILD_LIMIT_S + 120)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "zerolint verify --prepare: 3 ops ready in " in p.stderr, p.stderr
    return EXT_DIR


@pytest.fixture(scope="module")
def env(tmp_path_factory, ops_built):
    return {**os.environ, "NO_COLOR": "1",
            "ZEROLINT_CACHE_DIR": str(tmp_path_factory.mktemp("zerolint-cache")), "TORCH_EXTENSIONS_DIR": ops_built}


def verify(env, config, *args, timeout=900):
    """Run `python -m zerolint verify CONFIG --cpu --format json` the way a user does; (exit code, report)."""
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", str(config), "--cpu", "--format", "json", "-q",
                        *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)
    try:
        return p.returncode, json.loads(p.stdout)
    except ValueError:
        raise AssertionError(f"no JSON report (exit {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")


def write(tmp_path, name, cfg) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(cfg, indent=2) if isinstance(cfg, dict) else cfg)
    return path


def run0(report) -> dict:
    return report["verify"]["runs"][0]


def codes(report) -> list[tuple[str, int, str]]:
    return [(d["code"], d["line"], d["pointer"]) for d in report["diagnostics"]]


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_stages_bf16(env, tmp_path, stage):
    cfg = {"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": True}, "zero_optimization": {"stage": stage},
           "optimizer": ADAMW}  # DeepSpeed's own FusedAdam (CPU build): the real optimizer, not torch_adam
    rc, rep = verify(env, write(tmp_path, "ds.json", cfg))
    run = run0(rep)
    assert run["status"] == "pass", run
    f = run["facts"]
    assert (f["zero_stage"], f["precision"], f["param_dtype"]) == (stage, "bf16", "bfloat16")
    assert f["optimizer_inner"] == "FusedAdam"
    assert f["train_batch_size"] == f["micro_batch"] * f["grad_accum"] * f["world_size"] == 2
    assert f["zero3_managed"] is (stage == 3)
    assert run["intent"] and all(c["ok"] for c in run["intent"]), run["intent"]
    assert len(run["timings"]["step_s"]) == 3 and all(isinstance(x, float) for x in run["losses"])
    assert run["memory"]["host_rss_peak_bytes"] > 100e6
    assert rc == 0 and not [c for c in codes(rep) if c[0].startswith("ZL99")]


def test_optimizer_offload(env, tmp_path):
    cfg = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2, "bf16": {"enabled": True},
           "optimizer": ADAMW, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    rc, rep = verify(env, write(tmp_path, "ds.json", cfg))
    run = run0(rep)
    assert run["status"] == "pass", run
    assert run["facts"]["optimizer_inner"] == "DeepSpeedCPUAdam" and run["facts"]["optimizer_offload"] is True
    assert {c["check"]: c["ok"] for c in run["intent"]}["optimizer-offload"] is True
    # DeepSpeed asks py-cpuinfo three times here (cpu_adam's cpu_arch and simd_width, DeepSpeedCPUAdam.__init__);
    # each answer is a process of its own: a lone config runs in a fork of the warm runner, whose server asked
    # once for every fork (verify/cpuinfo_once.py), so the run itself starts none
    assert run["launcher"] == "warm" and run["timings"]["cpuinfo_processes"] == 0
    assert rc == 0


def test_two_ranks_over_gloo(env, tmp_path):
    cfg = {"train_batch_size": 8, "bf16": {"enabled": True}, "optimizer": ADAMW, "zero_optimization": {"stage": 3}}
    rc, rep = verify(env, write(tmp_path, "ds.json", cfg), "--gpus", "2")
    run = run0(rep)
    assert run["status"] == "pass", run
    f = run["facts"]
    assert f["world_size"] == 2 and f["partition_share"] == 0.5 and f["zero3_managed"]
    # train_batch_size 8 gives micro 4 on 2 ranks; capped at 2, and the equation rewritten for 2 ranks.
    assert (f["train_batch_size"], f["micro_batch"], f["grad_accum"]) == (4, 2, 1)
    assert run["launcher"] == "torchrun" and rc == 0


def test_two_ranks_deepspeed_launcher(env, tmp_path):
    cfg = {"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": True}, "optimizer": ADAMW,
           "zero_optimization": {"stage": 2}}
    rc, rep = verify(env, write(tmp_path, "ds.json", cfg), "--gpus", "2", "--launcher", "deepspeed")
    run = run0(rep)
    assert run["status"] == "pass", run
    assert run["facts"]["world_size"] == 2 and run["facts"]["train_batch_size"] == 4
    assert "deepspeed.launcher.runner" in run["command"]


def test_seed_top_level_offload_does_nothing(env):
    rc, rep = verify(env, SEED / "ds_offload_broken.json")
    run = run0(rep)
    assert run["status"] == "pass"  # DeepSpeed accepts it ...
    assert ("ZL994", 7, "/offload_optimizer") in codes(rep)  # ... and offloads nothing
    assert run["did"]["optimizer offload"].startswith("none")
    assert rc == 1


def test_seed_offload_param_at_stage2_does_nothing(env):
    rc, rep = verify(env, SEED / "ds_offload_param_stage2.json")
    run = run0(rep)
    assert run["status"] == "pass"
    checks = {c["check"]: c for c in run["intent"]}
    assert checks["optimizer-offload"]["ok"] and run["facts"]["optimizer_inner"] == "DeepSpeedCPUAdam"
    assert not checks["param-offload"]["ok"]
    assert ("ZL995", 8, "/zero_optimization/offload_param/device") in codes(rep)


BAD = {
    "batch": ('{\n  "train_batch_size": 8,\n  "train_micro_batch_size_per_gpu": 2,\n  "gradient_accumulation_steps": 3,'
              '\n  "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}\n}', "parse", "/train_batch_size", 2),
    "clip": ('{\n  "train_micro_batch_size_per_gpu": 2,\n  "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, '
             '"torch_adam": true}},\n  "gradient_clipping": "auto",\n  "zero_optimization": {"stage": 2}\n}',
             "step 1 (optimizer step)", "/gradient_clipping", 4),
    "typo": ('{\n  "train_micro_batch_size_per_gpu": 2,\n  "zero_optimization": {\n    "stage": 2,\n'
             '    "offload_optimiser": {"device": "cpu"}\n  }\n}', "parse", "/zero_optimization/offload_optimiser", 5),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_failure_mapped_to_pointer_and_line(env, tmp_path, name):
    text, stage, pointer, line = BAD[name]
    rc, rep = verify(env, write(tmp_path, "ds.json", text), "--target", "deepspeed")
    run = run0(rep)
    assert run["status"] == "fail"
    fail = run["failure"]
    assert (fail["stage"], fail["pointer"], fail["line"]) == (stage, pointer, line), fail
    assert ("ZL990", line, pointer) in codes(rep) and rc == 1


def test_timeout_kills_the_process_group(env, tmp_path):
    """In-process CLI (to see the parent's modules): the run is killed at 1 s, nothing it started survives. The
    job is a 125M-parameter model (building it alone takes longer than that), since a lone config runs in a fork
    of the warm runner, where the tiny job ends within a second."""
    cfg = write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW})
    code = (
        "import json, sys\n"
        "from zerolint.cli import main\n"
        "try:\n"
        f"    main(['verify', {str(cfg)!r}, '--cpu', '--timeout', '1', '--no-cache', '--format', 'json', '-q', "
        "'--params', '125M'])\n"
        "except SystemExit as e:\n"
        "    rc = e.code\n"
        "print('MODULES', json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'deepspeed'))))\n"
    )
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    elapsed = time.monotonic() - t
    out, modules = p.stdout.rsplit("MODULES", 1)
    assert json.loads(modules) == []  # the parent never imported torch or deepspeed
    rep = json.loads(out)
    run = run0(rep)
    assert run["status"] == "timeout" and elapsed < 30
    [msg] = [d["message"] for d in rep["diagnostics"] if d["code"] == "ZL991"]
    assert "timed out after 1 s" in msg
    from zerolint.verify.procs import processes_of

    assert processes_of(run["run_id"]) == []


def test_fp16_on_a_cpu_without_it_is_a_skip(env, tmp_path):
    cfg = {"train_micro_batch_size_per_gpu": 2, "fp16": {"enabled": True}, "optimizer": ADAMW}
    rc, rep = verify({**env, "ZEROLINT_VERIFY_CPU_FP16": "0"}, write(tmp_path, "ds.json", cfg), "--no-cache")
    run = run0(rep)
    assert run["status"] == "skip" and "fp16 cannot be verified on this CPU" in run["reason"]
    assert [d["severity"] for d in rep["diagnostics"] if d["code"] == "ZL993"] == ["warning"]
    assert rep["verify"]["verdict"] == "skip" and rc == 0  # a skip is reported, never a pass


def test_cached_result_and_sarif(env, tmp_path):
    env = {**env, "ZEROLINT_CACHE_DIR": str(tmp_path / "cache")}  # a cache of its own: no test depends on another
    rc, rep = verify(env, SEED / "ds_offload_broken.json")
    assert run0(rep)["status"] == "pass" and run0(rep)["cached"] is False
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", str(SEED / "ds_offload_broken.json"), "--cpu",
                        "--format", "sarif", "-q"], capture_output=True, text=True, env=env, cwd=ROOT)
    assert time.monotonic() - t < 10
    sarif = json.loads(p.stdout)
    run = sarif["runs"][0]
    assert run["properties"]["verify"]["runs"][0]["cached"] is True
    ids = [r["ruleId"] for r in run["results"]]
    assert "ZL994" in ids
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "ZL994")
    assert rule["helpUri"].endswith("docs/verify.md#zl994-optimizer-offload-not-effective")


def test_compare_fix(env):
    rc, rep = verify(env, SEED / "ds_offload_broken.json", "--compare-fix")
    cmp = rep["verify"]["compare_fix"]
    assert cmp["available"], cmp
    assert cmp["applied"] and {a["code"] for a in cmp["applied"]} <= {"ZL002", "ZL101"}
    fixed = json.loads(cmp["fixed_text"])  # the fixed file is strict JSON: the missing comma is fixed too
    runs = rep["verify"]["runs"]
    assert [r["label"] for r in runs] == ["original", "fixed"] and runs[1]["status"] == "pass"
    intent = {c["check"]: c["ok"] for c in runs[1]["intent"]}
    if "offload_optimizer" in fixed.get("zero_optimization", {}):  # the fix moved the block: now it offloads
        assert intent["optimizer-offload"] is True and runs[1]["facts"]["optimizer_inner"] == "DeepSpeedCPUAdam"
    else:
        assert intent["optimizer-offload"] is False


# -- the op build phase, locks and signals: real processes, real DeepSpeed builds -----------------------------------

def processes_marked(pid: int) -> list[int]:
    """Processes started by the `zerolint verify` with this pid: each carries ZEROLINT_VERIFY_PARENT=<pid>."""
    marker, out = f"ZEROLINT_VERIFY_PARENT={pid}".encode(), []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if d.isdigit() and marker in f.read().split(b"\0"):
                    out.append(int(d))
        except OSError:
            continue
    return out


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def start_verify(env, config, *args, tmpdir: Path) -> subprocess.Popen:
    """`zerolint verify` with progress lines on stderr (no -q) and TMPDIR of its own, to see what it leaves."""
    tmpdir.mkdir(exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "zerolint", "verify", str(config), "--cpu", "--format", "json",
                             "--no-cache", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, "TMPDIR": str(tmpdir)}, cwd=ROOT)


def interrupt_once_forked(proc: subprocess.Popen) -> tuple[str, str]:
    """SIGINT to `proc` once its warm server and a forked child run; (stdout, stderr) after it exits."""
    try:
        wait_for(lambda: len([p for p in processes_marked(proc.pid) if "zerolint.verify.forkserver" in cmdline(p)])
                 >= 2, 180, "the server and a forked child running")
        proc.send_signal(signal.SIGINT)
        return proc.communicate(timeout=60)
    finally:
        proc.kill()


def wait_for(cond, limit: float, what: str):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"not reached within {limit} s: {what}")


def test_dead_build_lock_in_the_op_cache_is_removed(env, tmp_path):
    """A killed build's `lock` in an otherwise complete cpu_adam cache made every later verify wait until its own
    timeout. Now the build phase removes it, says so, and the stage-2 CPU-offload run passes in its usual time."""
    ext = tmp_path / "ext"
    shutil.copytree(env["TORCH_EXTENSIONS_DIR"], ext, symlinks=True)  # a private copy: nobody else sees the lock
    for leftover in ext.glob("*/lock"):
        leftover.unlink()
    dead = ext / "cpu_adam" / "lock"
    dead.write_text("")
    cfg = write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": True},
                                      "optimizer": ADAMW,
                                      "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}})
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", str(cfg), "--cpu", "--format", "json",
                        "--timeout", "240"], capture_output=True, text=True, cwd=ROOT, timeout=600,
                       env={**env, "TORCH_EXTENSIONS_DIR": str(ext)})
    elapsed = time.monotonic() - t
    run = run0(json.loads(p.stdout))
    assert run["status"] == "pass", (run, p.stderr[-3000:])
    notice = f"removed a stale build lock left by a killed build: {dead}"
    assert f"zerolint verify: {notice}" in p.stderr.splitlines()
    assert run["build"]["status"] == "ok" and run["build"]["notices"] == [notice]
    assert run["build"]["ops"]["cpu_adam"]["status"] == "cached"
    assert not dead.exists() and p.returncode == 0 and elapsed < 180


def test_sigterm_during_a_first_build_leaves_nothing(env, tmp_path):
    """SIGTERM while DeepSpeed compiles an op (a first build into an empty cache): exit 143, the compilers and the
    build child gone, torch's `lock` removed, no temp dir left; the next verify is not blocked by anything."""
    ext, tmp = tmp_path / "ext", tmp_path / "tmp"
    cfg = write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW})
    proc = start_verify({**env, "TORCH_EXTENSIONS_DIR": str(ext)}, cfg, tmpdir=tmp)
    try:
        wait_for(lambda: (ext / "deepspeed_shm_comm" / "lock").exists(), 180, "the build holds torch's lock")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, err[-3000:]
    assert "building deepspeed_shm_comm (1 of 2)" in err and "interrupted" in err
    assert wait_for(lambda: processes_marked(proc.pid) == [] or None, 15, "every process gone") is True
    assert not list(ext.glob("*/lock")), list(ext.glob("*/lock"))
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_the_run_stops_everything(env, tmp_path, sig, code):
    """Ctrl-C (130) or SIGTERM (143) once the run has started: every process of the run is gone (two ranks under
    torchrun, which start sessions of their own), and so is the run's temp dir (torchelastic's included)."""
    tmp = tmp_path / "tmp"
    cfg = write(tmp_path, "ds.json", {"train_batch_size": 4, "optimizer": ADAMW, "zero_optimization": {"stage": 2}})
    proc = start_verify(env, cfg, "--gpus", "2", tmpdir=tmp)
    try:
        wait_for(lambda: len([p for p in processes_marked(proc.pid) if "zerolint.verify.child" in cmdline(p)
                              and "torch.distributed.run" not in cmdline(p)]) == 2, 120, "two ranks running")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code, err[-3000:]
    assert processes_marked(proc.pid) == []
    assert list(tmp.iterdir()) == []


def test_ranks_die_with_a_sigkilled_zerolint(env, tmp_path):
    """SIGKILL of zerolint (no handler runs): the launcher and both ranks end within seconds (PR_SET_PDEATHSIG,
    and each one's watch on zerolint's pid), and the reaper the launcher leaves behind removes the temp dirs."""
    tmp = tmp_path / "tmp"
    cfg = write(tmp_path, "ds.json", {"train_batch_size": 4, "optimizer": ADAMW, "zero_optimization": {"stage": 2}})
    proc = start_verify(env, cfg, "--gpus", "2", tmpdir=tmp)
    try:
        ranks = wait_for(lambda: [p for p in processes_marked(proc.pid) if "zerolint.verify.child" in cmdline(p)
                                  and "torch.distributed.run" not in cmdline(p)], 120, "ranks running")
        assert len(processes_marked(proc.pid)) >= 3  # torchrun and the ranks
        proc.kill()
        proc.wait(timeout=30)
        wait_for(lambda: processes_marked(proc.pid) == [] or None, 20, f"ranks {ranks} gone")
        wait_for(lambda: list(tmp.iterdir()) == [] or None, 20, "temp dirs removed by the reaper")
    finally:
        proc.kill()
        for p in processes_marked(proc.pid):
            os.kill(p, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)


def test_build_timeout_is_its_own_verdict(env, tmp_path):
    """A first build that runs out of --build-timeout: the config is not run, and the report says the build, not
    the config, was slow (status build-timeout); nothing is left in the op cache's directories to block the next."""
    ext = tmp_path / "ext"
    cfg = write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW})
    rc, rep = verify({**env, "TORCH_EXTENSIONS_DIR": str(ext)}, cfg, "--build-timeout", "8", "--no-cache")
    run = run0(rep)
    assert rep["verify"]["verdict"] == run["status"] == "build-timeout"
    assert (run["build"]["status"], run["build"]["op"]) == ("build-timeout", "deepspeed_shm_comm")
    assert run["failure"]["stage"] == "build deepspeed_shm_comm" and run["facts"] == {}
    [msg] = [d["message"] for d in rep["diagnostics"] if d["code"] == "ZL991"]
    assert msg == ("not verified: building DeepSpeed's deepspeed_shm_comm op did not finish within --build-timeout "
                   "8 s; the build, not the config, was slow, and the config was not run")
    assert rc == 1 and not list(ext.glob("*/lock"))


def test_prepare_exits_2_when_the_ops_are_not_ready(env, tmp_path):
    ext = tmp_path / "ext"
    cfg = write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW})
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", "--prepare", "--cpu", "--build-timeout", "8",
                        str(cfg)], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**env, "TORCH_EXTENSIONS_DIR": str(ext)})
    assert p.returncode == 2, p.stderr
    assert ("zerolint verify --prepare: the build of deepspeed_shm_comm did not finish within --build-timeout 8 s"
            in p.stderr.splitlines())
    assert p.stderr.splitlines()[-1] == f"zerolint verify --prepare: 2 ops NOT ready in {ext}"
    assert not list(ext.glob("*/lock"))
