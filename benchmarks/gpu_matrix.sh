#!/usr/bin/env bash
# The whole GPU matrix of `zerolint verify` in one call (docs/verify-results.md says what it produced).
#
#   benchmarks/gpu_matrix.sh [--groups abc] [--deadline 540] ...     (arguments go to benchmarks/gpu_matrix.py)
#
# Run it from the repository root on a GPU machine. Results go under $OUT (default ./gpu-out): results.jsonl (one
# line per case), verify-gpu-<date>.json (group c, for docs/data/), nvidia-smi.txt, ds_report.txt.
# An offline machine: build the wheels first on a machine with a registry (/work/shared/gpu.md) into .whl/:
# deepspeed (DS_BUILD_OPS=0 pip wheel --no-deps --no-build-isolation deepspeed==0.19.8 -w .whl), its missing
# dependencies for the host's Python, and zerolint itself; they are installed into /tmp/site here.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    export PATH=/tmp/site/bin:$PATH
fi
# verify normalises TORCH_CUDA_ARCH_LIST itself (9.0a -> 9.0); the op cache lives in the (kept) checkout.
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-$PWD/.cache/torch_extensions_gpu}
export ZEROLINT_CACHE_DIR=${ZEROLINT_CACHE_DIR:-$PWD/.cache/zerolint}
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
python3 -c "import torch, sys; print(sys.version); print(torch.__version__, torch.version.cuda)" > "$OUT/versions.txt" 2>&1
python3 -m zerolint --version >> "$OUT/versions.txt" 2>&1
# Run from outside the checkout when zerolint comes from a wheel, so the wheel (not the tree) is imported.
HERE=$PWD
if [ -f /tmp/site/zerolint/__init__.py ]; then cd /tmp; fi
python3 "$HERE/benchmarks/gpu_matrix.py" --out "$OUT" "$@" 2>&1 | tee "$OUT/matrix.log"
