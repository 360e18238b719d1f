"""Optimizers and LR schedulers: DeepSpeed's own names, what torch.optim offers, and each class's keyword arguments.

Sources: the DeepSpeed 0.19.8 sdist unless a comment says otherwise; torch 2.13 for torch classes (the signatures of
`__init__`, read once and pasted here).
"""

from __future__ import annotations

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

# The classes `deepspeed.initialize` builds for a native name whatever the offload (engine.py:2476-2545); adam,
# adamw, adagrad and lion depend on the offload device and `torch_adam` (View.optimizer_class).
FIXED_OPTIMIZER_CLASSES = {"lamb": "FusedLamb", "muadam": "mup.MuAdam", "muadamw": "mup.MuAdamW",
                           "musgd": "mup.MuSGD", "muon": "MuonWithAuxAdam"}
