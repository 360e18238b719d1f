"""Reporters turn diagnostics into text for people and machines. They never change diagnostics."""

from __future__ import annotations

import re

# C0/C1 controls (ANSI escapes), zero-width and bidi controls, lone surrogates (not encodable as UTF-8) and the
# two non-characters XML refuses.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def safe(text: str) -> str:
    """Make text from a config safe to print: control characters (ANSI escapes, bidi overrides) become visible
    escapes so that a key cannot repaint the user's terminal."""
    return _CONTROL.sub(lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x100 else "\\u%04x" % ord(m.group()),
                        text)


FORMATS = ("text", "json", "sarif", "github", "junit")
