"""base/record.py: the plain value classes that replace dataclasses on check's start-up path."""

from __future__ import annotations

import pytest

from zerolint.base.record import replace
from zerolint.model.diagnostics import Diagnostic, Edit, Severity
from zerolint.pipeline import Options


def diag(**kw) -> Diagnostic:
    base = dict(file="a.json", code="ZL101", name="misplaced-key", severity=Severity.ERROR, message="m", pointer="/x",
                line=1, column=2, end_line=1, end_column=3)
    return Diagnostic(**{**base, **kw})


def test_equal_by_fields_not_by_extra_state():
    assert diag() == diag(rule=object())  # `rule` is in _extra: not part of the value
    assert diag() != diag(line=2)
    assert diag().__eq__(object()) is NotImplemented
    assert repr(Edit(1, 2, "x")) == "Edit(start=1, end=2, text='x')"


def test_mutable_records_are_unhashable_frozen_ones_hash_by_value():
    with pytest.raises(TypeError):
        hash(diag())
    assert hash(Edit(1, 2, "x")) == hash(Edit(1, 2, "x")) and {Edit(1, 2, "x"), Edit(1, 2, "x")} == {Edit(1, 2, "x")}


def test_frozen_refuses_assignment_and_deletion():
    o = Options(files=("a.json",))
    with pytest.raises(AttributeError, match="Options is immutable"):
        o.files = ()  # type: ignore[misc]
    with pytest.raises(AttributeError, match="Options is immutable"):
        del o.files


def test_replace_keeps_the_other_fields_and_the_extra_state():
    rule = object()
    d = replace(diag(rule=rule), line=9)
    assert (d.line, d.column, d.rule) == (9, 2, rule)
    o = replace(Options(files=("a.json",), quiet=True), target="hf")
    assert (o.files, o.quiet, o.target) == (("a.json",), True, "hf")
    with pytest.raises(TypeError, match="Options has no field"):
        replace(o, nope=1)
    with pytest.raises(ValueError, match="fix mode"):  # construction checks still run
        replace(o, fix="sometimes")
