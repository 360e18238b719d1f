"""Safe fixes as GitHub suggested changes on a pull request (the Action's `suggest` input; docs/github-action.md).

Pure text work, no HTTP (github_api.py does that): a file's text before and after `zerolint check --fix` becomes
line-range suggestions; each goes on the pull request's diff when GitHub will take a review comment there, else into
the review's body; and the previous zerolint review is found again by a hidden marker so that a new push updates it
instead of adding a second set of suggestions (`sync_review`).

GitHub's rules this follows (REST API, "Create a review for a pull request"): a review comment names `path`, `line`
and `side` (`start_line`/`start_side` for several lines), and every line it spans must lie in one hunk of the file's
patch on the RIGHT side (added or context lines). A ```suggestion block replaces exactly the lines the comment spans.
A submitted review cannot be deleted and takes no new comments; its body can be replaced (PUT) and its comments
deleted one by one, so an outdated zerolint review is emptied and marked, never left with stale suggestions.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass, field

from ..base.escape import markdown_inert

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (docs/CONTRIBUTING.md)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

REVIEW_MARKER = "<!-- zerolint:review -->"
COMMENT_MARKER = "<!-- zerolint:suggestion -->"
_DIGEST = re.compile(r"<!-- zerolint:digest ([0-9a-f]{64}) -->")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
MAX_INLINE = 50  # suggestions per review; the rest are listed in the body (a review is meant to be read)


@dataclass
class Suggestion:
    """Replace lines `start`..`end` (1-based, inclusive) of `path` with `text` (no final newline; "" deletes them).
    `fixes`: what zerolint fixed there, one line each (code and description)."""
    path: str
    start: int
    end: int
    text: str
    fixes: list[str] = field(default_factory=list)
    group: int = 0  # suggestions of one fix (a key moved: removed here, inserted there) share a group

    def lines_label(self) -> str:
        return f"line {self.start}" if self.start == self.end else f"lines {self.start}-{self.end}"


def blob_sha(data: bytes) -> str:
    """git's blob id of these bytes (what the pull request files API reports as `sha`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def patch_ranges(patch: str | None) -> list[tuple[int, int]]:
    """The RIGHT-side line ranges (first, last; 1-based) of each hunk of a file's patch: the lines a review comment
    may span. A hunk with no lines on the right (a pure deletion at the end) has none."""
    ranges = []
    for line in (patch or "").splitlines():
        m = _HUNK.match(line)
        if m:
            first, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
            if count > 0:
                ranges.append((first, first + count - 1))
    return ranges


def edit_lines(text: str, edits) -> frozenset[int]:
    """The 1-based lines of `text` that edits (objects with start/end character offsets) touch; an insertion also
    takes the line above it, where its suggestion is anchored."""
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def line(offset: int) -> int:
        lo, hi = 0, len(starts)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if starts[mid] <= offset else (lo, mid)
        return lo + 1

    lines: set[int] = set()
    for e in edits:
        first, last = line(e.start), line(max(e.start, e.end - 1))
        lines.update(range(first - (e.start == e.end), last + 1))
    return frozenset(lines)


