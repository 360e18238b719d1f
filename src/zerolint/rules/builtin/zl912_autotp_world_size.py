"""`tensor_parallel.autotp_size` (AutoTP) shards the model over that many ranks; the rest of the world is the
data-parallel dimension. `deepspeed.initialize` builds a 2-D device mesh of (world_size // autotp_size,
autotp_size) for every config (runtime/engine.py:958 `self.mpu._init_tp_mesh_device(...)`, utils/groups.py:202-220;
the same in 0.16.4, 0.17.0 and 0.18.0), and torch's `init_device_mesh` asserts that the mesh covers exactly the
world. With a world size that `autotp_size` does not divide (1 process and autotp_size 2: a 0 x 2 mesh), initialize
raises AssertionError from deepspeed/comm/torch.py (measured: DeepSpeed 0.19.8 on CPU, world size 1, the runtime
differential). An autotp_size of 0 or 1 (the default 0: no AutoTP) is a 1-wide tensor dimension and always fits.

Needs `--world-size` (the GPU count the job launches with)."""

from ..rule import Rule

RULE = Rule(
    code="ZL912",
    name="autotp-world-size",
    severity="error",
    summary="tensor_parallel.autotp_size does not divide the world size: initialize fails building the device mesh",
    evidence="deepspeed/runtime/engine.py:958; deepspeed/utils/groups.py:202-220",
)

PTR = "/tensor_parallel/autotp_size"


@RULE.check
def check(view):
    world = view.world_size
    tp = view.effective(PTR, "int") if view.has(PTR) else None
    if world is None or not isinstance(tp, int) or isinstance(tp, bool) or tp <= 1 or world % tp == 0:
        return
    yield view.finding(
        PTR, f"tensor_parallel.autotp_size {tp} does not divide the world size {world}: deepspeed.initialize builds a "
             f"{world // tp} x {tp} device mesh (data parallel x tensor parallel) for {world} process"
             f"{'es' if world != 1 else ''}, and torch's init_device_mesh fails with an AssertionError at initialize",
        at="value", fails_at="initialize",
        help=f"use an autotp_size that divides {world} (1 turns AutoTP off), or launch on a multiple of {tp} GPUs")
