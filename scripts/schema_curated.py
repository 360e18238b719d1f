"""Hand-maintained part of the DeepSpeed config schemas (consumed by scripts/gen_schema.py).

DeepSpeed reads the top level and the "lax" sections with plain ``dict.get`` and has no model for them, so
their keys are listed here. Everything that *is* a pydantic model is only referenced (``"@model"``) and
generated from the DeepSpeed version under generation.

Format: plain JSON-Schema fragments plus generator directives (keys starting with ``@``, stripped on output):
  ``@since`` / ``@until``  version gate (inclusive / exclusive) against the full DeepSpeed version generated
                           (0.14.5, 0.15.4, 0.16.9, 0.17.6, 0.18.9, 0.19.8). Where only the minor line was checked
                           the gate says ``0.X.0``; the comment says which releases were compared.
  ``@variants``            list of gated alternatives merged over the node; the first that matches wins.
  ``@model``               ``module:Class`` of a DeepSpeed pydantic model -> ``{"$ref": "#/$defs/Class"}``.
  ``@section``             ``"lax"`` (plain dict, unknown keys ignored) or ``"init"`` (dict splatted into a
                           constructor: unknown keys raise TypeError at init).
  ``@removed``             ``{"in": version, "msg": text}``: from that version on the key makes DeepSpeed raise
                           DeepSpeedConfigError; the generator emits the removed-key stub (and checks that the
                           set of stubs equals DeepSpeed's own ``_REMOVED_*_CONFIG_KEYS`` for that version).

Citations are ``path:line`` in the **0.19.8** sdist unless a version is named; ``config.py`` is
``deepspeed/runtime/config.py`` and ``constants.py`` is ``deepspeed/runtime/constants.py``.
"""

# ----------------------------------------------------------------------------------------------
# small constructors (plain dicts; kept short so that the tables below stay readable)
# ----------------------------------------------------------------------------------------------


NO_DEFAULT = object()  # the key has no meaningful default (e.g. a required constructor argument)


def _scalar(jtype, desc, default, nullable, kw):
    if nullable is None:  # an explicit null is valid where it is the default or one of the enum's values
        nullable = default is None or None in kw.get("enum", ())
    out = {"description": desc}
    if default is not NO_DEFAULT:
        out["default"] = default
    out["type"] = [jtype, "null"] if nullable else jtype
    out.update(kw)
    return out


def B(desc, default=False, **kw):
    return _scalar("boolean", desc, default, False, kw)


def I(desc, default=None, nullable=None, **kw):  # noqa: E743
    return _scalar("integer", desc, default, nullable, kw)


def N(desc, default=None, nullable=None, **kw):
    return _scalar("number", desc, default, nullable, kw)


def S(desc, default=None, nullable=None, **kw):
    return _scalar("string", desc, default, nullable, kw)


# The readers of data_efficiency.data_sampling.curriculum_learning, which DeepSpeed copies whole and reads key by key
CURRICULUM_READERS = {"files": ["runtime/data_pipeline/data_sampling/data_sampler.py",
                                "runtime/data_pipeline/curriculum_scheduler.py"],
                      "constants": ["runtime/data_pipeline/constants.py"]}
# compression/config.py reads each technique's block key by key (get_scalar_param, `in`, [...]): every key it reads
# is known, whatever model or getter it sits in
COMPRESSION_READERS = {"files": ["compression/config.py", "compression/compress.py", "compression/helper.py",
                                 "compression/scheduler.py"],
                       "constants": ["compression/constants.py"]}
TRUTHY = {"x-zerolint-truthy": True}  # DeepSpeed tests the value for truth (`if value:`), whatever its type
CI = {"x-zerolint-case-insensitive": True}  # DeepSpeed lower()/upper()-cases the value before checking


def ANY(desc, default=None, **kw):
    return {"description": desc, "default": default, **kw}


def LAX(desc, props, **kw):
    return {"description": desc, "@section": "lax", "type": "object", "properties": props, **kw}


def MODEL(spec, desc, **kw):
    return {"description": desc, "@model": spec, **kw}


POS_INT_BATCH = {"minimum": 1}
PRECISION_ENUM = ["fp32", "fp16", "bf16"]
DTYPE_NAMES = ["fp16", "float16", "half", "torch.float16", "bf16", "bfloat16", "torch.bfloat16", "fp32", "float32",
               "float", "torch.float32"]
_ISSUE_8489 = "See https://github.com/deepspeedai/DeepSpeed/issues/8489."

# ----------------------------------------------------------------------------------------------
# optimizer.params / scheduler.params: splatted into a constructor (rejected_at_init)
# ----------------------------------------------------------------------------------------------

