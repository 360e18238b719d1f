"""The real-world corpus (tests/data/corpus/real-world, 77 configs from 21 repos) as a regression test: no crash,
no internal error, and the findings match the reviewed snapshot (tests/snapshots/corpus.txt; the review is in
docs/corpus-review.md)."""

from __future__ import annotations

import hashlib

from conftest import CORPUS
from snapshot import assert_snapshot

from zerolint.model.view import Settings
from zerolint.pipeline import lint_path


def test_corpus_findings_snapshot(corpus_files):
    lines = []
    for path in corpus_files:
        # the monitors' packages as a training machine without them (ZL913), whatever this environment holds
        result = lint_path(str(path), Settings(deepspeed_version="0.19.8", packages=dict.fromkeys(
            ("tensorboard", "wandb", "comet_ml"))))
        for d in result.diagnostics:
            assert d.code != "ZL000", f"{path.name}: {d.message}"
            lines.append(f"{path.name}:{d.line}:{d.column} {d.severity.value} {d.code} {d.pointer}")
    assert_snapshot("corpus.txt", "\n".join(lines) + "\n")


def test_corpus_every_target(corpus_files):
    for target in ("deepspeed", "hf", "accelerate"):
        for path in corpus_files:
            result = lint_path(str(path), Settings(target=target, world_size=8))
            assert all(d.code != "ZL000" for d in result.diagnostics), (target, path.name)


def test_corpus_is_the_vendored_bytes():
    # A regression corpus: its files are copies of their sources (SOURCES.tsv) and are never edited.
    sums = dict(line.split("  ", 1)[::-1] for line in (CORPUS.parent / "SHA256SUMS").read_text("ascii").splitlines())
    assert sorted(sums) == sorted(p.name for p in CORPUS.iterdir())
    assert len([n for n in sums if n.endswith(".json")]) == 77
    for name, digest in sums.items():
        assert hashlib.sha256((CORPUS / name).read_bytes()).hexdigest() == digest, name
