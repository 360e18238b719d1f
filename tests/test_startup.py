"""`zerolint check` starts fast (docs/benchmarks.md): what it must not import, and the caches that replace work.

- the installed DeepSpeed version comes from its dist-info directory name, not importlib.metadata (~15 ms);
- no traceback, difflib, importlib.resources, tomllib (without a zerolint config), estimate/modelspec (without
  --params) on a clean one-file check;
- the rule modules are plain imports (Python's .pyc cache); nothing else is written into the package.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest
from conftest import ROOT, SEED

LAZY = ("importlib.metadata", "importlib.resources", "difflib", "traceback", "tomllib", "zerolint.estimate.memory",
        "zerolint.estimate.modelspec", "email", "zipfile", "rich", "yaml", "jsonschema", "pydantic", "torch",
        "deepspeed")


@pytest.mark.parametrize("dist", ["deepspeed", "torch", "transformers", "accelerate", "huggingface-hub",
                                  "huggingface_hub", "PyYAML", "typing-extensions", "not-installed-anywhere"])
def test_installed_version_matches_importlib_metadata(dist):
    from importlib import metadata

    from zerolint.model.versions import installed_version

    try:
        expected = metadata.version(dist)
    except metadata.PackageNotFoundError:
        expected = None
    assert installed_version(dist) == expected


@pytest.mark.parametrize("name,version", [
    ("deepspeed-0.19.8.dist-info", "0.19.8"), ("DeepSpeed-0.14.0.egg-info", "0.14.0"),
    ("deepspeed-0.9.5-py3.10.egg", "0.9.5"), ("deepspeed-0.16.0rc1.dist-info", "0.16.0rc1"),
    ("deepspeed-0.15.0+cu121.dist-info", "0.15.0+cu121"), ("deepspeed_kernels-1.0.dist-info", None),
    ("deepspeed-mii-0.2.dist-info", None),
])
def test_dist_info_names(tmp_path, monkeypatch, name, version):
    from zerolint.model import versions

    (tmp_path / name).mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert versions.installed_deepspeed() == version


def test_develop_egg_info_reads_pkg_info(tmp_path, monkeypatch):
    from zerolint.model import versions

    (tmp_path / "deepspeed.egg-info").mkdir()
    pkg_info = "Metadata-Version: 2.1\nName: deepspeed\nVersion: 0.18.2\n"
    (tmp_path / "deepspeed.egg-info" / "PKG-INFO").write_text(pkg_info)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path)])
    assert versions.installed_deepspeed() == "0.18.2"


AUTO = ('{"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", '
        '"zero_optimization": {"stage": 2}, "bf16": {"enabled": "auto"}}')


@pytest.mark.parametrize("config,args", [
    ("seed", ["--quiet"]),
    ("seed", ["--color", "always"]),  # colour is plain escape sequences (report/text.py), not rich
    ("auto", ["--quiet"]),  # "auto" asks for transformers' version: read from its metadata directory's name
])
def test_check_imports_nothing_it_does_not_need(tmp_path, config, args):
    cfg = tmp_path / "ds.json"  # a directory without a zerolint config (no TOML to parse)
    if config == "seed":
        cfg.write_bytes((SEED / "ds_zero3_offload.json").read_bytes())
    else:
        cfg.write_text(AUTO)
    # --quiet, not -q: a short option makes click import difflib (its did-you-mean for the long-option lookup).
    code = (f"import sys\nfrom zerolint.cli import main\ntry:\n    main(['check', *{args!r}, sys.argv[1]])\n"
            "except SystemExit:\n    pass\nprint('\\n'.join(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(cfg)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, check=True).stdout.split()
    loaded = {m for m in out if m in LAZY or m.split(".")[0] in LAZY}
    assert not loaded, f"imported on a plain check: {sorted(loaded)}"


def _console_script_check(tmp_path) -> list[str]:
    """The modules a plain one-file check through the console script (cli/fast.py) leaves in sys.modules."""
    cfg = tmp_path / "ds.json"
    cfg.write_bytes((SEED / "ds_zero3_offload.json").read_bytes())
    code = ("import os, sys\nos._exit = sys.exit\nfrom zerolint.cli.fast import main\ntry:\n"
            "    main(['check', sys.argv[1]])\nexcept SystemExit as e:\n    print('exit', e.code)\n"
            "print('\\n'.join(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(cfg)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, check=True).stdout.split("\n")
    assert "All checks passed in 1 file." in out and "exit 0" in out
    return out


def test_console_script_check_imports_no_click_and_no_dataclasses(tmp_path):
    """The console script's plain check (cli/fast.py) runs without click, and without `dataclasses` (which brings
    `inspect`, `ast`, `dis`, `tokenize`): the value classes on that path are plain classes (base/record.py). Both
    cost a one-file check a large share of its time in a normal install (docs/benchmarks.md)."""
    out = _console_script_check(tmp_path)
    loaded = {m for m in out if m.split(".")[0] in (*LAZY, "click", "dataclasses", "inspect", "ast", "dis")}
    assert not loaded, f"imported on a plain check through the console script: {sorted(loaded)}"


def test_console_script_check_imports_no_typing_and_no_glob(tmp_path):
    """Nor `typing` (~4 ms with `contextlib`, `warnings`, `_typing`): annotations are strings (`from __future__
    import annotations`), the ABCs come from `collections.abc`, and names only `typing` has (`Any`) are imported
    under `if TYPE_CHECKING:` with a module-level `TYPE_CHECKING = False` (docs/CONTRIBUTING.md). Nor `glob` (and
    the `contextlib` it brings): only a quoted glob argument or a config's extend-rules needs it."""
    out = _console_script_check(tmp_path)
    loaded = {m for m in out if m.split(".")[0] in ("typing", "_typing", "typing_extensions", "glob", "contextlib")}
    assert not loaded, f"imported on a plain check through the console script: {sorted(loaded)}"


