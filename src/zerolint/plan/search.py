"""`zerolint plan`'s search: every candidate estimated (estimate.memory, with the estimate's margin) and timed
(steptime), those that fit ranked fastest first, the others kept with what they need."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..estimate.memory import ALWAYS, BUILD, TRAIN, Cluster, Component, Estimate, Plan, Workload, estimate_plan
from ..estimate.modelspec import ModelSpec
from .candidates import Candidate, enumerate_candidates
from .hardware import Hardware
from .job import Job
from .steptime import StepTime, step_time


@dataclass
class Scored:
    candidate: Candidate
    estimate: Estimate
    time: StepTime
    fits: bool
    why: str = ""  # why it lost (filled by rank)

    @property
    def per_gpu_bytes(self) -> int:
        return self.estimate.per_gpu_bytes

    @property
    def per_node_host_bytes(self) -> int:
        return self.estimate.per_node_host_bytes

    def tokens_per_s(self, job: Job) -> float:
        c = self.candidate
        return c.micro_batch * c.grad_accum * self.estimate.cluster.world * job.seq_len / self.time.seconds


@dataclass
class Result:
    job: Job
    hardware: Hardware
    ranked: list[Scored]  # those that fit, fastest first
    rejected: list[Scored]  # those that do not, least memory first
    considered: int = 0
    start: Scored | None = None  # plan --from: the user's own config
    nearest: list[Scored] = field(default_factory=list)  # plan --from: the fits, fewest changes first

    @property
    def best(self) -> Scored | None:
        return self.ranked[0] if self.ranked else None


def _memory_model(job: Job) -> ModelSpec:
    """The ModelSpec whose parameters are trained: the whole model, or (adapter runs) the adapters with the
    model's shape, so that activations stay the model's; the frozen base comes in as extra rows."""
    if not job.lora_rank:
        return job.model
    pt = job.adapter_params()
    s = job.model.shape
    biggest = job.lora_rank * ((s.hidden or 0) + (s.intermediate or 4 * (s.hidden or 0)))
    # PEFT freezes everything but the adapters, the norms' weights too
    return replace(job.model, params=pt, largest_layer=biggest, largest_tensor=biggest, tensor_numels=None,
                   shape=replace(s, norm_weights_train=False), assumptions=[*job.model.assumptions])


def _extra_rows(c: Candidate, job: Job, hw: Hardware) -> tuple[Component, ...]:
    D = 4 if job.precision == "fp32" else 2
    rows = []
    P = job.model.params
    if job.lora_rank:
        frozen = P - job.adapter_params()
        if c.stage == 3:
            where = "host" if c.offload_param != "none" else "gpu"
            rows.append(Component("frozen base weights (partition)", D * -(-frozen // hw.world), where,
                                  f"{D} B x (P - adapters) / N: ZeRO-3 partitions frozen parameters too",
                                  moments=ALWAYS, model_state=True, key="frozen"))
            layer = job.model.largest_layer or 0
            rows.append(Component("frozen weights gathered (largest layer)", D * layer, "gpu",
                                  f"{D} B x L: the frozen layer being computed, gathered", moments=TRAIN,
                                  key="frozen_gathered"))
        else:
            rows.append(Component("frozen base weights", D * frozen, "gpu",
                                  f"{D} B x (P - adapters): stages 0-2 keep frozen parameters whole on every GPU",
                                  moments=ALWAYS, model_state=True, key="frozen"))
            # the script builds (or loads) the whole model on the host before initialize moves it (measured on
            # an H200: 31.7 GiB of RSS for Llama-3-8B's adapters run, docs/plan.md)
            rows.append(Component("frozen base built on the host", 4 * frozen, "host",
                                  "4 B x (P - adapters) per process: the fp32 model as built, before initialize",
                                  moments=(BUILD,), model_state=True, key="frozen_host"))
    if c.hpz:
        rows.append(Component("hpZ secondary parameter partition", D * -(-P // hw.gpus_per_node), "gpu",
                              f"{D} B x P / GPUs per node (zero_hpz_partition_size)", moments=ALWAYS, key="hpz"))
    return tuple(rows)


def score(c: Candidate, job: Job, hw: Hardware, as_written: Plan | None = None) -> Scored:
    """`as_written`: the estimate's reading of the user's own config (`--from`), every key as it is there."""
    cluster = Cluster(nodes=hw.nodes, gpus_per_node=hw.gpus_per_node)
    workload = Workload(seq_len=job.seq_len, micro_batch=c.micro_batch, checkpointing=c.checkpointing)
    est = estimate_plan(as_written or c.to_plan(job), _memory_model(job), cluster, workload, hw.gpu_memory,
                        hw.host_memory,
                        zero_init=c.stage == 3, extra=_extra_rows(c, job, hw))
    return Scored(c, est, step_time(c, job, hw), not _shortfalls(est, hw))


def plan(job: Job, hw: Hardware, start: Candidate | None = None, start_plan: Plan | None = None) -> Result:
    scored = [score(c, job, hw) for c in enumerate_candidates(job, hw)]
    ranked = _rank([s for s in scored if s.fits])
    rejected = sorted((s for s in scored if not s.fits), key=lambda s: (s.per_gpu_bytes, s.per_node_host_bytes))
    _explain(ranked, rejected, hw)
    result = Result(job, hw, ranked, rejected, considered=len(scored))
    if start is not None:
        result.start = score(start, job, hw, start_plan)
        result.start.why = "fits" if result.start.fits else needs(result.start, hw)
        result.nearest = sorted(ranked, key=lambda s: (s.candidate.distance(start), s.time.seconds))
    return result


TIE = 0.005  # step times within 0.5 % of each other are a tie: the simpler config wins, then the one with more headroom


def _settings(c: Candidate) -> int:
    return (c.offload_optimizer != "none") + (c.offload_param != "none") + c.checkpointing + c.small_buckets + c.hpz


TIGHT_PENALTY = 1.10  # a config within 10 % of a memory limit ranks as if 10 % slower: headroom is worth that much


def tight(s: Scored) -> bool:
    """Within 10 % of the GPU's or the host's memory (the estimate's "tight"): it fits, but with little room for
    what the estimate does not see (docs/estimate.md, the margin)."""
    return s.estimate.verdict == "tight"


def _ranked_seconds(s: Scored) -> float:
    return s.time.seconds * (TIGHT_PENALTY if tight(s) else 1.0)


def _rank(fits: list[Scored]) -> list[Scored]:
    """Fastest first (a tight config as if 10 % slower), in bands of TIE above the fastest; within a band, fewer
    settings, then less memory."""
    if not fits:
        return []
    fastest = min(_ranked_seconds(s) for s in fits)
    band = lambda s: int((_ranked_seconds(s) / fastest - 1) / TIE)  # noqa: E731
    return sorted(fits, key=lambda s: (band(s), _settings(s.candidate), s.per_gpu_bytes))


def _explain(ranked: list[Scored], rejected: list[Scored], hw: Hardware) -> None:

    if ranked:
        best = ranked[0]
        for s in ranked[1:]:
            if tight(s) and not tight(best) and s.time.seconds < best.time.seconds * TIGHT_PENALTY:
                s.why = f"{s.time.seconds / best.time.seconds - 1:+.0%} step time, but within 10 % of a memory limit"
                continue
            if s.time.seconds <= best.time.seconds * (1 + TIE):
                more = _settings(s.candidate) > _settings(best.candidate)
                s.why = ("the same step time (within 0.5 %), " +
                         ("more settings than the pick" if more else "less memory headroom"))
                continue
            slower = s.time.seconds / best.time.seconds - 1
            worst = s.time.largest_overhead(best.time)
            what = f"; its largest overhead: {worst.name} {worst.seconds:.3g} s" if worst else ""
            if s.candidate.checkpointing and not best.candidate.checkpointing:
                what = "; checkpointing recomputes the forward" + what
            s.why = f"{slower:+.0%} step time{what}"
        best.why = "fastest that fits" + (" (within 10 % of a memory limit: nothing roomier is close)"
                                          if tight(best) else "")
    for s in rejected:
        s.why = needs(s, hw)


def _shortfalls(est: Estimate, hw: Hardware) -> list[str]:
    """What the estimate needs beyond the hardware, one item per memory (GPU, host, NVMe); empty: it fits."""
    from ..estimate.memory import gib

    out = []
    if est.per_gpu_bytes > hw.gpu_memory:
        out.append(f"{gib(est.per_gpu_bytes):.1f} GiB per GPU (has {gib(hw.gpu_memory):.0f})")
    if hw.host_memory is not None and est.per_node_host_bytes > hw.host_memory:
        out.append(f"{gib(est.per_node_host_bytes):.0f} GiB host per node (has {gib(hw.host_memory):.0f})")
    if hw.nvme is not None and est.per_node_nvme_bytes > hw.nvme:
        out.append(f"{gib(est.per_node_nvme_bytes):.0f} GiB NVMe per node (has {gib(hw.nvme):.0f})")
    return out


def needs(s: Scored, hw: Hardware) -> str:
    """Why a candidate does not fit: what it needs against what the hardware has."""
    return "does not fit: needs " + ", ".join(_shortfalls(s.estimate, hw))
