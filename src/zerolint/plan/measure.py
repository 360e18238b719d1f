"""`zerolint plan --verify`: the plan's top candidates run on this machine through verify's runner (one op build
phase before any clock, one warm server for single-GPU runs), each with the model's real shape (verify/realshape.py:
random weights from the config.json, built under `deepspeed.zero.Init` at stage 3, no download), one warm-up step
and `steps` timed optimizer steps; the measured peaks and step time are set against the estimate and the step-time
model, and the pick is the fastest measured candidate that fits the planned hardware. A candidate the estimate
said fits but which ran out of memory is the estimate's error, and said so.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
from dataclasses import dataclass, field, replace

from ..estimate.memory import gib
from .hardware import Hardware
from .job import Job, PlanError
from .search import Result, Scored
from .write import config_for

MEASURED_TIE = 0.02  # step times within 2 % of the fastest measured one are a tie
CUDA_CONTEXT = 512 * 2**20  # not in torch's max_memory_reserved: the estimate's margin counts it (docs/estimate.md)


@dataclass
class MeasureOptions:
    model_config: str | None = None  # the config.json the model is built from (plan --model)
    top: int = 3
    steps: int = 3  # timed; one warm-up step runs before them
    timeout: float = 600.0  # per candidate
    cpu: bool = False  # run on the CPU (no GPU memory is measured): the CI path
    quiet: bool = False
    op_cache: str | None = None
    build_timeout: float = 1800.0


@dataclass
class Measured:
    scored: Scored
    record: dict
    hw: Hardware
    accelerator: str

    @property
    def status(self) -> str:
        """pass | oom | fail | timeout | crash | build-timeout | skip"""
        st = self.record.get("status", "crash")
        if st == "fail" and _is_oom(self.record.get("error") or {}):
            return "oom"
        return st

    @property
    def step_seconds(self) -> float | None:
        steps = (self.record.get("timings") or {}).get("step_s") or []
        timed = steps[1:] or steps  # the first step warms up (allocator, autotuning, lazy kernels)
        return statistics.median(timed) if self.status == "pass" and timed else None

    def _mem(self, key: str) -> int | None:
        v = (self.record.get("memory") or {}).get(key)
        return int(v) if isinstance(v, (int, float)) else None

    @property
    def peak_allocated(self) -> int | None:
        return self._mem("peak_allocated_bytes")

    @property
    def peak_reserved(self) -> int | None:
        return self._mem("peak_reserved_bytes")

    @property
    def host_rss(self) -> int | None:
        return self._mem("host_rss_peak_bytes")

    @property
    def fits(self) -> bool:
        """It ran, and what it reserved (with the CUDA context) fits the planned GPU's memory: a run on a larger
        GPU than the one planned for proves nothing by passing."""
        if self.status != "pass" or self.over_host:
            return False
        if self.accelerator == "cuda" and self.peak_reserved is not None:
            return self.peak_reserved + CUDA_CONTEXT <= self.hw.gpu_memory
        return True

    @property
    def over_host(self) -> bool:
        """Its process's RSS exceeded the planned host memory."""
        return self.hw.host_memory is not None and self.host_rss is not None and self.host_rss > self.hw.host_memory

    @property
    def verdict(self) -> str:
        if self.status == "pass" and self.over_host:
            return (f"ran, but its process used {gib(self.host_rss or 0):.1f} GiB of host memory: more than the "
                    f"planned {gib(self.hw.host_memory or 0):.0f} GiB")
        if self.status == "pass" and not self.fits:
            return (f"ran, but reserved {gib(self.peak_reserved or 0):.1f} GiB: more than the planned "
                    f"{gib(self.hw.gpu_memory):.0f} GiB GPU")
        if self.status == "pass":
            return "fits"
        if self.status == "oom":
            return (f"out of memory: the estimate said it fits ({gib(self.scored.per_gpu_bytes):.1f} GiB with its "
                    "margin): the estimate's error")
        err = self.record.get("error") or {}
        what = f"{err.get('type', '')}: {err.get('message', '')}".strip(": ").splitlines()
        where = self.record.get("phase")
        return f"{self.status}" + (f" at {where}" if where else "") + (f": {what[0][:160]}" if what else "")

    @property
    def above_estimate(self) -> bool:
        """It ran, and reserved (with the CUDA context) more than the estimate with its margin said it needs."""
        return (self.status == "pass" and self.accelerator == "cuda" and self.peak_reserved is not None
                and self.peak_reserved + CUDA_CONTEXT > self.scored.per_gpu_bytes)

    @property
    def estimate_error(self) -> float | None:
        """Measured peak allocated over the covered estimate, - 1 (the standard of docs/estimate-accuracy.md)."""
        if self.peak_allocated is None or self.accelerator != "cuda":
            return None
        covered = self.scored.estimate.per_gpu_covered_bytes
        return self.peak_allocated / covered - 1 if covered else None


