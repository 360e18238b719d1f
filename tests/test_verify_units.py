"""`zerolint verify` pieces that need no run: resolve ("auto", batch, client optimizer), error mapping (against
real DeepSpeed exceptions, parse-only), intent checks, codes, the fix-engine fallback."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import require

from zerolint.model.document import parse
from zerolint.model.view import Settings, View
from zerolint.verify import resolve
from zerolint.verify.intent import check_intent
from zerolint.verify.mapping import map_error, stage_of

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "examples" / "seed"


# -- resolve ------------------------------------------------------------------------------------------------------

def test_hf_auto_filled_with_trainer_defaults():
    cfg = {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
           "gradient_clipping": "auto", "bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"},
           "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto",
                                                     "weight_decay": "auto"}},
           "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto",
                                                         "warmup_num_steps": "auto"}},
           "zero_optimization": {"stage": 3, "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
                                 "stage3_param_persistence_threshold": "auto", "sub_group_size": "auto"}}
    plan = resolve.build_plan(cfg, target="hf", world_size=2, steps=3)
    c = plan.config
    assert c["gradient_clipping"] == 1.0
    assert c["optimizer"]["params"] == {"lr": 5e-5, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0}
    # transformers 5.18+ fills max(1, warm-up steps): DeepSpeed >= 0.19.6 rejects 0
    assert c["scheduler"]["params"] == {"warmup_min_lr": 0, "warmup_max_lr": 5e-5, "warmup_num_steps": 1}
    assert c["bf16"]["enabled"] is True and c["fp16"]["enabled"] is False
    h = plan.model.hidden
    z = c["zero_optimization"]
    assert z["reduce_bucket_size"] == h * h and z["stage3_prefetch_bucket_size"] == int(0.9 * h * h)
    assert z["stage3_param_persistence_threshold"] == 10 * h
    assert z["sub_group_size"] == "auto"  # not a key the Trainer fills: DeepSpeed gets "auto" (and drops it)
    # HF's per-device batch 8 and accumulation 1, then capped; the equation holds for 2 ranks.
    assert (c["train_micro_batch_size_per_gpu"], c["gradient_accumulation_steps"], c["train_batch_size"]) == (2, 1, 4)


def test_raw_deepspeed_keeps_auto():
    cfg = {"train_micro_batch_size_per_gpu": "auto", "gradient_clipping": "auto", "bf16": {"enabled": "auto"}}
    plan = resolve.build_plan(cfg, target="deepspeed")
    assert plan.config["train_micro_batch_size_per_gpu"] == "auto" and plan.config["gradient_clipping"] == "auto"
    assert plan.config["bf16"]["enabled"] == "auto"


@pytest.mark.parametrize("given,world,expect", [
    ({"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 4}, 1, (4, 2, 2)),
    ({"train_batch_size": 8}, 2, (4, 2, 1)),  # micro derived 4, capped 2
    ({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}, 2, (4, 2, 1)),
])
def test_batch_capped_and_equation_kept(given, world, expect):
    plan = resolve.build_plan({**given, "optimizer": {"type": "AdamW"}}, target="deepspeed", world_size=world)
    c = plan.config
    assert (c["train_batch_size"], c["train_micro_batch_size_per_gpu"], c["gradient_accumulation_steps"]) == expect
    assert c["train_batch_size"] == c["train_micro_batch_size_per_gpu"] * c["gradient_accumulation_steps"] * world


@pytest.mark.parametrize("given", [
    {"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 3},  # fits no world
    {"train_batch_size": "8", "train_micro_batch_size_per_gpu": 2},  # a string: DeepSpeed's TypeError is the point
    {"gradient_accumulation_steps": 2},  # neither batch key
])
def test_batch_left_for_deepspeed_to_reject(given):
    assert {k: v for k, v in resolve.build_plan(given, target="deepspeed").config.items() if k in given} == given


def test_derive_batch_agrees_with_deepspeed():
    ds_config = require("deepspeed.runtime.config")
    for tb, micro, gas in [(8, None, None), (8, 2, None), (8, None, 2), (None, 2, 2), (7, None, 2), (2, 2, 1)]:
        cfg = {k: v for k, v in (("train_batch_size", tb), ("train_micro_batch_size_per_gpu", micro),
                                 ("gradient_accumulation_steps", gas)) if v is not None}
        ours = resolve.derive_batch(tb, micro, gas, 1)
        try:
            c = ds_config.DeepSpeedConfig(cfg)
            assert ours[3] is None and ours[:3] == (c.train_batch_size, c.train_micro_batch_size_per_gpu,
                                                    c.gradient_accumulation_steps)
        except AssertionError as e:
            if ours[3] is None:
                raise
            assert ours[3].split(" ")[-5:] == str(e).split(" ")[-5:]


def test_client_optimizer_as_hf_and_accelerate():
    nested = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2, "offload_optimizer": {
        "device": "cpu"}}}
    plan = resolve.build_plan(nested, target="hf")
    assert plan.client_optimizer == "DeepSpeedCPUAdam" and plan.config["zero_allow_untested_optimizer"] is True
    top = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}, "offload_optimizer": {
        "device": "cpu"}}
    assert resolve.build_plan(top, target="deepspeed").client_optimizer == "AdamW"  # accelerate reads it nested only
    assert resolve.build_plan(top, target="deepspeed", client_optimizer="none").client_optimizer is None
    assert resolve.build_plan({"optimizer": {"type": "Adam"}, "train_batch_size": 1},
                              target="hf").client_optimizer is None


def test_nvme_and_monitors():
    cfg = {"train_batch_size": 1, "zero_optimization": {"stage": 3, "offload_param": {"device": "nvme",
                                                                                      "nvme_path": "/local_nvme"}},
           "wandb": {"enabled": True, "project": "x"}}
    plan = resolve.build_plan(cfg, target="deepspeed", tmpdir="/tmp/zl")
    assert plan.config["zero_optimization"]["offload_param"]["nvme_path"] == "/tmp/zl/nvme"
    # monitors run as in the user's run (wandb offline through the child's environment), never switched off
    assert plan.config["wandb"] == {"enabled": True, "project": "x"}
    assert not [c for c in plan.changes if c.pointer.startswith("/wandb")]


def test_arch_list_and_params():
    assert resolve.normalize_arch_list("9.0a") == "9.0"
    assert resolve.normalize_arch_list("8.0;9.0a+PTX 10.0f") == "8.0;9.0+PTX 10.0"
    assert resolve.normalize_arch_list("8.6") == "8.6"
    assert resolve.parse_params("350M") == 350_000_000 and resolve.parse_params("1.3B") == 1_300_000_000
    assert resolve.parse_params("7e8") == 700_000_000
    with pytest.raises(ValueError):
        resolve.parse_params("lots")
    for n in (125e6, 350e6, 1.3e9):
        assert abs(resolve.model_spec(int(n)).params / n - 1) < 0.06


def test_model_spec_counts_match_the_torch_model():
    torch = require("torch")
    from zerolint.verify.model import build

    for spec in (resolve.model_spec(), resolve.ModelSpec(vocab=300, hidden=32, layers=3, heads=2, seq=16)):
        m = build(spec.to_json())
        assert sum(p.numel() for p in m.parameters()) == spec.params
        biggest = max(sum(p.numel() for p in mod.parameters(recurse=False)) for mod in m.modules())
        assert biggest == spec.largest_layer_params
        loss = m(torch.randint(0, spec.vocab, (2, spec.seq)), torch.randint(0, spec.vocab, (2, spec.seq)))
        assert math.isfinite(loss.item())


# -- mapping (real DeepSpeed exceptions, parse-only) -----------------------------------------------------------------

def _ds_error(cfg: dict) -> dict:
    ds_config = require("deepspeed.runtime.config")
    from zerolint.verify.child import describe_error

    try:
        ds_config.DeepSpeedConfig(cfg)
    except Exception as e:  # noqa: BLE001
        return describe_error(e)
    raise AssertionError("DeepSpeed accepted the config")


@pytest.mark.deepspeed
@pytest.mark.parametrize("text,pointer,line", [
    ('{\n "train_batch_size": 8,\n "train_micro_batch_size_per_gpu": 2,\n "gradient_accumulation_steps": 3\n}',
     "/train_batch_size", 2),
    ('{\n "train_batch_size": 2,\n "zero_optimization": {\n  "stage": 2,\n  "offload_optimiser": {}\n }\n}',
     "/zero_optimization/offload_optimiser", 5),
    ('{\n "train_batch_size": 2,\n "zero_optimization": {"offload_optimizer": {"device": "gpu"}}\n}',
     "/zero_optimization/offload_optimizer/device", 3),
    ('{\n "train_batch_size": 2,\n "fp16": {"enabled": true},\n "bf16": {"enabled": true}\n}', "/fp16/enabled", 3),
    ('{\n "train_micro_batch_size_per_gpu": "auto"\n}', "/train_micro_batch_size_per_gpu", 2),
    ('{\n "train_batch_size": 2,\n "tensorboard": {"enabled": false, "outdir": "x"}\n}', "/tensorboard/outdir", 3),
    ('{\n "train_batch_size": 2,\n "amp": {"enabled": false}\n}', "/amp", 3),
])
def test_parse_errors_map_to_the_key(text, pointer, line):
    doc = parse(text, "ds.json")
    err = _ds_error(json.loads(text))
    m = map_error(err, "initialize", doc, json.loads(text))
    assert (m.stage, m.pointer) == ("parse", pointer), m
    from zerolint.model.diagnostics import Finding
    from zerolint.rules.engine import locate
    from zerolint.rules.engine_rules import FAILED

    assert locate(doc, FAILED, Finding(m.pointer, m.message), FAILED.default_severity).line == line


def test_step_errors_map_by_frames():
    doc = parse('{\n "gradient_clipping": "auto",\n "optimizer": {"type": "AdamW", "params": {"betas": "auto"}}\n}')
    clip = {"type": "TypeError", "message": "'>' not supported between instances of 'str' and 'float'",
            "frames": [{"file": "zerolint/verify/child.py", "line": 1, "func": "_run", "code": "engine.step()"},
                       {"file": "deepspeed/runtime/engine.py", "line": 3506, "func": "_take_model_step", "code": ""}]}
    m = map_error(clip, "step 1", doc, {})
    assert (m.stage, m.pointer) == ("step 1 (optimizer step)", "/gradient_clipping")
    betas = {"type": "ValueError", "message": "too many values to unpack (expected 2)",
             "frames": [{"file": "zerolint/verify/child.py", "line": 1, "func": "_run", "code": "engine.step()"},
                        {"file": "deepspeed/ops/adam/fused_adam.py", "line": 170, "func": "step", "code": ""}]}
    assert map_error(betas, "step 1", doc, {}).pointer == "/optimizer/params/betas"
    assert stage_of({"type": "AssertionError", "frames": [
        {"file": "deepspeed/runtime/engine.py", "line": 1, "func": "_configure_zero_optimizer"}]},
        "initialize") == "initialize"


# -- intent ---------------------------------------------------------------------------------------------------------

FACTS_STAGE2_GPU = {"zero_stage": 2, "precision": "bf16", "param_dtype": "bfloat16", "param_devices": ["cuda:0"],
                    "zero3_managed": False, "partition_share": 1.0, "optimizer_outer": "DeepSpeedZeroOptimizer",
                    "optimizer_inner": "FusedAdam", "optimizer_state_devices": ["cuda:0"], "optimizer_offload": False,
                    "param_offload_device": None}


def _checks(path: Path, facts: dict, world: int = 1):
    doc = parse(path.read_text(), str(path))
    return {c.check: c for c in check_intent(View(doc, Settings(target="deepspeed")), facts, world)}


def test_intent_top_level_offload_and_param_offload_at_stage2():
    c = _checks(SEED / "ds_offload_broken.json", FACTS_STAGE2_GPU)
    assert not c["optimizer-offload"].ok and c["optimizer-offload"].pointer == "/offload_optimizer"
    assert c["zero-stage"].ok and c["precision"].ok
    c = _checks(SEED / "ds_offload_param_stage2.json", {**FACTS_STAGE2_GPU, "optimizer_offload": True,
                                                        "optimizer_inner": "DeepSpeedCPUAdam",
                                                        "optimizer_state_devices": ["cpu"]})
    assert c["optimizer-offload"].ok
    p = c["param-offload"]
    assert not p.ok and p.pointer == "/zero_optimization/offload_param/device" and "stage 2 never reads" in p.message


def test_intent_stage3_partitioning(tmp_path):
    f = tmp_path / "ds.json"
    f.write_text('{"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}}')
    facts = {**FACTS_STAGE2_GPU, "zero_stage": 3, "zero3_managed": True, "partition_share": 0.5,
             "precision": "fp32", "param_dtype": "float32"}
    c = _checks(f, facts, world=2)
    assert c["zero-stage"].ok
    assert not c["precision"].ok and 'drops "auto"' in c["precision"].message
    assert not _checks(f, {**facts, "partition_share": 1.0}, world=2)["zero-stage"].ok


# -- codes and fallbacks ---------------------------------------------------------------------------------------------

def test_verify_codes_are_known_and_documented():
    from zerolint.rules.engine_rules import VERIFY_RULES
    from zerolint.rules.ruleset import RuleSet

    doc = (ROOT / "docs" / "verify.md").read_text()
    for r in VERIFY_RULES:
        assert RuleSet.builtin().find(r.code) is r
        assert 990 <= int(r.code[2:]) <= 999
        anchor = r.url.split("#", 1)[1]
        assert f"{r.code} `{r.name}`" in doc, anchor


def test_compare_fix_without_a_fix_engine(monkeypatch):
    from zerolint.verify.options import VerifyOptions
    from zerolint.verify.session import _fixed

    monkeypatch.setitem(sys.modules, "zerolint.fix.engine", None)  # as if zerolint/fix/engine.py were absent
    info, text = _fixed("{}", "ds.json", VerifyOptions())
    assert text is None and info["available"] is False and "fix engine not available" in info["reason"]


# -- build locks (zerolint/verify/locks.py): real processes, real files -------------------------------------------

HOLD_TORCH_LOCK = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_CREAT | os.O_EXCL)  # what torch's FileBaton.try_acquire does
print("held", flush=True)
time.sleep(float(sys.argv[2]))
os.close(fd)
os.remove(sys.argv[1])  # FileBaton.release
"""


