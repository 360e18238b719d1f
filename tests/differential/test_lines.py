"""The parse differential against DeepSpeed's older lines (issue 23, item 3): zerolint checked with
`--deepspeed-version` set to one release of each line from 0.14 to 0.18 (0.14.5 ... 0.18.9) against that
release's own parse, on every fixture, corpus and seed config and 2,000 seeded mutations. Each release is imported
from its unpacked sdist (its config code is plain Python; scripts/test.sh fetches them into .cache/deepspeed-src).
0 disagreements beyond the CPU host's own oddities that allowlist.toml lists for 0.19.8 too (GDS on a CPU machine).

What the old lines do differently is in docs/differential.md: plain-dict fp16/bf16 blocks read by truthiness before
0.17.1, pydantic v1 models before 0.15, keys and checks that arrived later."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from conftest import missing, oracle

from . import harness, mutations

ROOT = Path(__file__).resolve().parents[2]
SOURCES = Path(os.environ.get("ZEROLINT_DEEPSPEED_SOURCES", ROOT / ".cache" / "deepspeed-src"))
LINES = ("0.14.5", "0.15.4", "0.16.9", "0.17.6", "0.18.9")
COUNT = 2000

pytestmark = [
    pytest.mark.deepspeed,
    pytest.mark.slow,
    oracle(importlib.util.find_spec("deepspeed") is None, "deepspeed (CPU build) not installed"),
]


@pytest.fixture(scope="module")
def cases():
    bases = mutations.base_cases()
    return bases + mutations.mutations(COUNT, 0, bases)


@pytest.mark.parametrize("version", LINES)
def test_zerolint_agrees_with_the_lines_own_parse(version, cases):
    source = SOURCES / version
    if not (source / "deepspeed" / "__init__.py").is_file():
        missing(f"DeepSpeed {version}'s source is not at {source} (scripts/test.sh fetches it)")
    with harness.DeepSpeedWorker(source=str(source)) as worker:
        outcomes = harness.run(cases, worker, version=version)  # allowlist.toml: the machine's oddities (GDS on CPU)
        assert worker.version.strip() == version
    missed = [o for o in outcomes if o.missed]
    false = [o for o in outcomes if o.false_claims]
    crashed = [o for o in outcomes if o.internal]
    shown = "\n\n".join(harness.describe(o) for o in (missed + false + crashed)[:8])
    assert (len(missed), len(false), len(crashed)) == (0, 0, 0), shown
    assert 0.2 * len(outcomes) < sum(o.verdict.rejected for o in outcomes) < 0.9 * len(outcomes)
