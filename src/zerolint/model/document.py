"""Position-aware parse of a DeepSpeed config into a `Document`.

Why a scanner of our own: we need (1) a span and a JSON pointer for every key and value, (2) to keep going
after the mistakes people really make (a missing comma, a comment, a trailing comma) and (3) to know which of
those DeepSpeed's hjson reader accepts while HF/Accelerate's `json.load` does not. The kept libraries we tried
each miss one: tree-sitter-json closes the object at a missing comma and drops every key after it, and reads
hjson's quoteless values as errors; json-source-map and the stdlib stop at the first error; hjson keeps no
positions. So this module builds the tree, and the verdicts "does `json` accept it?" and "does hjson accept
it?" come from those very libraries (`Document.json_error`, `Document.hjson_error`), never from guesswork.

Values follow JSON semantics (`1.0` is a float); `Node.raw` keeps the source spelling of numbers so the view
can apply hjson's rule (an integral `5e8` or `1.0` is an int to DeepSpeed).
"""

from __future__ import annotations

import json
import re
import sys
from bisect import bisect_right
from collections.abc import Callable, Iterator

from ..base import pointer as jp
from ..base.fsio import DEFAULT_MAX_DEPTH, DEFAULT_MAX_VALUES
from ..base.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from collections.abc import Generator
    from typing import Any, TypeAlias

    # What a container generator yields (Parser._run): (offset, pointer, depth, attach) of a child value; it is sent
    # the child's node and returns its own node (object_members, None).
    _Request: TypeAlias = tuple[int, str, int, Callable[["Node"], None]]

POINTER_BUDGET = 64 * 1024 * 1024  # characters of JSON pointers (plus 16 per character of text), see _Parser.spend

OBJECT, ARRAY, STRING, NUMBER, BOOL, NULL = "object", "array", "string", "number", "boolean", "null"

# Notes that are fine for DeepSpeed (hjson) but fatal for `json.load` (HF Trainer, Accelerate).
HJSON_ONLY = frozenset(
    {"comment", "trailing-comma", "missing-comma", "unquoted-key", "quoteless-string", "single-quote-string",
     "multiline-string", "root-braces-omitted", "bom"}
)


class Node:
    """A value in the parsed tree, with its character span and JSON pointer. `value` and `raw` (the source text)
    are for scalars (objects and arrays: see to_python()); `members` (objects, in source order, duplicates included)
    and `items` (arrays) for the others; `quoteless` marks an hjson quoteless string. Equal only to itself."""

    def __init__(self, kind: str, start: int, end: int, pointer: str, value: Any = None, raw: str = "",
                 members: list[Member] | None = None, items: list[Node] | None = None,
                 quoteless: bool = False) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.pointer = pointer
        self.value = value
        self.raw = raw
        self.members = members
        self.items = items
        self.quoteless = quoteless

    def __repr__(self) -> str:
        return f"Node({self.kind} {self.pointer!r} [{self.start}:{self.end}])"

    def get(self, key: str) -> "Node | None":
        """Value of `key` as json/hjson see it: the last occurrence wins."""
        m = self.member(key)
        return m.value if m is not None else None

    def member(self, key: str) -> "Member | None":
        members = self.members
        if members is None:
            return None
        if len(members) > 16:  # big objects: a key index (members only grow, while parsing), so lookups stay O(1)
            cached = self.__dict__.get("_by_key")
            if cached is None or cached[0] != len(members):
                cached = self.__dict__["_by_key"] = (len(members), {m.key: m for m in members})
            return cached[1].get(key)
        for m in reversed(members):
            if m.key == key:
                return m
        return None

    def keys(self) -> list[str]:
        seen: dict[str, None] = {}
        for m in self.members or ():
            seen[m.key] = None
        return list(seen)

    def to_python(self) -> Any:
        """The value as json.loads gives it (the last of duplicate keys wins). Iterative: any depth."""
        if self.kind not in (OBJECT, ARRAY):
            return self.value
        top: Any = {} if self.kind == OBJECT else []
        stack: list[tuple[Node, Any]] = [(self, top)]
        while stack:
            node, out = stack.pop()
            children = ((m.key, m.value) for m in node.members or ()) if node.kind == OBJECT else \
                enumerate(node.items or ())
            for key, child in children:
                if child.kind in (OBJECT, ARRAY):
                    value: Any = {} if child.kind == OBJECT else []
                    stack.append((child, value))
                else:
                    value = child.value
                if node.kind == OBJECT:
                    out[key] = value
                else:
                    out.append(value)
        return top

    def walk(self) -> Iterator["Node"]:
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            if node.members:
                stack.extend(m.value for m in reversed(node.members))
            elif node.items:
                stack.extend(reversed(node.items))


