"""Plain value classes for the modules a one-file `check` imports.

`dataclasses` costs a one-file check about a quarter of its time: importing it brings `inspect` (and with it `ast`,
`dis`, `tokenize`, `linecache`), and every decorated class has its methods generated and compiled at import time
(docs/benchmarks.md, "A normal install"). The classes on that path write their `__init__` by hand instead and take
equality, hashing and repr from here, driven by the field names they list in `_fields`.

`Record` compares and prints by `_fields`; `_extra` names what `__init__` also takes but is not part of the value
(not compared, not printed). `Frozen` also refuses assignment after `__init__` and hashes by value; its `__init__`
sets fields through `_set`. `replace(record, **changes)` is `dataclasses.replace` for both.
"""

from __future__ import annotations


class Record:
    """A mutable value: equal when of the same class with equal fields; unhashable, like a dataclass with eq."""

    _fields: tuple[str, ...] = ()
    _extra: tuple[str, ...] = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable: as a dataclass with eq=True and not frozen

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({inner})"


class Frozen(Record):
    """An immutable value: assignment after construction raises AttributeError; hashable by its fields."""

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {self.__class__.__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {self.__class__.__name__} is immutable")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())


def replace(record, **changes):
    """A copy of `record` with some fields changed (the others as they are), built through its `__init__`."""
    names = (*record._fields, *record._extra)
    unknown = sorted(set(changes) - set(names))
    if unknown:
        raise TypeError(f"{record.__class__.__name__} has no field(s) {', '.join(unknown)}")
    values = {name: getattr(record, name) for name in names}
    values.update(changes)
    return record.__class__(**values)
