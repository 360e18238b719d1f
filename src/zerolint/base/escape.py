"""Text from a config made safe to print: escapes for control, bidi and line-break characters."""

from __future__ import annotations

import re

# C0/C1 controls (ANSI escapes), zero-width and bidi controls, the line and paragraph separators U+2028/U+2029
# (editors, JavaScript and GitHub's log viewer break lines there), lone surrogates (not encodable as UTF-8) and the
# two non-characters XML refuses. LF and tab are left to the callers: multi-line texts keep their lines.
# Patterns, not compiled: `re` compiles them on first use and caches them (a clean check prints no config text and
# would spend ~0.4 ms compiling this class at import).
_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
_LINE_BREAK = r"[\n\r]"


_TABLES: dict[str, dict[int, str]] = {}


def _table(kind: str) -> dict[int, str]:
    """str.translate tables for the characters _CONTROL matches (built on first use: a C-speed pass even when a
    multi-megabyte value is full of escapes)."""
    if kind not in _TABLES:
        codes = [c for lo, hi in ((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), (0x200B, 0x200F), (0x2028, 0x202E),
                                  (0x2066, 0x2069), (0xD800, 0xDFFF), (0xFFFE, 0xFFFF)) for c in range(lo, hi + 1)]
        _TABLES[kind] = {c: ("\\x%02x" % c if c < 0x100 and kind == "safe" else "\\u%04x" % c) for c in codes}
    return _TABLES[kind]


def safe(text: str) -> str:
    """Make text from a config safe to print: control characters (ANSI escapes, bidi overrides) become visible
    escapes so that a key cannot repaint the user's terminal."""
    return text if re.search(_CONTROL, text) is None else text.translate(_table("safe"))


def safe_line(text: str) -> str:
    """`safe()` for text that must stay on one line (file names in messages, a finding's message): a name holding a
    newline could otherwise print a line of its own, e.g. a fake finding or a `::workflow-command::` in CI."""
    text = safe(text)
    if re.search(_LINE_BREAK, text) is None:
        return text
    return text.replace("\r", "\\r").replace("\n", "\\n")


def json_safe(text: str) -> str:
    """JSON output (json.dumps with ensure_ascii=False) made safe to print and to write as UTF-8: the characters
    `safe()` escapes, which json.dumps leaves raw (DEL, C1, bidi, lone surrogates), become \\uXXXX escapes. They can
    only occur inside JSON strings, so the document still decodes to the same values."""
    return text if re.search(_CONTROL, text) is None else text.translate(_table("json"))


_WORD_JOINER = "\u2060"  # invisible: breaks GitHub's @mention and bare-URL autolink detection, shows nothing


def markdown_inert(text: str) -> str:
    """Text from a config or a pull request (key names, values DeepSpeed's errors echo, file names) made inert in
    GitHub Markdown: job summaries and review bodies render it, so `[x](https://...)` would be a link,
    `![](https://...)` an image fetched by every reader, `<img ...>` HTML and `@someone` a mention. Brackets and
    angle brackets are backslash-escaped, and a word joiner goes after `@` and into `://` and `www.`. Control
    characters are escaped first (safe())."""
    text = safe(text)
    for ch in ("\\", "[", "]", "<", ">"):
        text = text.replace(ch, "\\" + ch)
    text = re.sub(r"@(?=[A-Za-z0-9_-])", "@" + _WORD_JOINER, text)
    return re.sub(r"(?i)(:)(//)|(www)(\.)", lambda m: (m.group(1) or m.group(3)) + _WORD_JOINER
                  + (m.group(2) or m.group(4)), text)
