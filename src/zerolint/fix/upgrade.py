"""`zerolint upgrade --to VERSION`: rewrite deprecated and renamed keys for a target DeepSpeed version.

What to rewrite comes from the deprecation metadata DeepSpeed declares on its own pydantic fields, as carried
by the generated schema of the target version's line (`schemas/deepspeed-<line>.json`, read through
`zerolint.schema.load_schema`): `deprecated: true`, `x-zerolint-replaced-by` (DeepSpeed's `new_param`),
`x-zerolint-sets-new-param` (False: DeepSpeed only warns and drops the value), `x-zerolint-removed-in`
(the key is a hard error from that version) and `x-zerolint-alias-of` (the accepted spellings). What the schema
cannot say is in `RENAMES` and `VALUE_REWRITES` below, each with its evidence.

- a deprecated key whose value DeepSpeed copies to its replacement is renamed (`bfloat16` -> `bf16`,
  `stage3_gather_fp16_weights_on_model_save` -> `stage3_gather_16bit_weights_on_model_save`, the spelling the
  section documents first);
- `cpu_offload: true` -> `offload_optimizer: {"device": "cpu"}`, `cpu_offload_param: true` ->
  `offload_param: {"device": "cpu"}`; with `false` the key is deleted (that is the default);
- a deprecated key DeepSpeed ignores (`cpu_offload_use_pin_memory`, `bfloat16` next to `bf16`) is deleted;
- `aio.thread_count` -> `aio.intra_op_parallelism` from 0.16.4 (renamed with no alias: the old key is ignored);
- a removed block (`amp`, `sparse_attention`, `elasticity`, ... from 0.19.7/0.19.8) is reported with what
  replaces it, and deleted only with `--remove-removed`;
- a deprecated key and its replacement both set, or a deprecation with no mechanical replacement, is reported.

Every rewrite goes through `zerolint.fix.fix_text` (verified, loop until stable), as the pseudo-rule ZL700.
"""

from __future__ import annotations

import json
from typing import Any

from ..base import pointer as jp
from ..model import edits
from ..model.diagnostics import Edit
from ..model.document import BOOL, NULL, NUMBER, OBJECT, STRING, Document
from ..model.view import Settings
from ..rules.rule import Rule
from ..rules.ruleset import RuleSet
from .engine import FixResult, fix_text

# Renames the schema cannot express (the old key is simply gone from the model): (section, old, new, since, why).
RENAMES = [
    ("/aio", "thread_count", "intra_op_parallelism", "0.16.4",
     "aio.thread_count was renamed intra_op_parallelism in DeepSpeed 0.16.4 (PR #7056) with no alias: the old key "
     "is ignored"),
]
# Deprecated booleans whose replacement is a block: key -> the block a true value stands for.
VALUE_REWRITES = {
    "cpu_offload": {"device": "cpu"},  # zero/config.py:188-198 (offload_optimizer={device: cpu})
    "cpu_offload_param": {"device": "cpu"},  # zero/config.py:207-220
}


def _truth(node) -> bool | None:
    """How pydantic reads a bool field (x-zerolint-coerces: integer, string)."""
    if node.kind == BOOL:
        return node.value
    if node.kind == NUMBER and node.value in (0, 1):
        return bool(node.value)
    if node.kind == STRING and node.value.strip().lower() in ("true", "1", "yes", "on", "y", "t"):
        return True
    if node.kind == STRING and node.value.strip().lower() in ("false", "0", "no", "off", "n", "f"):
        return False
    if node.kind == NULL:
        return False
    return None


def make_rule(remove_removed: bool = False) -> Rule:
    rule = Rule(code="ZL700", name="upgrade", severity="warning",
                summary="A deprecated, renamed or removed key for the target DeepSpeed version",
                evidence="DeepSpeed's field metadata (deprecated, new_param, set_new_param) via schemas/",
                fixable="safe")
    rule.rationale = __doc__ or ""

    def check(view):
        yield from _check(view, remove_removed)

    rule.func = check
    return rule


