"""The memory estimate (zerolint/estimate/memory.py): components, moments, config reading, margins, suggestions."""

from __future__ import annotations

import json
import os

import pytest

from zerolint.estimate.memory import (
    BWD,
    CONV,
    CUDA_CONTEXT_BYTES,
    FWD,
    INIT,
    RED,
    UPD,
    Cluster,
    EstimateError,
    GiB,
    Plan,
    Workload,
    estimate_plan,
    estimate_view,
    parse_bytes,
    plan_from_view,
    pow2ceil,
)
from zerolint.estimate.modelspec import Shape, from_params, load_hf_config
from zerolint.model.document import parse
from zerolint.model.view import Settings, View

ROOT = os.path.join(os.path.dirname(__file__), "..")
SEED = os.path.join(ROOT, "fixtures", "examples", "seed")
TINYLLAMA = os.path.join(ROOT, "fixtures", "models", "tinyllama-1.1b.json")
P = 1_000_000_000


def view(cfg, target="deepspeed", **kw):
    text = cfg if isinstance(cfg, str) else json.dumps(cfg)
    return View(parse(text, "ds.json"), Settings(target=target, **kw))


def est(cfg, params=P, largest=50_000_000, gpus=1, nodes=1, target="deepspeed", **kw):
    return estimate_view(view(cfg, target), from_params(params, largest), Cluster(nodes, gpus), **kw)


def comp(e, key, where=None):
    rows = [c for c in e.components if c.key == key and (where is None or c.where == where)]
    assert rows, f"no component {key}"
    return sum(c.bytes for c in rows)


def zero(stage, **z):
    return {"bf16": {"enabled": True}, "optimizer": {"type": "AdamW"}, "zero_optimization": {"stage": stage, **z}}


@pytest.mark.parametrize("text,n", [("80GB", 80 * GiB), ("80GiB", 80 * GiB), ("24G", 24 * GiB), ("1TB", 2**40),
                                    ("512MiB", 512 * 2**20), ("1.5GB", int(1.5 * GiB)), (1000, 1000), ("2e9", 2e9)])
def test_parse_bytes(text, n):
    assert parse_bytes(text) == int(n)


@pytest.mark.parametrize("text", ["", "GB", "-1GB", "80 apples", "0"])
def test_parse_bytes_rejects(text):
    with pytest.raises(ValueError):
        parse_bytes(text)


def test_pow2ceil():
    assert [pow2ceil(n) for n in (1, 2, 3, 1000, 2**30 + 1)] == [1, 2, 4, 1024, 2**31]


def test_zero2_components_partitioned_by_world():
    e = est(zero(2), gpus=8)
    pn = P // 8
    assert comp(e, "params") == 2 * P
    assert comp(e, "master") == 4 * pn
    assert comp(e, "optimizer") == 8 * pn
    assert comp(e, "grad_partition") == 2 * pn
    assert comp(e, "fp32_grads") == 4 * pn
    assert comp(e, "bucket") == 500_000_000 * 2  # one buffer: overlap_comm defaults to false below stage 3
    assert comp(e, "allgather") == 0
    # model states add up to DeepSpeed's 2P + 18P/N
    assert sum(c.bytes for c in e.components if c.model_state and c.where == "gpu") == 2 * P + 18 * pn


def test_zero1_holds_full_gradients_until_reduced():
    e = est(zero(1), gpus=8)
    grads = [c for c in e.components if c.key == "grads"]
    assert grads[0].bytes == 2 * P and grads[0].moments == (RED,)


def test_overlap_comm_doubles_the_stage_1_2_bucket_not_stage_3():
    assert comp(est(zero(2, overlap_comm=True)), "bucket") == 2 * 2 * 500_000_000
    assert comp(est(zero(1, overlap_comm=True, reduce_bucket_size=1e8)), "bucket") == 2 * 2 * 100_000_000
    z3 = est(zero(3))  # overlap_comm defaults to true at stage 3, still one buffer (stage3.py:782)
    assert z3.plan.overlap and comp(z3, "bucket") == 2 * 500_000_000


