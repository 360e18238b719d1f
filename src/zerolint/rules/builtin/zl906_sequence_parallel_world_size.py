"""`sequence_parallel_size` splits the GPUs into sequence-parallel groups; the data-parallel world size is the
GPU count divided by it. When DeepSpeedConfig is built without an mpu (the HF `zero.Init` path and
`deepspeed.initialize` without a mesh), it computes exactly that, with true division:
`world_size = dist.get_world_size() / config["sequence_parallel_size"]` (runtime/config.py:466-469). With a GPU
count that `sequence_parallel_size` does not divide, the data-parallel size is fractional (8 GPUs / 3 = 2.67):
no layout of sequence-parallel groups exists, and DeepSpeed's batch inference and batch check run with a
fractional world size, deriving fractional batch sizes or failing the "train_batch_size is not equal to
micro_batch_per_gpu * gradient_acc_step * world_size" assertion. Even when it divides, the result is a float
(8 / 2 = 4.0) and so is any batch value DeepSpeed derives from it.

Needs `--world-size` (the GPU count the job launches with)."""

from ..rule import Rule

RULE = Rule(
    code="ZL906",
    name="sequence-parallel-world-size",
    severity="warning",
    summary="sequence_parallel_size does not divide the world size (fractional data-parallel size)",
    evidence="deepspeed/runtime/config.py:466-469",
)

PTR = "/sequence_parallel_size"


@RULE.check
def check(view):
    world = view.world_size
    sp = view.effective(PTR, "int") if view.has(PTR) else None
    if world is None or not isinstance(sp, int) or isinstance(sp, bool) or sp <= 1 or world % sp == 0:
        return
    # Whether the parse fails depends on the batch keys: replay DeepSpeed's arithmetic with world / sp.
    error = view.batch_replay()
    yield view.finding(
        PTR, f"sequence_parallel_size {sp} does not divide the world size {world}: no sequence-parallel layout "
             f"exists, and DeepSpeed computes a data-parallel size of {world}/{sp} = {world / sp:.2f} for its batch "
             "arithmetic" + (f", so its batch assertion fails at parse ({error})" if error else
                             ", so the batch sizes it derives are fractional"),
        at="value", help=f"use a sequence_parallel_size that divides {world}, or launch on a multiple of {sp} GPUs",
        severity="error" if error else None, fails_at="parse" if error else None)
