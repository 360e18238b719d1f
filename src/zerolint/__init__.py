"""zerolint: a linter and validator for DeepSpeed configuration files."""

from .base.version import __version__

__all__ = ["__version__", "lint", "check_or_raise", "DeepSpeedConfigError"]


def lint(config, **kwargs):
    """Lint a DeepSpeed config (path, JSON text or dict); see `zerolint.api.lint`."""
    from .api import lint as _lint

    return _lint(config, **kwargs)


def check_or_raise(training_args=None, config=None, **kwargs):
    """Call before `Trainer(...)`: lint the DeepSpeed config the run will use (default: `training_args.deepspeed`)
    against DeepSpeed, the HF Trainer and these TrainingArguments; raise `DeepSpeedConfigError` listing every error.
    See `zerolint.hf.check_or_raise`."""
    from .api import check_or_raise as _check

    return _check(training_args, config, **kwargs)


def __getattr__(name):
    if name == "DeepSpeedConfigError":
        from .api import DeepSpeedConfigError

        return DeepSpeedConfigError
    raise AttributeError(f"module 'zerolint' has no attribute {name!r}")