def test_fp32_training_uses_four_byte_buckets_and_a_stage3_master_copy():
    cfg = {"optimizer": {"type": "AdamW"}, "zero_optimization": {"stage": 3}}
    e = est(cfg)
    assert e.plan.precision == "fp32"
    assert comp(e, "bucket") == 4 * 500_000_000
    # stage3.py:1162's alias never fires (torch.device vs str): the fp32 partition is cloned (:1170)
    assert comp(e, "master", "gpu") == 4 * e.model.params


def test_zero3_offload_moves_optimizer_and_params_to_host():
    cfg = zero(3, offload_optimizer={"device": "cpu", "pin_memory": False},
               offload_param={"device": "cpu", "pin_memory": False})
    e = est(cfg, gpus=8)
    pn = P // 8
    assert comp(e, "optimizer", "host") == 8 * pn
    assert comp(e, "master", "host") == 4 * pn
    assert comp(e, "params", "host") == 2 * pn
    assert not any(c.where == "gpu" and c.key in ("optimizer", "master", "params") for c in e.components)
    # host per node: every local rank holds its partition
    assert e.per_node_host_covered_bytes == 8 * e.per_process_host_covered_bytes


def test_pinned_buffers_round_up_to_a_power_of_two():
    pinned = est(zero(3, offload_optimizer={"device": "cpu", "pin_memory": True}), params=600_000_000)
    plain = est(zero(3, offload_optimizer={"device": "cpu", "pin_memory": False}), params=600_000_000)
    assert comp(pinned, "grad_partition") == pow2ceil(2 * 600_000_000) == 2**31
    assert comp(plain, "grad_partition") == 2 * 600_000_000


def test_pin_memory_default_depends_on_the_deepspeed_version():
    cfg = zero(2, offload_optimizer={"device": "cpu"})
    assert plan_from_view(view(cfg, deepspeed_version="0.19.8")).pin_optimizer is True
    assert plan_from_view(view(cfg, deepspeed_version="0.19.4")).pin_optimizer is False


def test_stage3_live_parameter_budget_and_prefetch():
    e = est(zero(3, stage3_max_live_parameters=1e8, stage3_max_reuse_distance=1e8,
                 stage3_prefetch_bucket_size=2e7), gpus=8)
    assert comp(e, "gathered") == 2 * 100_000_000 + 2 * 50_000_000  # live budget (fwd) + module reduced (end)
    assert comp(e, "prefetch") == 2 * 20_000_000


def test_stage3_reuse_distance_keeps_half_of_it_gathered_whatever_the_live_budget():
    # partitioned_param_coordinator.py:653-661: after its forward a module is kept while its backward comes within
    # max_reuse_distance (2 x the parameters after it), so the forward ends with the last 1e9 / 2 gathered although
    # the live budget (1e8) stops prefetching (:453). The CPU trace (benchmarks/zero3_gather_trace.py --live 1e8)
    # shows 0.39 P gathered at the end of the forward for a reuse distance of 0.78 P.
    e = est(zero(3, stage3_max_live_parameters=1e8), gpus=8)
    rows = {c.key + "/" + c.moments[0]: c.bytes for c in e.components if c.key in ("gathered", "gathered_bwd")}
    assert rows == {"gathered/" + FWD: 2 * 500_000_000,  # max(1e8 live, 1e9 / 2 kept, L 5e7)
                    "gathered/" + RED: 2 * 50_000_000,  # the module being reduced at the end
                    # first bucket reduced (f = 0.5): the kept half is used up, the live budget + prefetch remain
                    "gathered_bwd/" + BWD: 2 * (100_000_000 + 50_000_000)}
    assert comp(e, "prefetch") == 2 * 50_000_000
    # the live budget binds the forward once the reuse distance is at most twice it
    e = est(zero(3, stage3_max_live_parameters=1e8, stage3_max_reuse_distance=2e8), gpus=8)
    assert [c.bytes for c in e.components if c.key == "gathered" and FWD in c.moments] == [2 * 100_000_000]


def test_peak_at_initialize_allocator_cache_counts_what_the_freed_blocks_cannot_hold():
    # ZeRO-2 + optimizer offload, one GPU, P 1e9, largest tensor 5e7: initialize holds the 16-bit parameters and
    # their flat copy (4e9 B). The blocks it frees hold up to 1e8 B (the largest tensor), so the step's 1e9 B reduce
    # bucket and the 4e8 B fp64 copy of the largest gradient take new segments; the 1e8 B staging buffers do not.
    e = est(zero(2, offload_optimizer={"device": "cpu"}))
    assert e.gpu_peak_moment == INIT and e.per_gpu_covered_bytes == 4 * P
    assert comp(e, "margin_cache") == 1_000_000_000 + 400_000_000


