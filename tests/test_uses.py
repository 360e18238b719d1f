"""Issue 24, item 1: the uses of each config, found in repository layouts modelled on real ones, never run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from zerolint.project.uses import find_uses, uses_of

ROOT = Path(__file__).resolve().parents[1]


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def shown(root: Path, config: str) -> list[tuple[str, list[str]]]:
    uses = find_uses(str(root))
    return [(u.describe(), u.details()) for u in uses_of(str(root / config), str(root), uses)]


def test_a_raw_deepspeed_project_with_a_launch_script(tmp_path):
    root = tree(tmp_path, {
        "ds_config.json": "{}",
        "run.sh": "#!/bin/bash\nCFG=ds_config.json\ndeepspeed --num_gpus=4 train.py --deepspeed_config $CFG\n",
        "train.py": "import deepspeed, torch\nopt = None\n"
                    "engine, *_ = deepspeed.initialize(args=args, model=model,\n"
                    "    optimizer=torch.optim.SGD(model.parameters(), lr=0.1), config_params=args.deepspeed_config)\n",
    })
    assert shown(root, "ds_config.json") == [
        ("run.sh:3: deepspeed, 4 GPUs, deepspeed.initialize in train.py:3",
         ["GPUs per node: 4 (run.sh:3)", "script: train.py (run.sh:3)", "consumer: deepspeed.initialize (train.py:3)",
          "world size: 4"]),
    ]


def test_an_hf_example_launched_by_torchrun_and_a_python_launch(tmp_path):
    root = tree(tmp_path, {
        "examples/ds_z3.json": "{}",
        "examples/README.md": "```bash\ntorchrun --nproc_per_node 8 --nnodes 2 run_clm.py \\\n"
                              "  --deepspeed ds_z3.json --output_dir out\n```\n"
                              "```bash\npython -m torch.distributed.run --nproc_per_node=2 run_clm.py "
                              "--deepspeed ds_z3.json\n```\n",
        "examples/run_clm.py": "from transformers import Trainer, TrainingArguments\n\n"
                               "def main():\n    trainer = Trainer(model=m)\n",
    })
    assert shown(root, "examples/ds_z3.json") == [
        ("examples/README.md:2: torchrun, 8 GPUs x 2 nodes, HF Trainer in examples/run_clm.py:4",
         ["GPUs per node: 8 (examples/README.md:2)", "nodes: 2 (examples/README.md:2)",
          "script: run_clm.py (examples/README.md:2)", "consumer: HF Trainer (examples/run_clm.py:4)",
          "world size: 16"]),
        ("examples/README.md:6: torchrun, 2 GPUs, HF Trainer in examples/run_clm.py:4",
         ["GPUs per node: 2 (examples/README.md:6)", "script: run_clm.py (examples/README.md:6)",
          "consumer: HF Trainer (examples/run_clm.py:4)", "world size: 2"]),
    ]


def test_a_slurm_job_takes_nodes_and_gpus_from_its_directives(tmp_path):
    root = tree(tmp_path, {
        "configs/z2.json": "{}",
        "slurm/train.sbatch": "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --gpus-per-node=8\n"
                              "srun torchrun --nnodes $SLURM_NNODES --nproc_per_node $SLURM_GPUS_PER_NODE \\\n"
                              "    train.py --deepspeed configs/z2.json\n",
    })
    assert shown(root, "configs/z2.json") == [
        ("slurm/train.sbatch:4: torchrun, 8 GPUs x 4 nodes",
         ["GPUs per node: 8 (slurm/train.sbatch:4)", "nodes: 4 (slurm/train.sbatch:4)",
          "script: train.py (slurm/train.sbatch:4)", "world size: 32",
          "unresolved: the script train.py is not in the tree, so its consumer is unknown"]),
    ]


def test_accelerate_yaml_and_launch(tmp_path):
    root = tree(tmp_path, {
        "ds.json": "{}",
        "accelerate.yaml": "compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"
                           "mixed_precision: bf16\nnum_machines: 2\nnum_processes: 16\n",
        "launch.sh": "accelerate launch --config_file accelerate.yaml --num_processes 8 loop.py --deepspeed ds.json\n",
        "loop.py": "from accelerate import Accelerator\naccelerator = Accelerator()\n",
    })
    assert shown(root, "ds.json") == [
        ("accelerate.yaml:3: Accelerate config, 8 GPUs x 2 nodes, Accelerate loop",
         ["GPUs per node: 8 (accelerate.yaml:6)", "nodes: 2 (accelerate.yaml:5)",
          "consumer: Accelerate loop (accelerate.yaml:3)", "world size: 16",
          "mixed_precision: 'bf16' (accelerate.yaml:4)"]),
        ("launch.sh:1: accelerate launch, 8 GPUs, Accelerate loop in loop.py:2",
         ["GPUs per node: 8 (launch.sh:1)", "script: loop.py (launch.sh:1)",
          "consumer: Accelerate loop (loop.py:2)", "world size: 8",
          "accelerate_config: 'accelerate.yaml' (launch.sh:1)"]),
    ]


def test_recipes_and_inference_code(tmp_path):
    root = tree(tmp_path, {
        "deepspeed_configs/zero2.json": "{}",
        "examples/llama.yml": "base_model: x\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n"
                              "learning_rate: 0.0002\nbf16: true\ndeepspeed: deepspeed_configs/zero2.json\n",
        "infer/ds_inf.json": "{}",
        "infer/serve.py": "import deepspeed\nengine = deepspeed.init_inference(model, config='infer/ds_inf.json')\n",
        "zero_init.py": "from transformers.integrations import HfDeepSpeedConfig\n"
                        "dschf = HfDeepSpeedConfig('z3.json')\n",
        "z3.json": "{}",
    })
    assert shown(root, "deepspeed_configs/zero2.json") == [
        ("examples/llama.yml:6: training recipe, HF Trainer",
         ["consumer: HF Trainer (examples/llama.yml:6)", "per_device_train_batch_size: 2 (examples/llama.yml:2)",
          "gradient_accumulation_steps: 4 (examples/llama.yml:3)", "learning_rate: 0.0002 (examples/llama.yml:4)",
          "bf16: True (examples/llama.yml:5)"]),
    ]
    assert shown(root, "infer/ds_inf.json") == [
        ("infer/serve.py:2: deepspeed.init_inference, DeepSpeed inference",
         ["consumer: DeepSpeed inference (infer/serve.py:2)"]),
    ]
    # HfDeepSpeedConfig without a Trainer in its module: ZeRO-3 init for inference, not training
    assert shown(root, "z3.json") == [
        ("zero_init.py:2: HfDeepSpeedConfig, DeepSpeed inference", ["consumer: DeepSpeed inference (zero_init.py:2)"]),
    ]


def test_training_arguments_literals_and_a_client_optimizer(tmp_path):
    root = tree(tmp_path, {
        "ds.json": "{}",
        "train.py": "from transformers import TrainingArguments\n"
                    "args = TrainingArguments(output_dir='o', deepspeed='ds.json',\n"
                    "                         per_device_train_batch_size=4, learning_rate=2e-5, bf16=True)\n",
    })
    assert shown(root, "ds.json") == [
        ("train.py:2: TrainingArguments, HF Trainer",
         ["consumer: HF Trainer (train.py:2)", "per_device_train_batch_size: 4 (train.py:3)",
          "learning_rate: 2e-05 (train.py:3)", "bf16: True (train.py:3)"]),
    ]


def test_an_accelerate_plugin_in_code(tmp_path):
    root = tree(tmp_path, {
        "ds.json": "{}",
        "loop.py": "from accelerate import Accelerator\nfrom accelerate.utils import DeepSpeedPlugin\n"
                   "plugin = DeepSpeedPlugin(hf_ds_config='ds.json')\n"
                   "accelerator = Accelerator(deepspeed_plugin=plugin)\n",
    })
    assert shown(root, "ds.json") == [
        ("loop.py:3: DeepSpeedPlugin, Accelerate loop", ["consumer: Accelerate loop (loop.py:3)"]),
    ]


def test_bad_input_is_an_unresolved_use_never_a_crash(tmp_path):
    root = tree(tmp_path, {
        "ds.json": "{}",
        "a.sh": "deepspeed train.py --deepspeed $CONFIG_DIR/ds.json\n"
                "deepspeed --num_gpus $N broken.py --deepspeed ds.json\n"
                "deepspeed --num_gpus 2 'unclosed --deepspeed ds.json\n",
        "broken.py": "def (:\n",
        "bad_syntax.py": "import deepspeed\ndeepspeed.initialize(config='ds.json'\n",
    })
    uses = find_uses(str(root))
    got = [(u.describe(), u.unresolved) for u in uses]
    assert got == [
        ("a.sh:1: deepspeed", ["the config path $CONFIG_DIR/ds.json uses a variable not set in a.sh",
                               "deepspeed without --num_gpus (or --include) uses every GPU of the host",
                               "the script train.py is not in the tree, so its consumer is unknown"]),
        ("a.sh:2: deepspeed", ["--num_gpus $N is not a number zerolint can read",
                               "deepspeed without --num_gpus (or --include) uses every GPU of the host",
                               "the script broken.py does not parse"]),
        ("a.sh:3: a command line", ["the line does not tokenise (No closing quotation)"]),
    ]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_link_is_never_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "run.sh").write_text("deepspeed --num_gpus 8 t.py --deepspeed ds.json\n")
    root = tree(tmp_path / "repo", {"ds.json": "{}"})
    os.symlink(outside / "run.sh", root / "run.sh")
    os.symlink(outside, root / "scripts")
    assert find_uses(str(root)) == []


def test_check_show_uses_lists_each_config_and_what_was_read(tmp_path):
    root = tree(tmp_path, {
        "ds.json": '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}\n',
        "other.json": '{"train_batch_size": 8, "zero_optimization": {"stage": 1}}\n',
        "run.sh": "deepspeed --num_gpus 8 train.py --deepspeed ds.json\n",
        "train.py": "import deepspeed\nengine = deepspeed.initialize(model=m, config=cfg)\n",
    })
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "--show-uses", "ds.json", "other.json"],
                       capture_output=True, text=True, cwd=root, timeout=60, env={**os.environ, "NO_COLOR": "1"})
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout == (
        "ds.json\n"
        "  run.sh:1: deepspeed, 8 GPUs, deepspeed.initialize in train.py:2\n"
        "    GPUs per node: 8 (run.sh:1)\n"
        "    script: train.py (run.sh:1)\n"
        "    consumer: deepspeed.initialize (train.py:2)\n"
        "    world size: 8\n"
        "other.json\n"
        "  no use found in the repository: the consumer is guessed from the file's content\n"
    )


def check_json(root: Path, *args: str) -> list[tuple[str, str, int, str]]:
    import json

    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "json", *args], capture_output=True,
                       text=True, cwd=root, timeout=60)
    assert p.returncode in (0, 1), p.stderr
    return [(d["code"], d["severity"], d["line"], d["message"]) for d in json.loads(p.stdout)["diagnostics"]
            if d["severity"] != "info"]


def test_uses_settle_the_consumer_a_copied_hf_config_gets(tmp_path):
    """A raw-DeepSpeed project with an HF-style config: the default guess reads it as the HF Trainer's; with
    --uses the launch line's deepspeed.initialize decides, and raw DeepSpeed's crash is an error."""
    root = tree(tmp_path, {
        "ds.json": '{\n  "train_micro_batch_size_per_gpu": "auto",\n  "zero_optimization": {"stage": 2}\n}\n',
        "run.sh": "deepspeed --num_gpus 2 train.py --deepspeed ds.json\n",
        "train.py": "import deepspeed\nengine, *_ = deepspeed.initialize(model=m, config=args.deepspeed)\n",
    })
    guessed = check_json(root, "--no-uses", "ds.json")
    assert [(c, s) for c, s, _, _ in guessed] == [("ZL504", "warning")]
    used = check_json(root, "--uses", "ds.json")
    assert used == [("ZL501", "error", 2,
                     "train_micro_batch_size_per_gpu is \"auto\", which only the HF Trainer and Accelerate fill: "
                     "DeepSpeed fails at parse (TypeError: '>' not supported between instances "
                     "of 'str' and 'int') (used by run.sh:1: deepspeed, 2 GPUs, deepspeed.initialize in train.py:2)")]


def test_a_finding_one_use_only_has_says_which(tmp_path):
    """One config, two launch scripts: the batch triple holds on 8 GPUs and not on 4; the world size comes from
    each use, and only the 4-GPU launch gets the error, with its use."""
    root = tree(tmp_path, {
        "ds.json": '{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}\n',
        "train_8.sh": "deepspeed --num_gpus 8 train.py --deepspeed ds.json\n",
        "train_4.sh": "deepspeed --num_gpus 4 train.py --deepspeed ds.json\n",
        "train.py": "import deepspeed\nengine, *_ = deepspeed.initialize(model=m, config=args.deepspeed)\n",
    })
    found = check_json(root, "--uses", "ds.json")
    assert [(c, s) for c, s, _, _ in found] == [("ZL402", "error")]
    assert found[0][3].endswith("(used by train_4.sh:1: deepspeed, 4 GPUs, deepspeed.initialize in train.py:2)")
    assert check_json(root, "--uses", "--world-size", "8", "ds.json") == [  # an explicit --world-size wins, saying so
        ("ZL091", "warning", 1, "checked with --world-size 8, but train_4.sh:1 launches this config on 4 GPUs: the "
                                "setting wins, so the verdicts about that use are not the run's")]


def test_training_arguments_from_the_launch_line_and_the_code_are_compared(tmp_path):
    """ZL523 without --training-args: the fields a use writes are compared; one it does not write is not (the
    default may not be what runs)."""
    root = tree(tmp_path, {
        "ds.json": '{"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1,\n'
                   ' "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}, "zero_optimization": {"stage": 2}}\n',
        "run.sh": "torchrun --nproc_per_node 2 run_clm.py --deepspeed ds.json --per_device_train_batch_size 4 \\\n"
                  "    --learning_rate $LR --bf16\n",
        "run_clm.py": "from transformers import Trainer\ntrainer = Trainer(model=m)\n",
    })
    found = check_json(root, "--uses", "ds.json")
    assert found == [("ZL523", "error", 1,
                      "ds train_micro_batch_size_per_gpu=8 vs hf per_device_train_batch_size=4 (TrainingArguments as "
                      "run.sh:1 writes it): the HF Trainer raises \"Please correct the following DeepSpeed config "
                      "values that mismatch TrainingArguments values\" when training starts (used by run.sh:1: "
                      "torchrun, 2 GPUs, HF Trainer in run_clm.py:2)")]


def test_the_client_optimizer_settles_zero_offload(tmp_path):
    """ZL219: with the code's optimizer read, torch AdamW under ZeRO-Offload is an error; DeepSpeedCPUAdam nothing."""
    config = ('{"train_micro_batch_size_per_gpu": 2,\n'
              ' "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}\n')
    root = tree(tmp_path, {
        "a/ds.json": config,
        "a/train.py": "import deepspeed, torch\n"
                      "e, *_ = deepspeed.initialize(model=m, optimizer=torch.optim.AdamW(m.parameters()),\n"
                      "                             config='ds.json')\n",
        "b/ds.json": config,
        "b/train.py": "import deepspeed\nfrom deepspeed.ops.adam import DeepSpeedCPUAdam\n"
                      "e, *_ = deepspeed.initialize(model=m, optimizer=DeepSpeedCPUAdam(m.parameters()),\n"
                      "                             config='b/ds.json')\n",
    })
    assert [(c, s) for c, s, _, _ in check_json(root, "--no-uses", "a/ds.json")] == [("ZL219", "warning")]
    found = check_json(root, "--uses", "a/ds.json")
    assert found == [("ZL219", "error", 2,
                      "ZeRO-Offload (cpu) with no optimizer section: the code passes torch.optim.AdamW to "
                      "deepspeed.initialize (a/train.py:2), and DeepSpeed accepts only DeepSpeedCPUAdam or "
                      "DeepSpeedCPULion there: it raises ZeRORuntimeException (\"You are using ZeRO-Offload with a "
                      "client provided optimizer\") (zero_force_ds_cpu_optimizer defaults to true) (used by "
                      "a/train.py:2: deepspeed.initialize)")]
    assert check_json(root, "--uses", "b/ds.json") == []