def test_plain_check_lists_the_rules_once_and_compiles_only_what_it_uses(tmp_path):
    """A clean one-file check lists the rule package once (the pipeline's RuleSet serves --select's check and the
    suppressions too) and compiles neither the escape class for printing config text nor the Accelerate-YAML
    pattern that only a YAML found in a directory needs: `re` compiles those on first use."""
    from zerolint.base.escape import _CONTROL
    from zerolint.model.detect import _ACCELERATE_DEEPSPEED

    cfg = tmp_path / "ds.json"
    cfg.write_bytes((SEED / "ds_zero3_offload.json").read_bytes())
    code = ("import os, re, sys\nos._exit = sys.exit\ncompiled = set()\norig = re._compile\n"
            "def spy(pattern, flags):\n    compiled.add(pattern)\n    return orig(pattern, flags)\n"
            "re._compile = spy\n"
            "from zerolint.rules import ruleset\nlisted = []\nload = ruleset.load_rules\n"
            "def count(*a, **k):\n    listed.append(1)\n    return load(*a, **k)\n"
            "ruleset.load_rules = count\n"
            "from zerolint.cli.fast import main\ntry:\n    main(['check', sys.argv[1]])\n"
            "except SystemExit as e:\n    print('exit', e.code)\n"
            "print('listed', len(listed))\nprint(repr(sorted(compiled, key=repr)))\n")
    out = subprocess.run([sys.executable, "-c", code, str(cfg)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, check=True).stdout.split("\n")
    assert out[:3] == ["All checks passed in 1 file.", "exit 0", "listed 1"], out
    compiled = ast.literal_eval(out[3])  # a list of str and bytes patterns
    assert compiled and _CONTROL not in compiled and _ACCELERATE_DEEPSPEED not in compiled


def _fake_rules(tmp_path, files: dict[str, str]):
    pkg_dir = tmp_path / "fake_rules"
    pkg_dir.mkdir(exist_ok=True)
    (pkg_dir / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg_dir / f"{name}.py").write_text(text)
    return pkg_dir


def _load(tmp_path, monkeypatch):
    import importlib

    from zerolint.rules.ruleset import rule_modules

    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "fake_rules" or m.startswith("fake_rules.")]:
        del sys.modules[name]
    importlib.invalidate_caches()
    package = importlib.import_module("fake_rules")
    return dict(rule_modules(package))


def test_rule_modules_are_plain_imports_and_write_only_pyc(tmp_path, monkeypatch):
    """Rule modules load through the import system (no bundle of our own: issue 12 item 14); a broken one is
    isolated; what appears in the package is Python's own bytecode cache and nothing else."""
    from importlib.machinery import SourceFileLoader

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    d = _fake_rules(tmp_path, {"zl001_a": '"""doc a"""\nVALUE = 1\n', "zl002_b": "raise RuntimeError('broken rule')\n",
                               "_private": "raise RuntimeError('not a rule module')\n"})
    (d / "notes.txt").write_text("not a module")
    try:
        loaded = _load(tmp_path, monkeypatch)
        assert list(loaded) == ["zl001_a", "zl002_b"]  # every public module of the package is a rule module
        a = loaded["zl001_a"]
        assert a.VALUE == 1 and a.__doc__ == "doc a" and a.__file__ == str(d / "zl001_a.py")
        assert isinstance(a.__spec__.loader, SourceFileLoader)
        assert isinstance(loaded["zl002_b"], RuntimeError) and str(loaded["zl002_b"]) == "broken rule"
        assert "fake_rules._private" not in sys.modules
        written = sorted(p.name for p in (d / "__pycache__").iterdir())
        assert written and all(n.endswith(".pyc") and n.split(".")[0] in ("__init__", "zl001_a", "zl002_b")
                               for n in written), written
    finally:
        for name in [m for m in sys.modules if m == "fake_rules" or m.startswith("fake_rules.")]:
            del sys.modules[name]


def test_rule_loading_writes_no_bundle_into_the_installed_package(tmp_path):
    """A check imports every rule and leaves nothing but .pyc files in rules/__pycache__."""
    from zerolint.rules import builtin

    cache = os.path.join(builtin.__path__[0], "__pycache__")
    code = "from zerolint.rules.ruleset import RuleSet\nprint(len(RuleSet.builtin().rules))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={**env, "PYTHONPATH": str(ROOT / "src")}, check=True).stdout
    assert int(out) > 30
    extra = [n for n in os.listdir(cache) if not n.endswith(".pyc")] if os.path.isdir(cache) else []
    assert not extra, extra


