"""ZeRO-Offload (`offload_optimizer.device` cpu or nvme) with no `optimizer` section: the optimizer comes from the
training code, and DeepSpeed accepts only its own CPU optimizers there.

- Raw DeepSpeed: `deepspeed.initialize(optimizer=...)` raises `ZeRORuntimeException: You are using ZeRO-Offload
  with a client provided optimizer ...` unless the optimizer passed is `DeepSpeedCPUAdam` (or, since 0.17.6,
  `DeepSpeedCPULion`), while `zero_force_ds_cpu_optimizer` is true, its default (runtime/engine.py:2342-2346,
  1547-1548, 1562-1565; constants.py:41-42; config.py:321-322). The check is at any ZeRO stage and comes before
  the optimizer is wrapped. It appeared in 0.8.3 (v0.8.2 has no such check; v0.8.3 engine.py:1279); the Lion
  exemption in 0.17.6 (v0.17.5 engine.py has none).
  Where `check` read the optimizer the code passes (`deepspeed.initialize(optimizer=torch.optim.AdamW(...))`)
  the verdict is certain: an error for any other class, nothing for DeepSpeed's CPU optimizers. Otherwise
  zerolint cannot see the optimizer the code passes, so the message states the condition, and the finding is a
  warning that claims `fails_at = "initialize"`: the usual client optimizer (torch.optim.AdamW) fails there
  (measured, DeepSpeed 0.19.8 on CPU), but a script that passes DeepSpeedCPUAdam (Megatron-DeepSpeed's
  `--cpu-optimizer`, and the only optimizer the partial-offload `ratio` accepts, stage3.py:313-316) or no
  optimizer at all (inference) runs, and an error would fail those projects' checks for a config that works.
- HF Trainer / Accelerate: with no `optimizer` section the Trainer builds its own optimizer
  (transformers 5.24.0 integrations/deepspeed.py:576-587) and Accelerate, seeing an offload device other than
  "none" and `zero_force_ds_cpu_optimizer` not false, silently replaces it with
  `map_pytorch_optim_to_deepspeed(optimizer)` (accelerate 1.15.0 accelerator.py:2374-2383): a DeepSpeedCPUAdam
  (DeepSpeedCPUAdagrad for torch Adagrad) built from the old optimizer's parameter groups with only `lr` and
  `weight_decay` as defaults (accelerate utils/deepspeed.py:29-97). The groups keep their own lr, betas, eps and
  weight decay (torch's `add_param_group` only fills missing keys), but any other optimizer (SGD, Adafactor, a
  bitsandbytes 8-bit one) becomes Adam with Adam's default betas and eps, and `adamw_mode` is on only for torch
  AdamW. Accelerate reads only `offload_optimizer.device`: a legacy `cpu_offload: true` is not swapped and fails
  as under raw DeepSpeed."""

from ..rule import Rule

RULE = Rule(
    code="ZL219",
    name="offload-needs-deepspeed-cpu-optimizer",
    severity="warning",
    summary="ZeRO-Offload with no optimizer section: only DeepSpeed's CPU optimizers are accepted from the code",
    versions=">=0.8.3",
    evidence="deepspeed/runtime/engine.py:2342-2346; accelerate 1.15.0 accelerator.py:2374-2383, "
             "utils/deepspeed.py:29-97",
)

ZERO = "/zero_optimization"


@RULE.check
def check(view):
    device = view.offload_device("optimizer")
    if device not in ("cpu", "nvme") or view.node("/optimizer") is not None:
        return
    if view.force_ds_cpu_optimizer is not True:
        return
    dev = view.node(f"{ZERO}/offload_optimizer/device")
    ptr, at = (dev.pointer, "value") if dev is not None else (f"{ZERO}/cpu_offload", "key")
    if view.target in ("hf", "accelerate") and dev is not None:
        yield from _swapped(view, ptr, at, device)
        return
    allowed = "DeepSpeedCPUAdam or DeepSpeedCPULion" if view.since(">=0.17.6") else "DeepSpeedCPUAdam"
    client = view.settings.client_optimizer
    if client is not None:  # the code's optimizer, read from the repository (docs/uses.md)
        name, where = client
        if name.rsplit(".", 1)[-1] in allowed.split(" or "):
            return
        yield view.finding(
            ptr,
            f"ZeRO-Offload ({device}) with no optimizer section: the code passes {name} to deepspeed.initialize "
            f"({where}), and DeepSpeed accepts only {allowed} there: it raises ZeRORuntimeException (\"You are "
            "using ZeRO-Offload with a client provided optimizer\") (zero_force_ds_cpu_optimizer defaults to true)",
            at=at, severity="error", fails_at="initialize",
            help="pass deepspeed.ops.adam.DeepSpeedCPUAdam, add an optimizer section, or set "
                 "zero_force_ds_cpu_optimizer: false to step your own optimizer on the host (slow)")
        return
    yield view.finding(
        ptr,
        f"ZeRO-Offload ({device}) with no optimizer section: the optimizer comes from your code, and "
        "deepspeed.initialize raises ZeRORuntimeException (\"You are using ZeRO-Offload with a client provided "
        f"optimizer\") unless the optimizer you pass is {allowed} (zero_force_ds_cpu_optimizer defaults to true; "
        "zerolint cannot see your code)",
        at=at, fails_at="initialize",
        help="add an optimizer section (Adam/AdamW: DeepSpeed builds DeepSpeedCPUAdam), pass "
             "deepspeed.ops.adam.DeepSpeedCPUAdam, or set zero_force_ds_cpu_optimizer: false to step your own "
             "optimizer on the host (slow)",
    )


# TrainingArguments.optim values whose optimizer the swap keeps (torch AdamW, torch Adagrad: same algorithm and
# per-group hyper-parameters); HF's default is adamw_torch_fused (transformers 5.24.0 training_args.py).
KEPT_BY_SWAP = ("adamw_torch", "adamw_torch_fused", "adagrad")
SWAP = ("Accelerate silently replaces the Trainer's optimizer{which} with DeepSpeedCPUAdam (DeepSpeedCPUAdagrad for "
        "torch Adagrad), built from its parameter groups: lr, betas, eps and weight_decay per group are kept, but ")
HELP = ("add an optimizer section to choose the optimizer DeepSpeed builds, or set zero_force_ds_cpu_optimizer: false "
        "to keep your optimizer (it then steps on the host, slowly)")


def _swapped(view, ptr: str, at: str, device: str):
    """The HF Trainer / Accelerate swap. With --training-args the optim decides: torch AdamW/Adagrad are kept in all
    but the class (no finding), anything else changes algorithm (a warning). Without them, an info that says when
    it matters: the Trainer's default optim is torch AdamW, which the swap keeps."""
    args = view.settings.training_args
    optim = args.get("optim") if args is not None else None
    if args is not None and (optim is None or str(optim) in KEPT_BY_SWAP):
        return
    head = f"offload_optimizer.device is {device} and there is no optimizer section: "
    if optim is None:
        yield view.finding(
            ptr, head + SWAP.format(which="") + "any optim other than adamw_torch, adamw_torch_fused (the default) or "
            "adagrad (SGD, Adafactor, 8-bit Adam, ...) becomes Adam with default betas and eps",
            at=at, severity="info", help=HELP)
        return
    yield view.finding(
        ptr, head + SWAP.format(which=f" (optim {optim})") + f"{optim} itself is not kept: DeepSpeed steps Adam with "
        "default betas and eps instead", at=at, severity="warning", help=HELP)
