"""Hover text and completions from the generated DeepSpeed schemas (data/schemas/deepspeed-<line>.json): what a
key does (its description: what DeepSpeed does with it), its type, default and the DeepSpeed versions whose schema
has it; the keys a section accepts and the values a key takes, for the DeepSpeed version the document is checked
against."""

from __future__ import annotations

import json
from typing import Any

from ..base import pointer as jp
from ..base.record import Record
from ..model.schema import Schema, load_schema
from ..model.versions import SCHEMA_LINES, Version, schema_line

UNKNOWN_WORDS = {
    "rejected": "a strict section: DeepSpeed rejects unknown keys at parse",
    "ignored": "DeepSpeed silently ignores unknown keys here",
    "rejected_at_init": "keyword arguments: an unknown one raises TypeError at deepspeed.initialize",
}


def schema_for(version: str) -> Schema:
    return load_schema(schema_line(Version(version)))


def _property(schema: Schema, pointer: str) -> dict[str, Any] | None:
    """The unresolved property schema at a pointer (it carries the description, default and x-zerolint-* of the
    key; resolving a $ref would drop them)."""
    if not pointer:
        return None
    section = schema.section(jp.parent(pointer))
    if section is None:
        return None
    prop = section.get("properties", {}).get(jp.last(pointer))
    return prop if isinstance(prop, dict) else None


def _removed(prop: dict[str, Any], schema: Schema) -> str | None:
    r = schema.resolve(prop)
    return r.get("x-zerolint-removed-in") if isinstance(r, dict) else None


def describe_type(schema: Schema, s: Any) -> str:
    """A short type: `integer (one of 0, 1, 2, 3) or "auto"`, `object`, `number >= 0`."""
    s = schema.resolve(s)
    if not isinstance(s, dict):
        return "any"
    if s.get("not") == {}:
        return "no value is accepted"
    branches = s.get("anyOf") or s.get("oneOf")
    if branches:
        return " or ".join(dict.fromkeys(describe_type(schema, b) for b in branches))
    if "const" in s:
        return json.dumps(s["const"])
    if "properties" in s or s.get("type") == "object":
        return "object"
    types = s.get("type", "any")
    text = " or ".join(types) if isinstance(types, list) else str(types)
    if "enum" in s:
        text += " (one of " + ", ".join(json.dumps(e) for e in s["enum"]) + ")"
    bounds = [f"{word} {s[k]}" for k, word in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="),
                                              ("exclusiveMaximum", "<")) if k in s]
    return text + (" " + ", ".join(bounds) if bounds else "")


def version_range(pointer: str) -> str:
    """The DeepSpeed minor lines whose generated schema accepts the key ("0.17 to 0.19"), and the version that
    removed it; zerolint ships one schema per line (SCHEMA_LINES), so the range is in lines, not patches."""
    present, removed = [], None
    for line in SCHEMA_LINES:
        schema = load_schema(line)
        prop = _property(schema, pointer)
        if prop is None:
            continue
        gone = _removed(prop, schema)
        if gone:
            removed = removed or gone
        else:
            present.append(line)
    if not present and not removed:
        return ""
    text = (f"{present[0]} to {present[-1]}" if len(present) > 1 else present[0]) if present else ""
    if removed:
        text += f"{'; ' if text else ''}removed in {removed}"
    return text + f" (zerolint's schemas cover {SCHEMA_LINES[0]} to {SCHEMA_LINES[-1]})"


