"""verify must not let a config act on the machine (issue 12 item 3), and its result cache must not let a planted
record decide a verdict (item 10).

The real runs reproduce the reported attacks with DeepSpeed 0.19.8 on the CPU (configs that need no C++ op beyond
the CPU accelerator's shm_comm: `torch_adam`), and check that nothing outside the run's temp dir is written or
imported and that the report lists every key it did not honour. Before the fix each of them wrote its file or
imported its module."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import oracle

from zerolint.model import machine_keys
from zerolint.model.document import parse
from zerolint.model.view import Settings
from zerolint.rules.engine import Selection, run_rules
from zerolint.verify import cache, sandbox
from zerolint.verify.resolve import NEUTRALISED, SCRATCH, build_plan
from zerolint.verify.runner import RunOptions, child_env

ROOT = Path(__file__).resolve().parents[1]
ADAMW = {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}}  # torch's AdamW: no fused_adam build

real_run = [
    pytest.mark.slow,
    pytest.mark.deepspeed,
    oracle(importlib.util.find_spec("deepspeed") is None or importlib.util.find_spec("torch") is None,
           "needs torch and deepspeed (pip install '.[verify]')"),
]


# -- the plan ------------------------------------------------------------------------------------------------------

def every_machine_key(metric: str = "seqlen") -> dict:
    cfg: dict = {"train_micro_batch_size_per_gpu": 1}
    for i, key in enumerate(machine_keys.MACHINE_KEYS):
        toks = [metric if t == "*" else t for t in key.tokens]
        cur = cfg
        for t in toks[:-1]:
            cur = cur.setdefault(t, {})
        cur[toks[-1]] = ["pkg.mod.Cls"] if key.kind == machine_keys.MODULES else f"/outside/{i}"
    return cfg


def test_plan_neutralises_every_machine_key(tmp_path):
    cfg = every_machine_key()
    plan = build_plan(cfg, target="deepspeed", tmpdir=str(tmp_path))
    found = list(machine_keys.find_in_dict(cfg))
    assert len(found) == len(machine_keys.MACHINE_KEYS)
    neutralised = {c.pointer: c for c in plan.changes if c.kind == NEUTRALISED}
    assert sorted(neutralised) == sorted(ptr for _, ptr, _ in found)
    for key, ptr, before in found:
        after = plan.config
        for tok in ptr[1:].split("/"):
            after = after.get(tok) if isinstance(after, dict) else None
        assert neutralised[ptr].before == before
        if key.kind == machine_keys.MODULES:
            assert after is None and neutralised[ptr].after is None
        else:
            assert after == neutralised[ptr].after and after.startswith(f"{tmp_path}/"), (ptr, after)
    assert cfg["flops_profiler"]["output_file"] == "/outside/0"  # the user's dict is not modified
    change = neutralised["/flops_profiler/output_file"]
    assert change.to_json() == {
        "pointer": "/flops_profiler/output_file",
        "message": "flops_profiler.output_file not honoured: the flops profile is written to this file; verify "
                   f"points it at {tmp_path}/flops_profiler.output_file (its temp dir)",
        "before": "/outside/0", "after": f"{tmp_path}/flops_profiler.output_file", "kind": "neutralised"}
    assert neutralised["/torch_autocast/lower_precision_safe_modules"].message == (
        "torch_autocast.lower_precision_safe_modules not honoured: each name's module is imported, so verify drops "
        "the list and DeepSpeed uses its default classes")
    nvme = [c for c in plan.changes if c.pointer.endswith("/nvme_path")]
    assert [c.after for c in nvme] == [f"{tmp_path}/nvme", f"{tmp_path}/nvme"]


def test_plan_user_chosen_key_cannot_climb_out_of_the_temp_dir(tmp_path):
    plan = build_plan(every_machine_key(metric="../../../../etc/cron.d/x"), target="deepspeed", tmpdir=str(tmp_path))
    for c in plan.changes:
        if c.kind == NEUTRALISED and c.after is not None:
            assert os.path.dirname(c.after) == str(tmp_path), c.after
            assert ".." not in c.after.split("/"), c.after


def test_plan_leaves_values_deepspeed_rejects_on_its_own(tmp_path):
    # A non-string path or a list that is not all strings fails DeepSpeed's own checks before anything is touched
    # (runtime/config.py:201-204): DeepSpeed's verdict is the point, so they are left as written.
    cfg = {"train_micro_batch_size_per_gpu": 1, "flops_profiler": {"output_file": 5},
           "tensorboard": {"output_path": ""}, "torch_autocast": {"lower_precision_safe_modules": [1]}}
    plan = build_plan(cfg, target="deepspeed", tmpdir=str(tmp_path))
    assert [c for c in plan.changes if c.kind == NEUTRALISED] == []
    assert plan.config["torch_autocast"] == {"lower_precision_safe_modules": [1]}
    assert plan.config["flops_profiler"] == {"output_file": 5}


def test_plan_without_a_temp_dir_points_into_the_child_working_directory():
    plan = build_plan({"train_micro_batch_size_per_gpu": 1, "flops_profiler": {"output_file": "/etc/passwd"}},
                      target="deepspeed")
    assert plan.config["flops_profiler"]["output_file"] == f"{SCRATCH}/flops_profiler.output_file"
    assert not os.path.isabs(SCRATCH)


def test_nvme_device_without_a_path_is_an_adjustment_not_a_neutralisation(tmp_path):
    plan = build_plan({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {
        "stage": 3, "offload_param": {"device": "nvme"}}}, target="deepspeed", tmpdir=str(tmp_path))
    [c] = [c for c in plan.changes if c.pointer == "/zero_optimization/offload_param/nvme_path"]
    assert (c.kind, c.before, c.after) == ("adjusted", None, f"{tmp_path}/nvme")


# -- the rule ------------------------------------------------------------------------------------------------------

def lint(text: str):
    return run_rules(parse(text, "ds_config.json"), Settings(), Selection(select=["ZL910"]))


def test_rule_messages():
    diags = lint(json.dumps({
        "train_micro_batch_size_per_gpu": 1,
        "flops_profiler": {"enabled": True, "output_file": "/home/me/.bashrc"},
        "torch_autocast": {"enabled": True, "lower_precision_safe_modules": ["evil.Cls"]},
    }))
    assert [(d.code, d.severity.value, d.pointer, d.message, d.help) for d in diags] == [
        ("ZL910", "warning", "/flops_profiler/output_file",
         "flops_profiler.output_file names a path: zerolint verify will not honour it (it writes into its own temp "
         "dir)", "the flops profile is written to this file: make sure that is where you want it"),
        ("ZL910", "warning", "/torch_autocast/lower_precision_safe_modules",
         "torch_autocast.lower_precision_safe_modules names modules to import: zerolint verify will not honour it "
         "(it drops the list, so DeepSpeed uses its default classes)",
         "DeepSpeed imports each name's module at initialize when torch_autocast is enabled: keep the list to "
         "modules you trust"),
    ]


def test_rule_reports_every_machine_key():
    diags = lint(json.dumps(every_machine_key()))
    assert sorted(d.pointer for d in diags) == sorted(ptr for _, ptr, _ in machine_keys.find_in_dict(
        every_machine_key()))


# -- the child's environment -----------------------------------------------------------------------------------------

SECRETS = {"AWS_SECRET_ACCESS_KEY": "s3cr3t", "GITHUB_TOKEN": "ghp_x", "HF_TOKEN": "hf_x", "WANDB_API_KEY": "w",
           "PYTHONPATH": "/pr/checkout", "PYTHONSTARTUP": "/pr/x.py", "PYTHONHOME": "/pr", "HOME": "/home/me",
           "LD_PRELOAD": "/pr/evil.so", "PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
           "NCCL_SOCKET_IFNAME": "eth0", "CUDA_VISIBLE_DEVICES": "0,1", "RANK": "3"}


def test_scrubbed_environment_is_an_allow_list():
    env = sandbox.scrubbed(SECRETS)
    assert env == {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "NCCL_SOCKET_IFNAME": "eth0",
                   "CUDA_VISIBLE_DEVICES": "0,1", "PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1"}


def test_child_env_has_no_user_pythonpath_and_no_secrets(monkeypatch):
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    plan = build_plan({"train_micro_batch_size_per_gpu": 1}, target="deepspeed")
    env = child_env(plan, RunOptions(extensions_dir="/x/ext"), "run1", 12345)
    assert env["PYTHONPATH"] == str(ROOT / "src")  # zerolint's own root only
    assert not set(env) & {"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "HF_TOKEN", "WANDB_API_KEY", "PYTHONSTARTUP",
                           "PYTHONHOME", "HOME", "LD_PRELOAD"}
    assert (env["PYTHONNOUSERSITE"], env["PYTHONSAFEPATH"], env["RANK"], env["ZEROLINT_VERIFY_RUN"]) == (
        "1", "1", "0", "run1")


# -- the result cache ----------------------------------------------------------------------------------------------

@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    home = tmp_path / "zcache"
    monkeypatch.setenv("ZEROLINT_CACHE_DIR", str(home))
    return home


KEY = "a" * 64
PASS = {"status": "pass", "facts": {"zero_stage": 1}}


def test_cache_round_trip_is_private(cache_home):
    cache.store(KEY, PASS)
    assert cache.load(KEY) == PASS
    path = cache_home / "verify" / f"{KEY}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((cache_home / "verify").stat().st_mode) == 0o700
    assert json.loads(path.read_text())["key"] == KEY


def test_planted_record_with_the_wrong_key_inside_is_not_used(cache_home, capsys):
    folder = cache_home / "verify"
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(cache_home, 0o700)
    (folder / f"{KEY}.json").write_text(json.dumps({"format": cache.CACHE_FORMAT, "key": "b" * 64, "record": PASS}))
    assert cache.load(KEY) is None
    assert "the key recorded inside is not its name" in capsys.readouterr().err
    # and a bare record in the old format (no key at all) is not used either
    (folder / f"{KEY}.json").write_text(json.dumps(PASS))
    assert cache.load(KEY) is None


@pytest.mark.parametrize("mode,who", [(0o777, "others"), (0o770, "its group")])
def test_cache_dir_writable_by_others_is_refused(cache_home, capsys, mode, who):
    cache.store(KEY, PASS)
    assert cache.load(KEY) == PASS
    os.chmod(cache_home / "verify", mode)
    assert cache.load(KEY) is None
    err = capsys.readouterr().err
    assert f"result cache {cache_home / 'verify'} ignored: writable by {who} (mode {mode:o})" in err
    cache.store("c" * 64, PASS)  # nothing is written into it either
    assert not (cache_home / "verify" / f"{'c' * 64}.json").exists()


def test_record_that_is_a_symlink_is_refused(cache_home, tmp_path, capsys):
    cache.store(KEY, {"status": "fail"})
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"format": cache.CACHE_FORMAT, "key": "d" * 64, "record": PASS}))
    os.symlink(elsewhere, cache_home / "verify" / f"{'d' * 64}.json")
    assert cache.load("d" * 64) is None
    assert "a symlink" in capsys.readouterr().err


def test_record_writable_by_others_is_refused(cache_home, capsys):
    cache.store(KEY, PASS)
    os.chmod(cache_home / "verify" / f"{KEY}.json", 0o666)
    assert cache.load(KEY) is None
    assert "writable by others" in capsys.readouterr().err


def test_key_covers_sources_python_and_torch_build(monkeypatch):
    payload = {"plan": {"config": {}}, "device": "cpu:test"}
    fp = cache.fingerprint("cpu:test")
    assert len(fp["zerolint_sources"]) == 64 and fp["python"] == sys.version and fp["driver"] is None
    assert fp["torch_build"] is not None or importlib.util.find_spec("torch") is None
    key = cache.result_key(payload)
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert cache.result_key(payload) != key
    monkeypatch.undo()
    monkeypatch.setattr(cache, "sources_digest", lambda: "0" * 64)
    assert cache.result_key(payload) != key


def test_the_source_hash_covers_every_module_that_can_change_a_verdict(tmp_path, monkeypatch):
    """Issue 22, item 7: the hash covered 25 of 217 modules (model/, rules/ and project/ were left out), so a rule
    change could be answered with a stale verdict. A copy of the package with one rule module changed, with the
    view changed, or with a rule case changed, hashes differently each time."""
    import shutil as sh
    from pathlib import Path

    package = Path(cache.__file__).resolve().parent.parent
    digests = []
    for changed in (None, "rules/builtin/zl301_fp16_and_bf16.py", "model/view/base.py", "data/rule_cases/ZL301.toml"):
        copy = tmp_path / f"copy{len(digests)}" / "zerolint"
        sh.copytree(package, copy, ignore=sh.ignore_patterns("__pycache__"))
        if changed is not None:
            with open(copy / changed, "a", encoding="utf-8") as f:
                f.write("\n# changed\n")
        monkeypatch.setattr(cache, "__file__", str(copy / "verify" / "cache.py"))
        cache.sources_digest.cache_clear()
        digests.append(cache.sources_digest())
    cache.sources_digest.cache_clear()
    assert len(set(digests)) == 4, digests


# -- real runs ------------------------------------------------------------------------------------------------------

def verify(tmp_path, config: dict, pythonpath: str | None = None, *args):
    path = tmp_path / "ds_config.json"
    path.write_text(json.dumps(config, indent=1))
    env = {**os.environ, "NO_COLOR": "1", "ZEROLINT_CACHE_DIR": str(tmp_path / "cache"),
           "TORCH_EXTENSIONS_DIR": os.environ.get("TORCH_EXTENSIONS_DIR", str(ROOT / ".cache" / "torch_extensions"))}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + str(ROOT / "src")
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", str(path), "--cpu", "--format", "json", "-q",
                        "--timeout", "600", *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    try:
        report = json.loads(p.stdout)
    except ValueError:
        raise AssertionError(f"no JSON report (exit {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    return p, report["verify"]["runs"][0]


def neutralised(run) -> list[str]:
    return [c["pointer"] for c in run["changes"] if c.get("kind") == "neutralised"]


def real(test):
    """A real verify run: needs torch and deepspeed, takes 5-20 s."""
    for mark in real_run:
        test = mark(test)
    return test


@real
def test_flops_profiler_output_file_outside_is_not_written(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("original\n")
    p, run = verify(tmp_path, {"train_micro_batch_size_per_gpu": 1, "optimizer": ADAMW,
                               "flops_profiler": {"enabled": True, "profile_step": 1, "output_file": str(victim)}})
    assert run["status"] == "pass", run
    assert victim.read_text() == "original\n"  # before the fix: the flops profile
    assert neutralised(run) == ["/flops_profiler/output_file"]
    [change] = [c for c in run["changes"] if c["kind"] == "neutralised"]
    assert change["before"] == str(victim) and change["after"].endswith("/flops_profiler.output_file")
    assert not change["after"].startswith(str(tmp_path))


@real
def test_autotuning_paths_outside_are_not_written(tmp_path):
    outside = tmp_path / "outside"
    paths = {"model_info_path": outside / "model_info.json", "metric_path": outside / "metric.json",
             "results_dir": outside / "results", "exps_dir": outside / "exps"}
    p, run = verify(tmp_path, {"train_micro_batch_size_per_gpu": 1, "optimizer": ADAMW, "autotuning": {
        "enabled": True, "model_info": {"profile": True}, **{k: str(v) for k, v in paths.items()}}})
    # DeepSpeed's model-info profiling writes the file and calls exit() at the first backward
    # (engine.py:3025-3029): that is what the config does, so the run fails there, writing into its temp dir.
    assert (run["status"], run["failure"]["stage"], run["failure"]["error_type"]) == (
        "fail", "step 1 (forward)", "SystemExit"), run
    assert not outside.exists()  # before the fix: outside/model_info.json
    assert neutralised(run) == ["/autotuning/results_dir", "/autotuning/exps_dir", "/autotuning/metric_path",
                                "/autotuning/model_info_path"]


@real
def test_lower_precision_safe_modules_are_not_imported(tmp_path):
    pr = tmp_path / "pr"
    pr.mkdir()
    marker = tmp_path / "imported"
    (pr / "zl_pr_module.py").write_text(f"open({str(marker)!r}, 'w').write('PR code ran')\n"
                                        "import torch\nLinear = torch.nn.Linear\n")
    p, run = verify(tmp_path, {"train_micro_batch_size_per_gpu": 1, "optimizer": ADAMW, "torch_autocast": {
        "enabled": True, "dtype": "bfloat16", "lower_precision_safe_modules": ["zl_pr_module.Linear"]}},
        pythonpath=str(pr))
    assert run["status"] == "pass", run
    assert not marker.exists()  # before the fix: DeepSpeed imported zl_pr_module from the user's PYTHONPATH
    assert neutralised(run) == ["/torch_autocast/lower_precision_safe_modules"]
    static = [(d["code"], d["pointer"]) for d in json.loads(p.stdout)["diagnostics"] if d["code"] == "ZL910"]
    assert static == [("ZL910", "/torch_autocast/lower_precision_safe_modules")]  # check says so too


@real
def test_planted_pass_record_does_not_turn_a_failing_config_green(tmp_path):
    failing = {"train_micro_batch_size_per_gpu": 1, "optimizer": ADAMW, "fp16": {"enabled": True},
               "bf16": {"enabled": True}}
    p, run = verify(tmp_path, failing)
    assert (p.returncode, run["status"], run["cached"]) == (1, "fail", False)
    [record] = (tmp_path / "cache" / "verify").glob("*.json")
    p, run = verify(tmp_path, failing)
    assert (p.returncode, run["status"], run["cached"]) == (1, "fail", True)  # the cache works
    stored = json.loads(record.read_text())
    forged = {**stored["record"], "status": "pass", "error": None, "phase": None}
    record.write_text(json.dumps({"format": stored["format"], "key": "0" * 64, "record": forged}))
    p, run = verify(tmp_path, failing)
    assert (p.returncode, run["status"], run["cached"]) == (1, "fail", False)
    assert "the key recorded inside is not its name" in p.stderr


@pytest.mark.slow
@pytest.mark.deepspeed
@real_run[2]
def test_a_run_listens_on_no_interface_but_loopback(tmp_path):
    """Issue 22, item 4: with MASTER_ADDR=127.0.0.1 torch's TCPStore still listened on every interface
    (*:MASTER_PORT), so on a self-hosted runner anything on its network could connect during a run. A single rank
    now takes its process group from a file store in its own directory, and gloo's sockets are held to `lo`."""
    p, run = verify(tmp_path, {"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2},
                               "optimizer": ADAMW})
    assert run["status"] == "pass", run
    assert all(s.startswith(("127.", "::1:")) for s in run["listening"]), run["listening"]


@pytest.mark.slow
@pytest.mark.deepspeed
@real_run[2]
def test_a_run_leaves_nothing_in_dev_shm(tmp_path):
    """DeepSpeed's CPU shm_comm creates /dev/shm/deepspeed_allreduce_buffer_<uid>_<addr>_<port>_<rank> (~67 MB)
    for every run and never unlinks it: a session of verify runs left 328 of them, 22 GB of a 24 GB /dev/shm, and
    the machine swapped. verify removes each run's own segments once no live process maps them."""
    from zerolint.verify.procs import SHM_BUFFER, SHM_DIR

    def ours() -> set[str]:
        return {n for n in os.listdir(SHM_DIR) if n.startswith(f"{SHM_BUFFER}_{os.getuid()}_")}

    before = ours()
    p, run = verify(tmp_path, {"train_micro_batch_size_per_gpu": 2, "optimizer": ADAMW})
    assert run["status"] == "pass", run
    p, run = verify(tmp_path, {"train_batch_size": 4, "optimizer": ADAMW}, None, "--gpus", "2")
    assert run["status"] == "pass", run
    assert ours() - before == set()
