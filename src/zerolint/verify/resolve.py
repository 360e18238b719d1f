"""Turn a user's config into a job the verify child can run in seconds, and say what was changed.

Pure Python (no torch, no deepspeed). What it does, in order (docs/verify.md lists the values):

1. `"auto"` — only when the target is `hf` or `accelerate`, and only at the keys that consumer fills
   (`zerolint.consumers`), with the values a default `TrainingArguments` gives
   (transformers/integrations/deepspeed.py, `trainer_config_process` / `trainer_config_finalize`); for raw
   DeepSpeed "auto" is left alone, because that is what DeepSpeed sees.
2. Batch sizes: DeepSpeed's own derivation (runtime/config.py:606-656) is replayed for the verify world size.
   When it holds, micro-batch and gradient accumulation are capped (2 and 2) and all three keys are written so
   that train_batch_size = micro x accum x world. When the three given keys fit another world size, the job is
   rescaled to this one (noted). Anything else (strings, a triple that fits no world size) is left as it is so
   that DeepSpeed's own error is what the report shows.
3. nvme offload: `nvme_path` is pointed at a fresh temporary directory.
4. Monitors (tensorboard, wandb, csv_monitor, comet) run as the user's run would (DeepSpeed imports their package at
   initialize, and fails there when it is missing), kept off the network and out of the user's files: their paths
   point into the run's temp dir (step 3), wandb runs offline (WANDB_MODE=offline, runner.child_env) and comet with
   `online: false`.
   Every other key that names a path or a module (zerolint/model/machine_keys.py) is neutralised too: paths point
   into the run's temp dir, module lists are dropped (DeepSpeed then uses its defaults). Each such change is
   listed with kind "neutralised", so the report says what verify did not honour.
5. No `optimizer` section: the client optimizer HF / Accelerate would pass (torch AdamW; DeepSpeedCPUAdam when
   `zero_optimization.offload_optimizer.device` is cpu/nvme, as accelerate's `_prepare_deepspeed` swaps it in).
   For hf/accelerate `zero_allow_untested_optimizer` is set, as `deepspeed_optim_sched` does.
"""

from __future__ import annotations

import copy
import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..base import pointer as jp
from ..model import consumers, machine_keys
from ..model.dsfacts import BATCH_KEYS
from ..model.view import derive_batch as view_derive_batch
from .hf_args import TrainingArgs
from .realshape import RealShape

# A default `TrainingArguments()` (transformers 4.x/5.x): what the Trainer fills "auto" with.
HF_DEFAULTS = {
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "max_grad_norm": 1.0,
    "learning_rate": 5e-5,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adam_epsilon": 1e-8,
    "weight_decay": 0.0,
    "warmup_steps": 0,
}
# Accelerate's DeepSpeedPlugin defaults for the keys only it fills (accelerate/utils/dataclasses.py).
ACCELERATE_DEFAULTS = {
    "/zero_optimization/stage": 2,
    "/zero_optimization/offload_optimizer/device": "none",
    "/zero_optimization/offload_param/device": "none",
    "/zero_optimization/offload_optimizer/nvme_path": "none",
    "/zero_optimization/offload_param/nvme_path": "none",
    "/zero_optimization/stage3_gather_16bit_weights_on_model_save": False,
}
MICRO_CAP = 2
ACCUM_CAP = 2
MONITORS = ("tensorboard", "wandb", "csv_monitor", "comet")


ADJUSTED, NEUTRALISED = "adjusted", "neutralised"


@dataclass
class Change:
    pointer: str
    message: str
    before: Any = None
    after: Any = None
    kind: str = ADJUSTED  # ADJUSTED: made runnable here | NEUTRALISED: a path or module key verify does not honour

    def to_json(self) -> dict:
        return {"pointer": self.pointer, "message": self.message, "before": self.before, "after": self.after,
                "kind": self.kind}


@dataclass
class ModelSpec:
    """The synthetic causal transformer the child builds (see model.py for the layout)."""

    vocab: int = 512
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    seq: int = 32

    @property
    def params(self) -> int:
        h, v = self.hidden, self.vocab
        return 2 * v * h + self.seq * h + self.layers * (12 * h * h + 13 * h) + 2 * h

    @property
    def largest_layer_params(self) -> int:
        return max(self.vocab * self.hidden, 4 * self.hidden * self.hidden + 4 * self.hidden)

    def to_json(self) -> dict:
        return {"vocab": self.vocab, "hidden": self.hidden, "layers": self.layers, "heads": self.heads,
                "seq": self.seq, "params": self.params, "largest_layer_params": self.largest_layer_params}


