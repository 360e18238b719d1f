#!/usr/bin/env bash
# The real HF Trainer and Accelerate path of `zerolint verify` on a GPU, in bf16 (on a CPU, bf16 becomes fp32 on
# that path): six HF-style corpus configs ("auto" everywhere; ZeRO-2, ZeRO-3, ZeRO-3 with CPU offload) through
# `--target hf` with TrainingArguments asking for bf16, through `--target accelerate --precision bf16`, and HF's
# mismatch error. docs/verify-results.md says what it produced.
#
#   benchmarks/verify_hf_gpu.sh            # results under $OUT (default ./hf-gpu-out)
#
# An offline machine: .whl/ holds zerolint's and DeepSpeed's wheels (benchmarks/gpu_matrix.sh), .whl/hf/ the
# transformers/accelerate wheels and their dependencies for the host's Python (pip download --only-binary=:all:).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/hf-gpu-out}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps .whl/*.whl
fi
if [ -d .whl/hf ]; then  # only what the host lacks (its numpy, filelock, ... stay)
    python3 -m pip install -q --no-index --find-links .whl/hf transformers==5.24.0 accelerate==1.15.0
fi
python3 -c "import sys, torch, transformers, accelerate; print(sys.version.split()[0], torch.__version__,
transformers.__version__, accelerate.__version__)" | tee "$OUT/versions.txt"
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-$PWD/.cache/torch_extensions}
C=tests/data/corpus/real-world
CONFIGS=("$C/QwenLM__Qwen__finetune__ds_config_zero2.json" "$C/QwenLM__Qwen__finetune__ds_config_zero3.json"
         "$C/bigcode-project__starcoder__chat__deepspeed_z3_config_bf16.json"
         "$C/LAION-AI__Open-Assistant__model__model_training__configs__zero3_config_sft.json"
         "$C/haotian-liu__LLaVA__scripts__zero3_offload.json"
         "$C/hiyouga__LLaMA-Factory__examples__deepspeed__ds_z3_offload_config.json")
ARGS="$OUT/training-args.json"
echo '{"bf16": true, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 2, "learning_rate": 2e-5}' \
    > "$ARGS"
MISMATCH="$OUT/mismatch.json"
printf '{\n  "train_micro_batch_size_per_gpu": 4,\n  "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},\n  "bf16": {"enabled": "auto"},\n  "zero_optimization": {"stage": 2}\n}\n' > "$MISMATCH"
python3 -m zerolint verify --prepare --target hf "${CONFIGS[@]}" 2>&1 | tail -3
run() {  # name, then verify's arguments
    local name=$1; shift
    local t0=$SECONDS
    python3 -m zerolint verify --no-cache --format json -o "$OUT/$name.json" "$@" 2> "$OUT/$name.log"
    echo "$name: exit $? in $((SECONDS - t0)) s"
}
run hf-bf16 --target hf --training-args "$ARGS" "${CONFIGS[@]}"
run accelerate-bf16 --target accelerate --precision bf16 "${CONFIGS[@]}"
run hf-mismatch --target hf --training-args "$ARGS" "$MISMATCH"
python3 - "$OUT" <<'EOF'
import json, sys
from pathlib import Path
for name in ("hf-bf16", "accelerate-bf16", "hf-mismatch"):
    data = json.loads((Path(sys.argv[1]) / f"{name}.json").read_text())
    items = data["verify"] if isinstance(data["verify"], list) else [data["verify"]]
    print(f"== {name}")
    for v in items:
        r = v["runs"][0]
        f = r.get("facts", {})
        print(f"{Path(v['file']).name[:60]:<60} {v['verdict']:<5} stage={f.get('zero_stage')} "
              f"dtype={f.get('param_dtype')} opt={f.get('optimizer_inner')} offload={f.get('optimizer_offload')} "
              f"micro={f.get('micro_batch')} gas={f.get('grad_accum')} {r.get('device_name', '')} "
              f"{r['timings'].get('wall_s')} s {(r.get('failure') or {}).get('message', '')[:160]}")
EOF
