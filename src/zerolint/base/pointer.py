"""RFC 6901 JSON pointers: build, split and escape."""

from __future__ import annotations


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def join(base: str, token: str | int) -> str:
    return f"{base}/{escape(str(token))}"


def split(pointer: str) -> list[str]:
    """'/a/b~1c' -> ['a', 'b/c']; '' -> []."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    return [unescape(t) for t in pointer[1:].split("/")]


def from_path(*tokens: str | int) -> str:
    return "".join(f"/{escape(str(t))}" for t in tokens)


def parent(pointer: str) -> str:
    return pointer[: pointer.rfind("/")] if pointer else ""


def last(pointer: str) -> str:
    return unescape(pointer[pointer.rfind("/") + 1 :]) if pointer else ""
