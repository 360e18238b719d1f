"""Values facet: the value DeepSpeed ends up with at a pointer (`effective`), template placeholders, and what
DeepSpeed does with an invalid value (`invalid_value`: severity, words, when it fails)."""

from __future__ import annotations

from ...base import pointer as jp
from ...base.record import Record
from ..document import ARRAY, NULL, NUMBER, OBJECT, STRING, Node
from ..dsfacts import (
    LAX_CHECKED,
    LAX_LENIENT,
    LAX_PARSE_CHECKED,
    PYDANTIC_BOOL,
    SECTION_NON_OBJECT_OK,
    placeholder_text,
)
from ..schema import pydantic_number
from .base import MISSING
from .core import ViewCore

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any


class ValueOutcome(Record):
    """What DeepSpeed does with an invalid value: severity, the words, and when it fails (Finding.fails_at)."""

    _fields = ("severity", "text", "fails_at")
    severity: str
    text: str
    fails_at: str | None

    def __init__(self, severity: str, text: str, fails_at: str | None) -> None:
        self.severity = severity
        self.text = text
        self.fails_at = fails_at


class ValuesFacet(ViewCore):
    """Effective values and the outcome of invalid ones."""

    @staticmethod
    def is_placeholder(node: Node | None) -> bool:
        """A whole value that is a template placeholder (`${stage}`, `{{ bs }}`, `$STAGE`, or an hjson quoteless
        `CONFIG_BATCH_SIZE`): the file is a template, and type rules have nothing to say about it."""
        return placeholder_of(node) is not None

    def effective(self, pointer: str, kind: str = "bool") -> Any:
        """The value DeepSpeed ends up with at `pointer` ("bool" | "int" | "number" | "str"): the default when the
        key is absent (or an "auto" that a strict section drops), None when it is decided at run time (filled
        "auto", a template placeholder), MISSING when the value is invalid (structural rules report it)."""
        n = self.node(pointer)
        strict = self.is_strict(jp.parent(pointer))
        if n is None or (n.kind == "null" and kind != "str" and self.default(pointer) is None):
            return self.default(pointer)
        if self.is_auto(n):
            if self.fills_auto(pointer):
                return None
            return self.default(pointer) if strict else MISSING
        if self.is_placeholder(n):
            return None
        v = n.value
        if kind == "bool":
            if n.kind == "boolean":
                return v
            if n.kind == NUMBER and v in (0, 1):
                return bool(v)
            if strict and n.kind == STRING and v.strip().lower() in PYDANTIC_BOOL:
                return PYDANTIC_BOOL[v.strip().lower()]
            return MISSING
        if kind in ("int", "number"):
            num = self.number(n)
            if num is None and strict and n.kind == STRING:
                num = pydantic_number(v, integer=kind == "int")  # "3", "1_000", "0.3": pydantic's lax parsing
            elif num is None and strict and n.kind == "boolean":
                num = int(v)  # pydantic's lax mode reads false/true as 0/1 in int and float fields
            if num is None:
                return MISSING
            if kind == "int":
                if not (isinstance(num, int) or float(num).is_integer()):  # no float() of a 400-digit int
                    return MISSING
                return int(num) if strict else num  # pydantic makes an int; a lax key keeps what the reader gave
            return num
        return v if n.kind == STRING else MISSING

    def invalid_value(self, pointer: str) -> "ValueOutcome":
        """`_general_outcome` plus when DeepSpeed fails on it ("parse" | "initialize" | "step" | None), for
        `Finding.fails_at`; first the cases where the failure depends on the value and its neighbours, checked
        against DeepSpeed 0.19.8's own parse (tests/differential)."""
        # An item of a list is judged where the list stands (compile.passes[0] is in a strict section).
        while pointer and (owner := self.node(jp.parent(pointer))) is not None and owner.kind == ARRAY:
            pointer = owner.pointer
        special = (self._shape_outcome(pointer) or self._consumer_batch_outcome(pointer)
                   or self._batch_outcome(pointer) or self._lenient_outcome(pointer))
        if special is not None:
            return special
        checked = LAX_PARSE_CHECKED.get(pointer)
        node = self.node(pointer)
        if checked is not None and node is not None and checked[0](self, node):
            return ValueOutcome("error", f"DeepSpeed fails at parse ({checked[1]})", "parse")
        severity, text = self._general_outcome(pointer)
        return ValueOutcome(severity, text, fails_at_of(text))

    def _general_outcome(self, pointer: str) -> tuple[str, str]:
        """(severity, what DeepSpeed does) for a value of the wrong type or out of range at `pointer`."""
        special = _value_outcome(self, pointer)
        if special is not None:
            return special
        parent = jp.parent(pointer)
        if self.is_strict(parent):
            return "error", "DeepSpeed rejects the config at parse (pydantic ValidationError)"
        own = self.prop_schema(pointer)
        if isinstance(own, dict) and own.get("x-zerolint-ignored"):
            return "warning", f"DeepSpeed {self.version} never reads this key, so nothing fails (ZL905 says why)"
        for prefix, when in LAX_CHECKED:
            if pointer == prefix or (prefix.endswith("/") and pointer.startswith(prefix)):
                return "error", f"DeepSpeed fails at {when}"
        return "warning", "DeepSpeed does not check this value; the code that reads it will misbehave"

    def _shape_outcome(self, pointer: str) -> "ValueOutcome | None":
        """A section that is not an object, in a plain-dict parent (the top level, checkpoint, data_efficiency,
        timers, ...): DeepSpeed calls .get()/.keys() on it or splats it into its model (`**value`), which fails at
        parse, except for the few values it tolerates (SECTION_NON_OBJECT_OK). Strict parents are pydantic's
        business; optimizer/scheduler params are splatted only at initialize."""
        node = self.node(pointer)
        if node is None or node.kind == OBJECT or not pointer or self.unread(pointer):
            return None
        opt_type = self.node("/optimizer/type")
        if pointer == "/optimizer/params" and node.kind != NULL and opt_type is not None and opt_type.kind != NULL:
            # config.py:295-307, 723-724: with a type, the gradient-clipping lookup and the max_grad_norm warning
            # check call `optimizer.params.keys()` at parse
            return ValueOutcome("error", "DeepSpeed fails at parse: its max_grad_norm check calls "
                                         "optimizer.params.keys() (AttributeError)", "parse")
        if self.is_strict(jp.parent(pointer)) or self.strictness(pointer) in ("rejected_at_init", None):
            return None
        if self.schema.object_schema(self.schema.at(pointer) or {}) is None:
            return None  # not a section
        tolerated = SECTION_NON_OBJECT_OK.get(pointer)
        if pointer in ("/bf16", "/bfloat16") and not self.is_strict(pointer):
            tolerated = None  # a plain-dict bf16 (before 0.17.1) is asked .get("enabled") even when null
        if tolerated is not None and tolerated(node):
            return None
        return ValueOutcome("error", f"DeepSpeed fails at parse: it reads {self.path(pointer)} as a dict "
                                     "(TypeError/AttributeError, or a ValidationError for the monitor sections)",
                            "parse")

    def _lenient_outcome(self, pointer: str) -> "ValueOutcome | None":
        lenient = LAX_LENIENT.get(pointer)
        node = self.node(pointer)
        if lenient is None or node is None or not lenient[0](node):
            return None
        return ValueOutcome("warning", lenient[1], None)

    @property
    def autotuning_enabled(self) -> bool | None:
        """autotuning.enabled as the engine tests it: the raw value's truthiness, default false
        (autotuning/config.py:26-34; engine.py:1491-1492); None when decided at run time (a placeholder)."""
        section = self.node("/autotuning")
        if section is None or section.kind != "object":
            return False
        n = section.get("enabled")
        if n is None:
            return False
        return None if self.is_placeholder(n) else bool(n.to_python())

