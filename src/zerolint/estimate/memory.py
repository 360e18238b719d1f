"""Per-GPU and per-node host memory of a DeepSpeed training job, component by component, from its config.

Pure Python (no torch, no deepspeed import). The config is read through `zerolint.view.View` (stage, precision,
offload devices, alias-aware zero fields); everything else comes from the DeepSpeed 0.19.8 source, cited per
component in its `formula`.

Notation: P parameters, L the largest layer (DeepSpeed's `largest_layer_params`), T the largest single tensor,
N = nodes x GPUs per node (the data-parallel world), Pn = ceil(P / N) (one rank's partition), D the bytes of a
16-bit element (4 under fp32 training), A the gradient-accumulation dtype, C the communication dtype, M the master
weights dtype (4 unless `bf16_master_weights_and_grads`), O the optimizer state bytes per parameter.

Memory is not one sum: buffers come and go during a step. Every component lists the *moments* of a training step
in which it is alive, and the peak is the largest moment:

- `model build` (host only): the model as the user's script builds it, before `deepspeed.initialize`;
- `init`: inside `deepspeed.initialize` (the whole model is moved to the GPU unless it was built under
  `deepspeed.zero.Init`);
- `fwd/bwd`: forward and backward, activations at their largest, gradient buckets filling;
- `bwd: bucket reduced`: a full reduce bucket is reduced while backward is still running (only when the gradients
  outnumber `reduce_bucket_size`): the reduction's staging copies and temporaries are alive, together with the
  activations and gathered ZeRO-3 parameters that the rest of backward still needs;
- `grads reduced`: end of backward, the last bucket reduced (ZeRO-0/1 hold the full gradients here);
- `step: fp32 grads`: the optimizer step turns the 16-bit gradient partition into fp32
  (stage_1_and_2.py / stage3.py `_prepare_fp32_grad_for_sub_group`: a flattened copy, then `.to(fp32)`);
- `step: update`: the optimizer update itself (lazily created states, optimizer temporaries).

The estimate covers what DeepSpeed allocates for model states and its own buffers, plus activations when the model
shape and the sequence length are known. It does not cover what `torch.cuda.max_memory_allocated` cannot see or
what varies by model code; that is the *margin*, added as separate rows (see MARGINS below and docs/estimate.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from .modelspec import ModelSpec

GiB = 1024**3

# Moments of a training step (see the module docstring).
BUILD, INIT, FWD, BWD, RED, CONV, UPD = ("model build", "init", "fwd/bwd", "bwd: bucket reduced", "grads reduced",
                                        "step: fp32 grads", "step: update")
TRAIN = (FWD, BWD, RED, CONV, UPD)
ALWAYS = (INIT, *TRAIN)
MOMENTS = (BUILD, *ALWAYS)

# -- the margin ------------------------------------------------------------------------------------------------------
# GPU: the CUDA context (not visible to torch.cuda.max_memory_*; ~0.5 GiB with CUDA 12+ lazy module loading),
# NCCL communicator buffers when world > 1, and the caching allocator. The allocator keeps the blocks a moment of
# the step frees, and the next moment's buffers (of other sizes) mostly take new ones: measured peak reserved was
# 0.82-1.16x the covered peak plus the buffers of the other moments without offload, 1.01-1.51x with offload; on top
# of that, fragmentation of 15 % of the covered peak, 40 % with offload. Offload reserves more because: ZeRO-1/2
# initialize flattens the 16-bit group after emptying the cache (stage_1_and_2.py:449), so the per-tensor blocks it
# replaces stay reserved and the step's larger buffers take new segments; ZeRO-3 frees gathered parameters with a
# pending use on the compute stream (partition_parameters.py:327) while new gathers allocate on the all-gather
# stream; and offload allocates per-parameter temporaries (fp64 norms, fp32 copies, copies back from pinned memory)
# of every tensor size. Checked on the 71 H200 runs of docs/estimate-accuracy.md (125M-2.7B parameters).
CUDA_CONTEXT_BYTES = int(0.5 * GiB)
NCCL_BYTES = int(0.5 * GiB)
GPU_ALLOCATOR_FRACTION = 0.15  # of the covered peak
GPU_ALLOCATOR_FRACTION_OFFLOAD = 0.40
# Host, per process: the Python/torch/CUDA/DeepSpeed runtime (measured RSS minus the covered host peak: 1.0-1.6 GiB
# without offload, 1.9-2.1 GiB with CPU offload, whose optimizer threads and libraries come on top), and allocator
# slack (freed model copies that glibc keeps, torch's pinned pool).
HOST_RUNTIME_BYTES = int(1.5 * GiB)
HOST_OFFLOAD_RUNTIME_BYTES = int(0.5 * GiB)
HOST_ALLOCATOR_FRACTION = 0.25
# The caching allocator rounds a large block up to 2 MiB and serves blocks under 1 MiB from 2 MiB segments
# (c10/cuda/CUDACachingAllocator.cpp kRoundLarge, kSmallBuffer).
SEGMENT_ROUND = 2 * 1024**2

WARN_FRACTION = 0.9  # "within 10 % of the limit"

# Rows that are the part of another row still alive at a later moment (the activations and gathered parameters the
# rest of backward needs when a bucket is reduced): the allocator-cache margin counts their memory once.
PART_OF = {"activations_bwd": "activations", "gathered_bwd": "gathered"}

# DeepSpeed defaults (0.19.8): runtime/zero/config.py, runtime/zero/offload_config.py, engine.py.
DEFAULTS = {
    "reduce_bucket_size": 500_000_000,
    "allgather_bucket_size": 500_000_000,
    "contiguous_gradients": True,
    "prefetch_bucket_size": 50_000_000,
    "max_live_parameters": 1_000_000_000,
    "max_reuse_distance": 1_000_000_000,
    "param_persistence_threshold": 100_000,
    "model_persistence_threshold": 2**63 - 1,  # sys.maxsize
    "sub_group_size": 1_000_000_000,
}
ENGINE_ALLREDUCE_BUCKET = 500_000_000  # engine.py MEMORY_OPT_ALLREDUCE_SIZE (stage 0, world > 1)
# Fields that may be spelled with the stage3_ prefix (the prefixed name is the pydantic alias, read first).
_ALIASES = {
    "prefetch_bucket_size": "stage3_prefetch_bucket_size",
    "max_live_parameters": "stage3_max_live_parameters",
    "max_reuse_distance": "stage3_max_reuse_distance",
    "param_persistence_threshold": "stage3_param_persistence_threshold",
    "model_persistence_threshold": "stage3_model_persistence_threshold",
}

DTYPE_BYTES = {"fp32": 4, "float32": 4, "fp16": 2, "float16": 2, "half": 2, "bf16": 2, "bfloat16": 2}

# Optimizer state bytes per parameter (fp32 states): name -> (bytes, description)
OPTIMIZERS: dict[str, tuple[int, str]] = {
    "adam": (8, "Adam: 2 fp32 moments"),
    "adamw": (8, "AdamW: 2 fp32 moments"),
    "muadam": (8, "MuAdam: 2 fp32 moments"),
    "muadamw": (8, "MuAdamW: 2 fp32 moments"),
    "lamb": (8, "Lamb: 2 fp32 moments"),
    "lion": (4, "Lion: 1 fp32 moment"),
    "adagrad": (4, "Adagrad: 1 fp32 sum of squares"),
    "muon": (4, "Muon: 1 fp32 momentum (2-D weights; the auxiliary Adam's 8 B/param on the rest is not split out)"),
    "adamax": (8, "Adamax: 2 fp32 buffers"),
    "adadelta": (8, "Adadelta: 2 fp32 buffers"),
    "nadam": (8, "NAdam: 2 fp32 moments"),
    "radam": (8, "RAdam: 2 fp32 moments"),
    "rprop": (8, "Rprop: 2 fp32 buffers"),
}


class EstimateError(ValueError):
    """The config (or the request) leaves the estimate undefined, e.g. the ZeRO stage is decided at run time."""


def parse_bytes(text: str | int | float) -> int:
    """'80GB', '80GiB', '24G', '1TB', '512MiB', 85899345920 -> bytes. GB/G/GiB all mean 2^30 (as nvidia-smi and
    DeepSpeed's estimators report memory); a bare number is bytes."""
    import re

    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return int(text)
    s = str(text).strip().replace(",", "").replace("_", "")
    m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]?)(i?[bB])?", s)
    if not m or (m.group(3) and not m.group(2) and m.group(3).lower() == "ib"):
        raise ValueError(f"{text!r} is not a memory size (examples: 24GB, 80GiB, 1TB)")
    mult = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[m.group(2).lower()]
    value = float(m.group(1)) * mult
    if value <= 0 or not math.isfinite(value):
        raise ValueError(f"{text!r} is not a positive memory size")
    return int(value)


def gib(n: int | float) -> float:
    return n / GiB


def pow2ceil(n: int) -> int:
    return 1 << (int(n) - 1).bit_length() if n > 0 else 0


# -- inputs ----------------------------------------------------------------------------------------------------------

@dataclass
class Cluster:
    nodes: int = 1
    gpus_per_node: int = 1

    @property
    def world(self) -> int:
        return self.nodes * self.gpus_per_node

    def describe(self) -> str:
        n = "node" if self.nodes == 1 else "nodes"
        g = "GPU" if self.gpus_per_node == 1 else "GPUs"
        return f"{self.nodes} {n} x {self.gpus_per_node} {g} (world {self.world})"


@dataclass
class Workload:
    seq_len: int | None = None
    micro_batch: int | None = None  # None: the config's train_micro_batch_size_per_gpu
    checkpointing: bool = False  # activation (gradient) checkpointing of every layer


