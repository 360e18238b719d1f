"""Which open documents the server lints: a DeepSpeed config, not any JSON the editor opens.

A simple key check (main has no content-based detection yet, issue 16 item 1): a JSON/hjson object is a DeepSpeed
config when one of its top-level keys is a DeepSpeed top-level key that other JSON files do not use (the batch
keys, zero_optimization, gradient_clipping, ...), when its `$schema` names a DeepSpeed schema, or when its file
name says so (ds_config.json, *deepspeed*.json, ds_*.json). Keys that are common elsewhere (`optimizer`,
`scheduler`, `fp16`, `bf16`, `checkpoint`, `pipeline`, ...) do not count on their own: an HF TrainingArguments dump
has `fp16` and `gradient_accumulation_steps`. A YAML document is claimed when it is an Accelerate config that
configures DeepSpeed (the keys `accelerate config` writes, as the pipeline picks YAMLs from a directory).
"""

from __future__ import annotations

import os
import re

from ..model.document import Document

# DeepSpeed top-level keys (data/schemas/deepspeed-0.19.json) that, alone, mark a config as DeepSpeed's.
DISTINCTIVE_KEYS = frozenset({
    "train_batch_size", "train_micro_batch_size_per_gpu", "zero_optimization", "gradient_clipping",
    "steps_per_print", "wall_clock_breakdown", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer",
    "prescale_gradients", "gradient_predivide_factor", "communication_data_type", "activation_checkpointing",
    "flops_profiler", "aio", "csv_monitor", "comms_logger", "memory_breakdown", "dump_state",
    "sparse_gradients", "zero_optimisation", "bfloat16", "elasticity", "hybrid_engine", "data_efficiency",
    "compression_training", "progressive_layer_drop", "curriculum_learning", "sequence_parallel_size",
})

_NAME = re.compile(r"(^ds[_-]|deepspeed|^zero[_-]?\d)", re.I)
_ACCELERATE_DEEPSPEED = re.compile(r"^(?:deepspeed_config\s*:|distributed_type\s*:\s*['\"]?DEEPSPEED\b)", re.M)
YAML_SUFFIXES = (".yaml", ".yml")


def is_yaml(path: str) -> bool:
    return path.lower().endswith(YAML_SUFFIXES)


def named_like_config(path: str) -> bool:
    return bool(_NAME.search(os.path.basename(path)))


def claims_yaml(text: str) -> bool:
    return bool(_ACCELERATE_DEEPSPEED.search(text))


def claims(path: str, doc: Document) -> bool:
    """Whether a parsed JSON/hjson document is a DeepSpeed config (see the module docstring)."""
    if named_like_config(path):
        return True
    root = doc.root
    if root is None or root.members is None:
        return False
    keys = set(root.keys())
    if keys & DISTINCTIVE_KEYS:
        return True
    schema = root.get("$schema")
    return schema is not None and isinstance(schema.value, str) and "deepspeed" in schema.value.lower()
