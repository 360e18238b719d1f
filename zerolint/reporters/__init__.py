"""Reporters turn diagnostics into text for people and machines. They never change diagnostics."""

from __future__ import annotations

import re

# C0/C1 controls (ANSI escapes), zero-width and bidi controls, lone surrogates (not encodable as UTF-8) and the
# two non-characters XML refuses.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


_TABLES: dict[str, dict[int, str]] = {}


def _table(kind: str) -> dict[int, str]:
    """str.translate tables for the characters _CONTROL matches (built on first use: a C-speed pass even when a
    multi-megabyte value is full of escapes)."""
    if kind not in _TABLES:
        codes = [c for lo, hi in ((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), (0x200B, 0x200F), (0x202A, 0x202E),
                                  (0x2066, 0x2069), (0xD800, 0xDFFF), (0xFFFE, 0xFFFF)) for c in range(lo, hi + 1)]
        _TABLES[kind] = {c: ("\\x%02x" % c if c < 0x100 and kind == "safe" else "\\u%04x" % c) for c in codes}
    return _TABLES[kind]


def safe(text: str) -> str:
    """Make text from a config safe to print: control characters (ANSI escapes, bidi overrides) become visible
    escapes so that a key cannot repaint the user's terminal."""
    return text if _CONTROL.search(text) is None else text.translate(_table("safe"))


def json_safe(text: str) -> str:
    """JSON output (json.dumps with ensure_ascii=False) made safe to print and to write as UTF-8: the characters
    `safe()` escapes, which json.dumps leaves raw (DEL, C1, bidi, lone surrogates), become \\uXXXX escapes. They can
    only occur inside JSON strings, so the document still decodes to the same values."""
    return text if _CONTROL.search(text) is None else text.translate(_table("json"))


FORMATS = ("text", "json", "sarif", "github", "junit")
