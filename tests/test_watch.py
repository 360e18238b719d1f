"""`zerolint check --watch`: a real process, a real file changed under it, Ctrl-C (SIGINT) to end it."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

from conftest import ROOT, SEED, run_cli

WAIT_S = 60  # generous: a loaded CI machine; every wait ends as soon as its line arrives


class Watched:
    """`zerolint check --watch ARGS` in `cwd`, its stderr lines in a queue (its stdout read at the end)."""

    def __init__(self, cwd: Path, *args: str):
        env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT / "src")}
        # SIGINT at its default in the child: a shell without job control starts background jobs (a detached test
        # run) with SIGINT ignored, and Python keeps an ignored SIGINT ignored, so Ctrl-C would never arrive.
        self.proc = subprocess.Popen([sys.executable, "-m", "zerolint", "check", "--watch", *args], cwd=cwd,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines: queue.Queue[str] = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.put(line.rstrip("\n"))

    def next_line(self) -> str:
        line = self.lines.get(timeout=WAIT_S)
        self.err.append(line)
        return line

    def stop(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        out, _ = self.proc.communicate(timeout=WAIT_S)
        return self.proc.returncode, out


def test_watch_checks_again_on_a_change_and_ctrl_c_ends_it(tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_bytes((SEED / "ds_zero2.json").read_bytes())
    w = Watched(tmp_path, "ds.json")
    try:
        assert w.next_line() == "zerolint: watching 1 file for changes (Ctrl-C to stop)"
        cfg.write_text(cfg.read_text().replace('"stage": 2', '"stage": 2, "zero_optimisation": 1'))
        assert w.next_line() == "zerolint: ds.json changed: checking again"
        assert w.next_line() == "zerolint: watching 1 file for changes (Ctrl-C to stop)"
        (tmp_path / ".zerolint.toml").write_text('ignore = ["ZL102"]\n')  # a new settings file applies at once
        assert w.next_line().startswith("zerolint: ") and w.next_line().startswith("zerolint: watching 2 files")
        (tmp_path / ".zerolint.toml").write_text("ignore = [\n")  # broken: its error, and the watch goes on
        assert w.next_line().endswith("changed: checking again")
        broken = w.next_line()
        assert broken.startswith("zerolint: error: ") and ".zerolint.toml" in broken, broken
        assert w.next_line().startswith("zerolint: watching 2 files")
    finally:
        code, out = w.stop()
    assert code == 0 and "Traceback" not in out and not any("Traceback" in line for line in w.err)
    assert out.startswith("All checks passed in 1 file.\nds.json:10:21: error ZL102 [unknown-key-in-strict-section]")
    assert out.endswith("Found 1 error in 1 file.\nAll checks passed in 1 file.\n"
                        "note: rules turned off by .zerolint.toml: ZL102\n"), out


def test_watch_with_fix_does_not_react_to_its_own_writes(tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_bytes((SEED / "ds_offload_broken.json").read_bytes())
    w = Watched(tmp_path, "--fix", "ds.json")
    try:
        assert w.next_line().startswith("zerolint: watching 1 file")
        fixed = cfg.read_bytes()
        assert b'"offload_optimizer"' in fixed and fixed != (SEED / "ds_offload_broken.json").read_bytes()
        cfg.write_bytes(fixed)  # the same bytes, written again: a new mtime is a change
        assert w.next_line() == "zerolint: ds.json changed: checking again"
        assert w.next_line().startswith("zerolint: watching 1 file")
    finally:
        code, out = w.stop()
    assert code == 0 and w.lines.empty()  # no run of its own between the two


def test_watch_refuses_stdin_and_the_one_shot_options(tmp_path):
    r = run_cli("check", "--watch", "-", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.decode() == ("zerolint: error: --watch cannot read stdin (`-`): name the files or directories to "
                                 "watch\n")
    r = run_cli("check", "--watch", "--show-files", ".", cwd=tmp_path)
    assert r.returncode == 2 and "does not go with --show-settings" in r.stderr.decode()
