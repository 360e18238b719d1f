"""Template placeholders: values a templating step replaces before DeepSpeed reads the file."""

from __future__ import annotations

import re as _re

# -- template placeholders ----------------------------------------------------------------------------------------
# Shapes of a value that a templating step (sed, envsubst, Jinja, Python %-format) replaces before the file is
# used. A whole value must match; `${HOME}/logs` inside a longer string is not a placeholder value.
_PLACEHOLDER_ANY = (
    r"\$\{[^{}]+\}"                          # ${zero_stage}  (shell, envsubst)
    r"|\$[A-Za-z_][A-Za-z0-9_]*"               # $ZERO_STAGE
    r"|\{\{.*\}\}"                             # {{ zero_stage }}  (Jinja, Helm)
    r"|\{%.*%\}"                               # {% ... %}
    r"|%\([A-Za-z_][A-Za-z0-9_]*\)[sdifr]"     # %(batch)d  (Python %-format)
    r"|<[A-Za-z_][A-Za-z0-9_ .\-]*>"           # <BATCH_SIZE>
    r"|@[A-Za-z_][A-Za-z0-9_]*@"               # @BATCH@  (autoconf)
)
# Only for hjson quoteless strings (a JSON file cannot hold them, so they were never meant as strings):
# CONFIG_BATCH_SIZE, FP16_ENABLE. At least one underscore, so DeepSpeed's own upper-case values (WARN, FAIL,
# MOCK, REPLICA) do not count.
_PLACEHOLDER_BARE = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"


def __getattr__(name: str):  # PLACEHOLDER_ANY / PLACEHOLDER_BARE, compiled on first use (~1 ms of every run)
    if name == "PLACEHOLDER_ANY":
        return _re.compile(_PLACEHOLDER_ANY, _re.S)
    if name == "PLACEHOLDER_BARE":
        return _re.compile(_PLACEHOLDER_BARE)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def placeholder_text(value: object, quoteless: bool) -> str | None:
    """The template placeholder a whole string value is, or None. hjson makes a quoteless value run to the end of
    the line, so `CONFIG_BATCH_SIZE,` holds the comma: it is stripped before matching."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if quoteless:
        text = text.rstrip(",").rstrip()
    # Every PLACEHOLDER_ANY form starts with one of these: most values never need the (costly to compile) pattern.
    if text[:1] in ("$", "{", "%", "<", "@") and _re.fullmatch(_PLACEHOLDER_ANY, text, _re.S):
        return text
    if quoteless and _re.fullmatch(_PLACEHOLDER_BARE, text):
        return text
    return None
