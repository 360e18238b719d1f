"""zerolint against what DeepSpeed 0.19.8 does at initialize and in the first 3 steps, on CPU
(docs/runtime-differential.md).

    python -m pytest tests/runtime_differential -m deepspeed       # the CI subset (SUBSET configs)
    python benchmarks/runtime_differential.py                      # the full set, as a table
"""

from __future__ import annotations

import importlib.util

import pytest
from conftest import CORPUS, missing, oracle

from . import cases, compare
from .runner import RuntimeRunner, phase_of

pytestmark = [
    pytest.mark.deepspeed,
    pytest.mark.slow,
    oracle(importlib.util.find_spec("deepspeed") is None or importlib.util.find_spec("torch") is None,
           "deepspeed and torch (CPU builds) not installed"),
]

SEED = 0
FULL_COUNT = 320  # benchmarks/runtime_differential.py FULL_COUNT: mutations besides every example and corpus config
SUBSET = 120  # what CI runs: a deterministic spread of the full set (docs/runtime-differential.md, "CI")


def full_set() -> list:
    if not list(CORPUS.glob("*.json")):
        missing(f"the real-world corpus is not at {CORPUS}")
    bases = cases.base_cases()
    return bases + cases.mutations(FULL_COUNT, SEED, bases)


def subset_of(todo: list, n: int) -> list:
    step = len(todo) / n
    return [todo[int(i * step)] for i in range(n)] if n < len(todo) else todo


@pytest.fixture(scope="module")
def allow():
    return compare.load_allowlist()


@pytest.fixture(scope="module")
def runner():
    with RuntimeRunner("cpu") as r:
        yield r


@pytest.fixture(scope="module")
def outcomes(runner, allow):
    return compare.run(subset_of(full_set(), SUBSET), runner, allow)


def _show(bad, limit=8):
    return f"{len(bad)} case(s); the first {min(limit, len(bad))}:\n\n" + "\n\n".join(
        compare.describe(o) for o in bad[:limit])


def test_the_oracle_runs_deepspeed(runner):
    """Three configs whose fate is known: the runner reports DeepSpeed's phase and the engine's facts."""
    runs = runner.run_all([
        b'{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2}, "bf16": {"enabled": true}}',
        b'{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 9}}',
        b'{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2, "offload_optimizer":'
        b' {"device": "cpu"}}}',
    ])
    assert runner.info["versions"]["deepspeed"] == "0.19.8"
    assert [r.phase for r in runs] == ["ran", "parse", "initialize"]
    f = runs[0].facts
    assert (f["zero_stage"], f["precision"], f["param_dtype"], f["optimizer_outer"], f["optimizer_inner"]) == (
        2, "bf16", "bfloat16", "DeepSpeedZeroOptimizer", "AdamW")
    assert (f["train_batch_size"], f["micro_batch"], f["grad_accum"]) == (2, 2, 1)
    assert runs[0].client_optimizer == "AdamW"
    assert runs[1].error["type"] == "ValidationError" and "stage" in runs[1].error["message"]
    assert runs[2].error["type"] == "ZeRORuntimeException" and "ZeRO-Offload" in runs[2].error["message"]


def test_phase_of_reads_the_child_result():
    parse = {"status": "fail", "phase": "initialize", "error": {"frames": [
        {"file": "deepspeed/__init__.py", "code": "config_class = DeepSpeedConfig(config, mpu, mesh_device=m)"}]}}
    assert phase_of(parse) == ("parse", None)
    assert phase_of({"status": "fail", "phase": "model", "error": {"frames": []}}) == ("initialize", None)
    assert phase_of({"status": "fail", "phase": "step 2", "error": {}}) == ("step", 2)
    assert phase_of({"status": "pass"}) == ("ran", None)
    assert phase_of({"status": "timeout", "phase": "step 1"}) == ("timeout", None)


def test_inputs():
    todo = full_set()
    assert len(todo) >= 300
    kinds = {c.kind for c in todo}
    assert {"example", "corpus", *cases.AXES} <= kinds
    assert len({c.data for c in todo}) == len(todo)
    assert len(subset_of(todo, SUBSET)) == SUBSET


def test_generator_is_seeded():
    bases = cases.base_cases()
    a, b, c = cases.mutations(100, 7, bases), cases.mutations(100, 7, bases), cases.mutations(100, 8, bases)
    assert [x.data for x in a] == [x.data for x in b]
    assert [x.data for x in a] != [x.data for x in c]


def test_every_failure_gets_an_error_at_its_phase(outcomes):
    bad = [o for o in outcomes if o.verdict in ("missed", "wrong-stage")]
    assert not bad, "DeepSpeed fails, zerolint has no error claiming that phase: " + _show(bad)


def test_no_false_failure_claims(outcomes):
    bad = [o for o in outcomes if o.false_claims]
    assert not bad, "zerolint claims a failure the run got past: " + _show(bad)


def test_silent_claims_hold_on_the_engine(outcomes):
    bad = [o for o in outcomes if any(s == "contradicted" for _, s in o.silent)]
    assert not bad, "a silent claim the engine's facts contradict: " + _show(bad)
    # Every silent claim is confirmed by a fact or reviewed (compare.NO_FACT): a rule with neither is a gap.
    gaps = sorted({d.code for o in outcomes for d, s in o.silent if s == "gap"})
    assert not gaps, f"silent claims no predicate checks (add one to compare.PREDICATES or NO_FACT): {gaps}"


def test_every_config_got_a_verdict(outcomes):
    bad = [o for o in outcomes if o.verdict == "harness"]
    assert not bad, "timeouts or crashes of the harness: " + _show(bad)


def test_every_op_a_run_loaded_was_planned(outcomes):
    """verify's op plan (zerolint/verify/opplan.py) against what DeepSpeed really loaded: every op builder's load()
    a run called (recorded by zerolint/verify/opguard.py) was planned, so that verify builds it before the clock."""
    bad = [(o.case.name, sorted(set(o.run.ops_loaded) - set(o.run.ops_planned))) for o in outcomes
           if set(o.run.ops_loaded) - set(o.run.ops_planned)]
    assert not bad, f"ops loaded but not planned (config, ops): {bad[:10]}"
    loaded = {op for o in outcomes for op in o.run.ops_loaded}
    assert {"deepspeed_shm_comm", "fused_adam", "cpu_adam"} <= loaded, loaded  # the recorder sees the loads


def test_no_rule_crashes(outcomes):
    bad = [o for o in outcomes if o.internal]
    assert not bad, "ZL000: " + _show(bad)


def test_both_outcomes_are_exercised(outcomes):
    ran = sum(o.run.phase == "ran" for o in outcomes)
    assert 0.2 * len(outcomes) < ran < 0.9 * len(outcomes)
    assert {o.run.phase for o in outcomes} >= {"parse", "initialize", "ran"}
