"""The generated DeepSpeed JSON Schema (data/schemas/deepspeed-<line>.json) and the structural walk over it.

The walk interprets the small subset of JSON Schema that scripts/gen_schema.py emits (properties,
additionalProperties, $ref, anyOf, type, enum, const, minimum/maximum/exclusive*, items, and our
`x-zerolint-*` annotations). It is not a general validator: it exists so that each kind of structural failure
becomes its own rule (unknown key, wrong type, not in enum, out of range, fractional integer, removed key)
with a located message and a did-you-mean, and so that `check` does not pay for importing a general JSON
Schema library. tests/test_schema_walk.py checks it against `jsonschema` on the corpus and the fixtures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache

from ..base import pointer as jp
from ..base.record import Record
from .document import ARRAY, BOOL, NULL, NUMBER, OBJECT, STRING, Node

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

_JSON_TYPES = {OBJECT: "object", ARRAY: "array", STRING: "string", BOOL: "boolean", NULL: "null"}


@lru_cache(maxsize=None)
def load_schema(line: str) -> "Schema":
    import os

    name = f"deepspeed-{line}.json"
    try:  # the package's own directory: importlib.resources costs ~5 ms of imports per run
        with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "schemas", name),
                  encoding="utf-8") as f:
            text = f.read()
    except OSError:  # e.g. installed inside a zip file
        from importlib import resources

        text = resources.files("zerolint").joinpath("data", "schemas", name).read_text("utf-8")
    return Schema(json.loads(text))


class SchemaIssue(Record):
    """One structural problem the schema walk found. `kind`: unknown-key | removed-key | type | enum | range |
    not-integer; `section`: the pointer of the object the key lives in; `unknown`, for unknown keys: "rejected" |
    "ignored" | "rejected_at_init"; `schema`: the property schema that failed; `expected`: a human description of
    what is accepted."""

    _fields = ("kind", "pointer", "node", "section", "unknown", "schema", "expected", "known_keys")
    kind: str
    pointer: str
    node: Node
    section: str
    unknown: str
    schema: dict[str, Any] | None
    expected: str
    known_keys: tuple[str, ...]

    def __init__(self, kind: str, pointer: str, node: Node, section: str, unknown: str = "",
                 schema: dict[str, Any] | None = None, expected: str = "", known_keys: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.pointer = pointer
        self.node = node
        self.section = section
        self.unknown = unknown
        self.schema = schema
        self.expected = expected
        self.known_keys = known_keys


class Schema:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.defs: dict[str, Any] = raw.get("$defs", {})
        # DeepSpeed before 0.15 built its models on pydantic v1, whose int() takes any float (1e20 too)
        self.pydantic_v1 = any(isinstance(d, dict) and d.get("x-zerolint-pydantic-v1") for d in self.defs.values())

    @property
    def deepspeed_version(self) -> str:
        return self.raw.get("x-zerolint", {}).get("deepspeed_version", "")

    def resolve(self, s: Any) -> Any:
        """Follow $ref (and a one-element allOf wrapper, as pydantic emits around $ref) to the real schema."""
        seen = 0
        while isinstance(s, dict) and seen < 32:
            if "$ref" in s:
                ref = s["$ref"]
                if not ref.startswith("#/$defs/"):
                    raise ValueError(f"unsupported $ref {ref!r}")
                s = self.defs[jp.unescape(ref[len("#/$defs/"):])]
            elif len(s.get("allOf", ())) == 1 and not {"type", "anyOf", "enum", "properties"} & s.keys():
                s = s["allOf"][0]
            else:
                break
            seen += 1
        return s

    def object_schema(self, s: Any) -> dict[str, Any] | None:
        """The object schema inside `s` (directly, via $ref, or as one branch of anyOf/allOf), if any."""
        s = self.resolve(s)
        if not isinstance(s, dict):
            return None
        if "properties" in s or s.get("type") == "object" or "x-zerolint-unknown" in s:
            return s
        for branch in s.get("anyOf", []) + s.get("oneOf", []) + s.get("allOf", []):
            found = self.object_schema(branch)
            if found is not None:
                return found
        return None

    def at(self, pointer: str) -> dict[str, Any] | None:
        """The (resolved) schema of the value at a pointer, following properties and items (remembered per
        pointer: rules ask for the same few pointers on every file)."""
        memo = self.__dict__.setdefault("_at_memo", {})
        if pointer not in memo:
            if len(memo) > 4096:
                memo.clear()
            memo[pointer] = self._at(pointer)
        return memo[pointer]

    def _at(self, pointer: str) -> dict[str, Any] | None:
        s: Any = self.raw
        for token in jp.split(pointer):
            obj = self.object_schema(s)
            if obj is not None and token in obj.get("properties", {}):
                s = self.resolve(obj["properties"][token])
                continue
            arr = self.resolve(s)
            if isinstance(arr, dict) and "items" in arr and token.isdigit():
                s = self.resolve(arr["items"])
                continue
            return None
        return self.resolve(s)

    def section(self, pointer: str) -> dict[str, Any] | None:
        s = self.at(pointer)
        return self.object_schema(s) if s is not None else None

    def keys(self, pointer: str) -> tuple[str, ...]:
        sec = self.section(pointer)
        return tuple(sec.get("properties", {})) if sec else ()

    def unknown_policy(self, pointer: str) -> str | None:
        sec = self.section(pointer)
        if sec is None:
            return None
        if sec.get("additionalProperties") is False:
            return "rejected"
        return sec.get("x-zerolint-unknown", "ignored")

    def all_sections(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(pointer, object schema) for every object section reachable from the root, depth first. Computed once
        per schema (rules ask for it on every file: it was most of the time of linting a small config)."""
        sections = self.__dict__.get("_sections")
        if sections is None:
            sections = self._sections = list(self._walk_sections())
        return iter(sections)

    def _walk_sections(self) -> Iterator[tuple[str, dict[str, Any]]]:
        stack: list[tuple[str, Any, int]] = [("", self.raw, 0)]
        while stack:
            ptr, s, depth = stack.pop()
            obj = self.object_schema(s)
            if obj is None or depth > 8:
                continue
            yield ptr, obj
            for key, sub in reversed(list(obj.get("properties", {}).items())):
                stack.append((jp.join(ptr, key), sub, depth + 1))

    @staticmethod
    def spellings(section: dict[str, Any], key: str) -> list[str]:
        """Every name a section accepts for the field `key`: the documented alias first, then the field name."""
        props = section.get("properties", {})
        canonical = props.get(key, {}).get("x-zerolint-alias-of", key)
        names = list(props.get(canonical, {}).get("x-zerolint-aliases", [])) + [canonical]
        return [n for n in names if n in props] or [key]

    def key_index(self) -> dict[str, list[str]]:
        """key -> pointers of every section that accepts it (for "this key belongs elsewhere")."""
        if not hasattr(self, "_key_index"):
            index: dict[str, list[str]] = {}
            for ptr, obj in self.all_sections():
                for key, sub in obj.get("properties", {}).items():
                    sub_r = self.resolve(sub)
                    if isinstance(sub_r, dict) and "x-zerolint-removed-in" in sub_r:
                        continue
                    index.setdefault(key, []).append(ptr)
            self._key_index = index
        return self._key_index

    # -- the structural walk -------------------------------------------------------------------------------------
    def walk(self, root: Node, skip_value: Any = None) -> list[SchemaIssue]:
        """Structural issues in a document. `skip_value(node)` returns True for values the walk must leave to
        other rules (a literal "auto")."""
        issues: list[SchemaIssue] = []
        self._walk_object(root, self.raw, issues, skip_value or (lambda n: False))
        return issues

    def _walk_object(self, node: Node, s: Any, issues: list[SchemaIssue], skip: Any) -> None:
        obj = self.object_schema(s)
        if obj is None or node.kind != OBJECT:
            return
        props = obj.get("properties", {})
        extra = obj.get("additionalProperties")
        strict = extra is False
        read = obj.get("x-zerolint-code-reads", {})
        for m in node.members or ():
            sub = props.get(m.key)
            if sub is None and isinstance(extra, dict):  # a map (curriculum_metrics: any name, one schema)
                self._walk_value(m.value, extra, issues, skip, node.pointer)
                continue
            if sub is None and m.key in read:
                continue  # not in a model, but DeepSpeed's code reads it from this dict (scripts/code_reads.py)
            if sub is None:
                issues.append(SchemaIssue("unknown-key", m.pointer, m.value, node.pointer,
                                          unknown="rejected" if strict else obj.get("x-zerolint-unknown", "ignored"),
                                          known_keys=tuple(props) + tuple(read)))
                continue
            sub_r = self.resolve(sub)
            if isinstance(sub_r, dict) and "x-zerolint-removed-in" in sub_r:
                issues.append(SchemaIssue("removed-key", m.pointer, m.value, node.pointer, schema=sub_r))
                continue
            # a plain-dict key that DeepSpeed hands to a pydantic model (x-zerolint-pydantic) is validated like one
            pydantic = strict or (isinstance(sub, dict) and sub.get("x-zerolint-pydantic") is True)
            self._walk_value(m.value, sub, issues, skip, node.pointer, pydantic=pydantic)

    def _walk_value(self, node: Node, s: Any, issues: list[SchemaIssue], skip: Any, section: str,
                    pydantic: bool = False) -> None:
        if skip(node):
            return
        problem = self.mismatch(node, s)
        if problem is None and pydantic and not self.pydantic_v1 and node.kind == NUMBER \
                and isinstance(node.value, float) and abs(node.value) >= 2 ** 63 and self._integer_only(s):
            # pydantic turns a float into a 64-bit integer: 1e19 fails where the int 10000000000000000000 passes
            problem = ("range", "a whole number below 9.2e18 (2**63) when written with an exponent or a "
                                "decimal point")
        if problem is not None:
            kind, expected = problem
            issues.append(SchemaIssue(kind, node.pointer, node, section, schema=self.resolve(s), expected=expected))
            return
        if node.kind == OBJECT:
            self._walk_object(node, s, issues, skip)
        elif node.kind == ARRAY:
            items = self._items_schema(s, node)
            if items is not None:
                for item in node.items or ():
                    self._walk_value(item, items, issues, skip, node.pointer, pydantic)

    def _integer_only(self, s: Any) -> bool:
        """Whether the schema takes integers but not other numbers (a pydantic int field)."""
        s = self.resolve(s)
        if not isinstance(s, dict):
            return False
        branches = [self.resolve(b) for b in s.get("anyOf", ()) or s.get("oneOf", ())] or [s]
        types: set[str] = set()
        for b in branches:
            t = b.get("type") if isinstance(b, dict) else None
            types.update([t] if isinstance(t, str) else t or ())
        return "integer" in types and "number" not in types

    def _items_schema(self, s: Any, node: Node) -> Any:
        s = self.resolve(s)
        if not isinstance(s, dict):
            return None
        if "items" in s:
            return s["items"]
        for branch in s.get("anyOf", ()):
            b = self.resolve(branch)
            if isinstance(b, dict) and "items" in b:
                return b["items"]
        return None

    def mismatch(self, node: Node, s: Any, coerces: tuple[str, ...] = ()) -> tuple[str, str] | None:
        """None when `node` fits schema `s`, else (kind, what is expected). Kinds: type, enum, range,
        not-integer, and coerced (pydantic's lax mode converts the value, e.g. "3" -> 3: accepted, but not what
        was written)."""
        if isinstance(s, dict):
            coerces = tuple(s.get("x-zerolint-coerces", coerces))
        s = self.resolve(s)
        if s is True or not isinstance(s, dict):
            return None
        if isinstance(s, dict) and "x-zerolint-coerces" in s:
            coerces = tuple(s["x-zerolint-coerces"])
        if s is False or "not" in s and s["not"] == {}:
            return ("type", "nothing (this key is not accepted)")
        if s.get("x-zerolint-truthy") and node.kind != BOOL:
            # read with `if value:`, not validated: any value works, as Python's truth of it
            return ("truthy", json.dumps(_truth(node)))
        for sub in s.get("allOf", ()):
            r = self.mismatch(node, sub, coerces)
            if r is not None:
                return r
        branches = s.get("anyOf") or s.get("oneOf")
        if branches:
            results = [self.mismatch(node, b, coerces) for b in branches]
            if any(r is None for r in results):
                return None
            # Report the most specific failure: a branch whose type matched but whose constraint failed.
            for kind in ("coerced", "enum", "range", "not-integer"):
                for r in results:
                    if r and r[0] == kind:
                        return r
            # The "auto" placeholder branch is for editors; "auto" itself is judged by the "auto" rules.
            wanted = [r[1] for r in results if r and not (r[0] == "const" and r[1] == '"auto"')]
            return ("type", " or ".join(dict.fromkeys(wanted or [r[1] for r in results if r])))
        if "const" in s:
            return None if _same(node.value, s["const"]) and node.kind not in (OBJECT, ARRAY) else (
                "const", json.dumps(s["const"]))
        value = node.value
        coerced = False
        types = s.get("type")
        if types is not None:
            tlist = [types] if isinstance(types, str) else list(types)
            if not _type_ok(node, tlist):
                if "integer" in tlist and node.kind == NUMBER and not _is_integral(node.value):
                    return ("not-integer", "an integer (a whole number)")
                converted = _coerce(node, tlist) if _JSON_TYPES.get(node.kind, "number") in coerces or (
                    node.kind == NUMBER and "integer" in coerces) else _NO
                if converted is _NO:
                    return ("type", " or ".join(_describe_type(t) for t in tlist))
                value, coerced = converted, True
        if "enum" in s and node.kind not in (OBJECT, ARRAY):
            if not any(_same(value, e) for e in s["enum"]):
                return ("enum", "one of " + ", ".join(json.dumps(e) for e in s["enum"]))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for key, ok, word in (
                ("minimum", lambda a, b: a >= b, ">="), ("maximum", lambda a, b: a <= b, "<="),
                ("exclusiveMinimum", lambda a, b: a > b, ">"), ("exclusiveMaximum", lambda a, b: a < b, "<"),
            ):
                if key in s and not ok(value, s[key]):
                    return ("range", f"a number {word} {_fmt(s[key])}")
        if coerced:
            return ("coerced", json.dumps(value))
        return None


