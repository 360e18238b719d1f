"""Since DeepSpeed 0.19.5 (PR #8207) both offload blocks default to `pin_memory: true` (it was false before):
an offloaded optimizer keeps its fp32 weight and gradient partitions in page-locked host memory
(stage_1_and_2.py:219-225, 560-575, 650-660; stage3.py:794-795, 825), and offloaded parameters use pinned
buffers too. Page-locked memory cannot be swapped and counts against the `memlock` limit (`ulimit -l`, often
64 KB in containers); on hosts with little RAM per GPU the job dies with a host OOM or a "cannot allocate
pinned memory" error that is easy to misread as a GPU problem (deepspeedai/DeepSpeed#3000, #2977).

Reported (info) for an offload block that is in effect (`offload_optimizer` with ZeRO stage 1-3,
`offload_param` with stage 3, device cpu or nvme) and does not say `pin_memory`, so that the choice is visible
and stays the same across DeepSpeed versions. (NVMe optimizer swap buffers are page-locked whatever
`pin_memory` says; see ZL805.)

Fixes (alternatives, applied only with `--prefer`): write `"pin_memory": true` (safe: what 0.19.5+ does anyway,
`--prefer pinned`), or `"pin_memory": false` (unsafe: slower host-device copies, `--prefer unpinned`)."""

from zerolint import edits
from zerolint.rule import Rule

RULE = Rule(
    code="ZL804",
    name="offload-pinned-by-default",
    severity="info",
    summary="An offload block without pin_memory: pinned (page-locked) host memory by default since 0.19.5",
    versions=">=0.19.5",
    evidence="https://github.com/deepspeedai/DeepSpeed/pull/8207; "
             "https://github.com/deepspeedai/DeepSpeed/issues/3000; "
             "deepspeed/runtime/zero/offload_config.py:45, 75",
    fixable="alternatives",
)


@RULE.check
def check(view):
    stage = view.zero_stage
    if stage is None or stage == 0:
        return
    for which, needs in (("optimizer", 1), ("param", 3)):
        ptr = f"/zero_optimization/offload_{which}"
        block = view.node(ptr)
        if stage < needs or block is None or block.kind != "object" or not view.offloads(which):
            continue
        pin = block.get("pin_memory")
        if pin is not None and not (view.is_auto(pin) and not view.fills_auto(pin.pointer)):
            continue
        said = "does not set pin_memory" if pin is None else "has pin_memory \"auto\", which DeepSpeed drops"
        yield view.finding(
            ptr, f"offload_{which} (device {view.offload_device(which)!r}) {said}: since DeepSpeed 0.19.5 that means "
                 "pinned (page-locked) host memory, which cannot be swapped and counts against `ulimit -l`; "
                 "before 0.19.5 it meant unpinned",
            help="write pin_memory explicitly: true (faster copies) if the hosts have the RAM and memlock limit, "
                 "false otherwise",
            fixes=edits.fixes(
                edits.make_fix("write \"pin_memory\": true (the 0.19.5+ default)",
                               edits.insert_member(view.doc, ptr, "pin_memory", "true") if pin is None
                               else edits.replace_value(view.doc, pin.pointer, "true"), choice="pinned"),
                edits.make_fix("write \"pin_memory\": false",
                               edits.insert_member(view.doc, ptr, "pin_memory", "false") if pin is None
                               else edits.replace_value(view.doc, pin.pointer, "false"), safe=False,
                               choice="unpinned")))
