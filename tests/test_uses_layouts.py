"""Issue 24's layouts: repositories modelled on real ones (axolotl's and LLaMA-Factory's examples, HF's
examples/pytorch, DeepSpeedExamples' cifar, an inference project, a Slurm multi-node job), each checked for the uses
found, their consumer and world size, and `check --uses`'s findings with the use they are about. The files follow
the projects' own (trimmed to what is read); nothing in them is run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from zerolint.project.uses import find_uses, uses_of

HF_AUTO = {  # transformers' tests/deepspeed/ds_config_zero3.json, trimmed
    "fp16": {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000, "initial_scale_power": 16,
             "hysteresis": 2, "min_loss_scale": 1},
    "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
    "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto",
                                                 "warmup_num_steps": "auto"}},
    "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": True},
                          "overlap_comm": True, "contiguous_gradients": True, "sub_group_size": 1e9,
                          "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
                          "stage3_param_persistence_threshold": "auto",
                          "stage3_gather_16bit_weights_on_model_save": True},
    "gradient_accumulation_steps": "auto",
    "gradient_clipping": "auto",
    "steps_per_print": 2000,
    "train_batch_size": "auto",
    "train_micro_batch_size_per_gpu": "auto",
    "wall_clock_breakdown": False,
}


def tree(root: Path, files: dict[str, str | dict]) -> Path:
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(text, indent=2) + "\n" if isinstance(text, dict) else text)
    return root


def uses(root: Path, config: str) -> list[tuple[str, int | None, list[str]]]:
    """(how the use reads, its world size, what could not be settled) for each use of `config`."""
    found = find_uses(str(root))
    return [(u.describe(), u.world_size, u.unresolved) for u in uses_of(str(root / config), str(root), found)]


def check(root: Path, *args: str) -> list[tuple]:
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "json", "--uses", *args],
                       capture_output=True, text=True, cwd=root, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    return [(d["code"], d["severity"], d["line"], d["message"], [u["where"] for u in d["uses"] or []])
            for d in json.loads(p.stdout)["diagnostics"] if d["severity"] != "info"]


def test_axolotl_examples(tmp_path):
    """An axolotl recipe names the config with `deepspeed:`; its batch keys are the Trainer's arguments."""
    root = tree(tmp_path, {
        "deepspeed_configs/zero1.json": {
            "zero_optimization": {"stage": 1, "overlap_comm": True},
            "bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"},
            "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
            "train_batch_size": "auto", "train_micro_batch_size_per_gpu": 4,
        },
        "deepspeed_configs/zero2.json": {
            "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}},
            "bf16": {"enabled": "auto"}, "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
            "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
        },
        "examples/llama-3/lora-8b.yml": "base_model: NousResearch/Meta-Llama-3-8B\nadapter: lora\n"
                                        "micro_batch_size: 2\ngradient_accumulation_steps: 4\n"
                                        "learning_rate: 0.0002\nbf16: auto\n"
                                        "deepspeed: deepspeed_configs/zero1.json\n",
        "examples/llama-3/qlora-fsdp.yml": "base_model: NousResearch/Meta-Llama-3-8B\nadapter: qlora\n"
                                           "micro_batch_size: 1\ndeepspeed: deepspeed_configs/zero2.json\n",
        "README.md": "```bash\naccelerate launch -m axolotl.cli.train examples/llama-3/lora-8b.yml\n```\n",
    })
    assert uses(root, "deepspeed_configs/zero1.json") == [
        ("examples/llama-3/lora-8b.yml:7: training recipe, HF Trainer", None, [])]
    assert uses(root, "deepspeed_configs/zero2.json") == [
        ("examples/llama-3/qlora-fsdp.yml:4: training recipe, HF Trainer", None, [])]
    assert check(root, "deepspeed_configs/zero1.json") == [
        ("ZL523", "error", 15,
         "ds train_micro_batch_size_per_gpu=4 vs hf per_device_train_batch_size=2 (TrainingArguments as "
         "examples/llama-3/lora-8b.yml:3 writes it): the HF Trainer raises \"Please correct the following DeepSpeed "
         "config values that mismatch TrainingArguments values\" when training starts (used by "
         "examples/llama-3/lora-8b.yml:7: training recipe, HF Trainer)",
         ["examples/llama-3/lora-8b.yml:7"])]
    assert check(root, "deepspeed_configs/zero2.json") == []