def test_the_client_optimizer_settles_the_tested_list(tmp_path):
    """ZL602: SGD passed by the code under ZeRO is an error; torch AdamW is on the list."""
    root = tree(tmp_path, {
        "ds.json": '{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 1}}\n',
        "sgd.py": "import deepspeed, torch\n"
                  "e, *_ = deepspeed.initialize(model=m, optimizer=torch.optim.SGD(m.parameters(), lr=0.1), "
                  "config='ds.json')\n",
        "adamw.py": "import deepspeed, torch\n"
                    "e, *_ = deepspeed.initialize(model=m, optimizer=torch.optim.AdamW(m.parameters()), "
                    "config='ds.json')\n",
    })
    found = check_json(root, "--uses", "ds.json")
    assert found == [("ZL602", "error", 1,
                      "the code passes torch.optim.SGD to deepspeed.initialize (sgd.py:2), which is not on ZeRO's "
                      "tested list; with ZeRO stage 1 deepspeed.initialize fails with \"AssertionError: You are using "
                      "an untested ZeRO Optimizer\" unless zero_allow_untested_optimizer is true "
                      "(used by sgd.py:2: deepspeed.initialize)")]


def test_an_accelerate_config_launched_with_a_trainer_script_is_read_by_the_trainer(tmp_path):
    """ZL534 ("auto" betas only the Trainer fills) holds for a loop of one's own; the launch line's script uses the
    Trainer, so --uses reads the YAML's config as the Trainer does and ZL534 is not reported."""
    root = tree(tmp_path, {
        "ds.json": '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2},\n'
                   ' "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto"}}}\n',
        "acc.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"
                    "num_processes: 2\n",
        "launch.sh": "accelerate launch --config_file acc.yaml train.py\n",
        "train.py": "from transformers import Trainer\nTrainer(model=m).train()\n",
    })
    assert shown(root, "ds.json")[0][0] == "acc.yaml:3: Accelerate config, 2 GPUs, HF Trainer in train.py:2"
    assert "ZL534" not in [c for c, _, _, _ in check_json(root, "--uses", "ds.json")]