def test_smaller_buckets_promise_what_the_model_saves():
    # overlap_comm at ZeRO-2 + offload: the two 1e9 B buckets put the peak in backward (4.6e9 B). Smaller buckets
    # without overlap move it to initialize (4e9 B), where the fp64 block of the largest gradient (4e8 B) is no
    # longer part of the peak but still takes its own segment: the suggestion promises the recomputed need, not
    # the 0.84e9 B the old allocator-cache rule (every step buffer minus the peak, nothing at initialize) gave.
    e = est(zero(2, overlap_comm=True, offload_optimizer={"device": "cpu"}), gpu_memory=6 * GiB)
    assert e.gpu_peak_moment == BWD and e.per_gpu_covered_bytes == 4_600_000_000
    (s,) = [s for s in e.suggestions if s.title == "smaller communication buckets"]
    assert s.change == {"zero_optimization.reduce_bucket_size": 50_000_000, "zero_optimization.overlap_comm": False}
    assert s.per_gpu_bytes == 4 * P + CUDA_CONTEXT_BYTES + 400_000_000 + int(0.4 * 4 * P)
    # turning overlap_comm off also frees the reduction stream's pool (402,653,184 B, see the test below)
    assert e.per_gpu_bytes - s.per_gpu_bytes == 440_000_000 + 402_653_184


def test_overlap_comm_with_optimizer_offload_reserves_the_reduction_stream_pool():
    # ZeRO-2 + overlap_comm + optimizer offload, largest tensor 5e7: the fp64 norm copy (8 B x 5e7 = 4e8 B) is
    # allocated on the reduction stream, whose pool the default stream's free blocks cannot serve: 4e8 B rounded up
    # to 2 MiB (191 x 2 MiB) plus one 2 MiB segment for the fp64 norms, in the margin only.
    cfg = zero(2, overlap_comm=True, offload_optimizer={"device": "cpu"})
    e = est(cfg)
    (pool,) = [c for c in e.components if c.key == "margin_stream_pool"]
    assert (pool.where, pool.margin, pool.bytes) == ("gpu", True, 191 * 2**20 * 2 + 2 * 2**20)
    assert "stage_1_and_2.py:2239-2240" in pool.formula
    assert comp(e, "offload_temp") == 400_000_000
    # no pool without overlap_comm, without optimizer offload, or at ZeRO-3 (a different reduction path)
    for other in (zero(2, offload_optimizer={"device": "cpu"}), zero(2, overlap_comm=True),
                  zero(3, offload_optimizer={"device": "cpu"})):
        assert not [c for c in est(other).components if c.key == "margin_stream_pool"]


