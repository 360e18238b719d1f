"""LR-scheduler settings that DeepSpeed accepts and then runs in a way the author hardly meant. Each is silent or a
one-line log message:

- WarmupDecayLR without `warmup_max_lr` warms up to 0.001, its default (lr_schedules.py:814-821), whatever the
  optimizer's `lr` is: the schedule overrides the optimizer's learning rate. WarmupLR did the same until the 0.17
  line (0.16.9 lr_schedules.py:658); from 0.17 it defaults to the optimizer's lr (lr_schedules.py:738-739), so
  the catalog's "WarmupLR without warmup_max_lr" is only a finding for DeepSpeed < 0.17 (the source wins).
- `total_num_steps` below `warmup_num_steps` (default 1000) in WarmupDecayLR / WarmupCosineLR: right after warmup
  the LR falls to `warmup_min_lr` (default 0) or to `cos_min_ratio` x lr (lr_schedules.py:835-839, 918-927), so the
  rest of the run barely trains. DeepSpeed logs "total_num_steps ... is less than warmup_num_steps" only.
- torch's ReduceLROnPlateau: DeepSpeed calls `lr_scheduler.step()` after each optimizer step without a metric; the
  TypeError is caught and it calls `step(train_batch_size)` instead (engine.py:3543-3550, "Hack to work with
  Megatron"), so the constant batch size becomes the monitored metric, never improves, and the LR is cut by
  `factor` every `patience + 1` steps, unless the training code passes `lr_kwargs={"metrics": ...}` to
  `engine.step()`. (Seen on an H200 with DeepSpeed 0.19.8: patience 0, factor 0.5 halved the LR at every step.)
  This holds only when the optimizer is used unwrapped (ZeRO off, fp32): with ZeRO, fp16 or bf16 building the
  scheduler fails at initialize instead (ZL611); when the stage or precision is decided at run time, nothing is
  said.

- Values that make the schedule itself wrong, none of which DeepSpeed checks: WarmupCosineLR with `warmup_min_ratio`
  below 0 starts at a negative learning rate (step 0's ratio is warmup_min_ratio, lr_schedules.py:904-916, and the
  optimizer then climbs the loss), or with `cos_min_ratio` above 1 rises above the optimizer's lr after warmup
  (lr_schedules.py:918-927); WarmupLR / WarmupDecayLR with `warmup_max_lr` below `warmup_min_lr` "warm up" downwards
  (lr_schedules.py:741-760).

Fix for the missing warmup_max_lr (unsafe: it changes the schedule): set it to the optimizer's lr."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL610",
    name="scheduler-misbehaves",
    severity="warning",
    summary="A scheduler setting DeepSpeed runs silently wrong (default peak LR, total below warmup, "
            "ReduceLROnPlateau without a metric)",
    evidence="deepspeed/runtime/lr_schedules.py:738-739, 814-839, 918-927; deepspeed/runtime/engine.py:3543-3550",
    fixable="unsafe",
)


@RULE.check
def check(view):
    t = view.scheduler_type
    params = view.node("/scheduler/params")
    if t is None or params is None or params.kind != "object":
        return
    doc = view.doc
    default_peak = t == "WarmupDecayLR" or (t == "WarmupLR" and not view.since(">=0.17.0"))
    if default_peak and params.get("warmup_max_lr") is None:
        lr = view.optimizer_param("lr")
        lr_value = view.number(lr)
        if lr_value != 0.001:
            shown = f"the optimizer's lr {lr.raw}" if lr is not None else "the optimizer's learning rate"
            fix = None
            if lr is not None and (lr_value is not None or view.is_auto(lr)):
                fix = edits.make_fix(f"set warmup_max_lr to {lr.raw}",
                                     edits.insert_member(doc, "/scheduler/params", "warmup_max_lr", lr.raw),
                                     safe=False)
            yield view.finding(
                "/scheduler/params",
                f"scheduler \"{t}\" has no warmup_max_lr, so it warms up to 0.001 (its default), not to {shown}: "
                "the scheduler overrides the optimizer's learning rate",
                help="set scheduler.params.warmup_max_lr to the peak learning rate you want",
                fixes=edits.fixes(fix), fails_at=None)
    if t in ("WarmupDecayLR", "WarmupCosineLR"):
        total = view.number(params.get("total_num_steps"))
        warm_node = params.get("warmup_num_steps")
        warm = 1000 if warm_node is None else view.number(warm_node)
        if isinstance(total, (int, float)) and isinstance(warm, (int, float)) and 0 < total < max(2, warm):
            floor = "warmup_min_lr" if t == "WarmupDecayLR" else "cos_min_ratio x lr"
            yield view.finding(
                "/scheduler/params/total_num_steps",
                f"total_num_steps ({total:g}) is below warmup_num_steps ({warm:g}"
                f"{', the default' if warm_node is None else ''}): right after warmup {t} drops the LR to "
                f"{floor} for the rest of the run; DeepSpeed only logs a warning",
                at="value", help="make total_num_steps the whole run's optimizer steps, above warmup_num_steps",
                fails_at=None)
    yield from _wrong_values(view, t, params)
    if t == "ReduceLROnPlateau" and view.optimizer_wrapper == "":
        yield view.finding(
            "/scheduler/type",
            "scheduler \"ReduceLROnPlateau\" with an unwrapped fp32 optimizer (ZeRO off): DeepSpeed steps it without "
            "a metric, catches the TypeError and calls step(train_batch_size), so the constant batch size is the "
            "monitored metric and the LR is cut every patience + 1 steps, unless your code passes "
            "lr_kwargs={\"metrics\": loss} to engine.step()",
            at="value",
            help="pass the metric through engine.step(lr_kwargs=...), or use another scheduler", fails_at=None)


def _wrong_values(view, t, params):
    """Schedule values DeepSpeed runs without a word although they wreck training."""
    def value(key):
        node = params.get(key)
        number = view.number(node) if node is not None else None
        return node, number if isinstance(number, (int, float)) and not isinstance(number, bool) else None

    if t == "WarmupCosineLR":
        node, low = value("warmup_min_ratio")
        if low is not None and low < 0:
            yield view.finding(node.pointer, f"warmup_min_ratio is {node.raw}: WarmupCosineLR starts at "
                               f"{node.raw} x lr, a negative learning rate, so the first steps climb the loss",
                               at="value", help="write a warmup_min_ratio between 0 and 1 (0 is the default)")
        node, end = value("cos_min_ratio")
        if end is not None and end > 1:
            yield view.finding(node.pointer, f"cos_min_ratio is {node.raw}: after warmup WarmupCosineLR rises to "
                               f"{node.raw} x lr instead of decaying below the optimizer's lr", at="value",
                               help="write a cos_min_ratio between 0 and 1 (0.0001 is the default)")
    if t in ("WarmupLR", "WarmupDecayLR"):
        low_node, low = value("warmup_min_lr")
        high_node, high = value("warmup_max_lr")
        if low is not None and high is not None and high < low:
            yield view.finding(high_node.pointer, f"warmup_max_lr ({high_node.raw}) is below warmup_min_lr "
                               f"({low_node.raw}): {t} warms the learning rate down, not up", at="value",
                               help="swap the two values, or raise warmup_max_lr to the peak learning rate")
