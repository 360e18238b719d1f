"""The language server over stdio (pygls): diagnostics as you type, quick fixes, hover and completion.

A didChange only records the edit (pygls applies it to its copy of the document) and (re)starts a per-document timer;
when the typing pauses for `debounce` seconds the document is linted once, in a worker thread (one lint at a time),
and its diagnostics published, unless the document changed meanwhile: a superseded lint is dropped, and the lint
of the newer text publishes (a big document took seconds per lint, each published late and stale). Opening or saving
a document lints it at once. Nothing else is read from disk while typing: the settings are read once per settings file
(lint.DocumentLinter) and re-read when one is saved or the client reports it changed; the repository's uses of the
configs (launch lines, YAMLs, training code: project/uses.py) are read once and again when the client reports such a
file changed (the server asks for those reports where the client takes dynamic registrations).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from ..base.version import __version__
from ..model.view import default_deepspeed_version
from ..project.uses import SHELL_NAMES, SHELL_SUFFIXES
from . import convert, cursor, schema_help
from .lint import DocumentLinter, Outcome
from .positions import LineIndex

DEFAULT_DEBOUNCE = 0.1  # seconds of quiet typing before a lint
USE_SUFFIXES = (*SHELL_SUFFIXES, ".py")  # files whose change may change a config's uses (project/uses.py)
_LANGUAGES_NOTE = "JSON, hjson and Accelerate YAML documents that are DeepSpeed configs (lsp/detect.py)"


class _Answered:
    """A request already answered with an error: the message loop sees a message it does not handle."""

    jsonrpc = "answered"


class ZerolintProtocol(LanguageServerProtocol):
    """pygls' protocol, but a request whose parameters do not parse gets a JSON-RPC error reply (-32602 Invalid
    params), as the specification asks, instead of no reply, which leaves the editor waiting for its own timeout."""

    def structure_message(self, data: dict[str, Any]):
        try:
            return super().structure_message(data)
        except JsonRpcException as e:
            if "id" not in data or "method" not in data:
                raise
            self._send_response(data["id"], error=e.to_response_error())
            return _Answered()


class ZerolintServer(LanguageServer):
    def __init__(self, linter: DocumentLinter, debounce: float = DEFAULT_DEBOUNCE) -> None:
        super().__init__("zerolint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=ZerolintProtocol)
        self.linter = linter
        self.debounce = debounce
        self.outcomes: dict[str, Outcome] = {}  # uri -> the last lint of that document
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.lint_lock = threading.Lock()  # the linter's caches are not shared between two lints at once

    # -- linting --------------------------------------------------------------------------------------------------

    def path_of(self, uri: str) -> str:
        path = self.workspace.get_text_document(uri).path
        return path if uri.startswith("file:") and path else "-"

    def outcome(self, uri: str) -> Outcome:
        """The lint of the document's current text (the last one, unless the text changed since)."""
        doc = self.workspace.get_text_document(uri)
        last = self.outcomes.get(uri)
        if last is None or last.text != doc.source:
            with self.lint_lock:
                last = self.outcomes[uri] = self.linter.lint(self.path_of(uri), doc.source)
        return last

    def publish_later(self, uri: str) -> None:
        """The debounced publication: lint in a worker thread, publish only if the text is still the one linted."""
        self.timers.pop(uri, None)
        if uri not in self.workspace.text_documents:
            return
        doc = self.workspace.get_text_document(uri)
        text, path = doc.source, self.path_of(uri)

        def lint() -> Outcome:
            with self.lint_lock:
                return self.linter.lint(path, text)

        def done(future: asyncio.Future) -> None:
            if future.cancelled() or future.exception() is not None or uri not in self.workspace.text_documents:
                return
            if self.workspace.get_text_document(uri).source != text:
                return  # superseded: the newer text's own lint publishes
            self.outcomes[uri] = future.result()
            self.publish(uri)

        asyncio.get_running_loop().run_in_executor(None, lint).add_done_callback(done)

    def publish(self, uri: str) -> None:
        self.timers.pop(uri, None)
        if uri not in self.workspace.text_documents:
            return  # closed while the timer ran
        doc = self.workspace.get_text_document(uri)
        out = self.outcome(uri)
        index = LineIndex(out.document.text if out.document is not None else out.text)
        from ..report.cap import MAX_PER_FILE, cap_findings

        kept, capped = cap_findings(out.diagnostics, {}, per_file=MAX_PER_FILE)  # as check shows them: errors first
        shown = [convert.lsp_diagnostic(d, index, uri) for d in kept]
        if capped.get("not_shown"):
            shown.insert(0, convert.problem_diagnostic(f"zerolint: {capped['not_shown']:,} more findings not shown "
                                                       f"(at most {MAX_PER_FILE:,} per file, errors first)"))
        if out.problem:
            shown.insert(0, convert.problem_diagnostic(f"zerolint: {out.problem}"))
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=doc.version, diagnostics=shown))

    def schedule(self, uri: str) -> None:
        old = self.timers.pop(uri, None)
        if old is not None:
            old.cancel()
        if self.debounce <= 0:
            self.publish(uri)
        else:
            self.timers[uri] = asyncio.get_running_loop().call_later(self.debounce, self.publish_later, uri)

    def settings_changed(self) -> None:
        self.linter.reset()
        self.outcomes.clear()
        for uri in list(self.workspace.text_documents):
            self.publish(uri)

    # -- what the cursor is on ------------------------------------------------------------------------------------

    def version_of(self, out: Outcome) -> str:
        settings = out.setup.settings if out.setup is not None else None
        return (settings.deepspeed_version if settings is not None and settings.deepspeed_version
                else default_deepspeed_version())

    def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        out = self.outcome(uri)
        if not out.claimed or out.document is None:
            return None
        index = LineIndex(out.text)
        offset = index.offset(position.line, position.character)
        parts = []
        member = cursor.member_at(out.document, offset) if out.setup is not None else None
        if member is not None:
            text = schema_help.key_hover(member.pointer, self.version_of(out))
            if text:
                parts.append(text)
        root = out.document.root
        if root is not None and root.start <= offset <= root.start + 1:  # on the top-level object's opening brace
            parts.append(self.uses_hover(out.path))
        for d in out.diagnostics:
            if d.start <= offset <= max(d.end, d.start) and d.rule is not None:
                parts.append(f"**{d.code}** `{d.name}`: {d.rule.summary}\n\n{d.rule.rationale or ''}".rstrip()
                             + (f"\n\nRule page: {d.url}" if d.url else ""))
        if not parts:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value="\n\n---\n\n".join(parts)))

    def uses_hover(self, path: str) -> str:
        """The top-level object's hover: where the repository uses this config and what was read from each use."""
        with self.lint_lock:
            uses = self.linter.uses_of(path)
        if not uses:
            return ("**Uses**: none found in the repository (launch lines, framework YAMLs, training code): the "
                    "consumer is guessed from the file's content (docs/uses.md)")
        lines = ["**Uses** (checked as each one reads it; docs/uses.md):", ""]
        for use in uses:
            lines.append(f"- `{use.describe()}`")
            lines.extend(f"  - {detail}" for detail in use.details())
        return "\n".join(lines)

    def uses_changed(self) -> None:
        """A launch script, YAML or training file changed on disk: read the uses again and re-lint every open
        config."""
        with self.lint_lock:
            self.linter.uses_changed()
        self.outcomes.clear()
        for uri in list(self.workspace.text_documents):
            self.publish(uri)

    def complete(self, uri: str, position: types.Position) -> list[types.CompletionItem]:
        out = self.outcome(uri)
        if not out.claimed or out.setup is None:
            return []
        index = LineIndex(out.text)
        offset = index.offset(position.line, position.character)
        ctx = cursor.context_at(out.text, offset)
        version = self.version_of(out)
        start = types.Position(*index.position(ctx.start))
        where = types.Range(start=start, end=position)
        if ctx.kind == "key":
            node = out.document.node(ctx.section) if out.document is not None else None
            present = set(ctx.present) | set(node.keys() if node is not None and node.members else ())
            present.discard(ctx.prefix)
            items = schema_help.key_items(ctx.section, version, present)
            return [types.CompletionItem(
                label=i.label, kind=types.CompletionItemKind.Property, detail=i.detail,
                documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=i.documentation),
                tags=[types.CompletionItemTag.Deprecated] if i.deprecated else None, sort_text=f"{i.order:04d}",
                filter_text=f'"{i.label}"' if ctx.quoted else i.label,
                text_edit=types.TextEdit(range=where, new_text=f'"{i.label}"')) for i in items]
        if ctx.kind == "value":
            return [types.CompletionItem(
                label=i.label, kind=types.CompletionItemKind.Value, detail=i.detail or None,
                sort_text=f"{i.order:04d}", text_edit=types.TextEdit(range=where, new_text=i.label))
                for i in schema_help.value_items(ctx.pointer, version)]
        return []

    def actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        out = self.outcome(uri)
        if not out.claimed:
            return []
        index = LineIndex(out.text)
        only = params.context.only
        found: list[types.CodeAction] = []
        if not only or any(str(k).startswith("quickfix") for k in only):
            found += convert.code_actions(out.diagnostics, index, uri, params.range)
        if not only or any(convert.FIX_ALL_KIND.startswith(str(k)) for k in only):
            if any(f.safe for d in out.diagnostics for f in d.fixes):
                fixed = self.linter.fix_all(self.path_of(uri), out.text)
                if fixed is not None:
                    found.append(convert.fix_all_action(uri, index, fixed))
        return found


