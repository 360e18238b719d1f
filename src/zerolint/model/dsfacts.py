"""DeepSpeed (and torch) facts as plain data, for the view and the rules. No torch or deepspeed import.

Every table cites where it comes from. Unless a comment says otherwise the source is the DeepSpeed 0.19.8 sdist
(`deepspeed/...` paths) and, for torch classes, torch 2.13 (the signatures of `__init__`, read once and pasted
here). Older DeepSpeed facts were read from the 0.16.9, 0.17.6, 0.18.9, 0.19.6 and 0.19.7 sdists.

Add to this module with small, cited edits; rules and the view import from it.
"""

from __future__ import annotations

import re as _re

# -- optimizers ---------------------------------------------------------------------------------------------------

# runtime/config.py:52-66. `optimizer.type` is lower-cased and matched against these (config.py:519-520).
DEEPSPEED_OPTIMIZERS = ("adagrad", "adam", "adamw", "lamb", "muadam", "muadamw", "musgd", "lion", "muon")
# How the names are usually written (for messages and did-you-mean).
DEEPSPEED_OPTIMIZER_SPELLING = {
    "adagrad": "Adagrad", "adam": "Adam", "adamw": "AdamW", "lamb": "Lamb", "muadam": "MuAdam",
    "muadamw": "MuAdamW", "musgd": "MuSGD", "lion": "Lion", "muon": "Muon",
}
# 1-bit optimizers: native names until 0.19.6 (0.19.6 runtime/config.py:84-87), gone from 0.19.7 (0.19.7
# runtime/config.py:80-83), so the name falls through to `getattr(torch.optim, name)` and fails.
REMOVED_OPTIMIZERS = {
    "onebitadam": ("OneBitAdam", "0.19.7"),
    "zerooneadam": ("ZeroOneAdam", "0.19.7"),
    "onebitlamb": ("OneBitLamb", "0.19.7"),
}
# 1-bit optimizer arguments (none of DeepSpeed's other optimizers takes them).
ONEBIT_PARAMS = ("freeze_step", "cuda_aware", "comm_backend_name", "var_freeze_step", "var_update_scaler",
                 "local_step_scaler", "local_step_clipper", "max_coeff", "min_coeff", "coeff_beta", "factor_max",
                 "factor_min", "factor_threshold")

# Any other `optimizer.type` is `getattr(torch.optim, name)`: CASE-SENSITIVE (engine.py:1985-1987, 2540-2542).
# torch.optim optimizer classes (torch 2.13) and their keyword arguments. Adam, AdamW and Adagrad are listed for
# `torch_adam` / Adagrad, but by name they never get here: they lower-case to DeepSpeed's own names. "Muon"
# likewise. Adafactor needs torch >= 2.5.
TORCH_OPTIMIZER_KWARGS: dict[str, frozenset[str]] = {
    "ASGD": frozenset({"lr", "lambd", "alpha", "t0", "weight_decay", "foreach", "maximize", "differentiable",
                       "capturable"}),
    "Adadelta": frozenset({"lr", "rho", "eps", "weight_decay", "foreach", "capturable", "maximize",
                           "differentiable"}),
    "Adafactor": frozenset({"lr", "beta2_decay", "eps", "d", "weight_decay", "foreach", "maximize"}),
    "Adamax": frozenset({"lr", "betas", "eps", "weight_decay", "foreach", "maximize", "differentiable",
                         "capturable"}),
    "LBFGS": frozenset({"lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size",
                        "line_search_fn"}),
    "NAdam": frozenset({"lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "foreach",
                        "maximize", "capturable", "differentiable"}),
    "RAdam": frozenset({"lr", "betas", "eps", "weight_decay", "decoupled_weight_decay", "foreach", "maximize",
                        "capturable", "differentiable"}),
    "RMSprop": frozenset({"lr", "alpha", "eps", "weight_decay", "momentum", "centered", "capturable", "foreach",
                          "maximize", "differentiable"}),
    "Rprop": frozenset({"lr", "etas", "step_sizes", "capturable", "foreach", "maximize", "differentiable"}),
    "SGD": frozenset({"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach",
                      "differentiable", "fused"}),
    "SparseAdam": frozenset({"lr", "betas", "eps", "maximize"}),
    "Adam": frozenset({"lr", "betas", "eps", "weight_decay", "amsgrad", "foreach", "maximize", "capturable",
                       "differentiable", "fused", "decoupled_weight_decay"}),
    "AdamW": frozenset({"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach", "capturable",
                        "differentiable", "fused"}),
    "Adagrad": frozenset({"lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "foreach",
                          "maximize", "differentiable", "fused"}),
}
# Names torch.optim has that are not optimizer classes one can build from a config: `getattr` finds them, so
# DeepSpeed's name check passes, and calling them fails (Optimizer needs `defaults`; the rest are modules or a
# function).
TORCH_OPTIM_NOT_BUILDABLE = ("Optimizer", "lr_scheduler", "swa_utils", "swap_in_optimizer_params_and_state")

