"""zerolint.model.edits: exact before/after text for every builder."""

from __future__ import annotations

import json

import hjson
import pytest

from zerolint.model import edits as E
from zerolint.model.diagnostics import Edit
from zerolint.model.document import parse


def run(before: str, fn: str, *args, **kwargs) -> str | None:
    doc = parse(before)
    result = getattr(E, fn)(doc, *args, **kwargs)
    if result is None:
        return None
    assert isinstance(result, tuple) and all(isinstance(e, Edit) for e in result)
    return E.apply_edits(before, result)


CASES = [
    # --- remove_member --------------------------------------------------------------------------------------
    ("remove first, one line", '{"a": 1, "b": 2}', ("remove_member", "/a"), {}, '{"b": 2}'),
    ("remove last, one line", '{"a": 1, "b": 2}', ("remove_member", "/b"), {}, '{"a": 1}'),
    ("remove only member, one line", '{"a": 1}', ("remove_member", "/a"), {}, "{}"),
    ("remove only member, multi-line", '{\n  "z": {\n    "a": 1\n  }\n}', ("remove_member", "/z/a"), {},
     '{\n  "z": {}\n}'),
    ("remove last member takes the previous comma", '{\n  "a": 1,\n  "b": 2\n}\n', ("remove_member", "/b"), {},
     '{\n  "a": 1\n}\n'),
    ("remove first member line", '{\n  "a": 1,\n  "b": 2\n}\n', ("remove_member", "/a"), {}, '{\n  "b": 2\n}\n'),
    ("remove last with trailing comma keeps the file's comma", '{\n  "a": 1,\n  "b": 2,\n}\n',
     ("remove_member", "/b"), {}, '{\n  "a": 1,\n}\n'),
    ("remove last, CRLF, its comment stays", '{\r\n  "a": 1, // one\r\n  "b": 2 // two\r\n}\r\n',
     ("remove_member", "/b"), {}, '{\r\n  "a": 1 // one\r\n  // two\r\n}\r\n'),
    ("remove first, CRLF, its comment stays", '{\r\n  "a": 1, // one\r\n  "b": 2 // two\r\n}\r\n',
     ("remove_member", "/a"), {}, '{\r\n  // one\r\n  "b": 2 // two\r\n}\r\n'),
    ("remove a block keeps the comments inside it (issue 11 item 4)",
     '{\n  "a": 1,\n  "offload_param": {  # useless below stage 3\n    # cpu for now\n    "device": "cpu"\n  }\n}\n',
     ("remove_member", "/offload_param"), {}, '{\n  "a": 1\n  # useless below stage 3\n  # cpu for now\n}\n'),
    ("remove the only member keeps the comment inside", '{\n  "z": {\n    "a": [1, # one\n      2]\n  }\n}',
     ("remove_member", "/z/a"), {}, '{\n  "z": {\n    # one\n  }\n}'),
    ("remove the last line without a newline keeps its comment", 'a: 1\nb: 2 # two', ("remove_member", "/b"), {},
     "a: 1\n# two"),
    ("remove inside a line would drop a line comment: no edit", '{"a": [1, # one\n2], "b": 2}',
     ("remove_member", "/a"), {}, None),
    ("remove a comment line above is kept", '{\n  "a": 1,\n  // about b\n  "b": 2\n}', ("remove_member", "/b"), {},
     '{\n  "a": 1\n  // about b\n}'),
    ("remove last, closing brace on its line", '{\n  "a": {\n    "x": 1\n  },\n  "b": 2}', ("remove_member", "/b"),
     {}, '{\n  "a": {\n    "x": 1\n  }}'),
    ("remove multi-line value", '{\n\t"a": {\n\t\t"x": 1\n\t},\n\t"b": 2\n}', ("remove_member", "/a"), {},
     '{\n\t"b": 2\n}'),
    ("remove last with trailing comma, one line", '{"a": 1, "b": 2,}', ("remove_member", "/b"), {}, '{"a": 1,}'),
    ("remove, hjson without commas", '{\n  "a": 1\n  "b": 2\n}', ("remove_member", "/a"), {}, '{\n  "b": 2\n}'),
    ("remove, root without braces", "a: 1\nb: 2\n", ("remove_member", "/a"), {}, "b: 2\n"),
    ("remove missing pointer", '{"a": 1}', ("remove_member", "/b"), {}, None),
    # --- rename_key -----------------------------------------------------------------------------------------
    ("rename", '{\n  "bfloat16": {"enabled": true}\n}', ("rename_key", "/bfloat16", "bf16"), {},
     '{\n  "bf16": {"enabled": true}\n}'),
    ("rename onto an existing key", '{\n  "a": 1,\n  "b": 2\n}', ("rename_key", "/a", "b"), {}, None),
    ("rename unquoted key stays unquoted", '{\n  a: 1,\n  "b": 2\n}', ("rename_key", "/a", "c"), {},
     '{\n  c: 1,\n  "b": 2\n}'),
    # --- replace_value --------------------------------------------------------------------------------------
    ("replace scalar keeps spelling elsewhere", '{\n  "a": 5e8,\n  "b": 2\n}', ("replace_value", "/b", "3"), {},
     '{\n  "a": 5e8,\n  "b": 3\n}'),
    ("replace with multi-line re-indents", '{\n  "a": {"x": 1},\n  "b": 2\n}',
     ("replace_value", "/a", '{\n    "y": 2\n}'), {}, '{\n  "a": {\n    "y": 2\n  },\n  "b": 2\n}'),
    # --- insert_member --------------------------------------------------------------------------------------
    ("insert end, tabs, multi-line JSON re-indented", '{\n\t"a": 1,\n\t"z": {\n\t\t"b": 2\n\t}\n}',
     ("insert_member", "/z", "c", '{\n  "d": [1, 2]\n}'), {},
     '{\n\t"a": 1,\n\t"z": {\n\t\t"b": 2,\n\t\t"c": {\n\t\t\t"d": [1, 2]\n\t\t}\n\t}\n}'),
    ("insert into {}", '{\n\t"a": 1,\n\t"z": {}\n}', ("insert_member", "/z", "c", "3"), {},
     '{\n\t"a": 1,\n\t"z": {"c": 3}\n}'),
    ("insert into empty multi-line object", '{\n\t"a": 1,\n\t"z": {\n\t}\n}', ("insert_member", "/z", "c", "3"), {},
     '{\n\t"a": 1,\n\t"z": {\n\t\t"c": 3\n\t}\n}'),
    ("insert single-line stays single-line", '{"a": 1, "z": {"b": 2}}', ("insert_member", "/z", "c", "3"), {},
     '{"a": 1, "z": {"b": 2, "c": 3}}'),
    ("insert at start, single-line", '{"a": 1, "z": {"b": 2}}', ("insert_member", "", "c", "3"),
     {"position": "start"}, '{"c": 3, "a": 1, "z": {"b": 2}}'),
    ("insert at start, multi-line", '{\n    "a": 1\n}', ("insert_member", "", "c", "3"), {"position": "start"},
     '{\n    "c": 3,\n    "a": 1\n}'),
    ("insert after a key", '{\n  "a": 1,\n  "b": 2\n}', ("insert_member", "", "c", "3"), {"after": "a"},
     '{\n  "a": 1,\n  "c": 3,\n  "b": 2\n}'),
    ("insert after the last member's comment", '{\n  "a": 1 // hi\n}', ("insert_member", "", "c", "3"), {},
     '{\n  "a": 1, // hi\n  "c": 3\n}'),
    ("insert CRLF", '{\r\n  "a": 1\r\n}\r\n', ("insert_member", "", "c", "[\n 1\n]"), {},
     '{\r\n  "a": 1,\r\n  "c": [\r\n    1\r\n  ]\r\n}\r\n'),
    ("insert, hjson without commas keeps the style", "a: 1\nb: 2\n", ("insert_member", "", "c", "3"), {},
     'a: 1\nb: 2\n"c": 3\n'),
    ("insert existing key", '{"a": 1}', ("insert_member", "", "a", "3"), {}, None),
    ("insert after a missing key", '{"a": 1}', ("insert_member", "", "c", "3"), {"after": "zz"}, None),
    ("insert into a non-object", '{"a": 1}', ("insert_member", "/a", "c", "3"), {}, None),
    # --- move_member ----------------------------------------------------------------------------------------
    ("move into a sibling, re-indented, comments travel",
     '{\n  "zero_optimization": {\n    "stage": 3\n  },\n  "offload_param": {\n    "device": "cpu", // where\n'
     '    "pin_memory": true\n  } // moved\n}\n',
     ("move_member", "/offload_param", "/zero_optimization"), {},
     '{\n  "zero_optimization": {\n    "stage": 3,\n    "offload_param": {\n      "device": "cpu", // where\n'
     '      "pin_memory": true\n    } // moved\n  }\n}\n'),
    ("move creates the destination in place",
     '{\n  "train_batch_size": 8,\n  "offload_param": {\n    "device": "cpu"\n  }\n}\n',
     ("move_member", "/offload_param", "/zero_optimization"), {},
     '{\n  "train_batch_size": 8,\n  "zero_optimization": {\n    "offload_param": {\n      "device": "cpu"\n'
     '    }\n  }\n}\n'),
    ("move into a single-line destination",
     '{\n  "zero_optimization": {"stage": 3},\n  "offload_param": {\n    "device": "cpu"\n  }\n}\n',
     ("move_member", "/offload_param", "/zero_optimization"), {},
     '{\n  "zero_optimization": {"stage": 3, "offload_param": {\n    "device": "cpu"\n  }}\n}\n'),
    ("move refused when the destination has the key",
     '{\n  "zero_optimization": {"stage": 3, "offload_param": {}},\n  "offload_param": {\n    "device": "cpu"\n'
     '  }\n}\n', ("move_member", "/offload_param", "/zero_optimization"), {}, None),
    ("move refused into a non-object", '{"zero_optimization": true, "offload_param": {}}',
     ("move_member", "/offload_param", "/zero_optimization"), {}, None),
    ("move up, leaves an empty object", '{\n  "a": {"b": {\n    "c": 1\n  }}\n}\n', ("move_member", "/a/b", ""), {},
     '{\n  "a": {},\n  "b": {\n    "c": 1\n  }\n}\n'),
    ("move CRLF 4 spaces", '{\r\n    "a": {\r\n        "x": 1\r\n    },\r\n    "c": 2\r\n}\r\n',
     ("move_member", "/c", "/a"), {}, '{\r\n    "a": {\r\n        "x": 1,\r\n        "c": 2\r\n    }\r\n}\r\n'),
    ("move and rename", '{\r\n    "a": {\r\n        "x": 1\r\n    },\r\n    "c": 2\r\n}\r\n',
     ("move_member", "/c", "/a"), {"new_key": "d"},
     '{\r\n    "a": {\r\n        "x": 1,\r\n        "d": 2\r\n    }\r\n}\r\n'),
    ("move single-line", '{"a": {"x": 1}, "c": 2}', ("move_member", "/c", "/a"), {}, '{"a": {"x": 1, "c": 2}}'),
    ("move only member, creating", '{"c": 2}', ("move_member", "/c", "/a"), {}, '{"a": {"c": 2}}'),
    ("move into itself", '{"c": {"d": {}}}', ("move_member", "/c", "/c/d"), {}, None),
    ("move the seed's misplaced block",
     '{\n    "zero_optimization": {\n        "stage": 2\n    },\n'
     '    "offload_optimizer": {"device": "cpu", "pin_memory": true},\n    "bf16": {"enabled": true}\n}\n',
     ("move_member", "/offload_optimizer", "/zero_optimization"), {},
     '{\n    "zero_optimization": {\n        "stage": 2,\n'
     '        "offload_optimizer": {"device": "cpu", "pin_memory": true}\n    },\n    "bf16": {"enabled": true}\n}\n'),
    ("move into a destination created at the end of another object",
     '{\n  "a": {\n    "m": 1\n  },\n  "b": {\n    "x": 1\n  }\n}',
     ("move_member", "/a/m", "/b/c"), {},
     '{\n  "a": {},\n  "b": {\n    "x": 1,\n    "c": {\n      "m": 1\n    }\n  }\n}'),
]


