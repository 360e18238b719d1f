"""DeepSpeed requires `train_batch_size == train_micro_batch_size_per_gpu × gradient_accumulation_steps ×
data-parallel world size`. When one of the three is missing it derives it by floor division and then asserts
the equation (runtime/config.py:590-652), so `train_batch_size: 8, micro: 4` is fine on 1 or 2 GPUs and fails
on 4 ("8 != 4 * 0 * 4"). The world size is only known at launch, so the error appears after the GPUs are
allocated. With `--world-size N` zerolint replays DeepSpeed's arithmetic for that N; without it, it reports
the combinations no world size can satisfy. Values of zero or below are reported by ZL106."""

from ...model.view import BATCH_KEYS, MISSING, derive_batch
from ..rule import Rule

RULE = Rule(
    code="ZL402",
    name="batch-size-mismatch",
    severity="error",
    summary="train_batch_size does not equal micro batch × gradient accumulation × world size",
    evidence="deepspeed/runtime/config.py:590-652",
    fixable="unsafe",
)


def _show(v):
    """A batch value for a message: as is, or in scientific notation when huge (1e+300 in a config is an integer
    of 301 digits to DeepSpeed; one of thousands of digits cannot even be printed in full: int_max_str_digits)."""
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 64:
        if v.bit_length() < 1000:
            return f"{v:.3e}"
        return f"an integer of about {int(v.bit_length() * 0.30103) + 1} digits"
    return str(v)


def _fmt(batch, world_label):
    return (f"{_show(batch.train_batch_size)} != {_show(batch.micro_batch)} * {_show(batch.grad_accum)} * "
            f"{world_label}")


@RULE.check
def check(view):
    tbs, micro, gas = (view.batch_value(p) for p in BATCH_KEYS)
    if MISSING in (tbs, micro, gas) or any(v is not None and v <= 0 for v in (tbs, micro, gas)):
        return  # "auto", strings and non-positive values are other rules' findings
    if tbs is None and micro is None:
        return  # no batch size at all: DeepSpeed asks for one (ZL401), there is no equation to check
    given = [p for p, v in zip(BATCH_KEYS, (tbs, micro, gas)) if v is not None]
    where = given[0]
    try:
        world = view.data_parallel_size()  # --world-size / sequence_parallel_size
    except (TypeError, ZeroDivisionError):
        return  # a broken sequence_parallel_size: ZL104 / ZL906
    if world is not None:
        batch = derive_batch(tbs, micro, gas, world)
        if batch.consistent:
            return
        derived = f" ({' and '.join(batch.inferred)} derived by DeepSpeed by floor division)" if batch.inferred else ""
        yield view.finding(where,
                           f"with {_world_label(view, world)}: train_batch_size {_fmt(batch, world)}{derived}; "
                           "DeepSpeed fails at parse (\"train_batch_size is not equal to micro_batch_per_gpu * "
                           "gradient_acc_step * world_size\")", at="member",
                           related=[(p, "batch setting") for p in given[1:]],
                           help=_suggest(tbs, micro, gas, world), fails_at="parse")
        return
    # No world size: report only what no world size can satisfy.
    if tbs is not None and micro is not None and gas is not None:
        if tbs % (micro * gas):  # (tbs < micro × gas leaves a remainder too: all are positive)
            yield view.finding(where,
                               f"train_batch_size {_show(tbs)} is not a multiple of micro batch {_show(micro)} × "
                               f"gradient accumulation {_show(gas)} = {_show(micro * gas)}: no world size satisfies "
                               "DeepSpeed's batch equation, so it fails at parse on any number of GPUs", at="member",
                               related=[(p, "batch setting") for p in given[1:]],
                               help="set train_batch_size to micro × accumulation × GPUs, or drop it and let "
                                    "DeepSpeed derive it", fails_at="parse")
    elif tbs is not None and (micro or gas):
        other, name = (micro, "train_micro_batch_size_per_gpu") if micro else (gas, "gradient_accumulation_steps")
        if tbs % other:
            yield view.finding(where,
                               f"train_batch_size {_show(tbs)} is not a multiple of {name} {_show(other)}: DeepSpeed "
                               "derives the missing value by floor division and then fails its batch equation at "
                               "parse, on any number of GPUs", at="member",
                               related=[(p, "batch setting") for p in given[1:]],
                               help=f"make train_batch_size a multiple of {_show(other)}", fails_at="parse")


def _world_label(view, world):
    if world == view.world_size:
        return f"world size {world}"
    sp = view.value("/sequence_parallel_size")
    return f"world size {view.world_size} / sequence_parallel_size {sp} = data-parallel size {world}"


def _suggest(tbs, micro, gas, world):
    if micro is not None and gas is not None:
        return f"set train_batch_size to {_show(micro * gas * world)} (or drop it and let DeepSpeed derive it)"
    if tbs is not None and micro is not None and tbs % (micro * world) == 0:
        return f"set gradient_accumulation_steps to {_show(tbs // (micro * world))}"
    return "make train_batch_size a multiple of micro batch × world size, or set only micro and accumulation"
