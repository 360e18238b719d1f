"""With ZeRO stage 3 every rank holds only a shard of each parameter. Saving a model through the HF Trainer or
Accelerate needs the full 16-bit weights gathered on one rank, which DeepSpeed does only when
`zero_optimization.stage3_gather_16bit_weights_on_model_save` (alias `gather_16bit_weights_on_model_save`) is
true; the default is false.

What happens when it is false or missing:

- Accelerate: `accelerator.get_state_dict(model)` (and so `accelerator.save_model`) raises ValueError "Cannot get
  16bit model weights because `stage3_gather_16bit_weights_on_model_save` in DeepSpeed config is False"
  (accelerate/accelerator.py, `get_state_dict`).
- The HF Trainer: `Trainer.save_model` catches that ValueError, logs "stage3_gather_16bit_weights_on_model_save=false.
  Saving the full checkpoint instead, use zero_to_fp32.py to recover weights", writes the model files with an
  empty state dict, deletes the weights file, and saves a DeepSpeed checkpoint (per-rank ZeRO shards) into the
  output directory instead (transformers/trainer.py, `save_model`). The output directory then has `config.json`
  but no `model.safetensors` / `pytorch_model.bin`: `from_pretrained(output_dir)` cannot load it until
  `zero_to_fp32.py` is run. This is the "saved model is empty" report of LlamaFactory#253, BELLE#351,
  DeepSpeed#2413. A PEFT (LoRA) model is the exception: for it, under ZeRO-3, `save_model` calls
  `engine._zero3_consolidated_16bit_state_dict(exclude_frozen_parameters=True)` itself, which does not look at
  the flag, and the adapter weights are saved (transformers 5.24.0 trainer.py:4108-4118; DeepSpeed engine.py:5631,
  where only `save_16bit_model` checks the flag, 5732). zerolint cannot see whether the model is a PEFT model, so
  the HF message states that condition. Accelerate's own `get_state_dict` raises for PEFT models too
  (accelerate 1.15.0 accelerator.py:4074-4087).

Raw DeepSpeed is not affected (`engine.save_checkpoint` writes the shards; `save_16bit_model` returns False with
a warning), so the rule runs only for the HF Trainer and Accelerate targets. An "auto" value is filled by
Accelerate from its `zero3_save_16bit_model` setting (`accelerate config`), so it is not reported for Accelerate;
the HF Trainer does not fill it, so DeepSpeed drops it (false). A config with none of `optimizer`, `scheduler`,
`gradient_accumulation_steps` and `gradient_clipping` looks like an inference config (ZeRO-Inference,
`zero.Init` for generation) that never saves, and is not reported.

Fix (unsafe: gathering costs time and host memory at every save): set it to true."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL215",
    name="zero3-save-without-16bit-gather",
    severity="warning",
    summary="ZeRO-3 without stage3_gather_16bit_weights_on_model_save: HF/Accelerate save no usable weights",
    evidence="https://github.com/huggingface/transformers/pull/25817; "
             "https://github.com/hiyouga/LlamaFactory/issues/253; https://github.com/deepspeedai/DeepSpeed/issues/2413",
    targets=("hf", "accelerate"),
    fixable="unsafe",
)

TRAINING_SIGNS = ("/optimizer", "/scheduler", "/gradient_accumulation_steps", "/gradient_clipping")
KEYS = ("stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save",
        "stage3_gather_fp16_weights_on_model_save")


@RULE.check
def check(view):
    if view.zero_stage != 3 or view.zero is None:
        return
    if not any(view.has(p) for p in TRAINING_SIGNS):
        return  # looks like an inference config: nothing is saved
    node = next((view.zero.get(k) for k in KEYS if view.zero.get(k) is not None), None)
    if node is None:
        where, value = "/zero_optimization/stage", "not set (default false)"
        fix = edits.insert_member(view.doc, "/zero_optimization", KEYS[0], "true")
    else:
        v = view.effective(node.pointer, "bool")
        if v is not False:
            return  # true, filled at run time, or invalid (ZL104)
        where, value = node.pointer, f"{node.raw}" + (" (dropped: the default false applies)"
                                                     if view.is_auto(node) else "")
        fix = edits.replace_value(view.doc, node.pointer, "true")
    consumer = view.consumer
    outcome = ("accelerator.get_state_dict / save_model raise ValueError (\"Cannot get 16bit model weights\")"
               if view.target == "accelerate" else
               "unless the model is a PEFT (LoRA) model, whose adapter weights the Trainer gathers and saves itself, "
               "Trainer.save_model writes no model weights file (config.json only) and a DeepSpeed ZeRO checkpoint "
               "instead; from_pretrained on the output fails until zero_to_fp32.py is run")
    yield view.finding(
        where, f"ZeRO stage 3 with stage3_gather_16bit_weights_on_model_save {value}: when {consumer} saves the "
               f"model, {outcome}",
        at="member" if node is not None else "key",
        help="set zero_optimization.stage3_gather_16bit_weights_on_model_save to true (or convert checkpoints with "
             "zero_to_fp32.py)",
        fixes=edits.fixes(edits.make_fix("set stage3_gather_16bit_weights_on_model_save to true", fix,
                                         safe=False)))