class Member:
    """One `key: value` of an object, with the key's span and the offset of the comma after it (-1 if none).
    Equal only to itself."""

    def __init__(self, key: str, key_start: int, key_end: int, value: Node, comma: int = -1) -> None:
        self.key = key
        self.key_start = key_start
        self.key_end = key_end
        self.value = value
        self.comma = comma

    def __repr__(self) -> str:
        return f"Member({self.key!r} [{self.key_start}:{self.key_end}] {self.value!r})"

    @property
    def pointer(self) -> str:
        return self.value.pointer


class Note(Record):
    """Something the parser saw: hjson-only syntax, a duplicate key, a syntax error, ... `related` is another span
    it concerns, e.g. the first occurrence of a duplicate key."""

    _fields = ("kind", "start", "end", "message", "pointer", "related")
    kind: str
    start: int
    end: int
    message: str
    pointer: str
    related: tuple[int, int] | None

    def __init__(self, kind: str, start: int, end: int, message: str, pointer: str = "",
                 related: tuple[int, int] | None = None) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.message = message
        self.pointer = pointer
        self.related = related


class ReaderError(Record):
    """Where and why a real reader (json or hjson) gave up on the text."""

    _fields = ("reader", "message", "offset")
    reader: str
    message: str
    offset: int

    def __init__(self, reader: str, message: str, offset: int) -> None:
        self.reader = reader
        self.message = message
        self.offset = offset


class Document:
    """A parsed config: text, tree, what the parser noticed, and the json/hjson verdicts. `json_error` None:
    `json.loads` accepts the text (HF / Accelerate); `hjson_error` None: hjson accepts it (DeepSpeed reading a
    file); `fatal`: the parse stopped early, the tree is partial. Equal only to itself."""

    def __init__(self, path: str, text: str, root: Node | None = None, notes: list[Note] | None = None,
                 json_error: ReaderError | None = None, hjson_error: ReaderError | None = None,
                 fatal: bool = False) -> None:
        self.path = path
        self.text = text
        self.root = root
        self.notes = [] if notes is None else notes
        self.json_error = json_error
        self.hjson_error = hjson_error
        self.fatal = fatal
        self._line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
        self._index: dict[str, Node] | None = None

    def __repr__(self) -> str:
        return f"Document({self.path!r}, {len(self.text)} characters)"

    # -- positions ------------------------------------------------------------------------------------------
    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset; columns count characters."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def line_text(self, line: int) -> str:
        start = self._line_starts[line - 1]
        end = self._line_starts[line] if line < len(self._line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    # -- lookup ---------------------------------------------------------------------------------------------
    def node(self, pointer: str) -> Node | None:
        if self._index is None:
            self._index = {} if self.root is None else {n.pointer: n for n in self.root.walk()}
        return self._index.get(pointer)

    def member(self, pointer: str) -> Member | None:
        """The object member whose value sits at `pointer` (the last one, when the key is duplicated)."""
        if not pointer:
            return None
        owner = self.node(jp.parent(pointer))
        return owner.member(jp.last(pointer)) if owner is not None else None

    def key_span(self, pointer: str) -> tuple[int, int] | None:
        m = self.member(pointer)
        return (m.key_start, m.key_end) if m else None


# ---------------------------------------------------------------------------------------------------------------
# Scanner

# _WS, _STRING_BODY, _KEY_GAP and _LINE_REST match the empty string: their .match() is never None.
_WS = re.compile(r"[ \t\r\n]*")
# Unrolled and possessive: `(?:[^"\\]|\\.)*` made re keep a backtracking entry per character (a 16 MiB string cost
# 2 GB); these match the same text with no per-character state.
_STRING_BODY = {'"': re.compile(r'[^"\\\n]*+(?:\\.[^"\\\n]*+)*+'), "'": re.compile(r"[^'\\\n]*+(?:\\.[^'\\\n]*+)*+")}
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERAL = re.compile(r"true|false|null|NaN|-?Infinity")
# What may follow a scalar for it to be a scalar (and not the start of an hjson quoteless string).
_SCALAR_END = re.compile(r"[ \t]*(?:$|[,}\]\r\n]|#|//|/\*)")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}
_CONTROL = re.compile(r"[\x00-\x1f]")
# hjson's scanKeyName: a quoteless key runs to the ':'; it may not start with a quote (a comment was skipped before it)
# and may not hold whitespace or {}[],: but quotes, '#' and '/' inside it are plain characters. Only whitespace may
# come between it and its ':' (no comment, unlike after a quoted key).
_UNQUOTED_KEY = re.compile(r"[^\s,:\[\]{}\"'][^\s,:\[\]{}]*")
_KEY_GAP = re.compile(r"[ \t\r\n]*")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_LINE_REST = re.compile(r"[^\r\n]*")
_LOW_SURROGATE = re.compile(r"[dD][c-fC-F][0-9a-fA-F]{2}")


