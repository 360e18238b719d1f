"""`aio.thread_count` was renamed `intra_op_parallelism` in DeepSpeed 0.16.4 (PR #7056) without an alias. The
`aio` section is a plain dict read key by key (swap_tensor/aio_config.py:20-43), so `thread_count` is silently
ignored and NVMe swapping runs with `intra_op_parallelism` 1. DeepSpeed's own docs still show `thread_count`
(docs/_pages/config-json.md:746, 763).

Fix (safe: gives the value the meaning its author wrote it for): rename it to `intra_op_parallelism`; when that
key is already there, delete `thread_count` (it does nothing)."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL901",
    name="aio-thread-count-renamed",
    severity="warning",
    summary="aio.thread_count is ignored since DeepSpeed 0.16.4 (renamed intra_op_parallelism)",
    versions=">=0.16.4",
    evidence="deepspeed/runtime/swap_tensor/aio_config.py:20-43; https://github.com/deepspeedai/DeepSpeed/pull/7056",
    fixable="safe",
)

PTR = "/aio/thread_count"


@RULE.check
def check(view):
    node = view.node(PTR)
    if node is None or view.node("/aio").kind != "object":
        return
    doc = view.doc
    if view.has("/aio/intra_op_parallelism"):
        yield view.finding(
            PTR, f"aio.thread_count ({node.raw}) is ignored since DeepSpeed 0.16.4; intra_op_parallelism "
                 f"({view.node('/aio/intra_op_parallelism').raw}) is what DeepSpeed reads",
            related=[("/aio/intra_op_parallelism", "read instead")], help="delete thread_count",
            fixes=edits.fixes(edits.make_fix("delete aio.thread_count", edits.remove_member(doc, PTR))))
        return
    yield view.finding(
        PTR, f"aio.thread_count ({node.raw}) was renamed intra_op_parallelism in DeepSpeed 0.16.4: DeepSpeed "
             f"{view.version} silently ignores it and uses 1 I/O thread per operation",
        help="rename it to intra_op_parallelism",
        fixes=edits.fixes(edits.make_fix("rename aio.thread_count to intra_op_parallelism",
                                         edits.rename_key(doc, PTR, "intra_op_parallelism"))))
