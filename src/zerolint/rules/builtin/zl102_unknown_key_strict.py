"""An unknown key inside a section DeepSpeed validates strictly — `zero_optimization` (and its offload,
zenflow and leaf_module blocks), `fp16`, `bf16` (both since 0.17.1), the monitors (`tensorboard`, `wandb`,
`csv_monitor`, `comet`), `comms_logger`, `compile`, `hybrid_engine`, `tensor_parallel`,
`timers.throughput`, `weight_quantization`. These are pydantic models with `extra="forbid"`
(runtime/config_utils.py:105-113): DeepSpeed refuses the config at parse with "Extra inputs are not
permitted". Usually a typo (`offload_optimzer`) or a key from another section or version."""

from ...base import pointer as jp
from ...base.suggest import edit_distance
from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL102",
    name="unknown-key-in-strict-section",
    severity="error",
    summary="Unknown key in a section DeepSpeed validates strictly (rejected at parse)",
    evidence="deepspeed/runtime/config_utils.py:105-113 (extra='forbid')",
    fixable="safe",
)


@RULE.check
def check(view):
    for issue in view.issues("unknown-key"):
        if issue.unknown != "rejected" or view.home_of(issue.pointer) is not None:
            continue
        key = jp.last(issue.pointer)
        present = view.keys_present(issue.section)
        guess = view.closest(key, [k for k in issue.known_keys if k not in present] or issue.known_keys)
        fix = None
        if guess and guess not in present:
            fix = edits.make_fix(f"rename {key} to {guess}", edits.rename_key(view.doc, issue.pointer, guess),
                                 safe=edit_distance(key, guess) <= 2)
        yield view.finding(
            issue.pointer,
            fixes=edits.fixes(fix),
            message=f"unknown key {key!r} in {view.path(issue.section)}: DeepSpeed rejects the config at parse "
            "(extra inputs are not permitted)" + (f"; did you mean {guess!r}?" if guess else ""),
            help=f"rename it to \"{guess}\"" if guess else f"delete it; {view.path(issue.section)} accepts: "
                 + ", ".join(sorted(k for k in issue.known_keys if not k.startswith("stage3_"))[:12]) + ", ...",
            fails_at="parse",
        )
