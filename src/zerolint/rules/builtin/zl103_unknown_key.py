"""An unknown key at the top level or inside a section DeepSpeed reads as a plain dict (`optimizer`,
`scheduler`, `activation_checkpointing`, `flops_profiler`, `aio`, `checkpoint`, `data_types`, `pipeline`,
`torch_autocast`, ...). DeepSpeed never reports these: it reads the keys it knows with `dict.get` and drops the
rest (runtime/config.py:482-588; deepspeedai/DeepSpeed#653, where `gradient_clipp1ng` went unnoticed). A typo
of a real key means that setting silently keeps its default: then it is an error (e.g. `zero_optimisation`
turns ZeRO off). A key that looks like nothing DeepSpeed knows is a warning (it may be read by your own
code)."""

from ...base import pointer as jp
from ...base.suggest import edit_distance
from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL103",
    name="unknown-key",
    severity="warning",
    summary="Unknown key at the top level or in a lax section (DeepSpeed silently ignores it)",
    evidence="deepspeed/runtime/config.py:482-588; https://github.com/deepspeedai/DeepSpeed/issues/653",
    fixable="safe",
)

# Keys other tools put in DeepSpeed configs on purpose; DeepSpeed ignores them and so do we.
TOLERATED = {"$schema", "_comment", "comment", "_description", "description"}


@RULE.check
def check(view):
    for issue in view.issues("unknown-key"):
        if issue.unknown != "ignored" or view.home_of(issue.pointer) is not None:
            continue
        key = jp.last(issue.pointer)
        if key in TOLERATED or key.startswith("_"):
            continue
        node = issue.node
        if node.kind == "object" and node.members and all(m.key in issue.known_keys for m in node.members):
            continue  # a wrapper of keys that belong one level up: ZL101
        present = view.keys_present(issue.section)
        guess = view.closest(key, [k for k in issue.known_keys if k not in present])
        where = view.path(issue.section) if issue.section else "the top level"
        if guess and edit_distance(key, guess) <= 2:
            fix = edits.make_fix(f"rename {key} to {guess}", edits.rename_key(view.doc, issue.pointer, guess))
            yield view.finding(issue.pointer, fixes=edits.fixes(fix), message=
                               f"unknown key {key!r} at {where} looks like a typo of {guess!r}: DeepSpeed ignores "
                               f"{key!r}, so the {guess} setting you meant is never applied", severity="error",
                               help=f"rename it to \"{guess}\"")
        else:
            yield view.finding(issue.pointer,
                               f"unknown key {key!r} at {where}: DeepSpeed ignores it"
                               + (f"; did you mean {guess!r}?" if guess else ""),
                               help=f"rename it to \"{guess}\"" if guess else
                               "delete it, or prefix it with _ to mark it as a note for people")