OPTIMIZER_PARAMS = {
    "description": ("Keyword arguments of the optimizer constructor (engine.py:2476-2550): an argument the "
                    "optimizer does not take raises TypeError at deepspeed.initialize. Listed: the common ones of "
                    "DeepSpeed's own optimizers."),
    "@section": "init",
    "type": "object",
    "properties": {
        # FusedAdam/CPUAdam/FusedLamb/FusedLion/Adagrad constructor args (ops/adam/fused_adam.py, cpu_adam.py)
        "lr": N("Learning rate.", NO_DEFAULT, nullable=False),
        "betas": {"description": "Adam/Lamb/Lion (beta1, beta2).", "type": "array",
                  "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
        "eps": N("Term added to the denominator for numerical stability.", NO_DEFAULT, nullable=False),
        "weight_decay": N("Weight decay (decoupled for AdamW semantics).", NO_DEFAULT, nullable=False),
        "bias_correction": B("Adam/Lamb bias correction.", True),
        "amsgrad": B("AMSGrad variant; not supported by DeepSpeedCPUAdam (ops/adam/cpu_adam.py:106-108).", False),
        # config.py:69-74 and engine.py:2378-2381, 2486-2492: popped by DeepSpeed before construction
        "adam_w_mode": B("Adam/AdamW only, popped by DeepSpeed: True (the default) gives decoupled weight decay, "
                         "so type \"Adam\" behaves as AdamW unless this is false (engine.py:2486-2492).", True),
        # read for truth (`if torch_adam:`), so "torch_impl" means true and the string "false" does too
        "torch_adam": B("Adam/AdamW only, popped by DeepSpeed: use torch.optim.Adam/AdamW instead of "
                        "FusedAdam/DeepSpeedCPUAdam (engine.py:2378-2381).", False, **TRUTHY),
        # Not deprecated but rejected: listed so that it is not an "unknown" key; ZL603 reports it.
        "max_grad_norm": N("Not an optimizer argument for DeepSpeed: use top-level gradient_clipping. Warned at "
                           "parse (config.py:723-730) and rejected at init for any value (engine.py:2481-2485).",
                           None),
    },
}

SCHEDULER_PARAMS = {
    "description": ("Keyword arguments of the LR scheduler constructor (engine.py:1925-1935): unknown ones raise "
                    "TypeError at deepspeed.initialize; a scheduler without params fails at init. Listed: the "
                    "arguments of DeepSpeed's own schedulers (runtime/lr_schedules.py)."),
    "@section": "init",
    "type": "object",
    "properties": {
        # lr_schedules.py:725-731 WarmupLR, 814-821 WarmupDecayLR, 865-872 WarmupCosineLR
        "warmup_min_lr": N("WarmupLR/WarmupDecayLR: LR at the start of warmup.", 0.0, nullable=False),
        "warmup_max_lr": N("WarmupLR/WarmupDecayLR: LR at the end of warmup (WarmupLR: None -> the optimizer lr; "
                           "WarmupDecayLR default 0.001).", None),
        "warmup_num_steps": I("Warmup steps (WarmupLR, WarmupDecayLR, WarmupCosineLR).", 1000),
        "warmup_type": S("Warmup curve: \"log\" or \"linear\".", "log", enum=["log", "linear"]),
        "total_num_steps": I("WarmupDecayLR/WarmupCosineLR: total training steps (required).", NO_DEFAULT,
                             nullable=False),
        "warmup_min_ratio": N("WarmupCosineLR: warmup start LR as a ratio of the optimizer lr.", 0.0),
        "cos_min_ratio": N("WarmupCosineLR: final LR as a ratio of the optimizer lr.", 0.0001),
        "last_batch_iteration": I("Index of the last batch when resuming (-1: start).", -1),
        # lr_schedules.py:352-358 LRRangeTest
        "lr_range_test_min_lr": N("LRRangeTest: initial LR.", 0.001),
        "lr_range_test_step_size": I("LRRangeTest: interval between LR increases.", 2000),
        "lr_range_test_step_rate": N("LRRangeTest: scaling rate.", 1.0),
        "lr_range_test_staircase": B("LRRangeTest: staircase scaling.", False),
        # lr_schedules.py:483-497 OneCycle
        "cycle_min_lr": N("OneCycle: minimum LR (required).", NO_DEFAULT, nullable=False),
        "cycle_max_lr": N("OneCycle: maximum LR (required).", NO_DEFAULT, nullable=False),
        "decay_lr_rate": N("OneCycle: LR decay rate.", 0.0),
        "cycle_first_step_size": I("OneCycle: steps of the first half-cycle.", 2000),
        "cycle_second_step_size": I("OneCycle: steps of the second half-cycle (None: same as first).", None),
        "cycle_first_stair_count": I("OneCycle: stairs in the first half-cycle.", 0),
        "cycle_second_stair_count": I("OneCycle: stairs in the second half-cycle.", None),
        "decay_step_size": I("OneCycle: interval of the decay phase.", 0),
        "cycle_momentum": B("OneCycle: cycle momentum too.", True),
        "cycle_min_mom": N("OneCycle: minimum momentum.", 0.8),
        "cycle_max_mom": N("OneCycle: maximum momentum.", 0.9),
        "decay_mom_rate": N("OneCycle: momentum decay rate.", 0.0),
    },
}

# ----------------------------------------------------------------------------------------------
# Keys that 0.19.7 / 0.19.8 turned into hard errors (config.py:80-141, _reject_removed_config_keys).
# 0.19.7's list (0.19.7 config.py:97-130): nebula, compression_training, quantize_training,
# sparse_attention; zero: mics_shard_size, mics_hierarchical_params_gather. 0.19.8 added amp,
# sparse_gradients, eigenvalue, elasticity, graph_harvesting, curriculum_learning, progressive_layer_drop;
# zero: zeropp_loco_param.
# ----------------------------------------------------------------------------------------------


def REMOVED(version, msg):
    return {"in": version, "msg": msg}


# ----------------------------------------------------------------------------------------------
# Top level (config.py:482-588 _initialize_params; every key verified read by instrumenting the dict)
# ----------------------------------------------------------------------------------------------

TOP_LEVEL = {
    # constants.py:19-20; config.py:339-340, 590-656 (batch inference + assertions)
    "train_batch_size": I("Global effective batch size: must equal train_micro_batch_size_per_gpu * "
                          "gradient_accumulation_steps * data-parallel world size. Either this or "
                          "train_micro_batch_size_per_gpu is required.", None, **POS_INT_BATCH),
    # constants.py:59-60; config.py:343-348
    "train_micro_batch_size_per_gpu": I("Batch size of one step on one GPU (before gradient accumulation).",
                                        None, **POS_INT_BATCH),
    # constants.py:71-72; config.py:208-209 (inferred by floor division when omitted, config.py:619-645)
    "gradient_accumulation_steps": I("Steps to accumulate gradients before an optimizer step; inferred from "
                                     "the other two batch keys when omitted.", None, **POS_INT_BATCH),
    # constants.py:78-79; config.py:212-213; engine.py:2030-2036. Absent in 0.18.9, present in 0.19.6+.
    "managed_gradient_accumulation": B(
        "Let the engine manage gradient accumulation boundaries. false is incompatible with pipeline "
        "parallelism, DeepCompile and overlap_comm on ZeRO stage 0/1.", True, **{"@since": "0.19.0"}),
    # constants.py:45-46; config.py:252-253. 0 gives ZeroDivisionError at the first step (engine.py:3552-3555)
    # 0.14.5 constants.py:80 says 10 (0.15.4 constants.py:80: None); 0.14.5 engine.py:2160 computes
    # `% self.steps_per_print()` unguarded, so null raises TypeError at the first step (0.15.4 engine.py:2167 checks
    # for None). Only 0.14.5 and 0.15.4 compared.
    "steps_per_print": {**I("Print a progress report every N training steps (None: never). The docs say 10, the "
                            "code default is None.", None, minimum=1),
                        "@variants": [{"@until": "0.15.0", "default": 10, "type": "integer",
                                       "description": "Print a progress report every N training steps. null "
                                                      "raises TypeError at the first step."}, {}]},
    # constants.py:202-203; config.py:268-269. Default 0.0 until 0.19.3 (PR #8068), 1.0 after;
    # 0.18.9 constants.py:254, 0.16.9 constants.py:215 say 0.
    "gradient_clipping": {
        "description": "Clip gradients to this global norm; 0 disables clipping.",
        "type": "number", "minimum": 0,
        "@variants": [{"@until": "0.19.3", "default": 0.0}, {"@since": "0.19.3", "default": 1.0}],
    },
    # constants.py:247-248; config.py:233-234
    "prescale_gradients": B("Scale gradients before allreduce instead of after. Rejected at init by ZeRO-2/3 "
                            "with reduce_scatter.", False),
    # constants.py:254-255; config.py:237-238
    "gradient_predivide_factor": N("Divide gradients by this factor before allreduce (and by world/factor "
                                   "after). != 1 is rejected at init by ZeRO-2/3 with reduce_scatter.", 1.0),
    # constants.py:261-265; config.py:241-249 (lower-cased; else ValueError at parse); 0.19.6+ only
    "gradient_allreduce_op": S("Reduction of the data-parallel gradient allreduce. Case-insensitive in "
                               "DeepSpeed. \"sum\" is rejected with ZeRO-3, ZenFlow or DeepCompile "
                               "(config.py:694-700).", "mean", enum=["mean", "sum"], **CI, **{"@since": "0.19.0"}),
    # constants.py:215-216; config.py:216-230 (val.lower(); anything else -> ValueError at parse)
    "communication_data_type": S("Dtype of gradient communication (None: follow the training precision). "
                                 "Case-insensitive in DeepSpeed (lower-cased before the check); other values "
                                 "raise ValueError at parse.", None, enum=PRECISION_ENUM + [None], **CI),
    # 0.14.5 / 0.15.4 constants.py:252-253 read the key "seq_parallel_comm_data_type" (0.15.4 config.py:811-812,
    # 0.14.5 config.py:809-810; get_communication_data_type at config.py:251-265 of both: lower-cased, else
    # ValueError, verified with DeepSpeedConfig of 0.14.5 and 0.15.4); 0.16.9 constants.py:252
    # renamed it to the name the format string (constants.py:248-250) always documented. Only 0.15.4 and 0.16.9
    # compared.
    "seq_parallel_comm_data_type": S(
        "Dtype of sequence-parallel communication (the key DeepSpeed reads before 0.16; the documented "
        "seq_parallel_communication_data_type is not read). Case-insensitive in DeepSpeed; other values raise "
        "ValueError at parse.", "fp32", enum=PRECISION_ENUM + [None], **CI, **{"@until": "0.16.0"}),
    # constants.py:228-236 (the accelerator-dependent default at 230-234 is overwritten by line 236); null is
    # returned as None (config.py:219-222) and the engine falls back to communication_data_type (engine.py:2182)
    "seq_parallel_communication_data_type": {**S(
        "Dtype of sequence-parallel communication. Case-insensitive in DeepSpeed; other values raise ValueError "
        "at parse.", "fp32", enum=PRECISION_ENUM + [None], **CI),
        "@variants": [{"@since": "0.16.0"}, {
            "description": "Documented name (constants.py:248-250) of seq_parallel_comm_data_type, which is the "
                           "key DeepSpeed reads before 0.16: this one is not read.",
            "x-zerolint-ignored": "not read before DeepSpeed 0.16 (the key read is seq_parallel_comm_data_type, "
                                  "0.15.4 constants.py:252); the value is silently ignored"}]},
    # constants.py:39-40; engine.py:2297-2304
    "zero_allow_untested_optimizer": B("Allow ZeRO with an optimizer outside DeepSpeed's tested list.", False),
    # constants.py:41-42; engine.py:2342-2346
    "zero_force_ds_cpu_optimizer": B("With optimizer offload, require a DeepSpeed CPU optimizer (else "
                                     "ZeRORuntimeException).", True),
    # constants.py:276-277; config.py:256-257, 491: stored, never used
    "disable_allgather": B("Read into DeepSpeedConfig.disable_allgather but never used.", False,
                           **{"x-zerolint-ignored": "read (config.py:491) but never used by the engine"}),
    # constants.py:288-289; config.py:260-261
    "dump_state": B("Print the DeepSpeedConfig state after initialization.", False),
    # constants.py:300-301; config.py:264-265. New in 0.19.8 (absent in 0.19.7)
    "disable_python_gc": B("Disable Python's automatic cyclic garbage collector during training.", False,
                           **{"@since": "0.19.8"}),
    # constants.py:327-328; config.py:355-356
    "memory_breakdown": B("Report memory usage around steps.", False),
    # constants.py:324-325; config.py:351-352, 533 (OR-ed with flops_profiler.enabled: a string raises)
    "wall_clock_breakdown": B("Time forward/backward/step (synchronising); forced on by flops_profiler.enabled.",
                              False),
    # constants.py:402-403; config.py:409-410
    "dataloader_drop_last": B("Drop the last incomplete batch of the DeepSpeed dataloader.", False),
    # constants.py:422-423; config.py:413-414; engine.py:584-585 (utils/logging.py:193-205). 0.19.6+ only
    "log_level": S("DeepSpeed logger level.", None, enum=["debug", "info", "warning", "error", "critical", None],
                   **{"@since": "0.19.0"}),
    # constants.py:312-313; config.py:717-721 (warning only)
    "vocabulary_size": I("Vocabulary size; only checked for tensor-core alignment (warning if not a multiple of "
                         "8).", None),
    # deepspeed/__init__.py:543-546 (with data_parallel_size: mesh); config.py:468-469 (world size / sp)
    # (0.16.9 reads it only in deepspeed/__init__.py:159-161)
    # config.py:466-469 (0.17.6: 679-680): the key's mere presence makes DeepSpeed divide the world size by its
    # value, so an explicit null raises TypeError at parse (0.16.9 does not read it there).
    # Not read anywhere in 0.14.5 (grep of deepspeed/); 0.15.4 __init__.py:159-161 reads both. Only 0.14.5 and
    # 0.15.4 compared.
    "sequence_parallel_size": {**I("Sequence-parallel degree; divides the world size for the batch arithmetic and, "
                                   "with data_parallel_size, builds the device mesh.", None, minimum=1),
                               "@variants": [{"@since": "0.17.0", "type": "integer"}, {}], "@since": "0.15.0"},
    # deepspeed/__init__.py:543-546 (0.15.4, 0.16.9: __init__.py:159-161; absent in 0.14.5)
    "data_parallel_size": I("Data-parallel degree, used with sequence_parallel_size to build the device mesh.",
                            None, minimum=1, **{"@since": "0.15.0"}),
    # constants.py:419-420; config.py:375-376
    "use_data_before_expert_parallelism": B("Build data-parallel groups before expert-parallel groups.", False),
    # config.py:288-315; constants.py:25-30
    "optimizer": LAX(
        "Optimizer built by DeepSpeed. type is matched case-insensitively against DeepSpeed's optimizers, else "
        "looked up as an exact torch.optim class name (engine.py:1985-2019).", {
            "type": S("Optimizer name: Adam, AdamW, Adagrad, Lamb, Lion, Muon, MuAdam, MuAdamW, MuSGD "
                      "(case-insensitive), or an exact torch.optim class name such as SGD.", None),
            "params": OPTIMIZER_PARAMS,
            "legacy_fusion": B("Use the legacy fused fp16 optimizer path.", False),
        }),
    # config.py:325-336; engine.py:1925-1935
    "scheduler": LAX(
        "LR scheduler built by DeepSpeed: a class of deepspeed.runtime.lr_schedules (LRRangeTest, OneCycle, "
        "WarmupLR, WarmupDecayLR, WarmupCosineLR) or torch.optim.lr_scheduler.", {
            "type": S("Scheduler class name.", None),
            "params": SCHEDULER_PARAMS,
        }),
    # zero/config.py:70-78 get_zero_config; legacy bool form zero/config.py:59-67
    "zero_optimization": {
        "description": "ZeRO memory optimizations (strict: unknown keys are rejected at parse).",
        "anyOf": [{"@model": "deepspeed.runtime.zero.config:DeepSpeedZeroConfig"},
                  {"type": "boolean", "deprecated": True,
                   "description": ("Legacy form: true means stage 1 (with top-level allgather_size as "
                                   "allgather_bucket_size), false stage 0; logs a deprecation warning.")}],
    },
    # zero/config.py:62-63: only read when zero_optimization is a bool
    # zero/config.py:60-78: passed to DeepSpeedZeroConfig as allgather_bucket_size (same type, range, coercion;
    # 0.14.5 zero/config.py:53-71, a pydantic v1 model that also truncates a float: its generated
    # zero_optimization.allgather_bucket_size says x-zerolint-coerces ["boolean", "number", "string"])
    "allgather_size": {**I("Legacy: allgather bucket size, read only when zero_optimization is a boolean.",
                           500000000, deprecated=True, minimum=0,
                           **{"x-zerolint-coerces": ["boolean", "string"], "x-zerolint-pydantic": True}),
                       "@variants": [{"@until": "0.15.0", "x-zerolint-coerces": ["boolean", "number", "string"]},
                                     {}]},
    # precision_config.py:95-97 (pydantic since 0.17.1); 0.16.9 config.py:165-240 reads a plain dict
    "fp16": {
        "@variants": [
            {"@since": "0.17.1", **MODEL("deepspeed.runtime.precision_config:DeepSpeedFP16Config",
                                        "FP16 mixed precision with loss scaling (strict).")},
            {"@until": "0.17.1", **LAX(
                "FP16 mixed precision (plain dict before 0.17.1: values are used raw, so \"false\" or \"auto\" "
                "strings are truthy).", {
                    # 0.16.9 constants.py FP16_* and config.py:165-240
                    "enabled": B("Enable fp16 mixed precision.", False),
                    "auto_cast": B("Cast module inputs to fp16.", False),
                    "loss_scale": N("0: dynamic loss scaling; > 0: static scale.", 0, nullable=False),
                    "initial_scale_power": I("Initial dynamic loss scale is 2**initial_scale_power.", 16),
                    "loss_scale_window": I("Window over which the loss scale is raised.", 1000),
                    "hysteresis": I("Delay shift of the dynamic loss scale.", 2),
                    "consecutive_hysteresis": B("Refill hysteresis on each non-overflow step.", False),
                    "min_loss_scale": N("Minimum dynamic loss scale.", 1, nullable=False),
                    "fp16_master_weights_and_grads": B("Keep master weights and grads in fp16 (ZeRO 1-3).",
                                                       False),
                })},
        ],
    },
    # precision_config.py:34-38 (bf16 first, bfloat16 only when bf16 is absent/null); pydantic since 0.17.1
    "bf16": {
        "@variants": [
            {"@since": "0.17.1", **MODEL("deepspeed.runtime.precision_config:DeepSpeedBF16Config",
                                        "BF16 mixed precision (strict).")},
            {"@until": "0.17.1", **LAX(
                "BF16 mixed precision (plain dict before 0.17.1; values used raw).", {
                    # 0.16.9 config.py:168-182 (0.14.5 / 0.15.4: config.py:166-178)
                    # immediate_grad_update: False is the default of 0.14.5 / 0.15.4 constants.py:131; 0.16.9
                    # constants.py:131 says True (with a bf16 section present), so the 0.16 schema's false is wrong
                    # there. Not changed here: the committed 0.16 file is kept byte-identical.
                    "enabled": B("Enable bf16 mixed precision.", False),
                    "immediate_grad_update": B("Apply gradients to the fp32 copy immediately.", False),
                })},
        ],
    },
    "bfloat16": {
        "@variants": [
            {"@since": "0.17.1", **MODEL(
                "deepspeed.runtime.precision_config:DeepSpeedBF16Config",
                "Legacy spelling of bf16, read only when bf16 is absent or null (precision_config.py:34-38): "
                "with both present, bfloat16 is silently ignored.", deprecated=True,
                **{"x-zerolint-replaced-by": "bf16"})},
            {"@until": "0.17.1", **LAX(
                "Legacy spelling of bf16, read only when bf16 is absent (0.16.9 config.py:168-182).", {
                    "enabled": B("Enable bf16 mixed precision.", False),
                    "immediate_grad_update": B("Apply gradients to the fp32 copy immediately.", False),
                }, deprecated=True, **{"x-zerolint-replaced-by": "bf16"})},
        ],
    },
    # monitor/config.py:12-14: top-level keys, NOT nested under "monitor"
    "tensorboard": MODEL("deepspeed.monitor.config:TensorBoardConfig", "TensorBoard monitor (top-level key)."),
    "wandb": MODEL("deepspeed.monitor.config:WandbConfig", "Weights & Biases monitor (top-level key)."),
    "csv_monitor": MODEL("deepspeed.monitor.config:CSVConfig", "CSV monitor (top-level key)."),
    "comet": MODEL("deepspeed.monitor.config:CometConfig", "Comet monitor (top-level key)."),
    # comm/config.py:21-25
    "comms_logger": MODEL("deepspeed.comm.config:CommsLoggerConfig",
                          "Communication logger; enabled by the mere presence of the section."),
    # config.py:584. deepspeed/compile/ is absent in 0.15.4 (0.16.9 config.py:34, 916). Only 0.15.4 and 0.16.9
    # compared.
    "compile": MODEL("deepspeed.compile.config:CompileConfig", "torch.compile / DeepCompile options.",
                     **{"@since": "0.16.0"}),
    # config.py:359-372
    "hybrid_engine": MODEL("deepspeed.runtime.config:HybridEngineConfig", "Hybrid (train + inference) engine."),
    # tensor_parallel/config.py:148-152. deepspeed/runtime/tensor_parallel/ is absent in 0.15.4 (0.16.9
    # config.py:66, 919). Only 0.15.4 and 0.16.9 compared.
    "tensor_parallel": MODEL("deepspeed.runtime.tensor_parallel.config:TPTrainingConfig",
                             "AutoTP tensor-parallel training.", **{"@since": "0.16.0"}),
    # utils/config.py:27-32: plain dict, only "throughput" is read (a model)
    "timers": LAX("Timers (plain dict; only throughput is read).", {
        "throughput": MODEL("deepspeed.utils.config:DeepSpeedThroughputTimerConfig", "Throughput timer."),
    }),
    # config.py:581-582
    "weight_quantization": MODEL("deepspeed.inference.config:WeightQuantConfig",
                                 "Weight quantization (post-init / inference)."),
    # activation_checkpointing/config.py:57-94 (identical in 0.16.9 .. 0.19.8)
    "activation_checkpointing": LAX(
        "Activation checkpointing; only takes effect when user code calls deepspeed.checkpointing.configure().", {
            # activation_checkpointing/config.py:27-46
            "partition_activations": B("Partition checkpointed activations across model-parallel ranks. (DeepSpeed's "
                                       "own format string misspells it partitioned_activations.)", False),
            "contiguous_memory_optimization": B("Copy partitioned activations into a contiguous buffer.", False),
            "cpu_checkpointing": B("Offload partitioned activations to CPU.", False),
            "number_checkpoints": I("Number of checkpoints (for contiguous memory optimization).", None),
            "synchronize_checkpoint_boundary": B("Synchronize at each checkpoint boundary.", False),
            "profile": B("Profile forward/backward of checkpointed layers.", False),
        }),
    # profiling/config.py:10-46, profiling/constants.py:26-47
    "flops_profiler": LAX("FLOPS profiler.", {
        "enabled": B("Enable the profiler (also forces wall_clock_breakdown, config.py:533).", False),
        "recompute_fwd_factor": N("Factor for recomputed forward passes in the FLOPs estimate.", 0.0),
        "profile_step": I("Training step at which to profile.", 1),
        "module_depth": I("Depth of the module tree to print (-1: all).", -1),
        "top_modules": I("Number of top modules to print.", 1),
        "detailed": B("Print the detailed profile.", True),
        "output_file": S("Output file (None: stdout).", None),
    }),
    # swap_tensor/aio_config.py:20-43, swap_tensor/constants.py:18-30 (identical in 0.16.9 .. 0.19.8).
    # 0.15.4 swap_tensor/constants.py:23-30 / aio_config.py:20-35: thread_count instead of intra_op_parallelism;
    # 0.14.5 aio_config.py:18-29 also lacks use_gds. Only 0.14.5, 0.15.4 and 0.16.9 compared.
    "aio": LAX("Async I/O for NVMe offload (ZeRO-Infinity).", {
        "block_size": I("I/O block size in bytes.", 1048576),
        "queue_depth": I("I/O queue depth.", 8),
        "intra_op_parallelism": I("Parallel I/O threads per operation (renamed from thread_count in 0.16.4).", 1,
                                  **{"@since": "0.16.0"}),
        "single_submit": B("Submit requests one at a time.", False),
        "overlap_events": B("Overlap event submission and completion.", True),
        "use_gds": B("Use GPUDirect Storage (asserts a CUDA accelerator at parse, aio_config.py:38-39).", False,
                     **{"@since": "0.15.0"}),
        "thread_count": {**I("Documented name of intra_op_parallelism; not read.", None), "@variants": [
            {"@since": "0.16.0", "x-zerolint-ignored": "renamed to intra_op_parallelism in DeepSpeed 0.16.4 with no "
                                                       "alias; the value is silently ignored"},
            {"description": "Parallel I/O threads per operation (renamed intra_op_parallelism in 0.16).",
             "default": 1, "type": "integer"}]},
    }),
    # config.py:379-406 (tag_validation, load_universal, use_node_local_storage, parallel_write);
    # model_checkpointing/config.py:22-77 (checkpoint_serialization, writer; 0.17.0+, absent in 0.16.9)
    "checkpoint": LAX("Checkpoint options.", {
        "tag_validation": S("Check that checkpoint tags agree across ranks. Case-insensitive (upper-cased); other "
                            "values raise DeepSpeedConfigError at parse.", "Warn", nullable=False,
                            enum=["Warn", "Ignore", "Fail", "WARN", "IGNORE", "FAIL", "warn", "ignore", "fail"], **CI),
        "load_universal": B("Load a universal checkpoint.", False),
        "use_node_local_storage": B("Save to node-local storage (each node writes its own files).", False),
        "parallel_write": LAX("Parallel checkpoint writing.", {
            "pipeline_stage": B("Write pipeline stages in parallel; must be a real bool (else "
                                "DeepSpeedConfigError at parse, config.py:398-406).", False),
        }),
        "checkpoint_serialization": B("Use torch serialization for checkpoints.", True, **{"@since": "0.17.0"}),
        "writer": LAX("Checkpoint writer (FastPersist).", {
            "type": S("Writer type; case-insensitive (upper-cased) then asserted.", "FAST", nullable=False,
                      enum=["MOCK", "PYTHON", "FAST", "mock", "python", "fast"], **CI),
            "io_buffer_size": I("I/O buffer size in bytes.", 67108864),
            "io_buffer_double": B("Double-buffer I/O.", True),
            "show_statistics": B("Print I/O statistics.", False),
            "data_parallel": S("Data-parallel write unit; case-insensitive.", None,
                               enum=["REPLICA", "SOCKET", "MACHINE", "replica", "socket", "machine", None], **CI),
            "decoupled": B("Decoupled (asynchronous) writing.", False),
            "io_multiplier": I("I/O multiplier.", 1),
        }, **{"@since": "0.17.0"}),
    }),
    # config.py:383-384, 555-567; constants.py:383-391
    "data_types": LAX("Data types.", {
        "grad_accum_dtype": S("Gradient accumulation dtype (resolved with DtypeEnum at init; not checked at "
                              "parse).", None, enum=DTYPE_NAMES + ["int8", "torch.int8", None]),
        # 0.19.6+ only (absent in 0.18.9)
        # param_dtype / buffer_dtype / grad_accum_dtype are all resolved with DtypeEnum (engine.py:1809, 1826,
        # 1847), which takes every DTYPE_NAMES spelling plus int8 (config.py:144-149); ZL309 checks the values.
        "param_dtype": S("Parameter dtype; must agree with fp16/bf16.enabled (engine.py:1812-1829).", None,
                         enum=DTYPE_NAMES + ["int8", "torch.int8", None], **{"@since": "0.19.0"}),
        "buffer_dtype": S("Buffer dtype (None: keep as loaded).", None,
                          enum=DTYPE_NAMES + ["int8", "torch.int8", None], **{"@since": "0.19.0"}),
        # 0.19.8 only (absent in 0.19.7); config.py:562-567
        "keep_in_fp32_modules": {
            "description": ("Buffers kept in fp32 under bf16/fp16: \"auto\" or a list of name patterns; anything "
                            "else raises DeepSpeedConfigError at parse."),
            "default": "auto", "anyOf": [{"const": "auto"}, {"type": "array", "items": {"type": "string"}}],
            "@since": "0.19.8"},
    }),
    # config.py:179-205; constants.py:186-191 (0.17.0+; absent in 0.16.9)
    "torch_autocast": LAX("torch.autocast mixed precision.", {
        "enabled": B("Enable torch.autocast.", False),
        # config.py:186-205: a key that is present goes through DtypeEnum(value) / `all(isinstance(m, str) for m
        # in value)`, so an explicit null raises at parse although the default (key absent) is None.
        "dtype": S("Autocast dtype (DtypeEnum names; invalid raises ValueError at parse). The docs claim a "
                   "bfloat16 default; the code default is None.", None, nullable=False,
                   enum=DTYPE_NAMES + ["int8", "torch.int8"]),
        "lower_precision_safe_modules": {
            "description": "Module classes (import paths) safe to run in lower precision.",
            "default": None, "type": "array", "items": {"type": "string"}},
    }, **{"@since": "0.17.0"}),
    # config.py:272-285 (defaults merged with the user dict); pipe/engine.py:135-136, 210-217
    "pipeline": LAX("Pipeline engine options (plain dict merged over defaults).", {
        "stages": ANY("Default-only; the number of stages comes from PipelineModule.", "auto",
                      **{"x-zerolint-ignored": "never read by the engine (PipelineModule decides)"}),
        "partition": S("Default-only; partitioning comes from PipelineModule.", "best",
                       **{"x-zerolint-ignored": "never read by the engine (PipelineModule decides)"}),
        "seed_layers": B("Default-only.", False,
                         **{"x-zerolint-ignored": "never read by the engine (PipelineModule decides)"}),
        "activation_checkpoint_interval": I("Checkpoint every N layers (0: off).", 0),
        "pipe_partitioned": B("Partition pipeline activations; must be a real bool (pipe/engine.py:135).", True),
        "grad_partitioned": B("Partition pipeline gradients; must be a real bool (pipe/engine.py:136).", True),
        "use_reentrant": {"description": "Reentrant activation checkpointing (None -> True).", "default": None,
                          "type": ["boolean", "null"]},
    }),
    # data_pipeline/config.py:14-176, data_pipeline/constants.py (identical 0.16.9 .. 0.19.8 apart from the
    # legacy curriculum readers)
    "data_efficiency": LAX("Data efficiency library (curriculum learning, data routing).", {
        "enabled": B("Enable the data efficiency library.", False),
        "seed": I("Random seed.", 1234),
        # 0.15.4 data_pipeline/config.py:41-51 builds a new dict of enabled/num_epochs/num_workers/
        # curriculum_learning; 0.16.9 config.py:40-49 starts from a copy of the user's dict.
        "data_sampling": {**LAX("Data sampling (unknown keys are copied through).", {
            "enabled": B("Enable data sampling.", False),
            "num_epochs": I("Epochs.", 1000),
            "num_workers": I("Dataloader workers.", 0),
            # 0.16.9 data_pipeline/constants.py:25-26, config.py:74-78; absent in 0.15.4 (and dynamic_batching:
            # 0.16.9 constants.py:66-83, config.py:95-111). Only 0.15.4 and 0.16.9 compared.
            "pin_memory": B("Pin dataloader memory.", False, **{"@since": "0.16.0"}),
            "curriculum_learning": LAX("Curriculum learning; when enabled curriculum_metrics is required "
                                       "(data_pipeline/config.py:87-89), other keys are copied through.", {
                                           "enabled": B("Enable curriculum learning.", False),
                                           "curriculum_metrics": {
                                               "description": "Metric definitions, by the metric's name.",
                                               "type": "object",
                                               # any name: each is one metric's scheduler config
                                               "additionalProperties": LAX(
                                                   "One metric's curriculum (curriculum_scheduler.py).", {},
                                                   **{"@read_by": CURRICULUM_READERS}),
                                           },
                                       }, **{"@read_by": CURRICULUM_READERS}),
            "dynamic_batching": {**LAX("Dynamic batching (data_pipeline/config.py:95-112).", {
                "enabled": B("Enable dynamic batching.", False),
                "max_tokens": I("Token budget per batch (required when enabled).", None),
                "lr_scaling_method": S("LR scaling.", "linear", nullable=False, enum=["linear", "sqrt", "none"]),
                "min_batch_size": I("Minimum batch size.", 1),
                # int(value) whenever the key is present: an explicit null raises TypeError at parse
                "max_batch_size": I("Maximum batch size.", None, nullable=False),
                "sequence_picking_order": S("Sequence order.", "dataloader", nullable=False,
                                            enum=["random", "seqlen", "dataloader"]),
                "metrics_path": S("Path of the sequence-length metrics.", None),
                "verbose": B("Verbose output.", False),
            }), "@since": "0.16.0"},
        }), "@variants": [{"@since": "0.16.0"}, {"description": "Data sampling (only enabled, num_epochs, num_workers "
                                                                "and curriculum_learning are read; other keys are "
                                                                "dropped)."}]},
        "data_routing": LAX("Data routing.", {
            "enabled": B("Enable data routing.", False),
            "random_ltd": LAX("Random layerwise token dropping (keys copied through).", {
                "enabled": B("Enable random-LTD.", False),
            }, **{"@read_by": {"files": ["runtime/data_pipeline/data_routing", "runtime/engine.py"],
                               "constants": ["runtime/data_pipeline/constants.py"]}}),
        }),
    }),
    # autotuning/config.py:10-94, autotuning/constants.py:43-125 (identical keys 0.16.9 .. 0.19.8)
    "autotuning": LAX("Autotuner (used by the deepspeed launcher with --autotuning).", {
        "enabled": B("Enable autotuning.", False),
        "fast": B("Fast mode.", True),
        "results_dir": S("Results directory (must be non-empty).", "autotuning_results", nullable=False),
        "exps_dir": S("Experiments directory (must be non-empty).", "autotuning_exps", nullable=False),
        "overwrite": B("Overwrite existing results.", True),
        "start_profile_step": I("First profiled step.", 3),
        "end_profile_step": I("Last profiled step.", 5),
        "metric": S("Metric to optimise.", "throughput", nullable=False,
                    enum=["latency", "throughput", "flops", "forward", "step"]),
        "metric_path": S("Where the metric is written.", None),
        "tuner_type": S("Tuner.", "gridsearch", nullable=False, enum=["gridsearch", "random", "model_based"]),
        "tuner_early_stopping": I("Early-stopping patience.", 5),
        "tuner_num_trials": I("Number of trials.", 50),
        "arg_mappings": {"description": "Map of DeepSpeed config keys to training-script arguments.",
                         "default": None, "type": ["object", "null"]},
        "model_info_path": S("Path of a model-info file.", None),
        "mp_size": I("Model-parallel size.", 1),
        "max_train_batch_size": I("Maximum train batch size.", None),
        "min_train_batch_size": I("Minimum train batch size.", 1),
        "max_train_micro_batch_size_per_gpu": I("Maximum micro batch size.", 1024),
        "min_train_micro_batch_size_per_gpu": I("Minimum micro batch size.", 1),
        "num_tuning_micro_batch_sizes": I("Number of micro batch sizes to try.", 3),
        "model_info": LAX("Model information (autotuning/config.py:88-93).", {
            "profile": B("Profile the model.", False),
            "num_params": I("Number of parameters.", None),
            "hidden_size": I("Hidden size.", None),
            "num_layers": I("Number of layers.", None),
        }),
    }),
    # module_inject/auto_ep_config.py:42-97 (0.19.6+; absent in 0.18.9)
    "expert_parallel": LAX("AutoEP expert parallelism.", {
        "enabled": B("Enable AutoEP.", False),
        "autoep_size": I("Expert-parallel degree.", 1),
        "expert_tensor_parallel_size": I("Expert tensor-parallel degree.", 1),
        "validate_folding_routing": B("Validate routing when folding (must be a bool).", False,
                                      **{"@since": "0.19.8"}),
        "async_split_plan": B("Asynchronous split plan (must be a bool).", False, **{"@since": "0.19.8"}),
        "preset_model": S("Preset model family.", None),
        "moe_layer_pattern": S("Regex of MoE layers.", None),
        "expert_pattern": S("Regex of expert modules.", None),
        "router_pattern": S("Regex of router modules.", None),
        "use_grouped_mm": B("Use grouped matmul.", True),
        "load_balance_coeff": {"description": "Unsupported: any non-null value raises.", "type": "null"},
        "score_func": ANY("Router score function (\"auto\": from the preset).", "auto"),
        "top_k": ANY("Experts per token (\"auto\": from the preset).", "auto"),
        "route_norm": ANY("Normalise routing weights.", None),
        "route_scale": N("Routing weight scale.", 1.0),
        "comm_backend": S("Communication backend.", "comm", nullable=False),
    }, **{"@since": "0.19.0"}),
    # datastates/config.py:15-21 (0.18.0+; absent in 0.17.6)
    "datastates_ckpt": {
        "description": ("DataStates asynchronous checkpointing: enabled whenever the key is present and not "
                        "literally false (even {})."),
        "default": None, "type": ["object", "boolean", "null"], "@since": "0.18.0"},

    # ---- legacy sections: read (lax) up to 0.19.6/0.19.7, rejected from 0.19.7/0.19.8 ----------------
    # 0.18.9 config.py:143-156 get_amp_*; engine passes the rest to apex amp.initialize(**params)
    "amp": {
        "@removed": REMOVED("0.19.8", "NVIDIA Apex AMP integration has been removed; use fp16, bf16 or "
                            "torch_autocast."),
        **LAX("NVIDIA Apex AMP. Keys other than enabled are passed to apex amp.initialize(); enabled is popped "
              "without a default, so a block without enabled raises KeyError at parse (0.18.9 "
              "config.py:150-156).", {
                  "enabled": B("Enable Apex AMP.", False),
                  "opt_level": S("Apex optimisation level.", None, enum=["O0", "O1", "O2", "O3", None]),
              }),
    },
    # 0.18.9 config.py:241-400 get_sparse_attention (unknown mode -> NotImplementedError at parse)
    "sparse_attention": {
        "@removed": REMOVED("0.19.7", "DeepSpeed Sparse Attention has been removed."),
        **LAX("Sparse attention.", {
            "mode": S("Sparsity layout.", "fixed", nullable=False,
                      enum=["dense", "fixed", "variable", "bigbird", "bslongformer"]),
            "block": I("Block size.", 16),
            "different_layout_per_head": B("Different layout per head.", False),
            "num_local_blocks": I("fixed: local blocks.", 4),
            "num_global_blocks": I("fixed/bigbird: global blocks.", 1),
            "attention": S("fixed/variable: attention type.", "bidirectional", nullable=False,
                           enum=["unidirectional", "bidirectional"]),
            "horizontal_global_attention": B("fixed/variable: horizontal global attention.", False),
            "num_different_global_patterns": I("fixed: different global patterns.", 1),
            "num_random_blocks": I("variable/bigbird: random blocks.", 0),
            "local_window_blocks": {"description": "variable: local window blocks.", "default": [4],
                                    "type": "array", "items": {"type": "integer"}},
            "global_block_indices": {"description": "variable/bslongformer: global block indices.", "default": [0],
                                     "type": "array", "items": {"type": "integer"}},
            "global_block_end_indices": {"description": "variable/bslongformer: global block end indices.",
                                         "default": None, "type": ["array", "null"], "items": {"type": "integer"}},
            "num_sliding_window_blocks": I("bigbird/bslongformer: sliding window blocks.", 3),
        }),
    },
    # 0.18.9 config.py:192-193
    "sparse_gradients": {
        "@removed": REMOVED("0.19.8", "sparse compression of dense embedding gradients has been removed."),
        **B("Sparse allreduce of dense torch.nn.Embedding gradients.", False),
    },
    # 0.18.9 config.py:237-238
    "graph_harvesting": {
        "@removed": REMOVED("0.19.8", "graph harvesting has been removed."),
        **B("CUDA graph harvesting.", False),
    },
    # 0.18.9 config.py:127-140 (enabled popped without default: KeyError if missing)
    "progressive_layer_drop": {
        "@removed": REMOVED("0.19.8", "Progressive Layer Dropping has been removed."),
        **LAX("Progressive layer dropping; a block without enabled raises KeyError at parse.", {
            "enabled": B("Enable PLD.", False),
            "theta": N("Theta.", 1.0),
            "gamma": N("Gamma.", 0.001),
        }),
    },
    # 0.18.9 data_pipeline/config.py:132-146 (enabled popped without default: KeyError if missing)
    "curriculum_learning": {
        "@removed": REMOVED("0.19.8", "use data_efficiency.data_sampling.curriculum_learning."),
        **LAX("Legacy curriculum learning (keys other than enabled are passed to the scheduler); a block "
              "without enabled raises KeyError at parse.", {
                  "enabled": B("Enable legacy curriculum learning.", False),
                  "curriculum_type": S("Metric, e.g. seqlen.", None),
                  "min_difficulty": I("Start difficulty.", None),
                  "max_difficulty": I("End difficulty.", None),
                  "schedule_type": S("Schedule.", None, enum=["fixed_linear", "fixed_root", "fixed_discrete",
                                                              "custom", None]),
                  "schedule_config": {"description": "Schedule parameters.", "type": "object"},
              }),
    },
    # 0.18.9 elasticity/config.py:49-104, config.py:689-748
    "elasticity": {
        "@removed": REMOVED("0.19.8", "elastic training has been removed; set the batch keys directly."),
        **LAX("Elastic training.", {
            "enabled": B("Enable elasticity.", False),
            "max_train_batch_size": I("Maximum acceptable batch size.", 2000),
            "micro_batch_sizes": {"description": "Candidate micro batch sizes.", "default": [2, 4, 6],
                                  "type": "array", "items": {"type": "integer"}},
            "min_gpus": I("Minimum GPUs.", 1),
            "max_gpus": I("Maximum GPUs.", 10000),
            "num_gpus_per_node": I("GPUs per node.", 1),
            "model_parallel_size": I("Model-parallel size.", 1),
            "min_time": I("Minimum running time (minutes).", 0),
            "prefer_larger_batch": B("Prefer larger batch sizes.", True),
            "ignore_non_elastic_batch_info": B("Ignore the non-elastic batch keys.", False),
            "version": N("Elasticity algorithm version.", 0.2),
        }),
    },
    # 0.18.9 nebula/config.py:13-37, nebula/constants.py:24-61
    "nebula": {
        "@removed": REMOVED("0.19.7", "Nebula checkpointing has been removed."),
        **LAX("Azure Nebula checkpointing.", {
            "enabled": B("Enable Nebula.", False),
            "persistent_storage_path": S("Persistent storage path.", None),
            "persistent_time_interval": I("Persist interval (s).", 100),
            "num_of_version_in_retention": I("Versions kept.", 2),
            "enable_nebula_load": B("Load via Nebula.", True),
            "nebula_load_path": S("Load path.", None),
        }),
    },
    # 0.18.9 compression/config.py:11-27 (each technique has shared_parameters / different_groups)
    "compression_training": {
        "@removed": REMOVED("0.19.7", "the compression library has been removed."),
        **LAX("Compression training (see DeepSpeed's compression docs; sub-blocks are plain dicts).", {
            k: LAX(f"{k} technique (shared_parameters / different_groups).", {}, **{"@read_by": COMPRESSION_READERS})
            for k in ("weight_quantization", "activation_quantization", "sparse_pruning", "row_pruning",
                      "head_pruning", "channel_pruning", "layer_reduction")
        }),
    },
    # 0.16.9-0.18.9: top-level "quantize_training" / "eigenvalue" are NOT read (get_eigenvalue_config,
    # 0.18.9 config.py:510-512, reads eigenvalue inside param_dict[QUANTIZE_TRAINING], a name that is not
    # defined anywhere). So they only exist as removed keys.
    "quantize_training": {"@removed": REMOVED("0.19.7", "Mixture-of-Quantization has been removed."),
                          "@since": "0.19.7"},
    "eigenvalue": {"@removed": REMOVED("0.19.8", "eigenvalue-based MoQ has been removed."), "@since": "0.19.8"},
}

# Extra properties appended to a model-generated section (keyed by section path).
MODEL_EXTRA_PROPERTIES = {
    # config.py:119-141: checked on the raw dict before the model sees it (removed fields of
    # DeepSpeedZeroConfig; in 0.16.9-0.19.6 they are ordinary model fields and come from the model)
    "zero_optimization": {
        "mics_shard_size": {"@removed": REMOVED("0.19.7", "MiCS ZeRO-3 sharding has been removed."),
                            "@since": "0.19.7"},
        "mics_hierarchical_params_gather": {"@removed": REMOVED("0.19.7", "MiCS ZeRO-3 sharding has been "
                                                                "removed."), "@since": "0.19.7"},
        "zeropp_loco_param": {"@removed": REMOVED("0.19.8", "LoCo-ZeRO++ has been removed; use standard "
                                                  "ZeRO++ quantized gradients."), "@since": "0.19.8"},
    },
}

# Keys documented or accepted but without effect (path -> why); applied to model fields too.
# Constraints that a model's validators enforce at parse but its JSON schema does not show, merged over the
# generated type schema of the field (keys: "<section>.<field>"; @since/@until gate them).
FIELD_SCHEMA = {
    # precision_config.py:120-133 _validate_loss_scale: bool, non-finite and negative values raise at parse
    "fp16.loss_scale": {"minimum": 0, "@since": "0.18.0"},  # absent in 0.17.6
    # zenflow/zenflow_config.py:46-63 validate_fields ("auto" is dropped before validation like everywhere)
    "zero_optimization.zenflow.select_strategy": {"enum": ["auto", "step", "epoch"]},
    "zero_optimization.zenflow.select_interval": {"anyOf": [{"type": "integer"}, {"const": "auto"}]},
    "zero_optimization.zenflow.update_interval": {
        "@variants": [{"@since": "0.19.0", "anyOf": [{"type": "integer", "minimum": 1}, {"const": "auto"}]},
                      {"anyOf": [{"type": "integer"}, {"const": "auto"}]}]},
}

IGNORED = {
    # engine.py:1745 exposes it; no optimizer reads it (grep of runtime/zero and runtime/engine.py)
    "zero_optimization.allgather_partitions": {
        "why": "parsed and exposed (engine.py) but not used by any ZeRO optimizer"},
    # zero/config.py:199-206 set_new_param False: only a warning
    "zero_optimization.cpu_offload_use_pin_memory": {
        "why": "deprecated with set_new_param=False: only logs a warning, the value is not applied"},
}

# Keys the HF Trainer / Accelerate fill when the value is "auto" (reference/user-pain.md section 1 item 5).
# "raw": what plain DeepSpeed does with the string in a lax (plain-dict) place; strict sections get the
# generic "dropped, default applies" note from the generator.
_HF = ["hf", "accelerate"]
_ACC = ["accelerate"]
_BATCH_RAW = "keeps the string and raises TypeError in the batch arithmetic at parse (config.py:590-652)."
_INIT_RAW = "passes the string to the constructor, which fails at deepspeed.initialize or the first step."
AUTO_FILLED = {
    "train_batch_size": {"by": _HF, "raw": _BATCH_RAW},
    "train_micro_batch_size_per_gpu": {"by": _HF, "raw": _BATCH_RAW},
    "gradient_accumulation_steps": {"by": _HF, "raw": _BATCH_RAW},
    "gradient_clipping": {"by": _HF, "raw": "keeps the string; parse passes and the first step raises TypeError "
                                           "(deepspeedai/DeepSpeed#1270)."},
    "optimizer.params.lr": {"by": _HF, "raw": _INIT_RAW},
    "optimizer.params.betas": {"by": _HF, "raw": _INIT_RAW},
    "optimizer.params.eps": {"by": _HF, "raw": _INIT_RAW},
    "optimizer.params.weight_decay": {"by": _HF, "raw": _INIT_RAW},
    "scheduler.params.warmup_min_lr": {"by": _HF, "raw": _INIT_RAW},
    "scheduler.params.warmup_max_lr": {"by": _HF, "raw": _INIT_RAW},
    "scheduler.params.warmup_num_steps": {"by": _HF, "raw": _INIT_RAW},
    "scheduler.params.total_num_steps": {"by": _HF, "raw": _INIT_RAW},
    # strict from 0.17.1; before, the plain-dict reader used the value raw (0.16.9 config.py:161-172)
    "fp16.enabled": {"by": _HF, "raw": "before 0.17.1 reads the value raw: the string is truthy, so fp16 is "
                                       "ENABLED (and fp16 + bf16 both \"auto\" fails the both-enabled assertion)."},
    "bf16.enabled": {"by": _HF, "raw": "before 0.17.1 reads the value raw: the string is truthy, so bf16 is "
                                       "ENABLED."},
    "zero_optimization.reduce_bucket_size": {"by": _HF},
    "zero_optimization.stage3_prefetch_bucket_size": {"by": _HF},
    "zero_optimization.stage3_param_persistence_threshold": {"by": _HF},
    "zero_optimization.stage": {"by": _ACC},
    "zero_optimization.stage3_gather_16bit_weights_on_model_save": {"by": _ACC},
    "zero_optimization.offload_optimizer.device": {"by": _ACC},
    "zero_optimization.offload_optimizer.nvme_path": {"by": _ACC},
    "zero_optimization.offload_param.device": {"by": _ACC},
    "zero_optimization.offload_param.nvme_path": {"by": _ACC},
}

# Descriptions for model fields that DeepSpeed leaves undocumented (no docstring, no Field description);
# used only as a fallback. Keyed by section path; sources are the model definitions named.
FIELD_DESCRIPTIONS = {
    # comm/config.py:11-16 CommsLoggerConfig (semantics: comm/comm.py logging helpers)
    "comms_logger.enabled": "Enable the communication logger.",
    "comms_logger.prof_all": "Profile all collective operations.",
    "comms_logger.prof_ops": "Operations to profile when prof_all is false.",
    "comms_logger.verbose": "Print every logged operation.",
    "comms_logger.debug": "Include the calling function in the log.",
    # zero/leaf_module_config.py:20-38 (a bare string is coerced to a one-element list)
    "zero_optimization.leaf_module.classes": "Module classes (import paths) treated as ZeRO-3 leaf modules; a "
                                             "bare string is coerced to a one-element list.",
    "zero_optimization.leaf_module.names": "Module names treated as ZeRO-3 leaf modules.",
    "zero_optimization.leaf_module.name_suffixes": "Module name suffixes treated as ZeRO-3 leaf modules.",
    # config.py:359-366 HybridEngineConfig
    "hybrid_engine.enabled": "Enable the hybrid (generation + training) engine.",
    "hybrid_engine.max_out_tokens": "Maximum number of generated tokens.",
    "hybrid_engine.inference_tp_size": "Tensor-parallel degree used for generation.",
    "hybrid_engine.release_inference_cache": "Release the inference cache after generation.",
    "hybrid_engine.pin_parameters": "Pin parameters in host memory.",
    "hybrid_engine.tp_gather_partition_size": "Partition size when gathering tensor-parallel weights.",
    "hybrid_engine.enable_cuda_graph": "Capture generation with CUDA graphs.",
    # tensor_parallel/config.py:18-36, 65
    "tensor_parallel.tensor_parallel.tp_group": "Tensor-parallel process group (a Python object).",
    "tensor_parallel.injection_policy_tuple": "Injection policy (Python objects).",
    # inference/config.py:83-93 WeightQuantConfig
    "weight_quantization.enabled": "Enable weight quantization.",
    "weight_quantization.num_bits": "Bits per quantized weight.",
    "weight_quantization.q_type": "Quantization type.",
    "weight_quantization.q_groups": "Number of quantization groups.",
    "weight_quantization.quantized_initialization": "Quantize weights at initialization (options).",
    "weight_quantization.post_init_quant": "Quantize these modules after initialization (name -> options).",
    # 0.16.9 .. 0.19.6 zero/config.py (fields removed in 0.19.7)
    "zero_optimization.mics_shard_size": "MiCS: number of ranks a ZeRO-3 parameter is sharded over (-1: off).",
    "zero_optimization.mics_hierarchical_params_gather": "MiCS: hierarchical parameter all-gather.",
}
