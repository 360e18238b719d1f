"""The Action's `suggest` input (issue 16 item 4; docs/github-action.md): the safe fixes as one review of GitHub
suggested changes, against a local GitHub stand-in on 127.0.0.1 that keeps reviews and comments and records every
HTTP call (a real HTTP exchange through urllib, nothing mocked inside zerolint). The step runs in the simulated runner
of tests/action_runner.py, with GITHUB_API_URL pointing at the stand-in."""

from __future__ import annotations

import json
import re
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from action_runner import Runner, git
from conftest import SEED, missing

TOKEN = "ghs_zerolintTestToken0123456789abcdef"
REPO, NUMBER = "acme/train", 7
BOT = "github-actions[bot]"
BROKEN = (SEED / "ds_offload_broken.json").read_text()  # offload_optimizer at the top level (ZL101, a safe move)
# Stage 3 with offload_param at the top level (line 7): a pre-existing problem, away from what the PR changes.
OLD = """{
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 4,
    "zero_optimization": {
        "stage": 3
    },
    "offload_param": {"device": "cpu"},
    "bf16": {"enabled": true},
    "gradient_clipping": 1.0,
    "steps_per_print": 50,
    "wall_clock_breakdown": false,
    "prescale_gradients": false,
    "optimizer": {"type": "AdamW", "params": {"lr": 2e-5, "weight_decay": 0.0}},
    "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 10}}
}
"""
MOVE = "- ZL101 misplaced-key: move offload_optimizer inside zero_optimization"


def suggestion(fix: str, text: str) -> str:
    block = f"```suggestion\n{text}\n```" if text else "```suggestion\n```"
    return f"<!-- zerolint:suggestion -->\n**zerolint** safe fix:\n{fix}\n\n{block}\n"


class GitHub:
    """Enough of GitHub's REST API for the suggestions: a pull request's files, its reviews and review comments."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.files: list[dict] = []
        self.reviews: list[dict] = []
        self.comments: list[dict] = []
        self.next_id = 1000
        self.refuse_writes = False  # a fork's read-only token
        prefix = f"/repos/{REPO}/pulls/{NUMBER}"
        self.routes = [
            ("GET", r"/user", self.user), ("GET", prefix + r"/files", lambda m, b: self.page(self.files)),
            ("GET", prefix + r"/reviews", lambda m, b: self.page(self.reviews)),
            ("GET", prefix + r"/comments", lambda m, b: self.page(self.comments)),
            ("POST", prefix + r"/reviews", self.create), ("PUT", prefix + r"/reviews/(\d+)", self.update),
            ("DELETE", rf"/repos/{REPO}/pulls/comments/(\d+)", self.delete)]

    def writes(self) -> list[tuple[str, str]]:
        return [(c["method"], c["path"]) for c in self.calls if c["method"] != "GET"]

    def user(self, m, body):
        return 403, {"message": "Resource not accessible by integration"}  # as for GITHUB_TOKEN

    def page(self, items):
        q = parse_qs(self.query)
        per, page = int(q["per_page"][0]), int(q["page"][0])
        return 200, items[(page - 1) * per:page * per]

    def create(self, m, body):
        if self.refuse_writes:
            return 403, {"message": "Resource not accessible by integration"}
        self.next_id += 1
        review = {"id": self.next_id, "body": body["body"], "user": {"login": BOT}, "commit_id": body["commit_id"],
                  "state": "COMMENTED"}
        self.reviews.append(review)
        for c in body.get("comments", []):
            self.next_id += 1
            self.comments.append({**c, "id": self.next_id, "pull_request_review_id": review["id"],
                                  "user": {"login": BOT}, "commit_id": body["commit_id"]})
        return 200, review

    def update(self, m, body):
        review = next(r for r in self.reviews if r["id"] == int(m.group(1)))
        review["body"] = body["body"]
        return 200, review

    def delete(self, m, body):
        self.comments = [c for c in self.comments if c["id"] != int(m.group(1))]
        return 204, None

    def handle(self, method: str, url: str, headers, raw: bytes):
        parts = urlsplit(url)
        self.query = parts.query
        body = json.loads(raw) if raw else None
        self.calls.append({"method": method, "path": parts.path, "query": parts.query, "body": body,
                           "authorization": headers.get("Authorization"), "accept": headers.get("Accept")})
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, {"message": "Bad credentials"}
        for verb, pattern, fn in self.routes:
            m = re.fullmatch(pattern, parts.path)
            if verb == method and m:
                return fn(m, body)
        return 404, {"message": "Not Found"}


@pytest.fixture
def github():
    state = GitHub()

    class Handler(BaseHTTPRequestHandler):
        def _any(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, payload = state.handle(self.command, self.path, self.headers, raw)
            data = b"" if payload is None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _any

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def pull_request(tmp_path):
    """main holds configs/old.json (OLD); the PR adds configs/new.json (BROKEN) and changes old.json's last lines."""
    if shutil.which("git") is None:
        missing("git is not installed")
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    git("init", "-q", "--bare", str(origin), cwd=tmp_path)
    git("init", "-q", "-b", "main", str(work), cwd=tmp_path)
    (work / "configs").mkdir()
    (work / "configs" / "old.json").write_text(OLD)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "base", cwd=work)
    git("remote", "add", "origin", str(origin), cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    git("checkout", "-q", "-b", "feature", cwd=work)
    push(work, {"configs/new.json": BROKEN,
                "configs/old.json": OLD.replace('"warmup_num_steps": 10', '"warmup_num_steps": 20')})
    git("branch", "-q", "-D", "main", cwd=work)
    git("update-ref", "-d", "refs/remotes/origin/main", cwd=work)
    return work


def push(work, files: dict[str, str]) -> None:
    for name, text in files.items():
        (work / name).write_text(text)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "push", cwd=work)


