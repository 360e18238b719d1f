#!/usr/bin/env bash
# Issue 21 on one GPU host, in one device call (docs/verify-results.md says what it produced):
#   1. the GPU op plan of the seed and corpus configs (`verify --prepare --dry-run --format json`);
#   2. the warm runner's time per config with the pool (benchmarks/verify_warm_time.py over 24 configs);
#   3. with what time is left: the runtime differential's spread on CUDA, saved with every run's ops_loaded and
#      ops_planned, so that the op plan is checked against what DeepSpeed loaded on the GPU.
#
#   OUT=... benchmarks/gpu_verify_session.sh [--no-differential]
# An offline host: the wheels in .whl/ (deepspeed built with DS_BUILD_OPS=0, its missing dependencies and
# zerolint's for the host's Python; /work/shared/gpu.md), installed into the host's Python environment (verify's
# children get only zerolint's own root on PYTHONPATH, so DeepSpeed must be installed, not on a PYTHONPATH);
# zerolint itself from src/.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
start=$(date +%s)
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps .whl/*.whl 2>&1 | tail -2
fi
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-/tmp/zl-ext} ZEROLINT_CACHE_DIR=${ZEROLINT_CACHE_DIR:-/tmp/zl-cache}
{ nvidia-smi -L; python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda)"
  command -v ninja; ninja --version; hostname; } > "$OUT/host.txt" 2>&1
# What the warm server's start is made of on this host (imports, in a process of their own, twice: page cache)
for i in 1 2; do python3 - >> "$OUT/imports.txt" 2>&1 <<'PY'
import importlib, time
t0 = time.monotonic()
import torch
t1 = time.monotonic()
import deepspeed
t2 = time.monotonic()
from zerolint.verify.forkserver import PRELOAD
times = {}
for name in PRELOAD:
    t = time.monotonic()
    try:
        importlib.import_module(name)
    except Exception as e:
        times[name] = repr(e)[:80]
        continue
    times[name] = round(time.monotonic() - t, 2)
print({"torch": round(t1 - t0, 2), "deepspeed": round(t2 - t1, 2), "preload": times,
       "total": round(time.monotonic() - t0, 2)})
PY
done
CONFIGS=(fixtures/examples/seed/*.json)
for f in $(ls tests/data/corpus/real-world/*.json | head -18); do CONFIGS+=("$f"); done
python3 -m zerolint verify --prepare --dry-run --format json "${CONFIGS[@]}" > "$OUT/plan.json" 2> "$OUT/plan.err"
timeout 330 python3 benchmarks/verify_warm_time.py --json "$OUT/warm.json" "${CONFIGS[@]}" > "$OUT/warm.txt" 2>&1
echo "warm: rc=$? at $(( $(date +%s) - start )) s" >> "$OUT/host.txt"
if [ "${1:-}" != "--no-differential" ]; then
    left=$(( 560 - ($(date +%s) - start) ))
    if [ "$left" -gt 120 ]; then
        DS_ACCELERATOR=cuda timeout "$left" python3 benchmarks/runtime_differential.py --accelerator cuda \
            --subset 60 --jobs 6 --out "$OUT/rtd.json" > "$OUT/rtd.txt" 2>&1
        echo "differential: rc=$? at $(( $(date +%s) - start )) s" >> "$OUT/host.txt"
    fi
fi
