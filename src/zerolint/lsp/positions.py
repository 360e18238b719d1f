"""Character offsets (Python str indices, as zerolint's Document and edits use them) <-> LSP positions.

LSP counts a position's character in UTF-16 code units by default (a character outside the BMP, such as an
emoji, is two), and ends a line at "\\n", "\\r\\n" or "\\r" (specification 3.17, "Text Documents").
"""

from __future__ import annotations

import re
from bisect import bisect_right

_BREAK = re.compile(r"\r\n|\r|\n")


def utf16_len(s: str) -> int:
    """UTF-16 code units of `s`: one per character, two for a character above U+FFFF."""
    return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)


class LineIndex:
    """Line starts of one text, for converting offsets both ways."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _BREAK.finditer(text)]

    def position(self, offset: int) -> tuple[int, int]:
        """(line, UTF-16 character), both 0-based, of a character offset (clamped into the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        return line, utf16_len(self.text[self.starts[line]:offset])

    def offset(self, line: int, character: int) -> int:
        """The character offset of an LSP position. A character past the line's end means the end of the line
        (before its break), and a line past the last one the end of the text, as the specification asks."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        content = self.text[start:end].rstrip("\r\n")
        units = 0
        for i, ch in enumerate(content):
            if units >= character:
                return start + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return start + len(content)

    def line_character(self, line: int, column: int) -> tuple[int, int]:
        """An LSP position from zerolint's 1-based (line, column in characters), e.g. of a Related location."""
        if line - 1 >= len(self.starts):
            return self.position(len(self.text))
        start = self.starts[max(0, line - 1)]
        return self.position(start + max(0, column - 1))
