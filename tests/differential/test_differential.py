"""zerolint against DeepSpeed 0.19.8's own config parse, on every fixture, corpus and seed config plus 5,000 seeded
mutations of them (tests/differential/harness.py; the table and the review are in docs/differential.md).

    python -m pytest tests/differential -m deepspeed          # about half a minute on 2 cores
    python benchmarks/differential.py --count 5000 --seed 0   # the same run, as a table
"""

from __future__ import annotations

import importlib.util
from collections import Counter

import pytest
from conftest import oracle

from . import harness, mutations

pytestmark = [
    pytest.mark.deepspeed,
    pytest.mark.slow,
    oracle(importlib.util.find_spec("deepspeed") is None, "deepspeed (CPU build) not installed"),
]

SEED = 0
COUNT = 5000


@pytest.fixture(scope="module")
def worker():
    with harness.DeepSpeedWorker() as w:
        yield w


@pytest.fixture(scope="module")
def allow():
    return harness.load_allowlist()


@pytest.fixture(scope="module")
def outcomes(worker, allow):
    bases = mutations.base_cases()
    return harness.run(bases + mutations.mutations(COUNT, SEED, bases), worker, allow)


def _show(bad, limit=10):
    return f"{len(bad)} case(s); the first {min(limit, len(bad))}:\n\n" + "\n\n".join(
        harness.describe(o) for o in bad[:limit])


def test_the_oracle_is_deepspeed_0_19_8(worker):
    verdicts = worker.parse_all([b'{"train_micro_batch_size_per_gpu": 1}',
                                 b'{"train_micro_batch_size_per_gpu": 1, "train_micro_batch_size_per_gpu": 2}',
                                 b'{"train_micro_batch_size_per_gpu": 1, "fp16": {"enabled": true},'
                                 b' "bf16": {"enabled": true}}',
                                 b'{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": "3"}}',
                                 b'{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 4}'])
    assert worker.version == harness.DEEPSPEED_VERSION
    assert [v.outcome for v in verdicts] == ["accepted", "rejected", "rejected", "accepted", "accepted"]
    assert verdicts[1].type == "ValueError" and "Duplicate keys" in verdicts[1].message
    assert verdicts[3].summary["stage"] == 3
    assert verdicts[4].summary["gas"] == 2  # world size 1


def test_inputs(outcomes):
    kinds = Counter(o.case.kind for o in outcomes)
    assert sum(n for k, n in kinds.items() if k not in ("fixture", "corpus", "seed")) == COUNT
    assert kinds["fixture"] >= 100 and kinds["seed"] == 6
    assert kinds["corpus"] == len(mutations.corpus_cases())
    for kind in [*mutations.WEIGHTS]:
        assert kinds[kind] >= 50, f"mutation kind {kind} is too rare ({kinds[kind]})"
    rejected = sum(o.verdict.rejected for o in outcomes)
    assert 0.2 * len(outcomes) < rejected < 0.9 * len(outcomes), "the generator should exercise both verdicts"


def test_every_deepspeed_rejection_gets_an_error(outcomes):
    missed = [o for o in outcomes if o.missed]
    assert not missed, "DeepSpeed rejects, zerolint reports no error: " + _show(missed)


def test_no_false_parse_rejection_claims(outcomes):
    false = [o for o in outcomes if o.false_claims]
    assert not false, "zerolint says DeepSpeed rejects at parse, DeepSpeed accepts: " + _show(false)


def test_no_rule_crashes(outcomes):
    crashed = [o for o in outcomes if o.internal]
    assert not crashed, "ZL000: " + _show(crashed)


def test_parse_claims_are_errors_and_marked(outcomes):
    """A diagnostic that says DeepSpeed fails at parse is an error and sets fails_at="parse" (what the JSON output
    and this test read), not just words in its message."""
    weak = sorted({f"{d.code}: {d.message[:160]}" for o in outcomes for d in o.weak_claims})
    unmarked = sorted({f"{d.code}: {d.message[:160]}" for o in outcomes for d in o.unmarked_claims})
    assert not weak, "fails_at='parse' below severity error:\n" + "\n".join(weak[:10])
    assert not unmarked, "parse claims without fails_at='parse':\n" + "\n".join(unmarked[:10])


def test_allowlist_entries_are_used(outcomes, allow):
    unused = [e.id for e in allow if not e.used]
    assert not unused, f"allowlist entries that excuse nothing in this run (delete them): {unused}"


def test_zerolint_stays_fast_on_crafted_values(outcomes):
    slow = sorted(outcomes, key=lambda o: -o.lint_seconds)[:3]
    assert slow[0].lint_seconds < 5.0, [(o.case.id, round(o.lint_seconds, 2)) for o in slow]


def test_generator_is_seeded():
    bases = mutations.base_cases()
    a = mutations.mutations(300, 7, bases)
    b = mutations.mutations(300, 7, bases)
    c = mutations.mutations(300, 8, bases)
    assert [x.data for x in a] == [x.data for x in b]
    assert [x.data for x in a] != [x.data for x in c]
    assert len({x.data for x in a}) == 300


def test_a_new_rule_case_moves_few_mutations():
    """A rule case added (anywhere in its file: ids below it are renumbered) or removed moves only the mutations
    whose base pick lands on it, not every later one: the run's inputs, and the disagreements it can surface, stay
    put as rules grow (2026-12-01: an index-based pick shifted all 5,000 and surfaced three old disagreements)."""
    bases = mutations.base_cases()
    new = mutations.Case("fixture:ZL999#1", "fixture", b'{"train_micro_batch_size_per_gpu": 3, "steps_per_print": 7}')
    before = mutations.mutations(1000, 0, bases)
    for changed in (bases[:40] + [new] + bases[40:], bases[:40] + bases[41:]):
        after = mutations.mutations(1000, 0, changed)
        moved = [a.id for a, b in zip(before, after) if a.data != b.data]
        assert len(moved) <= 1000 * 5 // len(bases), moved  # about 1/len of them; an index pick moves ~all
