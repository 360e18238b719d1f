"""The verify child's body for the real HF Trainer and Accelerate (spec["hf"], built by hf_plan.py). Called by
child.py once torch and DeepSpeed are imported and the process group is up; runs in the child process only.

- `hf`: `TrainingArguments(deepspeed=config, ...)` (HF's `trainer_config_process` fills "auto" and collects
  mismatches), a tiny randomly initialised GPT-2 built from a config after it (under ZeRO-3 HF builds it inside
  `deepspeed.zero.Init`, as `from_pretrained` would), and `Trainer.train()` for the verify's steps: HF's
  `deepspeed_init` (`trainer_config_finalize`: the rest of the fill and the "Please correct the following DeepSpeed
  config values that mismatch TrainingArguments values" check), its optimizer and scheduler handling, and
  Accelerate's `_prepare_deepspeed` are HF's own.
- `accelerate`: `Accelerator(deepspeed_plugin=DeepSpeedPlugin(hf_ds_config=config))`, as `accelerate launch` with
  a `deepspeed_config_file` builds it; the model, a torch AdamW (or `DummyOptim` when the config has an optimizer
  section, `DummyScheduler` for a scheduler section) and a DataLoader go through `accelerator.prepare`.

No weights, no download (HF_HUB_OFFLINE); output_dir is the run's temp dir, nothing is saved, report_to is "none".
"""

from __future__ import annotations

import os
import time

# Forced whatever the --training-args file says (hf_args.py honours only a few fields; these close the rest).
FORCED_ARGS = {"report_to": "none", "save_strategy": "no", "eval_strategy": "no", "push_to_hub": False,
               "logging_strategy": "steps", "logging_steps": 1, "disable_tqdm": True, "dataloader_num_workers": 0,
               "remove_unused_columns": False, "seed": 1234, "use_cpu": False}
CPU_BF16 = "Your setup doesn't support bf16/gpu"  # transformers/training_args.py _validate_args


def _dataset(torch, model: dict, size: int, rank: int):
    class RandomTokens(torch.utils.data.Dataset):
        def __len__(self):
            return size

        def __getitem__(self, i):
            g = torch.Generator().manual_seed(4321 + 7919 * rank + i)
            ids = torch.randint(0, model["vocab"], (model["seq"],), generator=g)
            return {"input_ids": ids, "labels": ids}

    return RandomTokens()


def _gpt2(model: dict):
    from transformers import AutoModelForCausalLM, GPT2Config

    cfg = GPT2Config(n_layer=model["layers"], n_embd=model["hidden"], n_head=model["heads"],
                     vocab_size=model["vocab"], n_positions=model["seq"], bos_token_id=0, eos_token_id=0)
    return AutoModelForCausalLM.from_config(cfg)  # inside zero.Init under ZeRO-3 (modeling_utils._from_config)


def run(child, torch, world: int, engine_facts, estimates) -> None:
    """Fill child.result as Child._run does (status, facts, losses, timings), through HF; child.py passes its
    `engine_facts` and `estimates`, so that what the engine built is read the same way on both paths."""
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    spec, hf = child.spec, child.spec["hf"]
    t = time.monotonic()
    import accelerate
    import transformers

    child.result["versions"].update(transformers=transformers.__version__, accelerate=accelerate.__version__)
    child.result["timings"]["import_hf_s"] = round(time.monotonic() - t, 3)
    child.result["hf"] = {"consumer": hf["consumer"]}
    if hf["consumer"] == "accelerate":
        engine = _accelerate(child, torch, hf, spec)
    else:
        engine = _trainer(child, torch, hf, spec)
        if engine is None:
            return
    child.result["hf"]["config"] = engine.config  # the dict HF handed deepspeed.initialize, "auto" filled
    child.progress("inspect")
    child.result["facts"].update(engine_facts(engine, torch, world))
    child._memory()
    child.result["estimates"] = estimates(spec, child.result["facts"], world)
    child.result["status"] = "pass"


