"""verify's verdict says what its exit code says: a run that passed but whose intent checks failed is not reported
as PASS, neither in the text headline nor in the JSON `verdict` (the exit code is 1; issue 14 §4)."""

from __future__ import annotations

import json

from zerolint.model.diagnostics import Finding
from zerolint.model.document import parse
from zerolint.model.view import Settings, View
from zerolint.rules import engine_rules as codes
from zerolint.rules.engine import locate
from zerolint.verify.intent import IntentCheck
from zerolint.verify.report import RunReport, render_json, run_lines, verdict

TEXT = '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}'


def _report(*intent: IntentCheck, reported: bool = True) -> RunReport:
    """A passing run with these intent checks; `reported`: the failed ones are findings (as analyse makes them),
    else a suppression or --ignore hid them."""
    doc = parse(TEXT, "ds.json")
    rep = RunReport(path="ds.json", label="original", doc=doc, view=View(doc, Settings(target="deepspeed")),
                    plan=None, record={"status": "pass"}, intent=list(intent))
    if reported:
        rep.verify = [locate(doc, codes.BY_CHECK[c.check], Finding(c.pointer, c.message), codes.BY_CHECK[c.check]
                             .default_severity) for c in intent if not c.ok]
    return rep


def _result(rep: RunReport) -> tuple[str, str]:
    return next((style, text) for style, text in run_lines(rep) if text.lstrip().startswith("result:"))


OFFLOAD_FAILED = IntentCheck("optimizer-offload", "ZL994", "/zero_optimization/offload_optimizer/device", "cpu",
                             "cuda:0", False, "optimizer states stayed on cuda:0")
STAGE_OK = IntentCheck("zero-stage", "ZL996", "/zero_optimization/stage", "2", "stage 2", True, "stage 2 in force")


def test_a_pass_with_a_failed_intent_check_is_reported_as_a_failure():
    assert _result(_report(STAGE_OK, OFFLOAD_FAILED)) == ("bold red",
                                                          "  result:    FAIL: ran, but 1 intent check failed")
    assert _result(_report(OFFLOAD_FAILED, OFFLOAD_FAILED))[1] == "  result:    FAIL: ran, but 2 intent checks failed"


def test_a_pass_with_every_intent_check_met_is_a_pass():
    assert _result(_report(STAGE_OK)) == ("bold green", "  result:    PASS")
    assert verdict(_report(STAGE_OK)) == "pass"


def test_json_verdict_of_a_failed_intent_check_is_fail():
    payload = json.loads(render_json([_report(STAGE_OK, OFFLOAD_FAILED)], None, {}))
    assert (payload["verify"]["verdict"], payload["verify"]["runs"][0]["status"]) == ("fail", "pass")
    assert [(d["code"], d["severity"], d["line"], d["column"]) for d in payload["diagnostics"]] == [
        ("ZL994", "error", 1, 58)]


def test_an_intent_finding_hidden_by_the_settings_leaves_a_pass():
    # --ignore ZL994 (or a suppression) removes the finding, so the exit code is 0: the verdict agrees.
    rep = _report(STAGE_OK, OFFLOAD_FAILED, reported=False)
    assert (verdict(rep), _result(rep)) == ("pass", ("bold green", "  result:    PASS"))