_NO = object()
_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


def _truth(node: Node) -> bool:
    """Python's truth of the value, without building it (a hostile value may nest thousands deep)."""
    if node.kind == OBJECT:
        return bool(node.members)
    if node.kind == ARRAY:
        return bool(node.items)
    return bool(node.value)


def _coerce(node: Node, types: list[str]) -> Any:
    """What pydantic's lax mode turns the value into for one of `types`, or _NO (v2's rules; v1's only where the
    schema's x-zerolint-coerces admits a kind v2 refuses)."""
    v = node.value
    for t in types:
        if t == "boolean":
            if node.kind == STRING and v.strip().lower() in _TRUE | _FALSE:
                return v.strip().lower() in _TRUE
            if node.kind == NUMBER and v in (0, 1):
                return bool(v)
        elif t in ("integer", "number"):
            if node.kind == BOOL:
                return int(v)
            if node.kind == STRING:
                num = pydantic_number(v, integer=t == "integer")
                if num is None:
                    continue
                return num
        elif t == "string" and node.kind in (NUMBER, BOOL):
            # only reached where the schema lists the kind in x-zerolint-coerces: pydantic v1 (DeepSpeed before
            # 0.15) makes str(value) of a number or boolean; v2 turns neither into a string
            return str(v)
        elif t == "array" and node.kind == STRING:
            return [v]  # only where the model's own validator wraps a string (x-zerolint-coerces)
    return _NO