@dataclass
class Plan:
    """What the child runs: the config dict for deepspeed.initialize, the client optimizer, the model."""

    config: dict
    target: str
    world_size: int
    model: ModelSpec | RealShape  # RealShape: a real architecture (zerolint plan --verify)
    steps: int = 3
    changes: list[Change] = field(default_factory=list)
    client_optimizer: str | None = None  # None | "AdamW" | "DeepSpeedCPUAdam"
    client_optimizer_args: dict = field(default_factory=dict)
    # The real HF Trainer / Accelerate run this job (hf_plan.py; None: the replayed fill above, run by DeepSpeed)
    hf: dict | None = None

    @property
    def zero_stage(self) -> int | None:
        z = self.config.get("zero_optimization")
        if isinstance(z, bool):
            return int(z)
        if not isinstance(z, dict):
            return 0 if z is None else None
        s = z.get("stage", 0)
        if isinstance(s, bool):
            return int(s)
        if isinstance(s, (int, float)) and float(s).is_integer() and 0 <= s <= 3:
            return int(s)
        if isinstance(s, str) and s.strip().isdigit() and int(s) <= 3:
            return int(s)
        return 0 if s == "auto" else None

    def enabled(self, section: str) -> bool:
        """Whether DeepSpeed will switch a precision section on (pydantic bool coercion; "auto" is dropped)."""
        sec = self.config.get(section)
        if section == "bf16" and (sec is None) and isinstance(self.config.get("bfloat16"), dict):
            sec = self.config.get("bfloat16")
        if not isinstance(sec, dict):
            return False
        v = sec.get("enabled", False)
        if isinstance(v, str):
            return v.strip().lower() in ("true", "yes", "on", "1", "t", "y")
        return v is True or v == 1

    def to_json(self) -> dict:
        return {
            "config": self.config, "target": self.target, "world_size": self.world_size, "steps": self.steps,
            "model": self.model.to_json(), "client_optimizer": self.client_optimizer,
            "client_optimizer_args": self.client_optimizer_args, "changes": [c.to_json() for c in self.changes],
            "hf": self.hf,
        }


# -- model size ---------------------------------------------------------------------------------------------------

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)\s*([kKmMbBgGtT]?)\s*$")


def parse_params(text: str | int | None) -> int | None:
    """'350M' -> 350_000_000, '1.3B' -> 1_300_000_000, '7e8' -> 700_000_000."""
    if text is None or text == "":
        return None
    if isinstance(text, int):
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"not a parameter count: {text!r} (use e.g. 125M, 1.3B, 7e8)")
    scale = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}[m.group(2).lower()]
    n = int(round(float(m.group(1)) * scale))
    if n < 1000:
        raise ValueError(f"parameter count {text!r} is too small")
    return n