@pytest.mark.parametrize("target,offload,temporaries", [
    ("deepspeed", None, 4 * P // 8),  # the script's torch.optim.AdamW: foreach sqrt of one sub-group (Pn here)
    ("accelerate", None, 4 * P // 8),
    ("hf", None, None),  # the Trainer's adamw_torch_fused: no temporaries
    ("deepspeed", {"device": "cpu"}, None),  # offload: DeepSpeedCPUAdam runs, not the client optimizer
])
def test_client_optimizer_step_temporaries(target, offload, temporaries):
    cfg = zero(3, **({"offload_optimizer": offload} if offload else {}))
    del cfg["optimizer"]
    e = est(cfg, gpus=8, target=target)
    rows = [c.bytes for c in e.components if c.key == "opt_temp" and c.where == "gpu"]
    assert rows == ([temporaries] if temporaries else [])
    assert e.plan.client_optimizer and any("no optimizer type in the config" in a for a in e.assumptions)


def test_zero3_defragment_cpu_buffer_on_the_host_at_initialize():
    e = est(zero(3), gpus=4)
    (row,) = [c for c in e.components if c.key == "defrag_cpu"]
    assert (row.where, row.bytes, row.moments) == ("host", 2 * P // 4, (INIT,))
    e = est(zero(3, offload_param={"device": "cpu"}), gpus=4)
    assert not [c for c in e.components if c.key == "defrag_cpu"]


def test_zero_fields_read_under_either_name():
    a = plan_from_view(view(zero(3, stage3_prefetch_bucket_size=123)))
    b = plan_from_view(view(zero(3, prefetch_bucket_size=123)))
    assert a.prefetch_bucket_size == b.prefetch_bucket_size == 123


def test_hf_auto_buckets_use_the_hidden_size():
    cfg = zero(3, reduce_bucket_size="auto", stage3_prefetch_bucket_size="auto",
               stage3_param_persistence_threshold="auto")
    plan = plan_from_view(view(cfg, target="hf"), load_hf_config(TINYLLAMA))
    assert plan.reduce_bucket_size == 2048 * 2048
    assert plan.prefetch_bucket_size == int(0.9 * 2048 * 2048)
    assert plan.param_persistence_threshold == 10 * 2048
    assert any("hidden^2" in a for a in plan.assumptions)
    # raw DeepSpeed drops "auto" in zero_optimization: the default applies
    assert plan_from_view(view(cfg, target="deepspeed")).reduce_bucket_size == 500_000_000


@pytest.mark.parametrize("opt,params,state", [
    ("Adam", {}, 8), ("AdamW", {}, 8), ("Lamb", {}, 8), ("Lion", {}, 4), ("Adagrad", {}, 4),
    ("SGD", {"momentum": 0.9}, 4), ("SGD", {}, 0), ("RMSprop", {"momentum": 0.9, "centered": True}, 12),
])
def test_optimizer_state_bytes(opt, params, state):
    cfg = zero(2)
    cfg["optimizer"] = {"type": opt, "params": params}
    e = est(cfg, gpus=4)
    assert comp(e, "optimizer") == state * P // 4


def test_missing_optimizer_assumes_adamw_and_says_so():
    cfg = zero(2)
    del cfg["optimizer"]
    e = est(cfg)
    assert e.plan.optimizer_state_bytes == 8 and any("AdamW" in a for a in e.assumptions)


def test_torch_adam_adds_step_temporaries():
    cfg = zero(2)
    cfg["optimizer"]["params"] = {"torch_adam": True}
    assert comp(est(cfg), "opt_temp") == 4 * P
    assert not [c for c in est(zero(2)).components if c.key == "opt_temp"]


def test_bf16_master_and_optimizer_states():
    cfg = zero(2)
    cfg["bf16"].update(bf16_master_weights_and_grads=True, bf16_optimizer_states=True)
    e = est(cfg)
    assert comp(e, "master") == 2 * P and comp(e, "optimizer") == 4 * P


def test_stage_decided_at_run_time_is_an_error():
    with pytest.raises(EstimateError):
        est({"zero_optimization": {"stage": "auto"}}, target="accelerate")


def test_offload_param_below_stage3_is_ignored_with_a_note():
    e = est(zero(2, offload_param={"device": "cpu"}))
    assert comp(e, "params", "gpu") == 2 * P
    assert any("ignored at stage 2" in a for a in e.assumptions)


def test_peak_is_the_largest_moment_not_the_sum():
    e = est(zero(2), gpus=8)
    moments = {m: sum(c.bytes for c in e.components if c.where == "gpu" and not c.margin and m in c.moments)
               for m in (FWD, RED, CONV, UPD)}
    assert e.per_gpu_covered_bytes == max(moments.values())
    assert e.per_gpu_covered_bytes < sum(c.bytes for c in e.components if c.where == "gpu" and not c.margin)


def test_margin_is_documented_and_added():
    e = est(zero(2), gpus=2)
    margins = [c for c in e.components if c.margin and c.where == "gpu"]
    assert {c.key for c in margins} == {"margin_context", "margin_cache", "margin_allocator"}
    assert e.per_gpu_bytes == e.per_gpu_covered_bytes + sum(c.bytes for c in margins)
    assert "NCCL" in margins[0].name  # world > 1


def test_activations_need_a_shape_and_a_sequence_length():
    model = load_hf_config(TINYLLAMA)
    cfg = json.load(open(os.path.join(SEED, "ds_zero2.json")))
    no_seq = estimate_view(view(cfg), model, Cluster(1, 1))
    assert not no_seq.activations_known and "activations" in no_seq.not_covered[0]
    full = estimate_view(view(cfg), model, Cluster(1, 1), Workload(seq_len=2048))
    ckpt = estimate_view(view(cfg), model, Cluster(1, 1), Workload(seq_len=2048, checkpointing=True))
    act, act_ckpt = comp(full, "activations"), comp(ckpt, "activations")
    # micro-batch 4 (the config's) x 2048 tokens: 22 layers x (70,656 B + two fp32 norm copies of 4h) + logits
    # 32,000 x 12 B + embeddings
    assert act == 4 * 2048 * (22 * (70_656 + 2 * 4 * 2048) + 32_000 * 12 + 2 * 2 * 2048)
    assert act_ckpt < act / 3
    half = estimate_view(view(cfg), model, Cluster(1, 1), Workload(seq_len=2048, micro_batch=2))
    assert comp(half, "activations") * 2 == act


def test_verdicts_and_suggestions():
    model = load_hf_config(TINYLLAMA)
    cfg = json.load(open(os.path.join(SEED, "ds_zero1.json")))
    e = estimate_view(view(cfg), model, Cluster(1, 1), gpu_memory=24 * GiB)
    assert e.verdict == "does-not-fit" and e.fits_gpu is False
    assert e.suggestions and e.suggestions[0].fits
    assert all(s.per_gpu_bytes < e.per_gpu_bytes for s in e.suggestions)
    roomy = estimate_view(view(cfg), model, Cluster(1, 1), gpu_memory=80 * GiB)
    assert roomy.verdict == "fits" and not roomy.suggestions
    tight = estimate_view(view(cfg), model, Cluster(1, 1), gpu_memory=int(e.per_gpu_bytes / 0.95))
    assert tight.verdict == "tight"
    assert estimate_view(view(cfg), model, Cluster(1, 1)).verdict is None


def test_stage3_offload_fits_where_stage1_does_not():
    """The worked example of docs/estimate.md: TinyLlama on a 24 GB GPU."""
    model = load_hf_config(TINYLLAMA)
    for gpus in (1, 2, 8):
        z1 = estimate_view(view(json.load(open(os.path.join(SEED, "ds_zero1.json")))), model, Cluster(1, gpus),
                           gpu_memory=24 * GiB)
        z3 = estimate_view(view(json.load(open(os.path.join(SEED, "ds_zero3_offload.json")))), model,
                           Cluster(1, gpus), gpu_memory=24 * GiB)
        assert z3.per_gpu_bytes < z1.per_gpu_bytes
        assert z3.verdict == "fits"
        assert not any(c.where == "gpu" and c.key in ("optimizer", "master") for c in z3.components)
    assert z1.verdict == "fits"  # 8 GPUs: ZeRO-1 partitions enough too
    one = estimate_view(view(json.load(open(os.path.join(SEED, "ds_zero1.json")))), model, Cluster(1, 1),
                        gpu_memory=24 * GiB)
    assert one.verdict == "does-not-fit"


def test_json_has_the_documented_fields():
    d = est(zero(2), gpus=8).to_dict()
    assert {"per_gpu_bytes", "per_node_host_bytes", "breakdown", "per_gpu_covered_bytes", "per_gpu_margin_bytes",
            "gpu_peak_moment", "verdict", "assumptions", "suggestions"} <= set(d)
    for row in d["breakdown"]:
        assert {"name", "bytes", "where", "formula"} <= set(row)
        assert row["where"] in ("gpu", "host", "nvme")
        assert isinstance(row["bytes"], int) and row["formula"]


def test_nvme_offload_counts_swap_buffers_and_nvme_bytes():
    cfg = zero(3, offload_optimizer={"device": "nvme", "nvme_path": "/nvme", "buffer_count": 4},
               offload_param={"device": "nvme", "nvme_path": "/nvme", "buffer_count": 5, "buffer_size": 1e8,
                              "max_in_cpu": 1e8})
    e = est(cfg, params=4 * P, gpus=2)
    assert comp(e, "param_swap") == 5 * 100_000_000 * 2
    assert comp(e, "opt_swap") == 4 * 1_000_000_000 * 4
    assert e.per_node_nvme_bytes > 0


def test_plan_describe_and_cluster():
    p = Plan(stage=3, precision="bf16", offload_optimizer="cpu", offload_param="cpu")
    assert "offload optimizer -> cpu, params -> cpu" in p.describe()
    assert Cluster(2, 8).world == 16 and "2 nodes x 8 GPUs" in Cluster(2, 8).describe()
    e = estimate_plan(p, from_params(P, 10**8), Cluster(1, 1))
    assert e.per_gpu_bytes > 0


def row(e, key):
    (c,) = [c for c in e.components if c.key == key]
    return c


def test_stage3_reduce_scatter_staging_is_alive_only_while_a_bucket_is_reduced():
    """reduce_scatter_coalesced's torch.cat runs when a bucket is reduced: with P <= reduce_bucket_size only at the
    end of backward (no activations, no gathered parameters then); with more, mid-backward too."""
    small = est(zero(3), params=400_000_000, gpus=2)
    assert row(small, "rs_staging").moments == (RED,)
    assert not any(c.key in ("gathered_bwd", "activations_bwd") for c in small.components)
    big = est(zero(3), params=P, gpus=2)
    assert row(big, "rs_staging").moments == (BWD, RED)
    # the parameters still needed when the first bucket (5e8 of the 1e9 gradients) is reduced
    assert comp(big, "gathered_bwd") == 2 * 500_000_000


def test_stage3_offload_reduction_temporaries():
    """partition_grads copies each reduced partition back from the pinned buffer (A x n), takes its fp64 norm
    (8 x n) and sends an fp32 copy to the host (4 x n), n = the largest tensor's partition."""
    e = est(zero(3, offload_optimizer={"device": "cpu"}, offload_param={"device": "cpu"}), params=P,
            largest=60_000_000, gpus=2)
    assert comp(e, "offload_temp") == (2 + 8) * 30_000_000
    assert comp(est(zero(3), params=2 * P, gpus=2), "prefetch") > 0
    assert comp(est(zero(3), params=2 * P, gpus=1), "prefetch") == 0  # one rank, partition on the GPU: aliased
    assert not any(c.key == "offload_temp" for c in est(zero(3), params=P, gpus=2).components)


def test_stage2_offload_reduction_temporaries_and_late_gradient_partition():
    e = est(zero(2, offload_optimizer={"device": "cpu"}), params=P, largest=60_000_000)
    assert comp(e, "offload_temp") == 8 * 60_000_000  # fp64 norm of the largest gradient
    no_off = est(zero(2), params=400_000_000)
    # grads_in_partition is allocated by the first reduction: the end of backward when P <= reduce_bucket_size
    assert FWD not in row(no_off, "grad_partition").moments


def test_stage2_initialize_flattens_on_the_gpu_when_there_is_room():
    off = zero(2, offload_optimizer={"device": "cpu"})
    e = est(off, params=P)
    assert comp(e, "init_copy") == 2 * P and e.gpu_peak_moment == INIT  # params + their flat copy
    assert e.per_gpu_covered_bytes == 4 * P
    small_gpu = est(off, params=P, gpu_memory=4 * GiB)  # no room for two copies: DeepSpeed flattens on the CPU
    assert comp(small_gpu, "init_copy") == 2 * P  # only the master partition's clone (one rank: Pn = P)
    assert comp(est(off, params=P, gpus=8, gpu_memory=4 * GiB), "init_copy") == 2 * P // 8
    # without offload the fp32 master is created after the flatten: the moment holds 2 x D x P, not more
    eight = est(zero(2), params=P, gpus=8)
    assert sum(c.bytes for c in eight.components if c.where == "gpu" and not c.margin and INIT in c.moments) == 4 * P


def test_parts_of_rows_are_not_counted_twice_by_the_allocator_cache():
    model = from_params(P, 50_000_000)
    model.shape = Shape(hidden=2048, layers=24, heads=16, intermediate=8192, vocab=32000)
    e = estimate_view(view(zero(3)), model, Cluster(1, 2), Workload(seq_len=1024, micro_batch=2))
    assert comp(e, "activations_bwd") < comp(e, "activations")
    step = sum(c.bytes for c in e.components if c.where == "gpu" and not c.margin
               and c.key not in ("activations_bwd", "gathered_bwd") and set(c.moments) & {FWD, BWD, RED, CONV, UPD})
    assert comp(e, "margin_cache") == step - e.per_gpu_covered_bytes