def _check(view, remove_removed: bool):
    doc: Document = view.doc
    if view.root is None:
        return
    try:
        schema = view.schema
    except (OSError, ValueError):  # no generated schema for this line: only the built-in renames below
        schema = None
    for section_ptr, section in schema.all_sections() if schema is not None else ():
        node = view.node(section_ptr)
        if node is None or node.kind != OBJECT:
            continue
        props = section.get("properties", {})
        for m in list(node.members or ()):
            raw = props.get(m.key)
            if not isinstance(raw, dict):
                continue
            resolved = schema.resolve(raw)
            # The annotations sit next to a $ref / allOf, which resolving drops: keep both.
            sub = {**resolved, **raw} if isinstance(resolved, dict) else raw
            removed = sub.get("x-zerolint-removed-in")
            if removed:
                if not view.since(f">={removed}"):
                    continue
                desc = sub.get("description", "")
                what = desc.split(": ", 1)[1] if ": " in desc else desc
                fix = edits.make_fix(f"delete {view.path(m.pointer)} (removed in DeepSpeed {removed})",
                                     edits.remove_member(doc, m)) if remove_removed else None
                yield view.finding(m.pointer, f"{view.path(m.pointer)} was removed in DeepSpeed {removed} (a hard "
                                              f"error at parse){': ' + what.rstrip('.') if what else ''}",
                                   help=None if remove_removed else "delete it, or run upgrade with --remove-removed",
                                   fixes=edits.fixes(fix))
                continue
            if not sub.get("deprecated"):
                continue
            yield from _deprecated(view, section_ptr, section, m, sub)
    for section_ptr, old, new, since, why in RENAMES:
        if not view.since(f">={since}"):
            continue
        node = view.node(section_ptr)
        if node is None or node.kind != OBJECT:
            continue
        m = node.member(old)
        if m is None:
            continue
        if node.member(new) is not None:
            yield view.finding(m.pointer, f"{why}; {new} is set too", help=f"delete {old}")
            continue
        yield view.finding(m.pointer, why, fixes=edits.fixes(
            edits.make_fix(f"rename {old} to {new}", edits.rename_key(doc, m, new))))


def _deprecated(view, section_ptr: str, section: dict[str, Any], m, sub: dict[str, Any]):
    doc = view.doc
    where = view.path(m.pointer)
    new = sub.get("x-zerolint-replaced-by")
    desc = sub.get("description", "")
    if not sub.get("x-zerolint-sets-new-param", True):
        yield view.finding(m.pointer, f"{where} is deprecated and DeepSpeed ignores its value", fixes=edits.fixes(
            edits.make_fix(f"delete {where} (DeepSpeed ignores it)", edits.remove_member(doc, m))))
        return
    if not new or " " in new:
        yield view.finding(m.pointer,
                           f"{where} is deprecated: {desc.rstrip('.')}" if desc else f"{where} is deprecated",
                           help="no mechanical replacement; edit it by hand")
        return
    head = new.split(".")[0]
    names = view.schema.spellings(section, head)
    target = names[0] + new[len(head):]
    present = next((n for n in names if view.node(jp.join(section_ptr, n)) is not None), None)
    if m.key == "bfloat16":
        bf16 = view.node(jp.join(section_ptr, "bf16"))
        if bf16 is not None and bf16.kind != NULL:
            yield view.finding(m.pointer, "bfloat16 is the legacy spelling of bf16, and DeepSpeed ignores it while "
                                          "bf16 is set", fixes=edits.fixes(
                edits.make_fix("delete bfloat16 (ignored next to bf16)", edits.remove_member(doc, m))))
            return
        if bf16 is not None:
            yield view.finding(m.pointer, "bfloat16 is the legacy spelling of bf16 (bf16 is null here)",
                               help="delete \"bf16\": null and rename bfloat16 to bf16")
            return
    if present is not None:
        yield view.finding(m.pointer, f"{where} is deprecated and {view.path(jp.join(section_ptr, present))} is set "
                                      "too: DeepSpeed refuses the config at parse",
                           help=f"keep {present} and delete {m.key}")
        return
    if m.key in VALUE_REWRITES:
        truth = _truth(m.value)
        if truth is None:
            yield view.finding(m.pointer, f"{where} is deprecated; use {target}", at="key")
            return
        if not truth:
            yield view.finding(m.pointer, f"{where} is deprecated (false is the default)", fixes=edits.fixes(
                edits.make_fix(f"delete {where}", edits.remove_member(doc, m))))
            return
        block = json.dumps(VALUE_REWRITES[m.key])
        rename = edits.rename_key(doc, m, target)
        fix = None if rename is None else edits.make_fix(
            f"replace {m.key}: true with {target}: {block}",
            rename + (Edit(m.value.start, m.value.end, block),))
        yield view.finding(m.pointer, f"{where} is deprecated; use {target}: {block}", fixes=edits.fixes(fix))
        return
    yield view.finding(m.pointer, f"{where} is deprecated; DeepSpeed reads it as {target}", fixes=edits.fixes(
        edits.make_fix(f"rename {m.key} to {target}", edits.rename_key(doc, m, target))))


def upgrade_text(text: str, path: str = "<string>", to: str | None = None, remove_removed: bool = False,
                 target: str = "auto") -> FixResult:
    """Upgrade a config's text for DeepSpeed `to` (default: the installed version, else the newest known).
    `applied` lists the rewrites; `remaining` the findings left for a person (removed blocks, conflicts)."""
    result = fix_text(text, path, Settings(target=target, deepspeed_version=to),
                      rules=RuleSet.of([make_rule(remove_removed)]))
    for d in result.remaining:
        d.url = None  # ZL700 is upgrade's own finding, not a rule with a docs page
    return result
