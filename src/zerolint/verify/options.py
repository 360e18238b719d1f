"""What one `zerolint verify` is asked to do (VerifyOptions, checked by `with_nodes`), the usage error it raises for
what cannot run, and its progress lines. No click here: the click command (zerolint/cli/app.py) builds the options
and turns UsageError into exit 2; the Action (zerolint/cli/action.py) builds them too."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

from .launch import LaunchError, Nodes, plan_nodes

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from rich.status import Status


class UsageError(Exception):
    pass


@dataclass
class VerifyOptions:
    gpus: int = 1
    cpu: bool = False
    compare_fix: bool = False
    params: str | None = None
    seq_len: int | None = None
    steps: int = 3
    timeout: float = 300.0  # the run only
    build_timeout: float = 1800.0  # the op build phase (zerolint/verify/ops.py)
    target: str | None = None  # None: the project's target (as for check), else auto
    formats: tuple = ("text",)
    outputs: tuple = ()
    no_cache: bool = False
    launcher: str | None = None  # torchrun | deepspeed | slurm | srun; None: torchrun, or slurm inside an srun step
    # More than one node (zerolint/verify/launch.py): torchrun's rendezvous, DeepSpeed's hostfile, srun's nodes.
    nnodes: int | None = None
    node_rank: int | None = None
    rdzv_endpoint: str | None = None
    rdzv_backend: str | None = None
    rdzv_id: str | None = None
    hostfile: str | None = None
    num_nodes: int | None = None
    master_addr: str | None = None
    master_port: int | None = None
    nodes: Nodes | None = None  # the checked multi-node request (with_nodes), None on one node
    precision: str = "bf16"
    client_optimizer: str = "auto"
    unsafe_fixes: bool = False
    prefer: tuple = ()
    fail_on: str | None = None  # None: the project's fail-on, else error
    select: tuple = ()  # () : the project's selection (as for check)
    ignore: tuple = ()
    isolated: bool = False  # ignore every zerolint config file in the tree (check --isolated)
    config_file: str | None = None  # this zerolint config for the file instead of the nearest one (check --config)
    quiet: bool = False
    color: bool = True
    keep: str | None = None  # keep the run's files (spec, log, results) under this directory
    training_args: str | None = None  # --training-args FILE (JSON/YAML TrainingArguments fields; hf_args.py)
    hf: str = "auto"  # auto: the real HF Trainer/Accelerate for hf/accelerate when [hf] is installed | replay
    op_cache: str | None = None  # --op-cache DIR: where the op builds are kept (cache.extensions_dir)
    dry_run: bool = False  # with --prepare: list the ops each config needs, build nothing

    @property
    def ranks(self) -> int:
        """The world size of the job: every node's ranks (the batch sizes and the cache key are per world size)."""
        return self.nodes.world_size if self.nodes is not None else self.gpus

    @property
    def run_launcher(self) -> str:
        return self.nodes.launcher if self.nodes is not None else (self.launcher or "torchrun")


def with_nodes(opts: VerifyOptions) -> VerifyOptions:
    """`opts` with its multi-node request checked (launch.plan_nodes); a usage error for an impossible one. A
    multi-node run never answers from the result cache: every node must join the launch, or the others wait."""
    try:
        nodes = plan_nodes(opts.launcher, opts.gpus, nnodes=opts.nnodes, node_rank=opts.node_rank,
                           rdzv_endpoint=opts.rdzv_endpoint, rdzv_backend=opts.rdzv_backend, rdzv_id=opts.rdzv_id,
                           hostfile=opts.hostfile, num_nodes=opts.num_nodes, master_addr=opts.master_addr,
                           master_port=opts.master_port)
    except LaunchError as e:
        raise UsageError(str(e)) from None
    if nodes is None:
        return opts
    if opts.compare_fix:
        raise UsageError(f"--compare-fix runs twice; a multi-node run (--launcher {nodes.launcher}) runs once")
    return replace(opts, nodes=nodes, no_cache=True)


class Progress:
    """Where the run is: a rich spinner on a terminal, plain lines on stderr otherwise, nothing with --quiet."""

    def __init__(self, enabled: bool, rich: bool) -> None:
        self.status: Status | None
        self.enabled, self.rich, self.status, self.label = enabled, rich, None, ""

    def start(self, label: str) -> None:
        self.label = label
        if not self.enabled:
            return
        if self.rich:
            from rich.console import Console

            self.status = Console(stderr=True).status(f"verify {label}: starting")
            self.status.start()
        else:
            print(f"zerolint verify: {label}: starting", file=sys.stderr, flush=True)

    def __call__(self, phase: str) -> None:
        if not self.enabled:
            return
        text = {"import": "importing torch and deepspeed", "model": "building the model",
                "initialize": "deepspeed.initialize", "inspect": "inspecting the engine",
                "done": "done", "failed": "failed"}.get(phase, phase)
        if self.status is not None:
            self.status.update(f"verify {self.label}: {text}")
        else:
            print(f"zerolint verify: {self.label}: {text}", file=sys.stderr, flush=True)

    def note(self, text: str) -> None:
        """A line that stays (a removed stale lock, a wait for another build), even under a spinner."""
        if not self.enabled:
            return
        if self.status is not None:
            from rich.markup import escape

            self.status.console.print(f"[yellow]zerolint verify: {escape(text)}[/]")
        else:
            print(f"zerolint verify: {text}", file=sys.stderr, flush=True)

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None