def _notes():
    said: list[str] = []
    return said, said.append


def test_dead_torch_lock_is_removed_with_a_notice(tmp_path):
    from zerolint.verify.locks import BuildLock

    lock = tmp_path / "cpu_adam" / "lock"
    lock.parent.mkdir()
    lock.write_text("")  # a killed build's leftover: nobody holds it open
    said, say = _notes()
    t = time.monotonic()
    with BuildLock(str(tmp_path), "cpu_adam", say) as bl:
        bl.acquire(deadline=time.monotonic() + 30)
        assert not lock.exists()
        record = json.loads((tmp_path / "cpu_adam" / "zerolint-build.lock").read_text())
        assert record["pid"] == os.getpid() and record["host"] == socket.gethostname()
    assert time.monotonic() - t < 5
    assert said == [f"removed a stale build lock left by a killed build: {lock}"]


def test_live_torch_lock_is_waited_for_and_reported(tmp_path):
    from zerolint.verify.locks import BuildLock

    lock = tmp_path / "fused_adam" / "lock"
    lock.parent.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD_TORCH_LOCK, str(lock), "2"], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        said, say = _notes()
        t = time.monotonic()
        bl = BuildLock(str(tmp_path), "fused_adam", say)
        bl.acquire(deadline=time.monotonic() + 60)
        waited = time.monotonic() - t
        bl.release()
    finally:
        holder.wait(timeout=30)
    assert 1.0 < waited < 20  # it waited for the live build to finish, and not for ever
    assert len(said) == 1 and said[0].startswith(f"waiting for a live build of fused_adam by pid {holder.pid} (")
    assert said[0].endswith(f"(it holds {lock})")
    assert not lock.exists() and holder.returncode == 0  # the live builder's lock was left to its owner


