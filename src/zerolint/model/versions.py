"""DeepSpeed versions: parse, compare, match a rule's version range, find the installed one without importing it."""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache, total_ordering

DEFAULT_DEEPSPEED_VERSION = "0.19.8"
# Minor lines we ship a generated schema for (schemas/deepspeed-<line>.json), oldest first.
SCHEMA_LINES = ("0.14", "0.15", "0.16", "0.17", "0.18", "0.19")


@total_ordering
class Version:
    __slots__ = ("parts", "text")

    def __init__(self, text: str) -> None:
        m = re.match(r"^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", str(text))
        if not m:
            raise ValueError(f"not a version: {text!r} (expected X.Y.Z, e.g. 0.19.8)")
        self.parts = tuple(int(p or 0) for p in m.groups())
        self.text = ".".join(map(str, self.parts))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self.parts == other.parts

    def __lt__(self, other: "Version") -> bool:
        return self.parts < other.parts

    def __hash__(self) -> int:
        return hash(self.parts)

    def __repr__(self) -> str:
        return f"Version({self.text!r})"

    def __str__(self) -> str:
        return self.text

    @property
    def line(self) -> str:
        return f"{self.parts[0]}.{self.parts[1]}"


def matches(version: Version, spec: str) -> bool:
    """'>=0.19.7', '<0.17.1', '>=0.15,<0.19.7' or '' / '*' (any)."""
    return _matches(version, spec)


@lru_cache(maxsize=1024)  # every rule asks on every file, with the same few (version, spec) pairs
def _matches(version: Version, spec: str) -> bool:
    spec = spec.strip()
    if spec in ("", "*"):
        return True
    for clause in spec.split(","):
        m = re.match(r"^\s*(>=|<=|==|!=|>|<)\s*([\d.]+)\s*$", clause)
        if not m:
            raise ValueError(f"bad version range {spec!r}")
        op, other = m.group(1), Version(m.group(2))
        ok = {
            ">=": version >= other, "<=": version <= other, ">": version > other, "<": version < other,
            "==": version == other, "!=": version != other,
        }[op]
        if not ok:
            return False
    return True


# deepspeed-0.19.8.dist-info, deepspeed-0.14.0.egg-info, deepspeed-0.9.5-py3.10.egg: a name, its version, the kind
_DIST_DIR = re.compile(r"([A-Za-z0-9][A-Za-z0-9._]*?)-([0-9][^-]*?)(?:-py[0-9.]+(?:-[^.]+)?)?"
                       r"\.(?:dist-info|egg-info|egg)")


def _normal(name: str) -> str:
    """A distribution name as its metadata directory spells it, compared case- and separator-blind (PEP 503)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def installed_version(dist: str) -> str | None:
    """An installed distribution's version (the package is never imported: torch and transformers take seconds,
    may initialise a GPU or run code), None when it is not installed. Read from the name of its metadata directory,
    the first one along sys.path, as importlib.metadata would find it, but without importing importlib.metadata
    (email, zipfile, csv, ...: about 15 ms of every `zerolint check` of a config holding "auto", which asks for
    transformers' version). A `NAME.egg-info` without a version in its name (a `setup.py develop` checkout) is read
    from its PKG-INFO."""
    want = _normal(dist)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file, a missing directory
            continue
        for name in names:
            if name[:1].lower() != want[0] or not _normal(name).startswith(want):  # (the first letter: cheap)
                continue
            m = _DIST_DIR.fullmatch(name)
            if m and _normal(m.group(1)) == want:
                return m.group(2).replace("_", "-")
            if _normal(name) == want + "_egg_info":
                try:
                    with open(os.path.join(entry or ".", name, "PKG-INFO"), encoding="utf-8") as f:
                        for line in f:
                            if line.startswith("Version:"):
                                return line.split(":", 1)[1].strip()
                except OSError:
                    continue
    return None


def installed_deepspeed() -> str | None:
    """The installed deepspeed's version (never imports deepspeed)."""
    return installed_version("deepspeed")


def package_version(settings, dist: str) -> str | None:
    """A distribution's version on the training machine: Settings.packages where it names `dist` (None there: not
    installed), else this environment's metadata (installed_version)."""
    known = getattr(settings, "packages", None)
    if known is not None and dist in known:
        return known[dist]
    return installed_version(dist)


def installed_torch() -> str | None:
    """The installed torch's version without a local suffix ("2.11.0+cu130" -> "2.11.0"); None when not installed."""
    found = installed_version("torch")
    return found.split("+", 1)[0] if found else None


def torch_version(settings) -> Version | None:
    """The torch version a finding assumes: Settings.torch_version, else the installed one; None when unknown."""
    asked = getattr(settings, "torch_version", None)
    found = asked.split("+", 1)[0] if asked else installed_torch()
    return Version(found) if found else None


def coverage_note(version: Version, uses: str = "checks with the {line} line's schema and facts") -> str | None:
    """A plain note for a version outside the lines zerolint has facts for (None inside them): which line's facts
    and schema are used instead."""
    if version.line in SCHEMA_LINES:
        return None
    used = schema_line(version)
    side = "older" if version < Version(SCHEMA_LINES[0]) else "newer"
    return (f"DeepSpeed {version.text} is {side} than the lines zerolint has facts for ({SCHEMA_LINES[0]} to "
            f"{SCHEMA_LINES[-1]}): it {uses.format(line=used)}, so what changed between "
            f"{version.line} and {used} is not known to it")


def schema_line(version: Version) -> str:
    """The schema line that describes `version`: its own, else the nearest one we ship."""
    if version.line in SCHEMA_LINES:
        return version.line
    lines = [Version(x) for x in SCHEMA_LINES]
    return (lines[0] if version < lines[0] else lines[-1]).line
