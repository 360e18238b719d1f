"""Inputs for the runtime differential: the example configs in fixtures/, the real-world corpus, and a seeded stream
of mutations aimed at what happens at initialize and in the first steps.

A mutation takes a base (an example, a corpus config with its HF-filled "auto" values resolved as the HF Trainer
would, or an empty config) and sets one to four axes: ZeRO stage, offload (optimizer/param, cpu/nvme/none, at the
top level by mistake), precision, optimizer, scheduler, batch triple, bucket and ZeRO-3 sizes, removed and renamed
keys. Every choice goes through one `random.Random(seed)`; bases are read in sorted order; duplicates are skipped:
the same seed gives the same configs. Batch sizes stay small (micro <= 4, accumulation <= 4) so that a run takes
about a second on CPU; the values that matter (bucket sizes, thresholds) are not capped.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: the parse differential's generator and `Case`
from differential.mutations import CORPUS, Case, _load, resolve_auto  # noqa: E402

ROOT = HERE.parents[1]
EXAMPLES = ROOT / "fixtures" / "examples"


def base_cases() -> list[Case]:
    examples = [Case(f"example:{p.relative_to(EXAMPLES)}", "example", p.read_bytes())
                for p in sorted(EXAMPLES.rglob("*.json")) if p.name != "training_args.json"]
    corpus = [Case(f"corpus:{p.name}", "corpus", p.read_bytes()) for p in sorted(CORPUS.glob("*.json"))]
    return examples + corpus


# -- the axes -----------------------------------------------------------------------------------------------------
def _zero(d: dict) -> dict:
    z = d.get("zero_optimization")
    if not isinstance(z, dict):
        z = d["zero_optimization"] = {}
    return z


def a_stage(rnd: random.Random, d: dict) -> str:
    stage = rnd.choice([0, 1, 2, 3, 3, None])
    if stage is None:
        d.pop("zero_optimization", None)
        return "no zero_optimization"
    _zero(d)["stage"] = stage
    return f"stage {stage}"


def a_offload(rnd: random.Random, d: dict) -> str:
    which = rnd.choice(["offload_optimizer", "offload_optimizer", "offload_param"])
    device = rnd.choice(["cpu", "cpu", "cpu", "none", "nvme"])
    block: dict[str, Any] = {"device": device}
    if rnd.random() < 0.5:
        block["pin_memory"] = rnd.choice([True, False])
    if device == "nvme":
        block["nvme_path"] = "/local_nvme"
    if which == "offload_optimizer" and rnd.random() < 0.15:
        block["ratio"] = rnd.choice([0.3, 0.5, 1.0])
    if rnd.random() < 0.12:  # at the top level by mistake (DeepSpeed ignores it there)
        d[which] = block
        return f"top-level {which} {device}"
    if rnd.random() < 0.25:
        _zero(d)["stage"] = rnd.choice([1, 2, 3])
    _zero(d)[which] = block
    return f"{which} {device} (stage {_zero(d).get('stage', 0)})"


def a_precision(rnd: random.Random, d: dict) -> str:
    for k in ("fp16", "bf16", "bfloat16", "amp"):
        d.pop(k, None)
    mode = rnd.choice(["fp32", "bf16", "bf16", "fp16", "fp16", "both", "bfloat16", "fp16-scale", "auto"])
    if mode == "bf16":
        d["bf16"] = {"enabled": True}
    elif mode == "fp16":
        d["fp16"] = {"enabled": True}
    elif mode == "both":
        d["fp16"], d["bf16"] = {"enabled": True}, {"enabled": True}
    elif mode == "bfloat16":
        d["bfloat16"] = {"enabled": True}
        if rnd.random() < 0.5:
            d["bf16"] = {"enabled": False}
    elif mode == "fp16-scale":
        d["fp16"] = {"enabled": True, rnd.choice(["loss_scale", "initial_scale_power", "loss_scale_window",
                                                  "hysteresis", "min_loss_scale"]): rnd.choice([0, 1, 8, 16, 32, 128])}
    elif mode == "auto":
        d[rnd.choice(["fp16", "bf16"])] = {"enabled": "auto"}
    return f"precision {mode}"


OPTIMIZERS = ["Adam", "AdamW", "Adam", "Lamb", "Lion", "Adagrad", "OneBitAdam", "SGD", "RMSprop", "Foo", "Muon",
              "ZeroOneAdam", "OneBitLamb"]


def a_optimizer(rnd: random.Random, d: dict) -> str:
    t = rnd.choice(OPTIMIZERS + [None, None])
    if t is None:
        d.pop("optimizer", None)
        return "no optimizer (client AdamW)"
    params: dict[str, Any] = {"lr": rnd.choice([1e-4, 3e-4, 0.01])}
    extra = rnd.random()
    if extra < 0.15:
        params["weight_decay"] = 0.01
    elif extra < 0.25:
        params["adam_w_mode"] = rnd.choice([True, False])
    elif extra < 0.32:
        params["torch_adam"] = True
    elif extra < 0.38:
        params["momentum"] = 0.9
    elif extra < 0.42:
        params["betas"] = [0.9, 0.95]
    d["optimizer"] = {"type": t, "params": params}
    if rnd.random() < 0.1:
        d["zero_allow_untested_optimizer"] = rnd.choice([True, False])
    return f"optimizer {t} {sorted(params)}"


def a_scheduler(rnd: random.Random, d: dict) -> str:
    t = rnd.choice(["WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle", "LRRangeTest", "StepLR",
                    "ReduceLROnPlateau", "CosineAnnealingLR", "Foo", None])
    if t is None:
        d.pop("scheduler", None)
        return "no scheduler"
    params: dict[str, Any] = {
        "WarmupLR": {"warmup_num_steps": rnd.choice([0, 1, 10]), "warmup_max_lr": 1e-4},
        "WarmupDecayLR": {"warmup_num_steps": rnd.choice([1, 10]), "total_num_steps": rnd.choice([5, 100])},
        "WarmupCosineLR": {"warmup_num_steps": rnd.choice([1, 10]), "total_num_steps": rnd.choice([5, 100])},
        "OneCycle": {"cycle_max_lr": 1e-3, "cycle_min_lr": 1e-5, "cycle_first_step_size": 5},
        "LRRangeTest": {"lr_range_test_min_lr": 1e-5},
        "StepLR": {"step_size": 2},
        "ReduceLROnPlateau": {"patience": 1},
        "CosineAnnealingLR": {"T_max": 10},
        "Foo": {},
    }[t]
    if rnd.random() < 0.15:
        params["bogus_param"] = 1
    d["scheduler"] = {"type": t, "params": params}
    return f"scheduler {t} {sorted(params)}"


def a_batch(rnd: random.Random, d: dict) -> str:
    for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        d.pop(k, None)
    micro, gas = rnd.choice([1, 2, 4]), rnd.choice([1, 2, 4])
    shape = rnd.choice(["triple", "micro", "micro+gas", "train", "train+micro", "bad-triple", "none"])
    if shape in ("triple", "bad-triple"):
        d.update(train_batch_size=micro * gas + (1 if shape == "bad-triple" else 0),
                 train_micro_batch_size_per_gpu=micro, gradient_accumulation_steps=gas)
    elif shape == "micro":
        d["train_micro_batch_size_per_gpu"] = micro
    elif shape == "micro+gas":
        d.update(train_micro_batch_size_per_gpu=micro, gradient_accumulation_steps=gas)
    elif shape == "train":
        d["train_batch_size"] = micro * gas
    elif shape == "train+micro":
        d.update(train_batch_size=micro * gas, train_micro_batch_size_per_gpu=micro)
    return f"batch {shape} micro {micro} gas {gas}"


def a_buckets(rnd: random.Random, d: dict) -> str:
    z = _zero(d)
    key = rnd.choice(["reduce_bucket_size", "allgather_bucket_size", "stage3_prefetch_bucket_size",
                      "stage3_param_persistence_threshold", "stage3_max_live_parameters", "stage3_max_reuse_distance",
                      "sub_group_size", "contiguous_gradients", "overlap_comm", "reduce_scatter",
                      "round_robin_gradients"])
    if key in ("contiguous_gradients", "overlap_comm", "reduce_scatter", "round_robin_gradients"):
        z[key] = rnd.choice([True, False])
    else:
        z[key] = rnd.choice([0, 1, 100, 1000, 10**5, 5 * 10**8, 1e9, 1e12])
    return f"{key} {z[key]}"


RENAMES = [  # (where, key, value): removed, deprecated and renamed keys, and keys in the wrong place
    ("/zero_optimization", "cpu_offload", True), ("/zero_optimization", "cpu_offload_params", True),
    ("/zero_optimization", "stage3_gather_fp16_weights_on_model_save", True),
    ("/zero_optimization", "stage3_gather_16bit_weights_on_model_save", True),
    ("/zero_optimization", "allgather_partitions", False), ("/zero_optimization", "ignore_unused_parameters", False),
    ("", "zero_optimisation", {"stage": 2}), ("", "stage", 2), ("", "gradient_clipp1ng", 1.0),
    ("", "gradient_clipping", 0.5), ("", "zero_force_ds_cpu_optimizer", False), ("", "prescale_gradients", True),
    ("", "amp", {"enabled": True}), ("", "sparse_attention", {"mode": "fixed"}), ("", "fp32_allreduce", True),
    ("", "autotuning", {"enabled": True}), ("", "wall_clock_breakdown", True), ("", "steps_per_print", 1),
    ("", "communication_data_type", "fp16"), ("", "data_types", {"grad_accum_dtype": "fp32"}),
    ("/aio", "thread_count", 2), ("", "activation_checkpointing", {"partition_activations": True}),
    ("", "flops_profiler", {"enabled": True}), ("", "elasticity", {"enabled": True}),
]


def a_rename(rnd: random.Random, d: dict) -> str:
    where, key, value = rnd.choice(RENAMES)
    target = d if not where else (_zero(d) if where == "/zero_optimization" else d.setdefault(where[1:], {}))
    if not isinstance(target, dict):
        return "rename skipped"
    target[key] = copy.deepcopy(value)
    return f"{where or '/'}{'/' if where else ''}{key} = {json.dumps(value)}"


AXES = {"stage": a_stage, "offload": a_offload, "precision": a_precision, "optimizer": a_optimizer,
        "scheduler": a_scheduler, "batch": a_batch, "buckets": a_buckets, "renamed": a_rename}


def mutations(count: int, seed: int, bases: list[Case] | None = None) -> list[Case]:
    """`count` distinct configs; kind = the first axis set (the table's row)."""
    rnd = random.Random(seed)
    bases = base_cases() if bases is None else bases
    parsed = [(b, d) for b in bases if (d := _load(b.text)) is not None]
    names = sorted(AXES)
    seen = {b.data for b in bases}
    out: list[Case] = []
    attempts = 0
    while len(out) < count:
        attempts += 1
        if attempts > count * 50:
            raise RuntimeError("the runtime generator keeps producing duplicates")
        if rnd.random() < 0.3:
            source, d = "empty", {"train_micro_batch_size_per_gpu": 2}
        else:
            base, d = rnd.choice(parsed)
            source, d = base.id, copy.deepcopy(d)
        resolve_auto(d)  # the HF Trainer's fills: the axes, not a leftover "auto", should decide
        for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
            if isinstance(d.get(k), int) and not isinstance(d.get(k), bool) and d[k] > 4:
                d[k] = 4  # a fast run; the batch axis makes the inconsistent triples
        if "train_batch_size" in d and {"train_micro_batch_size_per_gpu", "gradient_accumulation_steps"} <= set(d):
            d.pop("train_batch_size")
        axes = rnd.sample(names, rnd.choice([1, 2, 2, 3, 4]))
        what = "; ".join(AXES[a](rnd, d) for a in axes)
        data = (json.dumps(d, indent=rnd.choice([None, 2])) + "\n").encode()
        if data in seen:
            continue
        seen.add(data)
        out.append(Case(f"rt:{seed}:{len(out)}", axes[0], data, source, what))
    return out
