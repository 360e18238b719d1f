"""zerolint.fix.engine: selection of fixes, conflicts, verification, the loop; and the seed's done-when scenario."""

from __future__ import annotations

import json
import shutil

import hjson
from conftest import SEED, run_cli

from zerolint.fix.engine import choose_fix, fix_text, map_offset, unified_diff
from zerolint.model import edits as E
from zerolint.model.diagnostics import Edit
from zerolint.model.document import parse
from zerolint.model.view import Settings
from zerolint.rules.engine import Selection, run_rules
from zerolint.rules.rule import Rule
from zerolint.rules.ruleset import RuleSet

DS = Settings(target="deepspeed")


def _rule(code, func, name=None):
    r = Rule(code=code, name=name or f"test-{code.lower()}", severity="error", summary="test rule", evidence="test")
    r.func = func
    return r


def _flag_key(key, make_fixes, when=lambda value: True):
    def check(view):
        for m in view.members(""):
            if m.key == key and when(m.value.value):
                yield view.finding(m.pointer, f"{key} found", fixes=make_fixes(view, m))
    return check


# --- synthetic rules ------------------------------------------------------------------------------------------

REMOVE_X = _rule("ZL990", _flag_key("x", lambda v, m: E.fixes(E.make_fix("remove x", E.remove_member(v.doc, m)))))
BREAKS = _rule("ZL991", _flag_key("y", lambda v, m: [E.make_fix("breaks the file", (Edit(v.doc.root.end - 1,
                                                                                         v.doc.root.end, ""),))]))
NOOP = _rule("ZL992", _flag_key("z", lambda v, m: [E.make_fix("re-spells the value",
                                                               E.replace_value(v.doc, m, "1.0"))]))
UNSAFE = _rule("ZL993", _flag_key("u", lambda v, m: E.fixes(E.make_fix("remove u", E.remove_member(v.doc, m),
                                                                          safe=False))))
ALTS = _rule("ZL994", _flag_key("p", lambda v, m: E.fixes(
    E.make_fix("set p to a", E.replace_value(v.doc, m, '"a"'), choice="a"),
    E.make_fix("set p to b", E.replace_value(v.doc, m, '"b"'), choice="b")), when=lambda value: value == 0))
ALTS_DEFAULT = _rule("ZL995", _flag_key("q", lambda v, m: E.fixes(
    E.make_fix("set q to a", E.replace_value(v.doc, m, '"a"'), choice="a", default=True),
    E.make_fix("set q to b", E.replace_value(v.doc, m, '"b"'), choice="b")), when=lambda value: value == 0))
# Two rules whose fixes touch the same member: the first wins the pass, the other no longer applies after it,
# and a third rule fires on the result in the next pass.
RENAME_W = _rule("ZL996", _flag_key("w", lambda v, m: E.fixes(E.make_fix("rename w", E.rename_key(v.doc, m, "w2")))))
REWRITE_W = _rule("ZL997", _flag_key("w", lambda v, m: [E.make_fix("rewrite w", (Edit(m.key_start, m.value.end,
                                                                                         '"w": 5'),))],
                                     when=lambda value: value == 1))
VALUE_W2 = _rule("ZL998", _flag_key("w2", lambda v, m: E.fixes(E.make_fix("w2 to 3", E.replace_value(v.doc, m, "3"))),
                                    when=lambda value: value == 1))


def test_simple_fix_and_result_fields():
    text = '{\n  "a": 1,\n  "x": 2\n}\n'
    r = fix_text(text, "t.json", DS, rules=[REMOVE_X])
    assert r.text == '{\n  "a": 1\n}\n'
    assert [a.code for a in r.applied] == ["ZL990"] and r.remaining == [] and r.failed == [] and r.changed
    assert len(r.passes) == 1 and r.passes[0].before == text and r.passes[0].after == r.text


def test_a_fix_that_breaks_parsing_is_dropped_and_reported():
    text = '{"y": 1, "x": 2}'
    r = fix_text(text, "t.json", DS, rules=[BREAKS, REMOVE_X])
    assert r.text == '{"y": 1}'
    assert [a.code for a in r.failed] == ["ZL991"] and "not valid JSON" in r.failed[0].reason
    assert [d.code for d in r.remaining] == ["ZL991"]


def test_a_fix_that_does_not_fix_is_dropped():
    r = fix_text('{"z": 1}', "t.json", DS, rules=[NOOP])
    assert r.text == '{"z": 1}' and r.applied == []
    assert [a.code for a in r.failed] == ["ZL992"] and "still reports /z" in r.failed[0].reason


def test_unsafe_only_when_asked():
    text = '{"u": 1, "a": 2}'
    assert fix_text(text, "t.json", DS, rules=[UNSAFE]).text == text
    assert fix_text(text, "t.json", DS, rules=[UNSAFE], unsafe=True).text == '{"a": 2}'


def test_alternatives_need_prefer_or_default():
    text = '{"p": 0, "q": 0}'
    r = fix_text(text, "t.json", DS, rules=[ALTS, ALTS_DEFAULT])
    assert r.text == '{"p": 0, "q": "a"}'
    r = fix_text(text, "t.json", DS, rules=[ALTS, ALTS_DEFAULT], prefer=["b"])
    assert r.text == '{"p": "b", "q": "b"}'
    d = run_rules(parse(text), DS, ruleset=RuleSet.of([ALTS]))[0]
    assert choose_fix(d) is None and choose_fix(d, prefer=["B"]).choice == "b"


