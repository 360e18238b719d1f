"""Batch facet: DeepSpeed's batch inference and assertions (`derive_batch`, the one copy of that arithmetic)
and their replay on this config for a world size."""

from __future__ import annotations

from ...base.record import Record
from ..document import BOOL, NULL, NUMBER, STRING
from ..dsfacts import BATCH_KEYS, SEQUENCE_PARALLEL
from .base import MISSING
from .core import ViewCore
from .values import ValueOutcome

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any


_, MICRO, GAS = BATCH_KEYS  # train_batch_size, the micro batch, the accumulation


class Batch(Record):
    """DeepSpeed's batch triple after its own inference, for one world size, and its assertion's verdict:
    `inferred` says which of the three DeepSpeed derived (by floor division); `error` is DeepSpeed's AssertionError
    text, or None when its batch checks pass."""

    _fields = ("train_batch_size", "micro_batch", "grad_accum", "world_size", "inferred", "error")
    train_batch_size: Any
    micro_batch: Any
    grad_accum: Any
    world_size: Any
    inferred: tuple[str, ...]
    error: str | None

    def __init__(self, train_batch_size: Any, micro_batch: Any, grad_accum: Any, world_size: Any,
                 inferred: tuple[str, ...], error: str | None) -> None:
        self.train_batch_size = train_batch_size
        self.micro_batch = micro_batch
        self.grad_accum = grad_accum
        self.world_size = world_size
        self.inferred = inferred
        self.error = error

    @property
    def consistent(self) -> bool:
        return self.error is None


