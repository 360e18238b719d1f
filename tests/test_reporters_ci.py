"""CI output formats: SARIF (validated against the official schema), GitHub workflow commands (snapshot), JUnit
(parsed back), and how the CLI routes several formats to stdout and files."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

from click.testing import CliRunner
from conftest import CORPUS, SARIF_SCHEMA, SEED, missing, require

from zerolint.cli import main
from zerolint.model.diagnostics import Diagnostic, Edit, Fix, Related, Severity
from zerolint.model.document import parse
from zerolint.pipeline import lint_path
from zerolint.report import github, junit, sarif
from zerolint.report.output import make_summary
from zerolint.rules.cases import load_cases
from zerolint.rules.ruleset import RuleSet


def _sarif_validator():
    if not SARIF_SCHEMA.is_file():
        missing(f"the official SARIF schema is not at {SARIF_SCHEMA}")
    jsonschema = require("jsonschema")

    schema = json.loads(SARIF_SCHEMA.read_text("utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _lint_all(paths):
    results = [lint_path(str(p)) for p in paths]
    diagnostics = [d for r in results for d in r.diagnostics]
    documents = {r.path: r.document for r in results if r.document is not None}
    return diagnostics, documents, make_summary(diagnostics, len(results))


def test_sarif_of_the_whole_corpus_validates_against_the_official_schema(tmp_path):
    validator = _sarif_validator()
    if not CORPUS.is_dir():
        missing(f"the real-world corpus is not at {CORPUS}")
    paths = sorted(CORPUS.glob("*.json")) + sorted(SEED.glob("*.json"))
    # Every rule's bad cases too, so results with fixes and related locations are in the run.
    for rule in RuleSet.builtin().rules:
        for i, case in enumerate(c for c in load_cases(rule.code) if c.kind == "bad"):
            p = tmp_path / f"{rule.code}-{i}.json"
            p.write_text(case.config, encoding="utf-8")
            paths.append(p)
    diagnostics, documents, summary = _lint_all(paths)
    assert len(paths) > 77 and diagnostics
    log = json.loads(sarif.render(diagnostics, documents, summary))
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])

    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert len(run["results"]) == len(diagnostics)
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert len(rule_ids) == len(set(rule_ids)) == len({d.code for d in diagnostics})
    for r in run["results"]:
        assert rule_ids[r["ruleIndex"]] == r["ruleId"]
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert "\\" not in uri
    assert any("fixes" in r for r in run["results"]), "no result with a fix: the fix path went unvalidated"
    assert any("relatedLocations" in r for r in run["results"])


def _diag(**kw) -> Diagnostic:
    base = dict(file="ds/zero3.json", code="ZL101", name="misplaced-key", severity=Severity.ERROR,
                message="offload_optimizer belongs inside zero_optimization", pointer="/offload_optimizer",
                line=7, column=5, end_line=7, end_column=24, help="move it", url="https://example.org/ZL101.md")
    base.update(kw)
    return Diagnostic(**base)


def test_sarif_regions_fixes_and_metadata():
    text = '{\n  "a": 1,\n  "b": 2,\n}\n'
    doc = parse(text, "x.json")
    fix = Fix("delete the comma", (Edit(text.index(",\n}"), text.index(",\n}") + 1, ""),), safe=True)
    d = _diag(file="x.json", code="ZL002", name="json-incompatible-syntax", severity=Severity.WARNING,
              pointer="/b", line=3, column=9, end_line=3, end_column=10, fixes=[fix],
              related=[Related("first", 2, 3, 2, 6, "/a")])
    log = json.loads(sarif.render([d], {"x.json": doc}, make_summary([d], 1)))
    (result,) = log["runs"][0]["results"]
    assert result["level"] == "warning"
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3, "startColumn": 9, "endLine": 3, "endColumn": 10}
    assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "/b"
    (rep,) = result["fixes"][0]["artifactChanges"][0]["replacements"]
    assert rep == {"deletedRegion": {"startLine": 3, "startColumn": 9, "endLine": 3, "endColumn": 10},
                   "insertedContent": {"text": ""}}
    assert result["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 2
    (rule,) = log["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "ZL002" and rule["name"] == "json-incompatible-syntax"
    assert rule["defaultConfiguration"]["level"] == "warning"
    assert rule["helpUri"].endswith("ZL002.md") and rule["fullDescription"]["text"]
    # identity survives a line move: the fingerprint hashes file, code and pointer only
    moved = json.loads(sarif.render([_diag(file="x.json", code="ZL002", pointer="/b", line=30)], {}, {}))
    assert moved["runs"][0]["results"][0]["partialFingerprints"] == result["partialFingerprints"]


# -- GitHub workflow commands ---------------------------------------------------------------------------------------

GITHUB_SNAPSHOT = """\
::error file=ds/zero3.json,line=7,col=5,endLine=7,endColumn=24,title=ZL101 misplaced-key::offload_optimizer belongs inside zero_optimization%0Ahelp: move it
::warning file=ds/a%2Cb%3Ac.json,line=2,col=3,endLine=2,endColumn=12,title=ZL103 unknown-key::unknown key "x\\x1b[31mred%25%0A::error::injected"
::notice file=ds/zero3.json,line=1,col=1,endLine=1,endColumn=2,title=ZL090 unused-suppression::100%25 done\\x0d%0Anext line%0Ahelp: a, b: c
"""


def test_github_annotations_snapshot():
    diagnostics = [
        _diag(),
        _diag(file="ds/a,b:c.json", code="ZL103", name="unknown-key", severity=Severity.WARNING,
              message='unknown key "x\x1b[31mred%\n::error::injected"', line=2, column=3, end_line=2, end_column=12,
              help=None),
        _diag(code="ZL090", name="unused-suppression", severity=Severity.INFO, message="100% done\r\nnext line",
              line=1, column=1, end_line=1, end_column=2, help="a, b: c"),
    ]
    out = github.render(diagnostics, {}, make_summary(diagnostics, 2))
    assert out == GITHUB_SNAPSHOT
    for line in out.splitlines():  # each finding is exactly one command line
        assert line.startswith(("::error ", "::warning ", "::notice "))


def test_github_format_on_the_seed_config():
    result = CliRunner().invoke(main, ["check", "--format", "github", str(SEED / "ds_offload_broken.json")])
    lines = result.output.splitlines()
    rel = os.path.relpath(SEED / "ds_offload_broken.json").replace(os.sep, "/")
    assert f"::warning file={rel},line=8,col=5,endLine=8,endColumn=5,title=ZL002 json-incompatible-syntax::" \
           "a missing comma" in result.output
    assert all(line.startswith("::") for line in lines)


def test_github_is_the_default_inside_actions_and_writes_the_step_summary(tmp_path):
    summary_file = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary_file)}
    result = CliRunner(env=env).invoke(main, ["check", str(SEED / "ds_offload_broken.json")])
    assert result.output.startswith("::")
    md = summary_file.read_text("utf-8")
    assert md.startswith("## zerolint") and "| ZL002" not in md and "ZL002" in md
    assert "| :warning: warning |" in md
    # with --output the default stays text (to the file), and stdout gets no annotations
    out = tmp_path / "report.txt"
    result = CliRunner(env=env).invoke(main, ["check", "-o", str(out), str(SEED / "ds_offload_broken.json")])
    assert result.output == "" and "ZL002" in out.read_text("utf-8")


def test_step_summary_escapes_markdown_and_html():
    d = _diag(message="a | b <script>x</script>\nnext")
    md = github.step_summary([d], make_summary([d], 1))
    assert "a \\| b &lt;script&gt;x&lt;/script&gt;<br>next" in md


# -- JUnit ------------------------------------------------------------------------------------------------------------

def test_junit_parses_back_and_escapes():
    clean_doc = parse("{}", "clean.json")
    diagnostics = [
        _diag(),
        _diag(code="ZL101", message="second & <last> \x00 \x1b[0m \"q\"", line=9),
        _diag(code="ZL301", name="fp16-and-bf16", message="both on", line=3),
    ]
    xml = junit.render(diagnostics, {"clean.json": clean_doc}, make_summary(diagnostics, 2))
    root = ET.fromstring(xml.encode("utf-8"))
    assert root.tag == "testsuites" and root.get("tests") == "3" and root.get("failures") == "2"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"ds/zero3.json", "clean.json"}
    clean = suites["clean.json"]
    assert clean.get("failures") == "0" and [c.get("name") for c in clean.iter("testcase")] == ["zerolint"]
    cases = {c.get("name"): c for c in suites["ds/zero3.json"].iter("testcase")}
    assert set(cases) == {"ZL101 misplaced-key", "ZL301 fp16-and-bf16"}
    failure = cases["ZL101 misplaced-key"].find("failure")
    assert failure.get("type") == "error" and failure.get("message").endswith("(and 1 more)")
    assert "ds/zero3.json:9:5: error ZL101" in failure.text and "second & <last> \\x00 \\x1b[0m \"q\"" in failure.text


# -- several formats in one run -------------------------------------------------------------------------------------

def test_text_to_stdout_and_sarif_to_a_file(tmp_path):
    out = tmp_path / "zerolint.sarif"
    result = CliRunner().invoke(main, ["check", "--format", "text", "--format", "sarif", "--output", str(out),
                                       str(SEED / "ds_offload_broken.json")])
    assert "ZL002" in result.output and not result.output.lstrip().startswith("{")
    assert json.loads(out.read_text("utf-8"))["version"] == "2.1.0"


def test_outputs_pair_with_the_last_formats(tmp_path):
    sarif_out, junit_out = tmp_path / "a.sarif", tmp_path / "b.xml"
    result = CliRunner().invoke(main, ["check", "--format", "github", "--format", "sarif", "--format", "junit",
                                       "-o", str(sarif_out), "-o", str(junit_out),
                                       str(SEED / "ds_offload_broken.json")])
    assert result.output.startswith("::")
    assert json.loads(sarif_out.read_text("utf-8"))["runs"]
    assert ET.fromstring(junit_out.read_text("utf-8")).tag == "testsuites"
    result = CliRunner().invoke(main, ["check", "-o", str(sarif_out), "-o", str(junit_out),
                                       str(SEED / "ds_zero1.json")])
    assert result.exit_code == 2 and "--format for each" in result.output
