"""How DeepSpeed treats the values of lax (plain-dict) keys: which wrong values fail (and when), which it tolerates,
and where a literal "auto" crashes. The predicates take (view, node) or (node): the view answers hjson number
semantics and neighbouring keys. Probed against DeepSpeed 0.19.8's own parse with tests/differential.
"""

from __future__ import annotations

from ..document import ARRAY, BOOL, NULL, NUMBER, OBJECT, STRING, Node

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

# pydantic's lax bool parsing of strings (strict sections)
PYDANTIC_BOOL = {"true": True, "false": False, "yes": True, "no": False, "on": True, "off": False, "1": True,
                 "0": False, "t": True, "f": False, "y": True, "n": False}

# Top-level sections and the non-object values DeepSpeed 0.19.8's parse tolerates there (every other non-object
# value fails at parse; probed with tests/differential): `bf16: null` and `aio: null` mean "absent"
# (precision_config.py:34-38, aio_config.py), expert_parallel is only read when truthy (auto_ep_config.py:45-48),
# timers is only asked `"throughput" in timers` (utils/config.py:27-29), datastates_ckpt only for presence.
SECTION_NON_OBJECT_OK = {
    "/bf16": lambda n: n.kind == NULL,
    "/aio": lambda n: n.kind == NULL,
    "/expert_parallel": lambda n: not n.to_python(),
    "/timers": lambda n: n.kind in (STRING, ARRAY) and "throughput" not in n.to_python(),
    "/datastates_ckpt": lambda n: True,
    "/zero_optimization": lambda n: n.kind == BOOL,
    "/checkpoint/writer": lambda n: n.kind == NULL,  # model_checkpointing/config.py: `if writer_dict is None`
    "/autotuning/model_info": lambda n: n.kind == NULL,
    "/data_efficiency/data_sampling/curriculum_learning/curriculum_metrics": lambda n: True,  # copied verbatim
}

def _int_fails(view: Any, node: Node) -> bool:
    """Whether Python's int() fails on the value as DeepSpeed's reader gives it."""
    try:
        int(view.number(node) if node.kind == NUMBER else node.to_python())
    except (TypeError, ValueError, OverflowError):
        return True
    return False


_DYNAMIC_BATCHING = "/data_efficiency/data_sampling/dynamic_batching"


def _plain_fp16_power_fails(view: Any, node: Node) -> bool:
    """Where fp16 is a plain dict (before the pydantic fp16 model), its keys are read only when fp16 is enabled, by
    truthiness (0.16.9 config.py:161-165, 204-213), and then `2**initial_scale_power` raises at parse: TypeError for
    a string, null, list or object, OverflowError for a float of 1024 or more."""
    if view.is_strict("/fp16") or not view.value("/fp16/enabled"):
        return False
    if node.kind == NUMBER:
        number = view.number(node)
        return isinstance(number, float) and not number < 1024
    return node.kind != BOOL

# Lax keys whose every invalid value fails at parse, beyond LAX_CHECKED.
# pointer -> (fails(view, node), what DeepSpeed raises)
LAX_PARSE_CHECKED = {
    "/expert_parallel/load_balance_coeff": (
        lambda v, n: n.kind != NULL, "ValueError: load_balance_coeff is not supported in this AutoEP build; only "
                                     "null is accepted (module_inject/auto_ep_config.py:73-76)"),
    # config.py:716-721 `if vocabulary_size and vocabulary_size % 8 != 0`: a non-empty string, list or object
    "/vocabulary_size": (
        lambda v, n: n.kind in (STRING, ARRAY, OBJECT) and bool(n.to_python()),
        "TypeError from `vocabulary_size % 8` in the tensor-core alignment check"),
    # zero/config.py:60-78: with the legacy `zero_optimization: true`, it is validated as allgather_bucket_size
    "/allgather_size": (
        lambda v, n: (z := v.node("/zero_optimization")) is not None and z.kind == BOOL and z.value is True,
        "pydantic ValidationError: with \"zero_optimization\": true it is zero_optimization.allgather_bucket_size"),
    # data_pipeline/config.py:95-110: int() of the value whenever the key is present (max_tokens: when enabled)
    "/fp16/initial_scale_power": (
        _plain_fp16_power_fails, "fp16 is enabled and `2**initial_scale_power` raises TypeError or OverflowError"),
    f"{_DYNAMIC_BATCHING}/min_batch_size": (_int_fails, "int() of the value raises TypeError/ValueError"),
    f"{_DYNAMIC_BATCHING}/max_batch_size": (_int_fails, "int() of the value raises TypeError/ValueError"),
    f"{_DYNAMIC_BATCHING}/max_tokens": (
        lambda v, n: _int_fails(v, n) and bool((v.value(f"{_DYNAMIC_BATCHING}/enabled") or False)),
        "dynamic batching is enabled and int() of max_tokens raises TypeError/ValueError"),
}

