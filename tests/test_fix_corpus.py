"""The real-world corpus: every diff `--fix` / `--unsafe-fixes` would apply parses (as well as the original did),
re-lints without the fixed findings and is stable; `check --diff` prints exactly those diffs."""

from __future__ import annotations

import json

import hjson
import pytest
from conftest import CORPUS, oracle, run_cli

from zerolint.fix.engine import fix_text, unified_diff
from zerolint.model.document import parse

FILES = sorted(CORPUS.glob("*.json")) if CORPUS.is_dir() else []


@oracle(not FILES, "corpus not found")
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_corpus_fixes_parse_and_relint_clean(unsafe):
    changed = 0
    for path in FILES:
        text = path.read_bytes().decode("utf-8")  # keep CRLF: read_text would translate it
        r = fix_text(text, str(path), unsafe=unsafe)
        assert not r.failed, (path.name, [(a.code, a.reason) for a in r.failed])
        if not r.changed:
            continue
        changed += 1
        before = parse(text)
        if before.hjson_error is None:
            hjson.loads(r.text)
        if before.json_error is None:
            json.loads(r.text)
        for a in r.applied:
            key = (a.code, a.pointer, a.diagnostic.message)
            again = [d for d in r.remaining if (d.code, d.pointer, d.message) == key]
            assert not again, (path.name, a.code, a.pointer)
        assert fix_text(r.text, str(path), unsafe=unsafe).text == r.text, path.name  # stable
    assert changed >= (3 if unsafe else 0)


@oracle(not FILES, "corpus not found")
def test_corpus_diff_cli_matches_fix_text():
    before = {p: p.read_bytes() for p in FILES}
    r = run_cli("check", "--diff", "--unsafe-fixes", str(CORPUS))
    expected = []
    for path in FILES:
        text = path.read_bytes().decode("utf-8")  # keep CRLF: read_text would translate it
        fixed = fix_text(text, str(path), unsafe=True).text
        if fixed != text:
            expected.append(unified_diff(str(path), text, fixed))
    assert r.stdout.decode() == "".join(expected)
    assert r.returncode == (1 if expected else 0)
    assert {p: p.read_bytes() for p in FILES} == before  # --diff writes nothing
