""""auto" facet: which consumer fills an "auto" where, and what raw DeepSpeed does with one it gets."""

from __future__ import annotations

from ...base import pointer as jp
from ...base.record import Record
from .. import consumers, trainer
from ..document import Node
from ..dsfacts import AUTO_CRASHES
from ..versions import matches
from .base import MISSING
from .core import ViewCore

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any


class AutoOutcome(Record):
    """What an unfilled "auto" does: `crashes_at` "parse" | "initialize" | "the first step" | None, the words."""

    _fields = ("crashes_at", "effect", "turns_off", "turns_on")
    crashes_at: str | None
    effect: str
    turns_off: bool
    turns_on: bool

    def __init__(self, crashes_at: str | None, effect: str, turns_off: bool = False, turns_on: bool = False) -> None:
        self.crashes_at = crashes_at
        self.effect = effect
        self.turns_off = turns_off
        self.turns_on = turns_on


class AutoFacet(ViewCore):
    """What "auto" means for the target consumer."""

    def fills_auto(self, pointer: str) -> bool:
        """Whether the target consumer replaces an "auto" at this pointer before DeepSpeed sees it (the Trainer's
        share by transformers version, plus Accelerate's at every ZeRO stage: model/trainer.py)."""
        if pointer in trainer.AMP_FILLS and not matches(trainer.transformers_version(self.settings), trainer.AMP_FILL):
            return False
        return consumers.fills_auto(self.target, pointer)

    def auto_outcome(self, node: Node) -> "AutoOutcome":
        """What raw DeepSpeed does with an unfilled "auto" at this node."""
        ptr = node.pointer
        parent = jp.parent(ptr)
        strict = self.is_strict(parent)
        if parent in ("/fp16", "/bf16", "/bfloat16") and not self.since(">=0.17.1"):
            strict = False
            if jp.last(ptr) == "enabled":
                return AutoOutcome(None, "a non-empty string is truthy to DeepSpeed < 0.17.1, so this turns "
                                         f"{parent[1:]} ON", turns_off=False, turns_on=True)
        if strict:
            default = self.default(ptr)
            shown = "unset" if default is MISSING else json_text(default)
            name = jp.last(ptr)
            effect = {
                "stage": "ZeRO is off (stage 0)",
                "enabled": f"{self.path(parent)} is off",
                "device": "nothing is offloaded (device 'none')",
                "overlap_comm": "overlap_comm follows the stage (on for stage 3, off below)",
            }.get(name, f"the default {shown} applies")
            return AutoOutcome(None, f"DeepSpeed silently drops it: {effect}",
                               turns_off=name in ("stage", "enabled", "device"))
        legacy = self.node("/zero_optimization")
        if ptr == "/allgather_size" and legacy is not None and legacy.kind == "boolean" and legacy.value is True:
            # zero/config.py:60-65: the legacy `"zero_optimization": true` hands it to DeepSpeedZeroConfig as
            # allgather_bucket_size, a strict model that drops "auto" (measured: the parse differential).
            return AutoOutcome(None, "with \"zero_optimization\": true DeepSpeed passes it to the ZeRO config as "
                                     "allgather_bucket_size, which silently drops it: the default 5e8 applies")
        for prefix, when, how in AUTO_CRASHES:
            if ptr == prefix or (prefix.endswith("/") and ptr.startswith(prefix)):
                return AutoOutcome(when, how)
        # Elsewhere in a plain-dict section the string is kept: it fails wherever any invalid value fails.
        s = self.schema.at(ptr)
        bad = self.schema.mismatch(node, s) if s is not None else None
        if bad is not None:
            out = self.invalid_value(ptr)
            if out.fails_at is not None:
                return AutoOutcome({"step": "the first step"}.get(out.fails_at, out.fails_at),
                                   f"{self.path(ptr)} must be {bad[1]}")
        return AutoOutcome(None, "DeepSpeed keeps the string \"auto\" here")


def json_text(value: Any) -> str:
    import json

    if isinstance(value, (int, float)) and not isinstance(value, bool) and 1e6 <= abs(value) < 1e300 \
            and float(value).is_integer() and float(f"{value:.0e}") == value:
        return f"{value:.0e}".replace("+0", "").replace("+", "")
    return json.dumps(value)
