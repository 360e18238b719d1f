"""Every rule's example cases (src/zerolint/data/rule_cases/<CODE>.toml), run as tests with exact outcomes."""

from __future__ import annotations

import re

import pytest

from zerolint.model.document import parse
from zerolint.rules.cases import load_cases
from zerolint.rules.engine import Selection, run_rules
from zerolint.rules.ruleset import RuleSet

RULES = RuleSet.builtin().rules
CASES = [(r, c) for r in RULES for c in load_cases(r.code)]


def _found(rule, case):
    doc = parse(case.config, "ds_config.json")
    diags = run_rules(doc, case.settings, Selection(select=[rule.code]))
    internal = [d for d in diags if d.code == "ZL000"]
    assert not internal, internal[0].message
    return [
        {"code": d.code, "severity": d.severity.value, "pointer": d.pointer, "line": d.line, "column": d.column,
         "message": d.message, "fails_at": d.fails_at}
        for d in diags if d.code == rule.code
    ]


def _matches(found: dict, expected: dict) -> dict:
    """`expected` with its message pattern resolved against `found`: `message` is the exact text, `message_re` a
    regular expression the whole message must match (for messages with computed numbers); `fails_at` is absent
    when the finding claims no failure."""
    out = {"code": expected.get("code"), "fails_at": expected.get("fails_at"), **expected}
    pattern = out.pop("message_re", None)
    if pattern is not None:
        out["message"] = found["message"] if re.fullmatch(pattern, found["message"]) else f"<matching {pattern!r}>"
    return out


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_every_rule_has_bad_and_good_cases(rule):
    kinds = {c.kind for c in load_cases(rule.code)}
    assert {"bad", "good"} <= kinds, \
        f"src/zerolint/data/rule_cases/{rule.code}.toml needs at least one bad and one good case"


@pytest.mark.parametrize("rule,case", CASES, ids=[f"{r.code}-{c.kind}-{c.name}" for r, c in CASES])
def test_case(rule, case):
    found = _found(rule, case)
    if case.kind == "good":
        assert found == []
    else:
        assert case.expect, "a bad case must list what it expects"
        for e in case.expect:
            assert ("message" in e) != ("message_re" in e), f"every expectation needs a message or message_re: {e}"
        expected = [{"code": rule.code, **e} if "code" not in e else e for e in case.expect]
        assert len(found) == len(expected), found
        assert found == [_matches(f, e) for f, e in zip(found, expected)]


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_metadata(rule):
    assert rule.summary and not rule.summary.endswith(".")
    assert rule.rationale, f"{rule.code}: the module docstring is the rule's rationale"
    assert rule.evidence, f"{rule.code}: cite the DeepSpeed source or an issue"


FIX_CASES = [(r, c) for r, c in CASES if c.fixed is not None or c.unsafe_fixed is not None]


@pytest.mark.parametrize("rule,case", FIX_CASES, ids=[f"{r.code}-fixed-{c.name}" for r, c in FIX_CASES])
def test_case_fixed(rule, case):
    """`fixed`: the text `zerolint check --fix` makes of the config (this rule's fixes only); `unsafe_fixed`: the
    same with --unsafe-fixes; `prefer`: the --prefer choice for both."""
    from zerolint.fix.engine import fix_text

    prefer = [case.prefer] if case.prefer else []
    for expected, unsafe in ((case.fixed, False), (case.unsafe_fixed, True)):
        if expected is None:
            continue
        r = fix_text(case.config, "ds_config.json", case.settings, Selection(select=[rule.code]), unsafe=unsafe,
                     prefer=prefer)
        assert not r.failed, [f"{a.fix.description}: {a.reason}" for a in r.failed]
        assert r.text == expected, "unsafe_fixed" if unsafe else "fixed"
