"""The job for the real HF Trainer / Accelerate (`verify --target hf|accelerate` with the `[hf]` extra installed):
the config goes to HF as written, "auto" included, so the fill, the mismatch check and the optimizer handling are
HF's own (hf_child.py runs them). Pure Python: it decides what the child gets, and says what was changed.

Changed, as for the replayed path (resolve.py): keys that name a path or a module, nvme paths and monitors
(`make_safe`); a train_batch_size that fits another world size is recomputed for the ranks run (HF would compare it
with its own world x micro x accumulation and report a mismatch the real job does not have). Not changed: the
micro batch and accumulation (HF fills and compares them with the TrainingArguments), and nothing is filled.
"""

from __future__ import annotations

import copy

from ..base import pointer as jp
from ..model.versions import installed_version
from .hf_args import TrainingArgs
from .resolve import Change, ModelSpec, Plan, make_safe, model_spec

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import TypeGuard

PACKAGES = ("transformers", "accelerate")


def hf_versions() -> dict[str, str] | None:
    """{package: version} when transformers and accelerate are installed (from metadata: nothing is imported)."""
    out = {}
    for name in PACKAGES:
        found = installed_version(name)
        if found is None:
            return None
        out[name] = found
    return out


def _int(v) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _rescale_batch(cfg: dict, world: int, args: TrainingArgs | None, changes: list[Change]) -> None:
    tb = cfg.get("train_batch_size")
    micro = cfg.get("train_micro_batch_size_per_gpu", "auto")
    gas = cfg.get("gradient_accumulation_steps", "auto")
    a = args.values if args is not None else {}
    micro = a.get("per_device_train_batch_size", 8) if micro == "auto" else micro
    gas = a.get("gradient_accumulation_steps", 1) if gas == "auto" else gas
    if not (_int(tb) and _int(micro) and _int(gas)) or micro <= 0 or gas <= 0 or tb <= 0:
        return  # strings, "auto", a missing key: what HF and DeepSpeed make of it is the point
    if tb != micro * gas * world and tb % (micro * gas) == 0:
        cfg["train_batch_size"] = micro * gas * world
        changes.append(Change("/train_batch_size", f"train_batch_size {tb} = {micro} x {gas} x {tb // (micro * gas)} "
                              f"fits world size {tb // (micro * gas)}; verify runs {world}, so it is recomputed",
                              tb, cfg["train_batch_size"]))


def build_hf_plan(user_cfg: dict, *, target: str, world_size: int = 1, steps: int = 3, precision: str = "bf16",
                  accelerator: str = "cpu", model: ModelSpec | None = None, tmpdir: str | None = None,
                  training_args: TrainingArgs | None = None) -> Plan:
    cfg = copy.deepcopy(user_cfg)
    model = model or model_spec()
    changes: list[Change] = []
    _rescale_batch(cfg, world_size, training_args, changes)
    make_safe(cfg, tmpdir, changes)
    args = dict(training_args.values) if training_args is not None else {}
    chosen = training_args.precision(precision) if training_args is not None else precision
    if accelerator == "cpu" and chosen == "bf16" and not (training_args and training_args.get("bf16")):
        # TrainingArguments(bf16=True) needs a bf16 GPU unless use_cpu, and use_cpu turns DeepSpeed off
        # (transformers/training_args.py _validate_args); an explicit bf16 in the file gets HF's own error.
        chosen = "fp32"
        changes.append(Change("", "--precision bf16 becomes fp32 on the CPU: the HF Trainer accepts bf16 only on a "
                                  "GPU with DeepSpeed (TrainingArguments._validate_args)", "bf16", "fp32"))
    if not any(k in args for k in ("fp16", "bf16")):
        args.update(fp16=chosen == "fp16", bf16=chosen == "bf16")
    args["max_steps"] = training_args.training_steps(steps) if training_args is not None else steps
    plan = Plan(config=cfg, target=target, world_size=world_size, model=model, steps=steps, changes=changes)
    z = cfg.get("zero_optimization")
    off = z.get("offload_optimizer") if isinstance(z, dict) else None
    if "optimizer" not in cfg and isinstance(off, dict) and off.get("device") in ("cpu", "nvme") \
            and cfg.get("zero_force_ds_cpu_optimizer", True):
        plan.client_optimizer = "DeepSpeedCPUAdam"  # accelerator.py _prepare_deepspeed swaps it for HF's AdamW
    else:
        plan.client_optimizer = None if "optimizer" in cfg else "AdamW"
    plan.hf = {"consumer": target, "args": args, "mixed_precision": {"bf16": "bf16", "fp16": "fp16"}.get(chosen, "no"),
               "versions": hf_versions() or {}}
    return plan


def _autos(value, pointer: str = ""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _autos(v, f"{pointer}/{jp.escape(str(k))}")
    elif isinstance(value, str) and value.strip().lower() == "auto":
        yield pointer


def hf_fill_changes(plan: Plan, record: dict) -> list[Change]:
    """What HF filled "auto" with, from the config the child saw it hand to deepspeed.initialize."""
    if not plan.hf or not isinstance((record.get("hf") or {}).get("config"), dict):
        return []
    filled, who = record["hf"]["config"], "the HF Trainer" if plan.hf["consumer"] == "hf" else "Accelerate"
    out = []
    for ptr in _autos(plan.config):
        cur = filled
        for tok in jp.split(ptr):
            cur = cur.get(tok) if isinstance(cur, dict) else None
        out.append(Change(ptr, f'"auto" filled by {who}: {cur!r}' if cur is not None
                          else f'"auto" removed by {who}', "auto", cur))
    return out
