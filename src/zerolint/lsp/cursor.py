"""What the cursor is on, for completion and hover. Completion happens in half-typed text that does not parse
(`{"zero_optimization": {"sta`), so `context_at` scans the text before the cursor itself, the way a JSON/hjson
reader would, keeping only a stack of open objects and arrays; hover uses the parsed document's key spans."""

from __future__ import annotations

from ..base import pointer as jp
from ..base.fsio import DEFAULT_MAX_DEPTH
from ..base.record import Record
from ..model.document import Document, Member

_DELIMS = set(",:[]{}\r\n")


class Context(Record):
    """`kind`: "key" (a key of the object at `section` goes here), "value" (the value of `key` in `section`) or
    "none". `prefix`: what is already typed of the word; `start`: its offset (the opening quote, when `quoted`)."""

    _fields = ("kind", "section", "key", "prefix", "start", "quoted", "present")
    kind: str
    section: str
    key: str
    prefix: str
    start: int
    quoted: bool
    present: tuple[str, ...]

    def __init__(self, kind: str, section: str = "", key: str = "", prefix: str = "", start: int = 0,
                 quoted: bool = False, present: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.section = section
        self.key = key
        self.prefix = prefix
        self.start = start
        self.quoted = quoted
        self.present = present

    @property
    def pointer(self) -> str:
        """The value's pointer (value contexts)."""
        return jp.join(self.section, self.key)


class _Frame:
    __slots__ = ("is_object", "pointer", "state", "key", "index", "keys")

    def __init__(self, is_object: bool, pointer: str) -> None:
        self.is_object = is_object
        self.pointer = pointer
        self.state = "key" if is_object else "value"  # key -> colon -> value -> comma -> key ...
        self.key = ""
        self.index = 0
        self.keys: list[str] = []

    def child_pointer(self) -> str:
        return jp.join(self.pointer, self.key if self.is_object else str(self.index))


def _string_end(text: str, i: int, end: int) -> int:
    """Offset after the string opening at i, or -1 when it is still open at `end`."""
    quote, j = text[i], i + 1
    while j < end:
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == quote:
            return j + 1
        if ch in "\r\n":
            return -1
        j += 1
    return -1


def context_at(text: str, offset: int) -> Context:
    """The completion context at a character offset (see Context)."""
    end = max(0, min(offset, len(text)))
    stack: list[_Frame] = []
    i = 0
    while i < end:
        ch = text[i]
        if ch in " \t\r\n,:" or ch == "\ufeff":
            if stack and ch == ",":
                top = stack[-1]
                top.state, top.key = ("key", "") if top.is_object else ("value", top.key)
                top.index += 0 if top.is_object else 1
            elif stack and ch == ":" and stack[-1].is_object:
                stack[-1].state = "value"
            i += 1
            continue
        if ch == "#" or text.startswith("//", i):
            nl = text.find("\n", i, end)
            if nl < 0:
                return Context("none")
            i = nl + 1
            continue
        if text.startswith("/*", i):
            close = text.find("*/", i + 2, end)
            if close < 0:
                return Context("none")
            i = close + 2
            continue
        if ch in "{[":
            if len(stack) >= DEFAULT_MAX_DEPTH:  # past what check parses: no completion (each frame holds its
                return Context("none")  # pointer, so a document nested 200k deep cost 1.1 GB and 3 s)
            pointer = stack[-1].child_pointer() if stack else ""
            if stack:
                stack[-1].state = "comma"
            stack.append(_Frame(ch == "{", pointer))
            i += 1
            continue
        if ch in "}]":
            if stack:
                stack.pop()
            i += 1
            continue
        # a string or a bare word (a number, true, an hjson unquoted key or quoteless value)
        if ch in "\"'":
            j = _string_end(text, i, end)
            word, quoted = (text[i + 1:j - 1] if j > 0 else text[i + 1:end]), True
        else:
            j = i
            while j < end and text[j] not in _DELIMS and not text.startswith("//", j) and text[j] != "#":
                j += 1
            j = j if j < end else -1
            word, quoted = (text[i:j] if j > 0 else text[i:end]).strip(), False
        if j < 0:  # the cursor is inside this word
            return _at_word(stack, word, i, quoted, text)
        if stack:
            top = stack[-1]
            if top.is_object and top.state in ("key", "comma"):  # hjson: a newline separates members too
                top.key, top.state = word, "colon"
                top.keys.append(word)
            else:
                top.state = "comma"
        i = j
    if not stack:
        return Context("none")
    top = stack[-1]
    if top.is_object and top.state in ("key", "comma"):
        return Context("key", top.pointer, prefix="", start=end, present=tuple(top.keys) + _keys_after(text, end))
    if top.is_object and top.state == "value":
        return Context("value", top.pointer, top.key, start=end)
    return Context("none")


def _at_word(stack: list[_Frame], word: str, start: int, quoted: bool, text: str = "") -> Context:
    if not stack or not stack[-1].is_object:
        return Context("none")
    top = stack[-1]
    if top.state in ("key", "comma"):
        after = _string_end(text, start, len(text)) if quoted else -1  # past the word's closing quote, if any
        return Context("key", top.pointer, prefix=word, start=start, quoted=quoted,
                       present=tuple(top.keys) + _keys_after(text, after if after > 0 else start + len(word) + quoted))
    if top.state == "value":
        return Context("value", top.pointer, top.key, prefix=word, start=start, quoted=quoted)
    return Context("none")


def _keys_after(text: str, start: int, limit: int = 1 << 20) -> tuple[str, ...]:
    """The keys of the object the cursor is in that come after it (a completion must not offer them again): the
    rest of the member at the cursor is skipped, then each member's key is read, up to the object's closing brace
    (strings and nested values skipped; at most `limit` characters are looked at)."""
    keys: list[str] = []
    depth, i, end = 0, start, min(len(text), start + limit)
    expect_key = False
    while i < end:
        ch = text[i]
        if ch in "\"'":
            j = _string_end(text, i, end)
            if j < 0:
                break
            if depth == 0 and expect_key:
                k = j
                while k < end and text[k] in " \t":
                    k += 1
                if k < end and text[k] == ":":
                    keys.append(text[i + 1:j - 1])
            expect_key = False
            i = j
            continue
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and ch in ",\n":
            expect_key = True
        elif depth == 0 and ch not in " \t\r":
            expect_key = False
        i += 1
    return tuple(keys)


def member_at(doc: Document, offset: int) -> Member | None:
    """The member whose key spans the offset (the cursor on the key or right after it)."""
    root = doc.root
    if root is None:
        return None
    for node in root.walk():
        for m in node.members or ():
            if m.key_start <= offset <= m.key_end:
                return m
    return None