def test_llama_factory_examples(tmp_path):
    """LLaMA-Factory's recipes name configs from the repository root; bf16 in the recipe against fp16 in the file."""
    z3 = dict(HF_AUTO, bf16={"enabled": "auto"})  # as LLaMA-Factory's own ds_z3_config.json
    fp16 = dict(HF_AUTO, fp16={"enabled": True}, zero_optimization={"stage": 2})
    del fp16["optimizer"], fp16["scheduler"]
    root = tree(tmp_path, {
        "examples/deepspeed/ds_z3_config.json": z3,
        "examples/deepspeed/ds_z2_fp16.json": fp16,
        "examples/train_full/llama3_full_sft.yaml": "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\n"
                                                    "stage: sft\nfinetuning_type: full\n"
                                                    "deepspeed: examples/deepspeed/ds_z3_config.json\n"
                                                    "per_device_train_batch_size: 1\ngradient_accumulation_steps: 2\n"
                                                    "learning_rate: 1.0e-5\nbf16: true\n",
        "examples/train_lora/llama3_lora_sft_ds2.yaml": "stage: sft\nfinetuning_type: lora\n"
                                                        "deepspeed: examples/deepspeed/ds_z2_fp16.json\n"
                                                        "per_device_train_batch_size: 1\nbf16: true\n",
        "examples/README.md": "```bash\nFORCE_TORCHRUN=1 llamafactory-cli train "
                              "examples/train_full/llama3_full_sft.yaml\n```\n",
    })
    assert uses(root, "examples/deepspeed/ds_z3_config.json") == [
        ("examples/train_full/llama3_full_sft.yaml:4: training recipe, HF Trainer", None, [])]
    assert check(root, "examples/deepspeed/ds_z3_config.json") == []
    assert check(root, "examples/deepspeed/ds_z2_fp16.json") == [
        ("ZL523", "error", 3,
         "ds fp16.enabled=True vs hf fp16|fp16_full_eval=False (TrainingArguments as "
         "examples/train_lora/llama3_lora_sft_ds2.yaml:5 writes it): the HF Trainer raises \"Please correct the "
         "following DeepSpeed config values that mismatch TrainingArguments values\" when training starts (used by "
         "examples/train_lora/llama3_lora_sft_ds2.yaml:3: training recipe, HF Trainer)",
         ["examples/train_lora/llama3_lora_sft_ds2.yaml:3"])]