def test_conflicting_fixes_apply_over_two_passes():
    r = fix_text('{"w": 1}', "t.json", DS, rules=[RENAME_W, REWRITE_W, VALUE_W2])
    assert r.text == '{"w2": 3}'
    assert [a.code for a in r.applied] == ["ZL996", "ZL998"] and len(r.passes) == 2


def test_no_fixes_on_a_syntax_error():
    text = '{"x": 1,, }'
    r = fix_text(text, "t.json", DS, rules=[REMOVE_X])
    assert r.text == text and r.skipped


def test_parse_fixes_end_to_end_keep_values():
    text = ('\ufeff{\n  // micro batch per GPU\n  train_micro_batch_size_per_gpu: 4\n'
            "  \"optimizer\": {\"type\": 'AdamW', params: {lr: 1e-4,},},\n  \"scheduler\": {\n"
            "    type: WarmupLR # comment\n    name: foo bar\n  }\n  \"d\": '''\n    two\n    lines\n    '''\n}\n")
    r = fix_text(text, "t.json", DS, Selection(select=["ZL0"]))  # the parse rules' fixes
    assert r.text == ('{\n  // micro batch per GPU\n  "train_micro_batch_size_per_gpu": 4,\n'
                      '  "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},\n  "scheduler": {\n'
                      '    "type": "WarmupLR", # comment\n    "name": "foo bar"\n  },\n  "d": "two\\nlines"\n}\n')
    before = hjson.loads(text.lstrip("\ufeff"))
    before["scheduler"]["type"] = "WarmupLR"  # ZL004: the value the author meant
    assert hjson.loads(r.text) == before
    r2 = fix_text(text, "t.json", DS, Selection(select=["ZL0"]), unsafe=True)
    assert json.loads(r2.text) == before and "//" not in r2.text
    assert fix_text(r2.text, "t.json", DS, Selection(select=["ZL0"]), unsafe=True).text == r2.text


def test_duplicate_key_alternatives():
    text = '{\n  "stage": 2,\n  "a": 1,\n  "stage": 3\n}'
    only = Selection(select=["ZL003"])  # (ZL101 would also move the top-level stage into zero_optimization)
    assert fix_text(text, "t.json", DS, only).text == text  # unsafe only
    assert fix_text(text, "t.json", DS, only, unsafe=True).text == '{\n  "a": 1,\n  "stage": 3\n}'
    assert fix_text(text, "t.json", DS, only, unsafe=True, prefer=["keep-first"]).text == \
        '{\n  "stage": 2,\n  "a": 1\n}'


def test_comment_in_quoteless_value_not_a_path():
    text = "{\n  nvme_path: /local//nvme\n}"
    doc = parse(text)
    fixes = [f for d in run_rules(doc, DS, Selection(select=["ZL004"])) for f in d.fixes]
    assert fixes == []


def test_map_offset():
    edits = [Edit(2, 4, "XYZ"), Edit(6, 6, "+")]
    assert map_offset(1, edits) == 1
    assert map_offset(3, edits, "lo") == 2 and map_offset(3, edits, "hi") == 5
    assert map_offset(6, edits, "lo") == 7 and map_offset(6, edits, "hi") == 8
    assert map_offset(9, edits) == 11


def test_unified_diff_keeps_crlf_and_marks_missing_newline():
    d = unified_diff("f.json", '{\r\n  "a": 1\r\n}', '{\r\n  "a": 2\r\n}')
    assert '-  "a": 1\r\n+  "a": 2\r\n' in d
    d = unified_diff("f.json", '{"a": 1}', '{"a": 2}')
    assert d.endswith('+{"a": 2}\n\\ No newline at end of file\n')


# --- the done-when on the seed ------------------------------------------------------------------------

def test_seed_broken_fix_end_to_end(tmp_path):
    src = SEED / "ds_offload_broken.json"
    path = tmp_path / "ds_offload_broken.json"
    shutil.copy(src, path)
    original = src.read_text()
    # ZL219 (offload with no optimizer section) is a real finding on this seed that no fix removes: left out here.
    r = run_cli("check", "--fix", "--target", "deepspeed", "--ignore", "ZL219", str(path))
    fixed = path.read_text()
    data = json.loads(fixed)  # strict JSON now
    assert "offload_optimizer" not in data
    assert data["zero_optimization"]["offload_optimizer"] == {"device": "cpu", "pin_memory": True}
    expected = hjson.loads(original)
    expected["zero_optimization"]["offload_optimizer"] = expected.pop("offload_optimizer")
    assert data == expected
    # Only the offload_optimizer line moved (and the comma it needs): every other line is byte-identical.
    strip = lambda t: [ln.rstrip(",") for ln in t.split("\n") if "offload_optimizer" not in ln]  # noqa: E731
    assert strip(fixed) == strip(original)
    relint = run_cli("check", "--format", "json", "--target", "deepspeed", str(path))
    assert not [d for d in json.loads(relint.stdout)["diagnostics"] if d["code"] in ("ZL101", "ZL002")]
    assert b"(0 remaining)" in r.stdout + r.stderr and r.returncode == 0
    again = run_cli("check", "--fix", "--target", "deepspeed", "--ignore", "ZL219", str(path))
    assert path.read_text() == fixed and again.returncode == 0
    assert b"Fixed 0 findings" in again.stdout + again.stderr
