"""verify's text report says what its exit code says: a run that passed but whose intent checks failed is not
reported as PASS (the exit code is 1)."""

from __future__ import annotations

from zerolint.model.document import parse
from zerolint.model.view import Settings, View
from zerolint.verify.intent import IntentCheck
from zerolint.verify.report import RunReport, run_lines

TEXT = '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}'

def _report(*intent: IntentCheck) -> RunReport:
    doc = parse(TEXT, "ds.json")
    return RunReport(path="ds.json", label="original", doc=doc, view=View(doc, Settings(target="deepspeed")),
                     plan=None, record={"status": "pass"}, intent=list(intent))

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