# Keyword arguments of the classes DeepSpeed builds for its own names (the `params` dict is splatted into them).
# ops/adam/fused_adam.py:76-85; ops/adam/cpu_adam.py:15-24; ops/lamb/fused_lamb.py:41-52;
# ops/lion/fused_lion.py:36; ops/lion/cpu_lion.py:15; ops/adagrad/cpu_adagrad.py:14 (identical in 0.16.9-0.19.8).
# `adam_w_mode` / `adamw_mode` are passed by DeepSpeed itself (engine.py:2396-2406), so a user-given
# `adamw_mode` for DeepSpeedCPUAdam is a duplicate keyword (TypeError).
OPTIMIZER_KWARGS: dict[str, frozenset[str]] = {
    "FusedAdam": frozenset({"lr", "bias_correction", "betas", "eps", "weight_decay", "amsgrad", "set_grad_none"}),
    "DeepSpeedCPUAdam": frozenset({"lr", "bias_correction", "betas", "eps", "weight_decay", "amsgrad",
                                   "fp32_optimizer_states"}),
    "ZenFlowCPUAdam": frozenset({"lr", "bias_correction", "betas", "eps", "weight_decay", "amsgrad",
                                 "fp32_optimizer_states"}),
    "FusedLamb": frozenset({"lr", "bias_correction", "betas", "eps", "eps_inside_sqrt", "weight_decay",
                            "max_grad_norm", "max_coeff", "min_coeff", "amsgrad"}),
    "FusedLion": frozenset({"lr", "betas", "weight_decay", "set_grad_none"}),
    "DeepSpeedCPULion": frozenset({"lr", "betas", "weight_decay", "fp32_optimizer_states"}),
    "DeepSpeedCPUAdagrad": frozenset({"lr", "eps", "weight_decay", "amsgrad", "fp32_optimizer_states"}),
    "torch.optim.Adam": TORCH_OPTIMIZER_KWARGS["Adam"],
    "torch.optim.AdamW": TORCH_OPTIMIZER_KWARGS["AdamW"],
    "torch.optim.Adagrad": TORCH_OPTIMIZER_KWARGS["Adagrad"],
}
# Classes that raise RuntimeError("... does not support the AMSGrad variant") for `amsgrad: true`
# (fused_adam.py:87-88, cpu_adam.py:108-110 via add_param_group, fused_lamb.py:55-56).
NO_AMSGRAD = ("FusedAdam", "DeepSpeedCPUAdam", "ZenFlowCPUAdam", "FusedLamb")
# Muon (engine.py:2411-2475): only these keys are read from `params`; the rest is never passed anywhere.
MUON_KEYS = ("lr", "momentum", "weight_decay", "ns_method", "betas", "eps", "muon_lr", "adam_lr")
# What `is_zero_supported_optimizer` accepts (zero/utils.py:45-56, 66-77: `type(optimizer) in` the list, plus
# MuonWithAuxAdam). Everything else needs `zero_allow_untested_optimizer` under ZeRO (engine.py:2297-2304).
ZERO_SUPPORTED_CLASSES = ("torch.optim.Adam", "torch.optim.AdamW", "FusedAdam", "DeepSpeedCPUAdam",
                          "ZenFlowCPUAdam", "torch.optim.Adagrad", "DeepSpeedCPUAdagrad", "DeepSpeedCPULion",
                          "FusedLion", "MuonWithAuxAdam")
# Classes the CPU-offload paths of the master-weights feature accept (stage_1_and_2.py:331-334, stage3.py:299-302).
MASTER_WEIGHTS_CLASSES = ("DeepSpeedCPUAdam",)

# -- LR schedulers ------------------------------------------------------------------------------------------------

