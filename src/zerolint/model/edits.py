"""Build fixes as text edits on the original text of a `Document`.

A fix is a tuple of `Edit(start, end, text)` on character offsets into `doc.text`; everything outside the
edited spans stays byte for byte as it was (indentation, key order, comments, number spelling such as `5e8`,
the trailing newline, CRLF line ends). Every builder returns a tuple of edits, or None when the edit is not
possible (the pointer does not exist, the key already exists, a comment would be lost, ...): a rule then
simply offers no fix.

    from zerolint import edits
    yield view.finding(ptr, msg, fixes=edits.fixes(
        edits.make_fix("move `offload_optimizer` into `zero_optimization`",
                       edits.move_member(view.doc, "/offload_optimizer", "/zero_optimization"))))

Builders (a `target` is a JSON pointer, or a `Member` for one occurrence of a duplicated key):

- `remove_member(doc, target)`: deletes the member, its comma (or the previous member's comma when it was the
  last one), and its own line(s) when it sits on lines of its own. It never deletes a comment: the comments in
  its text (inside a block, after it on its line) stay, each on a line of its own at the member's indent; when
  that is impossible (a line comment inside a one-line member) no edit is offered. Comment lines above the
  member are kept. Removing the only member of a `{ ... }` leaves `{}`.
- `rename_key(doc, target, new_key)`: None if a sibling already has `new_key`. An unquoted (hjson) key stays
  unquoted when the new name allows it.
- `replace_value(doc, target, new_json_text)`: a multi-line replacement is re-indented to the member's depth.
- `insert_member(doc, object_pointer, key, value_json_text, position="end"|"start", after=None)`: None if
  the key exists. A multi-line object gets the new member on its own line, indented like its siblings (else the
  object's indent + the file's indent unit); a single-line object stays single-line. Commas are added where
  the neighbours need them. Multi-line JSON text is re-indented to the file's unit and the member's depth.
- `move_member(doc, target, to_object_pointer, new_key=None)`: remove + insert. When the destination object
  does not exist it is created (in place of the moved member when both live in the same object, else at the end
  of the destination's parent). When the destination already has the key, or is not an object, the move is NOT
  offered (None): merging two values would have to guess which of them the author meant. A multi-line value is
  re-indented to its new depth; a comment on the member's own line moves with it.
- `insert_comma(doc, offset)`, `delete_span(doc, start, end, whole_line=True)`.

Helpers: `make_fix(description, edits, safe=True, choice=None, default=False) -> Fix | None`, `fixes(*fixes)`
(drops the Nones), `apply_edits(text, edits)`, `indent_unit(doc)`, `newline(doc)`, `value_text(value)`.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from ..base import pointer as jp
from .diagnostics import Edit, Fix
from .document import OBJECT, Document, Member, Node

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from typing import Any

Edits = tuple[Edit, ...]
_UNQUOTED_OK = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
DEFAULT_UNIT = "  "


# ---------------------------------------------------------------------------------------------------------------
# Fix helpers

def make_fix(description: str, edits: Sequence[Edit] | None, *, safe: bool = True, choice: str | None = None,
             default: bool = False) -> Fix | None:
    """A `Fix`, or None when the edits could not be built (so that `fixes=fixes(make_fix(...))` offers none)."""
    if edits is None:
        return None
    return Fix(description=description, edits=tuple(edits), safe=safe, choice=choice, default=default)


def fixes(*items: Fix | None) -> list[Fix]:
    return [f for f in items if f is not None]


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (an insertion at the offset where a replacement starts goes first)."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    out, pos = [], 0
    for e in ordered:
        if e.start < pos:
            raise ValueError(f"overlapping edits at offset {e.start}")
        out.append(text[pos:e.start])
        out.append(e.text)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)


def overlaps(a: Sequence[Edit], b: Sequence[Edit]) -> bool:
    """True when two edit sets touch the same text (two insertions at one offset count as touching)."""
    for x in a:
        for y in b:
            if x.start == y.start or (x.start < y.end and y.start < x.end):
                return True
            if x.start == x.end and y.start < x.start < y.end or y.start == y.end and x.start < y.start < x.end:
                return True
    return False


def combine(edit_sets: Iterable[Sequence[Edit] | None]) -> list[Edit] | None:
    """One fix's edits from several: each set that overlaps none taken before (the rest wait for the fixer's next
    pass, where their finding comes back for what is left); None when nothing could be taken."""
    out: list[Edit] = []
    for e in edit_sets:
        if e is not None and not overlaps(out, e):
            out.extend(e)
    return out or None


def value_text(value: Any) -> str:
    """A Python value as single-line JSON text (`{"device": "cpu"}`)."""
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------------------------
# Text geometry

def newline(doc: Document) -> str:
    m = re.search(r"\r\n|\r|\n", doc.text)
    return m.group() if m else "\n"


_BREAKS: tuple[str, list[int]] = ("", [0])  # (text, [0] + the offset after every \r and \n), for the last text seen


def _line_start(text: str, i: int) -> int:
    """Just after the last \r or \n before offset i. By binary search over the text's line breaks (computed once per
    text): a long minified line must not make every call walk back over it (quadratic)."""
    global _BREAKS
    if _BREAKS[0] is not text:
        _BREAKS = (text, [0] + [m.end() for m in re.finditer(r"[\r\n]", text)])
    starts = _BREAKS[1]
    return starts[bisect_right(starts, i) - 1] if i > 0 else i


def line_start(text: str, i: int) -> int:
    """Offset of the start of the line that holds offset i."""
    return _line_start(text, i)


def _at_eol(text: str, i: int) -> bool:
    return i >= len(text) or text[i] in "\r\n"


def _after_newline(text: str, i: int) -> int:
    if i < len(text) and text[i] == "\r":
        return i + 2 if text[i + 1: i + 2] == "\n" else i + 1
    return i + 1 if i < len(text) and text[i] == "\n" else i


def _indent_at(text: str, i: int) -> str:
    s = _line_start(text, i)
    j = s
    while j < len(text) and text[j] in " \t":
        j += 1
    return text[s:j]


def _starts_line(text: str, i: int) -> bool:
    """Only blanks between the line start and offset i. Scans back over the blanks only: slicing from the line
    start was quadratic on a long minified line (one call per member or item, each copying the line so far)."""
    j = i
    while j > 0 and text[j - 1] in " \t":
        j -= 1
    return j == 0 or text[j - 1] in "\r\n"


def _comments(doc: Document) -> dict[int, int]:
    """start -> end of every comment (a line comment's end excludes the \\r of a CRLF). Computed once per document:
    a fix per finding must not rescan every note (quadratic on big configs)."""
    cached = doc.__dict__.get("_comment_spans")
    if cached is not None and cached[0] == len(doc.notes):
        return cached[1]
    out = {}
    for n in doc.notes:
        if n.kind == "comment":
            end = n.end
            if end > n.start and doc.text[end - 1] == "\r":
                end -= 1
            out[n.start] = end
    doc.__dict__["_comment_spans"] = (len(doc.notes), out)
    return out


def _skip_inline(text: str, i: int, comments: dict[int, int]) -> int:
    """Skip spaces, tabs and comments that end on this line."""
    while True:
        while i < len(text) and text[i] in " \t":
            i += 1
        end = comments.get(i)
        if end is not None and not re.search(r"[\r\n]", text[i:end]):
            i = end
            continue
        return i


def _trailing_comment(text: str, i: int, comments: dict[int, int]) -> tuple[int, int] | None:
    """The span of a comment after offset i on the same line, when only blanks come before it."""
    j = i
    while j < len(text) and text[j] in " \t":
        j += 1
    end = comments.get(j)
    if end is not None and not re.search(r"[\r\n]", text[j:end]):
        return j, end
    return None


def indent_unit(doc: Document) -> str:
    """The file's indent step: the most common difference between a member's indent and its container's."""
    cache = getattr(doc, "_zl_indent_unit", None)
    if cache is not None:
        return cache
    text = doc.text
    counts: Counter[str] = Counter()
    if doc.root is not None:
        for node in doc.root.walk():
            starts = [m.key_start for m in node.members or ()] + [n.start for n in node.items or ()]
            if not starts:
                continue
            base = _indent_at(text, node.start)
            for s in starts:
                if not _starts_line(text, s) or _line_start(text, s) == _line_start(text, node.start):
                    continue
                ind = _indent_at(text, s)
                if ind.startswith(base) and len(ind) > len(base):
                    counts[ind[len(base):]] += 1
    if counts:
        unit = counts.most_common(1)[0][0]
    else:
        unit = "\t" if re.search(r"^\t", text, re.M) else DEFAULT_UNIT
    try:
        setattr(doc, "_zl_indent_unit", unit)
    except AttributeError:  # pragma: no cover
        pass
    return unit


def _colon(doc: Document) -> str:
    """The file's key/value separator (`": "` or `":"`), from its own members."""
    counts: Counter[str] = Counter()
    if doc.root is not None:
        for node in doc.root.walk():
            for m in node.members or ():
                sep = doc.text[m.key_end: m.value.start]
                if ":" in sep and not re.search(r"[\r\n#/]", sep):
                    counts[sep] += 1
    return counts.most_common(1)[0][0] if counts else ": "


def _multiline(doc: Document, obj: Node) -> bool:
    text = doc.text
    if text[obj.start: obj.start + 1] != "{":
        return True  # a root without braces: one member per line
    if obj.members:
        return bool(re.search(r"[\r\n]", text[obj.start: obj.members[0].key_start]))
    return bool(re.search(r"[\r\n]", text[obj.start: obj.end]))


def reindent(text: str, indent: str, unit: str, nl: str) -> str:
    """Re-indent multi-line JSON text (e.g. `json.dumps(v, indent=4)`): line 2.. get `indent` plus `unit` per
    level of their own indentation. Single-line text is returned unchanged."""
    lines = re.split(r"\r\n|\r|\n", text)
    if len(lines) == 1:
        return text
    widths = [len(ln) - len(ln.lstrip(" \t")) for ln in lines[1:] if ln.strip()]
    step = min((w for w in widths if w > 0), default=1)
    out = [lines[0]]
    for ln in lines[1:]:
        body = ln.lstrip(" \t")
        lead = ln[: len(ln) - len(body)]
        level = (lead.count("\t") * step + len(lead.replace("\t", ""))) // step if step else 0
        out.append(indent + unit * level + body if body else "")
    return nl.join(out)


def _rebase(text: str, old_base: str, new_base: str) -> str:
    """Move lines 2.. of source text from one depth to another, keeping their indentation relative to the
    member's line (`old_base`)."""
    lines = re.split(r"(\r\n|\r|\n)", text)
    if len(lines) == 1:
        return text
    out = [lines[0]]
    for k in range(1, len(lines), 2):
        sep, ln = lines[k], lines[k + 1]
        if ln.startswith(old_base):
            ln = new_base + ln[len(old_base):]
        elif ln.strip():
            ln = new_base + ln.lstrip(" \t")
        out += [sep, ln]
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------------
# Locating

def _locate(doc: Document, target: str | Member) -> tuple[Node | None, int, Member | None]:
    """(parent object, index in its members, member)."""
    if isinstance(target, Member):
        parent = doc.node(jp.parent(target.pointer))
        if parent is None or parent.members is None:
            return None, -1, None
        i = _positions(parent).get(id(target), -1)
        return (parent, i, target) if i >= 0 else (None, -1, None)
    if not target:
        return None, -1, None
    parent = doc.node(jp.parent(target))
    if parent is None or parent.kind != OBJECT or not parent.members:
        return None, -1, None
    m = parent.member(jp.last(target))  # the last occurrence
    return (parent, _positions(parent)[id(m)], m) if m is not None else (None, -1, None)


def _positions(parent: Node) -> dict[int, int]:
    """id(member) -> its index in parent.members, built once per object (a fix per member stays linear)."""
    members = parent.members or []
    cached = parent.__dict__.get("_positions")
    if cached is None or cached[0] != len(members):
        cached = parent.__dict__["_positions"] = (len(members), {id(m): i for i, m in enumerate(members)})
    return cached[1]


def _quote_key(doc: Document, old_start: int, key: str) -> str:
    if doc.text[old_start: old_start + 1] not in ("\"", "'") and _UNQUOTED_OK.fullmatch(key):
        return key
    return json.dumps(key, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------------------------
# Builders

def delete_span(doc: Document, start: int, end: int, whole_line: bool = True) -> Edits:
    """Delete text[start:end]. With `whole_line`, when nothing but blanks would be left on the line, the line
    goes too (its newline included); otherwise the blanks before the span go with it when it ends the line."""
    text = doc.text
    if end > start and text[end - 1] == "\r":
        end -= 1  # a line comment's span as the parser records it ends after the \r of a CRLF
    if whole_line:
        ls = _line_start(text, start)
        j = end
        while j < len(text) and text[j] in " \t":
            j += 1
        if text[ls:start].strip(" \t") == "" and _at_eol(text, j):
            if j >= len(text) and ls > 0:  # the last line without a newline: take the newline before it
                k = ls - 1
                if k > 0 and text[k - 1: k + 1] == "\r\n":
                    k -= 1
                return (Edit(k, j, ""),)
            return (Edit(ls, _after_newline(text, j), ""),)
        if _at_eol(text, j):
            k = start
            while k > ls and text[k - 1] in " \t":
                k -= 1
            return (Edit(k, j, ""),)
    return (Edit(start, end, ""),)


def insert_comma(doc: Document, offset: int) -> Edits:
    return (Edit(offset, offset, ","),)


def remove_member(doc: Document, target: str | Member) -> Edits | None:
    return _remove_member(doc, target, carried=())


def _remove_member(doc: Document, target: str | Member, carried: Iterable[int]) -> Edits | None:
    """remove_member; the comments starting at `carried` offsets may go (a move takes them along), every other
    comment in the deleted text is kept in its place (no safe fix may delete a comment)."""
    parent, idx, m = _locate(doc, target)
    if parent is None or m is None:
        return None
    edits = _member_deletion(doc, parent, idx, m)
    return _keep_comments(doc, edits, m, set(carried))


def _keep_comments(doc: Document, edits: Edits, m: Member, carried: set[int]) -> Edits | None:
    """Put back the comments that `edits` would delete: whole deleted lines become the comments' own lines, at the
    member's indent; a comment in a deletion inside a line cannot be kept sensibly, so no edit is offered."""
    text, comments = doc.text, _comments(doc)
    out = []
    for e in edits:
        inside = [(c, end) for c, end in comments.items() if e.start <= c and end <= e.end and c not in carried]
        if not inside:
            out.append(e)
            continue
        ends_line = e.end > e.start and text[e.end - 1] in "\r\n"
        if e.text or e.start != _line_start(text, e.start) or not (ends_line or e.end == len(text)):
            return None
        indent, nl = _indent_at(text, m.key_start), newline(doc)
        kept = nl.join(indent + text[c:end] for c, end in sorted(inside)) + (nl if ends_line else "")
        out.append(Edit(e.start, e.end, kept))
    return tuple(out)


def _member_deletion(doc: Document, parent: Node, idx: int, m: Member) -> Edits:
    text = doc.text
    comments = _comments(doc)
    members = parent.members or []
    prev = members[idx - 1] if idx > 0 else None
    last = idx == len(members) - 1
    end = m.comma + 1 if m.comma >= 0 else m.value.end
    after = _skip_inline(text, end, comments)
    braced = text[parent.start: parent.start + 1] == "{"

    if len(members) == 1 and braced:
        inner = (parent.start + 1, parent.end - 1)
        if not any(inner[0] <= s < inner[1] for s in comments):
            return (Edit(inner[0], inner[1], ""),)

    edits: list[Edit] = []
    if _starts_line(text, m.key_start) and _at_eol(text, after):
        # The member has its line(s) to itself: delete them, with the comment on its last line.
        edits.append(Edit(_line_start(text, m.key_start), _after_newline(text, after), ""))
        if last and m.comma < 0 and prev is not None and prev.comma >= 0:
            edits.append(Edit(prev.comma, prev.comma + 1, ""))
        return tuple(sorted(edits, key=lambda e: e.start))

    if m.comma >= 0:
        s, e = m.key_start, m.comma + 1
        j = e
        while j < len(text) and text[j] in " \t":
            j += 1
        if _at_eol(text, j) or j in comments or (last and braced and j == parent.end - 1):
            while s > 0 and text[s - 1] in " \t":  # `{"a": 1, "b": 2,}` -> `{"a": 1,}`
                s -= 1
        else:
            e = j
        edits.append(Edit(s, e, ""))
    else:
        s, e = m.key_start, m.value.end
        if last and prev is not None and prev.comma >= 0:
            between = range(prev.comma + 1, m.key_start)
            if not any(c in between for c in comments):
                s = prev.comma
            else:
                edits.append(Edit(prev.comma, prev.comma + 1, ""))
                while s > 0 and text[s - 1] in " \t":
                    s -= 1
        else:
            while s > 0 and text[s - 1] in " \t":
                s -= 1
        edits.append(Edit(s, e, ""))
    return tuple(sorted(edits, key=lambda e: e.start))


def rename_key(doc: Document, target: str | Member, new_key: str) -> Edits | None:
    parent, _, m = _locate(doc, target)
    if parent is None or m is None:
        return None
    if any(o.key == new_key and o is not m for o in parent.members or ()):
        return None
    if m.key == new_key:
        return None
    return (Edit(m.key_start, m.key_end, _quote_key(doc, m.key_start, new_key)),)


def replace_value(doc: Document, target: str | Member | Node, new_json_text: str) -> Edits | None:
    node: Node | None
    if isinstance(target, Node):
        node = target
    elif isinstance(target, Member):
        node = target.value
    else:
        node = doc.node(target)
    if node is None:
        return None
    text = doc.text
    new = reindent(new_json_text, _indent_at(text, node.start), indent_unit(doc), newline(doc))
    if text[node.start: node.end] == new:
        return None
    return (Edit(node.start, node.end, new),)


def insert_member(doc: Document, object_pointer: str, key: str, value_json_text: str, position: str = "end",
                  after: str | None = None) -> Edits | None:
    obj = doc.node(object_pointer)
    if obj is None or obj.kind != OBJECT or obj.member(key) is not None:
        return None
    unit, nl = indent_unit(doc), newline(doc)
    return _insert(doc, obj, json.dumps(key, ensure_ascii=False),
                   lambda indent: reindent(value_json_text, indent, unit, nl), position, after)


def _insert(doc: Document, obj: Node, key_text: str, render: Callable[[str], str], position: str = "end",
            after: str | None = None, comment: str | None = None) -> Edits | None:
    """Insert `key_text: render(indent)` into `obj`. `comment` (a comment's text) goes after the member."""
    text, comments = doc.text, _comments(doc)
    nl, unit, colon = newline(doc), indent_unit(doc), _colon(doc)
    members = obj.members or []
    multiline = _multiline(doc, obj)
    block_comment = comment is not None and comment.startswith("/*")
    if comment is not None and not multiline and not block_comment:
        return None  # a line comment cannot ride along inside a single-line object

    def member(indent: str, comma: bool) -> str:
        body = key_text + colon + render(indent) + ("," if comma else "")
        return body + (" " + comment if comment else "")

    if position not in ("end", "start"):
        raise ValueError(f"position must be 'end' or 'start', not {position!r}")
    if after is not None:
        anchor_i = max((i for i, m in enumerate(members) if m.key == after), default=-1)
        if anchor_i < 0:
            return None
    else:
        anchor_i = len(members) - 1 if position == "end" else -1

    # Indentation of the new member: like a sibling on a line of its own, else the object's + one unit.
    sibling = next((m for m in ([members[anchor_i]] if anchor_i >= 0 else []) + members
                    if _starts_line(text, m.key_start)
                    and _line_start(text, m.key_start) != _line_start(text, obj.start)),
                   None)
    if sibling is not None:
        indent = _indent_at(text, sibling.key_start)
    elif text[obj.start: obj.start + 1] != "{":
        indent = _indent_at(text, obj.start)
    else:
        indent = _indent_at(text, obj.start) + unit
    if not multiline:
        indent = _indent_at(text, obj.start)  # a multi-line value inside a one-line object aligns with its line

    if not members:
        if text[obj.start: obj.start + 1] != "{":
            return None
        inner = text[obj.start + 1: obj.end - 1]
        if multiline:
            return (Edit(obj.start + 1, obj.start + 1, nl + indent + member(indent, False)),)
        if inner.strip(" \t") == "":
            return (Edit(obj.start + 1, obj.end - 1, member(indent, False)),)
        return (Edit(obj.start + 1, obj.start + 1, member(indent, False)),)

    edits: list[Edit] = []
    if anchor_i < 0:  # at the start
        first = members[0]
        if multiline and _starts_line(text, first.key_start):
            ls = _line_start(text, first.key_start)
            return (Edit(ls, ls, indent + member(indent, True) + nl),)
        if comment is not None and not block_comment:
            return None
        sep = " " if not multiline or text[first.key_start - 1: first.key_start] in " \t\r\n" else ""
        return (Edit(first.key_start, first.key_start, member(indent, True) + (sep or " ")),)

    a = members[anchor_i]
    has_next = anchor_i < len(members) - 1
    if multiline and len(members) > 1 and all(x.comma < 0 for x in members) and all(
            _line_start(text, x.key_start) != _line_start(text, y.value.end) for x, y in zip(members[1:], members)):
        # hjson without commas, one member per line: follow the file's style
        p = _skip_inline(text, a.value.end, comments)
        if not _at_eol(text, p):
            return None
        return (Edit(p, p, nl + indent + key_text + colon + render(indent) + (" " + comment if comment else "")),)
    if a.comma < 0:
        edits.append(Edit(a.value.end, a.value.end, ","))
    a_end = a.comma + 1 if a.comma >= 0 else a.value.end
    if multiline:
        p = _skip_inline(text, a_end, comments)
        if _at_eol(text, p):
            edits.append(Edit(p, p, nl + indent + member(indent, has_next)))
        else:
            if comment is not None and not block_comment:
                return None
            edits.append(Edit(a_end, a_end, nl + indent + member(indent, has_next)))
    else:
        space = " " if any(text[x.comma + 1: x.comma + 2] == " " for x in members if x.comma >= 0) or \
            all(x.comma < 0 for x in members) else ""
        edits.append(Edit(a_end, a_end, space + member(indent, has_next)))
    return _merge(edits)


def _merge(edits: list[Edit]) -> Edits:
    """Join insertions at the same offset (in order) and sort."""
    out: list[Edit] = []
    for e in edits:
        if out and e.start == e.end == out[-1].start == out[-1].end:
            out[-1] = Edit(e.start, e.end, out[-1].text + e.text)
        else:
            out.append(e)
    return tuple(sorted(out, key=lambda e: (e.start, e.end)))


def move_member(doc: Document, target: str | Member, to_object_pointer: str,
                new_key: str | None = None) -> Edits | None:
    parent, _, m = _locate(doc, target)
    if parent is None or m is None:
        return None
    src = m.pointer
    if to_object_pointer == src or to_object_pointer.startswith(src + "/"):
        return None
    key = new_key or m.key
    if to_object_pointer == parent.pointer:
        return rename_key(doc, m, key) if new_key else None
    text, comments = doc.text, _comments(doc)
    if any(m.key_end <= c < m.value.start for c in comments):
        return None  # a comment between the key and the value: nowhere sensible to put it
    unit, nl = indent_unit(doc), newline(doc)
    old_base = _indent_at(text, m.key_start)
    raw = text[m.value.start: m.value.end]
    key_text = json.dumps(key, ensure_ascii=False)

    # A comment on the member's own last line travels with it.
    end = m.comma + 1 if m.comma >= 0 else m.value.end
    tc = _trailing_comment(text, end, comments)
    comment = None
    if tc is not None and _at_eol(text, _skip_inline(text, tc[1], comments)) and _starts_line(text, m.key_start):
        comment = text[tc[0]: tc[1]]

    dest = doc.node(to_object_pointer)
    if dest is not None:
        if dest.kind != OBJECT or dest.member(key) is not None:
            return None
        ins = _insert(doc, dest, key_text, lambda indent: _rebase(raw, old_base, indent), comment=comment)
        rem = _remove_member(doc, m, carried=_travelling(doc, m, tc if comment is not None else None))
        if ins is None or rem is None or overlaps(ins, rem):
            return None
        return _merge(list(ins) + list(rem))

    # The destination does not exist: create it.
    holder = doc.node(jp.parent(to_object_pointer))
    if holder is None or holder.kind != OBJECT or to_object_pointer == "":
        return None
    box_key = jp.last(to_object_pointer)
    if holder.member(box_key) is not None:
        return None
    multiline = _multiline(doc, holder)

    if comment is not None and not multiline and not comment.startswith("/*"):
        comment = None
        if holder is not parent:
            return None  # the comment could not come along

    def boxed(indent: str, carry: str | None = None) -> str:
        note = " " + carry if carry else ""
        if multiline:
            inner = indent + unit
            return ("{" + nl + inner + key_text + _colon(doc) + _rebase(raw, old_base, inner) + note + nl + indent
                    + "}")
        return "{" + key_text + _colon(doc) + _rebase(raw, old_base, indent) + note + "}"

    box_text = json.dumps(box_key, ensure_ascii=False)
    if holder is parent:
        # In place: `"offload_optimizer": {...}` becomes `"zero_optimization": {"offload_optimizer": {...}}`;
        # a comment after the member stays where it is.
        return (Edit(m.key_start, m.value.end, box_text + _colon(doc) + boxed(old_base)),)
    ins = _insert(doc, holder, box_text, lambda indent: boxed(indent, comment))
    rem = _remove_member(doc, m, carried=_travelling(doc, m, tc if comment is not None else None))
    if ins is None or rem is None or overlaps(ins, rem):
        return None
    return _merge(list(ins) + list(rem))


def _travelling(doc: Document, m: Member, trailing: tuple[int, int] | None) -> list[int]:
    """Comments a move takes along: those inside the value (its raw text is re-inserted) and the trailing one."""
    inside = [c for c in _comments(doc) if m.value.start <= c < m.value.end]
    return inside + ([trailing[0]] if trailing is not None else [])
