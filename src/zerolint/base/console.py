"""Printing a message as click.echo does, without importing click (the fast `check` path never imports it).

Kept to what zerolint prints (str messages): the text and a newline, ANSI styles removed when the stream is not a
terminal, then a flush. Behaves like click.echo for these, so a command prints the same bytes on either path.
"""

from __future__ import annotations

import sys

_ANSI = None


def echo(message: str = "", nl: bool = True, err: bool = False, color: bool = False) -> None:
    """click.echo's contract: escape sequences are stripped when the stream is not a terminal, unless `color`
    (--color always, FORCE_COLOR)."""
    file = sys.stderr if err else sys.stdout
    if file is None:  # no standard stream attached (pythonw)
        return
    out = message + "\n" if nl else message
    if not out:
        file.flush()
        return
    if not color and "\033" in out and not _isatty(file):
        out = _strip_ansi(out)
    if _misconfigured(file):  # an ASCII stream (LANG=C on an old system, PYTHONIOENCODING=ascii): click writes UTF-8
        file.flush()
        file.buffer.write(out.encode("utf-8", "replace"))
        file.buffer.flush()
        return
    file.write(out)
    file.flush()


def _misconfigured(stream) -> bool:
    encoding = getattr(stream, "encoding", None)
    if not isinstance(encoding, str) or not hasattr(stream, "buffer") or encoding.lower() == "utf-8":
        return False
    import codecs

    try:
        return codecs.lookup(encoding).name == "ascii"
    except LookupError:
        return True


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except Exception:
        return False


def _strip_ansi(text: str) -> str:
    global _ANSI
    if _ANSI is None:
        import re

        _ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")  # click._compat._ansi_re
    return _ANSI.sub("", text)
