"""`autotuning.enabled: true` turns the training run into an autotuning experiment. The autotuner
(`deepspeed --autotuning tune|run`) reads this section from its input config and writes it into every
experiment it launches; a job started without `--autotuning` gets the same engine behaviour:

- the flops profiler is forced on (`flops_profiler_enabled()` is `enabled or autotuning_enabled()`,
  runtime/engine.py:1462-1463) and profiles step `autotuning.start_profile_step` (default 3, engine.py:1468-1472;
  autotuning/constants.py:58-59), with a forward-pass hook on every module for that step;
- after step `end_profile_step` + 1 (default 5 + 1 = 6) the engine writes `autotuning_metric.json` and calls
  `exit()` (engine.py:3657-3658, 3705-3727): the training run ends there, with exit status 0;
- with `autotuning.model_info.profile: true` it exits after the first forward pass instead (engine.py:3024-3029).

Nothing fails: the run just stops, quietly (measured, DeepSpeed 0.19.8 on CPU: SystemExit in the 6th
engine.step(), exit status 0). Same code in 0.8.0 (engine.py:618, 2220) and 0.16.0 (engine.py:632,
2292)."""

from ..rule import Rule

RULE = Rule(
    code="ZL911",
    name="autotuning-enabled",
    severity="warning",
    summary="autotuning.enabled is true: a training run exits after the autotuning profile steps",
    evidence="deepspeed/runtime/engine.py:1462-1472, 3024-3029, 3657-3658, 3705-3727",
)


@RULE.check
def check(view):
    if view.autotuning_enabled is not True:
        return
    end = view.value("/autotuning/end_profile_step", 5)
    start = view.value("/autotuning/start_profile_step", 3)
    profile = view.value("/autotuning/model_info/profile", False) if view.has("/autotuning/model_info") else False
    last = end + 1 if isinstance(end, int) and not isinstance(end, bool) else "end_profile_step + 1"
    stop = ("after the first forward pass (autotuning.model_info.profile is true)" if profile is True
            else f"at the end of step {last}")
    ptr = "/autotuning/enabled"
    yield view.finding(
        ptr,
        f"autotuning.enabled is true: unless this file is only the input of `deepspeed --autotuning`, the engine "
        f"runs the job as an autotuning experiment: it forces the flops profiler on (profiling step {start}), "
        f"writes autotuning_metric.json and calls exit() {stop}, so training stops there with exit status 0",
        at="value",
        help="keep autotuning.enabled only in the autotuner's input config; train with the config it writes, or "
             "set enabled to false",
    )
