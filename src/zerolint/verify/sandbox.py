"""The environment a verify run gets: only what torch and DeepSpeed need, nothing of the user's that could run code
in it or leak from it.

verify runs DeepSpeed on a config that may come from someone else. The parent's environment can hold secrets
(tokens, cloud keys: a config cannot read them if the child never has them) and a PYTHONPATH that points at a
checkout (where a module list in the config could import its code). So the child, the launcher and every rank
start from an allow-list, not from os.environ minus a deny-list:

- kept: PATH (compilers and ninja for op builds, nvidia-smi), LD_LIBRARY_PATH (CUDA, libaio), locale, the CUDA
  toolchain and device selection (CUDA_HOME, CUDA_PATH, CUDA_VISIBLE_DEVICES, TORCH_CUDA_ARCH_LIST, CC/CXX,
  MAX_JOBS), NCCL_* (cluster network settings), OMP_NUM_THREADS, and the variables the runner sets itself;
- PYTHONPATH: never the user's. runner.child_env sets it to zerolint's own root only;
- PYTHONNOUSERSITE=1 and PYTHONSAFEPATH=1: the environment forms of `python -s -P`, so that no user site-packages
  and no working-directory or script-directory entry lands on sys.path. Flags would reach only the first
  interpreter; torchrun and the deepspeed launcher start each rank as `python -u -m ...`, and those inherit the
  environment;
- HOME: the child sets it to its own temp working directory (child.py) before importing torch, so caches and
  `~` paths (torch hub, triton, DeepSpeed's monitors' defaults) land in the run's directory, removed with it.
"""

from __future__ import annotations

from typing import Mapping

KEEP = frozenset({
    "PATH", "LD_LIBRARY_PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ",
    "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "TORCH_CUDA_ARCH_LIST",
    "CC", "CXX", "MAX_JOBS", "OMP_NUM_THREADS",
    # Set by runner.child_env (kept so that a caller's explicit choice survives the scrub).
    "TORCH_EXTENSIONS_DIR", "DS_ACCELERATOR",
    # The child's test hook for CPUs with fp16 support (child.py `_cpu_fp16_supported`).
    "ZEROLINT_VERIFY_CPU_FP16",
})
KEEP_PREFIXES = ("NCCL_",)
# `python -s -P` for every interpreter of the run (see the module docstring).
PYTHON_ISOLATION = {"PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1"}


def scrubbed(environ: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed part of `environ`, plus the isolation variables. No PYTHONPATH, no HOME, no secrets."""
    env = {k: v for k, v in environ.items() if k in KEEP or k.startswith(KEEP_PREFIXES)}
    env.update(PYTHON_ISOLATION)
    return env