def placeholder_of(node: Node | None) -> str | None:
    """The template placeholder a string value is (see dsfacts.placeholder_text), or None."""
    if node is None or node.kind != STRING or not isinstance(node.value, str):
        return None
    quoteless = bool(node.raw) and node.raw[:1] not in ('"', "'")
    return placeholder_text(node.value, quoteless)


def fails_at_of(text: str) -> str | None:
    """The failure a message of ours claims: "... at parse" / "at initialize" / "at the first step"."""
    import re

    m = re.search(r"\b(?:fails|rejects|refuses)\b[^;.]*?\bat (parse|initialize|the first step)\b", text)
    return None if m is None else {"the first step": "step"}.get(m.group(1), m.group(1))


def _value_outcome(view: ViewCore, pointer: str) -> tuple[str, str] | None:
    """Where what DeepSpeed does with a bad value depends on the value, not just the place."""
    node = view.node(pointer)
    num = view.number(node)
    if pointer == "/gradient_clipping" and num is not None and num < 0:
        # engine.py:3506, stage_1_and_2.py:3199, stage3.py:2982, bf16_optimizer.py:408: clip only when > 0
        return "warning", "DeepSpeed clips only when gradient_clipping > 0, so it silently never clips"
    if pointer == "/steps_per_print" and num is not None:
        if num == 0:  # engine.py:3552-3555 and utils/timer.py:242-244: `step % steps_per_print`
            return "error", ("DeepSpeed fails at the first step (ZeroDivisionError: integer modulo by zero; "
                             "deepspeedai/DeepSpeed#7838)")
        if num < 0:
            return "warning", "DeepSpeed does not reject it: Python's modulo makes it report every |n| steps"
    if pointer == "/scheduler/params/warmup_type" and node is not None and node.kind == STRING:
        # lr_schedules.py:746-750, 884-888: an unknown warmup_type logs a warning and falls back to "log"
        return "warning", "DeepSpeed logs \"Using unknown warmup_type\" and uses the log warmup curve instead"
    return None

