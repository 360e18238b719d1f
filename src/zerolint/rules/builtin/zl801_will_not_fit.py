"""The job needs more GPU (or host) memory than the machine has, for the model size given with `--params` or
`--model`. DeepSpeed checks nothing of the kind: the job starts, loads, and dies with `CUDA out of memory` at the
first step (optimizer states are created lazily there) or during initialize (ZeRO-3 without `zero.Init` moves the
whole model to each GPU first), or the host is OOM-killed while it builds offloaded optimizer states.

The estimate is `zerolint estimate`'s (zerolint/estimate/memory.py): the model states DeepSpeed's own estimators count
(runtime/zero/stage_1_and_2.py `estimate_zero2_model_states_mem_needs`, stage3.py
`estimate_zero3_model_states_mem_needs`), plus what they leave out and the config decides: the gradient reduce
bucket (stage_1_and_2.py:3255-3279, twice with `overlap_comm` at ZeRO-1/2; stage3.py:782), ZeRO-3's gathered
parameters (`stage3_max_live_parameters`, `stage3_max_reuse_distance`, prefetch), the fp32 gradients of the
optimizer step, pinned host buffers rounded up to a power of two by torch, each at the moment of the step it
is alive in; then a documented margin for the CUDA context and the caching allocator. Activations are not
included by `check` (they need the sequence length: use `zerolint estimate --seq-len`).

Measured against real peaks on H200 GPUs in docs/estimate-accuracy.md: the estimate plus margin covered every
measured peak reserved. It reports an error when the estimate plus margin exceeds the memory, and a warning when
it is within 10 % of it. Active only when `check` is given a model size (`--params`/`--model`) and
`--gpu-memory` or `--host-memory`; `--world-size` and `--gpus-per-node` set the layout (default: one GPU)."""

from ..rule import Rule

RULE = Rule(
    code="ZL801",
    name="will-not-fit",
    severity="error",
    summary="The job needs more GPU or host memory than given with --gpu-memory/--host-memory",
    evidence="deepspeed/runtime/zero/stage_1_and_2.py:3255-3279, 4017-4034; deepspeed/runtime/zero/stage3.py:"
             "782-795, 4016-4052; measured H200 peaks: docs/estimate-accuracy.md",
)

GiB = 1024**3
TOP = 5


def _g(n: int) -> str:
    return f"{n / GiB:.2f} GiB"


def _where(view) -> str:
    for pointer in ("/zero_optimization/stage", "/zero_optimization"):
        if view.node(pointer) is not None:
            return pointer
    return ""


def _breakdown(est, where: str) -> str:
    peak = est.gpu_peak_moment if where == "gpu" else est.host_peak_moment
    rows = sorted((c for c in est.components if c.where == where and not c.margin and peak in c.moments
                   and c.bytes > 0), key=lambda c: -c.bytes)
    parts = [f"{c.name} {c.bytes / GiB:.2f}" for c in rows[:TOP]]
    rest = sum(c.bytes for c in rows[TOP:])
    if rest:
        parts.append(f"{len(rows) - TOP} more {rest / GiB:.2f}")
    return ", ".join(parts)


@RULE.check
def check(view):
    model = view.model_spec
    if model is None or (view.gpu_memory is None and view.host_memory is None):
        return
    from ...estimate.memory import Cluster, EstimateError, Workload, estimate_view

    world = view.world_size or 1
    gpn = min(view.settings.gpus_per_node or world, world)
    cluster = Cluster(nodes=-(-world // gpn), gpus_per_node=gpn)
    try:
        est = estimate_view(view, model, cluster, Workload(), view.gpu_memory, view.host_memory)
    except EstimateError:
        return  # stage decided at run time: nothing to say
    size = f"{model.params / 1e9:.3g}B-parameter model"
    who = f"a {size}" if model.source != "config.json" else f"{model.name} (a {size})"
    job = f"{who} on {cluster.describe()}, {est.plan.describe()}"
    fix = ""
    fitting = [s for s in est.suggestions if s.fits]
    if fitting:
        s = fitting[0]
        fix = f"{s.title} brings it to {_g(s.per_gpu_bytes)} per GPU and {_g(s.per_node_host_bytes)} host per node"
        if len(fitting) > 1:
            fix += "; or " + "; or ".join(f"{t.title} ({_g(t.per_gpu_bytes)} per GPU)" for t in fitting[1:3])
    elif est.suggestions:
        fix = "even " + est.suggestions[0].title + f" needs {_g(est.suggestions[0].per_gpu_bytes)} per GPU"
    more = " `zerolint estimate` shows the full table and the formulas."
    for where, need, have, covered, margin, peak in (
            ("gpu", est.per_gpu_bytes, est.gpu_memory, est.per_gpu_covered_bytes, est.per_gpu_margin_bytes,
             est.gpu_peak_moment),
            ("host", est.per_node_host_bytes, est.host_memory, est.per_node_host_covered_bytes,
             est.per_node_host_margin_bytes, est.host_peak_moment)):
        if have is None or need <= 0.9 * have:
            continue
        unit = "per GPU" if where == "gpu" else "of host memory per node"
        over = need > have
        what = "will not fit" if over else "fits with less than 10% to spare"
        msg = (f"{job}: {what} in {_g(have)} {unit}; it needs about {_g(need)} ({_g(covered)} estimated at "
               f"\"{peak}\" + {_g(margin)} margin): {_breakdown(est, where)} GiB"
               + ("; activations not included" if where == "gpu" else ""))
        help_ = (fix + "." if fix and over else "") + more
        yield view.finding(_where(view), msg, help=help_.strip(), severity=None if over else "warning")
