"""Hostile inputs and the invariant every one of them must satisfy; shared by tests/test_fuzz.py (the CI run) and
benchmarks/fuzz.py (the long run, >= 100,000 cases).

Each generator takes a `random.Random` and returns config bytes. `check_case` lints them in-process through the
whole path (parse -> view -> rules -> every reporter) and raises `InvariantError` when:

- an exception escapes `zerolint.pipeline.lint_bytes` or a reporter (the CLI would print a traceback);
- a rule crashed (a ZL000 internal-error diagnostic: a rule bug);
- a diagnostic is not located (line/column outside the text);
- an output cannot be written as UTF-8 (lone surrogates), carries a raw terminal control character from the config
  (ANSI/OSC escapes, C1 controls, bidi overrides), or breaks its format (JSON/SARIF that does not parse, JUnit that
  is not XML, a GitHub annotation spread over several lines).
"""

from __future__ import annotations

import json
import random
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "corpus" / "real-world"
SEED = ROOT / "fixtures" / "examples" / "seed"
RULE_CASES = ROOT / "src" / "zerolint" / "data" / "rule_cases"

FORMATS = ("text", "json", "sarif", "github", "junit")
# What must never reach a terminal or a CI log raw: C0 controls but tab/newline, DEL, C1 (incl. the 8-bit CSI
# and OSC), zero-width and bidi controls, lone surrogates.
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


class InvariantError(AssertionError):
    pass


# ---------------------------------------------------------------------------------------------------------------
# Seeds: real configs to mutate

_SEEDS: list[bytes] | None = None


def seeds() -> list[bytes]:
    """Real-world corpus configs, the seed examples, and every config in the rule cases."""
    global _SEEDS
    if _SEEDS is None:
        out = [p.read_bytes() for p in sorted(CORPUS.glob("*.json"))] if CORPUS.is_dir() else []
        out += [p.read_bytes() for p in sorted(SEED.glob("*.json"))]
        import tomllib

        for p in sorted(RULE_CASES.glob("*.toml")):
            try:
                cases = tomllib.loads(p.read_text("utf-8")).get("case", [])
            except (tomllib.TOMLDecodeError, UnicodeDecodeError):
                continue
            out += [c["config"].encode("utf-8", "surrogatepass") for c in cases if isinstance(c.get("config"), str)]
        _SEEDS = out or [b'{"train_batch_size": 8, "zero_optimization": {"stage": 2}}']
    return _SEEDS


_KEYS: list[str] | None = None


def known_keys() -> list[str]:
    """Every key the DeepSpeed schema knows (so random configs hit real rules), plus HF/Accelerate favourites."""
    global _KEYS
    if _KEYS is None:
        from zerolint.model.schema import load_schema

        keys: set[str] = set()
        for line in ("0.16", "0.19"):
            for _, obj in load_schema(line).all_sections():
                keys.update(obj.get("properties", {}))
        _KEYS = sorted(keys) + ["auto", "stage", "enabled", "device", "type", "params", "lr", "zero_optimisation"]
    return _KEYS


# ---------------------------------------------------------------------------------------------------------------
# Building blocks

HUGE_NUMBERS = ["1e400", "-1e400", "1e-400", "1E+999999999", "9" * 400, "-" + "9" * 400, "9" * 5000, "1" + "0" * 4300,
                "1" + "0" * 4299, "1" + "0" * 400 + ".5", "0." + "0" * 400 + "1", "-0", "-0.0", "0e0", "1.0e+308",
                "2e308", "9223372036854775808", "1e19", "18446744073709551616", "5e-324", "1.7976931348623157e308",
                "123456789012345678901234567890.5"]
