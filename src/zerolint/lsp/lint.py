"""The pipeline in-process for one open document: the settings of the document's own directory (`[tool.zerolint]`
/ `.zerolint.toml` found upward, as `check` finds them), the server's command-line options over them, the same
rules, suppressions and baseline as `zerolint check`, on the editor's text rather than the file on disk.

A `DocumentLinter` keeps one Pipeline (settings files are read once, not on every keystroke) until a settings file
changes (`reset`)."""

from __future__ import annotations

import os

from ..base.fsio import UnreadableFile
from ..base.record import Record
from ..model.detect import is_yaml
from ..model.diagnostics import Diagnostic
from ..model.document import Document, parse
from ..pipeline import FileSetup, Options, Pipeline, Result, lint_bytes
from ..project.settings import CONFIG_NAMES, DEFAULT_BASELINE, ConfigError
from . import detect

SETTINGS_FILES = (*CONFIG_NAMES, DEFAULT_BASELINE)


class Outcome(Record):
    """One lint of one document's text. `claimed`: the document is a DeepSpeed config (detect.py); when not,
    `diagnostics` is empty. `problem`: why it could not be linted (a broken zerolint settings file), else ""."""

    _fields = ("path", "text", "document", "diagnostics", "claimed", "setup", "problem")
    path: str
    text: str
    document: Document | None
    diagnostics: list[Diagnostic]
    claimed: bool
    setup: FileSetup | None
    problem: str

    def __init__(self, path: str, text: str, document: Document | None, diagnostics: list[Diagnostic],
                 claimed: bool, setup: FileSetup | None = None, problem: str = "") -> None:
        self.path = path
        self.text = text
        self.document = document
        self.diagnostics = diagnostics
        self.claimed = claimed
        self.setup = setup
        self.problem = problem


class DocumentLinter:
    """`target`, `deepspeed_version`, `world_size`: the server's options (None: each document's settings decide);
    `isolated`: read no settings file in the tree (for untrusted checkouts, as `check --isolated`)."""

    def __init__(self, target: str | None = None, deepspeed_version: str | None = None,
                 isolated: bool = False, world_size: int | None = None) -> None:
        self.options = Options(target=target, deepspeed_version=deepspeed_version, isolated=isolated, uses=True,
                               world_size=world_size)
        self._pipeline: Pipeline | None = None

    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            self._pipeline = Pipeline(self.options)
        return self._pipeline

    def reset(self) -> None:
        """Forget the settings read so far (a settings file or a baseline changed)."""
        self._pipeline = None

    def uses_changed(self) -> None:
        """A file that may use a config changed: its repository's uses are read again on the next lint."""
        if self._pipeline is not None:
            self._pipeline.forget_uses()

    def uses_of(self, path: str) -> list:
        return self.pipeline().uses_of(path) if path != "-" else []

    @staticmethod
    def is_settings_file(path: str) -> bool:
        return os.path.basename(path) in SETTINGS_FILES

    def setup(self, path: str) -> FileSetup:
        """Raises ConfigError for a broken settings file."""
        return self.pipeline().setup(path)

    def lint(self, path: str, text: str) -> Outcome:
        """`path`: the document's file ("-" when it has none: the working directory's settings apply). A text over
        the size limit is not parsed at all (check refuses such a file the same way: ZL007)."""
        limit = self.options.limits.max_bytes
        # (bytes >= characters, and at most 4 per character: the encode only when the count alone cannot tell)
        if len(text) > limit or (4 * len(text) > limit and len(text.encode("utf-8", errors="replace")) > limit):
            return Outcome(path, text, None, [], True, problem=f"the document is larger than the {limit:,}-byte "
                                                               "limit; it is not checked")
        if is_yaml(path):
            return self._lint_yaml(path, text)
        doc = parse(text, path)
        if not detect.claims(path, doc):
            return Outcome(path, text, doc, [], False)
        try:
            s = self.setup(path)
            # The editor's text, encoded as the file would be: offsets stay character offsets into `text`.
            result = lint_bytes(text.encode("utf-8", errors="replace"), path, s.settings, s.selection, s.limits,
                                s.rules)
            assert result.document is not None  # lint_bytes always parses one
            used = self.pipeline().as_used(result.document, s) if path != "-" else None
            if used is not None:  # checked as the repository's launch lines and code use it (docs/uses.md)
                result = Result(path, result.document, used)
            kept, _unused = self.pipeline().suppressions().apply([result])
        except ConfigError as e:
            return Outcome(path, text, doc, [], True, problem=str(e))
        return Outcome(path, text, result.document, kept, True, s)

    def _lint_yaml(self, path: str, text: str) -> Outcome:
        """An Accelerate YAML is linted from disk (the pipeline reads it and the DeepSpeed file it names), so its
        findings follow the saved file: while the buffer differs from it, nothing is reported."""
        if not detect.claims_yaml(text) or path == "-":
            return Outcome(path, text, None, [], False)
        from ..base.fsio import Limits, read_bytes

        try:  # a regular file only, within the size limit (a FIFO there would hang the server: read_bytes)
            saved = read_bytes(path, Limits(max_bytes=len(text.encode("utf-8", errors="replace")) + 1)).decode("utf-8")
        except (UnreadableFile, UnicodeDecodeError):
            saved = None
        if saved != text:
            return Outcome(path, text, None, [], True)
        try:
            results = self.pipeline().lint_one(path)
        except ConfigError as e:
            return Outcome(path, text, None, [], True, problem=str(e))
        except UnreadableFile as e:
            return Outcome(path, text, None, [], True, problem=str(e))
        own = results[0]
        kept, _unused = self.pipeline().suppressions().apply([own])
        return Outcome(path, text, own.document, kept, True, self.setup(path))

    def fix_all(self, path: str, text: str) -> str | None:
        """The text after every safe fix (`zerolint check --fix`), or None when nothing changes."""
        from ..fix.engine import fix_text

        if is_yaml(path) or not detect.claims(path, parse(text, path)):
            return None
        try:
            s = self.setup(path)
        except ConfigError:
            return None
        hidden = self.pipeline().suppressions().hides(path)
        result = fix_text(text, path, s.settings, s.selection, rules=s.rules, protected=hidden)
        return result.text if result.changed else None
