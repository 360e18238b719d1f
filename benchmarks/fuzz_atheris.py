"""Coverage-guided fuzzing of parse -> view -> rules -> reporters with atheris (libFuzzer for Python).

    pip install atheris                      # a binary wheel; Linux x86_64, CPython <= 3.11 at the time of writing
    python benchmarks/fuzz_atheris.py -atheris_runs=200000 -max_len=4096 /tmp/zl-corpus
    python benchmarks/fuzz_atheris.py -max_total_time=600 /tmp/zl-corpus

The corpus directory starts from the real-world configs, the seed examples and the rule-case configs (written on
the first run when it is empty). The target is tests/fuzzcases.py `check_case`: a crash is an exception escaping
lint_bytes or a reporter, a ZL000 (rule crash), an unlocated diagnostic or a malformed/unescaped output; libFuzzer
then saves the input as crash-<sha1> in the working directory.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

import atheris  # noqa: E402

with atheris.instrument_imports(include=["zerolint"]):
    import zerolint.api  # noqa: F401
    import zerolint.cli  # noqa: F401
    import zerolint.report.github  # noqa: F401
    import zerolint.report.json_format  # noqa: F401
    import zerolint.report.junit  # noqa: F401
    import zerolint.report.sarif  # noqa: F401
    import zerolint.report.text  # noqa: F401
    import zerolint.rules.ruleset

    zerolint.rules.ruleset.RuleSet.builtin()  # instrument the rule modules too

import fuzzcases as fc  # noqa: E402

TARGETS = ("auto", "deepspeed", "hf", "accelerate")


def test_one(data: bytes) -> None:
    from zerolint.model.view import Settings

    # The first byte picks the reader; the rest is the config.
    head = data[0] if data else 0
    settings = Settings(target=TARGETS[head % 4], world_size=(None, 8)[head >> 2 & 1])
    fc.check_case(data[1:], settings)


def seed_corpus(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    if any(directory.iterdir()):
        return
    for data in fc.seeds():
        (directory / hashlib.sha1(data).hexdigest()).write_bytes(b"\x00" + data)


def main() -> None:
    dirs = [a for a in sys.argv[1:] if not a.startswith("-")]
    for d in dirs:
        seed_corpus(Path(d))
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