@pytest.mark.parametrize("name,before,call,kwargs,after", CASES, ids=[c[0] for c in CASES])
def test_builder(name, before, call, kwargs, after):
    got = run(before, call[0], *call[1:], **kwargs)
    assert got == after
    if after is not None and parse(before).hjson_error is None:
        hjson.loads(got)  # still readable by DeepSpeed
        if parse(before).json_error is None:
            json.loads(got)


def test_remove_one_occurrence_of_a_duplicate():
    text = '{"x": {"a": 1, "a": 2}}'
    doc = parse(text)
    first = doc.root.members[0].value.members[0]
    assert E.apply_edits(text, E.remove_member(doc, first)) == '{"x": {"a": 2}}'


def test_delete_span_comments():
    text = '{\n  "a": 1, # note\n  // header\n  "b": 2\n}'
    doc = parse(text)
    c = [n for n in doc.notes if n.kind == "comment"]
    assert E.apply_edits(text, E.delete_span(doc, c[0].start, c[0].end)) == '{\n  "a": 1,\n  // header\n  "b": 2\n}'
    assert E.apply_edits(text, E.delete_span(doc, c[1].start, c[1].end)) == '{\n  "a": 1, # note\n  "b": 2\n}'
    crlf = '{\r\n  "a": 1 # note\r\n}'
    doc = parse(crlf)
    c = [n for n in doc.notes if n.kind == "comment"]
    assert E.apply_edits(crlf, E.delete_span(doc, c[0].start, c[0].end)) == '{\r\n  "a": 1\r\n}'


