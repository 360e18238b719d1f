"""Multi-node verify through an existing launcher (docs/verify.md "More than one node"); zerolint has none of its own.

- `torchrun`: `--nnodes N --node-rank R --rdzv-endpoint HOST:PORT` are handed to `torch.distributed.run`; the user
  runs the same `zerolint verify` on every node;
- `deepspeed`: `--hostfile FILE [--num-nodes N]` are handed to DeepSpeed's launcher (`deepspeed.launcher.runner`),
  which starts the ranks of every host over ssh (pdsh). The hostfile is parsed here only to validate it (never
  executed): DeepSpeed's own format, `host slots=N` (launcher/runner.py:225-254 `_parse_hostfile`);
- `slurm`: zerolint runs as one task of an `srun` step: one rank per task, its torch variables made from SLURM_*;
  `srun`: zerolint calls `srun` itself, and each task maps SLURM_* the same way (`python -m zerolint.verify.launch`).

Only this node's result files are visible to this zerolint (the others are on other hosts): the verdict rests on
rank 0's result when rank 0 ran here, else on the ranks that ran here (runner.py `_aggregate`). Every multi-node
rank starts through `python -m zerolint.verify.launch rank ...` (below), which writes `node-rank<R>.json` (the
launcher's view: rank, local rank, node, host) beside the child's result and takes the spec inline when the ranks
run where the run's directory does not exist.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import socket
import sys
from dataclasses import dataclass, field

LAUNCHERS = ("torchrun", "deepspeed", "slurm", "srun")
HOSTFILE_LINE = re.compile(r"^(\S+)\s+slots=(\d+)\s*(#.*)?$")  # DeepSpeed: `^(\S+)\s+slots=(\d+)`, comments '#'
SLURM_TASK_VARS = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_JOB_NODELIST")


class LaunchError(ValueError):
    """A multi-node request that cannot run: a usage error (exit 2), with the option or file:line at fault."""


@dataclass(frozen=True)
class Host:
    name: str
    slots: int
    line: int


@dataclass
class Nodes:
    """How the ranks of a multi-node run are started, after validation (`plan_nodes`)."""
    launcher: str  # torchrun | deepspeed | slurm | srun
    nnodes: int
    procs_per_node: int
    node_rank: int | None = None  # torchrun's --node-rank (c10d assigns ranks itself: rank 0 may be elsewhere)
    rdzv_endpoint: str | None = None
    rdzv_backend: str = "c10d"
    rdzv_id: str = "zerolint-verify"
    hostfile: str | None = None
    hosts: list[Host] = field(default_factory=list)
    master_addr: str | None = None
    master_port: int | None = None
    task_env: dict = field(default_factory=dict)  # slurm: this task's torch variables (slurm_env)

    @property
    def world_size(self) -> int:
        return self.nnodes * self.procs_per_node

    def to_json(self) -> dict:
        out = {"launcher": self.launcher, "nnodes": self.nnodes, "procs_per_node": self.procs_per_node,
               "world_size": self.world_size}
        if self.launcher == "torchrun":
            out.update(node_rank_option=self.node_rank, rdzv_endpoint=self.rdzv_endpoint,
                       rdzv_backend=self.rdzv_backend, rdzv_id=self.rdzv_id)
        if self.hostfile is not None:
            out.update(hostfile=self.hostfile, hosts=[h.name for h in self.hosts])
        if self.task_env:
            out["rank"] = int(self.task_env["RANK"])
            out["master"] = f"{self.task_env['MASTER_ADDR']}:{self.task_env['MASTER_PORT']}"
        return out


# -- the hostfile ------------------------------------------------------------------------------------------------------

def parse_hostfile(path: str) -> list[Host]:
    """DeepSpeed's hostfile (`host slots=N` a line, `#` comments, blank lines), read and checked, never run; a
    LaunchError at FILE:LINE for anything DeepSpeed would refuse or that gives no rank."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise LaunchError(f"--hostfile {path}: no such file") from None
    except IsADirectoryError:
        raise LaunchError(f"--hostfile {path}: is a directory") from None
    except (OSError, UnicodeDecodeError) as e:
        raise LaunchError(f"--hostfile {path}: cannot be read: {e}") from None
    hosts: list[Host] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = HOSTFILE_LINE.match(line)
        if m is None:
            raise LaunchError(f"{path}:{n}: bad hostfile line {line!r}: expected 'HOST slots=N' (DeepSpeed's "
                              "hostfile format, e.g. 'worker-0 slots=8')")
        name, slots = m.group(1), int(m.group(2))
        if name in seen:
            raise LaunchError(f"{path}:{n}: host {name!r} is listed twice (first at line {seen[name]}); DeepSpeed "
                              "refuses a hostfile with multiple entries for a host")
        if slots == 0:
            raise LaunchError(f"{path}:{n}: host {name!r} has slots=0: no rank could run there")
        seen[name] = n
        hosts.append(Host(name, slots, n))
    if not hosts:
        raise LaunchError(f"--hostfile {path}: no 'HOST slots=N' line (DeepSpeed refuses an empty hostfile)")
    return hosts


