"""Quoteless (hjson) keys read as DeepSpeed's hjson reads them (model/document.py against hjson 3.1, the reader
DeepSpeed 0.19.8 uses): quotes, '#' and '/' inside a quoteless key are plain characters; only whitespace may stand
between such a key and its ':'. Found by the parse differential: `{\\"$schema": ...}` (a stray backslash) was read
as a broken key, so the batch size after it went unseen and ZL401 claimed a parse failure DeepSpeed never had."""

from __future__ import annotations

import hjson
import pytest

from zerolint.model.document import parse

MICRO = "train_micro_batch_size_per_gpu"


@pytest.mark.parametrize("text, keys", [
    ('{\\"$schema": "x", "train_micro_batch_size_per_gpu": 4}', ['\\"$schema"', MICRO]),
    ("{ab#c: 1, train_micro_batch_size_per_gpu: 2}", ["ab#c", MICRO]),
    ("{/x: 1, a/b: 2, train_micro_batch_size_per_gpu: 2}", ["/x", "a/b", MICRO]),
    ("{a'b: 1, train_micro_batch_size_per_gpu: 2}", ["a'b", MICRO]),
    ("{key\n  : 1, train_micro_batch_size_per_gpu: 2}", ["key", MICRO]),
    ('{"key" # a comment\n: 1, "train_micro_batch_size_per_gpu": 2}', ["key", MICRO]),
])
def test_quoteless_keys_as_hjson_reads_them(text, keys):
    doc = parse(text)
    assert [m.key for m in doc.root.members] == keys == list(hjson.loads(text))
    assert not [n for n in doc.notes if n.kind == "syntax-error"]


@pytest.mark.parametrize("text, message, offset", [
    ("{key # a comment\n: 1}", "expected ':' after the key 'key', found '#'", 5),
    ("{a b: 1}", "expected ':' after the key 'a', found 'b'", 3),
])
def test_what_hjson_refuses_after_a_quoteless_key(text, message, offset):
    with pytest.raises(hjson.HjsonDecodeError):
        hjson.loads(text)
    errors = [(n.message, n.start) for n in parse(text).notes if n.kind == "syntax-error"]
    assert errors == [(message, offset)]
