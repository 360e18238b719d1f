"""`zerolint server` end to end: a real LSP client (pytest-lsp) talks to the server process over stdio. Open a broken
config, get its diagnostics at exact ranges (UTF-16 columns after non-ASCII text), apply a code action, get a clean
file; hover and completion answers; settings from the document's own directory; non-DeepSpeed JSON left alone."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from zerolint.lsp.cursor import context_at
from zerolint.lsp.positions import LineIndex

BROKEN = (
    '{\n'
    '  "train_micro_batch_size_per_gpu": 4, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},\n'
    '  "_note": "héllo 🚀", "offload_optimizer": {"device": "cpu", "pin_memory": true},\n'
    '  "zero_optimization": {"stage": 2}\n'
    '}\n'
)
FIXED = (
    '{\n'
    '  "train_micro_batch_size_per_gpu": 4, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},\n'
    '  "_note": "héllo 🚀",\n'
    '  "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": true}}\n'
    '}\n'
)
URL = "https://github.com/zerolint/zerolint/blob/main/docs/rules/"
SERVER = [sys.executable, "-m", "zerolint", "server", "--debounce-ms", "20"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER[:-1] + ["1000"]))
async def slow_client(lsp_client: LanguageClient):
    """A server that waits a whole second of quiet before linting: a burst of edits sent at once is well inside it."""
    await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


class Published(dict):
    """client.diagnostics that also keeps every publication, in order (pytest-lsp keeps only the last per URI)."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, list]] = []

    def __setitem__(self, uri, diagnostics) -> None:
        self.log.append((uri, [d.code for d in diagnostics]))
        super().__setitem__(uri, diagnostics)


def project(tmp_path: Path, version: str = "0.19.8", name: str = "proj") -> Path:
    """A directory whose [tool.zerolint] pins the DeepSpeed version and turns ZL705 (an info on most configs) off."""
    root = tmp_path / name
    root.mkdir()
    (root / "pyproject.toml").write_text(
        f'[tool.zerolint]\ndeepspeed-version = "{version}"\nignore = ["ZL705"]\n', encoding="utf-8")
    return root


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def rng(l1: int, c1: int, l2: int, c2: int) -> types.Range:
    return types.Range(start=pos(l1, c1), end=pos(l2, c2))


async def open_doc(client: LanguageClient, path: Path, text: str, language: str = "json") -> list[types.Diagnostic]:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


