"""The op plan: which of DeepSpeed 0.19.8's JIT-built ops a run of a config will load, on a given accelerator, so
that verify builds them all before the clock starts (zerolint/verify/ops.py).

Every entry follows a code path of DeepSpeed 0.19.8 that calls an op builder's `load()` at `deepspeed.initialize`
or in the first steps, for what the config (and the client optimizer verify passes) decides:

- deepspeed_shm_comm: the CPU accelerator (comm/torch.py `build_shm_op`, TorchBackend, at init_distributed);
- fused_adam: Adam/AdamW (and Muon's auxiliary Adam) without optimizer offload or `torch_adam`
  (engine.py `get_optimizer_configuration`; ops/adam/fused_adam.py:94);
- cpu_adam: Adam/AdamW/Muon with `offload_optimizer` cpu/nvme (ZenFlow too), or a client DeepSpeedCPUAdam
  (engine.py `get_optimizer_configuration`; ops/adam/cpu_adam.py:93);
- cpu_adagrad: Adagrad with optimizer offload (engine.py `_configure_basic_optimizer`; ops/adagrad/cpu_adagrad.py:23);
- fused_lamb: Lamb (engine.py `_configure_basic_optimizer`; ops/lamb/fused_lamb.py:53);
- cpu_lion / fused_lion: Lion with / without optimizer offload (engine.py `_configure_basic_optimizer`;
  ops/lion/cpu_lion.py:59, fused_lion.py:42);
- async_io and pin_memory: ZeRO-3 with optimizer or parameter offload to nvme (runtime/swap_tensor/
  partitioned_{param,optimizer}_swapper.py; op_builder/async_io.py `load` loads pin_memory first);
- async_io and pin_memory (gds with `aio.use_gds`): a `checkpoint.writer` of type fast (the default), whose
  writer is made at initialize (runtime/checkpoint_engine/utils.py `create_checkpoint_engine`,
  runtime/model_checkpointing/writer_factory.py `_setup_for_aio` / `_setup_for_gds`);
- quantizer: ZeRO-3 with `zero_quantized_weights` / `zero_quantized_nontrainable_weights` (at zero.Init,
  runtime/zero/partition_parameters.py:865) or `zero_quantized_gradients` (the first reduce,
  runtime/comm/coalesced_collectives.py:34).

The plan is not trusted blindly: a run that reaches an op the plan missed stops before building it (opguard.py),
the op is built outside the clock and the config runs again; and a test runs the runtime differential's configs
with the op loads recorded (`ops_loaded`) and fails when one was not planned (tests/runtime_differential).
"""

from __future__ import annotations

OFFLOAD_DEVICES = ("cpu", "nvme")


def _truthy(v) -> bool:
    """A ZeRO config flag as pydantic reads it ("yes", "on", "1" are true; any other string is not)."""
    if isinstance(v, str):
        return v.strip().lower() in ("true", "yes", "on", "1", "t", "y")
    return bool(v)


def _zero(config: dict) -> dict:
    z = config.get("zero_optimization")
    return z if isinstance(z, dict) else {}


def _stage(z: dict) -> int:
    s = z.get("stage", 0)
    try:
        return int(s)
    except (TypeError, ValueError):
        return 0


def _device(block) -> str:
    return str(block.get("device", "")).lower() if isinstance(block, dict) else ""


def optimizer_offload(config: dict) -> str:
    """Where the optimizer's states go, as DeepSpeed reads `offload_optimizer` (engine.py zero_use_cpu_optimizer:
    the block's device, at any stage; the legacy `cpu_offload: true` migrates to device cpu)."""
    z = _zero(config)
    device = _device(z.get("offload_optimizer"))
    if not device and _truthy(z.get("cpu_offload")):
        device = "cpu"
    return device


def planned_ops(config: dict, accelerator: str, client_optimizer: str | None = None) -> list[str]:
    """The ops a run of `config` loads on `accelerator` ("cpu" | "cuda"), in the order DeepSpeed loads them."""
    ops: list[str] = []
    add = ops.append
    if accelerator == "cpu":
        add("deepspeed_shm_comm")
    z = _zero(config)
    stage = _stage(z)
    offload = optimizer_offload(config)
    if stage == 3 and (offload == "nvme" or _device(z.get("offload_param")) == "nvme"):
        add("pin_memory")
        add("async_io")
    writer = config.get("checkpoint", {}).get("writer") if isinstance(config.get("checkpoint"), dict) else None
    if isinstance(writer, dict) and str(writer.get("type") or "fast").upper() == "FAST":
        aio = aio_ if isinstance(aio_ := config.get("aio"), dict) else {}
        ops += ["gds"] if _truthy(aio.get("use_gds")) else ["pin_memory", "async_io"]
    if stage == 3 and any(_truthy(z.get(k)) for k in ("zero_quantized_weights", "zero_quantized_nontrainable_weights",
                                                      "zero_quantized_gradients")):
        add("quantizer")
    if client_optimizer == "DeepSpeedCPUAdam":
        add("cpu_adam")
    elif client_optimizer is None:
        ops += _optimizer_ops(config, offload in OFFLOAD_DEVICES)
    return list(dict.fromkeys(ops))


def _optimizer_ops(config: dict, offload: bool) -> list[str]:
    opt = config.get("optimizer")
    if not isinstance(opt, dict):
        return []
    name = str(opt.get("type", "")).lower()
    params = params_ if isinstance(params_ := opt.get("params"), dict) else {}
    if name in ("adam", "adamw", "muon"):
        if params.get("torch_adam"):  # a plain dict: Python's truthiness (engine.py get_optimizer_configuration)
            return []
        return ["cpu_adam"] if offload else ["fused_adam"]
    if name == "adagrad":
        return ["cpu_adagrad"] if offload else []
    if name == "lamb":
        return ["fused_lamb"]
    if name == "lion":
        return ["cpu_lion"] if offload else ["fused_lion"]
    return []