@dataclass
class Plan:
    """What the config asks DeepSpeed to do, with defaults applied. Built by `plan_from_view`; suggestions are
    `dataclasses.replace`d copies."""

    stage: int
    precision: str  # fp32 | fp16 | bf16
    offload_optimizer: str = "none"  # none | cpu | nvme
    offload_param: str = "none"
    pin_optimizer: bool = True
    pin_param: bool = True
    reduce_bucket_size: int = DEFAULTS["reduce_bucket_size"]
    allgather_bucket_size: int = DEFAULTS["allgather_bucket_size"]
    overlap_comm: bool | None = None  # None: DeepSpeed's default (true at stage 3 only)
    contiguous_gradients: bool = True
    prefetch_bucket_size: int = DEFAULTS["prefetch_bucket_size"]
    max_live_parameters: int = DEFAULTS["max_live_parameters"]
    max_reuse_distance: int = DEFAULTS["max_reuse_distance"]
    param_persistence_threshold: int = DEFAULTS["param_persistence_threshold"]
    model_persistence_threshold: int = DEFAULTS["model_persistence_threshold"]
    sub_group_size: int = DEFAULTS["sub_group_size"]
    optimizer: str = "adamw"
    optimizer_state_bytes: int = 8
    optimizer_desc: str = "AdamW: 2 fp32 moments"
    torch_adam: bool = False  # torch.optim.Adam(W) instead of FusedAdam/CPUAdam: creates step temporaries
    client_optimizer: bool = False  # no optimizer section: the script passes its own optimizer
    grad_accum_dtype: str | None = None  # data_types.grad_accum_dtype; None: the model dtype
    comm_dtype: str | None = None  # communication_data_type; None: the model dtype
    bf16_master: bool = False  # bf16.bf16_master_weights_and_grads / fp16.fp16_master_weights_and_grads
    bf16_optimizer_states: bool = False
    opt_buffer_count: int = 4  # offload_optimizer.buffer_count (nvme)
    param_buffer_count: int = 5  # offload_param.buffer_count (nvme)
    param_buffer_size: int = 100_000_000  # offload_param.buffer_size (nvme)
    max_in_cpu: int = 1_000_000_000  # offload_param.max_in_cpu (nvme)
    micro_batch: int | None = None  # train_micro_batch_size_per_gpu when the config gives a number
    assumptions: list[str] = field(default_factory=list)

    @property
    def overlap(self) -> bool:
        return self.overlap_comm if self.overlap_comm is not None else self.stage == 3

    @property
    def mixed(self) -> bool:
        return self.precision in ("bf16", "fp16")

    @property
    def d(self) -> int:  # bytes of a model-dtype element
        return 2 if self.mixed else 4

    @property
    def a(self) -> int:  # gradient accumulation dtype
        return DTYPE_BYTES.get(self.grad_accum_dtype or "", self.d)

    @property
    def c(self) -> int:  # communication dtype
        return DTYPE_BYTES.get(self.comm_dtype or "", self.d)

    @property
    def m(self) -> int:  # master weights / fp32 gradient dtype
        return 2 if self.bf16_master else 4

    @property
    def o(self) -> int:
        return self.optimizer_state_bytes // 2 if self.bf16_optimizer_states else self.optimizer_state_bytes

    def describe(self) -> str:
        off = []
        if self.offload_optimizer != "none" and self.stage >= 1:
            off.append(f"optimizer -> {self.offload_optimizer}")
        if self.offload_param != "none" and self.stage == 3:
            off.append(f"params -> {self.offload_param}")
        return (f"ZeRO stage {self.stage}, {self.precision}, {self.optimizer_desc}"
                + (", torch optimizer" if self.torch_adam else "")
                + (f", offload {', '.join(off)}" if off else ", no offload"))


@dataclass
class Component:
    name: str
    bytes: int
    where: str  # gpu | host | nvme
    formula: str
    moments: tuple[str, ...] = TRAIN
    model_state: bool = False  # counted by DeepSpeed's estimators (params, grads, master, optimizer states)
    margin: bool = False  # part of the documented margin, not of the covered estimate
    key: str = ""

    def to_dict(self, peak: str | None = None) -> dict[str, Any]:
        return {"name": self.name, "key": self.key or self.name, "bytes": int(self.bytes), "where": self.where,
                "formula": self.formula, "moments": list(self.moments), "at_peak": self.margin or peak in self.moments,
                "model_state": self.model_state, "margin": self.margin}


@dataclass
class Suggestion:
    title: str
    change: dict[str, Any]  # config path -> value, or "gpus"/"nodes"/... for the job
    per_gpu_bytes: int
    per_node_host_bytes: int
    fits: bool

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "change": self.change, "per_gpu_bytes": self.per_gpu_bytes,
                "per_node_host_bytes": self.per_node_host_bytes, "fits": self.fits}


@dataclass
class Estimate:
    plan: Plan
    model: ModelSpec
    cluster: Cluster
    workload: Workload
    components: list[Component]
    gpu_memory: int | None = None
    host_memory: int | None = None
    zero_init: bool = False
    activations_known: bool = False
    suggestions: list[Suggestion] = field(default_factory=list)
    config_path: str = ""

    # -- totals --------------------------------------------------------------------------------------------------
    def _moment_sums(self, where: str) -> dict[str, int]:
        return {m: sum(c.bytes for c in self.components if c.where == where and not c.margin and m in c.moments)
                for m in MOMENTS}

    def _peak(self, where: str) -> tuple[str, int]:
        sums = self._moment_sums(where)
        moment = max(MOMENTS, key=lambda m: (sums[m], -MOMENTS.index(m)))
        return moment, sums[moment]

    @property
    def gpu_peak_moment(self) -> str:
        return self._peak("gpu")[0]

    @property
    def per_gpu_covered_bytes(self) -> int:
        return self._peak("gpu")[1]

    @property
    def per_gpu_margin_bytes(self) -> int:
        return sum(c.bytes for c in self.components if c.where == "gpu" and c.margin)

    @property
    def per_gpu_bytes(self) -> int:
        return self.per_gpu_covered_bytes + self.per_gpu_margin_bytes

    @property
    def host_peak_moment(self) -> str:
        return self._peak("host")[0]

    @property
    def per_process_host_covered_bytes(self) -> int:
        return self._peak("host")[1]

    @property
    def per_node_host_covered_bytes(self) -> int:
        return self.per_process_host_covered_bytes * self.cluster.gpus_per_node

    @property
    def per_node_host_margin_bytes(self) -> int:
        return sum(c.bytes for c in self.components if c.where == "host" and c.margin) * self.cluster.gpus_per_node

    @property
    def per_node_host_bytes(self) -> int:
        return self.per_node_host_covered_bytes + self.per_node_host_margin_bytes

    @property
    def per_node_nvme_bytes(self) -> int:
        return sum(c.bytes for c in self.components if c.where == "nvme") * self.cluster.gpus_per_node

    @property
    def fits_gpu(self) -> bool | None:
        return None if self.gpu_memory is None else self.per_gpu_bytes <= self.gpu_memory

    @property
    def fits_host(self) -> bool | None:
        return None if self.host_memory is None else self.per_node_host_bytes <= self.host_memory

    @property
    def verdict(self) -> str | None:
        """'fits' | 'tight' (within 10 % of a limit) | 'does-not-fit' | None (no limit given)."""
        checks = [(self.per_gpu_bytes, self.gpu_memory), (self.per_node_host_bytes, self.host_memory)]
        known = [(need, have) for need, have in checks if have is not None]
        if not known:
            return None
        if any(need > have for need, have in known):
            return "does-not-fit"
        if any(need > WARN_FRACTION * have for need, have in known):
            return "tight"
        return "fits"

    @property
    def assumptions(self) -> list[str]:
        return [*self.model.assumptions, *self.plan.assumptions, *self._assumptions]

    _assumptions: list[str] = field(default_factory=list)

    @property
    def not_covered(self) -> list[str]:
        out = []
        if not self.activations_known:
            out.append("activations and logits (give --seq-len and a model shape: --model, or --hidden/--layers/"
                       "--vocab)")
        out += ["temporaries inside the model's own forward/backward kernels",
                "memory held by the user's code (data loader, evaluation, extra model copies)"]
        return out

    def top(self, where: str = "gpu", n: int = 3) -> list[Component]:
        peak = self.gpu_peak_moment if where == "gpu" else self.host_peak_moment
        rows = [c for c in self.components if c.where == where and not c.margin and peak in c.moments]
        return sorted(rows, key=lambda c: -c.bytes)[:n]

    def to_dict(self) -> dict[str, Any]:
        gpu_peak, host_peak = self.gpu_peak_moment, self.host_peak_moment
        rows = []
        for c in self.components:
            rows.append(c.to_dict(gpu_peak if c.where == "gpu" else host_peak if c.where == "host" else None))
        p = self.plan
        return {
            "config": self.config_path,
            "model": {"name": self.model.name, "params": self.model.params, "largest_layer": self.model.largest_layer,
                      "largest_tensor": self.model.largest_tensor, "source": self.model.source},
            "cluster": {"nodes": self.cluster.nodes, "gpus_per_node": self.cluster.gpus_per_node,
                        "world_size": self.cluster.world},
            "workload": {"seq_len": self.workload.seq_len, "micro_batch": self.micro_batch,
                         "checkpointing": self.workload.checkpointing},
            "plan": {"stage": p.stage, "precision": p.precision, "optimizer": p.optimizer,
                     "optimizer_state_bytes": p.o, "offload_optimizer": p.offload_optimizer if p.stage else "none",
                     "offload_param": p.offload_param if p.stage == 3 else "none",
                     "overlap_comm": p.overlap, "reduce_bucket_size": p.reduce_bucket_size,
                     "zero_init": self.zero_init, "torch_adam": p.torch_adam},
            "per_gpu_bytes": self.per_gpu_bytes,
            "per_gpu_covered_bytes": self.per_gpu_covered_bytes,
            "per_gpu_margin_bytes": self.per_gpu_margin_bytes,
            "gpu_peak_moment": gpu_peak,
            "per_node_host_bytes": self.per_node_host_bytes,
            "per_node_host_covered_bytes": self.per_node_host_covered_bytes,
            "per_node_host_margin_bytes": self.per_node_host_margin_bytes,
            "host_peak_moment": host_peak,
            "per_node_nvme_bytes": self.per_node_nvme_bytes,
            "gpu_memory": self.gpu_memory,
            "host_memory": self.host_memory,
            "fits_gpu": self.fits_gpu,
            "fits_host": self.fits_host,
            "verdict": self.verdict,
            "breakdown": rows,
            "margin": {"cuda_context_bytes": CUDA_CONTEXT_BYTES, "nccl_bytes": NCCL_BYTES,
                       "gpu_allocator_fraction": GPU_ALLOCATOR_FRACTION,
                       "gpu_allocator_fraction_offload": GPU_ALLOCATOR_FRACTION_OFFLOAD,
                       "host_runtime_bytes": HOST_RUNTIME_BYTES,
                       "host_offload_runtime_bytes": HOST_OFFLOAD_RUNTIME_BYTES,
                       "host_allocator_fraction": HOST_ALLOCATOR_FRACTION},
            "assumptions": self.assumptions,
            "not_covered": self.not_covered,
            "suggestions": [s.to_dict() for s in self.suggestions],
        }

    @property
    def micro_batch(self) -> int | None:
        return self.workload.micro_batch or self.plan.micro_batch