async def change(client: LanguageClient, path: Path, version: int, text: str) -> list[types.Diagnostic]:
    uri = path.as_uri()
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def apply_edits(text: str, edits) -> str:
    """Apply LSP TextEdits the way a client does, counting characters in UTF-16 code units (written here
    independently of the server's own conversion)."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def offset(p: types.Position) -> int:
        start = starts[p.line]
        line = text[start:].split("\n", 1)[0]
        units = line.encode("utf-16-le")[: 2 * p.character]
        return start + len(units.decode("utf-16-le"))

    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


@pytest.mark.asyncio
async def test_broken_config_diagnostics_code_action_then_clean(client: LanguageClient, tmp_path):
    path = project(tmp_path) / "ds_config.json"
    diagnostics = await open_doc(client, path, BROKEN)
    # The emoji before the finding is two UTF-16 code units: the key starts at character 23 (22 code points).
    assert diagnostics == [types.Diagnostic(
        range=rng(2, 23, 2, 42),
        message="offload_optimizer belongs inside zero_optimization; DeepSpeed ignores it at the top level: nothing "
                "is offloaded\nhelp: move \"offload_optimizer\" inside zero_optimization",
        severity=types.DiagnosticSeverity.Error, code="ZL101",
        code_description=types.CodeDescription(href=URL + "ZL101.md"), source="zerolint",
        data={"pointer": "/offload_optimizer", "name": "misplaced-key"})]

    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()), range=diagnostics[0].range,
        context=types.CodeActionContext(diagnostics=diagnostics, only=[types.CodeActionKind.QuickFix])))
    assert [(a.title, a.kind, a.is_preferred) for a in actions] == [
        ("move offload_optimizer inside zero_optimization (ZL101)", types.CodeActionKind.QuickFix, True)]
    assert list(actions[0].diagnostics) == diagnostics
    edits = actions[0].edit.changes[path.as_uri()]
    assert [(e.range, e.new_text) for e in edits] == [
        (rng(2, 22, 2, 82), ""), (rng(3, 34, 3, 34), ', "offload_optimizer": {"device": "cpu", "pin_memory": true}')]
    fixed = apply_edits(BROKEN, edits)
    assert fixed == FIXED
    assert await change(client, path, 2, fixed) == []


@pytest.mark.asyncio
async def test_actions_safe_first_unsafe_marked_alternatives_listed(client: LanguageClient, tmp_path):
    path = tmp_path / "ds_alt.json"  # no settings file: ZL705 (an unsafe fix) is on
    text = ('{"train_batch_size": 8, "fp16": {"enabled": true}, "bf16": {"enabled": true}, '
            '"zero_optimization": {"stage": 2, "stage3_max_live_parameters": 1e9}}\n')
    diagnostics = await open_doc(client, path, text)
    assert [(d.code, d.range) for d in diagnostics] == [
        ("ZL705", rng(0, 0, 0, 1)), ("ZL301", rng(0, 60, 0, 75)), ("ZL203", rng(0, 112, 0, 140))]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()), range=rng(0, 0, 1, 0),
        context=types.CodeActionContext(diagnostics=diagnostics)))
    assert [(a.title, a.kind, a.is_preferred) for a in actions] == [
        ("delete stage3_max_live_parameters (ignored below stage 3) (ZL203)", "quickfix", True),
        ('add "gradient_clipping": 1.0 (the current default) (ZL705, unsafe: changes behaviour)', "quickfix", False),
        ("keep bf16: set fp16.enabled to false (ZL301, one of 2 alternatives, unsafe: changes behaviour)",
         "quickfix", False),
        ("keep fp16: set bf16.enabled to false (ZL301, one of 2 alternatives, unsafe: changes behaviour)",
         "quickfix", False),
        ("Fix all safe zerolint findings", "source.fixAll.zerolint", None),
    ]
    fixed = apply_edits(text, actions[-1].edit.changes[path.as_uri()])
    assert fixed == ('{"train_batch_size": 8, "fp16": {"enabled": true}, "bf16": {"enabled": true}, '
                     '"zero_optimization": {"stage": 2}}\n')
    keep_bf16 = apply_edits(text, actions[2].edit.changes[path.as_uri()])
    assert [d.code for d in await change(client, path, 2, keep_bf16)] == ["ZL705", "ZL203"]


@pytest.mark.asyncio
async def test_hover_key_and_finding(client: LanguageClient, tmp_path):
    path = project(tmp_path) / "ds_config.json"
    await open_doc(client, path, BROKEN)
    uri = types.TextDocumentIdentifier(uri=path.as_uri())
    hover = await client.text_document_hover_async(types.HoverParams(text_document=uri, position=pos(3, 26)))
    assert hover.contents == types.MarkupContent(kind=types.MarkupKind.Markdown, value=(
        "**stage** in `zero_optimization`\n\nChooses different stages of ZeRO Optimizer. Stage 0, 1, 2, and 3 refer "
        "to disabled, optimizer state partitioning, and optimizer+gradient state partitioning, and "
        "optimizer+gradient+parameter partitioning, respectively.\n\n"
        '- type: integer (one of 0, 1, 2, 3) or "auto"\n- default: `0`\n'
        "- DeepSpeed versions: 0.14 to 0.19 (zerolint's schemas cover 0.14 to 0.19)\n"
        '- "auto" is filled by Accelerate\n\n(schema of DeepSpeed 0.19.8)'))
    # On the misplaced key (after the emoji, in UTF-16 units): no schema entry at the top level, the rule instead.
    hover = await client.text_document_hover_async(types.HoverParams(text_document=uri, position=pos(2, 30)))
    value = hover.contents.value
    assert value.startswith("**ZL101** `misplaced-key`: A known key in the wrong section (e.g. offload_optimizer at "
                            "the top level), so it has no effect\n\nA key that DeepSpeed knows, in a section where")
    assert value.endswith("\n\nRule page: " + URL + "ZL101.md")
    # Before the emoji's second half there is nothing to say.
    assert await client.text_document_hover_async(types.HoverParams(text_document=uri, position=pos(2, 21))) is None


async def complete(client: LanguageClient, path: Path, position: types.Position) -> list[types.CompletionItem]:
    result = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=position))
    return list(result.items)


@pytest.mark.asyncio
async def test_completion_keys_by_section_and_values(client: LanguageClient, tmp_path):
    path = project(tmp_path) / "ds_config.json"
    text = '{\n  "zero_optimization": {"stage": 2, "offload_optimizer": {"pin_memory": true, "de'
    await open_doc(client, path, text)
    items = await complete(client, path, pos(1, 81))
    assert [i.label for i in items] == ["device", "nvme_path", "buffer_count", "pipeline_read", "pipeline_write",
                                        "fast_init", "ratio", "super_offload", "cpuadam_cores_perc"]
    assert items[0].text_edit == types.TextEdit(range=rng(1, 78, 1, 81), new_text='"device"')
    assert items[0].detail == 'string (one of "none", "cpu", "nvme") or "auto", default "none"'

    text2 = '{\n  "zero_optimization": {"offload_optimizer": {"device": "n'
    await change(client, path, 2, text2)
    items = await complete(client, path, pos(1, 58))
    assert [(i.label, i.detail) for i in items] == [
        ('"none"', "default"), ('"cpu"', None), ('"nvme"', None), ('"auto"', None)]
    assert items[2].text_edit == types.TextEdit(range=rng(1, 56, 1, 58), new_text='"nvme"')


@pytest.mark.asyncio
async def test_completion_follows_the_documents_deepspeed_version(client: LanguageClient, tmp_path):
    new = project(tmp_path, "0.19.8", "new") / "ds_config.json"
    old = project(tmp_path, "0.18.9", "old") / "ds_config.json"
    text = '{\n  "train_batch_size": 8,\n  \n}\n'
    await open_doc(client, new, text)
    await open_doc(client, old, text)
    labels_new = {i.label for i in await complete(client, new, pos(2, 2))}
    labels_old = {i.label for i in await complete(client, old, pos(2, 2))}
    assert "train_batch_size" not in labels_new | labels_old  # already present
    assert sorted(labels_old - labels_new) == [
        "amp", "compression_training", "curriculum_learning", "elasticity", "graph_harvesting", "nebula",
        "progressive_layer_drop", "sparse_attention", "sparse_gradients"]
    assert sorted(labels_new - labels_old) == [
        "disable_python_gc", "expert_parallel", "gradient_allreduce_op", "log_level", "managed_gradient_accumulation"]


@pytest.mark.asyncio
async def test_other_json_gets_no_diagnostics(client: LanguageClient, tmp_path):
    package = '{"name": "web", "version": "1.0.0", "scripts": {"build": "tsc"}, "optimizer": 1}\n'
    hf_model = '{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "torch_dtype": "bfloat16"}\n'
    assert await open_doc(client, tmp_path / "package.json", package) == []
    assert await open_doc(client, tmp_path / "config.json", hf_model) == []
    # The same kind of file becomes a DeepSpeed config as soon as it has DeepSpeed's keys.
    diagnostics = await change(client, tmp_path / "config.json", 2, '{"train_batch_size": 8, "zero_optimisation": {}}')
    assert [(d.code, d.range) for d in diagnostics] == [("ZL705", rng(0, 0, 0, 1)), ("ZL103", rng(0, 24, 0, 43))]


@pytest.mark.asyncio
async def test_broken_settings_file_is_reported_on_the_document(client: LanguageClient, tmp_path):
    root = tmp_path / "bad"
    root.mkdir()
    (root / ".zerolint.toml").write_text('target = "nope"\n', encoding="utf-8")
    diagnostics = await open_doc(client, root / "ds_config.json", '{"train_batch_size": 8}\n')
    assert len(diagnostics) == 1
    assert (diagnostics[0].range, diagnostics[0].severity, diagnostics[0].code) == (
        rng(0, 0, 0, 0), types.DiagnosticSeverity.Error, "settings")
    assert diagnostics[0].message.startswith(f"zerolint: {root / '.zerolint.toml'}")


@pytest.mark.asyncio
async def test_a_burst_of_edits_is_linted_once(slow_client: LanguageClient, tmp_path):
    """Typing sends a didChange per keystroke; the server lints when the typing pauses (debounce), so four edits in
    a row give one publication, of the last text, not four."""
    slow_client.diagnostics = published = Published()
    path = project(tmp_path) / "ds_config.json"
    uri = path.as_uri()
    assert [d.code for d in await open_doc(slow_client, path, BROKEN)] == ["ZL101"]  # opening lints at once
    texts = [BROKEN.replace('"stage": 2', f'"stage": {stage}') for stage in (3, 1, 0)] + [FIXED]
    for version, text in enumerate(texts, 2):
        slow_client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    await slow_client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    await asyncio.sleep(2.5)  # more than the debounce again: a second lint would have been published by now
    assert published.log == [(uri, ["ZL101"]), (uri, [])]


# -- the pure parts -----------------------------------------------------------------------------------------------

def test_positions_count_utf16_units_and_every_line_break():
    text = 'a🚀b\r\né\rx\ny'
    index = LineIndex(text)
    assert [index.position(i) for i in range(len(text) + 1)] == [
        (0, 0), (0, 1), (0, 3), (0, 4), (0, 5), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)]
    assert [index.offset(0, c) for c in range(6)] == [0, 1, 2, 2, 3, 3]  # 2 is inside the emoji: before it
    assert (index.offset(1, 9), index.offset(9, 0), index.offset(-1, 0)) == (6, 10, 0)


def test_context_in_half_typed_text():
    text = '{"zero_optimization": {"stage": 3,\n  // note\n  "offload_param": {"device": "c'
    ctx = context_at(text, len(text))
    assert (ctx.kind, ctx.section, ctx.key, ctx.prefix, ctx.quoted, ctx.start) == (
        "value", "/zero_optimization/offload_param", "device", "c", True, len(text) - 2)
    text = "{\n  zero_optimization: {\n    stage: 3\n    off"
    ctx = context_at(text, len(text))
    assert (ctx.kind, ctx.section, ctx.prefix, ctx.present) == ("key", "/zero_optimization", "off", ("stage",))
    assert context_at('{"a": [1, {"b', 13).section == "/a/1"
    assert context_at('{"a": "x"} ', 11).kind == "none"


@pytest.mark.asyncio
async def test_a_superseded_lint_is_not_published(client: LanguageClient, tmp_path):
    """Issue 22, item 3: a big document's lint took seconds and blocked the server, and each edit's lint was then
    published late, stale. Lints run in a worker thread now, and one whose text changed meanwhile is dropped: the
    publications after the edits carry the last text's findings only."""
    client.diagnostics = published = Published()
    path = project(tmp_path) / "ds_config.json"
    uri = path.as_uri()
    big = '{"train_batch_size": 8,\n' + ",\n".join(f' "k{i}": [{i}, {i}, {i}]' for i in range(2_400)) + "\n}\n"
    await open_doc(client, path, big)
    final = BROKEN
    for version, text in enumerate([big.replace('"k1"', '"k1x"'), final], 2):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        await asyncio.sleep(0.1)  # past the 20 ms debounce: the first edit's lint has started
    deadline = asyncio.get_running_loop().time() + 60
    while published.log[-1][1] != ["ZL101"] and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)
    after_open = [codes for _, codes in published.log[1:]]
    assert after_open == [["ZL101"]], after_open  # the first edit's (big, ZL103-only) lint was never published