# -- no tricks in the library (issue 13 item 3) ------------------------------------------------------------------------

def _python(code: str, *args: str, cwd, argv0: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    if argv0 is None:
        return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, env=env)
    script = cwd / argv0
    script.write_text(code)
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_importing_or_calling_the_cli_keeps_the_hosts_gc_thresholds(tmp_path):
    """The GC tweak lives inside main(): `import zerolint.cli` changes nothing, and a host that calls main() in
    process (a test, an IDE plugin) gets its thresholds back; while main() runs the CLI's thresholds hold."""
    cfg = tmp_path / "ds.json"
    cfg.write_bytes((SEED / "ds_zero3_offload.json").read_bytes())
    code = ("import gc, sys\ngc.set_threshold(700, 10, 10)\nimport zerolint.cli as cli\nprint(gc.get_threshold())\n"
            "seen = []\n"
            "orig = cli.check.callback\n"
            "def spy(*a, **k):\n    seen.append(gc.get_threshold())\n    return orig(*a, **k)\n"
            "cli.check.callback = spy\n"
            "try:\n    cli.main(['check', '--quiet', sys.argv[1]])\n"
            "except SystemExit as e:\n    print('exit', e.code)\n"
            "print(seen[0], gc.get_threshold())\n")
    r = _python(code, str(cfg), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert (lines[0], lines[-2:]) == ("(700, 10, 10)", ["exit 0", "(20000, 20, 100) (700, 10, 10)"]), r.stdout


LOUD = ("import sys\nclass Loud:\n    def __del__(self):\n        sys.stdout.write('teardown\\n')\n"
        "        sys.stdout.flush()\nkeep = Loud()\nfrom zerolint.cli import main\nmain()\n")


def test_the_zerolint_process_skips_teardown_and_a_host_does_not(tmp_path):
    """os._exit (no interpreter teardown) only for the `zerolint` script itself, with the right exit code and the
    output flushed; the same main() under another program name exits normally (its teardown runs)."""
    cfg = tmp_path / "ds.json"
    cfg.write_text('{"train_batch_size": 8, "fp16": {"enabled": true}, "bf16": {"enabled": true}}')
    script = _python(LOUD, "check", "--no-color", str(cfg), cwd=tmp_path, argv0="zerolint")
    host = _python(LOUD, "check", "--no-color", str(cfg), cwd=tmp_path, argv0="host.py")
    assert (script.returncode, host.returncode) == (1, 1), script.stderr + host.stderr
    assert "error ZL301" in script.stdout and "teardown" not in script.stdout
    assert host.stdout == script.stdout + "teardown\n"


def test_a_non_editable_install_is_not_written_to_by_running_it(tmp_path):
    """pip install (not editable) into a folder; check (with a policy), --fix, rules, rule: afterwards the installed
    package holds exactly the files it held before, byte for byte and with the same times."""
    import shutil

    # Built from a clean copy: setuptools reuses a checkout's build/lib, where files of moved modules linger.
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    wheels = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(wheels), str(tree)], check=True, capture_output=True)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                    str(next(wheels.glob("zerolint-*.whl")))], check=True, capture_output=True)
    pkg = site / "zerolint"

    def listing() -> dict[str, tuple[int, int]]:
        return {str(p.relative_to(pkg)): (p.stat().st_size, p.stat().st_mtime_ns) for p in pkg.rglob("*")}

    before = listing()
    assert any(k.startswith("rules/builtin/zl") for k in before)
    assert not any(k.startswith("rules/zl") for k in before)  # the rule modules live in rules/builtin/ only
    work = tmp_path / "work"
    (work / "policies").mkdir(parents=True)
    (work / "policies" / "p.yaml").write_text('rules:\n  - id: ORG001\n    condition: "fp16.enabled == `true`"\n'
                                              '    pointer: /fp16/enabled\n    message: "no fp16 ({value})"\n')
    (work / ".zerolint.toml").write_text('extend-rules = ["policies/*.yaml"]\n')
    (work / "ds.json").write_text('{"train_batch_size": 8, "fp16": {"enabled": true}, "bf16": {"enabled": true},\n'
                                  ' "offload_optimizer": {"device": "cpu"}}\n')
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = str(site)
    runs = [["check", "--format", "sarif", "ds.json"], ["check", "--fix", "ds.json"], ["rules"], ["rule", "ZL201"]]
    codes = []
    for args in runs:
        r = subprocess.run([sys.executable, "-m", "zerolint", *args], cwd=work, env=env, capture_output=True,
                           text=True)
        codes.append(r.returncode)
        if args[0] == "check" and "sarif" in args:
            assert '"ORG001"' in r.stdout and "no fp16" in r.stdout, r.stdout + r.stderr
    assert codes == [1, 1, 0, 0]
    assert listing() == before
