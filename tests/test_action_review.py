"""The text work behind the Action's suggestions (zerolint/integrations/github_review.py): a patch's hunks, a fixed
text as line suggestions, where each may go, and the bodies GitHub renders."""

from __future__ import annotations

from zerolint.integrations.github_review import (
    Suggestion,
    blob_sha,
    comment_body,
    comment_json,
    edit_lines,
    patch_ranges,
    place,
    suggestions_for,
)
from zerolint.model.edits import Edit, apply_edits


def test_patch_ranges_are_the_right_side_lines_of_each_hunk():
    patch = ("@@ -1,3 +1,4 @@\n {\n+  \"a\": 1,\n   \"b\": 2\n }\n"
             "@@ -20 +21 @@\n-x\n+y\n"
             "@@ -30,2 +31,0 @@\n-gone\n-gone\n")
    assert patch_ranges(patch) == [(1, 4), (21, 21)]
    assert patch_ranges(None) == [] and patch_ranges("Binary files differ") == []


def test_blob_sha_is_gits():
    assert blob_sha(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"  # git hash-object of "hello\n"


def test_a_replacement_a_deletion_and_insertions_become_suggestions_on_existing_lines():
    before = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n"
    after = "{\n  \"x\": 0,\n  \"a\": 1,\n  \"B\": 2\n}\n"
    got = suggestions_for("f.json", before, after)
    # the insertion after line 1 is anchored on line 1; line 3 replaced and line 4 deleted are one change
    assert [(s.start, s.end, s.text) for s in got] == [(1, 1, "{\n  \"x\": 0,"), (3, 4, "  \"B\": 2")]


def test_an_insertion_at_the_top_is_anchored_on_the_first_line_and_crlf_is_not_carried():
    got = suggestions_for("f.json", "{\r\n}\r\n", "// top\r\n{\r\n}\r\n")
    assert [(s.start, s.end, s.text) for s in got] == [(1, 1, "// top\n{")]


def test_each_fix_names_its_suggestions_and_groups_them():
    before = "{\n  \"z\": {\n    \"s\": 2\n  },\n  \"k\": 1,\n  \"o\": 1\n}\n"
    edits = [Edit(21, 21, ",\n    \"o\": 1"), Edit(35, 45, "")]  # insert after `"s": 2`; remove `,\n  "o": 1`
    move = (edit_lines(before, edits), "ZL101 move o")
    assert move[0] == frozenset({2, 3, 5, 6})  # an insertion takes the line above it too (a suggestion's anchor)
    after = "{\n  \"z\": {\n    \"s\": 2,\n    \"o\": 1\n  },\n  \"k\": 1\n}\n"
    assert apply_edits(before, edits) == after
    got = suggestions_for("f.json", before, after, [move])
    assert [(s.start, s.end, s.fixes, s.group) for s in got] == [(3, 3, ["ZL101 move o"], 0),
                                                                 (5, 6, ["ZL101 move o"], 0)]
    # one half outside the diff: both go to the body
    placed = place(got, {"f.json": {"patch": "@@ -4,3 +4,3 @@\n"}}, {})
    assert placed.inline == []
    assert [why for _, why in placed.elsewhere] == [
        "the lines are outside the pull request's diff",
        "another part of the same fix is outside the pull request's diff"]


def test_placement_needs_the_pull_requests_version_of_the_file():
    s = Suggestion("f.json", 2, 2, "x")
    files = {"f.json": {"sha": "a" * 40, "patch": "@@ -1,3 +1,3 @@\n"}}
    assert place([s], files, {"f.json": "a" * 40}).inline == [s]
    assert place([s], files, {"f.json": "b" * 40}).elsewhere == [
        (s, "the checked-out file differs from the pull request head (the base branch changed it too)")]
    assert place([s], {}, {}).elsewhere == [(s, "the file is not part of this pull request's diff")]


def test_comment_bodies_fence_backticks_in_the_text_and_span_several_lines():
    s = Suggestion("f.json", 3, 4, 'a "```" b', fixes=["ZL103 unknown-key: rename"])
    assert comment_json(s) == {"path": "f.json", "line": 4, "side": "RIGHT", "start_line": 3, "start_side": "RIGHT",
                               "body": "<!-- zerolint:suggestion -->\n**zerolint** safe fix:\n- ZL103 unknown-key: "
                                       "rename\n\n````suggestion\na \"```\" b\n````\n"}
    assert comment_body(Suggestion("f.json", 7, 7, "")).endswith("\n\n```suggestion\n```\n")


def test_text_from_the_pull_request_cannot_mention_link_or_embed():
    """Issue 22, item 6: fix descriptions name keys from the pull request (`rename @bf16 to bf16` mentioned a user)
    and DeepSpeed's messages echo config values into the job summary (links and images rendered). Both are made
    inert: brackets escaped, a word joiner after `@` and in `://` and `www.`."""
    from zerolint.integrations.github_review import Placed, review_body
    from zerolint.report.github_verify import step_summary

    hostile = "rename @octocat to bf16; [docs](https://evil.example) ![x](http://evil.example/p.png) <img src=x>"
    s = Suggestion("f.json", 3, 3, "x", fixes=[hostile])
    for body in (comment_body(s), review_body(Placed([], [(s, "outside the diff")]), "0" * 40)):
        assert "@octocat" not in body and "@\u2060octocat" in body
        assert "\\[docs\\](" in body and "\\<img src=x\\>" in body  # escaped: no link, no image, no HTML
        assert "https://evil" not in body and "http://evil" not in body
    payload = {"verify": [{"file": "a.json", "verdict": "fail", "runs": [{"status": "fail", "failure": {
        "stage": "initialize", "message": hostile}}]}]}
    summary = step_summary(payload)
    assert "@octocat" not in summary and "https://evil" not in summary and "<img" not in summary
    assert "\\[docs\\](" in summary
