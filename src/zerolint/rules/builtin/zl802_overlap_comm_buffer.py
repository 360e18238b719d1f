"""`zero_optimization.overlap_comm: true` with ZeRO stage 1 or 2 overlaps the gradient reduction with the backward
pass by double-buffering: besides the reduce bucket it always has, the ZeRO-1/2 optimizer allocates a second
GPU buffer of `reduce_bucket_size` elements for every micro-step's gradients ("Use double buffers to avoid data
access conflict when overlap_comm is enabled", stage_1_and_2.py:3255-3279). The buffer dtype is the model dtype
(2 bytes for fp16/bf16, 4 for fp32), or for ZeRO-1 the gradient-accumulation dtype when it differs
(`_gradient_reduction_buffer_dtype`, stage_1_and_2.py:397-404, 1253-1254). With the default `reduce_bucket_size`
of 5e8 that is 1 GB more per GPU in 16-bit, 2 GB in fp32, on top of the first bucket. OpenRLHF turned overlap
off again for this reason (OpenRLHF/OpenRLHF#200).

Source versus older docs: DeepSpeed's docs once said overlap "uses 4.5x the allgather_bucket_size and
reduce_bucket_size"; in 0.19.8 the only extra allocation is the second reduce bucket (allgather_bucket_size
allocates nothing when torch has `all_gather_into_tensor`, runtime/utils.py:1019-1022).

Severity: warning when the extra buffer is 1 GB or more, info from 100 MB, nothing below. A `reduce_bucket_size`
of "auto" that the HF Trainer / Accelerate fill (hidden_size², tens of MB) is not reported. Stage 1 with bf16
and fp32 accumulation (without CPU offload) runs the BF16_Optimizer, which has no such buffers. Stage 3 has
overlap on by default and budgets its buffers differently (see ZL803). With `contiguous_gradients: false` and no
CPU optimizer offload (which forces it on, stage_1_and_2.py:299-300) neither bucket is allocated (both sit under
`if self.contiguous_gradients`, stage_1_and_2.py:3260-3278; the same in 0.16.0, 2039-2051): nothing to report.

Fix (unsafe: trades speed for memory): set overlap_comm to false."""

from ...model import edits
from ...model.dsfacts import DTYPE_BYTES, elements, human_bytes
from ..rule import Rule

RULE = Rule(
    code="ZL802",
    name="overlap-comm-buffer",
    severity="warning",
    summary="overlap_comm with ZeRO-1/2 allocates a second reduce bucket (reduce_bucket_size × dtype bytes)",
    evidence="deepspeed/runtime/zero/stage_1_and_2.py:3255-3279; https://github.com/OpenRLHF/OpenRLHF/pull/200",
    fixable="unsafe",
)

PTR = "/zero_optimization/overlap_comm"
WARN_BYTES = 1e9
INFO_BYTES = 1e8


@RULE.check
def check(view):
    if view.overlap_comm is not True or not view.has(PTR):
        return
    buf = view.zero12_reduce_buffer()
    if buf is None or view.zero12_contiguous_gradients is not True:
        return
    size, dtype = buf
    extra = size * DTYPE_BYTES[dtype]
    if extra < INFO_BYTES:
        return
    given = view.has("/zero_optimization/reduce_bucket_size")
    bucket = f"reduce_bucket_size {elements(size)}" + ("" if given else " (the default)")
    yield view.finding(
        PTR,
        f"overlap_comm with ZeRO stage {view.zero_stage} double-buffers gradient reduction: a second GPU buffer of "
        f"{bucket} × {DTYPE_BYTES[dtype]} bytes ({dtype}) = {human_bytes(extra)} per GPU, "
        f"{human_bytes(2 * extra)} for both reduce buckets",
        at="member", severity="warning" if extra >= WARN_BYTES else "info",
        related=[("/zero_optimization/reduce_bucket_size", "bucket size")] if given else [],
        help="if GPU memory is tight, set overlap_comm to false or lower reduce_bucket_size (e.g. 2e8)",
        fixes=edits.fixes(edits.make_fix("set overlap_comm to false", edits.replace_value(view.doc, PTR, "false"),
                                         safe=False)))
