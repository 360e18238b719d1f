"""Denial of service under the size limits (issue 12 item 9): every path linear, findings capped per file and per
report with a note in every format. Work is counted (calls, traced memory), never timed: the machine is shared."""

from __future__ import annotations

import json
import random
import tracemalloc
import xml.etree.ElementTree as ET

import pytest
from conftest import SARIF_SCHEMA, missing, require, run_cli

from zerolint.base import suggest
from zerolint.model.document import parse
from zerolint.pipeline import lint_bytes

NOTE = ("{hidden} of {total} findings not shown (at most {per_file} per file, --max-findings-per-file; at most "
        "{per_report} per report, --max-findings; errors first); the counts and the exit code include them")


def _misspelled(n: int) -> bytes:
    return ("{\n" + ",\n".join(f'  "zero_optimisation_{i}": {{}}' for i in range(n)) + "\n}\n").encode()


# -- the attacks ------------------------------------------------------------------------------------------------

def test_long_string_costs_memory_proportional_to_its_length():
    """A 16 MiB string took 2 GB: the string regex kept a backtracking entry per character (~120 bytes each)."""
    n = 1_000_000
    for body in ("a" * n, "ab\\n" * (n // 4)):  # plain, and escapes all along
        text = '{"train_batch_size": 8, "x": "' + body + '"}'
        tracemalloc.start()
        try:
            doc = parse(text)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert doc.json_error is None and len(doc.root.get("x").value) == len(json.loads(text)["x"])
        assert peak < 6 * n, peak  # a few copies of the text; before: > 100 bytes per character


def test_unknown_keys_that_resemble_nothing_cost_no_distance():
    """10^6 keys took > 180 s: every key ran the did-you-mean loop over every known key. A key sharing too few
    characters with every known key is now rejected in one integer operation."""
    calls = []
    real = suggest.distance
    suggest.distance = lambda *a, **k: calls.append(a) or real(*a, **k)
    try:
        n = 3_000
        r = lint_bytes(("{" + ",".join(f'"k{i}": {i}' for i in range(n)) + ', "train_batch_size": 8}').encode(),
                       "ds.json")
    finally:
        suggest.distance = real
    unknown = [d for d in r.diagnostics if d.code == "ZL103"]
    assert len(unknown) == 1_000 and unknown[0].message == "unknown key 'k0' at the top level: DeepSpeed ignores it"
    assert calls == []
    [stop] = [d for d in r.diagnostics if d.code == "ZL007"]  # the rule stopped looking after 1,000 (engine.py)
    assert stop.message == ("ZL103 reported 1,000 findings in this file and stopped looking for more here; the file "
                            "was not checked past this point for it")


def test_misspelled_keys_cost_a_bounded_number_of_distances_each():
    """100,000 misspelled keys took 73 s: three full O(len^2) distance tables per key. Now at most one distance in
    the suggestion and one for the severity, each bit-parallel (one pass over the word)."""
    def distances(n):
        calls = []
        real = suggest._osa
        suggest._osa = lambda a, b: calls.append(1) or real(a, b)
        try:
            r = lint_bytes(_misspelled(n), "ds.json")
        finally:
            suggest._osa = real
        assert [d.code for d in r.diagnostics].count("ZL103") == min(n, 1_000)
        return len(calls)

    assert distances(150) <= 2 * 150
    assert distances(600) <= 4 * distances(150)  # (at most 200 guesses a file: View.closest)


def test_bit_parallel_distance_equals_the_table():
    def table(a: str, b: str) -> int:  # the optimal-string-alignment table, cell by cell
        prev2: list[int] = []
        prev = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            cur = [i] + [0] * len(b)
            for j, cb in enumerate(b, 1):
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
                if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                    cur[j] = min(cur[j], prev2[j - 2] + 1)
            prev2, prev = prev, cur
        return prev[-1]

    rnd = random.Random(12)
    for _ in range(5_000):
        a = "".join(rnd.choice("ab_c") for _ in range(rnd.randint(0, 9)))
        b = "".join(rnd.choice("ab_c") for _ in range(rnd.randint(0, 9)))
        want = table(a, b)
        assert suggest.distance(a, b) == want, (a, b)
        assert suggest.distance(a, b, bound=2) == min(want, 3), (a, b)
    assert suggest.distance("zero_optimisation", "zero_optimization") == 1
    assert suggest.distance("offload_optimzier", "offload_optimizer") == 1  # a transposition counts once
    assert suggest.closest("zero_optimisation", ["zero_optimization", "optimizer"]) == "zero_optimization"


# -- the caps, in every format --------------------------------------------------------------------------------

def _fixture(tmp_path):
    """Two errors (ZL301, ZL401) after four unknown keys and an info: a cap of 2 per file must keep the errors."""
    (tmp_path / "ds.json").write_text('{\n "aa1": 1, "bb2": 2, "cc3": 3, "dd4": 4,\n'
                                      ' "fp16": {"enabled": true}, "bf16": {"enabled": true}\n}\n')
    return tmp_path


def _check(tmp_path, fmt, *extra):
    r = run_cli("check", "--format", fmt, "--max-findings-per-file", "2", *extra, "ds.json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    return r.stdout.decode()


def test_cap_json(tmp_path):
    out = json.loads(_check(_fixture(tmp_path), "json"))
    assert [(d["code"], d["line"], d["column"]) for d in out["diagnostics"]] == [("ZL401", 1, 1), ("ZL301", 3, 38)]
    assert out["summary"] == {
        "files": 1, "counts": {"error": 2, "warning": 4, "info": 1}, "fixable": 0, "unsafe_fixable": 1,
        "not_shown": 5, "not_shown_by_file": {"ds.json": {"error": 0, "warning": 4, "info": 1}},
        "limits": {"max_findings_per_file": 2, "max_findings": 10_000},
        "limit_note": NOTE.format(hidden=5, total=7, per_file=2, per_report="10,000")}


def test_cap_text(tmp_path):
    lines = _check(_fixture(tmp_path), "text", "--show-info").splitlines()
    assert [ln for ln in lines if ": error ZL" in ln or ": warning ZL" in ln or ": info ZL" in ln] == [
        "ds.json:1:1: error ZL401 [missing-batch-size] neither train_batch_size nor train_micro_batch_size_per_gpu "
        'is set: DeepSpeed fails at parse ("Either train_batch_size or train_micro_batch_size_per_gpu needs to be '
        'provided")',
        'ds.json:3:38: error ZL301 [fp16-and-bf16] fp16 and bf16 are both enabled; DeepSpeed fails at parse with '
        '"bfloat16 and fp16 modes cannot be simultaneously enabled"']
    assert lines[-2:] == [
        "Found 2 errors, 4 warnings, 1 info in 1 file. 1 more with --unsafe-fixes. 5 not shown (findings limit).",
        "note: " + NOTE.format(hidden=5, total=7, per_file=2, per_report="10,000")]
    # by default the info finding is hidden first (README, "Info findings"), and the cap applies to the rest
    assert _check(tmp_path, "text").splitlines()[-2:] == [
        "Found 2 errors, 4 warnings, 1 info in 1 file. 1 more with --unsafe-fixes. 4 not shown (findings limit). "
        "1 info hidden (--show-info).",
        "note: " + NOTE.format(hidden=4, total=6, per_file=2, per_report="10,000")]


def test_cap_github(tmp_path):
    lines = _check(_fixture(tmp_path), "github", "--show-info").splitlines()
    assert [ln.split(" ", 1)[0] + " " + ln.split("title=", 1)[1].split("::")[0] for ln in lines] == [
        "::error ZL401 missing-batch-size", "::error ZL301 fp16-and-bf16", "::notice zerolint findings limit"]
    assert lines[-1] == "::notice title=zerolint findings limit::" + NOTE.format(hidden=5, total=7, per_file=2,
                                                                                  per_report="10,000")


def test_cap_sarif(tmp_path):
    out = json.loads(_check(_fixture(tmp_path), "sarif"))
    run = out["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["ZL401", "ZL301"]
    assert run["invocations"][0]["toolExecutionNotifications"] == [{
        "level": "warning", "descriptor": {"id": "findings-limit"},
        "message": {"text": NOTE.format(hidden=5, total=7, per_file=2, per_report="10,000")}}]
    assert run["properties"]["summary"]["not_shown"] == 5
    if not SARIF_SCHEMA.is_file():
        missing(f"the official SARIF schema is not at {SARIF_SCHEMA}")
    jsonschema = require("jsonschema")
    schema = json.loads(SARIF_SCHEMA.read_text("utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(out)


def test_cap_junit_keeps_a_fully_hidden_file_failing(tmp_path):
    """--max-findings 2 over two files: the second file's findings are all left out, and its suite still fails."""
    _fixture(tmp_path)
    (tmp_path / "b.json").write_text('{"train_batch_size": 8, "zz9": 1}\n')
    root = ET.fromstring(_check(tmp_path, "junit", "--show-info", "--max-findings-per-file", "0", "--max-findings", "2",
                                "b.json"))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert [c.get("name") for c in suites["ds.json"].iter("testcase")] == [
        "ZL401 missing-batch-size", "ZL301 fp16-and-bf16", "zerolint findings-limit"]
    hidden = suites["b.json"].find("testcase")
    assert (hidden.get("name"), hidden.find("failure").get("type"), hidden.find("failure").get("message")) == (
        "zerolint findings-limit", "warning", "2 findings of this file not shown (findings limit)")
    assert (root.get("tests"), root.get("failures")) == ("4", "4")


def test_cap_never_turns_a_failing_check_green(tmp_path):
    """900 misspelled keys in one file (10 errors, then warnings), and no batch size (an error): a cap of 500 shows
    500, every error among them, counts all 902, and exits 1; --max-findings-per-file 0 lifts the cap."""
    (tmp_path / "ds.json").write_bytes(_misspelled(900))
    r = run_cli("check", "--format", "sarif", "--max-findings-per-file", "500", "ds.json", cwd=tmp_path)
    assert r.returncode == 1
    run = json.loads(r.stdout)["runs"][0]
    summary = run["properties"]["summary"]
    assert len(run["results"]) == 500 and summary["counts"] == {"error": 11, "warning": 890, "info": 1}
    assert [r["level"] for r in run["results"]].count("error") == 11
    assert summary["not_shown"] == 402 and summary["not_shown_by_file"] == {
        "ds.json": {"error": 0, "warning": 401, "info": 1}}
    r = run_cli("check", "--format", "json", "--max-findings-per-file", "0", "ds.json", cwd=tmp_path)
    out = json.loads(r.stdout)
    assert r.returncode == 1 and len(out["diagnostics"]) == 902 and "not_shown" not in out["summary"]


def test_no_cap_note_under_the_limits(tmp_path):
    _fixture(tmp_path)
    out = json.loads(run_cli("check", "--format", "json", "ds.json", cwd=tmp_path).stdout)
    assert len(out["diagnostics"]) == 7 and set(out["summary"]) == {"files", "counts", "fixable", "unsafe_fixable"}


# -- issue 22, item 3: inputs under the size limits that cost far more than their size ------------------------

def test_a_million_values_stop_at_the_value_limit_with_a_located_message():
    """A 2 MB array of 1M zeros took 47.7 s and 356 MB (json.load: 0.5 s): the parse now stops at --max-values
    (10,000) with ZL007 at the value that crossed it."""
    text = '{"train_batch_size": 8, "x": [' + ",".join(["0"] * 1_000_000) + "]}"
    r = lint_bytes(text.encode(), "ds.json")
    [d] = [d for d in r.diagnostics if d.code == "ZL007"]
    assert (d.line, d.column) == (1, 31 + 2 * 9_998)  # the 10,001st value: two keys and 9,998 items before it
    assert d.message == ("the file holds more than 10,000 values (keys and items); the file was not checked past "
                         "this point")
    assert d.help == "if this really is a DeepSpeed config, raise the limit with --max-values"


@pytest.mark.parametrize("make,code", [
    (lambda: "{" + ", ".join(['"train_batch_size": 8'] * 700_000) + "}", "ZL003"),  # 700k duplicate keys
    (lambda: '{"train_batch_size": 8, ' + ", ".join(f'"zero_optimisation_{i}": {{}}' for i in range(300_000))
     + "}", "ZL103"),  # 300k near-miss section names
])
def test_a_rule_stops_after_a_thousand_findings_in_one_file(make, code):
    r = lint_bytes(make().encode(), "ds.json")
    assert [d.code for d in r.diagnostics].count(code) == 1_000
    assert any(d.code == "ZL007" and d.message.startswith(f"{code} reported 1,000 findings") for d in r.diagnostics)


def test_a_flat_yaml_stops_at_its_event_limit():
    """A flat 10 MB Accelerate YAML ran past 120 s: PyYAML builds each value in Python."""
    from zerolint.integrations.hf import read_accelerate_yaml

    data = ("distributed_type: DEEPSPEED\n" + "".join(f"k{i}: v{i}\n" for i in range(600_000))).encode()
    cfg, problem, span = read_accelerate_yaml("acc.yaml", data)
    assert cfg is None and problem.startswith("the YAML holds more than 5,000 values: an Accelerate config is a few "
                                              "dozen settings")
    assert span[0] < 40_000  # where the parse stopped, near the top


def test_the_language_server_refuses_an_oversized_document_before_parsing(monkeypatch):
    from zerolint.lsp import lint as lsp_lint

    def no_parse(*a, **k):
        raise AssertionError("parsed")

    monkeypatch.setattr(lsp_lint, "parse", no_parse)
    out = lsp_lint.DocumentLinter(isolated=True).lint("big.json", '{"x": "' + "a" * (17 * 1024 * 1024) + '"}')
    assert out.problem == "the document is larger than the 16,777,216-byte limit; it is not checked"


def test_completion_in_a_document_nested_200k_deep_is_bounded():
    """Issue 22, item 3: completion there took 3 s and 1.1 GB (every bracket's frame held its whole pointer). Past
    the parse's depth limit there is no completion, and the scan stops there."""
    from zerolint.lsp.cursor import context_at

    text = '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}"
    tracemalloc.start()
    try:
        ctx = context_at(text, 150_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ctx.kind == "none" and peak < 5_000_000, peak
