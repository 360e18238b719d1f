"""DeepSpeed's exception -> where it failed (parse / initialize / step N) and the JSON pointer of the key
responsible, so a verify failure lands on a line of the user's file like any other diagnostic.

Pure Python: it reads the child's description of the error (type, message, frames, pydantic errors). The rules
are checked against DeepSpeed 0.19.8 (file:line cited); anything not recognised falls back to a config key named
in the message, then to the section of the DeepSpeed module that raised, then to the whole document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..base import pointer as jp
from ..model.document import Document
from ..model.dsfacts import BATCH_KEYS

# pydantic model (ValidationError.title) -> the section it validates (runtime/config.py:482-588).
MODEL_SECTIONS = {
    "DeepSpeedZeroConfig": "/zero_optimization",
    "DeepSpeedZeroOffloadOptimizerConfig": "/zero_optimization/offload_optimizer",
    "DeepSpeedZeroOffloadParamConfig": "/zero_optimization/offload_param",
    "ZenFlowConfig": "/zero_optimization/zenflow",
    "DeepSpeedZeroLeafModuleConfig": "/zero_optimization/leaf_module",
    "DeepSpeedFP16Config": "/fp16",
    "DeepSpeedBF16Config": "/bf16",
    "DeepSpeedMonitorConfig": "",  # its loc starts with tensorboard / wandb / csv_monitor / comet
    "TensorBoardConfig": "/tensorboard",
    "WandbConfig": "/wandb",
    "CSVConfig": "/csv_monitor",
    "CometConfig": "/comet",
    "CommsLoggerConfig": "/comms_logger",
    "CompileConfig": "/compile",
    "HybridEngineConfig": "/hybrid_engine",
    "TPTrainingConfig": "/tensor_parallel",
    "TPConfig": "/tensor_parallel/tp",
    "DeepSpeedThroughputTimerConfig": "/timers/throughput",
    "WeightQuantConfig": "/weight_quantization",
}
# runtime/config.py:80-141, checked in this order.
REMOVED_TOP = ("nebula", "compression_training", "amp", "quantize_training", "sparse_gradients", "eigenvalue",
               "sparse_attention", "elasticity", "graph_harvesting", "curriculum_learning", "progressive_layer_drop")
REMOVED_ZERO = ("mics_shard_size", "mics_hierarchical_params_gather", "zeropp_loco_param")
# DeepSpeedConfig's own parse steps (runtime/config.py): an error raised here is a parse-time error.
PARSE_FUNCS = {"__init__", "_initialize_params", "_configure_train_batch_size", "_set_batch_related_parameters",
               "_batch_assertion", "_do_sanity_check", "_do_error_check", "_do_warning_check",
               "_reject_removed_config_keys"}
# DeepSpeed module (path prefix) -> the config section it serves: the last resort before the whole document.
MODULE_SECTIONS = (
    ("deepspeed/runtime/lr_schedules", "/scheduler"),
    ("deepspeed/ops/adam", "/optimizer"),
    ("deepspeed/ops/lamb", "/optimizer"),
    ("deepspeed/ops/lion", "/optimizer"),
    ("deepspeed/ops/adagrad", "/optimizer"),
    ("torch/optim", "/optimizer"),
    ("deepspeed/runtime/swap_tensor", "/aio"),
    ("deepspeed/ops/aio", "/aio"),
    ("deepspeed/runtime/zero", "/zero_optimization"),
    ("deepspeed/runtime/fp16", "/fp16"),
    ("deepspeed/runtime/bf16_optimizer", "/bf16"),
    ("deepspeed/runtime/activation_checkpointing", "/activation_checkpointing"),
    ("deepspeed/runtime/pipe", "/pipeline"),
    ("deepspeed/monitor", ""),
    ("deepspeed/runtime/model_checkpointing", "/checkpoint/writer"),  # the writer made at initialize
    ("deepspeed/runtime/checkpoint_engine", "/checkpoint"),
)


@dataclass
class Mapped:
    stage: str  # parse | initialize | step N | model | import
    pointer: str  # the key responsible ("" = the whole document)
    message: str  # one line: what DeepSpeed said, cleaned up
    related: list[tuple[str, str]] = field(default_factory=list)  # (pointer, why)
    help: str | None = None
    where: str = ""  # e.g. "deepspeed/runtime/config.py:605 (_batch_assertion)"
    who: str = "DeepSpeed"  # who raised: DeepSpeed, the HF Trainer, Accelerate


# HF's mismatch check: transformers/integrations/deepspeed.py:258-263 (trainer_config_finalize, "vs hf") and
# accelerate/utils/dataclasses.py deepspeed_config_process ("vs arg"); one "- ds KEY=VALUE vs ..." line per key.
HF_MISMATCH = "Please correct the following DeepSpeed config values that mismatch"
_MISMATCH_LINE = re.compile(r"^- ds ([A-Za-z0-9_.]+)=(.*) vs (?:hf|arg) (\S+)=(.*)$")
# Accelerate's own refusals (accelerate/utils/dataclasses.py DeepSpeedPlugin.__post_init__, fill_match,
# set_mixed_precision): (message part, pointer, help).
ACCELERATE_REFUSALS = (
    ("Please specify the ZeRO optimization config", "", "add a zero_optimization section (Accelerate requires one "
                                                        "when it is given a DeepSpeed config file)"),
    ("`--mixed_precision` arg cannot be set to `bf16` when `fp16`", "/fp16/enabled",
     "the DeepSpeed config and Accelerate's mixed_precision must agree"),
    ("`--mixed_precision` arg cannot be set to `fp16` when `bf16`", "/bf16/enabled",
     "the DeepSpeed config and Accelerate's mixed_precision must agree"),
)
_NOT_IN_KWARGS = re.compile(r"`([A-Za-z0-9_.]+)` not found in kwargs")


def _frames(err: dict) -> list[dict]:
    return err.get("frames") or []


def _ds_frames(err: dict) -> list[dict]:
    return [f for f in _frames(err) if f["file"].startswith(("deepspeed/", "torch/"))]


def _in(err: dict, file_prefix: str, funcs: set[str] | None = None) -> bool:
    return any(f["file"].startswith(file_prefix) and (funcs is None or f["func"] in funcs) for f in _frames(err))


def _get(cfg: Any, pointer: str) -> Any:
    cur = cfg
    for tok in jp.split(pointer):
        if isinstance(cur, dict) and tok in cur:
            cur = cur[tok]
        else:
            return None
    return cur


def stage_of(err: dict, phase: str) -> str:
    """parse when DeepSpeedConfig (or a pydantic model it builds) raised, else the child's phase."""
    if phase.startswith("step"):
        return phase
    if err.get("type") == "ValidationError" or _in(err, "deepspeed/runtime/config.py", PARSE_FUNCS) \
            or _in(err, "deepspeed/runtime/config_utils.py"):
        return "parse"
    if phase in ("model", "initialize"):
        return "initialize"
    return phase