# -- Slurm -------------------------------------------------------------------------------------------------------------

def first_host(nodelist: str) -> str:
    """The first host of a Slurm node list: `gpu[03-05,9],cpu1` -> `gpu03` (zero padding kept, as `scontrol show
    hostnames` prints it)."""
    depth, end = 0, len(nodelist)
    for i, ch in enumerate(nodelist):  # the first entry ends at a comma outside brackets
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            end = i
            break
    head = nodelist[:end].strip()
    m = re.fullmatch(r"([^\[\]]*)\[([0-9,\-]+)\](.*)", head)
    if m is not None:
        return m.group(1) + re.split(r"[,\-]", m.group(2))[0] + m.group(3)
    if not head or "[" in head or "]" in head:
        raise LaunchError(f"SLURM_JOB_NODELIST={nodelist!r}: no host name in it")
    return head


def tasks_per_node(value: str) -> list[int]:
    """SLURM_TASKS_PER_NODE (`2(x3),1`) as one count per node: [2, 2, 2, 1]."""
    out: list[int] = []
    for part in value.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", part)
        if m is None:
            raise LaunchError(f"SLURM_TASKS_PER_NODE={value!r}: not a Slurm task count list")
        out += [int(m.group(1))] * int(m.group(2) or 1)
    return out


def _int_var(environ, name: str) -> int:
    value = environ.get(name, "")
    if not value.strip().isdigit():
        raise LaunchError(f"{name}={value!r}: expected a number (is this an srun task?)")
    return int(value)


def slurm_env(environ, master_port: int | None = None) -> dict[str, str]:
    """The variables torch.distributed reads, for this Slurm task: RANK = SLURM_PROCID, WORLD_SIZE =
    SLURM_NTASKS, LOCAL_RANK = SLURM_LOCALID (0 when the task sees one GPU), LOCAL_WORLD_SIZE = this node's
    SLURM_TASKS_PER_NODE entry, GROUP_RANK = SLURM_NODEID, MASTER_ADDR = the first host of SLURM_JOB_NODELIST (where
    SLURM_PROCID 0 runs with the default block distribution); MASTER_PORT: the option, else the environment's, else
    one every task derives alike from the job and step ids."""
    missing = [v for v in SLURM_TASK_VARS if not environ.get(v)]
    if missing:
        raise LaunchError(f"--launcher slurm: not inside an srun task ({', '.join(missing)} not set); run "
                          "`srun ... zerolint verify --launcher slurm CONFIG`, or `--launcher srun` to call srun")
    rank, world = _int_var(environ, "SLURM_PROCID"), _int_var(environ, "SLURM_NTASKS")
    node = _int_var(environ, "SLURM_NODEID")
    if rank >= world:
        raise LaunchError(f"SLURM_PROCID={rank} is not below SLURM_NTASKS={world}")
    per_node = tasks_per_node(environ["SLURM_TASKS_PER_NODE"]) if environ.get("SLURM_TASKS_PER_NODE") else [world]
    local_world = per_node[node] if node < len(per_node) else per_node[-1]
    if master_port is None and str(environ.get("MASTER_PORT", "")).isdigit():
        master_port = int(environ["MASTER_PORT"])
    if master_port is None:  # the same on every task of the step, different for the next step
        job = int(environ.get("SLURM_JOB_ID", "0") or 0) if str(environ.get("SLURM_JOB_ID", "0")).isdigit() else 0
        step = environ.get("SLURM_STEP_ID", environ.get("SLURM_STEPID", "0"))
        master_port = 20000 + (job * 7 + (int(step) if step.isdigit() else 0)) % 20000
    # LOCAL_RANK picks the GPU (DeepSpeed's set_device(LOCAL_RANK)). A task that sees one GPU (srun
    # --gpus-per-task=1 or a GPU binding sets CUDA_VISIBLE_DEVICES to it) must use device 0, whatever its local id:
    # device SLURM_LOCALID would not exist ("invalid device ordinal").
    visible = [d for d in str(environ.get("CUDA_VISIBLE_DEVICES") or "").split(",") if d.strip()]
    local = "0" if len(visible) == 1 else environ["SLURM_LOCALID"]
    return {"MASTER_ADDR": environ.get("MASTER_ADDR") or first_host(environ["SLURM_JOB_NODELIST"]),
            "MASTER_PORT": str(master_port), "RANK": str(rank), "WORLD_SIZE": str(world),
            "LOCAL_RANK": local, "LOCAL_WORLD_SIZE": str(local_world), "GROUP_RANK": str(node)}