def test_the_json_output_names_the_uses_of_each_finding(tmp_path):
    import json

    root = tree(tmp_path, {
        "ds.json": '{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}\n',
        "train_4.sh": "deepspeed --num_gpus 4 train.py --deepspeed ds.json\n",
        "train.py": "import deepspeed\nengine, *_ = deepspeed.initialize(model=m, config=args.deepspeed)\n",
    })
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "json", "--uses", "ds.json"],
                       capture_output=True, text=True, cwd=root, timeout=60)
    (d,) = [d for d in json.loads(p.stdout)["diagnostics"] if d["code"] == "ZL402"]
    assert d["uses"] == [{"where": "train_4.sh:1", "launcher": "deepspeed", "consumer": "deepspeed", "world_size": 4}]
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "json", "--no-uses", "ds.json"],
                       capture_output=True, text=True, cwd=root, timeout=60)
    assert all("uses" not in d for d in json.loads(p.stdout)["diagnostics"])  # the old shape with --no-uses
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "--format", "json", "ds.json"],
                       capture_output=True, text=True, cwd=root, timeout=60)
    assert [d["uses"] for d in json.loads(p.stdout)["diagnostics"] if d["code"] == "ZL402"] == [
        [{"where": "train_4.sh:1", "launcher": "deepspeed", "consumer": "deepspeed", "world_size": 4}]]  # the default