def _step_part(err: dict) -> str:
    for f in reversed(_frames(err)):
        if f["file"].endswith("zerolint/verify/child.py"):
            code = f.get("code", "")
            if "backward" in code:
                return "backward"
            if ".step()" in code:
                return "optimizer step"
            if "engine(" in code:
                return "forward"
    return ""


def _first_existing(doc: Document, pointers) -> str | None:
    for p in pointers:
        if doc.node(p) is not None:
            return p
    return None


def _key_in_message(doc: Document, message: str) -> str | None:
    """The deepest config key the message names ('max_grad_norm', "offload_optimiser", warmup_num_steps)."""
    if doc.root is None:
        return None
    best = None
    for node in doc.root.walk():
        ptr = node.pointer
        if not ptr:
            continue
        key = jp.last(ptr)
        if key.isdigit() or len(key) < 4:
            continue
        quoted = re.search(rf"['\"`]{re.escape(key)}['\"`]", message)
        bare = "_" in key and len(key) >= 8 and re.search(rf"(?<![\w.]){re.escape(key)}(?![\w])", message)
        if quoted or bare:
            if best is None or ptr.count("/") > best.count("/"):
                best = ptr
    return best


def _string_values(doc: Document, base: str) -> list[str]:
    node = doc.node(base)
    if node is None:
        return []
    return [n.pointer for n in node.walk() if n.kind == "string" and n.pointer != base]


def _validation(err: dict, doc: Document, bf16_section: str) -> tuple[str, list[tuple[str, str]], str]:
    title = err.get("title") or ""
    base = MODEL_SECTIONS.get(title)
    if title == "DeepSpeedBF16Config":
        base = bf16_section
    items = err.get("validation") or []
    out: list[tuple[str, str]] = []
    for e in items:
        loc = [t for t in e.get("loc", []) if not t.startswith("function-")]
        candidates = []
        if base is not None:
            candidates.append(base + "".join(f"/{jp.escape(t)}" for t in loc))
        suffix = "".join(f"/{jp.escape(t)}" for t in loc)
        if doc.root is not None and suffix:
            candidates += [n.pointer for n in doc.root.walk() if n.pointer.endswith(suffix)]
        ptr = _first_existing(doc, candidates)
        if ptr is None:
            ptr = candidates[0] if candidates else (base or "")
        out.append((ptr, f"{'.'.join(loc) or title}: {e.get('msg')} [type={e.get('type')}]"))
    if not out:
        out = [(base or "", err.get("message", "").splitlines()[0] if err.get("message") else title)]
    summary = "; ".join(m for _, m in out)
    return out[0][0], out[1:], f"{title or 'ValidationError'}: {summary}"