# Lax keys whose parse-time use lets some wrongly typed values through: (accepted(node), what DeepSpeed does).
_INT_FLAG = (lambda n: n.kind == NUMBER and (isinstance(n.value, int) or (  # hjson makes 1.0 the int 1
                 float(n.value).is_integer() and abs(n.value) < 1e10)),
             "DeepSpeed uses the integer as a flag (`x | bool` at config.py:533): 0 is off, anything else on")
_NULL_SKIPPED = (lambda n: n.kind == NULL,
                 "DeepSpeed accepts null here: its validation skips None and _make_upper_case(None) is None "
                 "(model_checkpointing/config.py:22-32), so the writer setting stays None instead of its default")
LAX_LENIENT = {
    "/checkpoint/writer/type": _NULL_SKIPPED,
    "/checkpoint/writer/data_parallel": _NULL_SKIPPED,
    "/wall_clock_breakdown": _INT_FLAG,
    "/flops_profiler/enabled": _INT_FLAG,
    # config.py:398-406 checks `value in [True, False]`, which 0 and 1 pass.
    "/checkpoint/parallel_write/pipeline_stage": (
        lambda n: n.kind == NUMBER and n.value in (0, 1), "DeepSpeed accepts 0 and 1 as false and true"),
    # config.py:197-205 only asks `all(isinstance(m, str) for m in value)`: a string passes (one module name per
    # character), and so does an object (its keys).
    "/torch_autocast/lower_precision_safe_modules": (
        lambda n: n.kind in (STRING, OBJECT), "DeepSpeed iterates over it and takes each character (or key) as a "
                                              "module name"),
    # aio_config.py:38-39 asserts CUDA only for a truthy value: which machine runs it decides, not the config.
    "/aio/use_gds": (lambda n: True, "DeepSpeed reads it by truthiness: a truthy value turns GDS on, which needs a "
                                     "CUDA machine (elsewhere DeepSpeed's parse asserts)"),
}

# Lax (plain-dict) keys whose value DeepSpeed uses in a way that fails when it has the wrong type or range.
LAX_CHECKED: tuple[tuple[str, str], ...] = (
    ("/train_batch_size", "parse"), ("/train_micro_batch_size_per_gpu", "parse"),
    ("/gradient_accumulation_steps", "parse"), ("/wall_clock_breakdown", "parse"),
    ("/flops_profiler/enabled", "parse"), ("/communication_data_type", "parse"),
    ("/seq_parallel_communication_data_type", "parse"), ("/gradient_allreduce_op", "parse"),
    # the name 0.14 / 0.15 read instead (0.15.4 constants.py:252, config.py:251-265; only their schemas have it)
    ("/seq_parallel_comm_data_type", "parse"),
    ("/checkpoint/tag_validation", "parse"), ("/checkpoint/parallel_write/pipeline_stage", "parse"),
    ("/checkpoint/writer/type", "parse"), ("/checkpoint/writer/data_parallel", "parse"),
    ("/data_types/keep_in_fp32_modules", "parse"), ("/torch_autocast/dtype", "parse"),
    ("/torch_autocast/lower_precision_safe_modules", "parse"), ("/aio/use_gds", "parse"),
    ("/gradient_clipping", "the first step"), ("/steps_per_print", "the first step"),
    ("/pipeline/pipe_partitioned", "initialize"), ("/pipeline/grad_partitioned", "initialize"),
    ("/optimizer/params/", "initialize"), ("/scheduler/params/", "initialize"),
    ("/optimizer/type", "parse"), ("/scheduler/type", "initialize"),
    # engine.py:1809 `DtypeEnum(grad_accum_dtype)` in the optimizer's sanity check: ValueError for another name
    ("/data_types/grad_accum_dtype", "initialize"),
    # before 0.19.8 (which removed the block): a mode outside the five raises NotImplementedError at parse
    # (0.18.9 config.py:243-257)
    ("/sparse_attention/mode", "parse"),
)

