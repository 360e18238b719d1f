"""zerolint: a linter and validator for DeepSpeed configuration files.

The API (zerolint/api.py) is loaded on first use, so that `import zerolint` stays cheap: `lint`, `lint_text`,
`lint_path`, `check_or_raise`, and the errors, all subclasses of `ZerolintError`."""

from .base.version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:  # what a type checker sees: the real signatures, not **kwargs
    from .api import DeepSpeedConfigError, check_or_raise, lint, lint_path, lint_text
    from .base.errors import ZerolintError
    from .base.fsio import UnreadableFile
    from .model.diagnostics import Diagnostic, Severity
    from .model.trainer import TrainingArgsError
    from .project.settings import ConfigError

__all__ = ["__version__", "lint", "lint_text", "lint_path", "check_or_raise", "Diagnostic", "Severity",
           "ZerolintError", "DeepSpeedConfigError", "UnreadableFile", "ConfigError", "TrainingArgsError"]

_WHERE = {"lint": "api", "lint_text": "api", "lint_path": "api", "check_or_raise": "api",
          "DeepSpeedConfigError": "api", "ZerolintError": "base.errors", "UnreadableFile": "base.fsio",
          "ConfigError": "project.settings", "TrainingArgsError": "model.trainer", "Diagnostic": "model.diagnostics",
          "Severity": "model.diagnostics"}


def __getattr__(name: str):
    if name in _WHERE:
        from importlib import import_module

        value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value  # once
        return value
    raise AttributeError(f"module 'zerolint' has no attribute {name!r}")