def test_insert_comma_and_helpers():
    text = '{\n  "a": 1\n  "b": 2\n}'
    doc = parse(text)
    assert E.apply_edits(text, E.insert_comma(doc, doc.root.members[0].value.end)) == '{\n  "a": 1,\n  "b": 2\n}'
    assert E.make_fix("nothing", None) is None
    f = E.make_fix("comma", E.insert_comma(doc, 10), safe=True)
    assert E.fixes(None, f) == [f]
    assert E.indent_unit(parse('{\n\t"a": {\n\t\t"b": 1\n\t}\n}')) == "\t"
    assert E.indent_unit(parse('{\n    "a": 1\n}')) == "    "
    assert E.newline(parse('{\r\n}')) == "\r\n"


def test_apply_edits_rejects_overlap():
    with pytest.raises(ValueError):
        E.apply_edits("abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])
    assert E.apply_edits("abc", [Edit(1, 1, "X"), Edit(1, 2, "Y")]) == "aXYc"
    assert E.overlaps([Edit(1, 1, "X")], [Edit(1, 1, "Y")])
    assert not E.overlaps([Edit(0, 1, "")], [Edit(1, 2, "")])


def test_indent_geometry_is_linear_on_one_long_line():
    """A one-line 4 MB array took minutes (issue 12 item 9): every item's "does it start its line?" copied the line up
    to it. Counted as characters read, not timed: the work must stay proportional to the text."""

    class Counting(str):
        read = 0

        def __getitem__(self, k):
            Counting.read += len(range(*k.indices(len(self)))) if isinstance(k, slice) else 1
            return str.__getitem__(self, k)

    n = 20_000
    text = '{"train_batch_size": 8, "x": [' + ", ".join(["1"] * n) + "]}"
    doc = parse(text)
    doc.text = Counting(text)
    assert E.indent_unit(doc) == "  "
    assert not E._starts_line(doc.text, text.index("1, 1")) and E._starts_line(" \n  x", 4)
    assert Counting.read < 20 * len(text), Counting.read