def test_live_torch_lock_past_the_deadline_raises(tmp_path):
    from zerolint.verify.locks import BuildLock, LockTimeout

    lock = tmp_path / "cpu_adam" / "lock"
    lock.parent.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD_TORCH_LOCK, str(lock), "30"], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockTimeout, match=f"cpu_adam: still built by pid {holder.pid}"):
            BuildLock(str(tmp_path), "cpu_adam", lambda s: None).acquire(deadline=time.monotonic() + 1)
        assert lock.exists()  # never taken from a live builder
    finally:
        holder.kill()
        holder.wait()


HOLD_OUR_LOCK = """
import sys, time
from zerolint.verify.locks import BuildLock
BuildLock(sys.argv[1], "cpu_adam", print).acquire(deadline=time.monotonic() + 30)
open(sys.argv[1] + "/cpu_adam/lock", "w").close()  # and torch's, as a build in progress has
print("held", flush=True)
time.sleep(60)
"""


def test_our_lock_dies_with_its_owner(tmp_path):
    """A zerolint build holding the op's flock is waited for, by pid and host; SIGKILL it (no cleanup at all): the
    kernel drops the flock, and the torch lock it left is removed as stale."""
    from zerolint.verify.locks import BuildLock

    holder = subprocess.Popen([sys.executable, "-c", HOLD_OUR_LOCK, str(tmp_path)], stdout=subprocess.PIPE,
                              text=True, cwd=ROOT)
    assert holder.stdout.readline().strip() == "held"
    said: list[str] = []

    def say(msg: str) -> None:
        said.append(msg)
        if len(said) == 1:
            holder.kill()  # the builder dies while we wait for it

    bl = BuildLock(str(tmp_path), "cpu_adam", say)
    t = time.monotonic()
    bl.acquire(deadline=time.monotonic() + 30)
    bl.release()
    holder.wait()
    assert time.monotonic() - t < 10
    assert said == [f"waiting for a live build of cpu_adam by pid {holder.pid} on {socket.gethostname()} "
                    f"(it holds {tmp_path / 'cpu_adam' / 'zerolint-build.lock'})",
                    f"removed a stale build lock left by a killed build: {tmp_path / 'cpu_adam' / 'lock'}"]
    assert not (tmp_path / "cpu_adam" / "lock").exists()


