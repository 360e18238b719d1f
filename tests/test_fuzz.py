"""Fuzz and property tests: whatever bytes come in, `check` never crashes.

In-process (tests/fuzzcases.py `check_case`): no exception escapes `lint_bytes` or a reporter, no rule crashes
(ZL000), every diagnostic is located, and every output format stays well-formed and free of raw terminal control
characters. Out of process: the CLI exits 1 with a located diagnostic or 2 with a message, never a traceback.

This is the CI-sized run (about 30-60 s on 2 busy cores). The long run is `python benchmarks/fuzz.py --cases
100000` (docs/fuzzing.md). A failure prints the generator and seed; `python tests/fuzzcases.py SEED GENERATOR`
writes the input to stdout.
"""

from __future__ import annotations

import json
import random
import re

import fuzzcases as fc
import pytest
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zerolint.base.fsio import Limits
from zerolint.model.view import Settings

# derandomize, deadline and the example database come from the hypothesis profile (tests/conftest.py)
FAST = settings(max_examples=150,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LOCATED = re.compile(rb"^[^\n]*:\d+:\d+: (error|warning|info) ZL\d{3}", re.M)


# -- hypothesis strategies -------------------------------------------------------------------------------------

# Any code point, surrogates included (lone surrogates must survive parse, rules and every reporter).
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
KEYS = st.one_of(st.sampled_from(fc.known_keys()), st.text(ANY_CHAR, max_size=12), st.sampled_from(fc.HOSTILE_TEXT))
SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-10 ** 30, max_value=10 ** 30), st.sampled_from([10 ** 400, -(10 ** 400), 2 ** 63, 2 ** 64]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(ANY_CHAR, max_size=20), st.sampled_from(["auto", "AUTO", "cpu", "nvme", "none", "bf16", "Adam", ""]),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(KEYS, children, max_size=5)),
    max_leaves=25,
)
CONFIGS = st.dictionaries(KEYS, JSON_VALUES, max_size=8)


def _dump(value, ensure_ascii: bool, indent) -> bytes:
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, allow_nan=True)
    return text.encode("utf-8", "surrogatepass")


def _settings(draw_target: str, version: str | None) -> Settings:
    return Settings(target=draw_target, deepspeed_version=version)


TARGETS = st.sampled_from(["auto", "deepspeed", "hf", "accelerate"])
VERSIONS = st.sampled_from(fc.VERSIONS)


# -- in-process properties -------------------------------------------------------------------------------------

@FAST
@given(st.binary(max_size=3000), TARGETS)
def test_random_bytes(data, target):
    fc.check_case(data, _settings(target, None))


@FAST
@given(CONFIGS, st.booleans(), st.sampled_from([None, 2]), TARGETS, VERSIONS)
def test_random_json_configs(value, ascii_only, indent, target, version):
    fc.check_case(_dump(value, ascii_only, indent), _settings(target, version))


@FAST
@given(JSON_VALUES, st.booleans())
def test_every_top_level_type(value, ascii_only):
    fc.check_case(_dump(value, ascii_only, None))


@FAST
@given(st.sampled_from(fc.seeds()), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(fc.TOKENS + fc.HOSTILE_TEXT),
                                                        st.integers(0, 3)), min_size=1, max_size=6), TARGETS)
def test_mutated_real_configs(seed_config, edits, target):
    data = bytearray(seed_config)
    for where, token, op in edits:
        i = int(where * len(data))
        if op == 0:
            data[i:i] = token.encode("utf-8", "surrogatepass")
        elif op == 1:
            del data[i:i + len(token)]
        elif op == 2:
            data[i:i] = data[i:i + 40]  # duplicate a stretch (keys twice, brackets twice)
        else:
            data[i:i + 1] = token.encode("utf-8", "surrogatepass")
    fc.check_case(bytes(data), _settings(target, None))


@pytest.mark.parametrize("generator", sorted(set(fc.GENERATORS) - {"long_things", "deep_nesting"}))
@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_generators(generator, seed):
    rnd = random.Random(seed)
    data = fc.GENERATORS[generator](rnd)
    fc.check_case(data, fc.random_settings(rnd))


def test_mixed_seeded_run():
    """A slice of the long run (benchmarks/fuzz.py numbers cases the same way)."""
    for seed in range(300):
        rnd = random.Random(seed)
        name, data = fc.make_case(rnd)
        if name == "long_things":
            continue
        try:
            fc.check_case(data, fc.random_settings(rnd), Limits(max_depth=5000) if rnd.random() < 0.05 else None)
        except fc.InvariantError as e:
            raise AssertionError(f"case {seed} ({name}): {e}") from e


# -- the named hostile inputs, each once ---------------------------------------------------------------------------

