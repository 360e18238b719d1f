"""`--format junit`: JUnit XML for CI test dashboards (GitLab, Jenkins, Azure Pipelines, ...).

One `<testsuite>` per checked file; in it one `<testcase>` per rule that reported something in that file, with one
`<failure>` (type = severity, message = the first finding) whose text lists every finding of that rule at
`file:line:col`. One failure per test case keeps the report valid for the strictest JUnit schema (Jenkins
accepts only one). A file without findings has one passing test case, `zerolint`. Text from configs goes through
`safe()`, so the XML holds no control characters XML 1.0 forbids.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Mapping, Sequence

from ..base.escape import safe
from ..base.paths import display_path
from ..model.diagnostics import Diagnostic
from ..model.document import Document


def _line(d: Diagnostic) -> str:
    text = f"{display_path(d.file)}:{d.line}:{d.column}: {d.severity.value} {d.code} [{d.name}] {d.message}"
    if d.help:
        text += f"\n    help: {d.help}"
    return safe(text)


def render(diagnostics: Sequence[Diagnostic], documents: Mapping[str, Document], summary: dict) -> str:
    by_file: dict[str, dict[str, list[Diagnostic]]] = {f: {} for f in documents}
    for d in diagnostics:
        by_file.setdefault(d.file, {}).setdefault(d.code, []).append(d)
    for path in summary.get("not_shown_by_file", {}):  # a file whose findings the cap left out entirely
        by_file.setdefault(path, {})

    root = ET.Element("testsuites", name="zerolint")
    total_tests = total_failures = 0
    for path, by_code in by_file.items():
        shown = safe(display_path(path))
        suite = ET.SubElement(root, "testsuite", name=shown, errors="0", skipped="0")
        hidden = summary.get("not_shown_by_file", {}).get(path)
        if not by_code and not hidden:
            ET.SubElement(suite, "testcase", name="zerolint", classname=shown, file=shown)
        for code, found in by_code.items():
            first = found[0]
            case = ET.SubElement(suite, "testcase", name=f"{code} {first.name}", classname=shown, file=shown,
                                 line=str(first.line))
            message = safe(first.message) + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
            failure = ET.SubElement(case, "failure", type=first.severity.value, message=message)
            failure.text = "\n".join(_line(d) for d in found)
        failures = len(by_code)
        if hidden:  # the findings cap left some out: a failing case of its own, so the file never looks clean
            worst = next(s for s in ("error", "warning", "info") if hidden[s])
            case = ET.SubElement(suite, "testcase", name="zerolint findings-limit", classname=shown, file=shown)
            failure = ET.SubElement(case, "failure", type=worst, message=f"{sum(hidden.values()):,} findings of "
                                    "this file not shown (findings limit)")
            failure.text = safe(summary["limit_note"])
            failures += 1
        tests = max(1, failures)
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        total_tests += tests
        total_failures += failures
    skipped = summary.get("skipped_files", ())
    if skipped:  # the gate: each candidate it did not lint, a skipped (or, --fail-on-skipped, failing) case
        suite = ET.SubElement(root, "testsuite", name="zerolint skipped files", errors="0")
        failing = bool(summary.get("fail_on_skipped"))
        for s in skipped:
            shown = safe(display_path(s["file"]))
            case = ET.SubElement(suite, "testcase", name="zerolint content", classname=shown, file=shown)
            ET.SubElement(case, "failure" if failing else "skipped", message=safe("not linted: " + s["why"]))
        suite.set("tests", str(len(skipped)))
        suite.set("failures", str(len(skipped) if failing else 0))
        suite.set("skipped", "0" if failing else str(len(skipped)))
        total_tests += len(skipped)
        total_failures += len(skipped) if failing else 0
    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