def _trainer(child, torch, hf: dict, spec: dict):
    from transformers import Trainer, TrainerCallback, TrainingArguments
    from transformers.integrations.deepspeed import is_deepspeed_zero3_enabled

    steps = spec.get("steps", 3)
    steps_t: list[float] = []
    began: list[float] = []
    losses: list[float] = []

    class Watch(TrainerCallback):  # progress lines, per-step times and losses; stop after the verify's steps
        def on_step_begin(self, args, state, control, **kw):
            child.progress(f"step {state.global_step + 1}", step=state.global_step + 1)
            began.append(time.monotonic())

        def on_step_end(self, args, state, control, **kw):
            steps_t.append(round(time.monotonic() - began[-1], 4))
            if state.global_step >= steps:
                control.should_training_stop = True

        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "loss" in logs:
                losses.append(float(logs["loss"]))

    child.progress("model")  # TrainingArguments first: HF's fill starts there, and ZeRO-3 needs it before the model
    t = time.monotonic()
    try:
        args = TrainingArguments(output_dir=os.path.abspath("hf-output"), deepspeed=spec["config"],
                                 **{**hf["args"], **FORCED_ARGS})
    except ValueError as e:
        if CPU_BF16 in str(e):
            child.result["status"] = "skip"
            child.result["reason"] = ("bf16 from --training-args cannot be verified through the HF Trainer on the "
                                      "CPU: TrainingArguments accepts bf16 only on a bf16 GPU (or with use_cpu, which "
                                      "turns DeepSpeed off). Verify it on a GPU")
            return None
        raise
    model = _gpt2(spec["model"])
    child.result["facts"]["zero_init"] = bool(is_deepspeed_zero3_enabled())
    micro, gas = args.per_device_train_batch_size, args.gradient_accumulation_steps
    data = _dataset(torch, spec["model"], micro * gas * args.max_steps, child.rank)
    trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=[Watch()])
    child.progress("initialize")
    trainer.train()  # deepspeed_init, then accelerator.prepare -> deepspeed.initialize, then the steps
    child.result["timings"]["initialize_s"] = round(time.monotonic() - t, 3)
    child.result["timings"]["step_s"] = steps_t
    child.result["losses"] = losses
    engine = trainer.model_wrapped
    child.result["skipped_steps"] = int(getattr(engine, "skipped_steps", 0) or 0)
    return engine


def _accelerate(child, torch, hf: dict, spec: dict):
    from accelerate import Accelerator
    from accelerate.utils import DeepSpeedPlugin, DummyOptim, DummyScheduler

    a = hf["args"]
    config = spec["config"]
    child.progress("model")
    t = time.monotonic()
    plugin = DeepSpeedPlugin(hf_ds_config=config)
    accelerator = Accelerator(mixed_precision=hf["mixed_precision"], deepspeed_plugin=plugin,
                              gradient_accumulation_steps=a.get("gradient_accumulation_steps", 1))
    model = _gpt2(spec["model"])
    child.result["facts"]["zero_init"] = bool(plugin.zero3_init_flag)
    lr, wd = a.get("learning_rate", 5e-5), a.get("weight_decay", 0.0)
    if "optimizer" in config:
        optimizer = DummyOptim(model.parameters(), lr=lr, weight_decay=wd)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=wd)
    micro = a.get("per_device_train_batch_size", 8)
    steps = spec.get("steps", 3)
    gas = accelerator.gradient_accumulation_steps
    loader = torch.utils.data.DataLoader(_dataset(torch, spec["model"], micro * gas * steps * 4, child.rank),
                                         batch_size=micro)
    objs = [model, optimizer, loader]
    if "scheduler" in config:
        objs.append(DummyScheduler(optimizer, total_num_steps=a.get("max_steps", steps),
                                   warmup_num_steps=int(a.get("warmup_steps", 0))))
    child.progress("initialize")
    prepared = accelerator.prepare(*objs)
    engine, optimizer, loader = prepared[0], prepared[1], prepared[2]
    scheduler = prepared[3] if len(prepared) > 3 else None
    child.result["timings"]["initialize_s"] = round(time.monotonic() - t, 3)
    child._memory("after_initialize")
    gas = engine.gradient_accumulation_steps()
    batches = iter(loader)
    step_times, losses = [], []
    for step in range(1, steps + 1):
        child.progress(f"step {step}", step=step)
        t = time.monotonic()
        for _ in range(gas):
            batch = next(batches)
            with accelerator.accumulate(engine):
                loss = engine(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                if scheduler is not None:
                    scheduler.step()
                optimizer.zero_grad()
        step_times.append(round(time.monotonic() - t, 4))
        losses.append(float(loss.detach().float().item()))
    child.result["timings"]["step_s"] = step_times
    child.result["losses"] = losses
    child.result["skipped_steps"] = int(getattr(engine, "skipped_steps", 0) or 0)
    return engine