def many_files(tmp_path: Path, n: int = 60) -> Path:
    """A tree whose uses are spread over many files and directories, for the scan's shares."""
    files = {f"cfg/ds_{i}.json": "{}" for i in range(0, n, 7)}
    for i in range(n):
        files[f"pkg{i % 5}/sub{i % 3}/run_{i}.sh"] = (
            f"CFG=cfg/ds_{i - i % 7}.json\ndeepspeed --num_gpus {1 + i % 4} t{i}.py --deepspeed $CFG\n")
        files[f"pkg{i % 5}/mod_{i}.py"] = (f"import deepspeed\nengine = deepspeed.initialize(config='cfg/ds_{i - i % 7}"
                                           f".json')\n" if i % 3 == 0 else "x = 1\n")
        files[f"docs/note_{i}.md"] = "prose " * (i % 11)
    return tree(tmp_path, files)


def test_the_scan_on_several_cores_finds_what_a_serial_scan_finds_in_its_order(tmp_path):
    root = many_files(tmp_path)
    serial = [(u.describe(), u.details()) for u in find_uses(str(root), workers=0)]
    assert len(serial) == 80
    from zerolint.project.uses import _may_fork

    assert _may_fork()  # the shares below run in child processes
    for workers in (1, 2, 3, 7):
        assert [(u.describe(), u.details()) for u in find_uses(str(root), workers=workers)] == serial


