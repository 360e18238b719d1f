"""The VS Code extension (editors/vscode/): its launch logic in Node, its .vsix as vsce builds it, and the .vsix
installed into a real VS Code (code-server, driven by headless Chromium: editors/vscode/test/e2e.js) showing the
findings `zerolint check` reports, applying the fix `zerolint check --diff` shows, and fixing on save.

Tools (CI installs them; without CI=true a missing one skips): Node.js 20 and npm; `npm ci` in editors/vscode
(vscode-languageclient, @vscode/vsce, playwright-core); code-server from editors/vscode/test/install-code-server.sh;
Chromium at /usr/bin/chromium (or $ZEROLINT_CHROMIUM). ZEROLINT_VSCODE_SCREENSHOTS=docs/images copies the two
screenshots of the end-to-end run there (docs/editors.md shows them).
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, SEED, missing

from zerolint.lsp import schema_help
from zerolint.model.view import default_deepspeed_version

EXT = ROOT / "editors" / "vscode"
VSCE = EXT / "node_modules" / ".bin" / "vsce"
CODE_SERVER = EXT / "test" / "code-server" / "node_modules" / ".bin" / "code-server"
PLAYWRIGHT = EXT / "node_modules" / "playwright-core" / "package.json"
CONFIGS = ("ds_offload_broken.json", "ds_fp16_bf16.json")
FIX_ON_SAVE = "ds_fix_on_save.jsonc"  # JSONC: the language the run turns zerolint.fixOnSave on for


def need_node() -> str:
    node = shutil.which("node")
    if node is None:
        missing("node is not on PATH (the VS Code extension's tests need Node.js 20)")
    return node


_SET_UP: list[str] = []  # the output of editors/vscode/test/setup.sh, once per session


def need(path: Path, how: str) -> None:
    """The npm side of the tests, installed by editors/vscode/test/setup.sh from the lock files (once; again only
    when a lock file changed); a missing system tool (npm, a compiler, headers) skips or, with CI=true, fails."""
    if not _SET_UP and shutil.which("npm"):
        got = run(["bash", "test/setup.sh"], EXT, timeout=900)
        _SET_UP.append(got.stdout + got.stderr)
        if got.returncode != 0:
            missing(f"editors/vscode/test/setup.sh failed ({how}):\n{got.stderr[-3000:]}")
    if not path.exists():
        missing(f"{path.relative_to(ROOT)} is missing: {how}")


def run(cmd: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    """Run a tool in its own process group and stop the whole group whatever happens (e2e.js starts code-server,
    an extension host, the zerolint server and Chromium)."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def zerolint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zerolint", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"})


def fixed_by_check(workspace: Path, name: str, into: Path) -> str:
    """What `zerolint check --fix` makes of a copy of the file (same name, so the same detection)."""
    into.mkdir()
    shutil.copy(workspace / name, into / name)
    zerolint("check", "--fix", name, cwd=into)
    return (into / name).read_text()


def test_launch_logic_unit_tests():
    node = need_node()
    got = run([node, "--test", "test/unit.test.js"], EXT, timeout=60)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "# pass 6\n# fail 0\n" in got.stdout


def build_vsix(out: Path) -> Path:
    need_node()
    need(VSCE, "run `npm ci` in editors/vscode")
    vsix = out / "zerolint.vsix"
    got = run([str(VSCE), "package", "--out", str(vsix)], EXT, timeout=180)
    assert got.returncode == 0, got.stdout + got.stderr
    return vsix


def test_vsix_holds_the_extension_and_its_runtime_dependencies_only(tmp_path):
    vsix = build_vsix(tmp_path)
    names = set(zipfile.ZipFile(vsix).namelist())
    manifest = json.loads(zipfile.ZipFile(vsix).read("extension/package.json"))
    assert manifest["main"] == "./src/extension.js"
    assert manifest["activationEvents"] == ["onLanguage:json", "onLanguage:jsonc", "onLanguage:yaml",
                                            "onLanguage:hjson"]
    assert sorted(manifest["contributes"]["configuration"]["properties"]) == [
        "zerolint.deepspeedVersion", "zerolint.fixOnSave", "zerolint.interpreter", "zerolint.path",
        "zerolint.target", "zerolint.worldSize"]
    assert {"extension/src/extension.js", "extension/src/launch.js", "extension/LICENSE.txt",
            "extension/readme.md", "extension/node_modules/vscode-languageclient/package.json"} <= names
    # No tests, no test drivers, no build tools in the package.
    assert not [n for n in names if n.startswith(("extension/test/", "extension/node_modules/playwright-core/",
                                                  "extension/node_modules/@vscode/vsce/"))]
    assert "Apache License" in zipfile.ZipFile(vsix).read("extension/LICENSE.txt").decode()


def e2e(tmp_path: Path, scenario: dict) -> dict:
    """Build the .vsix, run test/e2e.js on the scenario, return what it saw (its RESULT.json)."""
    node = need_node()
    need(PLAYWRIGHT, "run `npm ci` in editors/vscode")
    need(CODE_SERVER, "run editors/vscode/test/install-code-server.sh")
    chromium = os.environ.get("ZEROLINT_CHROMIUM", "/usr/bin/chromium")
    if not os.access(chromium, os.X_OK):
        missing(f"no Chromium at {chromium} (apt-get install -y chromium, or set ZEROLINT_CHROMIUM)")
    out = tmp_path / "out"
    out.mkdir()
    scenario = {"codeServer": str(CODE_SERVER), "chromium": chromium, "vsix": str(build_vsix(tmp_path)),
                "out": str(out), **scenario}
    (tmp_path / "scenario.json").write_text(json.dumps(scenario))
    got = run([node, "test/e2e.js", str(tmp_path / "scenario.json")], EXT, timeout=420)
    result = json.loads((out / "result.json").read_text())
    assert got.returncode == 0 and result["ok"], f"{result.get('error')}\n{got.stderr[-4000:]}"
    assert "Extension 'zerolint.vsix' was successfully installed." in result["install"]
    return result