class _Stop(Exception):
    """A syntax error we cannot recover from; the tree keeps what was parsed before it."""


class _Parser:
    def __init__(self, doc: Document, max_depth: int, max_values: int = DEFAULT_MAX_VALUES) -> None:
        self.doc = doc
        self.s = doc.text
        self.n = len(self.s)
        self.max_depth = max_depth
        self.max_values, self.values_left = max_values, max_values  # keys and items: the parse's cost
        # Every value's JSON pointer is kept (the document index), and a pointer is as long as the keys above it:
        # long keys nested deep would cost memory quadratic in the text. Past this budget the parse stops.
        self.pointer_budget = POINTER_BUDGET + 16 * self.n
        self.deepest = 0  # the deepest nesting seen

    def note(self, kind: str, start: int, end: int, message: str, **kw: Any) -> None:
        self.doc.notes.append(Note(kind, start, end, message, **kw))

    def error(self, at: int, message: str, end: int | None = None) -> _Stop:
        self.note("syntax-error", at, end if end is not None else min(at + 1, self.n), message)
        return _Stop()

    # whitespace and comments (hjson: #, //, /* */)
    def skip(self, i: int) -> int:
        s = self.s
        while True:
            i = _WS.match(s, i).end()  # type: ignore[union-attr]
            if i >= self.n:
                return i
            c = s[i]
            if c == "#" or s.startswith("//", i):
                j = s.find("\n", i)
                j = self.n if j < 0 else j
                self.note("comment", i, j, "comment")
                i = j
            elif s.startswith("/*", i):
                j = s.find("*/", i + 2)
                if j < 0:
                    raise self.error(i, "unterminated /* comment", self.n)
                self.note("comment", i, j + 2, "comment")
                i = j + 2
            else:
                return i

    def parse(self) -> None:
        doc = self.doc
        i = 0
        if self.s.startswith("\ufeff"):
            self.note("bom", 0, 1, "byte order mark")
            i = 1
        try:
            i = self.skip(i)
            if i >= self.n:
                self.note("empty", 0, 0, "empty document")
                return
            if self.s[i] in "{[":
                doc.root = self.value(i, "", 0, lambda node: setattr(doc, "root", node))
                i = self.skip(doc.root.end)
            else:
                doc.root = self.braceless_root(i)
                i = self.skip(doc.root.end)
            if i < self.n:
                raise self.error(i, f"unexpected {self.describe(i)} after the end of the document", self.n)
        except _Stop:
            doc.fatal = True
        except RecursionError:  # only reachable when the caller raised max_depth beyond what Python can nest
            doc.fatal = True
            self.note("depth-limit", 0, 0, "nesting too deep for this Python's recursion limit")

    def braceless_root(self, i: int) -> Node:
        # hjson accepts a root object without braces; anything else here is a scalar root (not an object).
        if _UNQUOTED_KEY.match(self.s, i) or self.s[i] in "\"'":
            probe = self.s[i: self.s.find("\n", i) if "\n" in self.s[i:] else self.n]
            if ":" in probe:
                self.note("root-braces-omitted", i, i + 1, "the root object has no braces")
                node = Node(OBJECT, i, i, "", members=[])
                self._run(self.object_members(node, i, depth=1, braced=False))
                return node
        return self.value(i, "", 0)

    def describe(self, i: int) -> str:
        if i >= self.n:
            return "end of file"
        c = self.s[i]
        return repr(c) if c.isprintable() else f"character U+{ord(c):04X}"

    def value(self, i: int, ptr: str, depth: int, attach: Callable[[Node], None] = lambda node: None) -> Node:
        """The value at s[i]. Containers are `attach`ed as soon as they open, so that a syntax error inside
        them keeps what was parsed so far in the tree."""
        if i >= self.n:
            raise self.error(i, "expected a value, found end of file")
        c = self.s[i]
        if c in "{[":
            return self._run(self._container(i, ptr, depth, attach))
        if c in "\"'":
            if self.s.startswith("'''", i):
                return self.multiline_string(i, ptr)
            text, end = self.string(i)
            if c == "'":
                self.note("single-quote-string", i, end, "single-quoted string", pointer=ptr)
            return Node(STRING, i, end, ptr, value=text, raw=self.s[i:end])
        return self.scalar(i, ptr)

    def _container(self, i: int, ptr: str, depth: int,
                   attach: Callable[[Node], None]) -> Generator[_Request, Node, Node]:
        """The generator that parses the object or array at s[i]; `depth` is the one value() was given."""
        if self.s[i] == "{":
            return self.object(i, ptr, depth + 1, attach)
        return self.array(i, ptr, depth + 1, attach)

    def _run(self, gen: Generator[_Request, Node, Node | None]) -> Any:
        """Drive container generators without recursion: an object or array yields (offset, pointer, depth, attach)
        for each child value and is sent back the child's node; a nested container goes on this explicit stack. So
        nesting is bounded by max_depth alone, never by Python's recursion limit."""
        stack, sent = [gen], None
        while True:
            try:
                j, ptr, depth, attach = stack[-1].send(sent)  # type: ignore[arg-type]  # None: the first send
            except StopIteration as done:
                stack.pop()
                if not stack:
                    return done.value
                sent = done.value
                continue
            if j < self.n and self.s[j] in "{[":
                stack.append(self._container(j, ptr, depth, attach))
                sent = None
            else:
                sent = self.value(j, ptr, depth, attach)

    def spend(self, pointer: str, at: int) -> None:
        self.values_left -= 1
        if self.values_left < 0:
            self.note("value-limit", at, at + 1, f"the file holds more than {self.max_values:,} values (keys and "
                                                 "items)")
            raise _Stop()
        self.pointer_budget -= len(pointer)
        if self.pointer_budget < 0:
            self.note("structure-limit", at, at + 1, f"long keys nested too deep: the JSON pointers of this document "
                                                     f"would exceed {POINTER_BUDGET + 16 * self.n:,} characters")
            raise _Stop()

    def check_depth(self, i: int, depth: int) -> None:
        if depth > self.deepest:
            self.deepest = depth
        if depth > self.max_depth:
            self.note("depth-limit", i, i + 1, f"nesting deeper than {self.max_depth} levels")
            raise _Stop()

    def object(self, i: int, ptr: str, depth: int, attach: Callable[[Node], None]) -> Generator[_Request, Node, Node]:
        self.check_depth(i, depth)
        node = Node(OBJECT, i, i + 1, ptr, members=[])
        attach(node)
        yield from self.object_members(node, i + 1, depth, braced=True)
        return node

    def object_members(self, node: Node, i: int, depth: int, braced: bool) -> Generator[_Request, Node, None]:
        """A generator (see _run): yields each member's value request, receives its node."""
        s = self.s
        seen: dict[str, Member] = {}
        i = self.skip(i)
        while True:
            if i >= self.n:
                if braced:
                    node.end = i
                    raise self.error(node.start, "unclosed '{': this object is never closed", node.start + 1)
                node.end = i
                return
            if s[i] == "}":
                if not braced:
                    raise self.error(i, "unexpected '}'")
                node.end = i + 1
                return
            key_start = i
            if s[i] in "\"'":
                key, key_end = self.string(i)
                if s[i] == "'":
                    self.note("single-quote-string", i, key_end, "single-quoted key")
            else:
                m = _UNQUOTED_KEY.match(s, i)
                if not m:
                    raise self.error(i, f"expected a key in double quotes, found {self.describe(i)}")
                key, key_end = m.group(), m.end()
                self.note("unquoted-key", i, key_end, f"unquoted key {key!r}")
            mptr = jp.join(node.pointer, key)
            self.spend(mptr, key_start)
            j = self.skip(key_end) if s[key_start] in "\"'" else _KEY_GAP.match(s, key_end).end()  # type: ignore[union-attr]
            if j >= self.n or s[j] != ":":
                raise self.error(j, f"expected ':' after the key {key!r}, found {self.describe(j)}")
            j = self.skip(j + 1)
            if key in seen:
                first = seen[key]
                self.note("duplicate-key", key_start, key_end, f"duplicate key {key!r}", pointer=mptr,
                          related=(first.key_start, first.key_end))
            members: list[Member] = node.members  # type: ignore[assignment]  # an object's: a list
            val = yield j, mptr, depth, lambda v: members.append(Member(key, key_start, key_end, v))
            if not members or members[-1].value is not val:
                members.append(Member(key, key_start, key_end, val))
            member = seen[key] = members[-1]
            node.end = val.end
            i = self.skip(val.end)
            if i < self.n and s[i] == ",":
                member.comma = i
                i = self.skip(i + 1)
                if i < self.n and s[i] == "}" and braced:
                    self.note("trailing-comma", member.comma, member.comma + 1, "trailing comma")
            elif braced and i < self.n and s[i] != "}":
                # Located where json.load stops (the next key), as HF users see it; `related` is where the comma goes.
                self.note("missing-comma", i, i, f"missing ',' after the value of {key!r}", pointer=mptr,
                          related=(val.end, val.end))

    def array(self, i: int, ptr: str, depth: int, attach: Callable[[Node], None]) -> Generator[_Request, Node, Node]:
        """A generator (see _run): yields each item's value request, receives its node."""
        self.check_depth(i, depth)
        s = self.s
        node = Node(ARRAY, i, i + 1, ptr, items=[])
        attach(node)
        i = self.skip(i + 1)
        while True:
            if i >= self.n:
                raise self.error(node.start, "unclosed '[': this array is never closed", node.start + 1)
            if s[i] == "]":
                node.end = i + 1
                return node
            if s[i] == ",":
                raise self.error(i, "expected a value, found ','")
            items: list[Node] = node.items  # type: ignore[assignment]  # an array's: a list
            iptr = jp.join(ptr, len(items))
            self.spend(iptr, i)
            item = yield i, iptr, depth, items.append
            if not items or items[-1] is not item:
                items.append(item)
            i = self.skip(item.end)
            if i < self.n and s[i] == ",":
                comma = i
                i = self.skip(i + 1)
                if i < self.n and s[i] == "]":
                    self.note("trailing-comma", comma, comma + 1, "trailing comma")
            elif i < self.n and s[i] != "]":
                self.note("missing-comma", i, i, "missing ',' between array items", pointer=item.pointer,
                          related=(item.end, item.end))

    def string(self, i: int) -> tuple[str, int]:
        """A quoted string at s[i]; returns (decoded text, end offset)."""
        s, q = self.s, self.s[i]
        m = _STRING_BODY[q].match(s, i + 1)
        assert m is not None  # the pattern matches the empty string
        end = m.end()
        if end >= self.n or s[end] != q:
            raise self.error(i, "unterminated string", min(end, self.n))
        body = m.group()
        ctrl = _CONTROL.search(body)
        if ctrl:
            at = i + 1 + ctrl.start()
            self.note("control-character", at, at + 1, "raw control character inside a string")
        if "\\" in body:
            unescaped = _json_unescape(body) if q == '"' else None
            body = self.unescape(m.group(), i + 1) if unescaped is None else unescaped
        return body, end + 1

    def unescape(self, body: str, base: int) -> str:
        out, k = [], 0
        while k < len(body):
            j = body.find("\\", k)  # copy the run up to the next escape in one go
            if j < 0:
                out.append(body[k:])
                break
            if j > k:
                out.append(body[k:j])
                k = j
            esc = body[k + 1]
            if esc == "u":
                hexs = body[k + 2:k + 6]
                if not _HEX4.fullmatch(hexs):
                    raise self.error(base + k, "invalid \\u escape", base + k + 2)
                code = int(hexs, 16)
                k += 6
                if 0xD800 <= code < 0xDC00 and body[k:k + 2] == "\\u" and _LOW_SURROGATE.fullmatch(body[k + 2:k + 6]):
                    code = 0x10000 + ((code - 0xD800) << 10) + (int(body[k + 2:k + 6], 16) - 0xDC00)
                    k += 6
                out.append(chr(code))
            elif esc in _ESCAPES:
                out.append(_ESCAPES[esc])
                k += 2
            else:
                raise self.error(base + k, f"invalid escape '\\{esc}'", base + k + 2)
        return "".join(out)

    def multiline_string(self, i: int, ptr: str) -> Node:
        end = self.s.find("'''", i + 3)
        if end < 0:
            raise self.error(i, "unterminated ''' string", self.n)
        self.note("multiline-string", i, end + 3, "hjson multiline string", pointer=ptr)
        body = self.s[i + 3:end]
        lines = body.split("\n")
        if lines and not lines[0].strip():
            lines = lines[1:]
        if lines and not lines[-1].strip():
            lines = lines[:-1]
        col = self.doc.position(i)[1] - 1
        text = "\n".join(ln[col:] if ln[:col].strip() == "" else ln.lstrip() for ln in lines)
        return Node(STRING, i, end + 3, ptr, value=text, raw=self.s[i:end + 3])

    def scalar(self, i: int, ptr: str) -> Node:
        s = self.s
        for rx, kind in ((_JSON_NUMBER, NUMBER), (_LITERAL, None)):
            m = rx.match(s, i)
            if m and _SCALAR_END.match(s, m.end()):
                raw = m.group()
                if kind == NUMBER:
                    return Node(NUMBER, i, m.end(), ptr, value=_number(raw), raw=raw)
                if raw in ("true", "false"):
                    return Node(BOOL, i, m.end(), ptr, value=raw == "true", raw=raw)
                if raw == "null":
                    return Node(NULL, i, m.end(), ptr, value=None, raw=raw)
                self.note("nonfinite-number", i, m.end(), f"{raw} is not a JSON number", pointer=ptr)
                return Node(NUMBER, i, m.end(), ptr, value=float(raw), raw=raw)
        if s[i] in ",:[]{}":
            raise self.error(i, f"expected a value, found {self.describe(i)}")
        # hjson quoteless string: runs to the end of the line, comments and commas included.
        j = _LINE_REST.match(s, i).end()  # type: ignore[union-attr]
        text = s[i:j].strip()
        end = i + len(s[i:j].rstrip())
        if end == i:  # only whitespace JSON does not skip (form feed, NBSP, ...) up to the end of the line: an empty
            raise self.error(i, f"unexpected {self.describe(i)}")  # value would not advance (an endless loop)
        self.note("quoteless-string", i, end, f"quoteless string {text!r}", pointer=ptr)
        return Node(STRING, i, end, ptr, value=text, raw=s[i:end], quoteless=True)