def test_hf_examples_pytorch(tmp_path):
    """transformers' examples/pytorch: a README launch line runs run_translation.py (a Seq2SeqTrainer behind
    HfArgumentParser) on 2 GPUs with TrainingArguments flags; the config is the tests' ZeRO-3 file."""
    hard = dict(HF_AUTO, train_micro_batch_size_per_gpu=4)
    root = tree(tmp_path, {
        "tests/deepspeed/ds_config_zero3.json": HF_AUTO,
        "tests/deepspeed/ds_config_zero3_mb4.json": hard,
        "examples/pytorch/translation/run_translation.py":
            "from transformers import HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments\n"
            "def main():\n"
            "    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, Seq2SeqTrainingArguments))\n"
            "    model_args, data_args, training_args = parser.parse_args_into_dataclasses()\n"
            "    trainer = Seq2SeqTrainer(model=model, args=training_args)\n",
        "examples/pytorch/translation/README.md":
            "```bash\ndeepspeed --num_gpus 2 examples/pytorch/translation/run_translation.py \\\n"
            "    --deepspeed tests/deepspeed/ds_config_zero3.json \\\n"
            "    --model_name_or_path google-t5/t5-small --per_device_train_batch_size 1 \\\n"
            "    --output_dir output_dir --overwrite_output_dir --fp16 \\\n"
            "    --do_train --max_train_samples 500 --num_train_epochs 1 \\\n"
            "    --dataset_name wmt16 --dataset_config \"ro-en\" --source_lang en --target_lang ro\n"
            "```\n"
            "```bash\ndeepspeed --num_gpus 2 examples/pytorch/translation/run_translation.py \\\n"
            "    --deepspeed tests/deepspeed/ds_config_zero3_mb4.json --per_device_train_batch_size 1\n```\n",
    })
    assert uses(root, "tests/deepspeed/ds_config_zero3.json") == [
        ("examples/pytorch/translation/README.md:2: deepspeed, 2 GPUs, HF Trainer in "
         "examples/pytorch/translation/run_translation.py:5", 2, [])]
    assert check(root, "tests/deepspeed/ds_config_zero3.json") == []
    assert check(root, "tests/deepspeed/ds_config_zero3_mb4.json") == [
        ("ZL523", "error", 45,
         "ds train_micro_batch_size_per_gpu=4 vs hf per_device_train_batch_size=1 (TrainingArguments as "
         "examples/pytorch/translation/README.md:10 writes it): the HF Trainer raises \"Please correct the "
         "following DeepSpeed config values that mismatch TrainingArguments values\" when training starts (used by "
         "examples/pytorch/translation/README.md:10: deepspeed, 2 GPUs, HF Trainer in "
         "examples/pytorch/translation/run_translation.py:5)",
         ["examples/pytorch/translation/README.md:10"])]


def test_raw_deepspeed_project(tmp_path):
    """DeepSpeedExamples' cifar: `deepspeed ... --deepspeed --deepspeed_config ds_config.json` (the first flag a
    switch) and deepspeed.initialize from args; a second launch on 6 GPUs of the host cannot divide the batch."""
    root = tree(tmp_path, {
        "training/cifar/ds_config.json": {
            "train_batch_size": 16, "steps_per_print": 2000,
            "optimizer": {"type": "Adam", "params": {"lr": 0.001, "betas": [0.8, 0.999], "eps": 1e-8,
                                                     "weight_decay": 3e-7}},
            "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": 0, "warmup_max_lr": 0.001,
                                                         "warmup_num_steps": 1000}},
            "gradient_clipping": 1.0, "fp16": {"enabled": True, "loss_scale": 0, "initial_scale_power": 15},
            "zero_optimization": {"stage": 1},
        },
        "training/cifar/run_ds.sh": "#!/bin/bash\n"
                                    "deepspeed --num_gpus 4 cifar10_deepspeed.py --deepspeed --deepspeed_config "
                                    "ds_config.json $@\n",
        "training/cifar/run_ds_6.sh": "deepspeed --include localhost:0,1,2,3,4,5 cifar10_deepspeed.py --deepspeed "
                                      "--deepspeed_config ds_config.json\n",
        "training/cifar/cifar10_deepspeed.py":
            "import deepspeed\n"
            "def main(args):\n"
            "    model_engine, optimizer, trainloader, _ = deepspeed.initialize(\n"
            "        args=args, model=net, model_parameters=parameters, training_data=trainset)\n",
    })
    assert uses(root, "training/cifar/ds_config.json") == [
        ("training/cifar/run_ds.sh:2: deepspeed, 4 GPUs, deepspeed.initialize in training/cifar/cifar10_deepspeed.py:3",
         4, []),
        ("training/cifar/run_ds_6.sh:1: deepspeed, 6 GPUs, deepspeed.initialize in "
         "training/cifar/cifar10_deepspeed.py:3", 6, []),
    ]
    found = check(root, "training/cifar/ds_config.json")
    assert [(c, s, line, w) for c, s, line, _, w in found] == [
        ("ZL402", "error", 2, ["training/cifar/run_ds_6.sh:1"])]
    assert found[0][3].endswith("(used by training/cifar/run_ds_6.sh:1: deepspeed, 6 GPUs, deepspeed.initialize in "
                                "training/cifar/cifar10_deepspeed.py:3)")