def test_the_read_budget_stops_the_scan_at_the_same_file_on_any_number_of_cores(tmp_path, monkeypatch):
    import zerolint.project.uses as uses_module

    root = many_files(tmp_path)
    monkeypatch.setattr(uses_module, "MAX_TOTAL_BYTES", 3000)  # the children are forked: they read it too
    serial = [u.describe() for u in find_uses(str(root), workers=0)]
    assert 0 < len(serial) < 80
    for workers in (2, 3, 7):
        assert [u.describe() for u in find_uses(str(root), workers=workers)] == serial


def test_a_share_whose_child_fails_is_scanned_by_the_caller(tmp_path, monkeypatch):
    import zerolint.project.uses as uses_module

    root = many_files(tmp_path)
    serial = [u.describe() for u in find_uses(str(root), workers=0)]
    parent, scan = os.getpid(), uses_module._scan_share

    def failing_in_children(root, lo, hi, parts):
        if os.getpid() != parent and lo == 2:  # the second child's share
            raise MemoryError
        return scan(root, lo, hi, parts)

    monkeypatch.setattr(uses_module, "_scan_share", failing_in_children)
    assert uses_module._may_fork()  # else no child runs and this proves nothing
    assert [u.describe() for u in find_uses(str(root), workers=3)] == serial


