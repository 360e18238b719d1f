"""`datastates_ckpt` switches on the DataStates asynchronous checkpoint engine whenever the key is present and
its value is not literally `false`: `enabled = param_dict.get("datastates_ckpt", False) is not False`
(datastates/config.py:15-21). So `"datastates_ckpt": {"enabled": false}`, `{}` and `null` all ENABLE it.

With it enabled (and no `checkpoint.writer`, which takes precedence), `deepspeed.initialize` builds
`DataStatesCheckpointEngine` (checkpoint_engine/utils.py:29-37). Source versus catalog: the catalog calls this
info, but when the `datastates` package is not installed the engine's constructor turns the ImportError into a
RuntimeError ("Please install DataStates from https://github.com/DataStates/datastates-llm",
datastates_checkpoint_engine.py:20-26), which the fallback to torch.save in utils.py (it catches only
ImportError) does not catch: initialize fails.

Severity: warning (the package may be installed); the `{"enabled": false}` form gets a safe fix to `false`,
which is what its author meant."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL907",
    name="datastates-enabled",
    severity="warning",
    summary="datastates_ckpt present and not false: the DataStates checkpoint engine is on (even {\"enabled\": false})",
    evidence="deepspeed/datastates/config.py:15-21; deepspeed/runtime/checkpoint_engine/utils.py:29-37; "
             "deepspeed/runtime/checkpoint_engine/datastates_checkpoint_engine.py:20-26",
    fixable="safe",
)

PTR = "/datastates_ckpt"


@RULE.check
def check(view):
    node = view.node(PTR)
    if node is None or (node.kind == "boolean" and node.value is False):
        return
    writer = view.node("/checkpoint/writer")
    if writer is not None and writer.kind != "null":
        return  # checkpoint.writer wins (checkpoint_engine/utils.py:17-27)
    en = node.get("enabled") if node.kind == "object" else None
    says_off = en is not None and en.value in (False, 0, "false")
    shown = node.raw if node.kind != "object" else ("{\"enabled\": false}" if says_off else "{}")
    lead = (f"datastates_ckpt is {shown}, which DeepSpeed does not read as off: any value but false enables"
            if says_off or node.kind == "null" or (node.kind == "object" and not node.members) else
            "datastates_ckpt is set, which enables")
    yield view.finding(
        PTR, f"{lead} the DataStates checkpoint engine; without the datastates package deepspeed.initialize fails "
             "(RuntimeError \"Please install DataStates\")",
        help="write \"datastates_ckpt\": false (or delete the key) unless you use DataStates",
        fixes=edits.fixes(edits.make_fix("set datastates_ckpt to false", edits.replace_value(view.doc, PTR, "false")))
        if says_off else [])