def test_op_built_and_needs_phase(tmp_path):
    from zerolint.verify.ops import is_built, needs_phase

    d = tmp_path / "cpu_adam"
    assert not is_built(str(tmp_path), "cpu_adam") and needs_phase(str(tmp_path), "cpu_adam")
    d.mkdir()
    (d / "cpu_adam_v1.so").write_bytes(b"")  # torch bumps the module name when the sources change
    assert is_built(str(tmp_path), "cpu_adam") and not needs_phase(str(tmp_path), "cpu_adam")
    (d / "lock").write_text("")
    assert needs_phase(str(tmp_path), "cpu_adam")  # a run would wait on it: the build phase handles it first


def test_signals_map_to_shell_exit_codes():
    from zerolint.verify.runner import Interrupted, exit_code

    assert exit_code(KeyboardInterrupt()) == 130
    assert exit_code(Interrupted(signal.SIGTERM)) == 143 and exit_code(Interrupted(signal.SIGHUP)) == 129


def test_reaper_removes_only_the_runs_temp_dirs(tmp_path):
    """After a SIGKILL of zerolint, the reaper removes the temp dirs it was given once the run's processes are gone,
    and never anything but a `zerolint-*` dir (ZEROLINT_VERIFY_CLEANUP is only ever zerolint's temp dirs)."""
    from zerolint.verify.lifeline import reap

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    ours, other = tmp_path / "zerolint-verify-abc", tmp_path / "project"
    for d in (ours, other):
        (d / "sub").mkdir(parents=True)
    t = time.monotonic()
    reap(int(gone.stdout), [str(ours), str(other), "relative/zerolint-x"])
    assert not ours.exists() and (other / "sub").is_dir() and time.monotonic() - t < 5