# runtime/lr_schedules.py: (required keyword arguments, optional ones). Same in 0.16.9-0.19.8.
DEEPSPEED_SCHEDULERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "LRRangeTest": ((), ("lr_range_test_min_lr", "lr_range_test_step_size", "lr_range_test_step_rate",
                         "lr_range_test_staircase", "last_batch_iteration")),
    "OneCycle": (("cycle_min_lr", "cycle_max_lr"),
                 ("decay_lr_rate", "cycle_first_step_size", "cycle_second_step_size", "cycle_first_stair_count",
                  "cycle_second_stair_count", "decay_step_size", "cycle_momentum", "cycle_min_mom", "cycle_max_mom",
                  "decay_mom_rate", "last_batch_iteration")),
    "WarmupLR": ((), ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type", "last_batch_iteration")),
    "WarmupDecayLR": (("total_num_steps",),
                      ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type", "last_batch_iteration")),
    "WarmupCosineLR": (("total_num_steps",),
                       ("warmup_min_ratio", "warmup_num_steps", "cos_min_ratio", "warmup_type",
                        "last_batch_iteration")),
}
# torch.optim.lr_scheduler classes (torch 2.13): (required, optional). `verbose` was accepted (deprecated) by
# older torch releases, so it is never reported.
TORCH_SCHEDULERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "ConstantLR": ((), ("factor", "total_iters", "last_epoch")),
    "CosineAnnealingLR": (("T_max",), ("eta_min", "last_epoch")),
    "CosineAnnealingWarmRestarts": (("T_0",), ("T_mult", "eta_min", "last_epoch")),
    "CyclicLR": (("base_lr", "max_lr"), ("step_size_up", "step_size_down", "mode", "gamma", "scale_fn", "scale_mode",
                                         "cycle_momentum", "base_momentum", "max_momentum", "last_epoch")),
    "ExponentialLR": (("gamma",), ("last_epoch",)),
    "LinearLR": ((), ("start_factor", "end_factor", "total_iters", "last_epoch")),
    "MultiStepLR": (("milestones",), ("gamma", "last_epoch")),
    "OneCycleLR": (("max_lr",), ("total_steps", "epochs", "steps_per_epoch", "pct_start", "anneal_strategy",
                                 "cycle_momentum", "base_momentum", "max_momentum", "div_factor", "final_div_factor",
                                 "three_phase", "last_epoch")),
    "PolynomialLR": ((), ("total_iters", "power", "last_epoch")),
    "ReduceLROnPlateau": ((), ("mode", "factor", "patience", "threshold", "threshold_mode", "cooldown", "min_lr",
                               "eps")),
    "StepLR": (("step_size",), ("gamma", "last_epoch")),
}
TORCH_SCHEDULER_ALWAYS_OK = ("verbose",)
# torch schedulers that take Python objects (a callable, other schedulers) or are abstract bases: a JSON config
# cannot build them.
TORCH_SCHEDULERS_NOT_FROM_JSON = {
    "LambdaLR": "needs lr_lambda, a Python function",
    "MultiplicativeLR": "needs lr_lambda, a Python function",
    "SequentialLR": "needs a list of scheduler objects",
    "ChainedScheduler": "needs a list of scheduler objects",
    "LRScheduler": "is the abstract base class (get_lr is not implemented)",
    "_LRScheduler": "is the abstract base class (get_lr is not implemented)",
}

# -- data types ---------------------------------------------------------------------------------------------------

# DtypeEnum (runtime/config.py:144-149): every accepted spelling -> canonical name. Exact (case-sensitive).
DTYPE_ALIASES = {
    "torch.float16": "fp16", "fp16": "fp16", "float16": "fp16", "half": "fp16",
    "torch.float32": "fp32", "fp32": "fp32", "float32": "fp32", "float": "fp32",
    "torch.int8": "int8", "int8": "int8",
    "torch.bfloat16": "bf16", "bf16": "bf16", "bfloat16": "bf16",
}


def canonical_dtype(name: object) -> str | None:
    """DtypeEnum's canonical name for a spelling ('bfloat16' -> 'bf16'), None when DtypeEnum rejects it."""
    return DTYPE_ALIASES.get(name) if isinstance(name, str) else None


# DtypeEnum spellings -> canonical name, as a dict (used by View.grad_accum_dtype).
DTYPE_NAMES = DTYPE_ALIASES

# Bytes per element of each canonical dtype.
DTYPE_BYTES: dict[str, int] = {"fp16": 2, "bf16": 2, "fp32": 4, "int8": 1}


def human_bytes(n: float) -> str:
    """1e9 -> '1.0 GB' (decimal units, as DeepSpeed's own memory estimators print)."""
    if n != n or abs(n) >= 1e300:  # NaN, or an int beyond float range (it cannot be divided into a float)
        return f"{n:.3g} bytes" if isinstance(n, float) else f"about 1e{len(str(abs(n))) - 1} bytes"
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


def elements(n: int | float) -> str:
    """5e8 -> '5e8', 123456789 -> '123456789': how a bucket size is usually written."""
    if n != n or n in (float("inf"), float("-inf")):
        return str(n)
    n = int(n)
    if 10**6 <= n < 10**300:  # (a bigger int does not fit a float)
        mant, exp = f"{n:.0e}".split("e")
        if float(f"{mant}e{exp}") == n:
            return f"{mant}e{int(exp)}"
    return str(n)