_PYDANTIC_INT = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*(?:\.0+)?")  # "3.0" yes; "3." and non-ASCII digits no


def pydantic_number(text: str, integer: bool) -> int | float | None:
    """The number pydantic v2's lax mode reads from a string: for an int field "3", " +3 ", "1_000" and "3.0" (not
    "3.", "3.5" or "1e3"); for a float field what float() takes in ASCII. None when it rejects the string."""
    text = text.strip()
    if integer:
        return int(text.split(".")[0].replace("_", "")) if _PYDANTIC_INT.fullmatch(text) else None
    if not text.isascii():  # float() takes other scripts' digits ("\u0663"); pydantic does not
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _is_integral(v: Any) -> bool:
    return isinstance(v, int) or (isinstance(v, float) and v == v and v not in (float("inf"), float("-inf"))
                                  and v.is_integer())


def _type_ok(node: Node, types: list[str]) -> bool:
    for t in types:
        if t == "number" and node.kind == NUMBER:
            return True
        if t == "integer" and node.kind == NUMBER and _is_integral(node.value):
            return True
        if _JSON_TYPES.get(node.kind) == t:
            return True
    return False


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def _describe_type(t: str) -> str:
    return {"integer": "an integer", "number": "a number", "boolean": "true or false", "string": "a string",
            "object": "an object", "array": "a list", "null": "null"}.get(t, t)


def _fmt(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)