def suggestions_for(path: str, before: str, after: str,
                    fixes: Sequence[tuple[frozenset[int] | None, str]] = ()) -> list[Suggestion]:
    """The line changes from `before` to `after` as suggestions on `before`'s lines. An insertion is anchored on the
    line above it (or below, at the top of the file), since a suggestion replaces lines that exist. `fixes`: (the
    lines of `before` a fix touches, or None when unknown: then it may touch any; "ZLnnn: what it does") for each fix
    applied: shown on the suggestions it touches, which form one group (all inline or none: half of a move would
    delete a key)."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    spans: list[list[int]] = []  # [a_start, a_end, b_start, b_end), 0-based, half-open
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # a pure insertion: take in the line above it (equal on both sides), or the one below
            if i1 > 0:
                i1, j1 = i1 - 1, j1 - 1
            else:
                i2, j2 = i2 + 1, j2 + 1
        if spans and i1 < spans[-1][1]:  # overlaps the previous one (an anchor line they share): one suggestion
            spans[-1][1], spans[-1][3] = max(spans[-1][1], i2), max(spans[-1][3], j2)
        else:
            spans.append([i1, i2, j1, j2])
    out: list[Suggestion] = []
    for i1, i2, j1, j2 in spans:
        text = "".join(line.rstrip("\r\n") + "\n" for line in b[j1:j2])[:-1]
        s = Suggestion(path, i1 + 1, i2, text, group=len(out))
        s.fixes = [what for lines, what in fixes if lines is None or any(s.start <= n <= s.end for n in lines)]
        out.append(s)
    for lines, _ in fixes:  # one group per fix's suggestions, merged where fixes share one
        members = [s for s in out if lines is None or any(s.start <= n <= s.end for n in lines)]
        groups = {s.group for s in members}
        for s in out:
            if s.group in groups:
                s.group = min(groups)
    return out


@dataclass
class Placed:
    """Where each suggestion goes: `inline` review comments, and `elsewhere` (suggestion, why not inline)."""
    inline: list[Suggestion] = field(default_factory=list)
    elsewhere: list[tuple[Suggestion, str]] = field(default_factory=list)


def place(suggestions: list[Suggestion], pr_files: dict[str, dict], local_sha: dict[str, str]) -> Placed:
    """Inline when the file is in the pull request, the checkout holds the pull request head's version of it (the
    default checkout is a merge commit: its lines match the diff only when the base did not change the file too),
    and the lines lie in one hunk of its patch; otherwise in the body, with the reason."""
    placed = Placed()
    why: dict[int, str] = {}
    for i, s in enumerate(suggestions):
        f = pr_files.get(s.path)
        if f is None:
            why[i] = "the file is not part of this pull request's diff"
        elif f.get("sha") and local_sha.get(s.path) and f["sha"] != local_sha[s.path]:
            why[i] = "the checked-out file differs from the pull request head (the base branch changed it too)"
        elif not any(lo <= s.start and s.end <= hi for lo, hi in patch_ranges(f.get("patch"))):
            why[i] = "the lines are outside the pull request's diff"
    blocked = {(suggestions[i].path, suggestions[i].group) for i in why}
    for i, s in enumerate(suggestions):
        if i not in why and (s.path, s.group) in blocked:
            why[i] = "another part of the same fix is outside the pull request's diff"
        elif i not in why and len(placed.inline) >= MAX_INLINE:
            why[i] = f"more than {MAX_INLINE} suggestions in one review"
        if i in why:
            placed.elsewhere.append((s, why[i]))
        else:
            placed.inline.append(s)
    return placed


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in the text (a config string could hold ```)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def comment_body(s: Suggestion) -> str:
    fence = _fence(s.text)
    what = "\n".join(f"- {markdown_inert(f)}" for f in s.fixes) or "- safe fixes (`zerolint check --fix`)"
    block = f"{fence}suggestion\n{s.text}\n{fence}" if s.text else f"{fence}suggestion\n{fence}"
    return f"{COMMENT_MARKER}\n**zerolint** safe fix:\n{what}\n\n{block}\n"


def comment_json(s: Suggestion) -> dict:
    c = {"path": s.path, "line": s.end, "side": "RIGHT", "body": comment_body(s)}
    if s.start != s.end:
        c.update(start_line=s.start, start_side="RIGHT")
    return c


def _code(path: str) -> str:
    """A file name (pull request content) as inline code: backticks and line breaks cannot end it."""
    return "`" + path.replace("`", "'").replace("\n", "\\n").replace("\r", "\\r") + "`"


def review_body(placed: Placed, head_sha: str) -> str:
    """The review's text: what it holds, and the suggestions that could not go inline, with the reason."""
    n = len(placed.inline)
    lines = [REVIEW_MARKER, f"**zerolint**: {n} suggested change{'s' if n != 1 else ''} with safe fixes "
                            f"(`zerolint check --fix`) for {head_sha[:12]}."]
    if placed.elsewhere:
        lines += ["", "Safe fixes that cannot be suggested on the diff:"]
        for s, why in placed.elsewhere:
            what = "; ".join(markdown_inert(f) for f in s.fixes) or "safe fixes"
            if not s.text:
                lines += ["", f"- {_code(s.path)} {s.lines_label()} ({why}): {what}; delete {s.lines_label()}"]
                continue
            fence = _fence(s.text)
            lines += ["", f"- {_code(s.path)} {s.lines_label()} ({why}): {what}; replace with:", "", f"  {fence}",
                      *[f"  {line}" for line in s.text.split("\n")], f"  {fence}"]
    return "\n".join(lines) + "\n"