NONFINITE = ["NaN", "Infinity", "-Infinity", "+Infinity", "nan", "inf", "-inf", "NAN"]
HOSTILE_TEXT = [
    "\x1b[31mred\x1b[0m", "\x1b[2J\x1b[H", "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", "\x1b]0;title\x07",
    "\u202egnp.exe", "\u2066isolate\u2069", "\u200b", "\x9b31m", "\x9d8;;x\x9c", "\x07bell", "\x08\x08\x08", "\x7f",
    "a\rb", "a\nb", "a\r\nb", "::error::pwned", "::set-output name=x::y", "%0A::warning::x", "50%", "a::b,c:d",
    "</failure><x>", "]]>", "&amp;&#0;", "\ufffe\uffff", "\U0001f600", "e\u0301", "\t", "\\", '"', "'''", "${{ x }}",
]
TOKENS = ["{", "}", "[", "]", ",", ":", '"', "'", "\\", "\\u", "\\ud800", "\\udc00", "\\u0000", '"auto"', "auto",
          "NaN", "Infinity", "-Infinity", "1e400", "9" * 400, "#", "//", "/*", "*/", "'''", "\x00", "\ufeff", "\r",
          "\r\n", "\n", "\t", "\u202e", "\x1b[31m", "true", "false", "null", "TRUE", "None", "0x10", "1_000", ".5",
          "+1", "01", "1.", "-", "e5", '"\\n"', "\u00e9", "\U0001f600", "\u2028", "\u0085"]


def _num(rnd: random.Random) -> str:
    c = rnd.random()
    if c < 0.3:
        return rnd.choice(HUGE_NUMBERS)
    if c < 0.4:
        return rnd.choice(NONFINITE)
    if c < 0.7:
        return str(rnd.choice([0, 1, -1, 2, 3, 4, 8, 16, 2 ** 31, 2 ** 63, -2 ** 63, 10 ** 18, 5 * 10 ** 8]))
    return repr(rnd.choice([0.5, 1.0, 1e-5, 2e-5, -0.0, 1e10, 1e20, 3.14, 0.95, 65536.0]))


def _text(rnd: random.Random, long: bool = False) -> str:
    c = rnd.random()
    if long:
        return rnd.choice(["a", "x_", "\u00e9", "\x1b[0m", "\U0001f600"]) * rnd.choice([1000, 10 ** 5, 10 ** 6])
    if c < 0.35:
        return rnd.choice(known_keys())
    if c < 0.55:
        return rnd.choice(HOSTILE_TEXT)
    if c < 0.7:
        return rnd.choice(["auto", "AUTO", "Auto", " auto ", "cpu", "nvme", "none", "CPU", "bf16", "fp16", "Adam",
                           "AdamW", "WarmupLR", "", " ", "true", "1", "3", "1e5", "/tmp/x", "nvme_path"])
    n = rnd.choice([1, 2, 5, 20, 100])
    alphabet = rnd.choice(["abcdefghijklmnopqrstuvwxyz_", "\x00\x01\x1b\x7f\x85\x9b\u2028",
                           "\u0410\u05d0\u4e2d\U0001f600"])
    return "".join(rnd.choice(alphabet) for _ in range(n))


def _str_literal(rnd: random.Random, s: str) -> str:
    """A JSON string literal, sometimes with escapes that JSON allows but a naive reader does not expect."""
    lit = json.dumps(s, ensure_ascii=rnd.random() < 0.5)
    if rnd.random() < 0.1:
        lit = lit[:-1] + rnd.choice(["\\ud800", "\\udfff", "\\udc00\\ud800", "\\u0000", "\\u001b[31m", "\\u202e",
                                     "\\/", "\\b\\f"]) + '"'
    return lit


def _value(rnd: random.Random, depth: int) -> str:
    c = rnd.random()
    if depth > 6 or c < 0.3:
        return _num(rnd)
    if c < 0.55:
        return _str_literal(rnd, _text(rnd))
    if c < 0.62:
        return rnd.choice(["true", "false", "null"])
    if c < 0.8:
        n = rnd.choice([0, 1, 2, 3, 5])
        return "{" + ", ".join(f"{_str_literal(rnd, _text(rnd))}: {_value(rnd, depth + 1)}" for _ in range(n)) + "}"
    n = rnd.choice([0, 1, 2, 4])
    return "[" + ", ".join(_value(rnd, depth + 1) for _ in range(n)) + "]"