_JSON_STRING = json.JSONDecoder(strict=False)  # raw control characters are noted above, not refused here


def _json_unescape(body: str) -> str | None:
    """The body of a double-quoted string decoded by json's C scanner: one copy, where `unescape` keeps two pieces
    per escape (a 16 MiB string of escapes cost 300 MB). None when json refuses an escape hjson reads (\\') or one
    that is invalid: `unescape` then decodes it or says where it is wrong."""
    try:
        return _JSON_STRING.decode('"' + body + '"')
    except ValueError:
        return None


def _number(raw: str) -> int | float:
    if re.fullmatch(r"-?\d+", raw):
        try:
            return int(raw)
        except ValueError:  # beyond Python's int-string digit limit
            return float(raw)
    return float(raw)


# ---------------------------------------------------------------------------------------------------------------
# Readers: what `json.loads` (HF Trainer, Accelerate) and hjson (DeepSpeed reading a file) make of the text.

def _json_verdict(text: str) -> ReaderError | None:
    import json

    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return ReaderError("json", e.msg, e.pos)
    except (ValueError, RecursionError) as e:  # e.g. int too long to convert
        return ReaderError("json", str(e), 0)
    return None


def _hjson_verdict(text: str) -> ReaderError | None:
    try:
        import hjson
    except ImportError:  # pragma: no cover - hjson is a core dependency
        return None
    try:
        hjson.loads(text)
    except hjson.HjsonDecodeError as e:
        return ReaderError("hjson", str(e).split(": line ")[0], e.pos)
    except (ValueError, OverflowError, RecursionError, IndexError) as e:
        return ReaderError("hjson", f"{type(e).__name__}: {e}", 0)
    return None


