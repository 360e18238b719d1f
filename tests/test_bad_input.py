"""Bad inputs and hostile configs: limits, unreadable paths, stdin, and what `check` must never do.

- Limits: the file-size and nesting limits say which limit was hit and how to raise it; a big config is checked in
  time linear in its size.
- Paths: a directory, a FIFO, /dev/zero, a broken symlink, a symlink loop, an unreadable file end in exit 2 and a
  clear message, never a hang; `-` reads stdin (also empty or binary).
- Security: `check` never imports, executes or evaluates anything a config names (module paths, checkpoint
  writers, nvme paths, Accelerate YAML tags); output escapes terminal control characters and GitHub workflow-command
  characters from the config, in every format and in file names.
"""

from __future__ import annotations

import json
import os
import re
import sys

import fuzzcases as fc
import pytest
from conftest import ROOT, require

from zerolint.base.fsio import Limits
from zerolint.pipeline import lint_bytes

TIMEOUT = 60  # seconds: a hang fails the test instead of the CI job


def run(*args, input=None, cwd=None, env=None):
    import subprocess

    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env.pop("GITHUB_ACTIONS", None)
    try:
        return subprocess.run([sys.executable, "-m", "zerolint", *args], input=input, capture_output=True,
                              cwd=cwd or ROOT, env=full_env, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"zerolint {' '.join(map(str, args))} did not finish in {TIMEOUT} s")


# -- limits ---------------------------------------------------------------------------------------------------------

def test_size_limit_names_the_limit_and_the_option(tmp_path):
    f = tmp_path / "big.json"
    f.write_bytes(b'{"train_batch_size": 8, "pad": "' + b"x" * 5000 + b'"}')
    r = run("check", "--max-bytes", "1000", str(f))
    out = r.stdout.decode()
    assert r.returncode == 1
    assert "ZL007" in out and "1,000-byte limit" in out and "--max-bytes" in out


def test_depth_limit_names_the_limit_and_the_option():
    r = run("check", "-", input=b'{"a":' * 300 + b"1" + b"}" * 300)
    out = r.stdout.decode()
    assert r.returncode == 1
    assert "ZL007" in out and "deeper than 256 levels" in out and "--max-depth" in out
    r = run("check", "--max-depth", "400", "-", input=b'{"a":' * 300 + b"1" + b"}" * 300)
    assert "ZL007" not in r.stdout.decode()


def test_deepest_cli_limit_parses_without_recursion():
    """--max-depth 5000 (the CLI's maximum) on a 4,000-level document: parsed to the bottom (no ZL007), because the
    parser keeps its own stack; json.load's verdict is its own RecursionError, as HF would see it."""
    r = run("check", "--max-depth", "5000", "--format", "json", "-", input=b"[" * 4000 + b"]" * 4000)
    assert r.returncode == 1 and b"Traceback" not in r.stderr
    codes = {d["code"] for d in json.loads(r.stdout)["diagnostics"]}
    assert "ZL007" not in codes and "ZL005" in codes


def _big(n_sections: int) -> bytes:
    body = ",\n".join(f'  "custom_{i}": {{"enabled": true, "ratio": {i / 7}, "layers": [{i}, {i + 1}], '
                      f'"nested": {{"a": [1, "x", null]}}}}' for i in range(n_sections))
    return ('{\n  "train_micro_batch_size_per_gpu": 4,\n' + body + "\n}\n").encode()


