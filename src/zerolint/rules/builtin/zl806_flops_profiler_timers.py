"""`flops_profiler.enabled: true` also switches on `wall_clock_breakdown` (runtime/config.py:533:
`wall_clock_breakdown = wall_clock_breakdown | flops_profiler.enabled`). From then on every step records timer
events around forward, backward and the optimizer step, passes real timers into the ZeRO optimizer, and reads
the elapsed times when it logs them at the end of every step (engine.py:3660-3677), which waits for the device
(utils/timer.py:38-41, `end_event.synchronize()`). The profiler itself only profiles `profile_step`, but the
timer synchronisation stays for the whole run and slows it down. Fine for a profiling run; worth removing from
a production config."""

from ..rule import Rule

RULE = Rule(
    code="ZL806",
    name="flops-profiler-timers",
    severity="info",
    summary="flops_profiler.enabled turns on wall_clock_breakdown (per-step synchronising timers) for the run",
    evidence="deepspeed/runtime/config.py:533; deepspeed/runtime/engine.py:3660-3677; deepspeed/utils/timer.py:38-41",
)

PTR = "/flops_profiler/enabled"


@RULE.check
def check(view):
    if view.effective(PTR, "bool") is not True or not view.has(PTR):
        return
    explicit = view.effective("/wall_clock_breakdown", "bool") is True
    also = " (wall_clock_breakdown is also set)" if explicit else ""
    yield view.finding(
        PTR, "flops_profiler is enabled: DeepSpeed also turns on wall_clock_breakdown for the whole run, so every "
             f"step records and synchronises timers and prints a breakdown{also}, not only the profiled step",
        at="member", help="enable the profiler for profiling runs only")