@dataclass
class Verification:
    device: str
    accelerator: str
    measured: list[Measured] = field(default_factory=list)

    @property
    def pick(self) -> Measured | None:
        """The fastest measured candidate that fits; within MEASURED_TIE of the fastest (a few timed steps' noise),
        the one measured first: the plan's pick before its alternatives."""
        fits = [m for m in self.measured if m.fits and m.step_seconds is not None]
        if not fits:
            return None
        fastest = min(m.step_seconds or 0.0 for m in fits)
        return next(m for m in fits if (m.step_seconds or 0.0) <= fastest * (1 + MEASURED_TIE))

    @property
    def plans_pick(self) -> Measured | None:
        return self.measured[0] if self.measured else None

    def pick_ratio(self) -> float | None:
        """The plan's own pick measured, over the measured pick (1.00: the model picked the fastest, or one within
        MEASURED_TIE of it)."""
        pick, first = self.pick, self.plans_pick
        if pick is None or first is None or first.step_seconds is None or not pick.step_seconds:
            return None
        return first.step_seconds / pick.step_seconds

    def spearman(self) -> float | None:
        ran = [m for m in self.measured if m.step_seconds is not None]
        if len(ran) < 3:
            return None
        return spearman([m.scored.time.seconds for m in ran], [m.step_seconds or 0.0 for m in ran])


def spearman(a: list[float], b: list[float]) -> float:
    """Spearman's rank correlation, ties sharing their mean rank."""
    ra, rb = _ranks(a), _ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    var = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return cov / var if var else 1.0


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def _is_oom(error: dict) -> bool:
    text = f"{error.get('type', '')} {error.get('message', '')}"
    return "OutOfMemoryError" in text or "out of memory" in text.lower()


# -- which candidates ---------------------------------------------------------------------------------------------

def _kinds(pick):
    """The alternatives a measurement can tell apart from the pick (bucket sizes and, on one GPU, ZeRO 0-2 tie in
    the model and in the run)."""
    return [
        lambda c: c.micro_batch < pick.micro_batch and c.offload_optimizer == pick.offload_optimizer,
        lambda c: c.checkpointing != pick.checkpointing,
        lambda c: c.offload_optimizer != "none" and pick.offload_optimizer == "none",
        lambda c: c.stage == 3 and c.offload_param == "none" and pick.stage != 3,
        lambda c: c.stage == 3 and c.offload_param != "none" and pick.offload_param == "none",
    ]


def _settings(c) -> tuple:
    return (c.stage if c.stage == 3 else min(c.stage, 1), c.offload_optimizer, c.offload_param, c.micro_batch,
            c.checkpointing, c.hpz)


def to_measure(ranked: list[Scored], k: int) -> list[Scored]:
    """The plan's pick, then the fastest of each kind of alternative (a smaller micro batch, checkpointing
    switched, optimizer offload, ZeRO-3, ZeRO-3 with parameter offload), then the next ranked, up to k; never two
    that differ only in bucket sizes (or between ZeRO-1 and -2), whose runs would tell nothing apart."""
    if not ranked or k < 1:
        return []
    out = [ranked[0]]
    seen = {_settings(ranked[0].candidate)}

    def take(s: Scored) -> None:
        out.append(s)
        seen.add(_settings(s.candidate))

    for kind in _kinds(ranked[0].candidate):
        if len(out) >= k:
            break
        s = next((s for s in ranked if kind(s.candidate) and _settings(s.candidate) not in seen), None)
        if s is not None:
            take(s)
    for s in ranked:
        if len(out) >= k:
            break
        if _settings(s.candidate) not in seen:
            take(s)
    return out


