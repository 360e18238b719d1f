"""`data_types` dtypes that disagree with the training precision. DeepSpeed resolves every `data_types` dtype with
DtypeEnum (runtime/config.py:144-149: fp16/float16/half, bf16/bfloat16, fp32/float32/float, int8, with or
without `torch.`; exact spelling), and the model dtype comes only from fp16/bf16.enabled (engine.py:1799-1804):

- `param_dtype` (0.19 line) must equal the model dtype: `deepspeed.initialize` asserts "data_types.param_dtype='bf16'
  conflicts with the enabled precision mode" (engine.py:1812-1829). Setting it does not switch precision.
- `grad_accum_dtype` other than the model dtype without ZeRO (stage 0) raises `NotImplementedError: unsupported mix
  of model_dtype=... and grad_accum_dtype=...` when the optimizer is set up (engine.py:2312-2323); ZeRO stages
  handle the mix (stage 1 + bf16 + fp32 accumulation selects the BF16 optimizer).

Unknown dtype names are ZL105 (the schema's enum is DtypeEnum's names); the stage-1 + bf16 + fp32 +
`compute_grad_norm: false` combination is ZL208."""

from ...model import dsfacts
from ..rule import Rule

RULE = Rule(
    code="ZL309",
    name="data-types-mismatch",
    severity="error",
    summary="data_types.param_dtype, or grad_accum_dtype without ZeRO, differs from the fp16/bf16 precision",
    evidence="deepspeed/runtime/engine.py:1799-1829, 2312-2323; deepspeed/runtime/config.py:144-149, 555-561",
)

NAMES = {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32 (neither fp16 nor bf16 is enabled)"}


@RULE.check
def check(view):
    precision = view.precision
    if precision is None or view.node("/data_types") is None:
        return
    mode = NAMES[precision]
    pd = view.plain_string("/data_types/param_dtype")
    if pd is not None and view.prop_schema("/data_types/param_dtype") is not None:
        canon = dsfacts.canonical_dtype(pd)
        if canon is not None and canon != precision:
            yield view.finding(
                "/data_types/param_dtype",
                f"data_types.param_dtype is \"{pd}\" but the model trains in {mode}: deepspeed.initialize fails "
                f"with \"data_types.param_dtype='{pd}' conflicts with the enabled precision mode\"; param_dtype "
                "does not switch the precision", at="value",
                help=f"enable {canon} in its own section (fp16/bf16.enabled) or delete param_dtype"
                     if canon in ("fp16", "bf16") else "delete param_dtype, or disable fp16/bf16",
                     fails_at="initialize")
    ga = view.plain_string("/data_types/grad_accum_dtype")
    if ga is None or view.zero_stage != 0:
        return
    canon = dsfacts.canonical_dtype(ga)
    if canon is None or canon == precision:
        return
    yield view.finding(
        "/data_types/grad_accum_dtype",
        f"data_types.grad_accum_dtype is \"{ga}\" but the model trains in {mode} and ZeRO is off: "
        f"deepspeed.initialize fails with \"NotImplementedError: unsupported mix of model_dtype and "
        "grad_accum_dtype\" when it sets up the optimizer; only ZeRO (stage 1-3) accumulates in another dtype",
        at="value", help="use ZeRO stage 1 or higher, or delete grad_accum_dtype", fails_at="initialize")