def parse(text: str, path: str = "<string>", max_depth: int = DEFAULT_MAX_DEPTH,
          max_values: int = DEFAULT_MAX_VALUES) -> Document:
    doc = Document(path=path, text=text)
    parser = _Parser(doc, max_depth, max_values)
    parser.parse()
    if any(n.kind in LIMIT_NOTES for n in doc.notes):
        return doc  # the real readers recurse: never hand them what we refused for depth (or spend on the rest)
    # json (C) recurses once per level and hjson (Python) twice, against the recursion limit: a document nested
    # deeper than that fails in them, as it would in HF's and DeepSpeed's process. Say so without recursing.
    deepest, limit = parser.deepest, sys.getrecursionlimit()
    too_deep = f"maximum recursion depth exceeded (the document is nested {deepest} levels deep)"
    doc.json_error = _json_verdict(text) if deepest < limit else ReaderError("json", too_deep, 0)
    # hjson agrees with json on plain JSON except for NaN/Infinity and numbers beyond float range, so it is
    # only consulted (pure Python, slower) when json failed or such a number is present.
    if doc.json_error is not None or 2 * deepest >= limit or any(n.kind == "nonfinite-number" for n in doc.notes) or (
        doc.root is not None and any(n.kind == NUMBER and n.value in (_INF, -_INF) for n in doc.root.walk())
    ):
        doc.hjson_error = _hjson_verdict(text) if 2 * deepest < limit else ReaderError(
            "hjson", f"RecursionError: {too_deep}", 0)
    return doc


