"""The browser playground (docs/playground.md): built with scripts/build_playground.sh into a temp dir, served on
127.0.0.1 by http.server, driven in headless Chromium (playwright-core from playground/node_modules) by
playground/e2e/drive.mjs. What the page shows is compared with the command line on the same text: the findings
(code, severity, line, column, message; and the editor's ranges), the fixed text and diff of `check --diff`, the
estimate of `zerolint estimate`. The page may fetch nothing but the site's own files.

Needs node/npm (the build runs `npm ci` in playground/) and /usr/bin/chromium (`apt-get install -y chromium`);
without them the test skips, and fails when CI is set. ZEROLINT_PLAYGROUND_SHOTS=DIR saves the screenshots
(docs/images/playground-*.png are made so); ZEROLINT_PLAYGROUND_TIMES=FILE writes the measured times as JSON."""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest
from conftest import ROOT, SEED, missing

pytestmark = pytest.mark.slow

EXAMPLES = sorted(p.name for p in SEED.glob("*.json"))
CHROMIUM = "/usr/bin/chromium"
# Quoted by the finding on its key: it must arrive as text, never as an element or a script. The emoji (two UTF-16
# units, one code point) before it checks that the editor's ranges are converted, not copied.
VERSIONED = '{\n  "train_batch_size": 8,\n  "zero_optimization": {"stage": 2}\n}\n'  # ZL705 names the version
HOSTILE = '{\n  "train_batch_size": 8, "note": "\U0001F600",\n  "<img src=x onerror=window.pwned=1>": {"stage": 2}\n}\n'


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zerolint", *args], capture_output=True, text=True, timeout=120)


def _check_json(path: Path, *options: str) -> list[dict]:
    # --isolated: the playground lints a text with no zerolint config file, as zerolint.lint_text does
    out = _cli("check", "--isolated", "--format", "json", *options, str(path))
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)["diagnostics"]


def _fragment(text: str, **selectors: str) -> str:
    packed = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate, as the page's CompressionStream("deflate-raw")
    data = packed.compress(text.encode()) + packed.flush()
    c = base64.urlsafe_b64encode(data).decode().rstrip("=")
    return "#" + "&".join([f"c={c}", *(f"{k}={v}" for k, v in selectors.items())])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if shutil.which("npm") is None or shutil.which("node") is None:
        missing("node and npm are not installed (apt-get install -y nodejs npm)")
    if not os.access(CHROMIUM, os.X_OK):
        missing(f"{CHROMIUM} is not installed (apt-get install -y chromium)")
    out = tmp_path_factory.mktemp("playground") / "site"
    t0 = time.monotonic()
    build = subprocess.run(["bash", str(ROOT / "scripts" / "build_playground.sh"), str(out)], capture_output=True,
                           text=True, timeout=600, env={**os.environ, "PYTHON": sys.executable})
    assert build.returncode == 0, build.stdout + build.stderr
    seconds = time.monotonic() - t0
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return out, seconds, size


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_Quiet, directory=str(site[0]))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)  # port 0: a free one
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()
    thread.join(10)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".js": "text/javascript"}

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


FIXES = [("ds_offload_broken.json", "safe"), ("ds_fp16_bf16.json", "unsafe")]
ESTIMATE = {"example": "ds_offload_broken.json", "params": "7B", "world": "8", "gpumem": "80GB"}


