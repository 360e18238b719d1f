"""Some DeepSpeed keys act on the machine, not on the training: they name a file or directory DeepSpeed writes,
creates, deletes or reads (`flops_profiler.output_file`, `autotuning.metric_path` / `model_info_path` /
`results_dir` / `exps_dir`, the monitors' `output_path` / `job_name`, the offload `nvme_path`s, the
data-efficiency index and metric paths), or modules it imports (`torch_autocast.lower_precision_safe_modules`:
`importlib.import_module` on each name at initialize, runtime/torch_autocast.py:44-51). The full list, with the
DeepSpeed source of each, is zerolint/model/machine_keys.py.

`zerolint verify` runs DeepSpeed on the config, so it never honours them: it points every such path into the
run's own temp dir and drops the module list (DeepSpeed then uses its default classes), and lists each change in
its report. This rule says so when you `check`: nothing is wrong with the config, but the verify run does not
show what these keys do, and a config from someone else can use them to write files or run code wherever it is
trained. Only values DeepSpeed would act on are reported: a non-empty string path, a non-empty list of names.

Severity: warning."""

from ...model import machine_keys
from ..rule import Rule

RULE = Rule(
    code="ZL910",
    name="machine-key",
    severity="warning",
    summary="A key that names a path or a module to import: zerolint verify does not honour it",
    evidence="deepspeed/profiling/flops_profiler/profiler.py:302-307; deepspeed/runtime/engine.py:1500-1510; "
             "deepspeed/runtime/torch_autocast.py:44-51; zerolint/model/machine_keys.py (every key, with its source)",
)


def _value(node):
    if node.kind == "array":
        return [item.value if item.kind == "string" else item for item in node.items or ()]
    return node.value if node.kind == "string" else None


@RULE.check
def check(view):
    if view.root is None:
        return
    for key, ptr, node in machine_keys.find_in_tree(view.root):
        if not machine_keys.acts(key, _value(node)):
            continue
        name = machine_keys.dotted(ptr)
        if key.kind == machine_keys.MODULES:
            yield view.finding(ptr, f"{name} names modules to import: zerolint verify will not honour it (it drops "
                                    "the list, so DeepSpeed uses its default classes)",
                               help="DeepSpeed imports each name's module at initialize when torch_autocast is "
                                    "enabled: keep the list to modules you trust")
        else:
            yield view.finding(ptr, f"{name} names a path: zerolint verify will not honour it (it writes into its "
                                    "own temp dir)",
                               help=f"{key.what}: make sure that is where you want it")
