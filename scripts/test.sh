#!/usr/bin/env bash
# The project's test command (README, .ci/run): make a venv, install zerolint with everything its tests need
# from this repo's own files, run pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# The CPU build of torch, pinned: an unpinned `torch` (pulled in by deepspeed) would fetch a multi-GB CUDA build.
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e '.[test,verify]'
# DeepSpeed JIT-builds its C++ ops on first use; share one build cache across the whole run.
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-$PWD/.cache/torch_extensions}
export DS_ACCELERATOR=${DS_ACCELERATOR:-cpu}
exec python -m pytest "$@"