def _out(work, *args) -> str:
    import subprocess

    return subprocess.run(["git", *args], cwd=work, check=True, capture_output=True, text=True).stdout


def publish(github: GitHub, work) -> str:
    """What GitHub would serve for the PR's head: each changed file's blob id and patch (git's own diff against the
    merge base, three lines of context). Returns the head commit."""
    base = _out(work, "rev-list", "--max-parents=0", "HEAD").strip()
    github.files = []
    for name in _out(work, "diff", "--name-only", base, "HEAD").split():
        diff = _out(work, "diff", base, "HEAD", "--", name)
        github.files.append({"filename": name, "status": "modified", "sha": _out(work, "rev-parse", f"HEAD:{name}")
                             .strip(), "patch": diff[diff.index("@@"):]})
    return _out(work, "rev-parse", "HEAD").strip()


def run_suggest(github, work, tmp_path, inputs=None, event=True):
    head = publish(github, work)
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps({"pull_request": {"number": NUMBER, "head": {"sha": head}}} if event else
                                     {"ref": "refs/heads/main"}))
    runner = Runner(work, tmp_path, {"suggest": "true", "github-token": TOKEN, **(inputs or {})}, base_ref="main",
                    env={"GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": REPO,
                         "GITHUB_EVENT_PATH": str(event_path)})
    assert runner.run("install").returncode == 0
    assert runner.run("files").returncode == 0
    before = len(github.calls)
    r = runner.run("suggest")
    assert r.returncode == 0, r.stdout + r.stderr
    for text in (r.stdout, r.stderr, runner.summary.read_text() if runner.summary.exists() else ""):
        assert TOKEN not in text
    assert all(c["authorization"] == f"Bearer {TOKEN}" for c in github.calls[before:])
    return r, runner, head, github.calls[before:]


def live(github) -> list[tuple[str, int, int | None, str]]:
    return [(c["path"], c["line"], c.get("start_line"), c["body"]) for c in github.comments]


ON_NEW = [("configs/new.json", 5, None, suggestion(MOVE, '        "stage": 2,\n'
                                                          '        "offload_optimizer": {"device": "cpu", '
                                                          '"pin_memory": true}')),
          ("configs/new.json", 7, None, suggestion(MOVE, ""))]