def model_spec(params: int | None = None, seq_len: int | None = None) -> ModelSpec:
    """The tiny default (about 0.17 M parameters), or a GPT-shaped model of about `params` parameters
    (vocab 32000, hidden by size as in GPT-2/GPT-3, layers to hit the count; head untied)."""
    if params is None:
        return ModelSpec(seq=seq_len or 32)
    seq = seq_len or 256
    hidden = next(h for limit, h in ((50e6, 512), (200e6, 768), (500e6, 1024), (1e9, 1536), (2e9, 2048),
                                     (4e9, 2560), (10e9, 4096), (float("inf"), 5120)) if params < limit)
    vocab = 32000
    per_layer = 12 * hidden * hidden + 13 * hidden
    layers = max(1, round((params - 2 * vocab * hidden - seq * hidden - 2 * hidden) / per_layer))
    return ModelSpec(vocab=vocab, hidden=hidden, layers=layers, heads=hidden // 64, seq=seq)


# -- the plan -----------------------------------------------------------------------------------------------------

def _get(cfg: Any, pointer: str, default: Any = None) -> Any:
    cur = cfg
    for tok in jp.split(pointer):
        if isinstance(cur, dict) and tok in cur:
            cur = cur[tok]
        elif isinstance(cur, list) and tok.isdigit() and int(tok) < len(cur):
            cur = cur[int(tok)]
        else:
            return default
    return cur


def _set(cfg: dict, pointer: str, value: Any) -> None:
    toks = jp.split(pointer)
    cur = cfg
    for tok in toks[:-1]:
        if not isinstance(cur.get(tok), dict):
            cur[tok] = {}
        cur = cur[tok]
    cur[toks[-1]] = value


def _walk(value: Any, pointer: str = ""):
    yield pointer, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, jp.join(pointer, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, jp.join(pointer, i))


def _is_auto(v: Any) -> bool:
    return isinstance(v, str) and v.strip().lower() == "auto"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def derive_batch(tb: Any, micro: Any, gas: Any, world: int) -> tuple[Any, Any, Any, str | None]:
    """DeepSpeed's batch inference and assertion for ints: (train_batch, micro, accum, error message or None)."""
    b = view_derive_batch(tb, micro, gas, world)
    return b.train_batch_size, b.micro_batch, b.grad_accum, b.error and b.error.removeprefix("AssertionError: ")


def _fill_auto(cfg: dict, target: str, precision: str, steps: int, hidden: int, changes: list[Change],
               args: TrainingArgs | None = None) -> None:
    stage = _get(cfg, "/zero_optimization/stage")
    if _is_auto(stage) and consumers.fills_auto(target, "/zero_optimization/stage"):
        stage = ACCELERATE_DEFAULTS["/zero_optimization/stage"]
    zero3 = stage == 3 or (isinstance(stage, float) and stage == 3.0)
    hf = HF_DEFAULTS
    if args is not None:  # --training-args: its fields over the defaults; warm-up as get_warmup_steps computes it
        hf = {**HF_DEFAULTS, **args.values, "warmup_steps": args.warmup_steps(steps)}
    micro = hf["per_device_train_batch_size"]
    gas = hf["gradient_accumulation_steps"]
    values: dict[str, tuple[Any, str]] = {
        "/train_micro_batch_size_per_gpu": (micro, "per_device_train_batch_size"),
        "/gradient_accumulation_steps": (gas, "gradient_accumulation_steps"),
        "/train_batch_size": (None, "world_size x per_device_train_batch_size x gradient_accumulation_steps"),
        "/gradient_clipping": (hf["max_grad_norm"], "max_grad_norm"),
        "/optimizer/params/lr": (hf["learning_rate"], "learning_rate"),
        "/optimizer/params/betas": ([hf["adam_beta1"], hf["adam_beta2"]], "[adam_beta1, adam_beta2]"),
        "/optimizer/params/eps": (hf["adam_epsilon"], "adam_epsilon"),
        "/optimizer/params/weight_decay": (hf["weight_decay"], "weight_decay"),
        "/scheduler/params/warmup_min_lr": (0, "0 (fixed by the Trainer)"),
        "/scheduler/params/warmup_max_lr": (hf["learning_rate"], "learning_rate"),
        # transformers >= 5.18 fills max(1, warm-up steps): DeepSpeed >= 0.19.6 rejects 0 (trainer.WARMUP_CLAMP)
        "/scheduler/params/warmup_num_steps": (max(1, hf["warmup_steps"]), "max(1, warmup steps)"),
        "/scheduler/params/total_num_steps": (steps, "the number of training steps"),
        "/scheduler/params/cos_min_ratio": (0.0, "cos_min_ratio"),  # HF's cosine schedule default (0.0)
        "/fp16/enabled": (precision == "fp16", f"--precision {precision} (TrainingArguments fp16)"),
        "/bf16/enabled": (precision == "bf16", f"--precision {precision} (TrainingArguments bf16)"),
        "/amp/enabled": (False, "fp16_backend is not apex"),
        "/amp/opt_level": ("O1", "fp16_opt_level"),
        "/zero_optimization/reduce_bucket_size": (hidden * hidden, "hidden_size^2 of the model"),
    }
    if zero3:
        values["/zero_optimization/stage3_prefetch_bucket_size"] = (int(0.9 * hidden * hidden),
                                                                    "0.9 x hidden_size^2 of the model")
        values["/zero_optimization/stage3_param_persistence_threshold"] = (10 * hidden, "10 x hidden_size")
    for ptr, default in ACCELERATE_DEFAULTS.items():
        values.setdefault(ptr, (default, "the Accelerate plugin's default"))

    autos = [(p, v) for p, v in _walk(cfg) if _is_auto(v)]
    for ptr, _ in autos:
        if not consumers.fills_auto(target, ptr) or ptr not in values:
            continue
        value, source = values[ptr]
        if ptr == "/train_batch_size":
            continue  # set with the batch equation below
        _set(cfg, ptr, value)
        changes.append(Change(ptr, f'"auto" filled as {consumers.DISPLAY[target]} does: {source}', "auto", value))
    if _is_auto(_get(cfg, "/train_batch_size")) and consumers.fills_auto(target, "/train_batch_size"):
        # The Trainer computes it from its own micro batch and accumulation, whatever the config says.
        cfg.pop("train_batch_size")
        changes.append(Change("/train_batch_size", f'"auto" filled as {consumers.DISPLAY[target]} does: '
                              "micro x accumulation x world size", "auto", None))


def _cap_batch(cfg: dict, world: int, changes: list[Change]) -> None:
    given = {p: _get(cfg, p) for p in BATCH_KEYS}
    tb, micro, gas = given["/train_batch_size"], given["/train_micro_batch_size_per_gpu"], given[
        "/gradient_accumulation_steps"]
    if any(v is not None and not _is_int(v) for v in (tb, micro, gas)):
        return  # strings, floats, "auto" for raw DeepSpeed: DeepSpeed's own verdict is the point
    dtb, dmicro, dgas, err = derive_batch(tb, micro, gas, world)
    if err is not None:
        if tb is not None and micro is not None and gas is not None and micro > 0 and gas > 0 \
                and tb > 0 and tb % (micro * gas) == 0:
            implied = tb // (micro * gas)
            dmicro, dgas = micro, gas
            changes.append(Change("/train_batch_size", f"train_batch_size {tb} = {micro} x {gas} x {implied} "
                                  f"fits world size {implied}; verify runs {world}, so it is recomputed", tb, None))
        else:
            return  # leave it: DeepSpeed's assertion, mapped to the batch keys, is the finding
    new_micro, new_gas = min(dmicro, MICRO_CAP), min(dgas, ACCUM_CAP)
    new_tb = new_micro * new_gas * world
    for ptr, before, after, name in (
        ("/train_micro_batch_size_per_gpu", micro, new_micro, "micro batch"),
        ("/gradient_accumulation_steps", gas, new_gas, "gradient accumulation"),
        ("/train_batch_size", tb, new_tb, "train batch"),
    ):
        if before != after:
            derived = {"/train_micro_batch_size_per_gpu": dmicro, "/gradient_accumulation_steps": dgas}.get(ptr)
            if ptr == "/train_batch_size":
                why = f"= {new_micro} x {new_gas} x {world} (micro x accumulation x world size)"
            elif derived is not None and derived > after:
                why = f"capped at {after} for a fast run"
            else:
                why = "as DeepSpeed derives it, written out"
            was = before if before is not None else "(not set)"
            changes.append(Change(ptr, f"{name} {was} -> {after}: {why}", before, after))
        cfg[ptr[1:]] = after


# Where neutralised paths point when the caller gives no temp dir: relative, so under the child's own temp working
# directory (runner.py starts it there), never a shared directory such as /tmp.
SCRATCH = "zerolint-scratch"


def _file_name(name: str) -> str:
    """One file name for a dotted key: user-chosen keys (a curriculum metric's name) can hold '/' or '..', so
    anything but [A-Za-z0-9._-] becomes '_' and long names are cut (with a hash, so two keys never collide)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    if safe != name or len(safe) > 120:
        safe = f"{safe[:100]}-{hashlib.sha256(name.encode()).hexdigest()[:12]}"
    return safe


def neutralise(cfg: dict, scratch: str, changes: list[Change]) -> None:
    """Point every path key into `scratch` and drop every module list (zerolint/model/machine_keys.py), so that a config
    cannot make the verify run write, delete or read files outside its temp dir, or import code."""
    for key, ptr, value in list(machine_keys.find_in_dict(cfg)):
        if not machine_keys.acts(key, value):
            continue  # DeepSpeed's own checks reject it before touching anything: its verdict is the point
        name = machine_keys.dotted(ptr)
        if key.kind == machine_keys.MODULES:
            parent = _get(cfg, jp.parent(ptr))
            parent.pop(jp.last(ptr))
            changes.append(Change(ptr, f"{name} not honoured: {key.what}, so verify drops the list and DeepSpeed "
                                  "uses its default classes", value, None, NEUTRALISED))
            continue
        # Both nvme_paths share one directory, as before (the swappers use their own sub-folders).
        after = f"{scratch}/nvme" if ptr.endswith("/nvme_path") else f"{scratch}/{_file_name(name)}"
        _set(cfg, ptr, after)
        changes.append(Change(ptr, f"{name} not honoured: {key.what}; verify points it at {after} (its temp dir)",
                              value, after, NEUTRALISED))


def make_safe(cfg: dict, tmpdir: str | None, changes: list[Change]) -> None:
    """Paths into the run's temp dir, module lists dropped, nvme into a temp dir, monitors off (steps 3-4 above)."""
    scratch = tmpdir or SCRATCH
    neutralise(cfg, scratch, changes)
    z = cfg.get("zero_optimization")
    if isinstance(z, dict):
        for which in ("offload_optimizer", "offload_param"):
            block = z.get(which)
            path = f"{scratch}/nvme"
            if isinstance(block, dict) and block.get("device") == "nvme" and block.get("nvme_path") != path:
                changes.append(Change(f"/zero_optimization/{which}/nvme_path", f"nvme_path -> {path} (a temporary "
                                      "directory)", block.get("nvme_path"), path))
                block["nvme_path"] = path
    comet = cfg.get("comet")
    on = isinstance(comet, dict) and comet.get("enabled") not in (False, None, "auto")
    if on and isinstance(comet, dict) and comet.get("online") is not False:  # (isinstance: for the checker)
        changes.append(Change("/comet/online", "comet runs offline for the verify run (no network; its files go to "
                              "the run's temp dir)", comet.get("online"), False, NEUTRALISED))
        comet["online"] = False


def build_plan(user_cfg: dict, *, target: str, world_size: int = 1, steps: int = 3, precision: str = "bf16",
               model: ModelSpec | None = None, tmpdir: str | None = None,
               client_optimizer: str = "auto", training_args: TrainingArgs | None = None) -> Plan:
    """A runnable job for `user_cfg` (the dict DeepSpeed / HF would read), plus the list of changes made.
    `training_args` (--training-args): the fill takes its values, as the Trainer would."""
    cfg = copy.deepcopy(user_cfg)
    model = model or model_spec()
    changes: list[Change] = []
    lr, wd = HF_DEFAULTS["learning_rate"], HF_DEFAULTS["weight_decay"]
    if training_args is not None:
        precision = training_args.precision(precision)
        lr, wd = training_args.get("learning_rate", lr), training_args.get("weight_decay", wd)
    if target in ("hf", "accelerate"):
        fill_steps = training_args.training_steps(steps) if training_args is not None else steps
        _fill_auto(cfg, target, precision, fill_steps, model.hidden, changes, training_args)
        if training_args is not None and training_args.get("save_on_each_node"):
            # trainer_config_process (transformers/integrations/deepspeed.py:176-179)
            before = _get(cfg, "/checkpoint/use_node_local_storage")
            _set(cfg, "/checkpoint/use_node_local_storage", True)
            changes.append(Change("/checkpoint/use_node_local_storage", "set to true, as the HF Trainer does for "
                                  "save_on_each_node", before, True))
    _cap_batch(cfg, world_size, changes)
    make_safe(cfg, tmpdir, changes)

    plan = Plan(config=cfg, target=target, world_size=world_size, model=model, steps=steps, changes=changes)
    if cfg.get("optimizer") is None and client_optimizer != "none":
        z = cfg.get("zero_optimization")
        off = z.get("offload_optimizer") if isinstance(z, dict) else None
        device = off.get("device") if isinstance(off, dict) else None
        cpu_adam = device in ("cpu", "nvme") and cfg.get("zero_force_ds_cpu_optimizer", True) is not False
        plan.client_optimizer = "DeepSpeedCPUAdam" if cpu_adam else "AdamW"
        plan.client_optimizer_args = {"lr": lr, "weight_decay": wd}
        who = consumers.DISPLAY[target] if target != "deepspeed" else "a training script"
        why = ("offload_optimizer is on, so Accelerate swaps in DeepSpeedCPUAdam" if cpu_adam
               else "the Trainer's default optimizer")
        changes.append(Change("/optimizer", f"no optimizer section: passed {plan.client_optimizer} to "
                              f"deepspeed.initialize(optimizer=...) as {who} would ({why})", None,
                              plan.client_optimizer))
        if target in ("hf", "accelerate") and "zero_allow_untested_optimizer" not in cfg:
            cfg["zero_allow_untested_optimizer"] = True
            changes.append(Change("/zero_allow_untested_optimizer", "set to true, as the HF Trainer does when it "
                                  "passes its own optimizer", None, True))
    return plan


def normalize_arch_list(value: str | None) -> str | None:
    """TORCH_CUDA_ARCH_LIST without the a/f suffixes DeepSpeed's op builder cannot parse: '9.0a' -> '9.0',
    '8.0;9.0a+PTX' -> '8.0;9.0+PTX' (op_builder/builder.py splits on '.' and calls int())."""
    if value is None:
        return None
    return re.sub(r"(\d+\.\d+)[af](?=\b|\+|;|\s|$)", r"\1", value)


def fmt_bytes(n: float | int | None) -> str:
    if n is None:
        return "n/a"
    if n < 1024:
        return f"{int(n)} B"
    units = ["KiB", "MiB", "GiB", "TiB"]
    i = min(int(math.log(n, 1024)), 4) - 1
    return f"{n / 1024 ** (i + 1):.2f} {units[i]}"