def test_a_tree_scan_reads_only_text_files_of_the_kinds_it_knows(tmp_path):
    """A file whose name no launch or code file has (a .bin, a .json) is never read for uses or references."""
    from zerolint.project.references import named_configs

    root = tree(tmp_path, {"ds.json": "{}", "blob.bin": "deepspeed --num_gpus 8 t.py --deepspeed ds.json\n",
                           "notes.json": '{"cmd": "deepspeed t.py --deepspeed ds.json"}'})
    assert find_uses(str(root)) == []
    assert named_configs([str(root / "ds.json")]) == {}


def test_hidden_directories_are_not_read_except_ci_workflows(tmp_path):
    """A cache or tool directory (.cache with vendored sources, .idea, .venv-x) holds no use; a CI service's
    directory holds launch lines."""
    line = "deepspeed --num_gpus 8 train.py --deepspeed ds.json\n"
    root = tree(tmp_path, {"ds.json": "{}", ".cache/src/run.sh": line, ".idea/run.sh": line,
                           ".github/workflows/train.yml": "jobs:\n  t:\n    steps:\n      - run: " + line})
    assert [u.describe() for u in uses_of(str(root / "ds.json"), str(root), find_uses(str(root)))] == [
        ".github/workflows/train.yml:4: deepspeed, 8 GPUs"]


def test_host_lists_and_srun_give_the_world_size(tmp_path):
    root = tree(tmp_path, {
        "ds.json": "{}",
        "hosts/hostfile": "# the job's hosts\nworker-1 slots=8\nworker-2 slots=8  # spare\n",
        "launch.sh": "deepspeed --hostfile hosts/hostfile t.py --deepspeed ds.json\n"
                     "deepspeed --hostfile hosts/hostfile --num_nodes 1 --num_gpus 2 t.py --deepspeed ds.json\n"
                     "deepspeed --include worker-1:0,1@worker-2:0,1 t.py --deepspeed ds.json\n"
                     "deepspeed --include localhost:0,1,2 t.py --deepspeed ds.json\n"
                     "deepspeed --include worker-1 t.py --deepspeed ds.json\n"
                     "deepspeed --hostfile /job/hostfile t.py --deepspeed ds.json\n"
                     "srun -N 3 --ntasks-per-node=8 python t.py --deepspeed ds.json\n"
                     "srun --nodes=2 torchrun --nproc_per_node 4 t.py --deepspeed ds.json\n",
        "job.sbatch": "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\nsrun python t.py --deepspeed ds.json\n",
    })
    got = [(u.describe(), u.world_size, [w for w in u.unresolved if "not in the tree, so its consumer" not in w])
           for u in find_uses(str(root))]
    assert got == [
        ("job.sbatch:3: srun, 4 GPUs x 2 nodes", 8, []),
        ("launch.sh:1: deepspeed, 8 GPUs x 2 nodes", 16, []),
        ("launch.sh:2: deepspeed, 2 GPUs", 2, []),
        ("launch.sh:3: deepspeed, 2 GPUs x 2 nodes", 4, []),
        ("launch.sh:4: deepspeed, 3 GPUs", 3, []),
        ("launch.sh:5: deepspeed", None, ["--include worker-1 names worker-1 without slots: every GPU of it is used"]),
        ("launch.sh:6: deepspeed", None,
         ["the hostfile /job/hostfile is not in the tree, so the nodes and their GPUs are unknown"]),
        ("launch.sh:7: srun, 8 GPUs x 3 nodes", 24, []),
        ("launch.sh:8: torchrun, 4 GPUs x 2 nodes", 8, []),
    ]


