#!/usr/bin/env bash
# The project's test command (README, .ci/run): make a venv, install zerolint with everything its tests need,
# run pytest. Extra arguments go to pytest.
#
# What it downloads into .venv (once), and the sources of DeepSpeed 0.14.5, 0.15.4, 0.16.9, 0.17.6 and 0.18.9 into .cache/deepspeed-src: the CPU build of torch 2.13.0 (~200 MB), deepspeed 0.19.8, transformers and
# accelerate (the [hf] extra: tests/test_verify_hf.py, tests/test_hf_differential.py) and the test
# tools (pytest, hypothesis, jsonschema, pydantic, pre-commit, import-linter, ruff, pygls and pytest-lsp for the
# language server). Where torch comes from:
#   TORCH_INDEX_URL  the index for torch alone (default https://download.pytorch.org/whl/cpu); its dependencies
#                    come from PyPI, or from PIP_INDEX_URL when set
#   TORCH_WHEEL      a path or URL of a torch 2.13.0 CPU wheel to install instead of asking an index
# pip's own configuration (find-links, a mirror) still applies, so a machine with the wheel at hand stays offline.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TORCH_VERSION=2.13.0
TORCH_INDEX_URL=${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip

torch_installed() {  # the installed torch's version, from its metadata (importing torch takes seconds)
    python -c 'from importlib.metadata import version; print(version("torch"))' 2>/dev/null || true
}

# The CPU build of torch, pinned. An unpinned `torch` (pulled in by deepspeed) would fetch the multi-GB CUDA build
# from PyPI; the +cpu local version can only come from the CPU index (macOS wheels carry no suffix).
case "$(uname -s)" in Darwin) TORCH_SPEC="torch==$TORCH_VERSION" ;; *) TORCH_SPEC="torch==$TORCH_VERSION+cpu" ;; esac
# torch alone (--no-deps) from its index, so an unreachable index costs one lookup, not one per dependency; then
# its dependencies from PyPI (or PIP_INDEX_URL) and pip's other settings.
if [ -n "${TORCH_WHEEL:-}" ]; then
    python -m pip install -q --no-deps "$TORCH_WHEEL"
elif [ "$(torch_installed)" != "${TORCH_SPEC#torch==}" ]; then
    python -m pip install -q --no-deps --index-url "$TORCH_INDEX_URL" \
        --extra-index-url "${PIP_INDEX_URL:-https://pypi.org/simple}" "$TORCH_SPEC"
fi
if [ "$(torch_installed)" != "${TORCH_SPEC#torch==}" ]; then
    echo "scripts/test.sh: .venv has torch '$(torch_installed)'; the tests pin $TORCH_SPEC (the CPU build)" >&2
    exit 2
fi
python -m pip install -q "$TORCH_SPEC" -e '.[test,verify,hf]'

# DeepSpeed's older lines, for the parse differential against each (tests/differential/test_lines.py): their
# sources, unpacked once into .cache/deepspeed-src (the config code is plain Python, imported through PYTHONPATH;
# nothing is built or installed).
for v in 0.14.5 0.15.4 0.16.9 0.17.6 0.18.9; do
    src=.cache/deepspeed-src/$v
    if [ ! -f "$src/deepspeed/__init__.py" ]; then
        mkdir -p .cache/deepspeed-src/dl
        python -m pip download -q --no-deps --no-binary :all: "deepspeed==$v" -d .cache/deepspeed-src/dl
        rm -rf "$src" ".cache/deepspeed-src/deepspeed-$v"
        tar xzf ".cache/deepspeed-src/dl/deepspeed-$v.tar.gz" -C .cache/deepspeed-src
        mv ".cache/deepspeed-src/deepspeed-$v" "$src"
    fi
done

# DeepSpeed JIT-builds its C++ ops on first use; share one build cache across the whole run.
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-$PWD/.cache/torch_extensions}
export DS_ACCELERATOR=${DS_ACCELERATOR:-cpu}
# The layer contract (pyproject.toml [tool.importlinter]: lower layers never import higher ones, nothing imports the
# CLI, no import cycles) and ruff; either failing fails the run before pytest starts.
lint-imports --no-cache
ruff check src tests scripts benchmarks
mypy src/zerolint  # the type checker ([tool.mypy] in pyproject.toml); failing, it too stops the run here

# Property tests run the deterministic profile (tests/conftest.py); HYPOTHESIS_PROFILE=random for a longer run.
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
exec python -m pytest "$@"
