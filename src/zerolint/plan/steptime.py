"""The step-time model `zerolint plan` ranks by: seconds per optimizer step, as named terms, each with its formula.

    compute     tokens x FLOPs per token / (GPUs x peak x efficiency x sqrt(min(1, hidden / 4,096)))
                FLOPs per token: 6 P + 6 layers x hidden x seq (attention scores), forward and backward (Kaplan et
                al. 2020; Narayanan et al. 2021); adapter runs 4 P (no weight gradients of the frozen base);
                checkpointing adds the layers' forward (2 P_layers + 2 layers x hidden x seq; the embeddings and the
                LM head are not recomputed). Efficiency: the stated fraction of peak for a large micro step,
                t / (t + 1,024) of it for t tokens per GPU per micro step.
    micro step  25 ms per micro step beside its FLOPs (DeepSpeed's engine calls, the loss), serial.
    collectives ring all-reduce 2 (N-1)/N V, reduce-scatter and all-gather (N-1)/N V, over the intra-node link on
                one node and the network across nodes; per stage (DeepSpeed 0.19.8):
                  0: gradients all-reduced once per step;
                  1: gradients reduce-scattered at the step, updated parameters all-gathered;
                  2: gradients reduce-scattered every micro step (overlapped with backward), parameters
                     all-gathered at the step;
                  3: parameters all-gathered twice per micro step (forward, backward; prefetched, overlapped) and
                     gradients reduce-scattered; hpZ moves the backward all-gather inside the node; the hooks that
                     fetch and release each parameter tensor cost 300 us per tensor and pass, serial, on one GPU too.
                Each collective also costs a launch latency per bucket (more with small buckets).
    offload     optimizer to CPU: gradients to the host (every micro step at stage 2-3, at the step at stage 1),
                updated parameters back, and the CPU Adam update, serial at the step; parameters on the CPU:
                2 Pn x D over PCIe per micro step, prefetched (overlapped); NVMe: the same traffic at the node's
                NVMe bandwidth, optimizer states read and written at every step.
    step        max(compute, overlapped terms) + serial terms.

It ranks configs; it is not a promise of seconds. `plan --verify` measures the top candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

from .candidates import SMALL_BUCKET, Candidate
from .hardware import GB, Hardware
from .job import Job

LATENCY_S = {"intra": 30e-6, "network": 100e-6}  # per collective launch (NCCL ring, a bucket each)
HALF_EFFICIENCY_TOKENS = 1024
# Per parameter tensor and pass: ZeRO-3's fetch/release bookkeeping (partitioned_param_coordinator); measured on one
# H200 as the step time ZeRO-3 adds to ZeRO-0 over the tensors it manages, per tensor and pass: 130, 370 and 480 us
# (GPT-2, TinyLlama-1.1B, Qwen2-0.5B at 8-16 k tokens per micro step), 120, 20 and 310 us (the same at 16-32 k
# tokens, where more of it hides behind the GPU's work): 200 us, about their median (docs/plan.md, "Measured").
HOOK_S = 200e-6
# The hidden size from which a GEMM-bound step reaches the stated fraction of peak; below it efficiency falls as
# sqrt(hidden / FULL_WIDTH) (fitted on the same runs: GPT-2 and Qwen2-0.5B ran 2-3x slower than 6P at 45 %,
# Llama-3.2-3B and Llama-3-8B at it).
FULL_WIDTH = 4096
DEFAULT_BUCKET = 500_000_000
# What a micro step costs beside its FLOPs: DeepSpeed's engine calls, the loss, the gradient accumulation's
# bookkeeping; measured on one H200 as the step time a second micro step of half the tokens adds: 13-47 ms over
# ten pairs of runs of five models (docs/plan.md, "Measured").
MICRO_STEP_S = 0.025


def layer_params(job: Job) -> int:
    """The parameters of the transformer layers: P without the token embedding, the LM head (when untied) and
    learned positions, which checkpointing does not recompute."""
    s = job.model.shape
    if not (s.vocab and s.hidden):
        return job.model.params
    embed = s.vocab * s.hidden * (1 if s.tied_embeddings else 2)
    return max(0, job.model.params - embed)


@dataclass(frozen=True)
class Term:
    name: str
    seconds: float
    overlapped: bool  # hidden behind compute up to its length
    formula: str

    def to_dict(self) -> dict:
        return {"name": self.name, "seconds": self.seconds, "overlapped": self.overlapped, "formula": self.formula}


@dataclass(frozen=True)
class StepTime:
    terms: tuple[Term, ...]

    @property
    def compute(self) -> float:
        return sum(t.seconds for t in self.terms if t.name.startswith("compute"))

    @property
    def seconds(self) -> float:
        hidden = sum(t.seconds for t in self.terms if t.overlapped)
        serial = sum(t.seconds for t in self.terms if not t.overlapped and not t.name.startswith("compute"))
        return max(self.compute, hidden) + serial

    def largest_overhead(self, than: StepTime | None = None) -> Term | None:
        """The overhead term that costs the most (beyond `than`'s term of the same name: what makes this step
        slower than that one), None when there is none."""
        base = {t.name: t.seconds for t in than.terms} if than is not None else {}
        rest = [t for t in self.terms if not t.name.startswith("compute") and t.seconds - base.get(t.name, 0.0) > 0]
        return max(rest, key=lambda t: t.seconds - base.get(t.name, 0.0), default=None)


def _d(job: Job) -> int:
    return 4 if job.precision == "fp32" else 2


def step_time(c: Candidate, job: Job, hw: Hardware) -> StepTime:
    P, Pt = job.model.params, job.trainable_params()
    s = job.model.shape
    N, gpn = hw.world, hw.gpus_per_node
    D = _d(job)
    seq = job.seq_len
    tokens = c.micro_batch * c.grad_accum * N * seq
    attn = 6 * (s.layers or 0) * (s.hidden or 0) * seq
    per_token = (4 * P if job.lora_rank else 6 * P) + attn
    recompute = 0
    if c.checkpointing:  # the layers' forward again; the embeddings and the LM head are not checkpointed
        recompute = 2 * layer_params(job) + attn // 3
    micro_tokens = c.micro_batch * seq
    narrow = min(1.0, (s.hidden or FULL_WIDTH) / FULL_WIDTH) ** 0.5  # small GEMMs, more elementwise per FLOP
    eff = hw.mfu * narrow * micro_tokens / (micro_tokens + HALF_EFFICIENCY_TOKENS)
    terms = [Term("compute", tokens * per_token / (N * hw.tflops * 1e12 * eff), False,
                  f"{tokens:,} tokens x {per_token:.3g} FLOPs / ({N} x {hw.tflops:g} TFLOPS x {eff:.0%})")]
    if recompute:
        terms.append(Term("compute: checkpointing's recomputation", tokens * recompute / (N * hw.tflops * 1e12 * eff),
                          False, f"{tokens:,} tokens x {recompute:.3g} FLOPs (the layers' forward) at {eff:.0%}"))
    terms.append(Term("per micro step", c.grad_accum * MICRO_STEP_S, False,
                      f"{c.grad_accum} micro steps x {MICRO_STEP_S * 1e3:g} ms (DeepSpeed's forward/backward/step "
                      "calls, the loss; measured on one H200)"))
    if N > 1:
        link = "network" if hw.nodes > 1 else "intra"
        bw = (hw.network_gbps if hw.nodes > 1 else hw.intra_gbps) * GB
        ring = (N - 1) / N
        grads, params = Pt * D, P * D
        bucket = SMALL_BUCKET if c.small_buckets else DEFAULT_BUCKET
        launches = lambda numel: max(1, -(-numel // bucket)) * LATENCY_S[link]  # noqa: E731
        if c.stage == 0:
            terms.append(Term("gradient all-reduce", 2 * ring * grads / bw + launches(Pt), False,
                              f"2 (N-1)/N x {grads / GB:.2f} GB at {bw / GB:g} GB/s, once per step"))
        elif c.stage == 1:
            terms.append(Term("gradient reduce-scatter + parameter all-gather",
                              ring * (grads + Pt * D) / bw + 2 * launches(Pt), False,
                              f"(N-1)/N x ({grads / GB:.2f} + {Pt * D / GB:.2f}) GB at {bw / GB:g} GB/s, at the step"))
        elif c.stage == 2:
            terms.append(Term("gradient reduce-scatter", c.grad_accum * (ring * grads / bw + launches(Pt)), True,
                              f"{c.grad_accum} micro steps x (N-1)/N x {grads / GB:.2f} GB, overlapped with backward"))
            terms.append(Term("parameter all-gather", ring * Pt * D / bw + launches(Pt), False,
                              f"(N-1)/N x {Pt * D / GB:.2f} GB at the step"))
        else:
            bwd_bw = hw.intra_gbps * GB if c.hpz else bw
            gather = ring * params / bw + ring * params / bwd_bw
            terms.append(Term("parameter all-gathers", c.grad_accum * (gather + 2 * launches(P)), True,
                              f"{c.grad_accum} micro steps x 2 x (N-1)/N x {params / GB:.2f} GB (forward, backward"
                              + ("; backward inside the node, hpZ" if c.hpz else "") + "), prefetched"))
            terms.append(Term("gradient reduce-scatter", c.grad_accum * (ring * grads / bw + launches(Pt)), True,
                              f"{c.grad_accum} micro steps x (N-1)/N x {grads / GB:.2f} GB, overlapped with backward"))
    if c.stage == 3:  # hooks fetch and release every module's parameters, even on one GPU
        tensors = len(job.model.tensor_numels or ()) or 9 * (s.layers or 1) + 3
        terms.append(Term("ZeRO-3 parameter hooks", c.grad_accum * 2 * tensors * HOOK_S, False,
                          f"{c.grad_accum} micro steps x 2 passes x {tensors} tensors x {HOOK_S * 1e6:g} us"))
    Ptn = -(-Pt // N)
    Pn = -(-P // N)
    pcie = hw.pcie_gbps * GB
    nvme = hw.nvme_gbps * GB / gpn  # the node's NVMe bandwidth, shared by its GPUs
    if c.offload_optimizer != "none":
        per_micro = c.stage >= 2
        times = c.grad_accum if per_micro else 1
        terms.append(Term("gradients to the host", times * Ptn * D / pcie, per_micro,
                          f"{times} x {Ptn * D / GB:.2f} GB over PCIe ({hw.pcie_gbps:g} GB/s)"))
        rate = hw.cpu_adam_params_per_s / gpn
        terms.append(Term("CPU Adam", Ptn / rate, False,
                          f"{Ptn:,} parameters at {rate:.2g}/s (the node's CPU Adam rate / {gpn} GPUs)"))
        terms.append(Term("parameters back to the GPU", Ptn * D / pcie, False,
                          f"{Ptn * D / GB:.2f} GB over PCIe at the step"))
        if c.offload_optimizer == "nvme":
            states = Ptn * (4 + 8 + 4) * 2  # master, two moments, fp32 gradient: read and written
            terms.append(Term("optimizer states to and from NVMe", states / nvme, False,
                              f"{states / GB:.2f} GB at {nvme / GB:.2g} GB/s per GPU"))
    if c.offload_param != "none":
        vol = c.grad_accum * 2 * Pn * D
        where = nvme if c.offload_param == "nvme" else pcie
        terms.append(Term(f"parameters from {c.offload_param.upper() if c.offload_param == 'nvme' else 'the host'}",
                          vol / where, True,
                          f"{c.grad_accum} micro steps x 2 x {Pn * D / GB:.2f} GB at {where / GB:.3g} GB/s, "
                          "prefetched"))
    return StepTime(tuple(terms))