def test_a_hostfile_through_a_link_out_of_the_tree_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "hostfile").write_text("w1 slots=8\n")
    root = tree(tmp_path / "repo", {"ds.json": "{}",
                                    "run.sh": "deepspeed --hostfile hosts/hostfile t.py --deepspeed ds.json\n"})
    os.symlink(outside, root / "hosts")
    (use,) = find_uses(str(root))
    assert use.world_size is None
    assert "the hostfile hosts/hostfile is not in the tree, so the nodes and their GPUs are unknown" in use.unresolved


def test_an_argument_dataclass_default_names_the_config(tmp_path):
    """HfArgumentParser scripts: the config a TrainingArguments subclass defaults to is a use by the Trainer."""
    root = tree(tmp_path, {
        "ds.json": "{}",
        "train.py": "from dataclasses import dataclass, field\nfrom transformers import TrainingArguments\n"
                    "@dataclass\nclass Args(TrainingArguments):\n"
                    "    deepspeed: str = field(default=\"ds.json\", metadata={\"help\": \"DeepSpeed config\"})\n"
                    "    learning_rate: float = 1e-5\n",
    })
    assert shown(root, "ds.json") == [("train.py:5: Args default, HF Trainer", ["consumer: HF Trainer (train.py:5)"])]


LOOP = ("from accelerate import Accelerator, DeepSpeedPlugin\nfrom accelerate.utils import DummyOptim, DummyScheduler\n"
        "import torch\n"
        "accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(hf_ds_config=\"ds.json\"))\n"
        "optimizer = {optimizer}\n"
        "model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\n")


def test_what_a_loop_hands_accelerator_prepare_settles_zl536(tmp_path):
    with_section = ('{"train_micro_batch_size_per_gpu": 2,\n "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},\n'
                    ' "zero_optimization": {"stage": 2}}\n')
    root = tree(tmp_path, {"ds.json": with_section,
                           "loop.py": LOOP.format(optimizer="torch.optim.AdamW(model.parameters(), lr=1e-4)")})
    assert shown(root, "ds.json") == [
        ("loop.py:4: DeepSpeedPlugin, Accelerate loop",
         ["consumer: Accelerate loop (loop.py:4)", "accelerator.prepare optimizer: 'torch.optim.AdamW' (loop.py:5)"])]
    assert check_json(root, "--uses", "ds.json") == [
        ("ZL536", "error", 2, "optimizer is set in the config and the loop hands accelerator.prepare "
                              "torch.optim.AdamW (loop.py:5): Accelerate raises \"ValueError: You cannot specify an "
                              "optimizer in the config file and in the code at the same time\" before "
                              "deepspeed.initialize (used by loop.py:4: DeepSpeedPlugin, Accelerate loop)")]
    assert [(c, s) for c, s, *_ in check_json(root, "--no-uses", "--target", "accelerate", "ds.json")] == [
        ("ZL536", "warning")]  # without --uses: the condition in words
    (root / "loop.py").write_text(LOOP.format(optimizer="DummyOptim(model.parameters(), lr=1e-4)"))
    assert check_json(root, "--uses", "ds.json") == []
    (root / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2}}\n')
    assert check_json(root, "--uses", "ds.json") == [
        ("ZL536", "error", 1, "the loop hands accelerator.prepare DummyOptim (loop.py:5) and the config has no "
                              "optimizer section: Accelerate raises \"ValueError: You cannot create a `DummyOptim` "
                              "without specifying an optimizer in the config file.\" before deepspeed.initialize "
                              "(used by loop.py:4: DeepSpeedPlugin, Accelerate loop)")]


