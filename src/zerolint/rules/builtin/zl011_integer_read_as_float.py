"""JSON readers disagree about `1e6`: DeepSpeed reads a config file with hjson, which turns an integral
exponent or decimal number (`1e6`, `64e6`, `4.0`) into a Python int (below 1e10), while the HF Trainer and
Accelerate read it with `json.load`, which keeps a float, and hand DeepSpeed a dict. In the strict (pydantic)
sections that does not matter: an integer field accepts an integral float (`int_from_float`). In the plain-dict
sections the value reaches DeepSpeed's code unconverted, and a few places need a real int:

- `aio.block_size`, `aio.queue_depth`, `aio.intra_op_parallelism`: arguments of the C++ async-I/O handle
  (pybind11 int), TypeError when NVMe offload builds its swapper;
- `checkpoint.writer.io_buffer_size`: `torch.empty(io_buffer_size)`, TypeError when the fast checkpoint writer
  is created (DeepSpeed's own format string writes it `64e6`, model_checkpointing/constants.py:27);
- `activation_checkpointing.number_checkpoints`: `range(...)` with contiguous checkpointing;
- `flops_profiler.top_modules`: a list slice when the profile is printed;
- `pipeline.activation_checkpoint_interval`: the step of a `range` in PipelineModule.

Elsewhere a float is harmless (`steps_per_print: 1e3` works with `%`, scheduler step counts compare fine) and
is not reported. hjson keeps 1e10 and above as floats, so such a value is reported for raw DeepSpeed too.

Fix (safe: the same number, written as an integer, reads the same for every consumer): write the digits."""

from ...model import edits
from ...model.dsfacts import FLOAT_INTOLERANT_INTS
from ..rule import Rule

RULE = Rule(
    code="ZL011",
    name="integer-read-as-float",
    severity="error",
    summary="An integer written as 1e6/4.0 that a JSON reader turns into a float where DeepSpeed needs an int",
    evidence="deepspeed/runtime/model_checkpointing/writer_factory.py:75, 90; "
             "deepspeed/runtime/swap_tensor/partitioned_param_swapper.py:111-123",
    fixable="safe",
)


@RULE.check
def check(view):
    for ptr, (fails, when) in FLOAT_INTOLERANT_INTS.items():
        node = view.node(ptr)
        v = view.number(node)
        if not isinstance(v, float) or not v.is_integer():
            continue
        reader = "json.load" if not view.raw_deepspeed else "hjson keeps 1e10 and above as floats"
        yield view.finding(
            ptr, f"{view.path(ptr)} is written {node.raw}, which {view.consumer} reads as the float {v!r} "
                 f"({reader}): {fails} {when}",
            at="value", help=f"write it as an integer: {int(v)}",
            fails_at="initialize" if ptr.startswith(("/aio/", "/checkpoint/")) else "step",
            fixes=edits.fixes(edits.make_fix(f"write {int(v)}", edits.replace_value(view.doc, ptr, str(int(v))))))