USED = '{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}\n'


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def watching_client(lsp_client: LanguageClient):
    """A client that takes dynamic registrations of watched files, as VS Code and Neovim 0.10+ do."""
    lsp_client.registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        lsp_client.registrations.extend(params.registrations)

    await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_config_is_checked_as_its_launch_script_uses_it_and_again_when_that_changes(
        watching_client: LanguageClient, tmp_path):
    client = watching_client
    root = project(tmp_path, name="repo")
    (root / ".git").mkdir(parents=True)
    (root / "run.sh").write_text("deepspeed --num_gpus 4 train.py --deepspeed ds.json\n")
    (root / "train.py").write_text("import deepspeed\nengine, *_ = deepspeed.initialize(model=m, "
                                   "config=args.deepspeed)\n")
    path = root / "ds.json"
    path.write_text(USED)
    assert [d.code for d in await open_doc(client, path, USED)] == ["ZL402"]  # 32 != 4 * 1 * 4 GPUs
    uri = types.TextDocumentIdentifier(uri=path.as_uri())
    hover = await client.text_document_hover_async(types.HoverParams(text_document=uri, position=pos(0, 0)))
    assert hover.contents.value == (
        "**Uses** (checked as each one reads it; docs/uses.md):\n\n"
        "- `run.sh:1: deepspeed, 4 GPUs, deepspeed.initialize in train.py:2`\n"
        "  - GPUs per node: 4 (run.sh:1)\n  - script: train.py (run.sh:1)\n"
        "  - consumer: deepspeed.initialize (train.py:2)\n  - world size: 4")
    (registration,) = client.registrations
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    globs = {w["globPattern"] for w in registration.register_options["watchers"]}  # (as JSON: the client's view)
    assert globs >= {"**/*.sh", "**/*.py", "**/*.yaml", "**/*.slurm"}
    (root / "run.sh").write_text("deepspeed --num_gpus 8 train.py --deepspeed ds.json\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
        uri=(root / "run.sh").as_uri(), type=types.FileChangeType.Changed)]))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [d.code for d in client.diagnostics[path.as_uri()]] == []  # 32 == 4 * 1 * 8


