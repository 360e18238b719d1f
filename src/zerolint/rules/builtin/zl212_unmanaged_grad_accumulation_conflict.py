"""`managed_gradient_accumulation: false` (added in DeepSpeed 0.19.4, PR #8184) hands gradient-accumulation
boundaries to the caller. `deepspeed.initialize` asserts three restrictions (engine.py:2030-2036):

- "managed_gradient_accumulation=False supports ZeRO overlap_comm only with ZeRO stage 2": with stage 0 or 1
  and `overlap_comm` on (stage 3 passes the check too: it partitions gradients);
- "... is not supported with pipeline parallelism": a `pipeline` section is taken as the sign of a
  PipelineModule (DeepSpeed itself decides by the model class, so this part is a warning);
- "... is not supported with DeepCompile": `compile.deepcompile: true`.

Parse accepts all three; the assertion fires in `deepspeed.initialize`."""

from ..rule import Rule

RULE = Rule(
    code="ZL212",
    name="unmanaged-grad-accumulation-conflict",
    severity="error",
    summary="managed_gradient_accumulation: false with overlap_comm below stage 2, pipeline, or DeepCompile",
    versions=">=0.19.4",
    evidence="deepspeed/runtime/engine.py:2030-2036",
)

PTR = "/managed_gradient_accumulation"


@RULE.check
def check(view):
    if view.effective(PTR, "bool") is not False or not view.has(PTR):
        return
    stage = view.zero_stage
    if stage in (0, 1) and view.overlap_comm is True:
        yield view.finding(
            PTR, f"managed_gradient_accumulation is false and overlap_comm is on with ZeRO stage {stage}: DeepSpeed "
                 "fails at initialize (AssertionError \"managed_gradient_accumulation=False supports ZeRO "
                 "overlap_comm only with ZeRO stage 2\")",
            at="member", related=[("/zero_optimization/overlap_comm", "overlap_comm")], fails_at="initialize",
            help="set zero_optimization.overlap_comm to false, or use ZeRO stage 2")
    if view.has("/pipeline"):
        yield view.finding(
            PTR, "managed_gradient_accumulation is false and the config has a pipeline section: with a "
                 "PipelineModule DeepSpeed fails at initialize (AssertionError \"managed_gradient_accumulation=False "
                 "is not supported with pipeline parallelism\")",
            at="member", severity="warning", related=[("/pipeline", "pipeline section")],
            help="delete managed_gradient_accumulation (pipeline training manages accumulation itself)")
    if view.effective("/compile/deepcompile", "bool") is True:
        yield view.finding(
            PTR, "managed_gradient_accumulation is false and compile.deepcompile is true: DeepSpeed fails at "
                 "initialize (AssertionError \"managed_gradient_accumulation=False is not supported with "
                 "DeepCompile\")",
            at="member", related=[("/compile/deepcompile", "DeepCompile")], fails_at="initialize",
            help="delete managed_gradient_accumulation, or turn DeepCompile off")