def derive_batch(tbs: Any, micro: Any, gas: Any, world: Any) -> Batch:
    """`_set_batch_related_parameters` then `_batch_assertion` (runtime/config.py:590-656), on the values as
    DeepSpeed gets them (None = absent). Raises what DeepSpeed raises for values it cannot compute with (TypeError
    for strings). The one copy of this arithmetic: the batch rules, the differential test and verify use it."""
    inferred: tuple[str, ...] = ()
    if tbs is not None and micro is not None and gas is not None:
        pass
    elif tbs is not None and micro is not None:
        gas, inferred = tbs // micro // world, ("gradient_accumulation_steps",)
    elif tbs is not None and gas is not None:
        micro, inferred = tbs // world // gas, ("train_micro_batch_size_per_gpu",)
    elif micro is not None and gas is not None:
        tbs, inferred = micro * gas * world, ("train_batch_size",)
    elif tbs is not None:
        micro, gas = tbs // world, 1
        inferred = ("train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
    elif micro is not None:
        tbs, gas = micro * world, 1
        inferred = ("train_batch_size", "gradient_accumulation_steps")
    else:
        return Batch(tbs, micro, gas, world, (), "AssertionError: Either train_batch_size or "
                                               "train_micro_batch_size_per_gpu needs to be provided")
    error = None
    for name, v in (("Train batch size", tbs), ("Micro batch size per gpu", micro),
                    ("Gradient accumulation steps", gas)):
        if not v > 0:
            error = f"AssertionError: {name}: {v} has to be greater than 0"
            break
    if error is None and tbs != micro * gas * world:
        error = (f"AssertionError: train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * "
                 f"world_size {tbs} != {micro} * {gas} * {world}")
    return Batch(tbs, micro, gas, world, inferred, error)


class BatchFacet(ViewCore):
    """The batch keys and DeepSpeed's batch checks."""

    def batch_value(self, pointer: str) -> int | None:
        """A batch key as DeepSpeed reads it: None when absent or null; the number when it is one (integral
        floats pass DeepSpeed's arithmetic); MISSING when it is something else ("auto", a string, a bool)."""
        n = self.node(pointer)
        if n is None or n.kind == "null":
            return None
        v = self.number(n)
        if v is None:
            return MISSING
        return int(v) if isinstance(v, int) or float(v).is_integer() else MISSING  # (huge ints overflow float())

    def batch_replay(self) -> str | None:
        """Replay DeepSpeed's batch inference and assertions (config.py:590-656) for this world size, on the values
        as DeepSpeed's reader gives them (true counts as 1, fractions stay fractions, strings raise): None when the
        parse passes or the world size is unknown, else DeepSpeed's error."""
        if self.world_size is None:
            return None
        vals: list[Any] = []
        for p in BATCH_KEYS:
            n = self.node(p)
            if n is None or n.kind == NULL:
                vals.append(None)
            elif n.kind == BOOL:
                vals.append(n.value)
            elif n.kind == NUMBER:
                vals.append(self.number(n))
            else:
                return f"TypeError: {self.path(p)} is {n.kind}"
        try:
            tbs, micro, gas = vals  # one value per BATCH_KEYS
            return derive_batch(tbs, micro, gas, self.data_parallel_size()).error
        except (TypeError, ZeroDivisionError, OverflowError) as exc:
            return f"{type(exc).__name__}: {exc}"

    def data_parallel_size(self) -> Any:
        """The world size DeepSpeed's batch arithmetic uses: `--world-size`, divided by `sequence_parallel_size`
        when the key is present (config.py:466-469) — a float, or TypeError for null and strings,
        ZeroDivisionError for 0, as in DeepSpeed. None when the world size is unknown."""
        world: Any = self.world_size
        sp = self.node(SEQUENCE_PARALLEL)
        # before 0.18 initialize hands the file's path to DeepSpeedConfig, which tests `"sequence_parallel_size" in
        # config` on the path string: a file config never divides (0.17.6 __init__.py:188, config.py:679)
        if world is not None and sp is not None and self.since(">=0.18.0"):
            try:
                world = world / (self.number(sp) if sp.kind == NUMBER else sp.to_python())
            except (TypeError, ZeroDivisionError):
                if self.since(">=0.19.3"):
                    raise
                # 0.18.0-0.19.2 wrap the division in `except Exception` and fall back to a world size of 1
                # (0.18.9 config.py:668-686; 0.19.3 narrowed it to RuntimeError/AssertionError/AttributeError)
                return 1
            if isinstance(world, float) and world.is_integer():
                world = int(world)
        return world

    def _consumer_batch_outcome(self, pointer: str) -> "ValueOutcome | None":
        """A string micro batch or accumulation under the HF Trainer or Accelerate: they fail before DeepSpeed does.
        Accelerate's _prepare_deepspeed fills train_batch_size as micro x accumulation x processes // sp (accelerate
        1.15.0 accelerator.py:2227-2234), which a string turns into a TypeError; without a micro batch that step is
        skipped, and the Trainer's check compares the string with TrainingArguments' integer (measured with the real
        Trainer and Accelerator, `zerolint verify --target hf|accelerate`; Open-Assistant's deepspeed_rl.json)."""
        node = self.node(pointer)
        if self.target not in ("hf", "accelerate") or pointer not in (MICRO, GAS) or node is None \
                or node.kind != STRING or self.is_auto(node) or self.is_placeholder(node):
            return None
        if pointer == MICRO or self.node(MICRO) is not None:
            return ValueOutcome("error", f"{self.consumer} fails at initialize: Accelerate fills train_batch_size "
                                         "as micro batch x accumulation x processes, and the string makes that a "
                                         "TypeError (\"unsupported operand type(s) for //: 'str' and 'int'\")",
                                "initialize")
        if self.target == "hf":
            return ValueOutcome("error", "the HF Trainer fails at initialize: its check compares the string with "
                                         "TrainingArguments' gradient_accumulation_steps (\"Please correct the "
                                         "following DeepSpeed config values that mismatch TrainingArguments values\")",
                                "initialize")
        return None  # Accelerate without a micro batch: DeepSpeed's parse meets the string (LAX_CHECKED)

    def _batch_outcome(self, pointer: str) -> "ValueOutcome | None":
        node = self.node(pointer)
        if pointer not in (*BATCH_KEYS, SEQUENCE_PARALLEL) or node is None or self.world_size is None:
            return None
        if pointer in BATCH_KEYS and node.kind not in (NUMBER, BOOL):
            return None  # a string, list or object: always a TypeError at parse (LAX_CHECKED)
        error = self.batch_replay()
        if error is not None:
            return ValueOutcome("error", f"DeepSpeed fails at parse ({error})", "parse")
        if pointer == SEQUENCE_PARALLEL:
            return None
        if node.kind == BOOL:
            return ValueOutcome("warning", "DeepSpeed's batch arithmetic counts true as 1", None)
        return ValueOutcome("error", "DeepSpeed's parse accepts it (its batch arithmetic works in floats), but a "
                                     "fractional batch size breaks the data loader and the gradient accumulation "
                                     "boundaries later", None)