def digest(comments: list[dict], body: str, head_sha: str) -> str:
    """Identifies what a run would post, the head commit left out: the same suggestions on the same lines."""
    stable = body.replace(head_sha[:12], "")
    return hashlib.sha256(json.dumps([comments, stable], sort_keys=True).encode("utf-8")).hexdigest()


def with_digest(body: str, value: str) -> str:
    return body.replace(REVIEW_MARKER, f"{REVIEW_MARKER}\n<!-- zerolint:digest {value} -->", 1)


SUPERSEDED = f"{REVIEW_MARKER}\n**zerolint**: superseded by a newer zerolint review (its suggestions were removed).\n"


def _ours(item: dict, marker: str, author: str) -> bool:
    """A review or comment zerolint posted: its marker, and written by the token's own account (anyone can paste
    the marker into a comment of their own; that one is neither deleted nor taken for ours)."""
    return marker in (item.get("body") or "") and (item.get("user") or {}).get("login") == author


def sync_review(api, pr: str, head_sha: str, comments: list[dict], body: str, author: str) -> dict:
    """Make the pull request show exactly this review: nothing when the latest zerolint review already says the same
    (digest), else delete the earlier zerolint suggestions, then post one review (or, with nothing inline, rewrite
    the latest zerolint review's body) and mark the older zerolint reviews superseded. `api`: github_api.GitHubAPI
    (or anything with get_all/post/put/delete); `pr`: "/repos/{owner}/{repo}/pulls/{number}"; `author`: the login
    the token posts as. Returns what it did."""
    value = digest(comments, body, head_sha)
    body = with_digest(body, value)
    reviews = [r for r in api.get_all(f"{pr}/reviews") if _ours(r, REVIEW_MARKER, author)]
    old_comments = [c for c in api.get_all(f"{pr}/comments") if _ours(c, COMMENT_MARKER, author)]
    live = [r for r in reviews if r.get("body") != SUPERSEDED]
    latest = live[-1] if live else None
    done: dict[str, Any] = {"created": None, "updated": [], "deleted": [], "unchanged": False}
    if latest is not None and (seen := _DIGEST.search(latest.get("body") or "")) and \
            seen.group(1) == value and \
            sum(c.get("pull_request_review_id") == latest["id"] for c in old_comments) == len(comments):
        done["unchanged"] = True
        return done
    if not comments and latest is None:
        return done  # nothing to say and nothing said before
    base = pr.rsplit("/pulls/", 1)[0]
    for c in old_comments:
        api.delete(f"{base}/pulls/comments/{c['id']}")
        done["deleted"].append(c["id"])
    if not comments and latest is not None:
        api.put(f"{pr}/reviews/{latest['id']}", {"body": body})
        done["updated"].append(latest["id"])
        live = live[:-1]
    else:
        created = api.post(f"{pr}/reviews", {"commit_id": head_sha, "event": "COMMENT", "body": body,
                                             "comments": comments})
        done["created"] = created.get("id")
    for r in live:
        api.put(f"{pr}/reviews/{r['id']}", {"body": SUPERSEDED})
        done["updated"].append(r["id"])
    return done
