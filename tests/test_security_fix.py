"""Security regressions of the fixer and of start-up (issue 12 items 4, 9, 11, 12, 14, 15): each test reproduces the
attack that once worked and checks that it no longer does.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys

import pytest
from conftest import ROOT

TIMEOUT = 120


def run(*args, cwd, input=None, env=None):
    full_env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    full_env.pop("GITHUB_ACTIONS", None)
    return subprocess.run([sys.executable, "-m", "zerolint", *args], input=input, capture_output=True, cwd=cwd,
                          env=full_env, timeout=TIMEOUT)


# -- item 14: no rules bundle: nothing written into the package, no code loaded from a cache file ---------------------

def _fake_rules(tmp_path, monkeypatch):
    import importlib

    pkg = tmp_path / "planted_rules"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "zl001_a_rule.py").write_text("VALUE = 'from the source'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    for name in [m for m in sys.modules if m.split(".")[0] == "planted_rules"]:
        del sys.modules[name]
    importlib.invalidate_caches()
    return pkg, importlib.import_module("planted_rules")


def test_a_planted_symlink_at_the_old_bundle_temp_name_is_not_written_through(tmp_path, monkeypatch):
    from zerolint.rules.ruleset import rule_modules

    pkg, package = _fake_rules(tmp_path, monkeypatch)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    bundle = pkg / "__pycache__" / f"rules-bundle.{sys.implementation.cache_tag}.marshal"
    os.symlink(victim, f"{bundle}.{os.getpid()}.tmp")  # the old writer's predictable temp name
    os.symlink(victim, bundle)
    try:
        loaded = dict(rule_modules(package))
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "planted_rules"]:
            del sys.modules[name]
    assert loaded["zl001_a_rule"].VALUE == "from the source"
    assert victim.read_text() == "precious"


def test_a_planted_bundle_is_never_executed(tmp_path, monkeypatch):
    from zerolint.rules.ruleset import rule_modules

    pkg, package = _fake_rules(tmp_path, monkeypatch)
    st = (pkg / "zl001_a_rule.py").stat()
    planted = {"version": 1, "sources": [("zl001_a_rule", st.st_size, st.st_mtime_ns)],
               "modules": [("zl001_a_rule", compile("VALUE = 'planted'", str(pkg / "zl001_a_rule.py"), "exec"))]}
    bundle = pkg / "__pycache__" / f"rules-bundle.{sys.implementation.cache_tag}.marshal"
    bundle.write_bytes(marshal.dumps(planted))
    try:
        loaded = dict(rule_modules(package))
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "planted_rules"]:
            del sys.modules[name]
    assert loaded["zl001_a_rule"].VALUE == "from the source"


# -- item 15: a deleted working directory is a usage error ------------------------------------------------------------

@pytest.mark.parametrize("args", [["check", "CFG"], ["check", "--fix", "CFG"], ["rules"]])
def test_deleted_working_directory_exits_2_with_a_message(tmp_path, args):
    cfg = tmp_path / "ds.json"
    cfg.write_text('{"train_batch_size": 8}\n')
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os, sys, runpy\nos.chdir(sys.argv[1]); os.rmdir(sys.argv[1])\nsys.argv = ['zerolint'] + "
            "sys.argv[2:]\nrunpy.run_module('zerolint', run_name='__main__')")
    full = [str(cfg) if a == "CFG" else a for a in args]
    r = subprocess.run([sys.executable, "-c", code, str(gone), *full], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, timeout=TIMEOUT)
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("zerolint: error: the working directory is not accessible (No such file or directory); cd to "
                        "an existing directory\n")
    assert cfg.read_text() == '{"train_batch_size": 8}\n'


# -- item 12: --diff escapes the config's control characters -----------------------------------------------------------

def test_diff_prints_escape_sequences_from_the_config_escaped(tmp_path):
    hostile = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;Y3VybCBldmlsLnNo\x07\u202e"
    text = ('{\r\n  "train_batch_size": 8, # ' + hostile + '\r\n  "offload_optimizer": {"device": "cpu"},\r\n'
            '  "zero_optimization": {"stage": 2}\r\n}\r\n')
    cfg = tmp_path / "ds.json"
    cfg.write_bytes(text.encode("utf-8"))
    r = run("check", "--diff", "--select", "ZL101", "ds.json", cwd=tmp_path)
    out = r.stdout.decode("utf-8")
    assert r.returncode == 1, r.stderr
    assert not any(c in out for c in "\x1b\x07\u202e")
    assert ('   "train_batch_size": 8, # \\x1b]0;owned\\x07\\x1b[2J\\x1b]52;c;Y3VybCBldmlsLnNo\\x07\\u202e\r\n'
            in out.splitlines(keepends=True))
    assert "-  \"offload_optimizer\": {\"device\": \"cpu\"},\r\n" in out.splitlines(keepends=True)  # line ends kept
    assert cfg.read_bytes() == text.encode("utf-8")


# -- item 4: the fixer edits only the kind of file it parsed, and re-reads what it writes -----------------------------

ACCELERATE_YAML = ("compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"
                   "  zero3_init_flag: true\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_processes: 2\n")
MISPLACED = '{\n  "offload_optimizer": {"device": "cpu"},\n  "zero_optimization": {"stage": 2}\n}\n'


@pytest.mark.parametrize("mode", ["--fix-only", "--fix", "--diff"])
def test_fix_never_rewrites_an_accelerate_yaml(tmp_path, mode):
    (tmp_path / "acc.yaml").write_text(ACCELERATE_YAML)
    (tmp_path / "ds.json").write_text(MISPLACED)
    r = run("check", mode, "acc.yaml", cwd=tmp_path)
    assert (tmp_path / "acc.yaml").read_text() == ACCELERATE_YAML
    assert (tmp_path / "ds.json").read_text() == MISPLACED
    err = r.stderr.decode()
    assert ("zerolint: acc.yaml: not fixed: an Accelerate YAML is never edited; to fix the DeepSpeed config it names, "
            "run --fix on ds.json\n") in err
    assert r.returncode == {"--fix-only": 0, "--fix": 1, "--diff": 0}[mode], err
    if mode == "--fix":  # the YAML's own finding and the named config's are still reported
        out = r.stdout.decode()
        assert "acc.yaml:6:1: error ZL520 " in out and "ds.json:2:3: error ZL101 " in out


def test_fix_of_yaml_on_stdin_prints_it_unchanged(tmp_path):
    r = run("check", "--fix", "--stdin-filename", "acc.yaml", "-", cwd=tmp_path, input=ACCELERATE_YAML.encode())
    assert r.stdout.decode() == ACCELERATE_YAML
    assert "zerolint: acc.yaml: not fixed: an Accelerate YAML is never edited\n" in r.stderr.decode()


@pytest.mark.parametrize("original,broken,reader", [
    (MISPLACED, MISPLACED.replace("}\n}", "}\n"), "json"),  # json stays json
    ('{\n  a: 1 # hjson\n}\n', '{\n  a: [1 # hjson\n}\n', "hjson"),  # hjson stays readable by DeepSpeed
])
def test_a_fixed_text_that_does_not_parse_with_the_files_reader_is_not_written(tmp_path, capsys, original, broken,
                                                                                reader):
    from zerolint.cli.fix import report_fixes
    from zerolint.fix.engine import FixResult
    from zerolint.pipeline import Options, Pipeline

    cfg = tmp_path / "ds.json"
    cfg.write_text(original)
    path = str(cfg)
    pipeline = Pipeline(Options(files=(path,), fix="fix-only", quiet=True, color=False, isolated=True,
                                fixer=lambda name: (lambda t: FixResult(text=broken, original=t))))
    code = report_fixes(pipeline, pipeline.fix())
    assert code == 2
    assert cfg.read_text() == original
    err = capsys.readouterr().err
    assert f"zerolint: error: {path}: the fixed text does not parse with {reader} any more (" in err
    assert err.rstrip().endswith("; not written")


# -- item 11: --fix keeps what a rename would lose, or does not write -------------------------------------------------

FIXED = '{\n  "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}\n}\n'


def _fix(tmp_path, *extra):
    return run("check", "--fix-only", "--select", "ZL101", *extra, "ds.json", cwd=tmp_path)


def test_a_read_only_file_is_reported_not_replaced(tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text(MISPLACED)
    cfg.chmod(0o444)
    r = _fix(tmp_path)
    assert r.returncode == 2
    assert cfg.read_text() == MISPLACED and (cfg.stat().st_mode & 0o777) == 0o444
    assert "zerolint: error: ds.json: read-only (mode 0444); not written (make it writable to fix it)\n" in \
        r.stderr.decode()


def test_a_hard_linked_file_is_not_split(tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text(MISPLACED)
    os.link(cfg, tmp_path / "other-name.json")
    r = _fix(tmp_path)
    assert r.returncode == 2
    assert cfg.read_text() == MISPLACED and os.path.samefile(cfg, tmp_path / "other-name.json")
    assert ("zerolint: error: ds.json: has 2 hard links; replacing it would split them (the other names would keep "
            "the old text); not written\n") in r.stderr.decode()


def test_another_users_file_in_a_writable_directory_is_not_taken_over(tmp_path, monkeypatch):
    from zerolint.base import fsio

    cfg = tmp_path / "ds.json"
    cfg.write_text(MISPLACED)
    cfg.chmod(0o666)
    snap = fsio.Snapshot.of(str(cfg), cfg.read_bytes())
    monkeypatch.setattr(os, "geteuid", lambda: cfg.stat().st_uid + 1)  # we are someone else
    with pytest.raises(fsio.WriteRefused) as e:
        fsio.atomic_write(str(cfg), FIXED.encode(), snap, roots=[str(tmp_path)])
    assert str(e.value) == (f"{cfg}: owned by another user (uid {cfg.stat().st_uid}); replacing it would make it "
                            "yours; not written")
    assert cfg.read_text() == MISPLACED
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".zerolint-tmp")]


def test_mode_and_extended_attributes_are_kept(tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text(MISPLACED)
    cfg.chmod(0o640)
    try:
        os.setxattr(cfg, "user.zerolint-test", b"keep me")
    except OSError as e:  # a filesystem without user xattrs has nothing to lose
        pytest.skip(f"no user extended attributes here ({e.strerror})")
    r = _fix(tmp_path)
    assert r.returncode == 0, r.stderr
    assert cfg.read_text() == FIXED
    assert (cfg.stat().st_mode & 0o777) == 0o640
    assert os.getxattr(cfg, "user.zerolint-test") == b"keep me"


# -- item 15: no stray temp files --------------------------------------------------------------------------------------

def test_temp_files_are_unique_cleaned_on_error_and_leftovers_of_a_killed_run_removed(tmp_path, monkeypatch):
    import time

    from zerolint.base import fsio

    cfg = tmp_path / "ds.json"
    cfg.write_text(MISPLACED)
    stale = tmp_path / ".ds.json.k1ll3d.zerolint-tmp"  # what a SIGKILL between write and rename leaves
    stale.write_text("half")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    live = tmp_path / ".ds.json.inflight.zerolint-tmp"  # another run writing right now
    live.write_text("new")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    os.symlink(victim, tmp_path / ".ds.json.link.zerolint-tmp")
    os.utime(tmp_path / ".ds.json.link.zerolint-tmp", (1, 1), follow_symlinks=False)
    seen = []

    def boom(tmp):
        seen.append(tmp)
        raise KeyboardInterrupt  # any exception between write and rename

    monkeypatch.setattr(fsio, "_before_replace", boom)
    with pytest.raises(KeyboardInterrupt):
        fsio.atomic_write(str(cfg), FIXED.encode(), None, roots=[str(tmp_path)])
    assert cfg.read_text() == MISPLACED and not os.path.exists(seen[0])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".ds.json.inflight.zerolint-tmp", ".ds.json.link.zerolint-tmp", "ds.json", "victim"]
    assert victim.read_text() == "precious"
    # the leftovers are never read as configs
    r = run("check", "--quiet", ".", cwd=tmp_path)
    assert "zerolint-tmp" not in (r.stdout + r.stderr).decode()


# -- item 9: denial of service under the size limits -------------------------------------------------------------------

def _alias_bomb() -> str:
    lines = ["a0: &a0 [bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return ("\n".join(lines) + "\nmixed_precision: *a8\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n"
            "  deepspeed_config_file: ds.json\n")


def test_yaml_alias_bomb_is_refused_located(tmp_path):
    (tmp_path / "acc.yaml").write_text(_alias_bomb())
    (tmp_path / "ds.json").write_text('{"train_batch_size": 8}\n')
    r = run("check", "--format", "json", "acc.yaml", cwd=tmp_path)
    import json

    assert r.returncode == 1, r.stderr
    diags = json.loads(r.stdout)["diagnostics"]
    assert [(d["file"], d["code"], d["line"], d["column"], d["message"]) for d in diags] == [
        ("acc.yaml", "ZL525", 1, 5, "YAML anchor 'a0': zerolint does not expand YAML anchors and aliases (nested "
         "aliases can expand to gigabytes); write the values out; the file is not checked")]


def test_yaml_alias_without_anchor_name_in_api_and_deep_yaml(tmp_path):
    from zerolint.integrations.hf import read_accelerate_yaml

    cfg, problem, span = read_accelerate_yaml("acc.yaml", b"x: &a 1\ny: *a\n")
    assert cfg is None and problem.startswith("YAML anchor 'a': ") and span == (3, 4)
    deep = b"mixed_precision: " + b"[" * 5000 + b"]" * 5000 + b"\n"
    cfg, problem, span = read_accelerate_yaml("acc.yaml", deep, max_depth=256)
    assert (cfg, problem, span) == (None, "YAML nested deeper than 256 levels (raise the limit with --max-depth); "
                                          "the file is not checked", (17 + 255, 17 + 256))
    deep = b"mixed_precision: " + b"[" * 4000 + b"]" * 4000 + b"\n"  # under the CLI's largest --max-depth
    cfg, problem, span = read_accelerate_yaml("acc.yaml", deep, max_depth=5000)
    assert (cfg, problem, span) == (None, "YAML nested too deep for this Python's recursion limit; the file is not "
                                          "checked", (0, 1))


def test_deep_yaml_on_the_command_line_is_a_finding_not_a_traceback(tmp_path):
    (tmp_path / "acc.yaml").write_text("mixed_precision: " + "[" * 5000 + "]" * 5000 + "\n")
    for extra in ([], ["--max-depth", "5000"]):
        r = run("check", *extra, "acc.yaml", cwd=tmp_path)
        err = r.stderr.decode()
        assert r.returncode == 1 and "Traceback" not in err, err
        assert "error ZL525 [accelerate-config-invalid] YAML nested " in r.stdout.decode()


def test_fix_does_not_follow_a_directory_swapped_for_a_symlink(tmp_path, monkeypatch):
    """Issue 22, item 5: between the check of the path and the rename, the config's directory is swapped for a link
    to a directory outside the tree holding a file with the same bytes (5 of 40 races replaced it before). The
    rename now happens in the directory that was checked, through a descriptor opened without following links."""
    from zerolint.base import fsio

    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "configs").mkdir(parents=True)
    outside.mkdir()
    original = b'{"train_batch_size": 8, "bf16": {"enabled": true}}\n'
    (tree / "configs" / "ds.json").write_bytes(original)
    (outside / "ds.json").write_bytes(original)
    data, snap = fsio.read_with_snapshot(str(tree / "configs" / "ds.json"))

    def swap(tmp):
        os.rename(tree / "configs", tree / "configs.checked")
        os.symlink(outside, tree / "configs")
        os.utime(outside / "ds.json", ns=(snap.mtime_ns, snap.mtime_ns))  # the bytes and the times match

    monkeypatch.setattr(fsio, "_before_replace", swap)
    fsio.atomic_write(str(tree / "configs" / "ds.json"), b'{"fixed": true}\n', snap, roots=[str(tree)])
    assert (outside / "ds.json").read_bytes() == original  # outside the tree: untouched
    assert (tree / "configs.checked" / "ds.json").read_bytes() == b'{"fixed": true}\n'


def test_fix_refuses_when_a_directory_on_the_path_became_a_symlink_before_the_walk(tmp_path, monkeypatch):
    from zerolint.base import fsio

    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "configs").mkdir(parents=True)
    outside.mkdir()
    (tree / "configs" / "ds.json").write_bytes(b"{}\n")
    (outside / "ds.json").write_bytes(b"{}\n")
    real_check = fsio.check_target

    def check_then_swap(path, roots):
        real = real_check(path, roots)
        os.rename(tree / "configs", tree / "configs.checked")
        os.symlink(outside, tree / "configs")
        return real

    monkeypatch.setattr(fsio, "check_target", check_then_swap)
    with pytest.raises(fsio.WriteRefused, match="is no longer the directory that was checked"):
        fsio.atomic_write(str(tree / "configs" / "ds.json"), b'{"x": 1}\n', roots=[str(tree)])
    assert (outside / "ds.json").read_bytes() == b"{}\n"
