"""`zerolint check` starts fast (docs/benchmarks.md): what it must not import, and the caches that replace work.

- the installed DeepSpeed version comes from its dist-info directory name, not importlib.metadata (~15 ms);
- no traceback, difflib, importlib.resources, tomllib (without a zerolint config), estimate/modelspec (without
  --params) on a clean one-file check;
- the rule modules load from one bundle file when it is fresh, and exactly as from their own files.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest

from conftest import ROOT, SEED

LAZY = ("importlib.metadata", "importlib.resources", "difflib", "traceback", "tomllib", "zerolint.estimate",
        "zerolint.modelspec", "email", "zipfile", "rich", "yaml", "jsonschema", "pydantic", "torch", "deepspeed")


def test_installed_deepspeed_matches_importlib_metadata():
    from importlib import metadata

    from zerolint.versions import installed_deepspeed

    try:
        expected = metadata.version("deepspeed")
    except metadata.PackageNotFoundError:
        expected = None
    assert installed_deepspeed() == expected


@pytest.mark.parametrize("name,version", [
    ("deepspeed-0.19.8.dist-info", "0.19.8"), ("DeepSpeed-0.14.0.egg-info", "0.14.0"),
    ("deepspeed-0.9.5-py3.10.egg", "0.9.5"), ("deepspeed-0.16.0rc1.dist-info", "0.16.0rc1"),
    ("deepspeed-0.15.0+cu121.dist-info", "0.15.0+cu121"), ("deepspeed_kernels-1.0.dist-info", None),
    ("deepspeed-mii-0.2.dist-info", None),
])
def test_dist_info_names(tmp_path, monkeypatch, name, version):
    from zerolint import versions

    (tmp_path / name).mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert versions.installed_deepspeed() == version


def test_develop_egg_info_reads_pkg_info(tmp_path, monkeypatch):
    from zerolint import versions

    (tmp_path / "deepspeed.egg-info").mkdir()
    pkg_info = "Metadata-Version: 2.1\nName: deepspeed\nVersion: 0.18.2\n"
    (tmp_path / "deepspeed.egg-info" / "PKG-INFO").write_text(pkg_info)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path)])
    assert versions.installed_deepspeed() == "0.18.2"


def test_check_imports_nothing_it_does_not_need(tmp_path):
    cfg = tmp_path / "ds.json"  # a directory without a zerolint config (no TOML to parse)
    cfg.write_bytes((SEED / "ds_zero3_offload.json").read_bytes())
    # --quiet, not -q: a short option makes click import difflib (its did-you-mean for the long-option lookup).
    code = ("import sys\nfrom zerolint.cli import main\ntry:\n    main(['check', '--quiet', sys.argv[1]])\n"
            "except SystemExit:\n    pass\nprint('\\n'.join(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(cfg)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True).stdout.split()
    loaded = {m for m in out if m in LAZY or m.split(".")[0] in LAZY}
    assert not loaded, f"imported on a plain check: {sorted(loaded)}"


def _fake_rules(tmp_path, files: dict[str, str]):
    pkg_dir = tmp_path / "fake_rules"
    pkg_dir.mkdir(exist_ok=True)
    for name, text in files.items():
        (pkg_dir / f"{name}.py").write_text(text)
    return types.SimpleNamespace(__name__="zl_fake_rules", __path__=[str(pkg_dir)]), pkg_dir


def _load(package):
    from zerolint.rule import _rule_modules

    for name in [m for m in sys.modules if m.startswith("zl_fake_rules.")]:
        del sys.modules[name]
    return {name: (m if isinstance(m, Exception) else m.VALUE) for name, m in _rule_modules(package)}


def test_rule_bundle_is_used_when_fresh_and_ignored_when_stale(tmp_path, monkeypatch):
    from zerolint import rule

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    sys.modules["zl_fake_rules"] = types.ModuleType("zl_fake_rules")
    sys.modules["zl_fake_rules"].__path__ = [str(tmp_path / "fake_rules")]
    package, d = _fake_rules(tmp_path, {"a_rule": '"""doc a"""\nVALUE = 1\n', "b_rule": "VALUE = 2\n"})
    try:
        assert _load(package) == {"a_rule": 1, "b_rule": 2}  # imported one by one; the bundle is written
        bundle = rule._bundle_path(str(d))
        assert bundle and os.path.exists(bundle)
        assert _load(package) == {"a_rule": 1, "b_rule": 2}  # from the bundle
        m = sys.modules["zl_fake_rules.a_rule"]
        assert m.__doc__ == "doc a" and m.__file__ == str(d / "a_rule.py")
        (d / "b_rule.py").write_text("VALUE = 22\n")  # edited: stale
        os.utime(d / "b_rule.py", ns=(1, 1))
        assert _load(package) == {"a_rule": 1, "b_rule": 22}
        (d / "c_rule.py").write_text("VALUE = 3\n")  # added
        assert _load(package)["c_rule"] == 3
        (d / "c_rule.py").unlink()  # removed
        assert "c_rule" not in _load(package)
        (d / "b_rule.py").write_text("raise RuntimeError('broken rule')\n")  # a broken module stays isolated
        loaded = _load(package)
        assert loaded["a_rule"] == 1 and isinstance(loaded["b_rule"], RuntimeError)
        with open(bundle, "wb") as f:  # a corrupt bundle is ignored
            f.write(b"\x00garbage")
        (d / "b_rule.py").write_text("VALUE = 2\n")
        assert _load(package) == {"a_rule": 1, "b_rule": 2}
    finally:
        for name in [m for m in sys.modules if m.startswith("zl_fake_rules")]:
            del sys.modules[name]


def test_bundled_and_imported_rules_are_the_same():
    code = ("from zerolint.rule import all_rules\n"
            "import hashlib\n"
            "for r in all_rules(): print(r.code, r.name, r.severity, r.versions, r.targets, "
            "hashlib.md5(r.rationale.encode()).hexdigest(), "
            "r.func.__module__, r.func.__code__.co_filename)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                           check=True).stdout for _ in range(2)]
    no_bundle = "import zerolint.rule as r; r._read_bundle = lambda *a: None\n" + code
    plain = subprocess.run([sys.executable, "-c", no_bundle], capture_output=True, text=True, cwd=ROOT, env=env,
                           check=True).stdout
    assert runs[0] == runs[1] == plain and plain.count("\n") > 30