def in_srun_step(environ) -> bool:
    """zerolint is one task of an srun step with several tasks (SLURM_STEP_ID is set in a step, not in the batch
    script, where SLURM_NTASKS is also set but no other task runs zerolint)."""
    step = environ.get("SLURM_STEP_ID", environ.get("SLURM_STEPID", ""))
    return step.isdigit() and all(environ.get(v) for v in SLURM_TASK_VARS) and \
        str(environ.get("SLURM_NTASKS", "")).isdigit() and int(environ["SLURM_NTASKS"]) > 1


# -- validation --------------------------------------------------------------------------------------------------------

def _endpoint(value: str) -> str:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise LaunchError(f"--rdzv-endpoint {value!r}: expected HOST:PORT (the node every node can reach, e.g. "
                          "node0:29400)")
    return value


def plan_nodes(launcher: str | None, gpus: int, nnodes: int | None = None, node_rank: int | None = None,
               rdzv_endpoint: str | None = None, rdzv_backend: str | None = None, rdzv_id: str | None = None,
               hostfile: str | None = None, num_nodes: int | None = None, master_addr: str | None = None,
               master_port: int | None = None, environ=None, which=shutil.which) -> Nodes | None:
    """The multi-node request of the options, checked; None for a run on this node alone. A LaunchError (exit 2)
    for an impossible combination."""
    environ = os.environ if environ is None else environ
    if launcher is None:
        launcher = "slurm" if in_srun_step(environ) and not (hostfile or nnodes or rdzv_endpoint) else "torchrun"
    rdzv = {"--node-rank": node_rank, "--rdzv-endpoint": rdzv_endpoint, "--rdzv-backend": rdzv_backend,
            "--rdzv-id": rdzv_id}
    hostf = {"--hostfile": hostfile, "--num-nodes": num_nodes}
    given = lambda opts: [k for k, v in opts.items() if v is not None]  # noqa: E731
    if launcher != "deepspeed" and given(hostf):
        raise LaunchError(f"{given(hostf)[0]} is DeepSpeed's launcher's: add --launcher deepspeed")
    if launcher != "torchrun" and given(rdzv):
        raise LaunchError(f"{given(rdzv)[0]} is torchrun's: not with --launcher {launcher}")
    if nnodes is not None and launcher not in ("torchrun", "srun"):
        raise LaunchError(f"--nnodes is for torchrun and srun, not --launcher {launcher}"
                          + (" (use --num-nodes with --hostfile)" if launcher == "deepspeed" else
                             " (the tasks of the srun step are the ranks)"))
    if master_addr is not None and launcher not in ("deepspeed",):
        raise LaunchError(f"--master-addr is for --launcher deepspeed (torchrun: --rdzv-endpoint; Slurm: the first "
                          f"host of the allocation), not --launcher {launcher}")
    if launcher == "torchrun":
        if nnodes is None or nnodes == 1 and rdzv_endpoint is None:
            if given(rdzv):
                raise LaunchError(f"{given(rdzv)[0]} needs --nnodes N (the number of nodes) and --rdzv-endpoint")
            return None  # one node: --standalone, as before
        if rdzv_endpoint is None:
            raise LaunchError(f"--nnodes {nnodes} needs --rdzv-endpoint HOST:PORT: where the nodes meet (a host "
                              "every node reaches; the same value on every node)")
        if node_rank is not None and node_rank >= nnodes:
            raise LaunchError(f"--node-rank {node_rank} with --nnodes {nnodes}: node ranks are 0..{nnodes - 1}")
        backend = rdzv_backend or "c10d"
        if backend == "static" and node_rank is None:
            raise LaunchError("--rdzv-backend static needs --node-rank R on every node")
        return Nodes("torchrun", nnodes, gpus, node_rank=node_rank, rdzv_endpoint=_endpoint(rdzv_endpoint),
                     rdzv_backend=backend, rdzv_id=rdzv_id or "zerolint-verify", master_port=master_port)
    if launcher == "deepspeed":
        if hostfile is None:
            if num_nodes is not None:
                raise LaunchError("--num-nodes needs --hostfile FILE (the hosts DeepSpeed's launcher starts ranks on)")
            return None  # one node: the deepspeed launcher with --num_gpus, as before
        hosts = parse_hostfile(hostfile)
        if num_nodes is not None and num_nodes > len(hosts):
            raise LaunchError(f"--num-nodes {num_nodes}: {hostfile} lists {len(hosts)} host"
                              f"{'s' if len(hosts) != 1 else ''}")
        used = hosts[:num_nodes] if num_nodes is not None else hosts
        small = [h for h in used if h.slots < gpus]
        if small:
            raise LaunchError(f"{hostfile}:{small[0].line}: --gpus {gpus} ranks per host, but {small[0].name} has "
                              f"slots={small[0].slots}")
        return Nodes("deepspeed", len(used), gpus, hostfile=os.path.abspath(hostfile), hosts=used,
                     master_addr=master_addr, master_port=master_port)
    if launcher == "slurm":
        if gpus != 1:
            raise LaunchError(f"--gpus {gpus} with --launcher slurm: one rank per srun task; ask srun for the ranks "
                              "(--ntasks-per-node)")
        env = slurm_env(environ, master_port)
        per_node = int(env["LOCAL_WORLD_SIZE"])
        world = int(env["WORLD_SIZE"])
        nodes = max(1, -(-world // per_node))
        return Nodes("slurm", nodes, per_node, node_rank=int(env["GROUP_RANK"]), task_env=env,
                     master_port=int(env["MASTER_PORT"]))
    if launcher == "srun":
        if which("srun") is None:
            raise LaunchError("--launcher srun: srun is not on PATH (run inside a Slurm cluster, or use --launcher "
                              "torchrun)")
        if nnodes is None:
            nnodes = int(environ["SLURM_JOB_NUM_NODES"]) if str(environ.get("SLURM_JOB_NUM_NODES", "")).isdigit() \
                else 1
        return Nodes("srun", nnodes, gpus, master_port=master_port)
    raise LaunchError(f"--launcher {launcher}: one of {', '.join(LAUNCHERS)}")


# -- commands ----------------------------------------------------------------------------------------------------------

def spec_b64(spec_path: str) -> str:
    with open(spec_path, "rb") as f:
        return base64.urlsafe_b64encode(f.read()).decode("ascii")


def command(nodes: Nodes, python: str, lifeline: str, spec_path: str, out_dir: str, port: int | None) -> list[str]:
    """The launcher's command line for `nodes` (each rank is `python -m zerolint.verify.launch rank ...`)."""
    rank = ["zerolint.verify.launch", "rank", "--out", out_dir]
    if nodes.launcher == "torchrun":  # this node's zerolint wrote the spec: a path is enough
        assert nodes.rdzv_endpoint is not None  # plan_nodes() gives torchrun's Nodes one
        args = ["--nnodes", str(nodes.nnodes), "--nproc-per-node", str(nodes.procs_per_node), "--rdzv-backend",
                nodes.rdzv_backend, "--rdzv-endpoint", nodes.rdzv_endpoint, "--rdzv-id", nodes.rdzv_id]
        if nodes.node_rank is not None:
            args += ["--node-rank", str(nodes.node_rank)]
        return [python, "-m", lifeline, "torch.distributed.run", *args, "-m", lifeline, *rank, "--spec", spec_path]
    if nodes.launcher == "deepspeed":  # ranks on other hosts cannot read this host's temp dir: the spec inline
        assert nodes.hostfile is not None  # plan_nodes() gives the deepspeed launcher's one
        args = ["--hostfile", nodes.hostfile, "--num_nodes", str(nodes.nnodes), "--num_gpus",
                str(nodes.procs_per_node), "--master_port", str(nodes.master_port or port)]
        if nodes.master_addr:
            args += ["--master_addr", nodes.master_addr]
        return [python, "-m", lifeline, "deepspeed.launcher.runner", *args, "--module", lifeline, *rank,
                "--spec-b64", spec_b64(spec_path)]
    if nodes.launcher == "srun":
        # srun is not Python: `launch exec` ties it to zerolint (PR_SET_PDEATHSIG survives exec) and execs it.
        return [python, "-m", "zerolint.verify.launch", "exec", "srun", f"--nodes={nodes.nnodes}",
                f"--ntasks-per-node={nodes.procs_per_node}", "--kill-on-bad-exit=1", python, "-m", *rank,
                "--slurm", "--spec-b64", spec_b64(spec_path)] + (
                    ["--master-port", str(nodes.master_port)] if nodes.master_port else [])
    raise LaunchError(f"--launcher {nodes.launcher} has no command of its own (zerolint is one of its tasks)")


# -- a rank ------------------------------------------------------------------------------------------------------------

def _rank_files(out: str, rank: int) -> list[str]:
    return [os.path.join(out, f"{kind}-rank{rank}.{ext}") for kind, ext in
            (("progress", "jsonl"), ("result", "json"), ("node", "json"), ("spec", "json"))]


def run_rank(argv: list[str]) -> int:
    """`python -m zerolint.verify.launch rank --out DIR (--spec FILE | --spec-b64 B64) [--slurm]`: one rank of a
    multi-node run. Maps SLURM_* to torch's variables (--slurm), writes node-rank<R>.json, runs the child. On a
    host where DIR does not exist (another node), makes it and removes this rank's files and DIR afterwards."""
    import argparse
    import runpy

    ap = argparse.ArgumentParser(prog="python -m zerolint.verify.launch rank")
    ap.add_argument("--out", required=True)
    ap.add_argument("--spec")
    ap.add_argument("--spec-b64")
    ap.add_argument("--slurm", action="store_true")
    ap.add_argument("--master-port", type=int)
    args, rest = ap.parse_known_args(argv)  # rest: the deepspeed launcher's --local_rank, for the child
    if args.slurm:
        for var in ("ZEROLINT_VERIFY_PARENT", "ZEROLINT_VERIFY_CLEANUP"):  # zerolint's pid is not this host's
            os.environ.pop(var, None)
        os.environ.update(slurm_env(os.environ, args.master_port))
    rank = int(os.environ.get("RANK", "0"))
    remote = not os.path.isdir(args.out)
    os.makedirs(args.out, exist_ok=True)
    spec = args.spec
    if args.spec_b64 is not None:
        spec = os.path.join(args.out, f"spec-rank{rank}.json")
        with open(spec, "wb") as f:
            f.write(base64.urlsafe_b64decode(args.spec_b64.encode("ascii")))
    node = {"rank": rank, "host": socket.gethostname(), "remote": remote,
            **{k.lower(): int(os.environ[k]) for k in ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "WORLD_SIZE",
                                                       "GROUP_WORLD_SIZE") if str(os.environ.get(k, "")).isdigit()}}
    with open(os.path.join(args.out, f"node-rank{rank}.json"), "w", encoding="utf-8") as f:
        json.dump(node, f)
    sys.argv = ["zerolint.verify.child", "--spec", spec, "--out", args.out, *rest]
    code = 1
    try:
        runpy.run_module("zerolint.verify.child", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        if remote:  # nobody collects them on this host
            for path in _rank_files(args.out, rank):
                try:
                    os.remove(path)
                except OSError:
                    pass
            for d in (args.out, os.path.dirname(args.out)):
                try:
                    os.rmdir(d)
                except OSError:
                    break
    return code


def exec_tied(argv: list[str]) -> None:
    """`python -m zerolint.verify.launch exec PROGRAM ARGS...`: ask for SIGTERM when zerolint dies, then become
    PROGRAM (srun: it ends its step's tasks on SIGTERM)."""
    from .lifeline import set_pdeathsig

    set_pdeathsig(signal.SIGTERM)
    if os.getppid() != int(os.environ.get("ZEROLINT_VERIFY_PARENT", os.getppid())):
        sys.exit(1)  # zerolint already gone
    os.execvp(argv[0], argv)


def main(argv: list[str]) -> int:
    if argv[:1] == ["rank"]:
        return run_rank(argv[1:])
    if argv[:1] == ["exec"] and len(argv) > 1:
        exec_tied(argv[1:])
    sys.exit("usage: python -m zerolint.verify.launch rank --out DIR (--spec FILE | --spec-b64 B64) [--slurm] | "
             "exec PROGRAM ARGS...")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