_INF = float("inf")


LIMIT_NOTES = ("depth-limit", "structure-limit", "value-limit")  # the parse stopped: the rest is not read


def parse_bytes(data: bytes, path: str = "<string>", max_depth: int = DEFAULT_MAX_DEPTH,
                max_values: int = DEFAULT_MAX_VALUES) -> Document:
    """Decode like DeepSpeed (`open(path)` in UTF-8, hjson skips a BOM) and HF (`json.load` of UTF-8 text), noting
    what either would trip on: UTF-16/32, invalid UTF-8 (kept as U+FFFD so the rest still lints), NUL bytes."""
    notes: list[Note] = []
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        enc = "utf-16"
        text = data.decode(enc, errors="replace")
        notes.append(Note("encoding", 0, 1, "the file is UTF-16; DeepSpeed and json.load read configs as UTF-8"))
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            text = data.decode("utf-8", errors="replace")
            at = len(data[: e.start].decode("utf-8", errors="replace"))
            notes.append(Note("encoding", at, at + 1,
                              f"invalid UTF-8 (byte 0x{data[e.start]:02x} at byte offset {e.start}); "
                              "Python's open() raises UnicodeDecodeError on this file"))
    doc = parse(text, path, max_depth, max_values)
    doc.notes[:0] = notes
    return doc
