"""Multi-node `zerolint verify` (zerolint/verify/launch.py): the options and the hostfile checked (exit 2 with the
option or FILE:LINE at fault), the launchers' command lines, Slurm's variables, and real runs on this CPU machine:
two nodes simulated with torchrun's c10d rendezvous (two zerolint processes, one per "node"), and Slurm tasks
simulated with the SLURM_* variables srun sets. DeepSpeed's launcher over ssh/pdsh cannot run here (no ssh hosts):
its command line is checked, not run."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import oracle

from zerolint.verify.launch import (
    LaunchError,
    Nodes,
    command,
    first_host,
    parse_hostfile,
    plan_nodes,
    slurm_env,
    spec_b64,
    tasks_per_node,
)

ROOT = Path(__file__).resolve().parents[1]
EXT_DIR = os.environ.get("TORCH_EXTENSIONS_DIR", str(ROOT / ".cache" / "torch_extensions"))
NEEDS_DS = oracle(importlib.util.find_spec("deepspeed") is None or importlib.util.find_spec("torch") is None,
                  "needs torch and deepspeed (pip install '.[verify]')")
GOOD = {"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": True}, "zero_optimization": {"stage": 2}}
SLURM = {"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "0", "SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_LOCALID": "0",
         "SLURM_NODEID": "0", "SLURM_TASKS_PER_NODE": "1", "SLURM_JOB_NODELIST": "localhost"}


def hostfile(tmp_path, text: str) -> str:
    path = tmp_path / "hostfile"
    path.write_text(text)
    return str(path)


def error(**kw) -> str:
    with pytest.raises(LaunchError) as e:
        plan_nodes(kw.pop("launcher", None), kw.pop("gpus", 1), environ=kw.pop("environ", {}), **kw)
    return str(e.value)


# -- the hostfile: parsed to validate, never run -----------------------------------------------------------------------

def test_hostfile_parsed(tmp_path):
    path = hostfile(tmp_path, "# the cluster\nworker-0 slots=8\n\n  worker-1   slots=4  # smaller\n")
    assert [(h.name, h.slots, h.line) for h in parse_hostfile(path)] == [("worker-0", 8, 2), ("worker-1", 4, 4)]


@pytest.mark.parametrize("text, message", [
    ("worker-0 slots=8\nworker-1 slot=4\n",
     "{p}:2: bad hostfile line 'worker-1 slot=4': expected 'HOST slots=N' (DeepSpeed's hostfile format, e.g. "
     "'worker-0 slots=8')"),
    ("worker-0\n", "{p}:1: bad hostfile line 'worker-0': expected 'HOST slots=N' (DeepSpeed's hostfile format, e.g. "
                   "'worker-0 slots=8')"),
    ("worker-0 slots=8; rm -rf /\n", "{p}:1: bad hostfile line 'worker-0 slots=8; rm -rf /': expected 'HOST slots=N' "
                                     "(DeepSpeed's hostfile format, e.g. 'worker-0 slots=8')"),
    ("a slots=2\nb slots=2\na slots=4\n", "{p}:3: host 'a' is listed twice (first at line 1); DeepSpeed refuses a "
                                          "hostfile with multiple entries for a host"),
    ("a slots=0\n", "{p}:1: host 'a' has slots=0: no rank could run there"),
    ("# nothing\n\n", "--hostfile {p}: no 'HOST slots=N' line (DeepSpeed refuses an empty hostfile)"),
])
def test_bad_hostfile(tmp_path, text, message):
    path = hostfile(tmp_path, text)
    assert error(launcher="deepspeed", hostfile=path) == message.format(p=path)


def test_hostfile_missing_or_a_directory(tmp_path):
    nope = tmp_path / "nope"
    assert error(launcher="deepspeed", hostfile=str(nope)) == f"--hostfile {nope}: no such file"
    assert error(launcher="deepspeed", hostfile=str(tmp_path)) == f"--hostfile {tmp_path}: is a directory"


def test_hostfile_against_num_nodes_and_gpus(tmp_path):
    path = hostfile(tmp_path, "a slots=4\nb slots=2\nc slots=4\n")
    assert error(launcher="deepspeed", hostfile=path, num_nodes=4) == f"--num-nodes 4: {path} lists 3 hosts"
    assert error(launcher="deepspeed", hostfile=path, gpus=4) == (f"{path}:2: --gpus 4 ranks per host, but b has "
                                                                 "slots=2")
    nodes = plan_nodes("deepspeed", 4, hostfile=path, num_nodes=1, environ={})  # only the first host: a fits
    assert (nodes.nnodes, nodes.procs_per_node, nodes.world_size, [h.name for h in nodes.hosts]) == (1, 4, 4, ["a"])
    nodes = plan_nodes("deepspeed", 2, hostfile=path, environ={})
    assert (nodes.nnodes, nodes.world_size, nodes.hostfile) == (3, 6, os.path.abspath(path))


# -- impossible combinations -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, message", [
    ({"nnodes": 2}, "--nnodes 2 needs --rdzv-endpoint HOST:PORT: where the nodes meet (a host every node reaches; "
                    "the same value on every node)"),
    ({"node_rank": 1}, "--node-rank needs --nnodes N (the number of nodes) and --rdzv-endpoint"),
    ({"nnodes": 2, "node_rank": 2, "rdzv_endpoint": "n0:29400"},
     "--node-rank 2 with --nnodes 2: node ranks are 0..1"),
    ({"nnodes": 2, "rdzv_endpoint": "n0"}, "--rdzv-endpoint 'n0': expected HOST:PORT (the node every node can reach, "
                                           "e.g. node0:29400)"),
    ({"nnodes": 2, "rdzv_endpoint": "n0:99999"}, "--rdzv-endpoint 'n0:99999': expected HOST:PORT (the node every "
                                                 "node can reach, e.g. node0:29400)"),
    ({"nnodes": 2, "rdzv_endpoint": "n0:29400", "rdzv_backend": "static"},
     "--rdzv-backend static needs --node-rank R on every node"),
    ({"hostfile": "hosts"}, "--hostfile is DeepSpeed's launcher's: add --launcher deepspeed"),
    ({"launcher": "deepspeed", "nnodes": 2}, "--nnodes is for torchrun and srun, not --launcher deepspeed (use "
                                             "--num-nodes with --hostfile)"),
    ({"launcher": "slurm", "nnodes": 2, "environ": SLURM},
     "--nnodes is for torchrun and srun, not --launcher slurm (the tasks of the srun step are the ranks)"),
    ({"launcher": "deepspeed", "rdzv_endpoint": "n0:1"}, "--rdzv-endpoint is torchrun's: not with --launcher "
                                                         "deepspeed"),
    ({"launcher": "deepspeed", "num_nodes": 2}, "--num-nodes needs --hostfile FILE (the hosts DeepSpeed's launcher "
                                                "starts ranks on)"),
    ({"master_addr": "n0", "nnodes": 2, "rdzv_endpoint": "n0:1"},
     "--master-addr is for --launcher deepspeed (torchrun: --rdzv-endpoint; Slurm: the first host of the "
     "allocation), not --launcher torchrun"),
    ({"launcher": "slurm"}, "--launcher slurm: not inside an srun task (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, "
                            "SLURM_NODEID, SLURM_JOB_NODELIST not set); run `srun ... zerolint verify --launcher "
                            "slurm CONFIG`, or `--launcher srun` to call srun"),
    ({"launcher": "slurm", "gpus": 2, "environ": SLURM},
     "--gpus 2 with --launcher slurm: one rank per srun task; ask srun for the ranks (--ntasks-per-node)"),
    ({"launcher": "slurm", "environ": {**SLURM, "SLURM_PROCID": "1"}}, "SLURM_PROCID=1 is not below SLURM_NTASKS=1"),
    ({"launcher": "slurm", "environ": {**SLURM, "SLURM_NTASKS": "x"}},
     "SLURM_NTASKS='x': expected a number (is this an srun task?)"),
])
def test_impossible_combinations(kw, message):
    assert error(**kw) == message


def test_srun_not_installed():
    assert error(launcher="srun", which=lambda name: None) == ("--launcher srun: srun is not on PATH (run inside a "
                                                               "Slurm cluster, or use --launcher torchrun)")


def test_one_node_stays_as_before():
    assert plan_nodes(None, 2, environ={}) is None
    assert plan_nodes("deepspeed", 2, environ={}) is None
    assert plan_nodes("torchrun", 1, nnodes=1, environ={}) is None


# -- Slurm's variables -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("nodelist, host", [("gpu[03-05,9],cpu1", "gpu03"), ("node7,node8", "node7"),
                                             ("n[1-2]", "n1"), ("rack1-n[10-11]-ib", "rack1-n10-ib"),
                                             ("solo", "solo")])
def test_first_host(nodelist, host):
    assert first_host(nodelist) == host


def test_tasks_per_node():
    assert tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    with pytest.raises(LaunchError, match=r"SLURM_TASKS_PER_NODE='2\(3\)': not a Slurm task count list"):
        tasks_per_node("2(3)")


def test_slurm_env():
    env = {**SLURM, "SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_NODEID": "2",
           "SLURM_TASKS_PER_NODE": "2(x4)", "SLURM_JOB_NODELIST": "gpu[03-06]"}
    assert slurm_env(env) == {"MASTER_ADDR": "gpu03", "MASTER_PORT": str(20000 + 4242 * 7 % 20000), "RANK": "5",
                              "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "2"}
    assert slurm_env(env, master_port=29555)["MASTER_PORT"] == "29555"
    # srun --gpus-per-task=1: the task sees its one GPU as device 0; with the node's GPUs it picks its own
    assert slurm_env({**env, "CUDA_VISIBLE_DEVICES": "5"})["LOCAL_RANK"] == "0"
    assert slurm_env({**env, "CUDA_VISIBLE_DEVICES": "0,1,2,3"})["LOCAL_RANK"] == "1"
    mine = slurm_env({**env, "MASTER_ADDR": "head", "MASTER_PORT": "12345"})
    assert (mine["MASTER_ADDR"], mine["MASTER_PORT"]) == ("head", "12345")  # an sbatch script's own choice stays
    nodes = plan_nodes(None, 1, environ=env)  # inside an srun step of 8 tasks: one rank per task, found alone
    assert (nodes.launcher, nodes.nnodes, nodes.procs_per_node, nodes.world_size) == ("slurm", 4, 2, 8)
    assert plan_nodes(None, 1, environ={**env, "SLURM_STEP_ID": ""}) is None  # the batch script: not a step


# -- the launchers' command lines --------------------------------------------------------------------------------------

def test_commands(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text('{"config": {}}')
    b64 = spec_b64(str(spec))
    rank = ["zerolint.verify.launch", "rank", "--out", "/w/out"]
    tr = Nodes("torchrun", 2, 4, node_rank=1, rdzv_endpoint="n0:29400")
    assert command(tr, "py", "LL", str(spec), "/w/out", None) == [
        "py", "-m", "LL", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "4", "--rdzv-backend", "c10d",
        "--rdzv-endpoint", "n0:29400", "--rdzv-id", "zerolint-verify", "--node-rank", "1", "-m", "LL", *rank,
        "--spec", str(spec)]
    hosts = hostfile(tmp_path, "a slots=2\nb slots=2\n")
    ds = plan_nodes("deepspeed", 2, hostfile=hosts, master_addr="10.0.0.1", environ={})
    assert command(ds, "py", "LL", str(spec), "/w/out", 29500) == [
        "py", "-m", "LL", "deepspeed.launcher.runner", "--hostfile", hosts, "--num_nodes", "2", "--num_gpus", "2",
        "--master_port", "29500", "--master_addr", "10.0.0.1", "--module", "LL", *rank, "--spec-b64", b64]
    srun = plan_nodes("srun", 2, nnodes=3, environ={}, which=lambda name: "/usr/bin/srun")
    assert command(srun, "py", "LL", str(spec), "/w/out", None) == [
        "py", "-m", "zerolint.verify.launch", "exec", "srun", "--nodes=3", "--ntasks-per-node=2",
        "--kill-on-bad-exit=1", "py", "-m", *rank, "--slurm", "--spec-b64", b64]


# -- real runs: two "nodes" on this machine ----------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """The CPU ops this config needs (deepspeed_shm_comm), built before any run starts its clock."""
    d = tmp_path_factory.mktemp("mn")
    cfg = d / "ds.json"
    cfg.write_text(json.dumps(GOOD))
    env = {**os.environ, "NO_COLOR": "1", "DS_ACCELERATOR": "cpu", "TORCH_EXTENSIONS_DIR": EXT_DIR,
           "ZEROLINT_CACHE_DIR": str(d / "cache")}
    p = subprocess.run([sys.executable, "-m", "zerolint", "verify", "--prepare", "--cpu", str(cfg)],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=1600)
    assert p.returncode == 0, p.stderr[-3000:]
    return env


def start(env, config, *args, extra_env=None):
    return subprocess.Popen([sys.executable, "-m", "zerolint", "verify", str(config), "--cpu", "--format", "json",
                             "-q", "--timeout", "300", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**env, **(extra_env or {})}, cwd=ROOT)


def finish(p) -> tuple[int, dict]:
    out, err = p.communicate(timeout=600)
    try:
        return p.returncode, json.loads(out)
    except ValueError:
        raise AssertionError(f"no JSON report (exit {p.returncode}):\n{out[-2000:]}\n{err[-4000:]}")


@NEEDS_DS
@pytest.mark.slow
def test_two_nodes_through_torchrun(env, tmp_path):
    """`--nnodes 2 --node-rank 0|1 --rdzv-backend c10d --rdzv-endpoint`: both exit 0; the node where rank 0 ran
    (c10d assigns ranks itself, whatever --node-rank) reports world size 2 with one process per node."""
    cfg = tmp_path / "ds.json"
    cfg.write_text(json.dumps(GOOD))
    port = free_port()
    procs = [start(env, cfg, "--nnodes", "2", "--node-rank", str(r), "--rdzv-backend", "c10d", "--rdzv-endpoint",
                   f"127.0.0.1:{port}") for r in (0, 1)]
    got = [finish(p) for p in procs]
    assert [rc for rc, _ in got] == [0, 0], got
    runs = [rep["verify"]["runs"][0] for _, rep in got]
    assert [r["status"] for r in runs] == ["pass", "pass"]
    assert sorted(r["nodes"]["local_ranks"] for r in runs) == [[0], [1]]
    (r0,) = [r for r in runs if r["nodes"]["local_ranks"] == [0]]
    (r1,) = [r for r in runs if r["nodes"]["local_ranks"] == [1]]
    assert (r0["world_size"], r0["facts"]["world_size"], r0["launcher"]) == (2, 2, "torchrun")
    assert {k: r0["nodes"][k] for k in ("nnodes", "procs_per_node", "world_size", "node_rank", "verdict_from")} == {
        "nnodes": 2, "procs_per_node": 1, "world_size": 2, "node_rank": 0, "verdict_from": "rank 0"}
    assert r1["nodes"]["verdict_from"] == "this node's ranks [1] (rank 0 ran on another node)"
    assert r0["facts"]["train_batch_size"] == 4  # micro 2 x 1 x 2 ranks: the batch is the two nodes' one
    assert "torch.distributed.run" in r0["command"] and f"127.0.0.1:{port}" in r0["command"]


@NEEDS_DS
@pytest.mark.slow
def test_two_nodes_bad_config_fails_on_both(env, tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text('{\n  "train_micro_batch_size_per_gpu": 2,\n  "zero_optimization": {"stage": 2, "offload_optimiser"'
                   ': {"device": "cpu"}}\n}\n')
    port = free_port()
    procs = [start(env, cfg, "--nnodes", "2", "--node-rank", str(r), "--rdzv-endpoint", f"127.0.0.1:{port}")
             for r in (0, 1)]
    got = [finish(p) for p in procs]
    assert [rc for rc, _ in got] == [1, 1], got
    for _, rep in got:
        (d,) = [d for d in rep["diagnostics"] if d["code"] == "ZL990"]
        assert (d["line"], d["column"], d["pointer"]) == (3, 37, "/zero_optimization/offload_optimiser")
        assert rep["verify"]["runs"][0]["failure"]["stage"] == "parse"


@NEEDS_DS
@pytest.mark.slow
def test_slurm_single_task(env, tmp_path):
    """One srun task (fake SLURM_* of a 1-task step): the rank's variables come from Slurm's."""
    cfg = tmp_path / "ds.json"
    cfg.write_text(json.dumps(GOOD))
    port = free_port()
    rc, rep = finish(start(env, cfg, "--launcher", "slurm", "--master-port", str(port), extra_env=SLURM))
    run = rep["verify"]["runs"][0]
    assert (rc, run["status"], run["launcher"], run["world_size"]) == (0, "pass", "slurm", 1)
    assert {k: run["nodes"][k] for k in ("nnodes", "procs_per_node", "rank", "master", "local_ranks",
                                         "verdict_from")} == {
        "nnodes": 1, "procs_per_node": 1, "rank": 0, "master": f"localhost:{port}", "local_ranks": [0],
        "verdict_from": "rank 0"}
    assert run["command"][-6:] == ["zerolint.verify.launch", "rank", "--spec", run["command"][-3],
                                   "--out", run["command"][-1]]


@NEEDS_DS
@pytest.mark.slow
def test_slurm_two_tasks_found_alone(env, tmp_path):
    """Two tasks of an srun step (SLURM_STEP_ID set, 2 tasks): no --launcher needed, a rank per task."""
    cfg = tmp_path / "ds.json"
    cfg.write_text(json.dumps(GOOD))
    port = str(free_port())
    procs = [start(env, cfg, extra_env={**SLURM, "SLURM_NTASKS": "2", "SLURM_TASKS_PER_NODE": "1(x2)",
                                        "SLURM_PROCID": str(r), "SLURM_NODEID": str(r), "MASTER_PORT": port})
             for r in (0, 1)]
    got = [finish(p) for p in procs]
    assert [rc for rc, _ in got] == [0, 0], got
    runs = [rep["verify"]["runs"][0] for _, rep in got]
    assert [(r["launcher"], r["world_size"], r["nodes"]["rank"], r["nodes"]["nnodes"]) for r in runs] == [
        ("slurm", 2, 0, 2), ("slurm", 2, 1, 2)]
    assert runs[0]["facts"]["world_size"] == 2 and runs[0]["nodes"]["verdict_from"] == "rank 0"


@NEEDS_DS
def test_cli_usage_errors(tmp_path):
    """Through the command line: exit 2 and the message, before anything runs."""
    cfg = tmp_path / "ds.json"
    cfg.write_text(json.dumps(GOOD))
    hosts = hostfile(tmp_path, "worker-0 slots=2\nworker-1 slots=two\n")
    env = {**os.environ, "NO_COLOR": "1"}
    for args, message in [
        (["--launcher", "deepspeed", "--hostfile", hosts],
         f"{hosts}:2: bad hostfile line 'worker-1 slots=two': expected 'HOST slots=N' (DeepSpeed's hostfile format, "
         "e.g. 'worker-0 slots=8')"),
        (["--nnodes", "2"], "--nnodes 2 needs --rdzv-endpoint HOST:PORT: where the nodes meet (a host every node "
                            "reaches; the same value on every node)"),
        (["--nnodes", "2", "--rdzv-endpoint", "n0:29400", "--compare-fix"],
         "--compare-fix runs twice; a multi-node run (--launcher torchrun) runs once"),
        (["--nnodes", "2", "--rdzv-endpoint", "n0:29400", str(cfg)],
         "a multi-node run (--launcher torchrun) takes one CONFIG"),
    ]:
        p = subprocess.run([sys.executable, "-m", "zerolint", "verify", str(cfg), "--cpu", *args],
                           capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
        assert (p.returncode, p.stderr.strip().splitlines()[-1]) == (2, f"zerolint: error: {message}"), p.stderr


@NEEDS_DS
@pytest.mark.slow
def test_a_rank_on_another_host(env, tmp_path):
    """What a rank on another host does (the deepspeed launcher, srun): the spec inline, the run's directory made
    because it is not there, and removed with this rank's files afterwards (nobody collects them on that host)."""
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"config": GOOD, "model": {"vocab": 512, "hidden": 64, "layers": 2, "heads": 4,
                                                          "seq": 32}, "steps": 1, "client_optimizer": "AdamW",
                                "client_optimizer_args": {"lr": 1e-4}, "accelerator": "cpu", "fp16": False,
                                "zero_stage": 2, "hf": None}))
    out = tmp_path / "zerolint-verify-elsewhere" / "out"
    rank_env = {**env, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "RANK": "0", "WORLD_SIZE": "1",
                "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"}
    p = subprocess.run([sys.executable, "-m", "zerolint.verify.launch", "rank", "--out", str(out), "--spec-b64",
                        spec_b64(str(spec))], capture_output=True, text=True, env=rank_env, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert not (tmp_path / "zerolint-verify-elsewhere").exists()
    out.mkdir(parents=True)  # this host's run directory: the files stay for zerolint to read
    p = subprocess.run([sys.executable, "-m", "zerolint.verify.launch", "rank", "--out", str(out), "--spec",
                        str(spec)], capture_output=True, text=True, env=rank_env, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads((out / "result-rank0.json").read_text())["status"] == "pass"
    node = json.loads((out / "node-rank0.json").read_text())
    assert {k: node[k] for k in ("rank", "remote", "local_rank", "local_world_size", "world_size")} == {
        "rank": 0, "remote": False, "local_rank": 0, "local_world_size": 1, "world_size": 1}