def build(target: str | None = None, deepspeed_version: str | None = None, isolated: bool = False,
          debounce: float = DEFAULT_DEBOUNCE, world_size: int | None = None) -> ZerolintServer:
    server = ZerolintServer(DocumentLinter(target, deepspeed_version, isolated, world_size), debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ZerolintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ZerolintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: ZerolintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.linter.is_settings_file(ls.path_of(uri)):
            ls.settings_changed()
        else:
            ls.outcomes.pop(uri, None)  # an Accelerate YAML is linted from disk: re-read it
            with ls.lint_lock:  # and the uses again: a client that reports no watched files changes them unseen
                ls.linter.uses_changed()
            ls.publish(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ZerolintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        timer = ls.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        ls.outcomes.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: ZerolintServer, params: types.DidChangeWatchedFilesParams) -> None:
        names = [c.uri.rsplit("/", 1)[-1] for c in params.changes]
        if any(ls.linter.is_settings_file(n) for n in names):
            ls.settings_changed()
        elif any(n.endswith(USE_SUFFIXES) or n in SHELL_NAMES for n in names):
            ls.uses_changed()

    @server.feature(types.INITIALIZED)
    def initialized(ls: ZerolintServer, params: types.InitializedParams) -> None:
        """Ask the client to report changes to the files that use configs (where it can be asked): a config is
        linted again when its launch script or training code changes."""
        caps = ls.client_capabilities.workspace
        watch = caps.did_change_watched_files if caps is not None else None
        if watch is None or not watch.dynamic_registration:
            return
        watchers = [types.FileSystemWatcher(glob_pattern=f"**/*{suffix}") for suffix in USE_SUFFIXES]
        ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
            id="zerolint-uses", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: ZerolintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=['"', ":", " "]))
    def completion(ls: ZerolintServer, params: types.CompletionParams) -> types.CompletionList:
        return types.CompletionList(is_incomplete=False,
                                    items=ls.complete(params.text_document.uri, params.position))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, convert.FIX_ALL_KIND]))
    def code_action(ls: ZerolintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.actions(params)

    return server


def serve(**options: Any) -> None:
    """Serve LSP on stdin/stdout until the client says exit."""
    build(**options).start_io()
