"""In-process latency of the language server: a didChange -> its published diagnostics, for a typical config.

The server is built as `zerolint server` builds it (lsp/server.py), without its stdio transport: each round applies
one incremental edit (a keystroke) through pygls' own workspace, as its didChange handler does, then runs the
server's publish step (lint the current text with the document's settings, convert to LSP diagnostics), capturing
the notification instead of writing it to stdout. The debounce delay (--debounce-ms, 100 by default) is not
included: it is the pause the server waits for on purpose. Issue 16's target: under 50 ms.

    python benchmarks/lsp_latency.py                     # fixtures/examples/seed/ds_zero3_offload.json, 300 rounds
    python benchmarks/lsp_latency.py --config X.json --rounds 1000
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

from lsprotocol import types

from zerolint.lsp.server import build

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(ROOT, "fixtures", "examples", "seed", "ds_zero3_offload.json")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=DEFAULT)
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()

    with open(args.config, encoding="utf-8") as f:
        text = f.read()
    tmp = tempfile.mkdtemp(prefix="zl-lsp-bench-")  # the config alone in a directory, as it usually sits
    try:
        path = os.path.join(tmp, "ds_config.json")
        shutil.copy(args.config, path)
        server = build(debounce=0)
        for _ in server.protocol.lsp_initialize(types.InitializeParams(capabilities=types.ClientCapabilities())):
            pass  # pygls' own initialize (a generator): it creates the workspace
        published: list[types.PublishDiagnosticsParams] = []
        server.text_document_publish_diagnostics = published.append  # capture instead of writing to stdout
        uri = "file://" + path
        server.workspace.put_text_document(types.TextDocumentItem(uri=uri, language_id="json", version=0, text=text))

        t0 = time.perf_counter()
        server.publish(uri)
        cold = time.perf_counter() - t0

        # A keystroke: type a digit at the end of the first number in the file, then delete it again.
        at = next(i for i, ch in enumerate(text) if ch.isdigit())
        line = text.count("\n", 0, at)
        char = at - (text.rfind("\n", 0, at) + 1)
        times = []
        for n in range(1, args.rounds + 1):
            if n % 2:
                change = types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=line, character=char),
                                      end=types.Position(line=line, character=char)), text="1")
            else:
                change = types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=line, character=char),
                                      end=types.Position(line=line, character=char + 1)), text="")
            t0 = time.perf_counter()
            server.workspace.update_text_document(types.VersionedTextDocumentIdentifier(uri=uri, version=n), change)
            server.publish(uri)
            times.append(time.perf_counter() - t0)
        assert len(published) == args.rounds + 1 and published[-1].version == args.rounds
        ms = sorted(t * 1000 for t in times)
        print(f"config: {os.path.relpath(args.config, ROOT)} ({len(text)} characters, "
              f"{len(published[-1].diagnostics)} diagnostics)")
        print(f"first lint (cold: schema, rules, settings): {cold * 1000:.1f} ms")
        print(f"didChange -> diagnostics over {args.rounds} keystrokes: median {statistics.median(ms):.2f} ms, "
              f"p95 {ms[int(0.95 * (len(ms) - 1))]:.2f} ms, max {ms[-1]:.2f} ms")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