DEEP = {
    "arrays": lambda n: b"[" * n + b"]" * n,
    "objects": lambda n: b'{"a":' * n + b"1" + b"}" * n,
    "unclosed": lambda n: b'{"zero_optimization":' * n,
    "in-zero": lambda n: b'{"train_batch_size": 8, "zero_optimization": ' + b'{"stage":' * n + b"3" + b"}" * n + b"}",
}


@pytest.mark.parametrize("form", sorted(DEEP))
@pytest.mark.parametrize("max_depth", [256, 5000, 100_000])
def test_100000_levels_never_reach_the_recursion_limit(form, max_depth):
    """A 100,000-level document: the default limit, the CLI's highest --max-depth and an API caller's 100,000 all
    end in a located ZL007, not a RecursionError or a crash (the parser keeps containers on its own stack, and a
    pointer budget stops long keys nested deep from costing quadratic memory)."""
    out = fc.check_case(DEEP[form](100_000), limits=Limits(max_depth=max_depth))
    assert "ZL007" in out.codes


@pytest.mark.parametrize("number", fc.HUGE_NUMBERS + fc.NONFINITE)
def test_huge_and_nonfinite_numbers(number):
    for form in ('{"train_batch_size": %s}', '{"zero_optimization": {"stage": %s, "reduce_bucket_size": %s}}',
                 '{"train_micro_batch_size_per_gpu": %s, "gradient_accumulation_steps": %s, "train_batch_size": %s}',
                 '{"optimizer": {"type": "AdamW", "params": {"lr": %s}}, "gradient_clipping": %s}', "%s", "[%s]"):
        for target in ("deepspeed", "hf"):
            s = Settings(target=target, world_size=8, params="7B", gpu_memory="24GB")
            fc.check_case(form.replace("%s", number).encode(), s)


@pytest.mark.parametrize("data", [
    b"", b" ", b"\xef\xbb\xbf", b"\xef\xbb\xbf{}", b"\xff\xfe{\x00}\x00", b"\xfe\xff\x00{\x00}",
    '{"a": 1}'.encode("utf-16-le"), '{"a": 1}'.encode("utf-32"), b'{"a\x00": "\x00"}', b"\x00" * 100,
    b'{"\\ud800": "\\udfff", "x": "\\udc00\\ud800"}', '{"\ud800": 1}'.encode("utf-8", "surrogatepass"),
    '{"\ud800": 1}'.encode("utf-16", "surrogatepass"), b'{"k": "' + b"x" * 1_000_000 + b'"}',
    b'{"' + b"k" * 200_000 + b'": 1}', b"{" + b", ".join(b'"%d": %d' % (i, i) for i in range(5000)) + b"}",
    b"{" + b", ".join(b'"train_batch_size": %d' % i for i in range(2000)) + b"}",
    b'{"a": {"a": {"a": 1, "a": 2}, "a": [], "a": {"b": 1, "b": 1}}, "a": null}',
    b"[1\x0c\n]", "[1\u00a0\n]".encode(), "[\u2028\n]".encode(), b'{"a": \x0b\n}',  # looped forever once
    b"[" + b"1," * 100_000 + b"]", b'{"train_batch_size": [' + b",".join([b"1"] * 50_000) + b"]}",  # one long line
], ids=lambda d: repr(d[:24]))
def test_named_inputs(data):
    fc.check_case(data)


# -- the process -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    b"", b"\x00\xff\xfe garbage \x1b[2J", b"[" * 100_000, b'{"a": ' + b"9" * 5000 + b"}", b"1e400", b'"\\ud800"',
    "{\"\\u001b[31mred\": 1, \"\u202eevil\": 2}".encode(), '{"x": 1}'.encode("utf-16"), b"null", b"[]", b'{"a": 1,}',
])
def test_cli_exits_1_with_a_located_diagnostic(data):
    for fmt in ("text", "json", "github"):
        r = run_cli("check", "--format", fmt, "-", input=data)
        assert b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")
        assert r.returncode == 1, (r.returncode, r.stdout[:500], r.stderr[:500])
        if fmt == "text":
            assert LOCATED.search(r.stdout), r.stdout[:500]
        for stream in (r.stdout, r.stderr):
            assert b"\x1b" not in stream and "\u202e".encode() not in stream


def test_cli_fuzz_sample():
    """A few dozen random cases through the real process: exit 0/1/2 only, no traceback."""
    rnd = random.Random(8)
    for _ in range(12):
        name, data = fc.make_case(rnd)
        if len(data) > 1_000_000:
            continue
        r = run_cli("check", "--format", rnd.choice(["text", "json", "sarif", "github", "junit"]), "-", input=data)
        assert r.returncode in (0, 1), (name, r.returncode, r.stderr[-800:])
        assert b"Traceback" not in r.stderr, (name, r.stderr[-2000:])
