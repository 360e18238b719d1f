"""Schema facet: which sections are strict, what DeepSpeed never reads, schema issues, defaults per version,
and where a misplaced key belongs."""

from __future__ import annotations

from functools import cached_property

from ...base import pointer as jp
from ..document import OBJECT, STRING
from ..dsfacts import DEFAULT_DRIFT, GENERIC_KEYS
from ..schema import SchemaIssue
from .base import MISSING
from .core import ViewCore

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any


SUGGESTIONS_PER_FILE = 200  # did-you-mean guesses computed per document (View.closest)


class KeysFacet(ViewCore):
    """Strictness, schema issues, defaults and homes of keys."""

    def strictness(self, pointer: str) -> str | None:
        """'rejected' (strict: unknown keys fail at parse), 'ignored' (lax), 'rejected_at_init', or None."""
        if self.unread(pointer):
            return "ignored"
        return self.schema.unknown_policy(pointer)

    def is_strict(self, pointer: str) -> bool:
        return self.strictness(pointer) == "rejected"

    def unread(self, pointer: str) -> bool:
        """True for what DeepSpeed never reads, so never validates: the legacy `bfloat16` block (and everything in
        it) when `bf16` is also given (precision_config.py:34-38)."""
        return jp.split(pointer)[:1] == ["bfloat16"] and self.bf16_section != "/bfloat16"

    @cached_property
    def schema_issues(self) -> list[SchemaIssue]:
        if self.root is None:
            return []
        issues = self.schema.walk(self.root, skip_value=lambda n: n.kind == STRING and n.value.lower() == "auto")
        for issue in issues:
            # A strict (pydantic) section drops every member whose value is exactly "auto" before validating
            # (config_utils.py:54-56), an unknown key included; and a block DeepSpeed never reads is never checked.
            if issue.kind == "unknown-key" and issue.unknown == "rejected" and (
                    self.is_auto(issue.node) or self.unread(issue.pointer)):
                issue.unknown = "ignored"
        return issues

    def issues(self, kind: str) -> list[SchemaIssue]:
        return [i for i in self.schema_issues if i.kind == kind]

    def prop_schema(self, pointer: str) -> dict[str, Any] | None:
        return self.schema.at(pointer)

    def default(self, pointer: str) -> Any:
        for since, old, new in DEFAULT_DRIFT.get(pointer, ()):
            return new if self.since(f">={since}") else old
        s = self.schema.at(pointer)
        return s.get("default", MISSING) if isinstance(s, dict) else MISSING

    def closest(self, word: str, candidates) -> str | None:
        """base.suggest.closest, for the first SUGGESTIONS_PER_FILE words of this document; None after that. A
        did-you-mean costs up to ~0.3 ms, and a hostile file can hold tens of thousands of near-miss keys (issue 22,
        item 3): past the budget the findings stay, without the guess."""
        spent = self.__dict__.get("_suggestions", 0)
        if spent >= SUGGESTIONS_PER_FILE:
            return None
        self.__dict__["_suggestions"] = spent + 1
        from ...base.suggest import closest

        return closest(word, candidates)

    def keys_present(self, pointer: str) -> frozenset[str]:
        """The keys an object section holds (cached per section: the unknown-key rules ask once per finding, and a
        big config has many)."""
        cache = self.__dict__.setdefault("_keys_present", {})
        if pointer not in cache:
            node = self.node(pointer)
            cache[pointer] = frozenset(node.keys()) if node is not None and node.kind == OBJECT else frozenset()
        return cache[pointer]

    def home_of(self, pointer: str) -> str | None:
        """For a key that is unknown where it stands but belongs to exactly one other section (a top-level
        `offload_optimizer`, `stage` or `overlap_comm`), that section's pointer."""
        key, here = jp.last(pointer), jp.parent(pointer)
        homes = [p for p in self.schema.key_index().get(key, ()) if p != here and "/" + key not in p]
        # Keys every section has ("enabled", "type", "params", ...) say nothing about where they belong.
        if len(homes) != 1 or key in GENERIC_KEYS:
            return None
        return homes[0]