# -- template placeholders ----------------------------------------------------------------------------------------
# Shapes of a value that a templating step (sed, envsubst, Jinja, Python %-format) replaces before the file is
# used. A whole value must match; `${HOME}/logs` inside a longer string is not a placeholder value.
_PLACEHOLDER_ANY = (
    r"\$\{[^{}]+\}"                          # ${zero_stage}  (shell, envsubst)
    r"|\$[A-Za-z_][A-Za-z0-9_]*"               # $ZERO_STAGE
    r"|\{\{.*\}\}"                             # {{ zero_stage }}  (Jinja, Helm)
    r"|\{%.*%\}"                               # {% ... %}
    r"|%\([A-Za-z_][A-Za-z0-9_]*\)[sdifr]"     # %(batch)d  (Python %-format)
    r"|<[A-Za-z_][A-Za-z0-9_ .\-]*>"           # <BATCH_SIZE>
    r"|@[A-Za-z_][A-Za-z0-9_]*@"               # @BATCH@  (autoconf)
)
# Only for hjson quoteless strings (a JSON file cannot hold them, so they were never meant as strings):
# CONFIG_BATCH_SIZE, FP16_ENABLE. At least one underscore, so DeepSpeed's own upper-case values (WARN, FAIL,
# MOCK, REPLICA) do not count.
_PLACEHOLDER_BARE = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"


def __getattr__(name: str):  # PLACEHOLDER_ANY / PLACEHOLDER_BARE, compiled on first use (~1 ms of every run)
    if name == "PLACEHOLDER_ANY":
        return _re.compile(_PLACEHOLDER_ANY, _re.S)
    if name == "PLACEHOLDER_BARE":
        return _re.compile(_PLACEHOLDER_BARE)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def placeholder_text(value: str, quoteless: bool) -> str | None:
    """The template placeholder a whole string value is, or None. hjson makes a quoteless value run to the end of
    the line, so `CONFIG_BATCH_SIZE,` holds the comma: it is stripped before matching."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if quoteless:
        text = text.rstrip(",").rstrip()
    # Every PLACEHOLDER_ANY form starts with one of these: most values never need the (costly to compile) pattern.
    if text[:1] in ("$", "{", "%", "<", "@") and _re.fullmatch(_PLACEHOLDER_ANY, text, _re.S):
        return text
    if quoteless and _re.fullmatch(_PLACEHOLDER_BARE, text):
        return text
    return None


# -- integers that must not arrive as floats ----------------------------------------------------------------------
# Lax (plain-dict) integer settings that DeepSpeed hands, unconverted, to something that rejects a float. A value
# written `1e6` or `64.0` is an int for DeepSpeed reading the file (hjson, below 1e10) but a float for the HF
# Trainer / Accelerate (json.load); hjson too keeps 1e10 and above as floats. pointer -> (what fails, when).
FLOAT_INTOLERANT_INTS: dict[str, tuple[str, str]] = {
    "/aio/block_size": ("the C++ async-I/O handle (`aio_handle(block_size=...)`, a pybind11 int argument) "
                        "raises TypeError", "when NVMe offload builds its swapper "
                        "(swap_tensor/partitioned_param_swapper.py:111-123, partitioned_optimizer_swapper.py:30-34)"),
    "/aio/queue_depth": ("the C++ async-I/O handle raises TypeError (pybind11 int argument)",
                         "when NVMe offload builds its swapper (swap_tensor/partitioned_param_swapper.py:111-123)"),
    "/aio/intra_op_parallelism": ("the C++ async-I/O handle raises TypeError (pybind11 int argument)",
                                  "when NVMe offload builds its swapper "
                                  "(swap_tensor/partitioned_param_swapper.py:111-123)"),
    "/checkpoint/writer/io_buffer_size": ("`torch.empty(io_buffer_size)` raises TypeError (a size must be an int)",
                                          "when the fast checkpoint writer is created "
                                          "(model_checkpointing/writer_factory.py:75, 90)"),
    "/activation_checkpointing/number_checkpoints": ("`range(number_checkpoints)` raises TypeError",
                                                     "at the first checkpointed forward with "
                                                     "contiguous_memory_optimization "
                                                     "(activation_checkpointing/checkpointing.py:409-416)"),
    "/flops_profiler/top_modules": ("slicing the sorted module list with it raises TypeError",
                                    "when the profile is printed at profile_step "
                                    "(profiling/flops_profiler/profiler.py:495-499)"),
    "/pipeline/activation_checkpoint_interval": ("`range(start, end, interval)` raises TypeError",
                                                 "at the first forward of a PipelineModule "
                                                 "(pipe/engine.py:217-218 hands it to the module; "
                                                 "pipe/module.py:223-233)"),
}
