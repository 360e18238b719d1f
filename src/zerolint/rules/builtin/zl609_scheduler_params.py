"""DeepSpeed builds the LR scheduler as `SchedulerClass(optimizer, **scheduler["params"])` (engine.py:1925-1935),
so `params` must be there and must fit the constructor; the parse checks none of it, and every mistake fails
`deepspeed.initialize` after the model is loaded:

- no `params` (or null): `TypeError: argument after ** must be a mapping, not NoneType`;
- a required argument missing: WarmupDecayLR and WarmupCosineLR need `total_num_steps`, OneCycle needs
  `cycle_min_lr` and `cycle_max_lr` (runtime/lr_schedules.py), torch's StepLR needs `step_size`, ... ->
  `TypeError: __init__() missing 1 required positional argument`. The HF Trainer fills only keys that are
  present with "auto"; it does not add missing ones. torch's OneCycleLR also needs `total_steps` or both `epochs`
  and `steps_per_epoch` (ValueError);
- an argument the class does not take: `TypeError: __init__() got an unexpected keyword argument`;
- DeepSpeed's warmup schedulers (0.19.6 and later; 0.18.9 did not check) raise `ValueError: warmup_num_steps must
  be a positive integer` for 0, a negative number, or a float: the HF Trainer and Accelerate read the file with
  json, which keeps `1000.0` a float, while DeepSpeed's own hjson reader makes it an int.

An unknown `warmup_type` only logs a warning and falls back to "log" (ZL105 says so).

Fixes: `"params": {}` for a scheduler whose arguments all have defaults (safe: the only reading under which the
config runs); a near-miss argument name is offered as an unsafe rename."""

from ...model import dsfacts, edits
from ..rule import Rule

RULE = Rule(
    code="ZL609",
    name="scheduler-params",
    severity="error",
    summary="scheduler.params missing, missing a required argument, or with an argument the scheduler does not take",
    evidence="deepspeed/runtime/engine.py:1925-1935; deepspeed/runtime/lr_schedules.py:725-735, 814-821, 865-876",
    fixable="safe",
)

WARMUP = ("WarmupLR", "WarmupDecayLR", "WarmupCosineLR")


@RULE.check
def check(view):
    t = view.scheduler_type
    sig = dsfacts.DEEPSPEED_SCHEDULERS.get(t) or dsfacts.TORCH_SCHEDULERS.get(t)
    if sig is None:
        return
    required, optional = sig
    where = "DeepSpeed's" if t in dsfacts.DEEPSPEED_SCHEDULERS else "torch's"
    params = view.node("/scheduler/params")
    doc = view.doc
    if params is None or params.kind == "null":
        fix = None
        if not required:
            fix = (edits.insert_member(doc, "/scheduler", "params", "{}") if params is None
                   else edits.replace_value(doc, "/scheduler/params", "{}"))
        yield view.finding(
            "/scheduler/params" if params is not None else "/scheduler/type",
            f"scheduler \"{t}\" has {'params: null' if params is not None else 'no params'}: DeepSpeed calls "
            f"{t}(optimizer, **params) and deepspeed.initialize fails with \"TypeError: argument after ** must be a "
            "mapping, not NoneType\"",
            at="value" if params is None else "key",
            help=f"add \"params\" with {', '.join(required)}" if required else "add \"params\": {} (or the "
                                                                                 "arguments you want to set)",
            fixes=edits.fixes(edits.make_fix('add "params": {}', fix)) if fix else [], fails_at="initialize"
        )
        return
    if params.kind != "object":
        return  # a type error (ZL104)
    keys = params.keys()
    missing = [r for r in required if r not in keys]
    if missing:
        yield view.finding(
            "/scheduler/params",
            f"scheduler \"{t}\" needs {', '.join(missing)}, which params does not give: deepspeed.initialize fails "
            f"with \"TypeError: __init__() missing {len(missing)} required positional argument"
            f"{'s' if len(missing) > 1 else ''}: {', '.join(repr(m) for m in missing)}\"",
            help=f"add {', '.join(missing)} to scheduler.params"
                 + (" (\"auto\" lets the HF Trainer fill it)" if "total_num_steps" in missing else ""),
                 fails_at="initialize"
        )
    if t == "OneCycleLR" and "total_steps" not in keys and not ("epochs" in keys and "steps_per_epoch" in keys):
        yield view.finding("/scheduler/params", "torch's OneCycleLR needs total_steps, or both epochs and "
                                                "steps_per_epoch: deepspeed.initialize fails with \"ValueError: You "
                                                "must define either total_steps OR (epochs AND steps_per_epoch)\"",
                           help="add total_steps to scheduler.params", fails_at="initialize")
    allowed = set(required) | set(optional)
    if where == "torch's":
        allowed |= set(dsfacts.TORCH_SCHEDULER_ALWAYS_OK)
    for m in params.members or ():
        if m.key in allowed:
            continue
        guess = view.closest(m.key, sorted(allowed))
        yield view.finding(
            m.pointer,
            f"scheduler.params.{m.key} is not an argument of {where} {t}: deepspeed.initialize fails with "
            f"\"TypeError: __init__() got an unexpected keyword argument '{m.key}'\""
            + (f"; did you mean {guess}?" if guess else ""),
            help=(f"rename it to {guess}" if guess else f"delete {m.key}") + f"; {t} takes "
                 f"{', '.join(required + optional)}",
            fixes=edits.fixes(edits.make_fix(f"rename it to {guess}", edits.rename_key(doc, m, guess), safe=False)
                              if guess else None), fails_at="initialize"
        )
    steps = params.get("warmup_num_steps")
    if t in WARMUP and steps is not None and view.since(">=0.19.6"):
        value = view.number(steps)
        if value is None or isinstance(value, bool):
            return  # "auto" (ZL501/ZL502), a string (ZL104)
        if isinstance(value, float) and not value.is_integer():
            return  # ZL107
        if value <= 0 or isinstance(value, float):
            why = (f"is {steps.raw}" if value <= 0 else
                   f"is {steps.raw}, which {view.consumer} hands over as a float (json keeps the .0)")
            yield view.finding(
                steps.pointer,
                f"scheduler.params.warmup_num_steps {why}: deepspeed.initialize fails with \"ValueError: "
                "warmup_num_steps must be a positive integer\"", at="value",
                help="write a whole number of steps >= 1", fails_at="initialize"
            )
