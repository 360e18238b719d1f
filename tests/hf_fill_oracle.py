"""The real HF fill of DeepSpeed configs, for tests/test_hf_differential.py: `python tests/hf_fill_oracle.py IN OUT`.

IN is a JSON list of {"config": {...}, "args": {...TrainingArguments fields}, "steps": N, "hidden": H}; OUT gets,
for each, {"config": the dict HF would hand DeepSpeed} or {"error": {"type", "message"}}. Each case runs exactly
what the Trainer runs before `accelerator.prepare`: `TrainingArguments(deepspeed=config, ...)` (its
`HfTrainerDeepSpeedConfig.trainer_config_process` and Accelerate's `DeepSpeedPlugin` fill), `Trainer(...)`
(Accelerate's `set_mixed_precision`), and `transformers.integrations.deepspeed.deepspeed_init` (its
`trainer_config_finalize` and `deepspeed_optim_sched`), on a randomly initialised GPT-2 of hidden size H. Nothing
of HF is replaced. A process of its own: TrainingArguments sets up torch.distributed (gloo, one rank).
"""

from __future__ import annotations

import copy
import json
import os
import socket
import sys
import tempfile


def main(src: str, dst: str) -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1", LOCAL_RANK="0",
                      LOCAL_WORLD_SIZE="1", DS_ACCELERATOR="cpu", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    from deepspeed.runtime.tensor_parallel import init_utils
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
    from transformers.integrations.deepspeed import deepspeed_init

    with open(src, encoding="utf-8") as f:
        cases = json.load(f)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            # DeepSpeed remembers the first tp_model_init's arguments for the process (tensor_parallel/init_utils.py
            # record_tp_model_init_args); each case is a training job of its own, so it starts without them.
            init_utils._TP_MODEL_INIT_ARGS = None
            try:
                args = TrainingArguments(output_dir=tmp, deepspeed=copy.deepcopy(case["config"]), report_to="none",
                                         save_strategy="no", disable_tqdm=True,
                                         **{**case["args"], "max_steps": case["steps"]})
                model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=case["hidden"], n_head=2, vocab_size=128,
                                                   n_positions=32, bos_token_id=0, eos_token_id=0))
                trainer = Trainer(model=model, args=args)
                deepspeed_init(trainer, num_training_steps=case["steps"])
                out.append({"config": trainer.accelerator.state.deepspeed_plugin.hf_ds_config.config})
            except Exception as e:  # noqa: BLE001 - HF's refusal is a result the test compares
                out.append({"error": {"type": type(e).__name__, "message": str(e)}})
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(out, f, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
