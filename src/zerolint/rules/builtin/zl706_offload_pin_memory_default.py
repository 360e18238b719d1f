"""An active offload block (`offload_optimizer` / `offload_param` with device cpu or nvme) that does not set
`pin_memory` gets a default that changed in DeepSpeed 0.19.5 (PR deepspeedai/DeepSpeed#8207;
zero/offload_config.py:45, 75): False before, True from 0.19.5. Pinned (page-locked) host memory makes the
transfers faster but cannot be swapped and counts against `ulimit -l` / the container's memlock limit, a known
cause of host OOMs and "cannot allocate memory" at start-up with large offloads (deepspeedai/DeepSpeed#3000,
#2977). The same file therefore behaves differently across an upgrade.

Only blocks that really offload are reported: `offload_param` below ZeRO stage 3 (ZL201) and `offload_optimizer`
at stage 0 (ZL202) are reported by their own rules.

Fix (unsafe, so `--fix` alone leaves the file alone): add `"pin_memory": <default>`. It keeps what the target
version does, but it changes what the config means on DeepSpeed versions with the other default, and a finding of
severity info should not rewrite every config a pre-commit `--fix` hook sees."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL706",
    name="offload-pin-memory-default",
    severity="info",
    summary="Offload without pin_memory: not pinned before DeepSpeed 0.19.5, pinned (page-locked) from 0.19.5",
    evidence="deepspeed/runtime/zero/offload_config.py:45, 75; https://github.com/deepspeedai/DeepSpeed/pull/8207; "
             "https://github.com/deepspeedai/DeepSpeed/issues/3000",
    fixable="unsafe",
)


@RULE.check
def check(view):
    stage = view.zero_stage
    if not stage:
        return
    new = view.since(">=0.19.5")
    for which in ("optimizer", "param"):
        ptr = f"/zero_optimization/offload_{which}"
        block = view.node(ptr)
        if block is None or block.kind != "object" or block.get("pin_memory") is not None:
            continue
        device = view.offload_device(which)
        if device not in ("cpu", "nvme") or (which == "param" and stage != 3):
            continue
        if new:
            msg = (f"offload_{which} does not set pin_memory: DeepSpeed {view.version} pins the offloaded buffers "
                   "(default true since 0.19.5; false before), and page-locked host memory cannot be swapped and "
                   "counts against ulimit -l")
        else:
            msg = (f"offload_{which} does not set pin_memory: DeepSpeed {view.version} does not pin (default "
                   "false); from 0.19.5 the default is true, so upgrading pins the offloaded buffers in host memory")
        value = "true" if new else "false"
        yield view.finding(ptr, msg, help=f"write \"pin_memory\": {value} (or the value you want) to pin it down",
                           fixes=edits.fixes(edits.make_fix(f"add \"pin_memory\": {value} (the current default)",
                                                            edits.insert_member(view.doc, ptr, "pin_memory",
                                                                                value), safe=False)), fails_at=None)