def test_inference_project(tmp_path):
    """init_inference reads an inference config (not checked by the training rules, ZL092); a ZeRO-3 inference
    config through HfDeepSpeedConfig without a Trainer is checked as raw DeepSpeed, where "auto" fails."""
    root = tree(tmp_path, {
        "configs/tp2.json": {"tensor_parallel": {"tp_size": 2}, "dtype": "fp16", "replace_with_kernel_inject": True},
        "configs/zero3_infer.json": {"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}},
                                     "fp16": {"enabled": True}, "train_micro_batch_size_per_gpu": "auto"},
        "generate.py": "import deepspeed\nfrom transformers import AutoModelForCausalLM\n"
                       "model = AutoModelForCausalLM.from_pretrained(name)\n"
                       "engine = deepspeed.init_inference(model, config=\"configs/tp2.json\")\n",
        "zero_inference.py": "from transformers.integrations import HfDeepSpeedConfig\nimport deepspeed\n"
                             "dschf = HfDeepSpeedConfig(\"configs/zero3_infer.json\")\n"
                             "model = AutoModelForCausalLM.from_pretrained(name)\n"
                             "engine = deepspeed.initialize(model=model, config_params=ds_config)[0]\n",
        "run.sh": "deepspeed --num_gpus 2 generate.py\ndeepspeed --num_gpus 2 zero_inference.py\n",
    })
    assert uses(root, "configs/tp2.json") == [("generate.py:4: deepspeed.init_inference, DeepSpeed inference", None,
                                               [])]
    assert uses(root, "configs/zero3_infer.json") == [
        ("zero_inference.py:3: HfDeepSpeedConfig, DeepSpeed inference", None, [])]
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "json", "--uses", "--show-info",
                        "configs/tp2.json"], capture_output=True, text=True, cwd=root, timeout=120)
    assert [(d["code"], d["severity"], d["line"]) for d in json.loads(p.stdout)["diagnostics"]] == [
        ("ZL092", "info", 1)]
    assert check(root, "configs/tp2.json") == []
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "json", "--no-uses",
                        "configs/tp2.json"], capture_output=True, text=True, cwd=root, timeout=120)
    assert sorted(d["code"] for d in json.loads(p.stdout)["diagnostics"] if d["severity"] == "error") == [
        "ZL101", "ZL102", "ZL401"]  # read on its own: the inference keys are taken for training keys
    found = check(root, "configs/zero3_infer.json")
    assert [(c, s) for c, s, *_ in found] == [("ZL501", "error")]


def test_slurm_multi_node_project(tmp_path):
    """A Slurm batch file: 4 nodes from #SBATCH, srun runs torchrun with 8 processes a node, --nnodes through
    $SLURM_NNODES; the Trainer's train_batch_size is checked on 32 GPUs."""
    root = tree(tmp_path, {
        "configs/ds_z3.json": dict(HF_AUTO, train_batch_size=64),
        "slurm/train.sbatch": "#!/bin/bash\n#SBATCH --job-name=llm\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\n"
                              "#SBATCH --gpus-per-node=8\n"
                              "export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)\n"
                              "srun torchrun --nnodes $SLURM_NNODES --nproc_per_node 8 --rdzv_backend c10d \\\n"
                              "    --rdzv_endpoint $MASTER_ADDR:29500 train.py --deepspeed configs/ds_z3.json \\\n"
                              "    --per_device_train_batch_size 4 --gradient_accumulation_steps 1\n",
        "train.py": "from transformers import Trainer, TrainingArguments\n"
                    "trainer = Trainer(model=model, args=TrainingArguments(output_dir='out'))\n",
    })
    assert uses(root, "configs/ds_z3.json") == [
        ("slurm/train.sbatch:7: torchrun, 8 GPUs x 4 nodes, HF Trainer in train.py:2", 32, [])]
    found = check(root, "configs/ds_z3.json")
    assert [(c, s, w) for c, s, _, _, w in found] == [("ZL523", "error", ["slurm/train.sbatch:7"])]
    assert "train_batch_size=64" in found[0][3] and "=128" in found[0][3]