@pytest.fixture(scope="module")
def page(server, site, tmp_path_factory):
    shots = os.environ.get("ZEROLINT_PLAYGROUND_SHOTS", "")
    plan = {"base": server, "chromium": CHROMIUM, "shots": shots and str(Path(shots).resolve()),
            "examples": EXAMPLES, "fixes": [{"example": e, "kind": k} for e, k in FIXES], "estimate": ESTIMATE,
            "fragments": [
                {"name": "hostile", "hash": _fragment(HOSTILE, t="hf", w="8")},
                {"name": "versioned", "hash": _fragment(VERSIONED, t="deepspeed", w="2", v="0.18")},
                {"name": "unoffered", "hash": _fragment(VERSIONED, t="<b>", w="-1", v="9.9")},
                {"name": "broken", "hash": "#c=!!not-base64!!"},
            ]}
    path = tmp_path_factory.mktemp("drive") / "plan.json"
    path.write_text(json.dumps(plan))
    # its own process group: on a timeout the browser it started goes too, not only node
    drive = subprocess.Popen(["node", str(ROOT / "playground" / "e2e" / "drive.mjs"), str(path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT / "playground",
                             start_new_session=True)
    try:
        stdout, stderr = drive.communicate(timeout=900)
    finally:
        if drive.poll() is None:
            os.killpg(drive.pid, signal.SIGKILL)
            drive.communicate()
    assert drive.returncode == 0, stderr[-4000:]
    results = json.loads(stdout)
    times = os.environ.get("ZEROLINT_PLAYGROUND_TIMES")
    if times:
        warm = sorted(results["warm_ms"])
        Path(times).write_text(json.dumps({
            "build_seconds": round(site[1], 1), "site_bytes": site[2],
            "python_start_ms": round(results["initial"]["timings"]["pythonStartMs"]),
            "first_lint_ms": round(results["initial"]["timings"]["firstLintMs"]),
            "warm_round_trip_ms_median": warm[len(warm) // 2],
            "warm_lint_ms": round(results["examples"][EXAMPLES[-1]]["timings"]["lastLintMs"]),
        }, indent=2) + "\n")
    return results


def _shown(findings: list[dict]) -> list[tuple]:
    return [(d["code"], d["severity"], d["line"], d["column"], d["message"]) for d in findings]


def _ranges(findings: list[dict]) -> list[tuple]:
    return [(d["code"], d["line"], d["column"], d["end_line"], d["end_column"]) for d in findings]


def test_opens_on_the_broken_offload_example_with_its_findings(page):
    first = page["initial"]
    assert first["status"] == "ready" and first["error"] is None
    assert first["text"] == (SEED / "ds_offload_broken.json").read_text()
    expected = _check_json(SEED / "ds_offload_broken.json")
    assert _shown(first["findings"]) == _shown(expected)
    assert [d["help"] for d in first["findings"]] == [f"help: {d['help']}" for d in expected]
    assert [d["url"] for d in first["findings"]] == [d["url"] for d in expected]
    # the editor's tooltip at the error: message, help, docs link, its quick fix, code
    error = expected[0]
    assert page["tooltip"] == (f"{error['message']}help: {error['help']}rule documentation ({error['name']})"
                               f"{error['fix']['description']}{error['code']}")


def test_the_tooltip_quick_fix_applies_the_findings_own_edits(page):
    text = (SEED / "ds_offload_broken.json").read_text()
    error = _check_json(SEED / "ds_offload_broken.json")[0]
    assert page["quickFix"]["title"] == error["fix"]["description"]
    for e in sorted(error["fix"]["edits"], key=lambda e: e["start"], reverse=True):  # offsets of the old text
        text = text[:e["start"]] + e["text"] + text[e["end"]:]
    after = page["quickFix"]["after"]
    assert after["text"] == text
    assert page["quickFix"]["example"] == ""  # the menu no longer names an example


@pytest.mark.parametrize("name", EXAMPLES)
def test_each_seed_config_shows_what_check_reports(page, name):
    shown = page["examples"][name]
    expected = _check_json(SEED / name)
    assert shown["text"] == (SEED / name).read_text()
    assert _shown(shown["findings"]) == _shown(expected)
    # the inline diagnostics sit at the findings' ranges (ASCII configs: columns are characters either way)
    assert sorted(_ranges(shown["editor"])) == sorted(_ranges(expected))
    assert sorted((d["code"], d["severity"], d["message"]) for d in shown["editor"]) == \
        sorted((d["code"], d["severity"], d["message"]) for d in expected)


@pytest.mark.parametrize("example,kind", FIXES)
def test_apply_gives_the_text_and_diff_of_check_fix(page, example, kind, tmp_path):
    done = next(f for f in page["fixes"] if f["example"] == example and f["kind"] == kind)
    copy = tmp_path / example
    shutil.copyfile(SEED / example, copy)
    unsafe = ("--unsafe-fixes",) if kind == "unsafe" else ()
    diff = _cli("check", "--isolated", "--diff", *unsafe, str(copy))
    assert diff.returncode == 1, diff.stderr
    # the same hunks; only the file names in the header differ (the page's text has no file)
    assert done["diff"].splitlines()[2:] == diff.stdout.splitlines()[2:]
    assert done["diff"].splitlines()[:2] == ["--- a/ds_config.json", "+++ b/ds_config.json"]
    fixed = _cli("check", "--isolated", "--fix", *unsafe, str(copy))
    assert fixed.returncode in (0, 1), fixed.stderr
    assert done["text"] == copy.read_text() != (SEED / example).read_text()
    assert _shown(done["after"]) == _shown(_check_json(copy))


def test_estimate_bars_are_those_of_zerolint_estimate(page):
    out = _cli("estimate", "--format", "json", "--params", ESTIMATE["params"], "--gpus-per-node", ESTIMATE["world"],
               "--gpu-memory", ESTIMATE["gpumem"], str(SEED / ESTIMATE["example"]))
    assert out.returncode == 0, out.stderr
    expected = json.loads(out.stdout)
    shown = page["estimate"]
    assert (shown["gpu_total"], shown["host_total"], shown["verdict"]) == \
        (expected["per_gpu_bytes"], expected["per_node_host_bytes"], expected["verdict"])
    bars = [c for c in expected["breakdown"]
            if c["where"] == "gpu" and c["bytes"] > 0 and (c["at_peak"] or c["margin"])]
    assert shown["bars"] == len(bars)


def test_a_link_carries_the_config_and_selectors_and_stays_text(page, tmp_path):
    shown = page["fragments"]["hostile"]
    assert shown["text"] == HOSTILE
    assert (shown["target"], shown["world"]) == ("hf", "8")
    path = tmp_path / "hostile.json"
    path.write_text(HOSTILE)
    expected = _check_json(path, "--target", "hf", "--world-size", "8")
    assert _shown(shown["findings"]) == _shown(expected)
    assert sorted(_ranges(shown["editor"])) == sorted(_ranges(expected))
    assert any("<img src=x onerror=window.pwned=1>" in d["message"] for d in shown["findings"])
    # rendered as text: no element, no script ran
    assert (shown["images"], shown["pwned"], shown["notice"]) == (0, None, "")


def test_the_share_button_makes_a_link_that_opens_the_same_config(page):
    shared = page["shared"]
    before, after = shared["from"], shared["to"]
    assert after["text"] == before["text"] == (SEED / ESTIMATE["example"]).read_text()
    assert after["settings"] == before["settings"] == {"target": "hf", "version": "", "world": 8, "params": "7B",
                                                       "gpumem": "80GB"}
    assert _shown(after["findings"]) == _shown(before["findings"])
    assert len(shared["hash"]) < 3 * len(before["text"])


def test_the_version_selector_offers_the_versions_zerolint_knows(page, tmp_path):
    from zerolint.model.versions import DEFAULT_DEEPSPEED_VERSION, SCHEMA_LINES

    assert page["initial"]["versions"] == [["", f"default ({DEFAULT_DEEPSPEED_VERSION})"],
                                           *([v, v] for v in reversed(SCHEMA_LINES))]
    shown = page["fragments"]["versioned"]
    assert (shown["target"], shown["world"], shown["version"]) == ("deepspeed", "2", "0.18")
    path = tmp_path / "versioned.json"
    path.write_text(VERSIONED)
    expected = _check_json(path, "--target", "deepspeed", "--world-size", "2", "--deepspeed-version", "0.18")
    assert _shown(shown["findings"]) == _shown(expected)
    assert "DeepSpeed 0.18.0 does not clip" in shown["findings"][0]["message"]


def test_a_link_takes_only_values_the_selectors_offer(page, tmp_path):
    shown = page["fragments"]["unoffered"]
    assert (shown["text"], shown["target"], shown["world"], shown["version"]) == (VERSIONED, "auto", "", "")
    path = tmp_path / "unoffered.json"
    path.write_text(VERSIONED)
    assert _shown(shown["findings"]) == _shown(_check_json(path))


def test_a_broken_link_falls_back_to_the_example(page):
    shown = page["fragments"]["broken"]
    assert shown["text"] == (SEED / "ds_offload_broken.json").read_text()
    assert shown["status"] == "ready"
    assert shown["notice"] == ("The link's config could not be read (the link's config is not base64url); "
                               "showing the example instead.")
    assert _shown(shown["findings"]) == _shown(_check_json(SEED / "ds_offload_broken.json"))


def test_the_page_fetches_only_its_own_files_and_logs_no_error(page, server):
    assert page["requests"] and all(url.startswith(server) for url in page["requests"]), page["requests"]
    assert page["errors"] == []


def test_the_site_holds_everything_it_loads(site):
    out = site[0]
    for name in ("index.html", "app.js", "style.css", "build.json", "py/zerolint_playground.py", "THIRD-PARTY.txt",
                 "pyodide/pyodide.js", "pyodide/pyodide.asm.js", "pyodide/pyodide.asm.wasm",
                 "pyodide/python_stdlib.zip", "pyodide/pyodide-lock.json"):
        assert (out / name).is_file(), name
    build = json.loads((out / "build.json").read_text())
    assert sorted(build["examples"]) == EXAMPLES and build["default_example"] == "ds_offload_broken.json"
    assert [w.split("-")[0] for w in build["wheels"]] == ["hjson", "zerolint"]
    assert all((out / "wheels" / w).is_file() for w in build["wheels"])
    notices = (out / "THIRD-PARTY.txt").read_text()
    assert "@codemirror/view " in notices and "pyodide 0.28.2 (MPL-2.0)" in notices
    html = (out / "index.html").read_text()
    assert "connect-src 'self'" in html and "http://" not in html and "https://" not in html