def key_hover(pointer: str, version: str) -> str | None:
    """Markdown for the key at `pointer`, or None when the schema does not know it."""
    schema = schema_for(version)
    prop = _property(schema, pointer)
    if prop is None:
        return None
    section = jp.parent(pointer)
    title = f"**{jp.last(pointer)}**" + (f" in `{section.lstrip('/').replace('/', '.')}`" if section else "")
    lines = [title, "", prop.get("description") or _resolved_description(schema, prop) or "", ""]
    facts = [f"type: {describe_type(schema, prop)}"]
    if "default" in prop:
        facts.append(f"default: `{json.dumps(prop['default'])}`")
    versions = version_range(pointer)
    if versions:
        facts.append(f"DeepSpeed versions: {versions}")
    if prop.get("deprecated"):
        replaced = prop.get("x-zerolint-replaced-by")
        facts.append("deprecated" + (f": use `{replaced}`" if replaced else ""))
    if prop.get("x-zerolint-ignored"):
        facts.append("DeepSpeed accepts it and does nothing with it")
    if prop.get("x-zerolint-alias-of"):
        facts.append(f"alias of `{prop['x-zerolint-alias-of']}`")
    filled = prop.get("x-zerolint-auto-filled-by")
    if filled:
        facts.append('"auto" is filled by ' + " and ".join(_CONSUMERS.get(f, f) for f in filled))
    obj = schema.object_schema(prop)
    if obj is not None:
        policy = "rejected" if obj.get("additionalProperties") is False else obj.get("x-zerolint-unknown")
        if policy in UNKNOWN_WORDS:
            facts.append(f"unknown keys inside: {UNKNOWN_WORDS[policy]}")
    lines += [f"- {f}" for f in facts]
    lines += ["", f"(schema of DeepSpeed {schema.deepspeed_version})"]
    return "\n".join(lines).replace("\n\n\n", "\n\n")


_CONSUMERS = {"hf": "the HF Trainer", "accelerate": "Accelerate"}


def _resolved_description(schema: Schema, prop: dict[str, Any]) -> str:
    r = schema.resolve(prop)
    return r.get("description", "") if isinstance(r, dict) else ""


class Item(Record):
    """One completion: `label` (a key, or a value's JSON text), `detail` (type and default), `documentation`
    (the key's description), `deprecated`, `order` (the schema's order)."""

    _fields = ("label", "detail", "documentation", "deprecated", "order")
    label: str
    detail: str
    documentation: str
    deprecated: bool
    order: int

    def __init__(self, label: str, detail: str = "", documentation: str = "", deprecated: bool = False,
                 order: int = 0) -> None:
        self.label = label
        self.detail = detail
        self.documentation = documentation
        self.deprecated = deprecated
        self.order = order


def key_items(section: str, version: str, present: set[str] | frozenset[str] = frozenset()) -> list[Item]:
    """The keys the object at `section` accepts in this DeepSpeed version, in schema order, minus those already
    present and those the version removed."""
    schema = schema_for(version)
    obj = schema.section(section)
    if obj is None:
        return []
    v = Version(version)
    out = []
    for i, (key, prop) in enumerate(obj.get("properties", {}).items()):
        gone = _removed(prop, schema)
        if key in present or (gone and v >= Version(gone)) or key == "$schema":
            continue
        detail = describe_type(schema, prop)
        if isinstance(prop, dict) and "default" in prop:
            detail += f", default {json.dumps(prop['default'])}"
        out.append(Item(key, detail, (prop.get("description") or _resolved_description(schema, prop)),
                        bool(prop.get("deprecated")), i))
    return out


def value_items(pointer: str, version: str) -> list[Item]:
    """The values the key at `pointer` takes, as JSON text: its enum members, true/false, "auto" where the HF
    Trainer or Accelerate fill it; the default first."""
    schema = schema_for(version)
    prop = _property(schema, pointer)
    if prop is None:
        return []
    values: list[Any] = []
    _collect(schema, prop, values, 0)
    default = prop.get("default", _NONE)
    ordered = [default] if any(_same(default, v) for v in values) else []
    ordered += [v for v in values if not _same(v, default)]
    return [Item(json.dumps(v), "default" if i == 0 and ordered[0] is default else "", order=i)
            for i, v in enumerate(ordered)]


_NONE = object()


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _collect(schema: Schema, s: Any, out: list[Any], depth: int) -> None:
    s = schema.resolve(s)
    if not isinstance(s, dict) or depth > 8:
        return
    for branch in (s.get("anyOf") or s.get("oneOf") or ()):
        _collect(schema, branch, out, depth + 1)
    found: list[Any] = list(s.get("enum", ()))
    if "const" in s:
        found.append(s["const"])
    types = s.get("type")
    if "enum" not in s and (types == "boolean" or isinstance(types, list) and "boolean" in types):
        found += [True, False]
    for v in found:
        if not any(_same(v, x) for x in out):
            out.append(v)