# -- reading the config ---------------------------------------------------------------------------------------------

def _zero_node(view, name: str):
    """A zero_optimization field under either of its names. Uses the view (alias-aware through the schema); falls
    back to the alias table above when this checkout has no generated schema."""
    try:
        return view.zero_field(name)
    except (FileNotFoundError, OSError, KeyError):
        z = view.zero
        if z is None:
            return None
        alias = _ALIASES.get(name)
        for key in ([alias] if alias else []) + [name]:
            if z.get(key) is not None:
                return z.get(key)
        return None


def _num(view, node, default, *, hf_auto=None, what: str = "", notes: list[str] | None = None):
    """The numeric value at node, else the default; "auto" filled by HF/Accelerate uses `hf_auto` when known."""
    if node is None:
        return default
    if view.is_auto(node):
        if view.fills_auto(node.pointer) and hf_auto is not None:
            if notes is not None:
                notes.append(f"{view.path(node.pointer)} \"auto\" -> {hf_auto:,} ({what}, as {view.consumer} fills it)")
            return hf_auto
        return default
    v = view.number(node)
    if v is None or isinstance(v, bool) or not abs(v) < 2**63:  # NaN, infinity, beyond int64: DeepSpeed rejects
        return default  # those at parse (other rules say so); estimating with them would overflow
    return v


def _bool(view, node, default):
    if node is None or view.is_auto(node):
        return default
    return node.value if isinstance(node.value, bool) else default


def _dtype(value) -> str | None:
    if not isinstance(value, str):
        return None
    v = value.strip().lower()
    return {"float32": "fp32", "fp32": "fp32", "float": "fp32", "fp16": "fp16", "float16": "fp16", "half": "fp16",
            "bf16": "bf16", "bfloat16": "bf16"}.get(v)


def plan_from_view(view, model: ModelSpec | None = None) -> Plan:
    """The estimate's reading of a config. Raises EstimateError when the ZeRO stage cannot be known."""
    notes: list[str] = []
    if view.root is None:
        raise EstimateError("the config is not a JSON object")
    stage = view.zero_stage
    if stage is None:
        raise EstimateError("the ZeRO stage is not known before run time (invalid, or filled by the launcher); "
                            "set zero_optimization.stage to 0, 1, 2 or 3")
    precision = view.precision
    if precision is None:
        precision = "bf16"
        notes.append(f"precision is decided at run time (\"auto\"); assumed bf16 (what {view.consumer} picks on "
                     "Ampere and newer when bf16 is requested)")
    off_opt = view.offload_device("optimizer")
    off_par = view.offload_device("param")
    for which, dev in (("optimizer", off_opt), ("param", off_par)):
        if dev is None:
            notes.append(f"offload_{which}.device is decided at run time or invalid; assumed none")
    off_opt, off_par = off_opt or "none", off_par or "none"

    hidden = model.shape.hidden if model is not None else None
    z = lambda name: _zero_node(view, name)  # noqa: E731
    pin_default = view.since(">=0.19.5")  # PR #8207 turned pin_memory on by default
    plan = Plan(stage=stage, precision=precision, offload_optimizer=off_opt, offload_param=off_par)
    plan.pin_optimizer = _bool(view, view.node("/zero_optimization/offload_optimizer/pin_memory"), pin_default)
    plan.pin_param = _bool(view, view.node("/zero_optimization/offload_param/pin_memory"), pin_default)
    if view.node("/zero_optimization/cpu_offload_use_pin_memory") is not None:
        plan.pin_optimizer = _bool(view, view.node("/zero_optimization/cpu_offload_use_pin_memory"), plan.pin_optimizer)
    plan.reduce_bucket_size = int(_num(view, z("reduce_bucket_size"), DEFAULTS["reduce_bucket_size"],
                                       hf_auto=hidden * hidden if hidden else None, what="hidden^2", notes=notes))
    plan.allgather_bucket_size = int(_num(view, z("allgather_bucket_size"), DEFAULTS["allgather_bucket_size"]))
    ov = z("overlap_comm")
    plan.overlap_comm = None if ov is None or view.is_auto(ov) or not isinstance(ov.value, bool) else ov.value
    plan.contiguous_gradients = _bool(view, z("contiguous_gradients"), True)
    plan.prefetch_bucket_size = int(_num(view, z("prefetch_bucket_size"), DEFAULTS["prefetch_bucket_size"],
                                         hf_auto=int(0.9 * hidden * hidden) if hidden else None, what="0.9 hidden^2",
                                         notes=notes))
    plan.max_live_parameters = int(_num(view, z("max_live_parameters"), DEFAULTS["max_live_parameters"]))
    plan.max_reuse_distance = int(_num(view, z("max_reuse_distance"), DEFAULTS["max_reuse_distance"]))
    plan.param_persistence_threshold = int(_num(view, z("param_persistence_threshold"),
                                                DEFAULTS["param_persistence_threshold"],
                                                hf_auto=10 * hidden if hidden else None, what="10 hidden",
                                                notes=notes))
    plan.model_persistence_threshold = int(_num(view, z("model_persistence_threshold"),
                                                DEFAULTS["model_persistence_threshold"]))
    plan.sub_group_size = int(_num(view, z("sub_group_size"), DEFAULTS["sub_group_size"])) or 1
    oo = "/zero_optimization/offload_optimizer"
    op = "/zero_optimization/offload_param"
    plan.opt_buffer_count = int(_num(view, view.node(f"{oo}/buffer_count"), 4))
    plan.param_buffer_count = int(_num(view, view.node(f"{op}/buffer_count"), 5))
    plan.param_buffer_size = int(_num(view, view.node(f"{op}/buffer_size"), 100_000_000))
    plan.max_in_cpu = int(_num(view, view.node(f"{op}/max_in_cpu"), 1_000_000_000))

    # optimizer
    opt_type = view.value("/optimizer/type")
    params = view.value("/optimizer/params", {}) or {}
    params = params if isinstance(params, dict) else {}
    if not isinstance(opt_type, str) or not opt_type.strip() or opt_type.strip().lower() == "auto":
        plan.optimizer, (plan.optimizer_state_bytes, plan.optimizer_desc) = "adamw", OPTIMIZERS["adamw"]
        plan.client_optimizer = True
        _client_optimizer(plan, view, off_opt, stage, notes)
    else:
        name = opt_type.strip().lower()
        plan.optimizer = name
        if name in ("sgd", "musgd"):
            momentum = params.get("momentum", 0)
            has = isinstance(momentum, (int, float)) and not isinstance(momentum, bool) and momentum > 0
            plan.optimizer_state_bytes = 4 if has else 0
            plan.optimizer_desc = f"{opt_type}: " + ("1 fp32 momentum buffer" if has else "no state (momentum 0)")
        elif name == "rmsprop":
            n = 4 + (4 if params.get("momentum", 0) else 0) + (4 if params.get("centered") else 0)
            plan.optimizer_state_bytes, plan.optimizer_desc = n, f"RMSprop: {n // 4} fp32 buffer(s)"
        elif name in OPTIMIZERS:
            plan.optimizer_state_bytes, plan.optimizer_desc = OPTIMIZERS[name]
        else:
            plan.optimizer_state_bytes, plan.optimizer_desc = 8, f"{opt_type}: assumed 2 fp32 buffers"
            notes.append(f"optimizer {opt_type!r} is not one zerolint knows; assumed 8 bytes of state per parameter")
        # DeepSpeed tests torch_adam for truth: "torch_impl" selects torch's Adam too ("auto" is no value yet)
        plan.torch_adam = name in ("adam", "adamw") and bool(params.get("torch_adam")) and params.get(
            "torch_adam") != "auto"
        if name in ("adam", "adamw") and params.get("fp32_optimizer_states") is False and off_opt != "none":
            plan.optimizer_state_bytes = 4
            plan.optimizer_desc = f"{opt_type}: 2 16-bit moments (fp32_optimizer_states false)"
    plan.grad_accum_dtype = _dtype(view.value("/data_types/grad_accum_dtype"))
    plan.comm_dtype = _dtype(view.value("/communication_data_type"))
    sec = "/bf16" if precision == "bf16" else "/fp16"
    plan.bf16_master = precision in ("bf16", "fp16") and view.value(
        f"{sec}/{'bf16' if precision == 'bf16' else 'fp16'}_master_weights_and_grads") is True
    plan.bf16_optimizer_states = precision == "bf16" and view.value("/bf16/bf16_optimizer_states") is True
    mb = view.node("/train_micro_batch_size_per_gpu")
    v = view.number(mb) if mb is not None else None
    plan.micro_batch = int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and 1 <= v < 2**63 else None
    if stage == 0 and off_opt != "none":
        notes.append("offload_optimizer needs ZeRO stage 1-3; at stage 0 the estimate keeps the optimizer on the GPU")
    if stage in (1, 2) and off_par != "none":
        notes.append(f"offload_param is ignored at stage {stage} (ZeRO-3 only); parameters stay on the GPU")
    if off_opt == "nvme" and stage in (1, 2):
        notes.append("NVMe optimizer offload is a ZeRO-3 feature; estimated as CPU offload")
    plan.assumptions = notes
    return plan


