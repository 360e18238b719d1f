"""`fp16.initial_scale_power` sets the first dynamic loss scale to 2^power (precision_config.py,
`initial_dynamic_scale`). fp16's largest finite value is 65504 (just under 2^16), and the default power 16 is
already tuned to start high. Each power beyond what the model's gradients tolerate costs at least one skipped
optimizer step at the start: on overflow DeepSpeed skips the step and halves the scale, spending `hysteresis` (2)
overflows before the first halving (fp16/loss_scaler.py:254-276). With 32 (found in several public configs, e.g.
axolotl's templates and LianjiaTech/BELLE) the first ~16-17 steps of the run do nothing but log "OVERFLOW! ...
Skipping step" (deepspeedai/DeepSpeed#931, huggingface/transformers#9996). Seen on an H200 with DeepSpeed 0.19.8
(ZeRO-2, fp16, a small MLP): 25 of the first 25 steps skipped before the scale settled.

From 64 on the run does not get that far: the scale is the Python int 2**power (precision_config.py:199-207; the
ZeRO optimizers' DynamicLossScaler keeps it as given), and `scale_loss` (fp16/loss_scaler.py:157-161) multiplying
the loss tensor by an int beyond 2^64 - 1 raises `OverflowError: int too big to convert` (torch accepts up to
uint64; 2^63 still runs). The ZeRO optimizers scale the loss in `engine.backward` (engine.py:3416-3418,
base_optimizer.py:413-424, `loss_scaler.scale_loss`), so the first backward fails (measured with DeepSpeed 0.19.8
on CPU: ZeRO 1, 2 and 3 fail at the first backward with power 64; 63 runs). Before 0.18.3 every fp16 path
multiplied the loss the same way in `optimizer.backward` (v0.18.2 fp16/unfused_optimizer.py:272,
fused_optimizer.py:404, loss_scaler.py:64), so ZeRO off failed too; from 0.18.3 `engine.backward` scales only for
ZeRO optimizers (v0.18.3 engine.py `scale_if_loss`) and with ZeRO off in 0.19.8 the run continues (measured). The
error claims the first step where it holds and states the condition where the stage or fp16 is decided at run time.

With ZeRO off from 0.18.3 the skipped-steps story does not hold either: `engine.backward` does not multiply the
loss for the FP16 optimizers, yet their step still divides the gradients by the scale
(fp16/unfused_optimizer.py:243-256). Measured with DeepSpeed 0.19.8 on CPU, fp16, ZeRO off, torch SGD lr 1: the
gradient after `engine.backward` is the unscaled 2.0 and the update is 2/65536 at the default power 16. Nothing
overflows, so nothing is skipped and the scale only grows; the finding there says that every update is 2^power
times too small.

Threshold for the skipped-steps warning: more than 24. 2^24 already multiplies a loss of 1 by 16.7 million; no
model in DeepSpeed's or HF's examples starts above it, and values up to 24 cost at most eight wasted steps. The
parse accepts any integer.

Fix (unsafe: it changes the start of the run): 16, the default."""

from ...model import edits
from ..rule import Rule

RULE = Rule(
    code="ZL304",
    name="fp16-initial-scale-power-too-high",
    severity="warning",
    summary="fp16.initial_scale_power above 24: the first optimizer steps are skipped while the scale comes down "
            "(from 64: the first backward fails)",
    evidence="deepspeed/runtime/fp16/loss_scaler.py:157-161, 254-276; deepspeed/runtime/engine.py:3416-3418; "
             "https://github.com/deepspeedai/DeepSpeed/issues/931; "
             "https://github.com/huggingface/transformers/issues/9996",
    fixable="unsafe",
)

PTR = "/fp16/initial_scale_power"
LIMIT = 24
OVERFLOW = 64  # 2**64 is the first scale torch cannot multiply a tensor by
HUGE_INT_POWER = 2**40  # 2**(2**40) needs 128 GiB: Python's int raises MemoryError (2**63 did on the CPU host)