def _hf_who(err: dict) -> str | None:
    """The HF Trainer or Accelerate when the innermost transformers/accelerate frame raised, and no DeepSpeed
    frame below it."""
    for f in reversed(_frames(err)):
        if f["file"].startswith(("deepspeed/", "torch/")):
            return None
        if f["file"].startswith("transformers/"):
            return "the HF Trainer"
        if f["file"].startswith("accelerate/"):
            return "Accelerate"
    return None


def _map_hf(err: dict, doc: Document, stage: str, who: str) -> Mapped | None:
    """HF's mismatch check -> the first mismatching key (the others related); Accelerate's refusals -> their key."""
    msg = err.get("message", "")
    frames = [f for f in _frames(err) if f["file"].startswith(("transformers/", "accelerate/"))]
    where = f"{frames[-1]['file']}:{frames[-1]['line']} ({frames[-1]['func']})" if frames else ""
    if HF_MISMATCH in msg:
        keys = []
        for line in msg.splitlines():
            m = _MISMATCH_LINE.match(line.strip())
            if m:
                keys.append(("/" + "/".join(jp.escape(t) for t in m.group(1).split(".")), line.strip()[2:]))
        if keys:
            ptr = _first_existing(doc, [p for p, _ in keys]) or keys[0][0]
            shown = "; ".join(text for _, text in keys)
            return Mapped(stage, ptr, f"{err.get('type')}: {HF_MISMATCH} TrainingArguments values: {shown}",
                          [(p, text) for p, text in keys if p != ptr],
                          'set these values to "auto" (the Trainer fills them) or change the training arguments',
                          where, who)
    for part, ptr, help_ in ACCELERATE_REFUSALS:
        if part in msg:
            first = msg.strip().splitlines()[0]
            return Mapped(stage, ptr if doc.node(ptr) is not None else "", f"{err.get('type')}: {first}", [],
                          help_, where, who)
    m = _NOT_IN_KWARGS.search(msg)
    if m:
        ptr = "/" + "/".join(jp.escape(t) for t in m.group(1).split("."))
        return Mapped(stage, ptr if doc.node(ptr) is not None else "", f"{err.get('type')}: "
                      f"{msg.strip().splitlines()[0]}", [], 'Accelerate does not fill this "auto": set a value',
                      where, who)
    return None


# The package each monitor section makes DeepSpeed import at initialize (deepspeed/monitor/utils.py).
MONITOR_PACKAGES = {"wandb": "wandb", "comet": "comet_ml", "tensorboard": "tensorboard"}


