"""Pipeline parallelism (a `PipelineModule` trained by `PipelineEngine`) works with ZeRO stage 0 or 1 only: the
engine asserts "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism" at `deepspeed.initialize`
(pipe/engine.py:76-77; deepspeedai/DeepSpeed#1629). With stage 1 it also turns `overlap_comm` off with a warning
(engine.py:2663-2666).

DeepSpeed decides "pipeline" by the model's class, not by the config; the `pipeline` section is read only by
PipelineEngine (runtime/config.py:272-285), so zerolint takes its presence as the sign of pipeline training.
That is why the stage-2/3 finding is a warning and not an error: a `pipeline` section in a config for an
ordinary model is inert (and is itself worth deleting)."""

from ..rule import Rule

RULE = Rule(
    code="ZL213",
    name="pipeline-with-zero-2-or-3",
    severity="warning",
    summary="A pipeline section with ZeRO stage 2 or 3 (PipelineEngine asserts stage < 2)",
    evidence="deepspeed/runtime/pipe/engine.py:76-77; https://github.com/deepspeedai/DeepSpeed/issues/1629",
)


@RULE.check
def check(view):
    pipe = view.node("/pipeline")
    if pipe is None or pipe.kind == "null":
        return
    stage = view.zero_stage
    if stage in (2, 3):
        yield view.finding(
            "/pipeline", f"the config has a pipeline section and ZeRO stage {stage}: if the model is a PipelineModule, "
                         "DeepSpeed fails at initialize (AssertionError \"ZeRO-2 and ZeRO-3 are incompatible with "
                         "pipeline parallelism\"); if it is not, DeepSpeed ignores the pipeline section",
            related=[("/zero_optimization/stage", "ZeRO stage")],
            help="use ZeRO stage 0 or 1 for pipeline training, or delete the pipeline section")
    elif stage == 1 and view.overlap_comm is True:
        yield view.finding(
            "/zero_optimization/overlap_comm",
            "overlap_comm is on with ZeRO stage 1 and a pipeline section: with a PipelineModule DeepSpeed turns it "
            "off at initialize (\"Pipeline parallelism does not support overlapped communication, will be "
            "disabled.\")", severity="info", help="set overlap_comm to false to say what runs")
