"""`zerolint plan --write`: the picked candidate as a config in its consumer's form.

- deepspeed: every value written out (raw `deepspeed.initialize` fills nothing): the batch sizes, the precision,
  an AdamW section with the learning rate (DeepSpeed builds FusedAdam, or DeepSpeedCPUAdam under offload);
- hf: "auto" wherever the HF Trainer fills a value from TrainingArguments (batch sizes, clipping, the optimizer's
  lr/betas/eps/weight_decay, the precision, the buckets it derives from the hidden size); the plan's micro batch,
  accumulation and precision then go on the command line (`what_to_pass`);
- accelerate: "auto" where Accelerate fills (the batch sizes from the prepared dataloader and the accelerator, the
  clipping, the precision from `mixed_precision`); no optimizer section, so that a loop of one's own keeps its
  optimizer (ZL536); under offload Accelerate swaps it for DeepSpeedCPUAdam with the same parameter groups (ZL219).

Nothing DeepSpeed ignores is written (offload_param below stage 3, buckets stage 0 does not have, hpZ on one node).
"""

from __future__ import annotations

import json

from .candidates import Candidate
from .job import Job


def config_for(c: Candidate, job: Job, gpus_per_node: int) -> dict:
    hf, acc = job.target == "hf", job.target == "accelerate"
    fill = hf or acc
    cfg: dict = {}
    if fill:
        cfg["train_micro_batch_size_per_gpu"] = "auto"
        cfg["gradient_accumulation_steps"] = "auto"
        cfg["train_batch_size"] = "auto"
        cfg["gradient_clipping"] = "auto"
    else:
        cfg["train_micro_batch_size_per_gpu"] = c.micro_batch
        cfg["gradient_accumulation_steps"] = c.grad_accum
        cfg["gradient_clipping"] = 1.0
    if job.precision in ("bf16", "fp16"):
        cfg[job.precision] = {"enabled": "auto" if fill else True}
    offloaded = c.offload_optimizer != "none"
    if hf:
        cfg["optimizer"] = {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto",
                                                         "weight_decay": "auto"}}
    elif not acc:
        cfg["optimizer"] = {"type": "AdamW", "params": {"lr": job.lr}}
    b = c.buckets(job)
    zero: dict = {"stage": c.stage}
    if c.stage >= 1:
        if offloaded:
            zero["offload_optimizer"] = _offload(c.offload_optimizer)
        if c.stage == 3 and c.offload_param != "none":
            zero["offload_param"] = _offload(c.offload_param)
        zero["overlap_comm"] = c.stage >= 2
        zero["contiguous_gradients"] = True
        zero["reduce_bucket_size"] = "auto" if hf and not c.small_buckets else b["reduce"]
        if c.stage < 3:
            zero["allgather_bucket_size"] = b["allgather"]
    if c.stage == 3:
        zero["stage3_prefetch_bucket_size"] = "auto" if hf and not c.small_buckets else b["prefetch"]
        zero["stage3_param_persistence_threshold"] = "auto" if hf and not c.small_buckets else b["persistence"]
        if c.small_buckets:
            zero["stage3_max_live_parameters"] = b["live"]
            zero["stage3_max_reuse_distance"] = b["live"]
        zero["stage3_gather_16bit_weights_on_model_save"] = True
        if c.hpz:
            zero["zero_hpz_partition_size"] = gpus_per_node  # the secondary partition inside each node
    cfg["zero_optimization"] = zero
    cfg["steps_per_print"] = 100
    cfg["wall_clock_breakdown"] = False
    return cfg


def _offload(device: str) -> dict:
    if device == "nvme":
        return {"device": "nvme", "nvme_path": "/local_nvme", "pin_memory": True}
    return {"device": "cpu", "pin_memory": True}


def config_text(c: Candidate, job: Job, gpus_per_node: int) -> str:
    return json.dumps(config_for(c, job, gpus_per_node), indent=2) + "\n"


def what_to_pass(c: Candidate, job: Job) -> list[str]:
    """What the consumer must be told beside the config: the values it fills "auto" from, and the code side."""
    out = []
    if job.target == "hf":
        flags = [f"--per_device_train_batch_size {c.micro_batch}", f"--gradient_accumulation_steps {c.grad_accum}"]
        if job.precision in ("bf16", "fp16"):
            flags.append(f"--{job.precision}")
        if c.checkpointing:
            flags.append("--gradient_checkpointing")
        out.append("TrainingArguments: " + " ".join(flags))
    elif job.target == "accelerate":
        out.append(f"the dataloader's batch_size {c.micro_batch}; Accelerator(gradient_accumulation_steps="
                   f"{c.grad_accum}, mixed_precision=\"{job.precision if job.precision != 'fp32' else 'no'}\")")
        if c.offload_optimizer != "none":
            out.append("the loop's own torch AdamW: Accelerate replaces it with DeepSpeedCPUAdam, keeping its "
                       "parameter groups (ZL219)")
        if c.checkpointing:
            out.append("model.gradient_checkpointing_enable()")
    else:
        if c.checkpointing:
            out.append("activation checkpointing in the model (model.gradient_checkpointing_enable() for a "
                       "transformers model, or deepspeed.checkpointing)")
        out.append("set the learning rate in optimizer.params.lr (written: " + f"{job.lr:g})")
    if c.stage == 3 and job.target == "deepspeed":
        out.append("build the model under deepspeed.zero.Init(config_dict_or_path=...) (the estimate assumes it)")
    if job.lora_rank:
        out.append(f"adapters of rank {job.lora_rank} on every attention and MLP projection (PEFT "
                   "target_modules=\"all-linear\"), the base frozen")
    return out