# Lax (plain-dict) places where a literal "auto" reaches code that needs a number or a name.
AUTO_CRASHES: tuple[tuple[str, str, str], ...] = (
    ("/train_batch_size", "parse", "TypeError: '>' not supported between instances of 'str' and 'int'"),
    ("/train_micro_batch_size_per_gpu", "parse", "TypeError: '>' not supported between instances of 'str' and 'int'"),
    ("/gradient_accumulation_steps", "parse", "TypeError: '>' not supported between instances of 'str' and 'int'"),
    ("/wall_clock_breakdown", "parse", "TypeError: unsupported operand type(s) for |"),
    ("/flops_profiler/enabled", "parse", "TypeError: unsupported operand type(s) for |"),
    ("/communication_data_type", "parse", "ValueError: not one of fp32, fp16, bf16"),
    ("/seq_parallel_communication_data_type", "parse", "ValueError: not one of fp32, fp16, bf16"),
    ("/seq_parallel_comm_data_type", "parse", "ValueError: not one of fp32, fp16, bf16"),  # 0.14 / 0.15
    ("/gradient_clipping", "the first step", "TypeError: '>' not supported between instances of 'str' and 'float'"),
    ("/steps_per_print", "the first step", "TypeError: unsupported operand type(s) for %: 'int' and 'str'"),
    ("/optimizer/type", "initialize", "AssertionError: auto is not a supported DeepSpeed Optimizer"),
    ("/optimizer/params/", "initialize or the first step", "the optimizer receives the string 'auto' as a number"),
    ("/scheduler/type", "initialize", "AssertionError: DeepSpeed does not recognize LR scheduler auto"),
    ("/scheduler/params/", "initialize", "the scheduler receives the string 'auto' as a number"),
)

# -- integers that must not arrive as floats ----------------------------------------------------------------------
# Lax (plain-dict) integer settings that DeepSpeed hands, unconverted, to something that rejects a float. A value
# written `1e6` or `64.0` is an int for DeepSpeed reading the file (hjson, below 1e10) but a float for the HF
# Trainer / Accelerate (json.load); hjson too keeps 1e10 and above as floats. pointer -> (what fails, when).
FLOAT_INTOLERANT_INTS: dict[str, tuple[str, str]] = {
    "/aio/block_size": ("the C++ async-I/O handle (`aio_handle(block_size=...)`, a pybind11 int argument) "
                        "raises TypeError", "when NVMe offload builds its swapper "
                        "(swap_tensor/partitioned_param_swapper.py:111-123, partitioned_optimizer_swapper.py:30-34)"),
    "/aio/queue_depth": ("the C++ async-I/O handle raises TypeError (pybind11 int argument)",
                         "when NVMe offload builds its swapper (swap_tensor/partitioned_param_swapper.py:111-123)"),
    "/aio/intra_op_parallelism": ("the C++ async-I/O handle raises TypeError (pybind11 int argument)",
                                  "when NVMe offload builds its swapper "
                                  "(swap_tensor/partitioned_param_swapper.py:111-123)"),
    "/checkpoint/writer/io_buffer_size": ("`torch.empty(io_buffer_size)` raises TypeError (a size must be an int)",
                                          "when the fast checkpoint writer is created "
                                          "(model_checkpointing/writer_factory.py:75, 90)"),
    "/activation_checkpointing/number_checkpoints": ("`range(number_checkpoints)` raises TypeError",
                                                     "at the first checkpointed forward with "
                                                     "contiguous_memory_optimization "
                                                     "(activation_checkpointing/checkpointing.py:409-416)"),
    "/flops_profiler/top_modules": ("slicing the sorted module list with it raises TypeError",
                                    "when the profile is printed at profile_step "
                                    "(profiling/flops_profiler/profiler.py:495-499)"),
    "/pipeline/activation_checkpoint_interval": ("`range(start, end, interval)` raises TypeError",
                                                 "at the first forward of a PipelineModule "
                                                 "(pipe/engine.py:217-218 hands it to the module; "
                                                 "pipe/module.py:223-233)"),
}
