"""Who reads the config, and what each consumer does with a literal "auto".

- `deepspeed`: `deepspeed.initialize(config="ds.json")`. Reads the file with hjson. Inside strict (pydantic)
  sections a value equal to "auto" is deleted before validation, so the default applies; elsewhere "auto"
  stays a string and fails later (runtime/config_utils.py:54-56).
- `hf`: the HF Trainer (`TrainingArguments(deepspeed=...)`). Reads the file with `json.load`, replaces "auto" at
  a fixed list of keys from the TrainingArguments and the model, then hands DeepSpeed a dict
  (transformers/integrations/deepspeed.py, `HfTrainerDeepSpeedConfig.trainer_config_process` and
  `trainer_config_finalize`).
- `accelerate`: `accelerate launch` with a DeepSpeed plugin. Reads with `json.load` and fills more keys, from the
  plugin / accelerate config and at `prepare()` time (accelerate/utils/dataclasses.py,
  `DeepSpeedPlugin.deepspeed_config_process`; accelerate/accelerator.py, `_prepare_deepspeed`).
"""

from __future__ import annotations

from .trainer import ACCELERATE_SHARE

# Pointers whose "auto" the HF Trainer fills itself (`trainer_config_process`, `trainer_config_finalize`); amp only in
# transformers < 5 (trainer.AMP_FILL).
TRAINER_FILLS = frozenset(
    {
        "/train_micro_batch_size_per_gpu",
        "/gradient_accumulation_steps",
        "/train_batch_size",
        "/gradient_clipping",
        "/optimizer/params/lr",
        "/optimizer/params/betas",
        "/optimizer/params/eps",
        "/optimizer/params/weight_decay",
        "/scheduler/params/warmup_min_lr",
        "/scheduler/params/warmup_max_lr",
        "/scheduler/params/warmup_num_steps",
        "/scheduler/params/total_num_steps",
        "/fp16/enabled",
        "/bf16/enabled",
        "/amp/enabled",
        "/amp/opt_level",
        "/zero_optimization/reduce_bucket_size",
        "/zero_optimization/stage3_prefetch_bucket_size",
        "/zero_optimization/stage3_param_persistence_threshold",
    }
)
# The Trainer hands the config to Accelerate, which fills its own share before DeepSpeed sees it (the ZeRO stage,
# offload devices and paths, the 16-bit save flag, the hidden-size keys at every stage: trainer.ACCELERATE_SHARE), so
# under the Trainer and under `accelerate launch` the same keys are filled.
HF_FILLS = TRAINER_FILLS | ACCELERATE_SHARE
ACCELERATE_FILLS = HF_FILLS
# What only the Trainer fills: `accelerate launch` of a training loop of one's own (accelerator.prepare with
# DummyOptim) fills lr and weight_decay, not betas and eps (accelerate 1.15.0 accelerator.py:2329-2332), nor amp; the
# leftover "auto" makes deepspeed_config_process raise (measured with the real Accelerator on an H200, 2026-12-01).
TRAINER_ONLY_FILLS = frozenset({"/optimizer/params/betas", "/optimizer/params/eps", "/amp/enabled", "/amp/opt_level"})

FILLS = {"deepspeed": frozenset(), "hf": HF_FILLS, "accelerate": ACCELERATE_FILLS}

DISPLAY = {"deepspeed": "DeepSpeed", "hf": "the HF Trainer", "accelerate": "Accelerate"}

# Readers: DeepSpeed reads a file with hjson; HF and Accelerate read it with json.load and pass a dict.
READER = {"deepspeed": "hjson", "hf": "json", "accelerate": "json"}


def fills_auto(target: str, pointer: str) -> bool:
    return pointer in FILLS[target]