def test_free_port_is_below_the_ephemeral_range_and_skips_ports_in_use():
    """MASTER_PORT comes from below the kernel's ephemeral range (an outgoing connection of another run cannot take
    it between the check and the child's bind) and is never a port a running job holds (warm runner, --jobs N)."""
    import socket

    from zerolint.verify.runner import ephemeral_range, free_port

    low, _ = ephemeral_range()
    first = free_port()
    assert 10000 <= first < low
    second = free_port({first})
    assert second != first and 10000 <= second < low
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:  # a port something listens on is skipped
        held.bind(("127.0.0.1", first))
        held.listen()
        assert free_port() != first


# -- py-cpuinfo asked once ------------------------------------------------------------------------------------------
CPUINFO_PROBE = """
import json, cpuinfo
from zerolint.verify import cpuinfo_once
real = cpuinfo.get_cpu_info
memo = cpuinfo_once.remember()
assert cpuinfo_once.remember() is memo and cpuinfo.get_cpu_info is memo  # installed once
first = cpuinfo.get_cpu_info()
first["flags"] = ["changed by a caller"]
second = cpuinfo.get_cpu_info()
print(json.dumps({"asked": cpuinfo_once.asked(), "same_as_real": second == real(),
                  "copy": second.get("flags") != ["changed by a caller"], "has_flags": bool(second.get("flags"))}))
"""


