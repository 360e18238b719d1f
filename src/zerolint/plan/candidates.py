"""The configs `zerolint plan` considers: ZeRO stage 0-3, optimizer and parameter offload (CPU, NVMe when the node
has it), micro batch x gradient accumulation for the global batch, activation checkpointing, DeepSpeed's default
or small communication buckets, and ZeRO++ hpZ across nodes. Each becomes an estimate.memory.Plan for the memory
model and a step time for the ranking."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..estimate.memory import DEFAULTS, Plan
from .hardware import Hardware
from .job import Job, PlanError

SMALL_BUCKET = 50_000_000  # elements: a tenth of DeepSpeed's 5e8 reduce / allgather buckets
SMALL_LIVE = 100_000_000  # stage3_max_live_parameters / max_reuse_distance, against DeepSpeed's 1e9
# The plan's "default" buckets: 2e8, not DeepSpeed's 5e8, whose second overlap_comm buffer costs 1 GB per GPU at
# stage 1-2 for no measurable speed (ZL802; OpenRLHF/OpenRLHF#200); the transformers docs' examples use 2e8 too.
PLAN_BUCKET = 200_000_000
MAX_MICRO_BATCHES = 8  # the largest divisors of the per-GPU batch that are tried


@dataclass(frozen=True)
class Candidate:
    stage: int
    offload_optimizer: str = "none"  # none | cpu | nvme
    offload_param: str = "none"
    micro_batch: int = 1
    grad_accum: int = 1
    checkpointing: bool = False
    small_buckets: bool = False
    hpz: bool = False  # zero_hpz_partition_size = GPUs per node (ZeRO++; stage 3 across nodes)

    def describe(self) -> str:
        off = []
        if self.offload_optimizer != "none":
            off.append(f"optimizer->{self.offload_optimizer}")
        if self.offload_param != "none":
            off.append(f"params->{self.offload_param}")
        parts = [f"ZeRO-{self.stage}", "offload " + ",".join(off) if off else "no offload",
                 f"micro {self.micro_batch} x accum {self.grad_accum}"]
        if self.checkpointing:
            parts.append("checkpointing")
        if self.small_buckets:
            parts.append("small buckets")
        if self.hpz:
            parts.append("hpZ")
        return ", ".join(parts)

    def to_dict(self) -> dict:
        """The settings, as `plan --format json` names them (ROW's and RUN's "config")."""
        return {"stage": self.stage, "offload_optimizer": self.offload_optimizer, "offload_param": self.offload_param,
                "micro_batch": self.micro_batch, "gradient_accumulation_steps": self.grad_accum,
                "checkpointing": self.checkpointing, "small_buckets": self.small_buckets, "hpz": self.hpz}

    def changes_from(self, other: Candidate) -> list[str]:
        """What differs from `other`, one item per setting (the distance `plan --from` ranks by)."""
        out = []
        for name, label in (("stage", "ZeRO stage"), ("offload_optimizer", "optimizer offload"),
                            ("offload_param", "parameter offload"), ("micro_batch", "micro batch"),
                            ("checkpointing", "activation checkpointing"), ("small_buckets", "small buckets"),
                            ("hpz", "hpZ")):
            a, b = getattr(other, name), getattr(self, name)
            if a != b:
                out.append(f"{label} {_shown(a)} -> {_shown(b)}")
        return out

    def distance(self, other: Candidate) -> int:
        return len(self.changes_from(other)) + max(0, abs(self.stage - other.stage) - 1)

    def buckets(self, job: Job) -> dict[str, int]:
        """The communication sizes the written config sets (or, "auto" for the HF Trainer, gets filled with:
        hidden^2 for the reduce bucket, 0.9 hidden^2 for the prefetch bucket, 10 hidden for persistence)."""
        h = job.model.shape.hidden
        if self.small_buckets:
            return {"reduce": SMALL_BUCKET, "allgather": SMALL_BUCKET, "prefetch": SMALL_BUCKET, "live": SMALL_LIVE,
                    "persistence": DEFAULTS["param_persistence_threshold"]}
        if job.target == "hf" and h:
            return {"reduce": h * h, "allgather": PLAN_BUCKET, "prefetch": int(0.9 * h * h),
                    "live": DEFAULTS["max_live_parameters"], "persistence": 10 * h}
        return {"reduce": PLAN_BUCKET, "allgather": PLAN_BUCKET, "prefetch": DEFAULTS["prefetch_bucket_size"],
                "live": DEFAULTS["max_live_parameters"], "persistence": DEFAULTS["param_persistence_threshold"]}

    def to_plan(self, job: Job) -> Plan:
        """The memory model's reading of this candidate (what the written config will say)."""
        b = self.buckets(job)
        return replace(Plan(stage=self.stage, precision=job.precision, offload_optimizer=self.offload_optimizer,
                            offload_param=self.offload_param, micro_batch=self.micro_batch,
                            overlap_comm=self.stage >= 2),
                       reduce_bucket_size=b["reduce"], allgather_bucket_size=b["allgather"],
                       prefetch_bucket_size=b["prefetch"], max_live_parameters=b["live"], max_reuse_distance=b["live"],
                       param_persistence_threshold=b["persistence"])