def _client_optimizer(plan: Plan, view, off_opt: str, stage: int, notes: list[str]) -> None:
    """No optimizer section: the script passes its own optimizer, assumed AdamW. The HF Trainer's default with
    torch >= 2.8 is `adamw_torch_fused` (transformers 5.24 training_args.py:806-811), whose fused kernel updates in
    place; a script's own `torch.optim.AdamW(...)` runs torch's default, the foreach implementation on CUDA
    (torch 2.13 optim/adam.py:937-941), which allocates sqrt(exp_avg_sq) for the whole group at each step
    (adam.py:790). With optimizer offload the client optimizer is not what runs: DeepSpeed raises at initialize
    unless it is DeepSpeedCPUAdam (zero_force_ds_cpu_optimizer), and the HF Trainer swaps in DeepSpeedCPUAdam."""
    offloaded = stage >= 1 and off_opt != "none"
    if view.target == "hf":
        notes.append("no optimizer type in the config: assumed the HF Trainer's default optimizer, torch AdamW "
                     "(fused with torch >= 2.8: no step temporaries), 2 fp32 moments")
    elif offloaded:
        notes.append("no optimizer type in the config: assumed a client AdamW replaced by DeepSpeedCPUAdam under "
                     "optimizer offload, 2 fp32 moments")
    else:
        plan.torch_adam = True
        notes.append("no optimizer type in the config: assumed the script passes torch.optim.AdamW with torch's "
                     "defaults (foreach on CUDA: step temporaries of 4 B per parameter of a step), 2 fp32 moments")


# -- the model of memory ----------------------------------------------------------------------------------------------

def _f(n: int) -> str:
    """A count for formulas: 1,100,048,384 -> '1.1e9'."""
    return f"{n:.3g}" if n >= 10_000 else str(n)


def _pinned(n: int, pin: bool) -> int:
    return pow2ceil(n) if pin else n


def activation_bytes(model: ModelSpec, plan: Plan, workload: Workload,
                     micro_batch: int | None) -> tuple[int, str] | None:
    """Activations (and logits) saved for backward on one GPU, or None when the shape is unknown."""
    parts = _activation_parts(model, plan, workload, micro_batch)
    return None if parts is None else (parts[0], parts[1])