def test_first_run_posts_one_review_and_new_pushes_update_it(github, pull_request, tmp_path):
    # run 1: one review; new.json's move on the diff (both halves), old.json's pre-existing one in the body
    r, runner, head1, calls = run_suggest(github, pull_request, tmp_path)
    assert [(c["method"], c["path"]) for c in calls] == [
        ("GET", f"/repos/{REPO}/pulls/{NUMBER}/files"), ("GET", "/user"),
        ("GET", f"/repos/{REPO}/pulls/{NUMBER}/reviews"), ("GET", f"/repos/{REPO}/pulls/{NUMBER}/comments"),
        ("POST", f"/repos/{REPO}/pulls/{NUMBER}/reviews")]
    post = calls[-1]["body"]
    assert (post["commit_id"], post["event"]) == (head1, "COMMENT")
    assert post["comments"] == [{"path": p, "line": line, "side": "RIGHT", "body": body}
                                for p, line, _, body in ON_NEW]
    body = post["body"]
    assert body.startswith("<!-- zerolint:review -->\n<!-- zerolint:digest ")
    assert f"**zerolint**: 2 suggested changes with safe fixes (`zerolint check --fix`) for {head1[:12]}." in body
    assert body.split("\n", 2)[2] == (
        f"**zerolint**: 2 suggested changes with safe fixes (`zerolint check --fix`) for {head1[:12]}.\n\n"
        "Safe fixes that cannot be suggested on the diff:\n\n"
        "- `configs/old.json` line 5 (the lines are outside the pull request's diff): ZL101 misplaced-key: move "
        "offload_param inside zero_optimization; replace with:\n\n"
        '  ```\n          "stage": 3,\n          "offload_param": {"device": "cpu"}\n  ```\n\n'
        "- `configs/old.json` line 7 (the lines are outside the pull request's diff): ZL101 misplaced-key: move "
        "offload_param inside zero_optimization; delete line 7\n")
    assert runner.outputs["suggest"] == {"suggestions": "4"}
    assert "zerolint suggest: 2 suggestion(s) on the diff, 2 in the review body; 0 earlier suggestion(s) removed, " \
           "0 earlier review(s) updated; review posted" in r.stdout
    assert len(github.reviews) == 1 and live(github) == ON_NEW

    # run 2: a push elsewhere in the file leaves the same suggestions on the same lines: nothing is written
    push(pull_request, {"configs/new.json": BROKEN.replace('"train_micro_batch_size_per_gpu": 4',
                                                           '"train_micro_batch_size_per_gpu": 8')})
    r, _, _, calls = run_suggest(github, pull_request, tmp_path)
    assert [c for c in calls if c["method"] != "GET"] == []
    assert "the review already holds these 2 suggestion(s); nothing posted" in r.stdout
    assert len(github.reviews) == 1 and live(github) == ON_NEW

    # run 3: a line added above moves the fix: the old suggestions are deleted, one new review holds the new ones,
    # the old review says it is superseded; never two live sets
    first = github.reviews[0]["id"]
    old_ids = [c["id"] for c in github.comments]
    push(pull_request, {"configs/new.json": BROKEN.replace("{\n", '{\n    "steps_per_print": 10,\n', 1)})
    r, _, head3, calls = run_suggest(github, pull_request, tmp_path)
    assert [(c["method"], c["path"]) for c in calls if c["method"] != "GET"] == [
        *[("DELETE", f"/repos/{REPO}/pulls/comments/{i}") for i in old_ids],
        ("POST", f"/repos/{REPO}/pulls/{NUMBER}/reviews"), ("PUT", f"/repos/{REPO}/pulls/{NUMBER}/reviews/{first}")]
    assert live(github) == [(p, line + 1, s, b) for p, line, s, b in ON_NEW]
    assert {c["pull_request_review_id"] for c in github.comments} == {github.reviews[1]["id"]}
    assert github.reviews[0]["body"] == ("<!-- zerolint:review -->\n**zerolint**: superseded by a newer zerolint "
                                         "review (its suggestions were removed).\n")
    assert f"for {head3[:12]}." in github.reviews[1]["body"]

    # run 4: the author applied the fix: the suggestions go, the latest review's body is rewritten, none is added
    second, third_ids = github.reviews[1]["id"], [c["id"] for c in github.comments]
    lines = (pull_request / "configs" / "new.json").read_text().splitlines(keepends=True)
    for _, line, _, body in sorted(live(github), key=lambda c: -c[1]):  # "Commit suggestion" on each, bottom up
        text = body.split("```suggestion\n", 1)[1].rsplit("```", 1)[0]
        lines[line - 1:line] = [text] if text else []
    push(pull_request, {"configs/new.json": "".join(lines)})
    r, runner, head4, calls = run_suggest(github, pull_request, tmp_path)
    writes = [(c["method"], c["path"]) for c in calls if c["method"] != "GET"]
    assert writes == [("DELETE", f"/repos/{REPO}/pulls/comments/{c}") for c in third_ids] + [
        ("PUT", f"/repos/{REPO}/pulls/{NUMBER}/reviews/{second}")]
    assert len(github.reviews) == 2 and github.comments == []
    assert f"**zerolint**: 0 suggested changes with safe fixes (`zerolint check --fix`) for {head4[:12]}." in \
        github.reviews[1]["body"]
    assert "- `configs/old.json` line 7 (the lines are outside the pull request's diff)" in github.reviews[1]["body"]
    assert runner.outputs["suggest"] == {"suggestions": "2"}


def test_a_read_only_token_is_a_warning_not_a_failure(github, pull_request, tmp_path):
    """A fork's pull request gets a read-only GITHUB_TOKEN: the review is refused (403); the step says why."""
    github.refuse_writes = True
    r, runner, _, calls = run_suggest(github, pull_request, tmp_path)
    assert [c["method"] for c in calls][-1] == "POST" and github.reviews == []
    assert ("::warning title=zerolint suggest::could not post the suggestions: POST /repos/acme/train/pulls/7/reviews: "
            "HTTP 403: Resource not accessible by integration (the job needs `permissions: pull-requests: write`; "
            "pull requests from forks get a read-only token)") in r.stdout
    assert runner.outputs["suggest"] == {"suggestions": "0"}


def test_not_a_pull_request_posts_nothing(github, pull_request, tmp_path):
    r, runner, _, calls = run_suggest(github, pull_request, tmp_path, event=False)
    assert calls == [] and "zerolint suggest: not a pull request event; nothing to post." in r.stdout
    assert runner.outputs["suggest"] == {"suggestions": "0"}


def test_suggest_off_does_nothing(github, pull_request, tmp_path):
    r, runner, _, calls = run_suggest(github, pull_request, tmp_path, inputs={"suggest": "false"})
    assert (calls, r.stdout, runner.outputs["suggest"]) == ([], "", {})


def test_the_checkout_is_not_written(github, pull_request, tmp_path):
    before = {p: p.read_bytes() for p in (pull_request / "configs").iterdir()}
    run_suggest(github, pull_request, tmp_path)
    assert {p: p.read_bytes() for p in (pull_request / "configs").iterdir()} == before
