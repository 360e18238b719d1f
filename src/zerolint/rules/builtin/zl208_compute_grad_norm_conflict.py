"""`zero_optimization.compute_grad_norm: false` skips the global gradient-norm computation of the ZeRO-1/2
optimizer. DeepSpeed accepts it only where nothing needs that norm:

- only with ZeRO stage 1 or 2: any other stage fails at parse ("compute_grad_norm=false is supported only with
  ZeRO Stage 1 or 2", zero/config.py:389-393);
- only with `gradient_clipping` 0: clipping needs the norm, and the stage-1/2 optimizer raises ValueError at
  initialize when `gradient_clipping > 0` (stage_1_and_2.py:212-213). **The default is 1.0 since DeepSpeed
  0.19.3** (PR #8068), so a config that simply omits `gradient_clipping` fails;
- not with optimizer offload (stage_1_and_2.py:216-218) and not with ZenFlow (stage_1_and_2.py:214-215);
- not with ZeRO stage 1 + bf16 + fp32 gradient accumulation without CPU offload, which selects the
  BF16_Optimizer (engine.py:2305-2309).

A `gradient_clipping` of "auto" filled by the HF Trainer / Accelerate (from `max_grad_norm`, 1.0 by default) is
decided at run time and not reported. The key exists from DeepSpeed 0.19 (the rule runs when the target
version's schema has it).

Fixes (both unsafe, offered as alternatives): set `gradient_clipping` to 0 (keeps the speed-up, turns clipping
off: the default before 0.19.3, `--prefer no-clipping`, the default choice), or delete `compute_grad_norm`
(keeps clipping, computes the norm again: `--prefer keep-clipping`)."""

from ...model import edits
from ...model.view import MISSING
from ..rule import Rule

RULE = Rule(
    code="ZL208",
    name="compute-grad-norm-conflict",
    severity="error",
    summary="compute_grad_norm: false with a stage, clipping, offload or ZenFlow setting that needs the norm",
    versions=">=0.19",
    evidence="deepspeed/runtime/zero/config.py:389-393; deepspeed/runtime/zero/stage_1_and_2.py:212-218; "
             "deepspeed/runtime/engine.py:2305-2309; https://github.com/deepspeedai/DeepSpeed/pull/8068",
    fixable="alternatives",
)

PTR = "/zero_optimization/compute_grad_norm"


@RULE.check
def check(view):
    if view.prop_schema(PTR) is None or view.effective(PTR, "bool") is not False:
        return
    stage = view.zero_stage
    if stage is None:
        return
    doc = view.doc
    if stage not in (1, 2):
        where = "ZeRO is off (stage 0)" if stage == 0 else "ZeRO stage is 3"
        yield view.finding(PTR, f"compute_grad_norm is false but {where}: DeepSpeed fails at parse "
                                "(\"compute_grad_norm=false is supported only with ZeRO Stage 1 or 2\")",
                           at="member", help="delete compute_grad_norm, or use ZeRO stage 1 or 2", fails_at="parse",
                           fixes=edits.fixes(edits.make_fix("delete compute_grad_norm",
                                                            edits.remove_member(doc, PTR), safe=False)))
        return
    # In the order DeepSpeed checks them: the engine's optimizer sanity check, then the stage-1/2 constructor.
    reasons, related, clip_fix = [], [], None  # reasons: (what, DeepSpeed's message)
    if (stage == 1 and view.model_dtype == "bf16" and view.grad_accum_dtype == "fp32"
            and view.offload_device("optimizer") != "cpu"):
        reasons.append(("ZeRO stage 1 with bf16 and fp32 gradient accumulation uses the BF16_Optimizer",
                        "does not support ZeRO Stage 1 with BF16 parameters and FP32 gradient accumulation"))
        related.append(("/data_types/grad_accum_dtype", "fp32 gradient accumulation"))
    clip = view.effective("/gradient_clipping", "number")
    if clip not in (None, MISSING) and clip > 0:
        if view.has("/gradient_clipping"):
            reasons.append((f"gradient_clipping is {view.node('/gradient_clipping').raw}",
                            "requires gradient_clipping=0"))
            related.append(("/gradient_clipping", "clipping needs the gradient norm"))
            clip_fix = edits.replace_value(doc, "/gradient_clipping", "0")
        else:
            reasons.append((f"gradient_clipping is omitted, which means {float(clip)} on DeepSpeed {view.version} (the "
                            "default became 1.0 in 0.19.3)", "requires gradient_clipping=0"))
            clip_fix = edits.insert_member(doc, "", "gradient_clipping", "0")
    zen = view.node("/zero_optimization/zenflow")
    if zen is not None and zen.kind != "null":
        reasons.append(("ZenFlow is configured", "does not support ZenFlow"))
        related.append(("/zero_optimization/zenflow", "ZenFlow"))
    if view.offloads("optimizer"):
        reasons.append((f"the optimizer is offloaded (device {view.offload_device('optimizer')!r})",
                        "does not support optimizer offload"))
        related.append(("/zero_optimization/offload_optimizer", "optimizer offload"))
    if not reasons:
        return
    fixes = []
    if clip_fix is not None and len(reasons) == 1:
        fixes = edits.fixes(
            edits.make_fix("set gradient_clipping to 0 (no clipping; keeps compute_grad_norm: false)", clip_fix,
                           safe=False, choice="no-clipping", default=True),
            edits.make_fix("delete compute_grad_norm (clip, and compute the norm again)",
                           edits.remove_member(doc, PTR), safe=False, choice="keep-clipping"))
    elif clip_fix is None:
        fixes = edits.fixes(edits.make_fix("delete compute_grad_norm", edits.remove_member(doc, PTR), safe=False))
    yield view.finding(
        PTR,
        f"compute_grad_norm is false, but {'; '.join(r[0] for r in reasons)}: DeepSpeed fails at initialize "
        f"(ValueError \"zero_optimization.compute_grad_norm=false {reasons[0][1]}\")",
        at="member", related=related, fixes=fixes,
        help="set gradient_clipping to 0 and drop optimizer offload / ZenFlow, or delete compute_grad_norm",
        fails_at="initialize")