def test_an_explicit_target_that_a_use_contradicts_is_reported(tmp_path):
    root = tree(tmp_path, {
        "ds.json": '{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2}}\n',
        "run.sh": "deepspeed --num_gpus 2 train.py --deepspeed ds.json\n",
        "train.py": "import deepspeed\nengine, *_ = deepspeed.initialize(model=m, config=args.deepspeed)\n",
    })
    assert check_json(root, "--uses", "--target", "hf", "ds.json") == [
        ("ZL091", "warning", 1, "checked with --target hf, but train.py:2 hands this config to deepspeed.initialize "
                                "(target deepspeed): the setting wins, so the verdicts about that use are not the "
                                "run's")]
    assert check_json(root, "--uses", "--target", "deepspeed", "--world-size", "2", "ds.json") == []


def test_the_gate_lints_the_configs_a_changed_launcher_uses(tmp_path):
    """pre-commit and the Action pass what a change touched: a launch script that changed brings the config it
    launches (checked on its GPUs), and is no skipped candidate; a plain Python file brings nothing."""
    root = tree(tmp_path, {
        "configs/ds.json": '{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, '
                           '"gradient_accumulation_steps": 1}\n',
        "scripts/run.sh": "deepspeed --num_gpus 4 train.py --deepspeed configs/ds.json\n",
        "train.py": "import deepspeed\nengine, *_ = deepspeed.initialize(model=m, config=args.deepspeed)\n",
        "util.py": "x = 1\n",
    })
    p = subprocess.run([sys.executable, "-m", "zerolint", "check", "--only-configs", "--show-files", "scripts/run.sh",
                        "util.py"], capture_output=True, text=True, cwd=root, timeout=60)
    assert p.stdout.splitlines() == [
        "lint  configs/ds.json  (used by scripts/run.sh:1: deepspeed, 4 GPUs, which changed)",
        "1 file to lint, 0 skipped."]
    found = check_json(root, "--only-configs", "scripts/run.sh", "util.py")
    assert [(c, s) for c, s, *_ in found] == [("ZL402", "error")]
    assert check_json(root, "--only-configs", "--no-uses", "scripts/run.sh") == []


def test_the_gate_lints_the_config_a_changed_recipe_names(tmp_path):
    """An axolotl recipe is no DeepSpeed config (skipped by content); changed, it brings the config it names,
    checked with the recipe's TrainingArguments; a named config is not linted twice."""
    root = tree(tmp_path, {
        "ds/zero1.json": '{"zero_optimization": {"stage": 1}, "train_micro_batch_size_per_gpu": 4,\n'
                         ' "gradient_accumulation_steps": "auto", "train_batch_size": "auto"}\n',
        "examples/lora.yml": "base_model: m\nmicro_batch_size: 2\ndeepspeed: ds/zero1.json\n",
        "examples/other.yml": "base_model: m\nlearning_rate: 0.1\n",
    })
    def show_files(*names: str) -> list[str]:
        return subprocess.run([sys.executable, "-m", "zerolint", "check", "--only-configs", "--show-files", *names],
                              capture_output=True, text=True, cwd=root, timeout=60).stdout.splitlines()

    skipped = "skip  examples/other.yml  (YAML without deepspeed_config or distributed_type: DEEPSPEED)"
    assert show_files("examples/lora.yml", "examples/other.yml") == [
        skipped, "lint  ds/zero1.json  (used by examples/lora.yml:3: training recipe, HF Trainer, which changed)",
        "1 file to lint, 1 skipped."]
    assert show_files("examples/lora.yml", "examples/other.yml", "ds/zero1.json") == [
        skipped, "lint  ds/zero1.json  (DeepSpeed config: 4 of 4 top-level keys are DeepSpeed's)",
        "1 file to lint, 1 skipped."]
    found = check_json(root, "--only-configs", "examples/lora.yml")
    assert [(c, s) for c, s, *_ in found] == [("ZL523", "error")]
    assert "(TrainingArguments as examples/lora.yml:2 writes it)" in found[0][3]
