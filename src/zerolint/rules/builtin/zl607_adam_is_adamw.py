"""DeepSpeed's `"Adam"` is AdamW unless told otherwise. For the names Adam and AdamW DeepSpeed pops `adam_w_mode`
from `params` with a default of True and builds the optimizer with `adam_w_mode = (name == "adamw") or
adam_w_mode` (engine.py:2486-2492; "Optimizer name of Adam forces AdamW logic unless adam_w_mode is explicitly
set"). So `"type": "Adam"` with a weight decay applies decoupled (AdamW) weight decay, not the L2 penalty of
`torch.optim.Adam`; the same weight_decay value regularises very differently. Nothing is logged.

The reverse is a silent no-op: `"type": "AdamW"` with `adam_w_mode: false` is still AdamW, because the name alone
forces AdamW mode.

Fixes for "Adam" (info): write `"AdamW"` (safe: the same optimizer, said plainly; `--prefer adamw`) or set
`adam_w_mode: false` to get classic Adam with L2 weight decay (unsafe; `--prefer l2`). Neither is applied without
`--prefer`."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL607",
    name="adam-is-adamw",
    severity="info",
    summary="\"Adam\" with weight decay is AdamW in DeepSpeed (adam_w_mode defaults to true)",
    evidence="deepspeed/runtime/engine.py:2486-2492; deepspeed/runtime/config.py:70-74",
    fixable="alternatives",
)


@RULE.check
def check(view):
    name, t = view.optimizer_name, view.optimizer_type
    if name not in ("adam", "adamw"):
        return
    mode = view.optimizer_param("adam_w_mode")
    if name == "adamw":
        if mode is not None and mode.kind == "boolean" and mode.value is False:
            yield view.finding(mode.pointer, f"adam_w_mode is false, but the optimizer name \"{t}\" forces AdamW mode "
                                             "anyway: DeepSpeed silently ignores this setting", severity="warning",
                               at="value", help="to get Adam with L2 weight decay, write \"type\": \"Adam\" with "
                                                "adam_w_mode false; otherwise delete adam_w_mode",
                               fixes=edits.fixes(edits.make_fix("delete adam_w_mode (it has no effect)",
                                                                edits.remove_member(view.doc, mode.pointer))),
                                                                fails_at=None)
        return
    wd = view.optimizer_param("weight_decay")
    wd_value = view.number(wd)
    if mode is not None or wd_value is None or wd_value <= 0:
        return
    doc = view.doc
    yield view.finding(
        "/optimizer/type",
        f"optimizer \"{t}\" with weight_decay {wd.raw}: DeepSpeed defaults adam_w_mode to true, so this is AdamW "
        "(decoupled weight decay), not Adam with an L2 penalty",
        at="value",
        help="write \"AdamW\" to say so, or set \"adam_w_mode\": false in params for classic Adam",
        fixes=edits.fixes(
            edits.make_fix("write \"AdamW\" (the optimizer DeepSpeed already builds)",
                           edits.replace_value(doc, "/optimizer/type", '"AdamW"'), choice="adamw"),
            edits.make_fix("set adam_w_mode to false (Adam with L2 weight decay)",
                           edits.insert_member(doc, "/optimizer/params", "adam_w_mode", "false"), safe=False,
                           choice="l2"),
        ), fails_at=None
    )