@pytest.mark.slow
def test_in_code_server_without_a_server_the_install_hint_shows(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    shutil.copy(SEED / "ds_offload_broken.json", workspace)
    # No zerolint anywhere: neither setting names a program that exists, and no zerolint is on PATH.
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not (Path(d) / "zerolint").exists())
    result = e2e(tmp_path, {
        "workspace": str(workspace), "open": ["ds_offload_broken.json"], "expectError": True, "env": {"PATH": path},
        "settings": {"zerolint.path": str(tmp_path / "no-such-zerolint"),
                     "zerolint.interpreter": str(tmp_path / "no-such-python")}})
    hint = ("zerolint could not start its language server. Install zerolint with its lsp extra: from a clone, "
            "pip install -e '.[lsp]'; once on PyPI, pip install 'zerolint[lsp]'. Then set zerolint.path to its "
            "zerolint executable, or zerolint.interpreter to the Python that has it, or put zerolint on PATH.")
    assert result["notifications"] == [hint]


@pytest.mark.slow
def test_in_code_server_findings_quick_fix_and_fix_on_save(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for name in CONFIGS:
        shutil.copy(SEED / name, workspace / name)
    shutil.copy(SEED / "ds_offload_broken.json", workspace / FIX_ON_SAVE)
    # What the command line says of the same files, before the editor touches them.
    report = json.loads(zerolint("check", "--format", "json", *CONFIGS, cwd=workspace).stdout)
    diff = zerolint("check", "--diff", "ds_offload_broken.json", cwd=workspace).stdout
    expected_fix = fixed_by_check(workspace, "ds_offload_broken.json", tmp_path / "fix")
    expected_on_save = fixed_by_check(workspace, FIX_ON_SAVE, tmp_path / "fix-on-save")
    original = (workspace / "ds_offload_broken.json").read_text()
    zl101 = next(d for d in report["diagnostics"] if d["code"] == "ZL101")

    scenario = {
        "workspace": str(workspace), "open": list(CONFIGS),
        # zerolint.path names nothing: the extension goes on to zerolint.interpreter, quietly.
        "settings": {"zerolint.path": str(tmp_path / "no-such-zerolint"), "zerolint.interpreter": sys.executable},
        "codes": sorted({d["code"] for d in report["diagnostics"]}),
        "hover": "gradient_clipping",  # a key of the last file opened, ds_fp16_bf16.json
        "quickfix": {"file": "ds_offload_broken.json", "code": "ZL101", "line": zl101["line"],
                     "title": f"{zl101['fix']['description']} (ZL101)"},
        "fixOnSave": FIX_ON_SAVE,
    }
    result = e2e(tmp_path, scenario)
    assert result["notifications"] == []

    # Every finding of `check`, as the Problems panel shows it: its row's accessible label (severity, message and
    # help, line and column, source) and its text (source, code, [Ln, Col]); nothing more from zerolint.
    for d in report["diagnostics"]:
        refs = f" This problem has references to {len(d['related'])} locations." if d["related"] else ""
        label = (f"{d['severity'].capitalize()}: {d['message']}\nhelp: {d['help']} at line {d['line']} and "
                 f"character {d['column']}.{refs} generated by zerolint")
        rows = [r for r in result["problems"] if r["label"] == label]
        assert len(rows) == 1, (label, result["problems"])
        assert f" zerolint {d['code']} [Ln {d['line']}, Col {d['column']}]" in rows[0]["text"]
    assert len([r for r in result["problems"] if r["label"].endswith("generated by zerolint")]) == len(
        report["diagnostics"])

    # The server's hover on the key: its schema description and the DeepSpeed version whose schema it is.
    hover = schema_help.key_hover("/gradient_clipping", default_deepspeed_version()).splitlines()
    assert hover[2] in result["hover"] and hover[-1] in result["hover"], (hover, result["hover"])

    # The quick fix offered at ZL101, and the file it saved: what `check --diff` showed.
    assert result["quickfixMenu"] == [scenario["quickfix"]["title"]]
    assert result["quickfixed"] == expected_fix
    assert "".join(difflib.unified_diff(original.splitlines(True), result["quickfixed"].splitlines(True),
                                        "a/ds_offload_broken.json", "b/ds_offload_broken.json")) == diff
    assert not [r for r in result["problemsAfterFix"] if " zerolint ZL101 [Ln " in r["text"]]

    # Saving the JSONC copy with zerolint.fixOnSave on: every safe fix, as `check --fix`.
    assert result["fixedOnSave"] == expected_on_save

    out = tmp_path / "out"
    for shot in ("vscode-diagnostics.png", "vscode-quickfix.png"):
        assert (out / shot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("ZEROLINT_VSCODE_SCREENSHOTS"):
        for shot in ("vscode-diagnostics.png", "vscode-quickfix.png"):
            shutil.copy(out / shot, ROOT / os.environ["ZEROLINT_VSCODE_SCREENSHOTS"] / shot)
