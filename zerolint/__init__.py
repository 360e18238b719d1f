"""zerolint: a linter and validator for DeepSpeed configuration files."""

__version__ = "0.1.0"

__all__ = ["__version__", "lint"]


def lint(config, **kwargs):
    """Lint a DeepSpeed config (path, JSON text or dict); see `zerolint.api.lint`."""
    from .api import lint as _lint

    return _lint(config, **kwargs)
