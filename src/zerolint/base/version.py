"""zerolint's version, in the bottom layer so that every layer can print it."""

__version__ = "0.2.0"

REPOSITORY = "https://github.com/zerolint/zerolint"


def install_hint(extra: str) -> str:
    """How to get an extra, both ways: from the package index (once zerolint is published there) and from the
    repository, which works today (README, "Install")."""
    return (f"pip install 'zerolint[{extra}]' (from PyPI, once published), or today pip install "
            f"'zerolint[{extra}] @ git+{REPOSITORY}' (from a clone: pip install '.[{extra}]')")
