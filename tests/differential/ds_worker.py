"""The DeepSpeed side of the differential harness: one long-lived process that parses configs exactly as
`deepspeed.initialize(config="ds.json")` does in 0.19.8 (deepspeed/__init__.py:534-554): `load_ds_config(path)` (the
file branch: hjson with duplicate-key rejection, tensor_parallel/init_utils.py:19-33), then `DeepSpeedConfig(dict)`,
with world size 1. (Calling `DeepSpeedConfig(path)` directly reads the file the same way but differs in one place:
it tests `"sequence_parallel_size" in config` on the path string, so it never divides the world size by it.)

Run by tests/differential/harness.py as `python ds_worker.py`; imports nothing from zerolint. Protocol: one JSON
object per line on stdin, `{"i": <id>, "b64": <the config file's bytes, base64>}`; one JSON object per line on the
original stdout, `{"i": <id>, "ok": true, "summary": {...}}` or `{"i": <id>, "ok": false, "type": "ValidationError",
"message": "...", "where": "runtime/config.py:512"}`. The first line out is `{"ready": true, "deepspeed": "0.19.8"}`.
DeepSpeed's own output (logging, prints) goes to /dev/null so it cannot corrupt the protocol.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import tempfile
import traceback

# Before anything imports deepspeed: the CPU accelerator (no CUDA probing), no MPI/launcher discovery, UTF-8 text.
os.environ["DS_ACCELERATOR"] = "cpu"
for _var in [v for v in os.environ if v.startswith(("OMPI_", "PMI_", "PMIX_", "MV2_", "SLURM_"))]:
    del os.environ[_var]
for _var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
             "CROSS_RANK", "CROSS_SIZE"):
    os.environ.pop(_var, None)


def main() -> int:
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    import deepspeed
    from deepspeed import comm
    from deepspeed.runtime import config as ds_config
    try:
        from deepspeed.runtime.tensor_parallel.init_utils import load_ds_config
    except ImportError:  # before 0.18: initialize hands the path to DeepSpeedConfig, which reads it with hjson itself
        def load_ds_config(path):
            return path

    # World size 1, as for `zerolint --world-size 1`: the rank/world lookups DeepSpeedConfig makes
    # (runtime/config.py:456-474) answer as a single-process job would (deepspeed-semantics.md §1.3). Nothing
    # here initialises torch.distributed, so DeepSpeed never tries MPI or a rendezvous.
    comm.get_rank = lambda *a, **k: 0
    comm.get_world_size = lambda *a, **k: 1
    assert ds_config.dist is comm and not comm.is_initialized()
    logging.getLogger("DeepSpeed").disabled = True

    _limit_memory()
    workdir = tempfile.mkdtemp(prefix="zl-diff-")
    os.chdir(workdir)  # anything a config makes DeepSpeed create lands here
    path = os.path.join(workdir, "ds_config.json")
    out.write(json.dumps({"ready": True, "deepspeed": deepspeed.__version__}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        with open(path, "wb") as f:
            f.write(base64.b64decode(req["b64"]))
        out.write(json.dumps({"i": req["i"], **parse(ds_config.DeepSpeedConfig, load_ds_config, path)},
                             default=str) + "\n")
    return 0


def _limit_memory(extra: int = 2 << 30) -> None:
    """Some configs make DeepSpeed's batch arithmetic build a huge object (`[4] * 1000000000` when a batch size is
    a list): cap this process's heap so that it becomes a MemoryError verdict instead of the machine's OOM killer."""
    import resource

    try:
        with open("/proc/self/status") as f:
            data_kb = next(int(line.split()[1]) for line in f if line.startswith("VmData:"))
        resource.setrlimit(resource.RLIMIT_DATA, (data_kb * 1024 + extra, resource.RLIM_INFINITY))
    except (OSError, ValueError, StopIteration):
        pass


def parse(DeepSpeedConfig, load_ds_config, path: str) -> dict:
    try:
        cfg = DeepSpeedConfig(load_ds_config(path))
    except BaseException as exc:  # noqa: BLE001 - every way the parse can end is a verdict
        if isinstance(exc, KeyboardInterrupt):
            raise
        return {"ok": False, "type": type(exc).__name__, "message": _short(str(exc)), "where": _where(exc)}
    return {"ok": True, "summary": _summary(cfg)}


def _summary(cfg) -> dict:
    """A few resolved values, to read when reviewing a verdict."""
    get = lambda name: getattr(cfg, name, None)  # noqa: E731
    return {
        "stage": get("zero_optimization_stage"), "fp16": get("fp16_enabled"), "bf16": get("bfloat16_enabled"),
        "train_batch_size": get("train_batch_size"), "micro": get("train_micro_batch_size_per_gpu"),
        "gas": get("gradient_accumulation_steps"),
    }


def _short(text: str, limit: int = 600) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _where(exc: BaseException) -> str:
    """The innermost DeepSpeed (or hjson/pydantic) frame: which check rejected the config."""
    frames = traceback.extract_tb(exc.__traceback__)
    for marker in ("/deepspeed/", "/hjson/", "/pydantic/"):
        for fr in reversed(frames):
            p = fr.filename.replace(os.sep, "/")
            if marker in p:
                return f"{marker.strip('/')}/{p.split(marker, 1)[1]}:{fr.lineno}"
    return f"{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""


if __name__ == "__main__":
    sys.exit(main())
