"""The base of the errors zerolint raises for bad input (an unreadable file, a broken zerolint config, a bad
TrainingArguments dump, a config that fails `check_or_raise`): `except zerolint.ZerolintError` catches them all."""

from __future__ import annotations


class ZerolintError(Exception):
    """Bad input zerolint refused, with a message that says what and where."""
