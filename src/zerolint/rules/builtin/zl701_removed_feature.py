"""DeepSpeed 0.19.7 and 0.19.8 removed a set of legacy features and made their config keys hard errors:
`amp`, `elasticity`, `nebula`, `compression_training`, `sparse_gradients`, top-level `curriculum_learning`,
`progressive_layer_drop`, `eigenvalue`, `quantize_training`, `sparse_attention`, `graph_harvesting`, and
`zero_optimization.mics_shard_size`, `mics_hierarchical_params_gather`, `zeropp_loco_param`. The mere
presence of the key — even `{"enabled": false}` — raises `DeepSpeedConfigError` at parse
(runtime/config.py:80-141). Older published configs carry such blocks and now fail to load."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL701",
    name="removed-feature",
    severity="error",
    summary="A key for a feature DeepSpeed has removed (a hard error from 0.19.7/0.19.8)",
    evidence="deepspeed/runtime/config.py:80-141 (_reject_removed_config_keys); https://github.com/deepspeedai/DeepSpeed/issues/8489",
    fixable="unsafe",
)


@RULE.check
def check(view):
    for issue in view.issues("removed-key"):
        since = issue.schema.get("x-zerolint-removed-in", "0")
        if not view.since(f">={since}"):
            continue
        desc = issue.schema.get("description", "")
        what = desc.split(": ", 1)[1] if ": " in desc else desc
        yield view.finding(issue.pointer,
                           f"{view.path(issue.pointer)} was removed in DeepSpeed {since}: DeepSpeed {view.version} "
                           "refuses the config at parse (DeepSpeedConfigError), even when the block is disabled",
                           help=(what.rstrip(".") + "; " if what else "")
                           + f"delete the block, or pin deepspeed<{since}",
                           fails_at="parse", fixes=edits.fixes(edits.make_fix(
                               f"delete {issue.pointer[1:]}", edits.remove_member(view.doc, issue.pointer),
                               safe=False)))