# -- running them --------------------------------------------------------------------------------------------------

def _model_config(path: str | None) -> dict:
    if path is None:
        raise PlanError("--verify builds the model from its config.json: give --model config.json (a bare "
                        "--params has no architecture to build)")
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        raise PlanError(f"--verify: {path} cannot be read again: {e}") from None
    return cfg


def run_plans_for(chosen: list[Scored], job: Job, hw: Hardware, tmp: str, steps: int, model_config: str | None
                  ) -> list:
    """verify Plans (verify/resolve.py) for the chosen candidates: the config as `--target deepspeed` writes it
    (the run is DeepSpeed's; an HF or Accelerate config differs only where they fill "auto" with these values),
    NVMe paths in `tmp`, the real shape."""
    from ..verify.realshape import ShapeError, from_hf_config
    from ..verify.resolve import Plan as RunPlan

    cfg = _model_config(model_config)
    ds_job = replace(job, target="deepspeed")
    plans = []
    for s in chosen:
        c = s.candidate
        try:
            shape = from_hf_config(cfg, seq=job.seq_len, lora_rank=job.lora_rank or 0, checkpointing=c.checkpointing,
                                   params=job.model.params + job.adapter_params(),
                                   largest_layer_params=job.model.largest_layer or 0)
        except ShapeError as e:
            raise PlanError(f"--verify: {job.model.name}: {e}") from None
        config = config_for(c, ds_job, hw.gpus_per_node)
        for key in ("offload_optimizer", "offload_param"):
            off = config["zero_optimization"].get(key)
            if isinstance(off, dict) and off.get("device") == "nvme":
                off["nvme_path"] = tmp
        plans.append(RunPlan(config=config, target="deepspeed", world_size=hw.world, model=shape,
                             steps=1 + max(1, steps)))
    return plans


def measure(result: Result, job: Job, hw: Hardware, opts: MeasureOptions, say) -> Verification:
    """Run the chosen candidates of `result` here; raises PlanError for what cannot run (no torch/deepspeed, a
    plan for more GPUs than this machine has, a model verify does not build)."""
    from ..verify.options import UsageError, VerifyOptions
    from ..verify.runner import detect_gpus, signals_as_interrupt
    from ..verify.session import accelerator_of, need_torch_and_deepspeed, run_plans_here

    if hw.nodes != 1:
        raise PlanError(f"--verify runs on this machine: a plan for {hw.nodes} nodes cannot be run here")
    vopts = VerifyOptions(gpus=hw.gpus_per_node, cpu=opts.cpu, timeout=opts.timeout, quiet=opts.quiet,
                          op_cache=opts.op_cache, build_timeout=opts.build_timeout, no_cache=True)
    try:
        need_torch_and_deepspeed()
        accelerator, device_kind = accelerator_of(vopts)
    except UsageError as e:
        raise PlanError(f"--verify: {e}") from None
    if accelerator == "cuda":
        n, _name = detect_gpus()
        if n != hw.gpus_per_node:
            raise PlanError(f"--verify runs the candidates on this machine's GPUs: it has {n}, the plan is for "
                            f"{hw.gpus_per_node} (give --gpus-per-node {n})")
    chosen = to_measure(result.ranked, opts.top)
    if not chosen:
        return Verification(device=device_kind, accelerator=accelerator)
    tmp = tempfile.mkdtemp(prefix="zerolint-plan-nvme-")
    try:
        plans = run_plans_for(chosen, job, hw, tmp, opts.steps, opts.model_config)
        names = [f"#{result.ranked.index(s) + 1} {s.candidate.describe()}" for s in chosen]
        try:
            with signals_as_interrupt():  # Ctrl-C, SIGTERM, SIGHUP: every child stopped before the exit
                records = run_plans_here(plans, names, vopts, accelerator, device_kind, 1, say, cleanup=(tmp,))
        except UsageError as e:
            raise PlanError(f"--verify: {e}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Verification(device=device_kind, accelerator=accelerator,
                        measured=[Measured(s, rec, hw, accelerator) for s, rec in zip(chosen, records)])