def test_a_request_whose_parameters_do_not_parse_gets_an_error_reply():
    """JSON-RPC: a malformed request is answered (-32602), so the editor is not left waiting for its timeout; the
    server goes on serving."""
    import json
    import select
    import subprocess

    p = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(msg: dict) -> None:
        body = json.dumps(msg).encode()
        p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        p.stdin.flush()

    def receive() -> dict:
        while True:
            ready, _, _ = select.select([p.stdout], [], [], 30)
            assert ready, "no reply within 30 s"
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                header += p.stdout.read(1)
            length = int(re.search(rb"Content-Length: (\d+)", header).group(1))
            msg = json.loads(p.stdout.read(length))
            if "id" in msg:  # (notifications such as window/logMessage are not replies)
                return msg

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        assert receive()["id"] == 1
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": {"uri": 5}}})
        assert receive() == {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Invalid Params"}}
        send({"jsonrpc": "2.0", "id": 3, "method": "textDocument/completion", "params": "nonsense"})
        assert receive()["error"]["code"] == -32602
        send({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
        assert receive() == {"jsonrpc": "2.0", "id": 4, "result": None}
        send({"jsonrpc": "2.0", "method": "exit"})
        assert p.wait(timeout=30) == 0
    finally:
        p.kill()


@pytest.mark.parametrize("text,present", [
    ('{"zero_optimization": {"|", "stage": 2, "offload_optimizer": {"device": "cpu", "x": 1}}, "fp16": {}}',
     ("stage", "offload_optimizer")),  # keys after the cursor, not those of a nested object or of the parent
    ('{"zero_optimization": {"st|\n  "overlap_comm": true}}', ("overlap_comm",)),  # hjson: a newline separates
    ('{"zero_optimization": {"stage": 2, |\n "reduce_scatter": true, "c": "a, \\"b\\": c"}}',
     ("stage", "reduce_scatter", "c")),  # a string holding `, "b":` is no key
    ('{"zero_optimization": {"sta|ge": 2, "x": 3}}', ("x",)),  # the key being retyped is offered
])
def test_completion_skips_the_keys_the_object_has_after_the_cursor_too(text, present):
    offset = text.index("|")
    ctx = context_at(text.replace("|", ""), offset)
    assert (ctx.kind, sorted(ctx.present)) == ("key", sorted(present))