def _shown(v) -> str:
    return {True: "on", False: "off"}.get(v, str(v)) if isinstance(v, bool) else str(v)


def batch_splits(job: Job, hw: Hardware) -> list[tuple[int, int]]:
    """(micro batch, accumulation) pairs for the job's batch on `hw.world` GPUs."""
    world = hw.world
    if job.global_batch is not None:
        if job.global_batch % world:
            raise PlanError(f"--global-batch {job.global_batch} is not a multiple of the {world} GPUs")
        per_gpu = job.global_batch // world
        if job.micro_batch is not None:
            if per_gpu % job.micro_batch:
                raise PlanError(f"--micro-batch {job.micro_batch} does not divide the {per_gpu} sequences per GPU "
                                f"of --global-batch {job.global_batch}")
            return [(job.micro_batch, per_gpu // job.micro_batch)]
        micro = [d for d in range(1, per_gpu + 1) if per_gpu % d == 0][-MAX_MICRO_BATCHES:]
        return [(m, per_gpu // m) for m in micro]
    if job.micro_batch is not None:
        return [(job.micro_batch, 1)]
    raise PlanError("give the batch: --global-batch N (sequences per step) or --micro-batch N (per GPU)")


def enumerate_candidates(job: Job, hw: Hardware) -> list[Candidate]:
    stages: list[tuple[int, str, str]] = [(0, "none", "none")]
    for s in (1, 2, 3):
        stages.append((s, "none", "none"))
        stages.append((s, "cpu", "none"))
    stages.append((3, "cpu", "cpu"))
    if hw.nvme:  # ZeRO-Infinity: NVMe offload is a stage-3 feature
        stages += [(3, "nvme", "none"), (3, "nvme", "cpu"), (3, "nvme", "nvme")]
    ckpt = {"allowed": (False, True), "never": (False,), "always": (True,)}[job.checkpointing]
    out = []
    for stage, opt, par in stages:
        for micro, accum in batch_splits(job, hw):
            for c in ckpt:
                for small in (False, True):
                    if small and (stage == 0 or job.target == "hf"):
                        continue  # stage 0 has no ZeRO buckets; the HF Trainer's "auto" ones (hidden^2) are small
                    for hpz in ((False, True) if stage == 3 and hw.nodes > 1 else (False,)):
                        out.append(Candidate(stage, opt, par, micro, accum, c, small, hpz))
    return out


def from_plan(plan: Plan, micro: int, accum: int, checkpointing: bool) -> Candidate:
    """The candidate a config already is (`plan --from`)."""
    small = plan.reduce_bucket_size < DEFAULTS["reduce_bucket_size"]
    return Candidate(plan.stage, plan.offload_optimizer if plan.stage else "none",
                     plan.offload_param if plan.stage == 3 else "none", micro, accum, checkpointing, small)