def _work(data: bytes) -> int:
    """Function calls (Python and C) made to lint `data`: a count of work that, unlike a timer, does not change
    with the machine's load, so the test cannot fail because another job is running."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        lint_bytes(data, "big.json", limits=Limits(max_bytes=1 << 26, max_values=1 << 26))  # no limit in the way
    finally:
        sys.setprofile(None)
    return calls


def test_work_is_linear_in_size():
    """4x the size costs about 4x the work (not 16x): no quadratic loop anywhere on the path (each finding,
    duplicate, fix and snippet is found through an index, not a scan). Quadratic work inside one C call (a slice
    of a whole line per item) is held by the character-count tests of the parser (tests/test_security_fix.py)
    and by benchmarks/dos.py."""
    from zerolint.rules import engine

    small, large = _big(2500), _big(10000)
    cap, engine.MAX_FINDINGS_PER_RULE = engine.MAX_FINDINGS_PER_RULE, 1 << 30  # measured without the safety cap
    try:
        _work(small)  # imports, schema, caches
        ratio = _work(large) / _work(small)
    finally:
        engine.MAX_FINDINGS_PER_RULE = cap
    assert 3.5 < ratio < 4.5, f"4x the input made {ratio:.2f}x the calls"


# -- paths ----------------------------------------------------------------------------------------------------------

def test_directory_argument_without_configs(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    r = run("check", str(tmp_path))
    assert r.returncode == 0 and b"0 files" in r.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_refused_not_read(tmp_path):
    fifo = tmp_path / "ds.json"
    os.mkfifo(fifo)
    r = run("check", str(fifo))  # nobody writes to it: reading would block forever
    assert r.returncode == 2
    assert b"named pipe (FIFO), not a regular file" in r.stderr and b"zerolint check - <" in r.stderr


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_is_refused():
    r = run("check", "/dev/zero")
    assert r.returncode == 2 and b"character device" in r.stderr


def test_broken_symlink(tmp_path):
    (tmp_path / "ds.json").symlink_to(tmp_path / "gone.json")
    r = run("check", str(tmp_path / "ds.json"))
    assert r.returncode == 2 and b"broken symbolic link" in r.stderr and b"gone.json" in r.stderr


def test_symlink_loops(tmp_path):
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    r = run("check", str(tmp_path / "a.json"))
    assert r.returncode == 2 and b"symbolic link loop" in r.stderr
    # A directory whose subdirectory links back up, and a directory link loop passed as the directory itself.
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "ok.json").write_text('{"train_micro_batch_size_per_gpu": 1}')
    (tmp_path / "d" / "up").symlink_to(tmp_path / "d")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    r = run("check", str(tmp_path / "d"))
    assert r.returncode == 0 and b"1 file" in r.stdout
    r = run("check", str(tmp_path / "loop1"))
    assert r.returncode == 2 and b"symbolic link loop" in r.stderr


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_permission_denied(tmp_path):
    f = tmp_path / "ds.json"
    f.write_text("{}")
    f.chmod(0)
    r = run("check", str(f))
    assert r.returncode == 2 and b"permission denied" in r.stderr


def test_unreadable_paths_mixed_with_good_ones(tmp_path):
    good = tmp_path / "good.json"
    good.write_text('{"train_micro_batch_size_per_gpu": 1, "stage": 3}')
    r = run("check", str(good), str(tmp_path / "missing.json"), str(tmp_path))
    assert r.returncode == 2  # the findings are printed, then the unreadable path fails the run
    assert b"ZL101" in r.stdout and b"missing.json: no such file" in r.stderr


def test_stdin():
    r = run("check", "-", input=b'{"train_micro_batch_size_per_gpu": 1}')
    assert r.returncode == 0, r.stdout
    r = run("check", "-", input=b"")
    assert r.returncode == 1 and b"ZL009" in r.stdout
    r = run("check", "-", input=bytes(range(256)) * 4)
    assert r.returncode == 1 and b"<stdin>:1:" in r.stdout and b"Traceback" not in r.stderr
    r = run("check", "--max-bytes", "100", "-", input=b" " * 1000)
    assert r.returncode == 1 and b"ZL007" in r.stdout


# -- security: nothing named in a config is imported, executed or evaluated -----------------------------------------

EVIL_MODULE = """
import pathlib
pathlib.Path({marker!r}).write_text("imported")
"""


def test_check_never_imports_what_a_config_names(tmp_path):
    marker = tmp_path / "IMPORTED"
    (tmp_path / "evilmod.py").write_text(EVIL_MODULE.format(marker=str(marker)))
    (tmp_path / "evilpkg").mkdir()
    (tmp_path / "evilpkg" / "__init__.py").write_text(EVIL_MODULE.format(marker=str(marker)))
    config = {
        "train_micro_batch_size_per_gpu": 1,
        "torch_autocast": {"enabled": True, "dtype": "evilmod", "lower_precision_safe_modules": [
            "evilmod.Evil", "evilpkg", "evilpkg.sub.Module", "os.system"]},
        "data_types": {"keep_in_fp32_modules": ["evilmod", "evilpkg.Layer"]},
        "checkpoint": {"writer": {"type": "evilmod", "module": "evilpkg", "path": str(tmp_path / "evilmod.py")}},
        "optimizer": {"type": "evilmod.EvilOptimizer", "params": {"lr": "__import__('evilmod')"}},
        "scheduler": {"type": "evilpkg.Scheduler"},
        "zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": str(tmp_path)}},
        "tensorboard": {"enabled": True, "output_path": str(tmp_path), "job_name": "$(touch pwned)"},
        "aio": {"block_size": "{{7*7}}"}, "comms_logger": {"enabled": True, "prof_ops": ["evilmod"]},
        "evilmod": "evilpkg", "$(id)": "`touch pwned`",
    }
    cfg = tmp_path / "ds.json"
    cfg.write_text(json.dumps(config))
    env = {"PYTHONPATH": str(tmp_path)}
    for fmt in ("text", "json", "sarif", "github", "junit"):
        for target in ("deepspeed", "hf", "accelerate"):
            r = run("check", "--format", fmt, "--target", target, str(cfg), cwd=tmp_path, env=env)
            assert r.returncode in (0, 1), r.stderr
    r = run("check", "--fix", "--unsafe-fixes", str(cfg), cwd=tmp_path, env=env)
    assert r.returncode in (0, 1, 2) and b"Traceback" not in r.stderr
    assert not marker.exists(), "zerolint imported a module named in the config"
    assert not (tmp_path / "pwned").exists()
    # In-process too: the module must not show up in sys.modules.
    sys.path.insert(0, str(tmp_path))
    try:
        lint_bytes(cfg.read_bytes(), str(cfg))
        assert "evilmod" not in sys.modules and "evilpkg" not in sys.modules
    finally:
        sys.path.remove(str(tmp_path))
    assert not marker.exists()


def test_accelerate_yaml_is_loaded_safely(tmp_path):
    require("yaml")
    marker = tmp_path / "PWNED"
    payloads = [
        f"!!python/object/apply:os.system ['touch {marker}']",
        f"compute_environment: !!python/object/apply:os.system ['touch {marker}']\ndistributed_type: DEEPSPEED",
        f"deepspeed_config: !!python/object/new:subprocess.Popen [['touch', '{marker}']]",
        "distributed_type: !!python/name:os.system ''",
        f"deepspeed_config:\n  deepspeed_config_file: !!python/object/apply:os.system ['touch {marker}']",
    ]
    for i, text in enumerate(payloads):
        y = tmp_path / f"accelerate_{i}.yaml"
        y.write_text(text)
        r = run("check", "--format", "json", str(y), cwd=tmp_path)
        assert r.returncode in (1, 2) and b"Traceback" not in r.stderr, r.stderr
        assert not marker.exists(), f"YAML payload {i} ran"


HOSTILE = {
    "ansi": "\x1b[2J\x1b[31mRED",
    "osc8": "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\",
    "title": "\x1b]0;owned\x07",
    "bidi": "\u202eevil\u2066x\u2069",
    "c1": "\x9b31m\x9d0;t\x9c",
    "zero-width": "a\u200bb",
}


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_output_escapes_terminal_controls_from_the_config(fmt, tmp_path):
    config = {"train_micro_batch_size_per_gpu": 1}
    for name, evil in HOSTILE.items():
        config[f"key_{name}_{evil}"] = 1  # unknown keys: echoed in the message
        config.setdefault("optimizer", {"type": evil})
        config.setdefault("zero_optimization", {"stage": 3, f"x{evil}": 1, "offload_param": {"device": evil}})
    raw = json.dumps(config, ensure_ascii=False).encode()  # raw control characters in the file
    escaped = json.dumps(config).encode()  # as \u escapes
    for data in (raw, escaped):
        r = run("check", "--format", fmt, "-", input=data)
        assert r.returncode == 1
        for stream in (r.stdout, r.stderr):
            text = stream.decode("utf-8")
            m = fc.RAW_CONTROL.search(text)
            around = text[max(0, m.start() - 80):m.end() + 20] if m else ""
            assert m is None, f"raw U+{ord(m.group()):04X} in {fmt} output: {around!r}"


def test_file_names_with_control_characters_are_escaped(tmp_path):
    bad = tmp_path / "ds\x1b[31m\u202e.json"
    bad.write_text('{"train_micro_batch_size_per_gpu": 1, "stage": 3}')
    for fmt in ("text", "json", "sarif", "github", "junit"):
        r = run("check", "--format", fmt, str(tmp_path), str(tmp_path / "gone\x1b]0;x\x07.json"))
        assert r.returncode == 2
        for stream in (r.stdout, r.stderr):
            assert fc.RAW_CONTROL.search(stream.decode("utf-8")) is None, (fmt, stream[:400])


def test_coloured_terminal_output_escapes_too():
    """The coloured path (a terminal) prints the same escaped text: the only escape sequences in it are its own
    colours (report/text.py _SGR), never one from the file."""
    from zerolint.report.output import make_summary
    from zerolint.report.text import render, render_color

    data = json.dumps({"[bold red]x[/]" + HOSTILE["ansi"]: 1, "stage": HOSTILE["osc8"]}).encode()
    res = lint_bytes(data, "ds\x1b[0m.json")
    args = res.diagnostics, {res.path: res.document}, make_summary(res.diagnostics, 1)
    out = render_color(*args)
    assert "\x1b]8" not in out and "\x1b[2J" not in out and "\x1b[31m" not in out and "[bold red]x[/]" in out
    ours = re.compile(r"\x1b\[(?:1|2|32|33|36|1;31|1;33|1;36)m|\x1b\[0m")
    assert "\x1b" not in ours.sub("", out)
    assert ours.sub("", out) == render(*args)


def test_github_workflow_command_characters():
    """A key holding %, CR, LF and :: cannot end its annotation early or start a command of its own; decoding the
    runner's escapes gives back the text."""
    key = "a%b\r::error file=x::pwned\n::set-output name=x::y,c:d"
    config = json.dumps({key: 1, "train_micro_batch_size_per_gpu": 1}).encode()
    r = run("check", "--format", "github", "-", input=config)
    lines = r.stdout.decode().splitlines()
    assert lines and all(ln.startswith(("::error ", "::warning ", "::notice ")) for ln in lines)
    unknown = [ln for ln in lines if "ZL103" in ln or "ZL1" in ln]
    assert unknown
    data = unknown[0].split("::", 2)[2]
    assert b"\r" not in r.stdout and "%25" in data  # the message shows the key as repr(): no raw CR/LF left
    decoded = data.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")
    assert "a%b" in decoded and "::error file=x::pwned" in decoded  # data, inside this one annotation
    # Properties (file=) escape ':' and ',' as well: a file name cannot smuggle a property of its own.
    from zerolint.report.github import escape_data, escape_property

    assert escape_property("a:b,c%\r\n") == "a%3Ab%2Cc%25%0D%0A"
    assert escape_data("x::y%\n") == "x::y%25%0A"
