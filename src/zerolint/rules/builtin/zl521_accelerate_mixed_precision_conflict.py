"""The Accelerate config asks for one mixed precision (`mixed_precision: fp16`, `bf16` or `fp8`) and the
DeepSpeed config file enables the other one. `DeepSpeedPlugin.set_mixed_precision` raises
``ValueError: `--mixed_precision` arg cannot be set to `fp16` when `bf16` is set in the DeepSpeed config file``
when the Accelerator is created (fp8 runs on bf16 autocast, so it conflicts with `fp16`). Accelerate reads
`enabled` as `str(value).lower() == "true"`, so `"auto"` never conflicts.

zerolint knows the mixed precision when it lints the DeepSpeed config through an Accelerate config YAML
(`zerolint check accelerate_config.yaml`). Note that the YAML's `mixed_precision` together with a
`deepspeed_config_file` is itself rejected (ZL520): set the precision in the DeepSpeed config file only."""

import json

from ..rule import Rule

RULE = Rule(
    code="ZL521",
    name="accelerate-mixed-precision-conflict",
    severity="error",
    summary="Accelerate's mixed_precision conflicts with fp16/bf16 enabled in the DeepSpeed config",
    targets=("accelerate",),
    evidence="accelerate/utils/dataclasses.py DeepSpeedPlugin.set_mixed_precision",
)


@RULE.check
def check(view):
    acc = getattr(view.settings, "accelerate", None)
    mp = acc.mixed_precision if acc is not None else None
    if mp not in ("fp16", "bf16", "fp8"):
        return
    other = "bf16" if mp == "fp16" else "fp16"
    section = view.node(f"/{other}")
    enabled = section.get("enabled") if section is not None and section.kind == "object" else None
    value = enabled.to_python() if enabled is not None else None
    if str(value if value is not None else "False").lower() != "true":
        return
    assert enabled is not None and acc is not None  # enabled is true, and mp came from acc
    yield view.finding(
        enabled.pointer,
        f"{other}.enabled is {json.dumps(value)} but {acc.where('mixed_precision')} sets mixed_precision: {mp}; "
        f"Accelerate raises \"`--mixed_precision` arg cannot be set to `{mp}` when `{other}` is set in the DeepSpeed "
        "config file\" when the Accelerator is created",
        at="member",
        help=f"use one precision: set {other}.enabled to false (and enable {'bf16' if mp == 'fp8' else mp} here), "
             "and remove mixed_precision from the Accelerate config",
    )
