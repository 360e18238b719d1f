"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run; `tool.driver.rules` holds the metadata of every rule that reported something (id = code, name, short
and full description, help URI, default level); each result points at its rule by id and index, carries the
region (1-based lines, columns in Unicode code points, end exclusive, as zerolint's own columns), the JSON
pointer as a logical location, related locations, and the fixes as replacements. `partialFingerprints` hash the
file, code and pointer, not the line, so a result keeps its identity when lines move.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..base.escape import json_safe, safe
from ..base.paths import artifact_uri, display_path
from ..model.diagnostics import Diagnostic, Fix
from ..model.document import Document

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/zerolint/zerolint"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _artifact(path: str) -> dict[str, Any]:
    uri, relative = artifact_uri(path)
    loc: dict[str, Any] = {"uri": uri}
    if relative:
        loc["uriBaseId"] = "%SRCROOT%"
    return loc


def _region(line: int, column: int, end_line: int, end_column: int) -> dict[str, Any]:
    line, column = max(1, line), max(1, column)
    end_line = max(line, end_line)
    end_column = max(1, end_column)
    if end_line == line:
        end_column = max(column, end_column)
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _descriptor(code: str, first: Diagnostic) -> dict[str, Any]:
    rule = first.rule  # the rule that made it (policy rules included); codes made outside the engine: looked up
    if rule is None:
        from ..rules.ruleset import RuleSet

        rule = RuleSet.builtin().find(code)
    name = getattr(rule, "name", None) or first.name
    summary = getattr(rule, "summary", None) or first.name
    rationale = getattr(rule, "rationale", None) or summary
    url = getattr(rule, "url", None) or first.url
    level = LEVEL[getattr(rule, "severity", None) or first.severity.value]
    out: dict[str, Any] = {
        "id": code,
        "name": name,
        "shortDescription": {"text": safe(summary)},
        "fullDescription": {"text": safe(rationale)},
        "defaultConfiguration": {"level": level},
    }
    if url:
        out["helpUri"] = url
        out["help"] = {"text": f"{safe(summary)}. See {url}", "markdown": f"{safe(rationale)}\n\n[{code} docs]({url})"}
    return out


def _fingerprint(d: Diagnostic) -> str:
    key = "\0".join((display_path(d.file), d.code, d.pointer))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _fix(fix: Fix, d: Diagnostic, doc: Document) -> dict[str, Any]:
    replacements = []
    for edit in fix.edits:
        (sl, sc), (el, ec) = doc.position(edit.start), doc.position(max(edit.end, edit.start))
        replacements.append({"deletedRegion": _region(sl, sc, el, ec), "insertedContent": {"text": edit.text}})
    description = fix.description if fix.safe else f"{fix.description} (unsafe: changes behaviour)"
    return {
        "description": {"text": safe(description)},
        "artifactChanges": [{"artifactLocation": _artifact(d.file), "replacements": replacements}],
    }


def _result(d: Diagnostic, rule_index: int, doc: Document | None) -> dict[str, Any]:
    text = safe(d.message) + (f"\nhelp: {safe(d.help)}" if d.help else "")
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": _artifact(d.file),
            "region": _region(d.line, d.column, d.end_line, d.end_column),
        },
        "logicalLocations": [{"fullyQualifiedName": safe(d.pointer), "kind": "property" if d.pointer else "object"}],
    }
    result: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": LEVEL[d.severity.value],
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {"zerolintPointer/v1": _fingerprint(d)},
    }
    if d.related:
        result["relatedLocations"] = [
            {
                "id": i,
                "physicalLocation": {
                    "artifactLocation": _artifact(d.file),
                    "region": _region(r.line, r.column, r.end_line, r.end_column),
                },
                "message": {"text": safe(r.message)},
            }
            for i, r in enumerate(d.related, 1)
        ]
    if d.fixes and doc is not None:
        result["fixes"] = [_fix(f, d, doc) for f in d.fixes if f.edits]
        if not result["fixes"]:
            del result["fixes"]
    return result


def build(diagnostics: Sequence[Diagnostic], documents: Mapping[str, Document], summary: dict) -> dict[str, Any]:
    from ..base.version import __version__

    index: dict[str, int] = {}
    rules: list[dict[str, Any]] = []
    for d in diagnostics:
        if d.code not in index:
            index[d.code] = len(rules)
            rules.append(_descriptor(d.code, d))
    results = [_result(d, index[d.code], documents.get(d.file)) for d in diagnostics]
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if summary.get("notes"):  # what the repository's settings files turned off (excluded files, ignored rules)
        invocation["toolConfigurationNotifications"] = [{"level": "warning", "message": {"text": safe(n)}}
                                                        for n in summary["notes"]]
    if summary.get("limit_note"):  # the findings cap (reporters/cap.py): results[] is not every finding
        invocation["toolExecutionNotifications"] = [{"level": "warning", "message": {"text": summary["limit_note"]},
                                                     "descriptor": {"id": "findings-limit"}}]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "zerolint", "version": __version__, "semanticVersion": __version__,
                                "informationUri": INFORMATION_URI, "rules": rules}},
            "invocations": [invocation],
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": {"summary": summary},
        }],
    }


def render(diagnostics: Sequence[Diagnostic], documents: Mapping[str, Document], summary: dict) -> str:
    return json_safe(json.dumps(build(diagnostics, documents, summary), indent=2, ensure_ascii=False)) + "\n"