@RULE.check
def check(view):
    float_overflow = _float_overflow_at_parse(view)
    if float_overflow is not None:
        yield float_overflow
        return
    if view.fp16_enabled is False or not view.has(PTR) or view.effective("/fp16/loss_scale", "number") != 0:
        return
    power = view.effective(PTR, "int")
    if not isinstance(power, int) or isinstance(power, bool) or power <= LIMIT:
        return
    if power >= OVERFLOW:
        overflow = _overflow(view, power)
        if overflow is not None:
            yield overflow
            return
    if view.zero_stage == 0 and view.since(">=0.18.3"):
        yield _unscaled(view, power)
        return
    hyst = view.effective("/fp16/hysteresis", "int")
    hyst = hyst if isinstance(hyst, int) and hyst > 0 else 2
    skipped = power - 16 + hyst - 1  # halvings to 2^16, plus the overflows that only count hysteresis down
    maybe = "" if view.fp16_enabled else " when fp16 is enabled"
    yield view.finding(
        PTR,
        f"fp16.initial_scale_power is {power}: the first loss scale is 2^{power} "
        f"({f'{2.0 ** power:.3g}' if power < 1024 else 'beyond any float'}), far above fp16's "
        f"range (max 65504), so{maybe} at least {skipped} optimizer steps are skipped (\"OVERFLOW! Skipping step\") "
        f"while DeepSpeed halves the scale down to what the gradients tolerate",
        at="value", help="use 16 (the default); dynamic scaling raises the scale by itself when it can",
        fixes=edits.fixes(edits.make_fix("set initial_scale_power to 16 (the default)",
                                         edits.replace_value(view.doc, PTR, "16"), safe=False)), fails_at=None
    )


def _float_overflow_at_parse(view):
    """Where fp16 is a plain dict (before the pydantic fp16 model), an enabled fp16 block computes
    `2**initial_scale_power` at parse (0.16.9 config.py:204-213): a float of 1024 or more raises OverflowError, an
    integer of 2**40 or more MemoryError (smaller ones are computed, and fail later: _overflow)."""
    node = view.node(PTR)
    if node is None or node.kind != "number" or view.is_strict("/fp16") or not view.value("/fp16/enabled"):
        return None
    power = view.number(node)
    if isinstance(power, float) and power >= 1024:
        what = "which overflows a float (OverflowError: Numerical result out of range)"
    elif isinstance(power, int) and not isinstance(power, bool) and power >= HUGE_INT_POWER:
        what = f"an integer of {power} bits, which exhausts memory (MemoryError)"
    else:
        return None
    return view.finding(
        PTR, f"fp16.initial_scale_power is {node.raw}: DeepSpeed computes the first loss scale 2**{node.raw} at "
             f"parse, {what}",
        at="value", severity="error", help="use 16 (the default); dynamic scaling raises the scale by itself",
        fixes=edits.fixes(edits.make_fix("set initial_scale_power to 16 (the default)",
                                         edits.replace_value(view.doc, PTR, "16"), safe=False)),
        fails_at="parse")


def _overflow(view, power):
    """The error for a scale beyond uint64, or None where DeepSpeed does not multiply the loss by it (ZeRO off
    from 0.18.3)."""
    every_stage = not view.since(">=0.18.3")
    stage = view.zero_stage
    if not every_stage and stage == 0:
        return None
    conditions = []
    if view.fp16_enabled is not True:
        conditions.append("fp16 is enabled")
    if not every_stage and stage is None:
        conditions.append("ZeRO stage 1-3 is used")
    when = f"when {' and '.join(conditions)}, " if conditions else ""
    return view.finding(
        PTR,
        f"fp16.initial_scale_power is {power}: the first loss scale is the integer 2^{power}, beyond what torch can "
        f"multiply a tensor by (2^64 - 1), so {when}the first backward fails with \"OverflowError: int too big to "
        "convert\" when DeepSpeed scales the loss",
        at="value", severity="warning" if conditions else "error",  # a condition the config does not settle
        help="use 16 (the default); dynamic scaling raises the scale by itself",
        fixes=edits.fixes(edits.make_fix("set initial_scale_power to 16 (the default)",
                                         edits.replace_value(view.doc, PTR, "16"), safe=False)),
        fails_at=None if conditions else "step")


def _unscaled(view, power):
    """ZeRO off from 0.18.3: engine.backward does not scale the loss for the FP16 optimizers (only for ZeRO
    optimizers, engine.py:3416-3418), but their step still divides the gradients by the scale
    (fp16/unfused_optimizer.py:243-256)."""
    maybe = "" if view.fp16_enabled else " when fp16 is enabled"
    return view.finding(
        PTR,
        f"fp16.initial_scale_power is {power}: with ZeRO off, DeepSpeed (0.18.3 and later) does not multiply the "
        f"loss by the scale in engine.backward but still divides the gradients by it at the step, so{maybe} every "
        f"update is 2^{power} times too small; nothing overflows, so the scale never comes down (it doubles every "
        "loss_scale_window steps)",
        at="value", help="use 16 (the default); dynamic scaling raises the scale by itself when it can",
        fixes=edits.fixes(edits.make_fix("set initial_scale_power to 16 (the default)",
                                         edits.replace_value(view.doc, PTR, "16"), safe=False)))
