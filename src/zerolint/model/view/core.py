"""The core of the View: the document, the settings, who reads the config (target, DeepSpeed version), node
and value access with the reader's number semantics, and building findings. The facets (zero, precision, ...)
build on it."""

from __future__ import annotations

from functools import cached_property

from ...base import pointer as jp
from .. import consumers
from ..diagnostics import Finding, Severity
from ..document import NUMBER, OBJECT, STRING, Document, Node
from ..schema import Schema, load_schema
from ..versions import Version, matches, schema_line
from .base import Settings, default_deepspeed_version

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any


class ViewCore:
    """What every facet stands on: the document, as the target consumer of this DeepSpeed version reads it."""

    def __init__(self, doc: Document, settings: Settings | None = None) -> None:
        self.doc = doc
        self.settings = settings or Settings()
        self.version = Version(self.settings.deepspeed_version or default_deepspeed_version())
        self.world_size = self.settings.world_size
        self.target_requested = self.settings.target
        self.target = self._resolve_target()

    def _resolve_target(self) -> str:
        if self.target_requested != "auto":
            return self.target_requested
        return "hf" if self.auto_nodes else "deepspeed"

    @property
    def consumer(self) -> str:
        """Display name of the target: 'DeepSpeed', 'the HF Trainer', 'Accelerate'."""
        return consumers.DISPLAY[self.target]

    @property
    def raw_deepspeed(self) -> bool:
        return self.target == "deepspeed"

    def since(self, spec: str) -> bool:
        """True when the target DeepSpeed version matches `spec` (e.g. '>=0.19.7')."""
        return matches(self.version, spec)

    @property
    def root(self) -> Node | None:
        r = self.doc.root
        return r if r is not None and r.kind == OBJECT else None

    def node(self, pointer: str) -> Node | None:
        return self.doc.node(pointer) if self.root is not None else None

    def has(self, pointer: str) -> bool:
        return self.node(pointer) is not None

    def value(self, pointer: str, default: Any = None) -> Any:
        n = self.node(pointer)
        return default if n is None else n.to_python()

    def members(self, pointer: str) -> list:
        n = self.node(pointer)
        return list(n.members or ()) if n is not None and n.kind == OBJECT else []

    @cached_property
    def auto_nodes(self) -> list[Node]:
        """Every value that is the string "auto" (any case) — placeholders for HF/Accelerate to fill."""
        if self.doc.root is None:
            return []
        return [n for n in self.doc.root.walk() if n.kind == STRING and isinstance(n.value, str)
                and n.value.strip().lower() == "auto"]

    @staticmethod
    def is_auto(node: Node | None) -> bool:
        return node is not None and node.kind == STRING and node.value == "auto"

    def number(self, node: Node | None) -> int | float | None:
        """A numeric value as this consumer gets it: hjson (DeepSpeed reading a file) makes an integral
        `5e8` or `2.0` an int; json (HF, Accelerate) keeps it a float."""
        if node is None or node.kind != NUMBER or isinstance(node.value, bool):
            return None
        v = node.value
        if self.raw_deepspeed and isinstance(v, float) and v.is_integer() and abs(v) < 1e10:
            return int(v)
        return v

    @cached_property
    def schema(self) -> Schema:
        return load_schema(schema_line(self.version))

    def finding(self, pointer: str, message: str, *, help: str | None = None, at: str = "key",
                severity: Severity | str | None = None, fixes: list | None = None,
                related: list | None = None, span: tuple[int, int] | None = None,
                fails_at: str | None = None) -> Finding:
        return Finding(pointer=pointer, message=message, help=help, at=at, span=span,
                       severity=Severity.parse(severity) if severity is not None else None,
                       fixes=list(fixes or ()), related=list(related or ()), fails_at=fails_at)

    def path(self, pointer: str) -> str:
        """A pointer as people write config paths: '/zero_optimization/stage' -> 'zero_optimization.stage'."""
        return ".".join(jp.split(pointer)) or "(top level)"

    if TYPE_CHECKING:  # members of one facet that another uses: the checker sees them here, View defines them
        def fills_auto(self, pointer: str) -> bool: ...  # auto.py
        def is_strict(self, pointer: str) -> bool: ...  # keys.py
        def strictness(self, pointer: str) -> str | None: ...
        def unread(self, pointer: str) -> bool: ...
        def default(self, pointer: str) -> Any: ...
        def prop_schema(self, pointer: str) -> dict[str, Any] | None: ...
        @property
        def zero_stage(self) -> int | None: ...  # zero.py
        def offload_device(self, which: str) -> str | None: ...
        @property
        def bf16_section(self) -> str: ...  # precision.py
        @property
        def precision(self) -> str | None: ...
        @property
        def model_dtype(self) -> str | None: ...
        @property
        def grad_accum_dtype(self) -> str | None: ...
        def effective(self, pointer: str, kind: str = "bool") -> Any: ...  # values.py
        def invalid_value(self, pointer: str) -> Any: ...  # a ValueOutcome (values.py, which imports this module)
        @staticmethod
        def is_placeholder(node: Node | None) -> bool: ...
        def _consumer_batch_outcome(self, pointer: str) -> Any: ...  # batch.py; ValueOutcome | None, as above
        def _batch_outcome(self, pointer: str) -> Any: ...