def map_error(err: dict, phase: str, doc: Document, job_config: dict, bf16_section: str = "/bf16") -> Mapped:
    """Where DeepSpeed failed and which key is to blame. `job_config` is the dict the child passed to DeepSpeed
    (what DeepSpeed actually saw); pointers are looked up in the user's document `doc`."""
    etype, msg = err.get("type", "Exception"), err.get("message", "")
    first = msg.strip().splitlines()[0] if msg.strip() else ""
    stage = stage_of(err, phase)
    if stage.startswith("step"):
        part = _step_part(err)
        stage = f"{stage} ({part})" if part else stage
    ds = _ds_frames(err)
    own = [f for f in ds if f["file"].startswith("deepspeed/")] or ds
    where = f"{own[-1]['file']}:{own[-1]['line']} ({own[-1]['func']})" if own else ""
    text = f"{etype}: {first}" if first else etype
    related: list[tuple[str, str]] = []
    help_ = None

    def done(pointer: str, message: str = text) -> Mapped:
        return Mapped(stage, pointer, message, related, help_, where)

    who = _hf_who(err)
    if who is not None:
        hf = _map_hf(err, doc, stage, who)
        if hf is not None:
            return hf

    if etype == "ValidationError":
        ptr, rel, summary = _validation(err, doc, bf16_section)
        related.extend(rel)
        return done(ptr, summary)

    if etype in ("ModuleNotFoundError", "ImportError") and _in(err, "deepspeed/monitor/utils.py"):
        monitor = next((m for m, pkg in MONITOR_PACKAGES.items() if pkg in msg), None)
        if monitor is not None:  # DeepSpeed imports the monitor's package at initialize (monitor/utils.py)
            pkg = MONITOR_PACKAGES[monitor]
            help_ = f"install {pkg} where the job runs (pip install {pkg}), or set {monitor}.enabled to false"
            return done(f"/{monitor}/enabled" if doc.node(f"/{monitor}/enabled") is not None else f"/{monitor}")

    if "bfloat16 and fp16 modes cannot be simultaneously enabled" in msg:
        related.append((f"{bf16_section}/enabled", "bf16 is enabled here"))
        help_ = "enable one of fp16 and bf16"
        return done("/fp16/enabled")

    if etype == "DeepSpeedConfigError" and _in(err, "deepspeed/runtime/config.py", {"_reject_removed_config_keys"}):
        for key in REMOVED_TOP:
            if key in job_config:
                return done(f"/{key}")
        z = job_config.get("zero_optimization")
        for key in REMOVED_ZERO:
            if isinstance(z, dict) and key in z:
                return done(f"/zero_optimization/{key}")

    batch_msgs = ("Check batch related parameters", "Micro batch size per gpu", "Train batch size:",
                  "Gradient accumulation steps:", "Either train_batch_size or train_micro_batch_size_per_gpu")
    if any(s in msg for s in batch_msgs) or _in(err, "deepspeed/runtime/config.py",
                                                 {"_batch_assertion", "_set_batch_related_parameters"}):
        strings = [p for p in BATCH_KEYS if isinstance(_get(job_config, p), str)]
        present = [p for p in BATCH_KEYS if doc.node(p) is not None]
        order = strings + [p for p in present if p not in strings]
        for p in order[1:]:
            related.append((p, "part of the batch equation"))
        if strings:
            help_ = ("DeepSpeed reads these keys as numbers: a string (\"auto\", \"8\") fails; \"auto\" is filled "
                     "only by the HF Trainer / Accelerate")
        else:
            help_ = "train_batch_size must equal train_micro_batch_size_per_gpu x gradient_accumulation_steps x " \
                    "the number of ranks"
        return done(order[0] if order else "")

    if "not supported on your device" in msg:
        return done("/fp16/enabled" if "fp16" in msg else f"{bf16_section}/enabled")

    if _in(err, "deepspeed/runtime/engine.py", {"_take_model_step", "clip_fp32_gradients"}) or (
            "gradient_clipping" in msg):
        if etype == "TypeError" or "clip" in msg:
            help_ = "gradient_clipping must be a number (\"auto\" is filled only by the HF Trainer / Accelerate)"
            return done("/gradient_clipping")

    if "steps_per_print" in msg or (etype == "ZeroDivisionError" and _in(err, "deepspeed/utils/timer.py")):
        return done("/steps_per_print")

    if ("requires an optimizer" in msg or "must provide optimizer during init" in msg
            or "set_gradient_accumulation_boundary" in msg):
        related.append(("/zero_optimization/stage", "this ZeRO stage needs an optimizer"))
        help_ = ("add an `optimizer` section, or pass one to deepspeed.initialize(optimizer=...); "
                 "zerolint verify passes one itself unless --client-optimizer none")
        return done("/optimizer")

    if "ZeRO-Offload with a client provided optimizer" in msg or "CPUAdam param is on" in msg:
        return done("/zero_optimization/offload_optimizer/device")

    if "async_io" in msg or "nvme" in msg.lower():
        for which in ("offload_optimizer", "offload_param"):
            if _get(job_config, f"/zero_optimization/{which}/device") == "nvme":
                help_ = "nvme offload needs DeepSpeed's async_io op (libaio-dev) on the machine"
                return done(f"/zero_optimization/{which}/device")

    if "max_grad_norm" in msg:
        return done("/optimizer/params/max_grad_norm")
    if ("not a supported DeepSpeed Optimizer" in msg or "is not a supported" in msg) and doc.node("/optimizer/type"):
        return done("/optimizer/type")

    if _in(err, "deepspeed/runtime/lr_schedules") or (ds and "scheduler" in ds[-1]["func"]):
        named = _key_in_message(doc, msg)
        if named and named.startswith("/scheduler"):
            return done(named)
        strings = _string_values(doc, "/scheduler/params")
        return done(strings[0] if strings else "/scheduler")

    if stage.startswith("step") and any(f["file"].startswith(("deepspeed/ops/", "torch/optim"))
                                        for f in _frames(err)):
        strings = _string_values(doc, "/optimizer/params")
        if strings:
            help_ = "optimizer params must be numbers (\"auto\" is filled only by the HF Trainer / Accelerate)"
            return done(strings[0])
        return done("/optimizer/params" if doc.node("/optimizer/params") else "/optimizer")

    named = _key_in_message(doc, msg)
    if named is not None:
        return done(named)
    for f in reversed(ds):
        for prefix, section in MODULE_SECTIONS:
            if f["file"].startswith(prefix):
                return done(section if doc.node(section) is not None else "")
    return done("")
