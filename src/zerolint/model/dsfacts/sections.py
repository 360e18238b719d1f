"""Where things live in a DeepSpeed config: section pointers, keys only some stages read, defaults that moved."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

ZERO = "/zero_optimization"

# zero_optimization keys that only ZeRO stage 3 reads (engine.py:2655-2708 passes none of them to the stage 1/2
# optimizer). Both spellings of aliased keys are listed.
STAGE3_ONLY = (
    "stage3_prefetch_bucket_size", "prefetch_bucket_size", "stage3_param_persistence_threshold",
    "param_persistence_threshold", "stage3_model_persistence_threshold", "model_persistence_threshold",
    "stage3_max_live_parameters", "max_live_parameters", "stage3_max_reuse_distance", "max_reuse_distance",
    "stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save",
    "stage3_gather_fp16_weights_on_model_save", "stage3_module_granularity_threshold",
    "module_granularity_threshold", "stage3_use_all_reduce_for_fetch_params", "use_all_reduce_for_fetch_params",
    "stage3_allgather_sequential", "allgather_sequential", "sub_group_size", "zero_hpz_partition_size",
    "zero_quantized_weights", "zero_quantized_nontrainable_weights", "zero_quantized_gradients",
)

# The values an offload block's `device` may take (View.offload_device: anything else is invalid).
OFFLOAD_DEVICES = ("none", "cpu", "nvme")

# Defaults that changed inside a schema line (the schema carries the line's newest default).
# pointer pattern -> list of (first version with the new default, old default, new default)
DEFAULT_DRIFT: dict[str, list[tuple[str, Any, Any]]] = {
    "/gradient_clipping": [("0.19.3", 0.0, 1.0)],  # PR #8068
    "/zero_optimization/offload_optimizer/pin_memory": [("0.19.5", False, True)],  # PR #8207
    "/zero_optimization/offload_param/pin_memory": [("0.19.5", False, True)],
}

# Keys every section has: they say nothing about which section an unknown key belongs to (View.home_of).
GENERIC_KEYS = frozenset({"enabled", "type", "params", "device", "output_path", "job_name", "verbose", "debug",
                          "dtype", "name", "path", "mode"})

# The batch triple (runtime/config.py:590-656) and the key that divides the world size (config.py:466-469).
BATCH_KEYS = ("/train_batch_size", "/train_micro_batch_size_per_gpu", "/gradient_accumulation_steps")
SEQUENCE_PARALLEL = "/sequence_parallel_size"

# Every top-level key DeepSpeed's config reads: the union of the generated schemas' top-level properties (0.14-0.19;
# runtime/config.py DeepSpeedConfig._initialize_params and the sub-configs it builds). Content detection
# (model/detect.py) decides from these whether a JSON object is a DeepSpeed config; tests/test_detect.py keeps the
# table equal to the schemas'.
TOP_LEVEL_KEYS = frozenset({
    "activation_checkpointing", "aio", "allgather_size", "amp", "autotuning", "bf16", "bfloat16", "checkpoint",
    "comet", "comms_logger", "communication_data_type", "compile", "compression_training", "csv_monitor",
    "curriculum_learning", "data_efficiency", "data_parallel_size", "data_types", "dataloader_drop_last",
    "datastates_ckpt", "disable_allgather", "disable_python_gc", "dump_state", "eigenvalue", "elasticity",
    "expert_parallel", "flops_profiler", "fp16", "gradient_accumulation_steps", "gradient_allreduce_op",
    "gradient_clipping", "gradient_predivide_factor", "graph_harvesting", "hybrid_engine", "log_level",
    "managed_gradient_accumulation", "memory_breakdown", "nebula", "optimizer", "pipeline", "prescale_gradients",
    "progressive_layer_drop", "quantize_training", "scheduler", "seq_parallel_comm_data_type",
    "seq_parallel_communication_data_type", "sequence_parallel_size", "sparse_attention", "sparse_gradients",
    "steps_per_print", "tensor_parallel", "tensorboard", "timers", "torch_autocast", "train_batch_size",
    "train_micro_batch_size_per_gpu", "use_data_before_expert_parallelism", "vocabulary_size", "wall_clock_breakdown",
    "wandb", "weight_quantization", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer",
    "zero_optimization",
})

# Top-level keys that files other than DeepSpeed configs use too, so that their presence alone says nothing:
# TrainingArguments fields (transformers 5.24 dataclass fields: a `training_args.json` dump holds them as booleans,
# integers or strings) and names any training framework's JSON may have. Each counts as DeepSpeed's only with the
# value shape DeepSpeed reads (SHARED_KEY_SHAPES). Every other key of TOP_LEVEL_KEYS is DeepSpeed's alone: one of
# them makes a file a DeepSpeed config on the CI gate, whatever else it holds (model/detect.py, strict).
# tests/test_detect.py checks the TrainingArguments part against the installed transformers.
SHARED_TOP_LEVEL_KEYS = frozenset({
    "activation_checkpointing", "amp", "bf16", "bfloat16", "checkpoint", "comet", "compile", "data_types",
    "dataloader_drop_last", "fp16", "gradient_accumulation_steps", "log_level", "optimizer", "pipeline", "scheduler",
    "tensorboard", "tensor_parallel", "timers", "train_batch_size", "wandb",
})
# What a shared key's value looks like in a DeepSpeed config: "object" (any JSON object: TrainingArguments has
# booleans there), "typed" (an object with a `params` object: DeepSpeed's {"type": ..., "params": {...}}), "keys"
# (an object holding a key DeepSpeed's schema lists for that section, other than GENERIC_KEYS but `enabled`). A key
# not listed never counts alone (a scalar such as gradient_accumulation_steps: 4).
SHARED_KEY_SHAPES = {
    "fp16": "object", "bf16": "object", "bfloat16": "object", "amp": "object", "activation_checkpointing": "object",
    "optimizer": "typed", "scheduler": "typed",
    "checkpoint": "keys", "comet": "keys", "compile": "keys", "data_types": "keys", "pipeline": "keys",
    "tensorboard": "keys", "tensor_parallel": "keys", "timers": "keys", "wandb": "keys",
}