def test_cpuinfo_is_asked_once_and_each_caller_gets_a_copy():
    """In its own process: the memo patches the cpuinfo module, which the test process must keep as it is."""
    p = subprocess.run([sys.executable, "-c", CPUINFO_PROBE], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"asked": 1, "same_as_real": True, "copy": True, "has_flags": True}


# -- an op that is built but out of date goes through the build phase -----------------------------------------------
def test_an_out_of_date_op_needs_the_build_phase(tmp_path):
    """torch's loader asks ninja, which rebuilds an op whose source, header or command changed (a reinstalled torch
    or DeepSpeed) inside the run's timeout; `ninja -n` (a dry run) says so first, so the build phase, with its own
    limit and progress, does it. A real ninja on a one-rule build (here: a copy)."""
    import shutil as sh

    from zerolint.verify.ops import is_built, is_current, needs_phase, ninja_says_current

    op = tmp_path / "myop"
    op.mkdir()
    (op / "src.cpp").write_text("int x;\n")
    (op / "build.ninja").write_text("rule cp\n  command = cp $in $out\nbuild myop.so: cp src.cpp\n")
    here = os.path.dirname(sys.executable)
    ninja = sh.which("ninja", path=os.pathsep.join((here, os.environ.get("PATH", ""))))
    assert ninja, "ninja (a DeepSpeed dependency) is not installed"
    subprocess.run([ninja, "-C", str(op)], check=True, capture_output=True)
    assert (ninja_says_current(str(op)), is_current(str(tmp_path), "myop"), needs_phase(str(tmp_path), "myop")) == (
        True, True, False)
    later = (op / "myop.so").stat().st_mtime + 10
    os.utime(op / "src.cpp", (later, later))  # the source changed after the build
    assert (is_built(str(tmp_path), "myop"), ninja_says_current(str(op)), needs_phase(str(tmp_path), "myop")) == (
        True, False, True)
    (op / "build.ninja").unlink()  # ninja cannot tell: the library's presence decides, as before
    assert (ninja_says_current(str(op)), is_current(str(tmp_path), "myop")) == (None, True)