def _encode(rnd: random.Random, text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------------------------------------------------------
# Generators

def random_bytes(rnd: random.Random) -> bytes:
    return rnd.randbytes(rnd.choice([0, 1, 2, 3, 8, 64, 512, 4096]))


def random_json(rnd: random.Random) -> bytes:
    """A random JSON-ish object (top level mostly an object) with DeepSpeed keys, hostile text and numbers."""
    n = rnd.choice([0, 1, 3, 8, 20])
    body = ", ".join(f"{_str_literal(rnd, _text(rnd))}: {_value(rnd, 1)}" for _ in range(n))
    text = "{" + body + "}" if rnd.random() < 0.9 else _value(rnd, 0)
    return _encode(rnd, text)


def typed_config(rnd: random.Random) -> bytes:
    """A real config with values swapped for ones of the wrong type, range or spelling (rule paths)."""
    base = rnd.choice(seeds())
    try:
        obj = json.loads(base)
    except ValueError:
        obj = {"train_batch_size": 8}
    if not isinstance(obj, dict):
        obj = {"x": obj}
    paths = []

    def collect(o, path):
        if isinstance(o, dict):
            for k, v in o.items():
                paths.append(path + [k])
                collect(v, path + [k])
        elif isinstance(o, list):
            for i, v in enumerate(o):
                paths.append(path + [i])
                collect(v, path + [i])

    collect(obj, [])
    repl = {"auto": "auto", "neg": -1, "zero": 0, "huge": 10 ** 30, "float": 2.5, "str": "3", "list": [1, "x"],
            "dict": {"stage": 3, "enabled": "auto"}, "null": None, "bool": True, "text": _text(rnd)}
    for _ in range(rnd.randint(1, 4)):
        if not paths:
            break
        path = rnd.choice(paths)
        try:  # (an earlier swap may have replaced a container on the way)
            parent = obj
            for p in path[:-1]:
                parent = parent[p]
            parent[path[-1]] = json.loads(json.dumps(repl[rnd.choice(list(repl))]))  # a fresh copy
        except (TypeError, IndexError, KeyError):
            pass
    for _ in range(rnd.randint(0, 3)):  # known keys dropped in random places
        target = obj
        try:
            for p in rnd.choice(paths)[:-1] if paths else []:
                target = target[p]
        except (TypeError, IndexError, KeyError):
            continue
        if isinstance(target, dict):
            target[rnd.choice(known_keys())] = _Raw(_value(rnd, 3)) if rnd.random() < 0.5 else "auto"
    text = json.dumps(obj, indent=rnd.choice([None, 2, 4]), ensure_ascii=rnd.random() < 0.3, default=str)
    for raw in _Raw.made:  # splice the raw values (huge numbers, NaN, escapes) in as they were written
        text = text.replace(json.dumps(raw.marker), raw.text)
    _Raw.made.clear()
    return text.encode("utf-8", "surrogatepass")


class _Raw(str):
    """A value spliced into json.dumps output verbatim."""

    made: list["_Raw"] = []

    def __new__(cls, text: str) -> "_Raw":
        obj = super().__new__(cls, f"@@raw{len(cls.made)}@@")
        obj.marker, obj.text = str(obj), text
        cls.made.append(obj)
        return obj


def deep_nesting(rnd: random.Random) -> bytes:
    n = rnd.choice([255, 256, 257, 1000, 5000, 20000, 100000])
    kind = rnd.choice(["array", "object", "mixed", "unclosed", "in-config", "closers", "known", "known"])
    if kind == "known":  # DeepSpeed's own keys nested (rules and schema walks look inside these)
        n = min(n, rnd.choice([50, 300, 3000]))
        keys = [rnd.choice(known_keys()) for _ in range(6)]
        opens, closes = [], []
        for k in range(n):
            if rnd.random() < 0.75:
                opens.append('{"%s": ' % keys[k % 6])
                closes.append("}")
            else:
                opens.append("[1, ")
                closes.append("]")
        leaf = rnd.choice(['"auto"', "1e400", "3", "null", "{}"])
        return ("".join(opens) + leaf + "".join(reversed(closes))).encode()
    if kind == "array":
        return b"[" * n + b"]" * n
    if kind == "object":
        return b'{"a":' * n + b"1" + b"}" * n
    if kind == "mixed":
        return b'{"a":[' * (n // 2) + b"0" + b"]}" * (n // 2)
    if kind == "unclosed":
        return rnd.choice([b"[", b'{"x":', b'{"zero_optimization":']) * n
    if kind == "closers":
        return b"]" * n + b"}" * n
    return b'{"train_batch_size": 8, "zero_optimization": ' + b'{"stage":' * n + b"3" + b"}" * n + b"}"


def huge_numbers(rnd: random.Random) -> bytes:
    num = rnd.choice(HUGE_NUMBERS + NONFINITE)
    where = rnd.choice(['{"train_batch_size": %s}', '{"zero_optimization": {"stage": %s}}',
                        '{"optimizer": {"type": "Adam", "params": {"lr": %s, "betas": [%s, 0.9]}}}',
                        '{"gradient_clipping": %s, "steps_per_print": %s}', "%s", "[%s, %s]",
                        '{"fp16": {"enabled": true, "loss_scale": %s, "initial_scale_power": %s}}',
                        '{"train_micro_batch_size_per_gpu": %s, "gradient_accumulation_steps": %s, '
                        '"train_batch_size": %s}', '{"unknown_key_%s": %s}', '{"zero_optimization": {"stage": 3, '
                        '"reduce_bucket_size": %s, "stage3_prefetch_bucket_size": %s, "sub_group_size": %s}}'])
    return where.replace("%s", num).encode()


def surrogates(rnd: random.Random) -> bytes:
    esc = rnd.choice(["\\ud800", "\\udfff", "\\udbff\\udfff", "\\udc00\\ud800", "\\ud800\\u0041", "\\uD83D\\uDE00",
                      "\\ud800\\ud800"])
    forms = [
        '{"%s": 1}' % esc, '{"optimizer": {"type": "Ad%sam"}}' % esc, '{"train_batch_size": "%s"}' % esc,
        '{"zero_optimization": {"st%sage": 3}}' % esc, '["%s"]' % esc, '"%s"' % esc,
    ]
    text = rnd.choice(forms)
    c = rnd.random()
    if c < 0.5:
        return text.encode()
    decoded = text.encode().decode("unicode_escape")
    if c < 0.75:  # raw surrogates in "UTF-8" (what surrogatepass writes; invalid UTF-8)
        return decoded.encode("utf-8", "surrogatepass")
    return decoded.encode(rnd.choice(["utf-16", "utf-16-le", "utf-16-be"]), "surrogatepass")


def encodings(rnd: random.Random) -> bytes:
    text = rnd.choice(seeds()).decode("utf-8", "replace")
    c = rnd.choice(["bom8", "utf16", "utf16le", "utf16be", "utf32", "latin1", "overlong", "truncated", "cp1252",
                    "bom-twice", "bom-middle"])
    if c == "bom8":
        return b"\xef\xbb\xbf" + text.encode()
    if c == "utf16":
        return text.encode("utf-16")
    if c == "utf16le":
        return text.encode("utf-16-le")
    if c == "utf16be":
        return text.encode("utf-16-be")
    if c == "utf32":
        return text.encode("utf-32")
    if c == "latin1":
        return text.replace('"', '"\u00e9', 1).encode("latin-1", "replace")
    if c == "overlong":
        return text.encode().replace(b'"', b'"\xc0\xaf', 1)
    if c == "truncated":
        return text.encode() + b"\xe2\x82"
    if c == "cp1252":
        return b'{"comment": "\x93smart\x94", "train_batch_size": 8}'
    if c == "bom-twice":
        return b"\xef\xbb\xbf\xef\xbb\xbf" + text.encode()
    i = rnd.randrange(len(text) + 1)
    return (text[:i] + "\ufeff" + text[i:]).encode()


def nul_bytes(rnd: random.Random) -> bytes:
    data = bytearray(rnd.choice(seeds()))
    for _ in range(rnd.randint(1, 5)):
        data.insert(rnd.randrange(len(data) + 1), 0)
    return bytes(data)


def long_things(rnd: random.Random) -> bytes:
    c = rnd.choice(["key", "value", "many-keys", "many-items", "long-line", "many-lines", "long-number"])
    if c == "key":
        return _encode(rnd, "{%s: 1}" % json.dumps(_text(rnd, long=True)))
    if c == "value":
        return _encode(rnd, '{"optimizer": {"type": %s}}' % json.dumps(_text(rnd, long=True), ensure_ascii=False))
    if c == "many-keys":
        n = rnd.choice([1000, 10000])
        return ("{" + ",".join(f'"k{i}": {i}' for i in range(n)) + "}").encode()
    if c == "many-items":
        return ('{"train_batch_size": [' + ",".join("1" for _ in range(rnd.choice([1000, 100000]))) + "]}").encode()
    if c == "long-line":
        return ('{"a": 1,' + " " * 10 ** 6 + '"b" 2}').encode()
    if c == "many-lines":
        return ("{\n" + "\n" * 100000 + '"train_batch_size": "auto"\n}').encode()
    return ('{"train_batch_size": ' + "1" * 100000 + "}").encode()


def duplicates(rnd: random.Random) -> bytes:
    """Duplicate keys at every level (and the same key many times)."""
    def obj(depth: int) -> str:
        keys = [rnd.choice(known_keys()) for _ in range(rnd.randint(1, 4))]
        members = []
        for _ in range(rnd.randint(2, 6)):
            k = rnd.choice(keys)
            v = obj(depth + 1) if depth < 4 and rnd.random() < 0.4 else _value(rnd, 6)
            members.append(f"{json.dumps(k)}: {v}")
        return "{" + ", ".join(members) + "}"

    if rnd.random() < 0.05:
        return ("{" + ", ".join(f'"train_batch_size": {i}' for i in range(rnd.choice([100, 2000]))) + "}").encode()
    return _encode(rnd, obj(0))


def top_level(rnd: random.Random) -> bytes:
    return rnd.choice(["1", "-1.5", '"str"', '"auto"', "[]", "[1, 2]", "[{}]", "null", "true", "false", "", " ", "\n",
                       "{}", "1 2", "{} {}", "{}]", "]", "}", ",", ":", '"', "'", "'''", "#", "//", "/*", "\ufeff",
                       "\ufeff\ufeff{}", "NaN", "-Infinity", "1e400", "x", "a: 1", "a: 1\nb: {", "\x00", "\\", "{\\}",
                       "[,]", "[1,,2]", "{,}", '{"a"}', '{"a":}', '{:1}', "[1 2]", '{"a" 1}', "{'a': 1}",
                       "\r\n{\r\n}\r\n", "\r{\r}"]).encode()


def hjson_syntax(rnd: random.Random) -> bytes:
    """hjson-only syntax (DeepSpeed reads it; json.load does not), well-formed or not."""
    parts = ["{" if rnd.random() < 0.9 else ""]
    for _ in range(rnd.randint(1, 8)):
        key = rnd.choice([json.dumps(rnd.choice(known_keys())), rnd.choice(known_keys()), "'single'", "weird-key",
                          "a b", "$key", "k#x", "k//x"])
        val = rnd.choice(["quoteless string here", "auto", "cpu # comment", "1e5 // c", "'''\n  multi\n  line\n  '''",
                          "'''unterminated", "'single'", "[1, 2,]", "{a: 1,}", "[1\n2]", "true", "nul", "0x1F",
                          "1,000", "3 # three", "/* block */ 4", "/* unterminated", "\"str\"  # c", "", "{", "[",
                          "'''x'''", "'''\n\t tab\n'''", _num(rnd)])
        sep = rnd.choice([",", ",", "\n", "", ",,", " , "])
        comment = rnd.choice(["", "", "  # c", "  // c", "  /* c */", "  /* c"])
        parts.append(f"\n  {key}: {val}{sep}{comment}")
    parts.append(rnd.choice(["\n}", "\n}", "", "\n}}", "\n]", "\n} # end", "\n}\n// end"]))
    return _encode(rnd, "".join(parts))


def mutate_real(rnd: random.Random) -> bytes:
    """A real config with 1-8 random edits: byte flips, range deletes/duplicates/swaps, hostile tokens."""
    data = bytearray(rnd.choice(seeds()))
    for _ in range(rnd.randint(1, 8)):
        n = len(data)
        op = rnd.randrange(7)
        i = rnd.randrange(n + 1)
        j = min(n, i + rnd.choice([1, 2, 5, 20, 200]))
        if op == 0 and n:
            data[min(i, n - 1)] = rnd.randrange(256)
        elif op == 1:
            del data[i:j]
        elif op == 2:
            data[i:i] = data[i:j]
        elif op == 3:
            data[i:i] = rnd.choice(TOKENS).encode("utf-8", "surrogatepass")
        elif op == 4:
            data[i:i] = rnd.choice(HOSTILE_TEXT).encode("utf-8", "surrogatepass")
        elif op == 5 and n > 4:
            k = rnd.randrange(n)
            a, b = sorted((i, k))
            seg1, seg2 = data[a:a + 10], data[b:b + 10]
            data[b:b + 10], data[a:a + 10] = seg1, seg2
        else:
            data[i:i] = rnd.choice(HUGE_NUMBERS + NONFINITE).encode()
    return bytes(data)


def control_chars(rnd: random.Random) -> bytes:
    """Terminal and CI-log injection attempts in keys, values and unknown sections."""
    evil = rnd.choice(HOSTILE_TEXT)
    raw = rnd.random() < 0.5  # raw in the file, or as a JSON escape
    lit = ('"' + evil.replace('"', "'") + '"') if raw else json.dumps(evil)
    form = rnd.choice(['{%s: 1}', '{"optimizer": {"type": %s}}', '{"zero_optimization": {%s: 3}}',
                       '{"zero_optimization": {"offload_optimizer": {"device": %s}}}', '{"train_batch_size": %s}',
                       '{%s: {"enabled": true}}', '{"fp16": {%s: 1}}', '{"bf16": {"enabled": %s}}', '{%s: 1, %s: 2}'])
    return form.replace("%s", lit).encode("utf-8", "surrogatepass")


GENERATORS = {
    "random_bytes": random_bytes, "random_json": random_json, "typed_config": typed_config,
    "deep_nesting": deep_nesting, "huge_numbers": huge_numbers, "surrogates": surrogates, "encodings": encodings,
    "nul_bytes": nul_bytes, "long_things": long_things, "duplicates": duplicates, "top_level": top_level,
    "hjson_syntax": hjson_syntax, "mutate_real": mutate_real, "control_chars": control_chars,
}
# Relative frequencies in a mixed run (the slow generators less often).
WEIGHTS = {"random_bytes": 8, "random_json": 14, "typed_config": 14, "deep_nesting": 1, "huge_numbers": 8,
           "surrogates": 6, "encodings": 6, "nul_bytes": 4, "long_things": 0.3, "duplicates": 8, "top_level": 5,
           "hjson_syntax": 10, "mutate_real": 25, "control_chars": 8}


# ---------------------------------------------------------------------------------------------------------------
# Settings to lint under

VERSIONS = [None, "0.14.0", "0.16.9", "0.17.0", "0.17.1", "0.18.5", "0.19.8", "1.0.0"]


def random_settings(rnd: random.Random):
    from zerolint.model.view import Settings

    kw = dict(target=rnd.choice(["auto", "auto", "deepspeed", "hf", "accelerate"]),
              deepspeed_version=rnd.choice(VERSIONS), world_size=rnd.choice([None, None, 1, 3, 8]))
    if rnd.random() < 0.15:
        kw.update(params=rnd.choice(["7B", "125M", 1]), gpu_memory=rnd.choice(["24GB", "80GB", None]),
                  gpus_per_node=rnd.choice([None, 8]))
    try:
        return Settings(**kw)
    except TypeError:  # an older Settings without the memory fields
        return Settings(target=kw["target"], deepspeed_version=kw["deepspeed_version"], world_size=kw["world_size"])


# ---------------------------------------------------------------------------------------------------------------
# The invariant

@dataclass
class Outcome:
    diagnostics: int
    codes: tuple[str, ...]


def render_all(result) -> dict[str, str]:
    from zerolint.report.output import make_summary, render

    documents = {result.path: result.document} if result.document is not None else {}
    summary = make_summary(result.diagnostics, 1)
    return {fmt: render(fmt, result.diagnostics, documents, summary) for fmt in FORMATS}


def check_outputs(result, outputs: dict[str, str]) -> None:
    diags = result.diagnostics
    for fmt, out in outputs.items():
        try:
            out.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvariantError(f"{fmt} output cannot be written as UTF-8: {e}") from None
        m = RAW_CONTROL.search(out)
        if m:
            at = m.start()
            raise InvariantError(f"{fmt} output holds a raw control character U+{ord(m.group()):04X}: "
                                 f"{out[max(0, at - 60):at + 20]!r}")
    for fmt in ("json", "sarif"):
        try:
            json.loads(outputs[fmt])
        except ValueError as e:
            raise InvariantError(f"{fmt} output is not JSON: {e}") from None
    try:
        ET.fromstring(outputs["junit"].encode("utf-8"))
    except ET.ParseError as e:
        raise InvariantError(f"junit output is not XML: {e}") from None
    lines = outputs["github"].split("\n")
    if lines[-1] != "" or len(lines) - 1 != len(diags) or not all(
            ln.startswith(("::error ", "::warning ", "::notice ")) for ln in lines[:-1]):
        raise InvariantError(f"github output is not one workflow command per finding: {outputs['github'][:300]!r}")


def check_case(data: bytes, settings=None, limits=None, path: str = "fuzz.json") -> Outcome:
    from zerolint.pipeline import lint_bytes

    try:
        result = lint_bytes(data, path, settings, None, limits)
    except RecursionError as e:
        raise InvariantError(f"RecursionError escaped lint_bytes: {e}") from e
    except Exception as e:
        raise InvariantError(f"{type(e).__name__} escaped lint_bytes: {e}") from e
    crashed = [d for d in result.diagnostics if d.code == "ZL000"]
    if crashed:
        raise InvariantError("internal error: " + "; ".join(d.message for d in crashed))
    doc = result.document
    lines = doc.line_count if doc is not None else 1
    for d in result.diagnostics:
        if not (1 <= d.line <= lines + 1 and d.column >= 1 and d.end_line >= d.line):
            raise InvariantError(f"{d.code} not located: {d.line}:{d.column}-{d.end_line}:{d.end_column} "
                                 f"({lines} lines)")
    try:
        outputs = render_all(result)
    except Exception as e:
        raise InvariantError(f"{type(e).__name__} in a reporter: {e}") from e
    check_outputs(result, outputs)
    return Outcome(len(result.diagnostics), tuple(sorted({d.code for d in result.diagnostics})))


def make_case(rnd: random.Random, generator: str | None = None) -> tuple[str, bytes]:
    name = generator or rnd.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
    return name, GENERATORS[name](rnd)


def reproduce(seed: int, generator: str | None = None) -> bytes:
    """The bytes of case `seed` (as benchmarks/fuzz.py numbers them)."""
    return make_case(random.Random(seed), generator)[1]


if __name__ == "__main__":  # python tests/fuzzcases.py SEED [GENERATOR]: print one case
    sys.stdout.buffer.write(reproduce(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
