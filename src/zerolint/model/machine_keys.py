"""DeepSpeed config keys that act on the machine: they name a file or directory DeepSpeed writes, creates, deletes
or reads, or a module it imports. The one list of them, used by `zerolint verify` (which never honours them:
zerolint/verify/resolve.py points the paths into the run's own temp dir and drops the module lists) and by the
rule ZL910 (which tells `check` users so). No torch or deepspeed import.

Sources: the DeepSpeed 0.19.8 sdist (`deepspeed/...` paths), read key by key. Every section DeepSpeedConfig
parses (runtime/config.py:482-588) was read; the keys that name something on the machine are below, and the
look-alikes that do not are listed in NOT_MACHINE_KEYS with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..base import pointer as jp
from ..base.record import Frozen

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

PATH, MODULES = "path", "modules"


class MachineKey(Frozen):
    """`pattern`: a JSON pointer, a "*" token matching any key of that object; `kind`: PATH (a file or directory) |
    MODULES (a list of "package.Class" names DeepSpeed imports); `what`: what DeepSpeed does with it, for messages;
    `source`: where DeepSpeed reads and uses it."""

    _fields = ("pattern", "kind", "what", "source")
    pattern: str
    kind: str
    what: str
    source: str

    def __init__(self, pattern: str, kind: str, what: str, source: str) -> None:
        self._set("pattern", pattern)
        self._set("kind", kind)
        self._set("what", what)
        self._set("source", source)

    @property
    def tokens(self) -> list[str]:
        return jp.split(self.pattern)


MACHINE_KEYS: tuple[MachineKey, ...] = (
    # profiling/config.py:45 reads it; profiling/flops_profiler/profiler.py:302-307 makedirs its directory and
    # opens it "w" (engine.py:3648-3654 passes it at the profiled step).
    MachineKey("/flops_profiler/output_file", PATH, "the flops profile is written to this file",
               "deepspeed/profiling/config.py:45; deepspeed/profiling/flops_profiler/profiler.py:302-307"),
    # autotuning/config.py:38-40; the autotuner writes its results and experiment configs under them
    # (autotuning/autotuner.py).
    MachineKey("/autotuning/results_dir", PATH, "autotuning results are written under this directory",
               "deepspeed/autotuning/config.py:38; deepspeed/autotuning/autotuner.py"),
    MachineKey("/autotuning/exps_dir", PATH, "autotuning experiments are written under this directory",
               "deepspeed/autotuning/config.py:40; deepspeed/autotuning/autotuner.py"),
    # autotuning/config.py:52, 66; engine.py:1500-1510 (default: the working directory), written with
    # print_json_dist at engine.py:3028 (model info) and 3721 (metrics).
    MachineKey("/autotuning/metric_path", PATH, "autotuning metrics are written to this file",
               "deepspeed/autotuning/config.py:52; deepspeed/runtime/engine.py:1500-1504, 3721"),
    MachineKey("/autotuning/model_info_path", PATH, "the autotuning model info is written to this file",
               "deepspeed/autotuning/config.py:66; deepspeed/runtime/engine.py:1506-1510, 3028"),
    # monitor/config.py:23-29, 55-61; monitor/tensorboard.py:21-43 and monitor/csv_monitor.py:18-30 makedirs
    # os.path.join(output_path, job_name) and write there (an absolute job_name replaces output_path).
    MachineKey("/tensorboard/output_path", PATH, "TensorBoard logs are written under this directory",
               "deepspeed/monitor/config.py:23; deepspeed/monitor/tensorboard.py:21-43"),
    MachineKey("/tensorboard/job_name", PATH, "TensorBoard logs are written to a directory of this name",
               "deepspeed/monitor/config.py:29; deepspeed/monitor/tensorboard.py:31"),
    MachineKey("/csv_monitor/output_path", PATH, "CSV logs are written under this directory",
               "deepspeed/monitor/config.py:55; deepspeed/monitor/csv_monitor.py:18-30"),
    MachineKey("/csv_monitor/job_name", PATH, "CSV logs are written to a directory of this name",
               "deepspeed/monitor/config.py:61; deepspeed/monitor/csv_monitor.py:19-30"),
    # runtime/zero/offload_config.py:30, 64; the swappers rmtree and recreate folders under it and write swap
    # files there (runtime/swap_tensor/partitioned_param_swapper.py:86-89, optimizer_utils.py:174).
    MachineKey("/zero_optimization/offload_param/nvme_path", PATH,
               "parameter swap folders are deleted, created and written under this directory",
               "deepspeed/runtime/zero/offload_config.py:30; "
               "deepspeed/runtime/swap_tensor/partitioned_param_swapper.py:86-89"),
    MachineKey("/zero_optimization/offload_optimizer/nvme_path", PATH,
               "optimizer swap files are written under this directory",
               "deepspeed/runtime/zero/offload_config.py:64; deepspeed/runtime/swap_tensor/optimizer_utils.py:174"),
    # runtime/data_pipeline/data_sampling/data_sampler.py:82-103: rank 0 makedirs data_cluster_path and memory-maps
    # the index files; variable_batch_size_and_lr.py:374-392 reads metrics_path and runs the data analyzer,
    # which writes there.
    MachineKey("/data_efficiency/data_sampling/curriculum_learning/data_cluster_path", PATH,
               "curriculum data clusters are created under this directory",
               "deepspeed/runtime/data_pipeline/data_sampling/data_sampler.py:82-85"),
    MachineKey("/data_efficiency/data_sampling/curriculum_learning/curriculum_metrics/*/index_to_sample_path", PATH,
               "a curriculum index is read from this file",
               "deepspeed/runtime/data_pipeline/data_sampling/data_sampler.py:95-98"),
    MachineKey("/data_efficiency/data_sampling/curriculum_learning/curriculum_metrics/*/index_to_metric_path", PATH,
               "a curriculum metric index is read from this file",
               "deepspeed/runtime/data_pipeline/data_sampling/data_sampler.py:100-103"),
    MachineKey("/data_efficiency/data_sampling/dynamic_batching/metrics_path", PATH,
               "sequence-length metrics are read from, and written to, this directory",
               "deepspeed/runtime/data_pipeline/data_sampling/variable_batch_size_and_lr.py:374-392"),
    # runtime/config.py:197-205 reads the list; torch_autocast.py:44-51 runs importlib.import_module on each
    # name's package at initialize when torch_autocast.enabled (engine.py:669-670): any importable code runs.
    MachineKey("/torch_autocast/lower_precision_safe_modules", MODULES, "each name's module is imported",
               "deepspeed/runtime/config.py:197-205; deepspeed/runtime/torch_autocast.py:44-51"),
)

# Keys that look like paths or modules but act on nothing (read, and ruled out, in the same sources).
NOT_MACHINE_KEYS = {
    "/zero_optimization/leaf_module/classes": "compared with class names, never imported "
                                              "(utils/z3_leaf_module.py:66-77)",
    "/data_types/keep_in_fp32_modules": "name patterns matched against module names (runtime/keep_in_fp32.py)",
    "/optimizer/type": "getattr on DeepSpeed's optimizers or torch.optim, never an import (engine.py:2548)",
    "/scheduler/type": "getattr on lr_schedules or torch.optim.lr_scheduler (engine.py:1926-1932)",
    "/tensor_parallel/preset_model": "a name looked up in AutoTPPresets (runtime/tensor_parallel/config.py:131)",
    "/datastates_ckpt": "imports the fixed package `datastates` from the environment (checkpoint_engine/utils.py:"
                        "29-31); verify's scrubbed PYTHONPATH and temp working directory leave only installed "
                        "packages, so it is not neutralised (ZL907 reports it)",
    "/wandb, /comet": "no path keys; verify runs them offline (WANDB_MODE=offline, comet online: false)",
    "/nebula, /compression_training, ...": "removed sections: DeepSpeed rejects them at parse "
                                           "(runtime/config.py:81-140)",
}


def dotted(pointer: str) -> str:
    """'/flops_profiler/output_file' -> 'flops_profiler.output_file' (how DeepSpeed's docs name keys)."""
    return ".".join(jp.split(pointer))


def acts(key: MachineKey, value: Any) -> bool:
    """Whether DeepSpeed would act on this value. A path: a non-empty string (other types fail DeepSpeed's own
    checks before any file is touched). Modules: a non-empty list of strings (anything else fails at parse,
    runtime/config.py:201-204, or at the name split, before any import)."""
    if key.kind == MODULES:
        return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    return isinstance(value, str) and value != ""


def find_in_dict(cfg: Any) -> Iterator[tuple[MachineKey, str, Any]]:
    """(key, concrete pointer, value) for every machine key present in a config dict."""
    for key in MACHINE_KEYS:
        yield from _match_dict(key, cfg, key.tokens, "")


def _match_dict(key: MachineKey, cur: Any, toks: list[str], ptr: str) -> Iterator[tuple[MachineKey, str, Any]]:
    if not toks:
        yield key, ptr, cur
        return
    if not isinstance(cur, dict):
        return
    head, rest = toks[0], toks[1:]
    names = list(cur) if head == "*" else ([head] if head in cur else [])
    for name in names:
        yield from _match_dict(key, cur[name], rest, jp.join(ptr, name))


def find_in_tree(root) -> Iterator[tuple[MachineKey, str, Any]]:
    """The same over a parsed document's Node tree (zerolint.document.Node): (key, pointer, node)."""
    for key in MACHINE_KEYS:
        yield from _match_tree(key, root, key.tokens, "")


def _match_tree(key: MachineKey, node, toks: list[str], ptr: str):
    if node is None:
        return
    if not toks:
        yield key, ptr, node
        return
    if node.kind != "object":
        return
    head, rest = toks[0], toks[1:]
    for name in (node.keys() if head == "*" else [head]):
        yield from _match_tree(key, node.get(name), rest, jp.join(ptr, name))