def _activation_parts(model: ModelSpec, plan: Plan, workload: Workload,
                      micro_batch: int | None) -> tuple[int, str, int] | None:
    """(total, formula, layers): the activations, and the part of them the transformer layers save (what backward
    frees layer by layer; the logits go first).

    Per layer and token, with SDPA/flash attention (no s^2 score matrix kept) and 2-byte activations:
    attention 2*(4h + 2*kv) [residual, norm output, q, k, v, attention output], MLP 2*(2h + 4I) gated
    (gate, up, act, product) or 2*(2h + 2I) plain, plus 2h one-byte dropout masks when the model uses dropout.
    Norms computed in fp32 (transformers' RMSNorms) save a 4-byte copy of their input too: 4h more per norm, two
    per layer; with frozen norm weights (adapter runs) their D-byte normalised input is not saved.
    Without the full shape: Korthikanti et al. 2022 (arXiv:2205.05198) 34*h bytes per token and layer.
    Logits: per token 12 V at the start of backward (the fp32 log-softmax output the loss saves, the loss's
    gradient and the log-softmax's gradient, 4 B each; the D-byte logits are gone when the loss is computed in the
    forward, as transformers' models and the Trainer do). Measured on an H200 (docs/plan.md).
    With checkpointing: each layer keeps only its input (D*h per token); the logits' 12 V are freed before the
    last layer is recomputed, so the larger of the two counts.
    """
    s, b, sh = workload.seq_len, micro_batch, model.shape
    if not s or not b or not sh.hidden or not sh.layers:
        return None
    h, n_layers, d = sh.hidden, sh.layers, plan.d
    norms = ""
    if sh.heads and sh.intermediate:
        kv = (sh.kv_heads or sh.heads) * (h // sh.heads)
        per_layer = 2 * (4 * h + 2 * kv) + (2 * (2 * h + 4 * sh.intermediate) if sh.gated_mlp
                                            else 2 * (2 * h + 2 * sh.intermediate))
        per_layer = per_layer * d // 2 + (2 * h if sh.dropout else 0)
        if sh.norm_upcast:
            per_norm = 4 * h - (0 if sh.norm_weights_train else d * h)
            per_layer += 2 * per_norm
            norms = ", fp32 norms" + ("" if sh.norm_weights_train else " (frozen)")
        gated = ", gated" if sh.gated_mlp else ""
        layer_f = f"{per_layer:,} B/token/layer (h {h}, kv {kv}, I {sh.intermediate}{gated}{norms})"
    else:
        per_layer = 34 * h * d // 2
        layer_f = f"34*h*{d}/2 = {per_layer:,} B/token/layer (Korthikanti 2022)"
    logits = 12 * (sh.vocab or 0)
    tokens = s * b
    if workload.checkpointing:
        body = n_layers * d * h
        recompute = max(per_layer, logits)
        body_f = (f"{n_layers} layer inputs x {d}h + the larger of one layer recomputed ({per_layer:,}) and the "
                  "logits")
        total = tokens * (body + recompute + 2 * d * h)
        formula = (f"micro-batch {b} x seq {s} = {tokens:,} tokens x ({body_f}"
                   + (f" (V {sh.vocab:,} x 12)" if sh.vocab else "") + " + embeddings)")
        return total, formula, tokens * (body + per_layer)
    body = n_layers * per_layer
    body_f = f"{n_layers} layers x {layer_f}"
    total = tokens * (body + logits + 2 * d * h)
    formula = (f"micro-batch {b} x seq {s} = {tokens:,} tokens x ({body_f}"
               + (f" + logits V {sh.vocab:,} x 12" if sh.vocab else "") + " + embeddings)")
    return total, formula, tokens * body


class _Parts:
    """What every component's formula uses (P, L, T, N, Pn, the plan's byte widths, the offload devices), and the
    list of components being built."""

    def __init__(self, plan: Plan, model: ModelSpec, cluster: Cluster, workload: Workload, zero_init: bool,
                 gpu_memory: int | None) -> None:
        self.plan, self.model, self.workload = plan, model, workload
        self.zero_init, self.gpu_memory = zero_init, gpu_memory
        self.P = P = model.params
        self.L = L = model.largest_layer or model.params
        self.T = model.largest_tensor or L
        self.N = N = cluster.world
        self.Pn = Pn = -(-P // N)
        self.d, self.a, self.c, self.m, self.o = plan.d, plan.a, plan.c, plan.m, plan.o
        self.dn = "16-bit" if plan.mixed else "fp32"
        self.stage = stage = plan.stage
        self.notes: list[str] = []
        self.out: list[Component] = []
        self.off_opt = plan.offload_optimizer if stage >= 1 else "none"
        self.off_par = plan.offload_param if stage == 3 else "none"
        self.states_name = f"optimizer states ({plan.optimizer_desc.split(':')[0]})"
        self.states_f = f"{plan.optimizer_desc}: {plan.o} B x " + ("P" if stage == 0 else f"Pn ({_f(Pn)})")
        self.torch_temp = plan.torch_adam or plan.optimizer not in ("adam", "adamw", "lamb", "lion", "adagrad")
        # Backward fills the reduce bucket from the output end and reduces it when the next gradient does not fit
        # (stage_1_and_2.py:1422, stage3.py reduce_independent_p_g_buckets_and_remove_grads). With more gradient
        # elements than reduce_bucket_size the first reduction runs mid-backward ("bwd: bucket reduced"), when a
        # fraction rbs/P of the gradients has been produced; otherwise the only reduction is at the end of backward.
        self.mid_bwd = stage >= 1 and P > plan.reduce_bucket_size
        self.done = min(1.0, plan.reduce_bucket_size / P) if P else 1.0
        self.red_moments = (BWD, RED) if self.mid_bwd else (RED,)
        # stage 3: one sub-group, parameters that stay gathered (set by _persistent_numel), gathering that aliases
        self.S = min(plan.sub_group_size, Pn)
        self.persist_numel = 0
        self.alias = N == 1 and self.off_par == "none"

    @property
    def P_np(self) -> int:
        """Stage 3: the parameters that are not persistent (gathered and released as the model runs)."""
        return max(0, self.P - self.persist_numel)

    def add(self, name, nbytes, where, formula, moments=TRAIN, model_state=False, key=""):
        self.out.append(Component(name, int(nbytes), where, formula, tuple(moments), model_state, False, key or name))


def build_components(plan: Plan, model: ModelSpec, cluster: Cluster, workload: Workload,
                     zero_init: bool = False, gpu_memory: int | None = None) -> tuple[list[Component], bool, list[str]]:
    """Every component of one rank's memory (GPU, host, NVMe) at each moment, in report order; whether the
    activations are known; notes on what had to be assumed. One function per group of components below."""
    b = _Parts(plan, model, cluster, workload, zero_init, gpu_memory)
    if b.stage == 0:
        _zero0(b)
    elif b.stage in (1, 2):
        _zero12_weights(b)
        _zero12_gradients(b)
    else:
        b.persist_numel = _persistent_numel(b)
        for part in (_zero3_params, _zero3_gathered, _zero3_gradients, _zero3_optimizer, _zero3_init_model):
            part(b)
    _grad_in_flight(b)
    act_known = _activations(b)
    _host_model(b)
    return b.out, act_known, b.notes


def _zero0(b: _Parts) -> None:
    """Stage 0 (no ZeRO): everything is whole on every GPU."""
    add, plan = b.add, b.plan
    P, N, d, dn, torch_temp = b.P, b.N, b.d, b.dn, b.torch_temp
    states_name, states_f, o = b.states_name, b.states_f, b.o
    add(f"{dn} parameters", d * P, "gpu", f"{d} B x P ({_f(P)}); engine moves the model to the GPU",
        ALWAYS, True, "params")
    if plan.mixed:
        add("fp32 master parameters", 4 * P, "gpu", "4 B x P (FP16_Optimizer/BF16_Optimizer flat fp32 copy)",
            ALWAYS, True, "master")
    add(states_name, o * P, "gpu", states_f.replace("Pn", "P"), TRAIN, True, "optimizer")
    add(f"{dn} gradients", d * P, "gpu", f"{d} B x P (param.grad, full)", (RED, CONV, UPD), True, "grads")
    if plan.mixed:
        add("fp32 gradients", 4 * P, "gpu", "4 B x P (flat fp32 grads for the step)", (CONV, UPD), True,
            "fp32_grads")
        add("flattened gradient copy", d * P, "gpu", f"{d} B x P (flatten before .to(fp32))", (CONV,), False,
            "flat_copy")
    if N > 1:
        n = min(ENGINE_ALLREDUCE_BUCKET, P)
        add("allreduce staging (engine)", d * n, "gpu",
            f"{d} B x min(5e8, P) (engine.py allreduce_gradients, MEMORY_OPT_ALLREDUCE_SIZE)", (RED,), False,
            "bucket")
    if torch_temp:
        add("optimizer step temporaries", 4 * P, "gpu", "4 B x P (torch optimizer: foreach sqrt/denominator)",
            (UPD,), False, "opt_temp")


def _zero12_weights(b: _Parts) -> None:
    """Stage 1/2: the 16-bit parameters (not partitioned), the master partition, the optimizer states, and the
    copies initialize makes."""
    add, plan = b.add, b.plan
    P, Pn, d, m, o, dn, off_opt, gpu_memory = b.P, b.Pn, b.d, b.m, b.o, b.dn, b.off_opt, b.gpu_memory
    states_name, states_f = b.states_name, b.states_f
    add(f"{dn} parameters", d * P, "gpu", f"{d} B x P ({_f(P)}), not partitioned below stage 3", ALWAYS, True,
        "params")
    master_where = "gpu" if off_opt == "none" else "host"
    pin = plan.pin_optimizer and master_where == "host"
    mb = _pinned(m * Pn, pin)
    add("fp32 master parameters" if m == 4 else "16-bit master parameters", mb, master_where,
        f"{m} B x Pn ({_f(Pn)})" + (" pinned, rounded up to a power of two by torch's CachingHostAllocator"
                                    if pin else "") + " (stage_1_and_2.py single_partition_of_fp32_groups)",
        ALWAYS, True, "master")
    add(states_name, o * Pn, master_where, states_f + ", created at the first step", TRAIN, True, "optimizer")
    # initialize flattens the 16-bit group on the GPU when the GPU has room for a second copy, else on the CPU
    # (stage_1_and_2.py:449-509, flatten_on_accelerator); then it clones the master partition from the flat group
    # on the GPU before moving/converting it (:560). The flat copy never makes a job fail: without room DeepSpeed
    # flattens on the CPU, so it is counted only when no GPU size is given or the GPU has room for both copies
    # with the margin (so that this transient alone never turns the verdict).
    master_gpu = mb if master_where == "gpu" else 0
    frac = GPU_ALLOCATOR_FRACTION_OFFLOAD if off_opt != "none" else GPU_ALLOCATOR_FRACTION
    room = gpu_memory is None or gpu_memory >= CUDA_CONTEXT_BYTES + (1 + frac) * 2 * d * P
    clone_f = f"{d} B x Pn: the master partition is cloned from the flat group on the GPU (stage_1_and_2.py:560)"
    if room:
        add(f"{dn} copies at initialize", max(d * P - master_gpu, d * Pn), "gpu",
            f"max({d} B x P - master on the GPU, {d} B x Pn): initialize flattens the {dn} group on the GPU when "
            "it has room, so the parameters and the flat copy coexist (stage_1_and_2.py:449-509, "
            f"flatten_on_accelerator; on the CPU otherwise); then {clone_f}", (INIT,), False, "init_copy")
    else:
        add(f"{dn} copies at initialize", d * Pn, "gpu",
            f"{clone_f}; no room for a second {dn} copy of the model on this GPU, so DeepSpeed flattens on the "
            "CPU (stage_1_and_2.py:449-463)", (INIT,), False, "init_copy")


def _zero12_gradients(b: _Parts) -> None:
    """Stage 1/2: gradients, reduce buckets and the gradient partition (on the GPU or offloaded), then the
    allgather of the updated parameters."""
    add, plan = b.add, b.plan
    P, stage, a, d, dn, off_opt = b.P, b.stage, b.a, b.d, b.dn, b.off_opt
    bf16_opt = (stage == 1 and plan.precision == "bf16" and plan.a == 4 and off_opt == "none")
    if bf16_opt:
        add("fp32 gradient accumulation buffer", 4 * P, "gpu",
            "4 B x P (ZeRO-1 + bf16 + fp32 grad_accum_dtype runs BF16_Optimizer: fp32_groups_gradients_flat, "
            "bf16_optimizer.py:191)", ALWAYS, True, "fp32_grads")
        add(f"{dn} gradients", d * P, "gpu", f"{d} B x P (param.grad before accumulation)", (FWD, RED), False,
            "grads")
    else:
        if stage == 1:
            add(f"{dn} gradients (full, until reduced)", d * P, "gpu",
                f"{d} B x P: ZeRO-1 keeps every gradient until the end of backward", (RED,), True, "grads")
        if plan.contiguous_gradients:
            bdt = a if (stage == 1 and a != d) else d
            k = 2 if plan.overlap else 1
            add("reduce bucket" + (" x2 (overlap_comm)" if k == 2 else ""),
                k * bdt * plan.reduce_bucket_size, "gpu",
                f"{k} x reduce_bucket_size ({_f(plan.reduce_bucket_size)}) x {bdt} B "
                "(stage_1_and_2.py:3266-3277 setup_buckets at the first gradient, released at the end of "
                "backward, :1061; a second buffer with overlap_comm)", (FWD, BWD, RED), False, "bucket")
        if off_opt == "none":
            _zero12_grad_partition(b)
        else:
            _zero12_grad_offload(b)
    add("allgather of updated parameters", 0, "gpu",
        "0: all_gather_into_tensor writes into the flat 16-bit buffer in place (runtime/utils.py:1021); "
        f"allgather_bucket_size ({_f(plan.allgather_bucket_size)}) only shards the legacy fallback",
        (UPD,), False, "allgather")


def _zero12_grad_partition(b: _Parts) -> None:
    """Stage 1/2 without optimizer offload: the gradient partition and the fp32 copy the step uses."""
    add, plan = b.add, b.plan
    Pn, d, m, dn, stage, torch_temp, mid_bwd, red_moments = (b.Pn, b.d, b.m, b.dn, b.stage, b.torch_temp, b.mid_bwd,
                                                              b.red_moments)
    grad_moments = (*red_moments, CONV) if stage == 2 else (RED, CONV)
    add(f"{dn} gradient partition", d * Pn, "gpu",
        f"{d} B x Pn (grads_in_partition, stage_1_and_2.py:2192: allocated by the first bucket "
        "reduction" + (", mid-backward)" if mid_bwd and stage == 2 else ", at the end of backward)"),
        grad_moments, True, "grad_partition")
    if plan.mixed:
        add("flattened gradient copy", d * Pn, "gpu", f"{d} B x Pn (flatten before .to(fp32) in step)",
            (CONV,), False, "flat_copy")
    add("fp32 gradient partition", m * Pn, "gpu", f"{m} B x Pn (single_grad_partition in step)",
        (CONV, UPD), True, "fp32_grads")
    if torch_temp:
        add("optimizer step temporaries", 4 * Pn, "gpu",
            "4 B x Pn (torch optimizer: foreach sqrt/denominator)", (UPD,), False, "opt_temp")


def _zero12_grad_offload(b: _Parts) -> None:
    """Stage 1/2 with optimizer offload: GPU staging and the pinned host buffers."""
    add, plan = b.add, b.plan
    Pn, T, d, m, dn, red_moments = b.Pn, b.T, b.d, b.m, b.dn, b.red_moments
    add("offload gradient staging", d * T, "gpu",
        f"{d} B x largest tensor ({_f(T)}) (temp_grad_buffer_for_gpu_offload, stage_1_and_2.py:659)",
        TRAIN, False, "offload_staging")
    tn = min(T, Pn)
    add("offload reduction temporaries", 8 * tn, "gpu",
        f"8 B x min(largest tensor, Pn) ({_f(tn)}): each reduced gradient's norm is taken on an fp64 "
        "copy (stage_1_and_2.py:1886, get_norm_dtype() is fp64), then an fp32 copy goes to the pinned "
        f"host partition (:1900, {m} B x n, after the fp64 one is freed)", red_moments, False,
        "offload_temp")
    add("fp32 gradient partition", _pinned(m * Pn, plan.pin_optimizer), "host",
        f"{m} B x Pn" + (" pinned (power of two)" if plan.pin_optimizer else "")
        + " (stage_1_and_2.py:937 initialize_optimizer_states)", ALWAYS, True, "fp32_grads")
    add(f"{dn} partition staging copy", _pinned(d * Pn, plan.pin_optimizer), "host",
        f"{d} B x Pn" + (" pinned (power of two)" if plan.pin_optimizer else "")
        + " (param_buffer_of_bit16_for_cpu_offload_groups, stage_1_and_2.py:566)", ALWAYS, False,
        "bit16_staging")
    add("offload gradient staging (host)", _pinned(d * T, plan.pin_optimizer), "host",
        f"{d} B x largest tensor (temp_grad_buffer_for_cpu_offload, stage_1_and_2.py:653)", TRAIN, False,
        "offload_staging_host")
    if plan.torch_adam:
        add("optimizer step temporaries", 8 * Pn, "host",
            "8 B x Pn (torch Adam on the CPU: sqrt and denominator of the flat partition)", (UPD,),
            False, "opt_temp")


def _persistent_numel(b: _Parts) -> int:
    """Stage 3: the parameters that stay gathered (tensors of at most stage3_param_persistence_threshold)."""
    plan, model, notes = b.plan, b.model, b.notes
    persist_numel = model.persistent_numel(plan.param_persistence_threshold)
    if persist_numel is None:
        persist_numel = 0
        notes.append("persistent parameters (tensors of at most stage3_param_persistence_threshold) unknown without "
                     "--model or a model shape; counted as 0")
    persist_numel = min(persist_numel, plan.model_persistence_threshold)
    return persist_numel


def _zero3_params(b: _Parts) -> None:
    """Stage 3: the parameter partition, on the GPU or offloaded (pinned pool, NVMe swap buffers)."""
    add, plan = b.add, b.plan
    model, N, Pn, d, dn, off_par = b.model, b.N, b.Pn, b.d, b.dn, b.off_par
    if off_par == "none":
        add(f"{dn} parameter partition", d * Pn, "gpu", f"{d} B x Pn ({_f(Pn)}) (lp_param_buffer)", ALWAYS, True,
            "params")
        add("defragment CPU buffer", d * Pn, "host",
            f"{d} B x Pn: initialize moves the partitions into one flat GPU buffer through a pageable CPU copy "
            "(stage3.py:972 defragment, runtime/zero/utils.py:221)", (INIT,), False, "defrag_cpu")
    else:
        pin = plan.pin_param
        in_cpu = Pn if off_par == "cpu" else min(Pn, plan.max_in_cpu)
        add(f"{dn} parameter partition", _pinned(d * in_cpu, pin), "host",
            f"{d} B x " + ("Pn" if off_par == "cpu" else f"min(Pn, max_in_cpu {_f(plan.max_in_cpu)})")
            + (" pinned (power of two)" if pin else "") + " (stage3.py:906 param_groups_fp16_flat_cpu_memory)",
            ALWAYS, True, "params")
        if pin and off_par == "cpu":
            if model.tensor_numels is not None:
                first = sum(pow2ceil(d * -(-n // N)) for n in model.tensor_numels)
                how = "sum over tensors of pow2(D x numel/N)"
            else:
                first = int(1.4 * d * Pn)
                how = "~1.4 x D x Pn (power-of-two rounding of each tensor, tensor sizes unknown)"
            add("pinned per-tensor partitions (cached)", first, "host",
                f"{how}: partition_parameters.py:1843 pins each partition as it is created; the pinned pool keeps "
                "the blocks after they move into the flat buffer", ALWAYS, False, "pinned_pool")
        if off_par == "nvme":
            add("parameter swap buffers", plan.param_buffer_count * plan.param_buffer_size * d, "host",
                f"offload_param.buffer_count ({plan.param_buffer_count}) x buffer_size "
                f"({_f(plan.param_buffer_size)}) x {d} B, page-locked (partitioned_param_swapper.py:124)",
                ALWAYS, False, "param_swap")
            if Pn > in_cpu:
                add(f"{dn} parameters on NVMe", d * (Pn - in_cpu), "nvme", f"{d} B x (Pn - max_in_cpu)",
                    ALWAYS, False, "params_nvme")


def _zero3_gathered(b: _Parts) -> None:
    """Stage 3: gathered parameters, prefetch, what backward still needs, persistent parameters.

    Once the trace is recorded (step 2 on) two rules decide what is gathered (partitioned_param_coordinator.py):
    prefetching stops when stage3_max_live_parameters are gathered (:453-457, the budget counts every gathered
    parameter), and a module is not released after its forward when its next use comes within
    stage3_max_reuse_distance parameters of the trace (:653-661). A module's next use after its forward is its
    backward, after the rest of the forward and the backward of those same modules: 2 x (parameters after it), so
    the forward ends holding the last max_reuse_distance / 2 parameters whatever the live budget. In backward no
    module is used again, so only the live budget (and what the forward kept, as backward reaches it) remains.
    """
    add, plan = b.add, b.plan
    L, d, P_np, alias, persist_numel, mid_bwd, done = b.L, b.d, b.P_np, b.alias, b.persist_numel, b.mid_bwd, b.done
    kept = plan.max_reuse_distance // 2
    gathered = min(P_np, max(plan.max_live_parameters, kept, L))
    add("gathered parameters", 0 if alias else d * gathered, "gpu",
        "0: with one rank the partition is the whole parameter and gathering aliases it "
        "(partition_parameters.py _no_gather_coalesced)" if alias else
        f"{d} B x min(P non-persistent {_f(P_np)}, max(stage3_max_live_parameters "
        f"{_f(plan.max_live_parameters)}, stage3_max_reuse_distance / 2 {_f(kept)}, L {_f(L)})): "
        "from step 2 the coordinator prefetches until stage3_max_live_parameters are gathered "
        "(partitioned_param_coordinator.py:453) and does not release a module whose backward comes within "
        "stage3_max_reuse_distance (:653-661), i.e. the last max_reuse_distance / 2 parameters of the forward; "
        "with offload_param the gathered copies are on the GPU even with one rank", (FWD,), False, "gathered")
    prefetch = 0 if alias else min(plan.prefetch_bucket_size, max(0, P_np - gathered))
    add("prefetch in flight", d * prefetch, "gpu",
        "0: with one rank and the partition on the GPU there is nothing to fetch" if alias else
        f"{d} B x min(stage3_prefetch_bucket_size {_f(plan.prefetch_bucket_size)}, parameters beyond the live "
        "budget)", (FWD,), False, "prefetch")
    if mid_bwd:
        used = math.ceil(done * P_np)
        budget = min(P_np, max(plan.max_live_parameters, kept - used, L))
        still = min(budget + prefetch, P_np - used)
        add("gathered parameters still needed", 0 if alias else d * still, "gpu",
            "0: aliased with one rank" if alias else
            f"{d} B x min(max(stage3_max_live_parameters, max_reuse_distance / 2 - rbs/P x P non-persistent, L) "
            f"+ prefetch, (1 - rbs/P) x P non-persistent) = {_f(still)}: in backward the coordinator releases "
            "each module after its use and prefetches within the live budget; what the forward kept by reuse "
            "distance is the first part backward uses (part of the gathered parameters above)", (BWD,), False,
            "gathered_bwd")
    add("persistent parameters", d * persist_numel, "gpu",
        f"{d} B x {persist_numel:,} (tensors <= stage3_param_persistence_threshold "
        f"{_f(plan.param_persistence_threshold)} stay gathered)", ALWAYS, False, "persistent")


def _zero3_gradients(b: _Parts) -> None:
    """Stage 3: the gradient partition, the reduce bucket and staging, offload temporaries."""
    add, plan = b.add, b.plan
    P, L, T, N, Pn, a, c, d, m = b.P, b.L, b.T, b.N, b.Pn, b.a, b.c, b.d, b.m
    P_np, alias, off_opt, mid_bwd, red_moments = b.P_np, b.alias, b.off_opt, b.mid_bwd, b.red_moments
    grad_where = "gpu" if off_opt == "none" else "host"
    pin = grad_where == "host" and plan.pin_optimizer
    add(f"gradient partition ({'fp32' if a == 4 else '16-bit'})", _pinned(a * Pn, pin), grad_where,
        f"{a} B x Pn" + (" pinned (power of two)" if pin else "")
        + " (grad_partitions_flat_buffer, stage3.py:791, allocated at initialize)", ALWAYS, True,
        "grad_partition")
    if plan.contiguous_gradients:
        add("reduce bucket", c * plan.reduce_bucket_size, "gpu",
            f"reduce_bucket_size ({_f(plan.reduce_bucket_size)}) x {c} B, one buffer even with overlap_comm "
            "(stage3.py:782)", ALWAYS, False, "bucket")
    add("reduce-scatter staging", c * min(plan.reduce_bucket_size, P), "gpu",
        f"{c} B x min(reduce_bucket_size, P): torch.cat of the bucket's gradients when it is reduced "
        "(comm/coalesced_collectives.py:122, also with one rank), alive while the bucket is reduced: "
        + ("mid-backward and at the end" if mid_bwd else "only at the end of backward (P <= reduce_bucket_size), "
           "after the activations and gathered parameters are freed"), red_moments, False, "rs_staging")
    add("gathered parameters (module being reduced)", 0 if alias else d * min(L, P_np), "gpu",
        f"{d} B x L: at the end of backward the coordinator has released everything but modules whose "
        "post-backward hook has not fired (an embedding's input needs no gradient: released after the "
        "reduction, release_backward_leftovers)", (RED,), False, "gathered")
    if off_opt != "none":
        tn = -(-T // N)
        tmp = a * tn + max(8 * min(tn, 250_000_000), m * tn)
        held = m * -(-min(plan.reduce_bucket_size, P) // N) if off_opt == "nvme" else 0
        add("offload reduction temporaries", tmp + held, "gpu",
            f"{a} B x n + max(8 B x n, {m} B x n), n = the largest tensor's partition ({_f(tn)}): at the "
            "boundary partition_grads copies each reduced partition from the pinned host buffer back to the GPU "
            "(stage3.py:2028), takes its norm on an fp64 copy (_constant_buffered_norm2, :1960, fp64 by "
            "get_norm_dtype) and copies an fp32 version to the host (:1457)"
            + (f"; NVMe: the fp32 partitions of a bucket are held until swapped out (:1453), {m} B x "
               "min(rbs, P)/N" if held else ""), red_moments, False, "offload_temp")


def _zero3_optimizer(b: _Parts) -> None:
    """Stage 3: master weights, optimizer states and fp32 gradients, by optimizer offload device."""
    add, plan = b.add, b.plan
    Pn, S, a, m, o, off_opt, torch_temp = b.Pn, b.S, b.a, b.m, b.o, b.off_opt, b.torch_temp
    states_name, states_f = b.states_name, b.states_f
    if off_opt == "none":
        # Also under fp32 training: the alias branch (stage3.py:1162) compares the partition's torch.device with
        # self.device, a str (:333), which is never equal, so the partition is cloned (:1170).
        add("fp32 master parameters" if m == 4 else "16-bit master parameters", m * Pn, "gpu",
            f"{m} B x Pn (fp32_partitioned_groups_flat, stage3.py:1170; fp32 training too: :1162 would alias the "
            "partition but compares its torch.device with the str self.device of :333, never equal)",
            ALWAYS, True, "master")
        add(states_name, o * Pn, "gpu", states_f + ", created at the first step", TRAIN, True, "optimizer")
        add("fp32 gradient (per sub-group)", m * S, "gpu",
            f"{m} B x min(sub_group_size {_f(plan.sub_group_size)}, Pn) (_prepare_fp32_grad_for_sub_group)",
            (CONV, UPD), True, "fp32_grads")
        add("flattened gradient copy", a * S, "gpu", f"{a} B x min(sub_group_size, Pn) (flatten before .to(fp32))",
            (CONV,), False, "flat_copy")
        if torch_temp:
            add("optimizer step temporaries", 4 * S, "gpu", "4 B x min(sub_group_size, Pn) (torch optimizer: "
                "foreach sqrt/denominator)", (UPD,), False, "opt_temp")
    elif off_opt == "cpu":
        add("fp32 master parameters" if m == 4 else "16-bit master parameters", m * Pn, "host",
            f"{m} B x Pn (fp32_partitioned_groups_flat on the CPU, stage3.py:1158)", ALWAYS, True, "master")
        add(states_name, o * Pn, "host", states_f + ", created at the first step", TRAIN, True, "optimizer")
        k, rem = divmod(Pn, S)
        fp32g = k * _pinned(m * S, plan.pin_optimizer) + (_pinned(m * rem, plan.pin_optimizer) if rem else 0)
        add("fp32 gradient partition", fp32g, "host",
            f"{m} B x Pn in sub-groups of {_f(S)}" + (" pinned (power of two each)" if plan.pin_optimizer else "")
            + " (stage3.py:1338 subgroup_gradient_buffer)", ALWAYS, True, "fp32_grads")
        if plan.torch_adam:
            add("optimizer step temporaries", 8 * S, "host",
                "8 B x min(sub_group_size, Pn) (torch Adam on the CPU)", (UPD,), False, "opt_temp")
    else:  # nvme
        add("optimizer swap buffers", plan.opt_buffer_count * S * m, "host",
            f"offload_optimizer.buffer_count ({plan.opt_buffer_count}) x min(sub_group_size, Pn) x {m} B, "
            "page-locked (swap_tensor/optimizer_utils.py:187)", ALWAYS, False, "opt_swap")
        add(f"master, {states_name.split(' (')[0]} and fp32 grads on NVMe", (m + o + m) * Pn, "nvme",
            f"({m} + {o} + {m}) B x Pn", ALWAYS, True, "optimizer")
        add("fp32 sub-group in flight", (m + o + m) * S, "host",
            "(master + states + grad) x one sub-group swapped in for its step", (CONV, UPD), False, "opt_swapin")


def _zero3_init_model(b: _Parts) -> None:
    """Stage 3 without zero.Init: the whole model on the GPU before partitioning."""
    add = b.add
    P, d, dn, zero_init = b.P, b.d, b.dn, b.zero_init
    if not zero_init:
        add(f"whole {dn} model at initialize", d * P, "gpu",
            f"{d} B x P: without deepspeed.zero.Init the engine moves the whole model to the GPU before "
            "partitioning (engine.py:2094)", (INIT,), False, "init_model")



def _grad_in_flight(b: _Parts) -> None:
    """The gradient autograd hands to DeepSpeed's hook, before it is copied into a bucket / partition."""
    add, T, d = b.add, b.T, b.d
    add("gradient in flight (largest tensor)", d * T, "gpu",
        f"{d} B x largest tensor ({_f(T)}): autograd's full gradient before the ZeRO hook copies it",
        (FWD, BWD, RED), False, "grad_in_flight")


def _activations(b: _Parts) -> bool:
    """Activations and logits (and what backward still holds); False when the model's shape is unknown."""
    add, plan, model, workload, mid_bwd, done = b.add, b.plan, b.model, b.workload, b.mid_bwd, b.done
    mb = workload.micro_batch or plan.micro_batch
    act = _activation_parts(model, plan, workload, mb)
    if act is not None:
        add("activations + logits", act[0], "gpu", act[1], (FWD,), False, "activations")
        vocab, tokens = model.shape.vocab or 0, (workload.seq_len or 0) * (mb or 0)
        if vocab:  # measured on an H200: reserved exceeds allocated by about this much on large vocabularies
            b.out.append(Component("allocator: the logits' block", plan.d * vocab * tokens, "gpu",
                                   f"{plan.d} B x V {vocab:,} x {tokens:,} tokens: the 16-bit logits, freed when the "
                                   "loss returns, leave a block the loss's 4-byte tensors do not fit",
                                   ALWAYS, False, True, "margin_logits"))
        if mid_bwd:
            add("activations still saved", int((1 - done) * act[2]), "gpu",
                f"(1 - rbs/P = {1 - done:.2f}) x the layers' activations: backward runs from the output end and "
                "frees each layer's saved tensors as it goes; the logits are gone (part of the activations above)",
                (BWD,), False, "activations_bwd")
    return act is not None


def _host_model(b: _Parts) -> None:
    """Host: the model before initialize."""
    add, plan = b.add, b.plan
    P, L, T, d, dn, stage, zero_init = b.P, b.L, b.T, b.d, b.dn, b.stage, b.zero_init
    if zero_init and stage == 3:
        add("model being built (zero.Init)", 4 * L, "host",
            "4 B x L: under deepspeed.zero.Init each module is partitioned as it is built", (BUILD,), True,
            "host_model")
    else:
        add("fp32 model built on the host", 4 * P, "host",
            "4 B x P per process: the model as the script builds it, moved to the GPU by initialize",
            (BUILD,), True, "host_model")
        if plan.mixed:
            add(f"{dn} cast of one tensor", d * T, "host",
                f"{d} B x largest tensor: initialize casts parameter by parameter before the move (engine.py:2088)",
                (BUILD,), False, "host_cast")




def _reduction_stream_pool(plan: Plan, comps: list[Component]) -> Component | None:
    """ZeRO-1/2 with overlap_comm and optimizer offload: the reduction stream's own allocator pool.

    With overlap_comm, reduce_ipg_grads copies each reduced gradient to the host under DeepSpeed's reduction stream
    (stage_1_and_2.py:2239-2240, copy_grads_in_partition at :2271), so the fp64 copy taken for its norm
    (set_norm_for_param_grad_in_gpu, :1886) and the fp32 copy sent to the pinned partition (:1900, in the fp64 one's
    block once that is freed) are allocated on that stream. The caching allocator serves a stream only from blocks
    allocated on it (CUDACachingAllocator.cpp: the free-block lookup is keyed by stream), so the memory the default
    stream keeps free cannot hold them: the pool is one segment of the largest fp64 copy plus one 2 MiB segment for
    the fp64 norms kept until the step (norm_for_param_grads). Seen in a segment trace of 1.3B at ZeRO-2 with
    optimizer offload on one H200: 500 MiB + 2 MiB on the reduction stream, the default stream's 7.60 GiB the same
    as without overlap_comm (docs/estimate-accuracy.md)."""
    if plan.stage not in (1, 2) or not plan.overlap or plan.offload_optimizer == "none":
        return None
    temp = next((c for c in comps if c.key == "offload_temp" and c.where == "gpu"), None)
    if temp is None:
        return None
    nbytes = -(-temp.bytes // SEGMENT_ROUND) * SEGMENT_ROUND + SEGMENT_ROUND
    return Component("reduction stream pool (overlap_comm)", nbytes, "gpu",
                     f"the offload reduction temporaries ({gib(temp.bytes):.2f} GiB) rounded up to 2 MiB + one 2 MiB "
                     "segment for the fp64 norms: with overlap_comm they are allocated on DeepSpeed's reduction "
                     "stream (stage_1_and_2.py:2239-2240, :1886), whose blocks the default stream's free memory "
                     "cannot serve", ALWAYS, False, True, "margin_stream_pool")


def _add_margins(comps: list[Component], cluster: Cluster, offload: bool = False, freed_block: int = 0,
                 stream_pool: Component | None = None) -> None:
    gpu_cov = _peak_of(comps, "gpu")
    host_cov = _peak_of(comps, "host")
    if stream_pool is not None:
        comps.append(stream_pool)
    comps.append(Component("CUDA context" + (" + NCCL" if cluster.world > 1 else ""),
                           CUDA_CONTEXT_BYTES + (NCCL_BYTES if cluster.world > 1 else 0), "gpu",
                           f"{gib(CUDA_CONTEXT_BYTES):.1f} GiB context"
                           + (f" + {gib(NCCL_BYTES):.1f} GiB NCCL buffers" if cluster.world > 1 else "")
                           + " (outside torch's allocator)", (BUILD, *ALWAYS), False, True, "margin_context"))
    comps.append(Component("allocator cache", _allocator_cache(comps, freed_block), "gpu",
                           "the GPU buffers of the step not alive at the peak moment: the caching allocator keeps "
                           "freed blocks, and other moments' buffers of other sizes take new ones (with the peak at "
                           "initialize: the step's buffers larger than the largest tensor initialize frees)", ALWAYS,
                           False, True, "margin_cache"))
    frac = GPU_ALLOCATOR_FRACTION_OFFLOAD if offload else GPU_ALLOCATOR_FRACTION
    comps.append(Component("allocator fragmentation", int(frac * gpu_cov), "gpu",
                           f"{frac:.0%} of the covered peak" + (" (offload: host<->GPU staging copies)" if offload
                                                                else ""), ALWAYS, False, True, "margin_allocator"))
    comps.append(Component("process runtime", HOST_RUNTIME_BYTES + (HOST_OFFLOAD_RUNTIME_BYTES if offload else 0),
                           "host", f"{gib(HOST_RUNTIME_BYTES):.1f} GiB per process (python, torch, CUDA, DeepSpeed)"
                           + (f" + {gib(HOST_OFFLOAD_RUNTIME_BYTES):.1f} GiB with offload (CPU optimizer threads and "
                              "libraries)" if offload else ""), (BUILD, *ALWAYS), False, True, "margin_runtime"))
    comps.append(Component("host allocator slack", int(HOST_ALLOCATOR_FRACTION * host_cov), "host",
                           f"{HOST_ALLOCATOR_FRACTION:.0%} of the covered peak (freed copies kept by malloc, pinned "
                           "pool)", ALWAYS, False, True, "margin_host_allocator"))


def _allocator_cache(comps: list[Component], freed_block: int) -> int:
    """The step's GPU buffers that are not alive at the peak moment (parts of other rows counted once).

    With the peak inside the step: every buffer of the step minus the peak moment (the allocator keeps the blocks a
    moment frees; the next moment's buffers, of other sizes, mostly take new ones). With the peak at initialize:
    the buffers the step allocates later that the blocks initialize frees cannot hold. ZeRO-1/2 frees the
    per-tensor parameters (blocks up to the largest tensor, `freed_block` bytes) for one flat buffer
    (stage_1_and_2.py:449-509): activations and buffers up to that size reuse them, larger ones take new segments:
    the reduce bucket(s), and with optimizer offload the fp64 copy of each gradient taken for its norm (:1886),
    which with `overlap_comm` is allocated on DeepSpeed's reduction stream (reduce_ipg_grads, :2239-2240) whose
    blocks form a pool of their own."""
    gpu = [c for c in comps if c.where == "gpu" and not c.margin]
    sums = {mo: sum(c.bytes for c in gpu if mo in c.moments) for mo in MOMENTS}
    peak = max(MOMENTS, key=lambda mo: (sums[mo], -MOMENTS.index(mo)))
    later = [c for c in gpu if c.key not in PART_OF and peak not in c.moments and any(mo in TRAIN for mo in c.moments)]
    if peak == INIT:
        return sum(c.bytes for c in later if c.key != "activations" and c.bytes > freed_block)
    parts_at_peak = sum(c.bytes for c in gpu if c.key in PART_OF and peak in c.moments)
    return max(0, sum(c.bytes for c in later) - parts_at_peak)


def _peak_of(comps: list[Component], where: str) -> int:
    return max(sum(c.bytes for c in comps if c.where == where and not c.margin and mo in c.moments) for mo in MOMENTS)


def estimate_plan(plan: Plan, model: ModelSpec, cluster: Cluster, workload: Workload | None = None,
                  gpu_memory: int | None = None, host_memory: int | None = None,
                  zero_init: bool = False, config_path: str = "", extra: tuple[Component, ...] = ()) -> Estimate:
    """`extra`: rows the caller knows and the config does not say (zerolint plan: frozen adapter-run weights, the
    hpZ secondary partition), counted before the margin as the others are."""
    workload = workload or Workload()
    comps, act_known, notes = build_components(plan, model, cluster, workload, zero_init, gpu_memory)
    comps += list(extra)
    offload = (plan.stage >= 1 and plan.offload_optimizer != "none") or \
        (plan.stage == 3 and plan.offload_param != "none")
    largest = model.largest_tensor or model.largest_layer or model.params
    _add_margins(comps, cluster, offload, plan.d * largest, _reduction_stream_pool(plan, comps))
    est = Estimate(plan=plan, model=model, cluster=cluster, workload=workload, components=comps,
                   gpu_memory=gpu_memory, host_memory=host_memory, zero_init=zero_init, activations_known=act_known,
                   config_path=config_path)
    est._assumptions = notes + (["the model is built under deepspeed.zero.Init (HF Trainer/Accelerate do this at "
                                 "stage 3)"] if zero_init and plan.stage == 3 else [])
    return est


def estimate_view(view, model: ModelSpec, cluster: Cluster, workload: Workload | None = None,
                  gpu_memory: int | None = None, host_memory: int | None = None, zero_init: bool | None = None,
                  suggest: bool = True, config_path: str = "") -> Estimate:
    """The estimate for a config as `view` reads it, with suggestions when it does not fit."""
    plan = plan_from_view(view, model)
    if zero_init is None:
        zero_init = plan.stage == 3 and view.target in ("hf", "accelerate")
    est = estimate_plan(plan, model, cluster, workload, gpu_memory, host_memory, zero_init, config_path)
    if suggest and est.verdict in ("does-not-fit", "tight"):
        est.suggestions = suggestions(est)
    return est


# -- what would make it fit --------------------------------------------------------------------------------------------

def suggestions(est: Estimate, limit: int = 6) -> list[Suggestion]:
    """Config or job changes, each with its recomputed totals; those that fit first, then by GPU memory."""
    p, cl = est.plan, est.cluster
    cands: list[tuple[str, dict[str, Any], Plan, Cluster, Workload]] = []
    w = est.workload

    def cand(title, change, plan=None, cluster=None, workload=None):
        cands.append((title, change, plan or p, cluster or cl, workload or w))

    for s in range(p.stage + 1, 4):
        np_ = replace(p, stage=s, assumptions=[])
        cand(f"ZeRO stage {s}", {"zero_optimization.stage": s}, np_)
    if p.offload_optimizer == "none":
        s = max(p.stage, 1)  # ZeRO-Offload runs at stages 1-3
        ch: dict[str, Any] = {"zero_optimization.offload_optimizer": {"device": "cpu", "pin_memory": True}}
        if s != p.stage:
            ch = {"zero_optimization.stage": s, **ch}
        cand(f"offload the optimizer to CPU{'' if s == p.stage else f' (at stage {s})'}", ch,
             replace(p, stage=s, offload_optimizer="cpu", pin_optimizer=True, assumptions=[]))
    if p.stage < 3 or p.offload_param == "none":
        ch = {"zero_optimization.stage": 3,
              "zero_optimization.offload_optimizer": {"device": "cpu", "pin_memory": True},
              "zero_optimization.offload_param": {"device": "cpu", "pin_memory": True}}
        cand("ZeRO-3 with optimizer and parameter offload to CPU", ch,
             replace(p, stage=3, offload_optimizer="cpu", offload_param="cpu", pin_optimizer=True, pin_param=True,
                     assumptions=[]))
    small = 50_000_000
    if p.reduce_bucket_size > small or (p.overlap and p.stage < 3) or (
            p.stage == 3 and (p.max_live_parameters > 10 * small or p.max_reuse_distance > 10 * small)):
        ch = {"zero_optimization.reduce_bucket_size": min(p.reduce_bucket_size, small)}
        np_ = replace(p, reduce_bucket_size=min(p.reduce_bucket_size, small), assumptions=[])
        if p.stage < 3 and p.overlap:
            ch["zero_optimization.overlap_comm"] = False
            np_ = replace(np_, overlap_comm=False)
        if p.stage == 3:
            for k in ("stage3_max_live_parameters", "stage3_max_reuse_distance"):
                ch[f"zero_optimization.{k}"] = min(getattr(p, k.replace("stage3_", "")), 10 * small)
            np_ = replace(np_, max_live_parameters=min(p.max_live_parameters, 10 * small),
                          max_reuse_distance=min(p.max_reuse_distance, 10 * small))
        cand("smaller communication buckets" + (" and live-parameter budget" if p.stage == 3 else ""), ch, np_)
    if est.activations_known:
        if not w.checkpointing:
            cand("activation checkpointing (gradient_checkpointing in the model)", {"activation checkpointing": True},
                 workload=replace(w, checkpointing=True))
        mb = est.micro_batch or 1
        if mb > 1:
            cand(f"micro-batch {mb // 2} (and twice the gradient accumulation)",
                 {"train_micro_batch_size_per_gpu": mb // 2}, workload=replace(w, micro_batch=mb // 2))
    # more GPUs: only partitioned state shrinks
    if p.stage >= 1:
        layouts = [Cluster(1, g) for g in (2, 4, 8) if cl.nodes == 1 and g > cl.gpus_per_node]
        base = max(cl.gpus_per_node, 8) if cl.nodes == 1 else cl.gpus_per_node
        layouts += [Cluster(n, base) for n in (2, 4, 8, 16, 32, 64) if n * base > cl.world]
        for c2 in layouts:
            e2 = estimate_plan(p, est.model, c2, w, est.gpu_memory, est.host_memory, est.zero_init)
            if e2.verdict in ("fits", "tight") or c2 is layouts[-1]:
                if e2.per_gpu_bytes < est.per_gpu_bytes * 0.97:
                    cand(f"more GPUs: {c2.describe()}", {"nodes": c2.nodes, "gpus_per_node": c2.gpus_per_node},
                         cluster=c2)
                break
    out = []
    seen = set()
    for title, change, plan, cluster, workload in cands:
        e = estimate_plan(plan, est.model, cluster, workload, est.gpu_memory, est.host_memory, est.zero_init)
        if title in seen or e.per_gpu_bytes >= est.per_gpu_bytes and e.per_node_host_bytes >= est.per_node_host_bytes:
            continue
        seen.add(title)
        out.append(Suggestion(title, change, e.per_gpu_bytes, e.per_node_host_bytes,
                              fits=e.verdict in ("fits", "tight")))
    out.sort(key=lambda s: (not s.fits, s.per_gpu_bytes))
    return out[:limit]
