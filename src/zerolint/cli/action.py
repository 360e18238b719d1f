"""The GitHub Action's steps that are more than a zerolint command (action.yml; docs/github-action.md):

    python -I -m zerolint.cli.action verify  --list FILE [--changed FILE] --mode cpu|gpu [check's settings flags]
    python -I -m zerolint.cli.action suggest --list FILE [check's settings flags]

`verify` runs a verify session (zerolint/verify/session.py, in this process, as `zerolint verify` does) on the
configs the pull request changes (the candidates `check` picks, kept when `--changed` lists them), puts the verdict
table in $GITHUB_STEP_SUMMARY and verify's own findings as annotations. `suggest` computes the safe fixes in memory
(nothing in the checkout is written) and posts them as one review of suggested changes through GitHub's REST API
(integrations/github_review.py, github_api.py).

Both run from the Action's own venv with `python -I`: this module is installed there, never read from the checkout.
The lists are NUL-separated file names written by the Action's "Select files" step. Outputs go to $GITHUB_OUTPUT.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..base.escape import safe_line
from ..report.github import escape_data

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
DEFAULT_AUTHOR = "github-actions[bot]"  # who GITHUB_TOKEN posts as (GET /user is refused to that token)


def _names(path: str | None) -> list[str] | None:
    if not path or not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return [n.decode("utf-8", "surrogateescape") for n in f.read().split(b"\0") if n]


def _output(**values) -> None:
    out = os.environ.get("GITHUB_OUTPUT")
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.writelines(f"{k.replace('_', '-')}={v}\n" for k, v in values.items())


def _summary(text: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)


def _error(title: str, text: str) -> None:
    print(f"::error title={title}::{escape_data(text)}", flush=True)


def _picked(args, candidates: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """What `check --only-configs` lints among the candidates (the gate's strict picking, the workflow's
    `configs` patterns, a trusted config's include and excludes), and the candidates it skipped with the reason."""
    from ..pipeline import Options, Pipeline

    pipeline = Pipeline(Options(files=tuple(candidates), only_configs=True, isolated=args.isolated,
                                config_file=args.config or None, target=args.target or None,
                                include=tuple(args.include)))
    run = pipeline.sources()
    return run.paths, [(p.path, f"not linted: {p.why}") for p in run.picks if not p.picked]


# -- verify ------------------------------------------------------------------------------------------------------------

def verify(args) -> int:
    from ..project.settings import ConfigError
    from ..report.github_verify import annotations, step_summary

    candidates = _names(args.list) or []
    changed = _names(args.changed)
    try:
        picked, not_picked = _picked(args, candidates) if candidates else ([], [])
    except ConfigError as e:
        _error("zerolint verify", str(e))
        _output(verify_exit_code=EXIT_USAGE, verified=0)
        return EXIT_USAGE
    if changed is not None:  # a pull request: only what it changes
        wanted = {os.path.normpath(n) for n in changed}
        picked = [p for p in picked if os.path.normpath(p) in wanted]
        not_picked = [(p, why) for p, why in not_picked if os.path.normpath(p) in wanted]
    configs = [p for p in picked if not p.lower().endswith((".yaml", ".yml"))]
    skipped = [(p, "an Accelerate YAML: verify the DeepSpeed config it names") for p in picked if p not in configs]
    skipped += not_picked
    if not configs:
        print("No changed DeepSpeed config to verify." if changed is not None else "No DeepSpeed config to verify.")
        _summary(step_summary({}, skipped))
        _output(verify_exit_code=EXIT_OK, verified=0)
        return EXIT_OK
    print(f"zerolint verify: {len(configs)} config{'s' if len(configs) != 1 else ''} ({args.mode})", flush=True)
    token = os.urandom(16).hex()
    print(f"::stop-commands::zerolint-{token}", flush=True)  # config text and names are printed as they are
    code, payload = _verify_session(args, configs)
    print(f"::zerolint-{token}::", flush=True)
    if payload is None:
        _error("zerolint verify", f"zerolint verify could not run (exit {code}); see the log above")
        _summary(f"## zerolint verify\n\nzerolint verify could not run (exit {code}); see the job log.\n")
        _output(verify_exit_code=code if code not in (0, 1) else EXIT_USAGE, verified=0)
        return EXIT_USAGE
    # github_verify.annotations shares its name with the __future__ import there: the checker sees the import
    sys.stdout.write(annotations(payload))  # type: ignore[operator]
    _summary(step_summary(payload, skipped))
    _output(verify_exit_code=code, verified=len(configs))
    return code


def _verify_session(args, configs: list[str]) -> tuple[int, dict | None]:
    """The verify session itself (zerolint/verify/session.py), in this process: its text report to the log, and
    (exit code, the JSON report as a dict); (code, None) when it could not run (a usage error, a signal)."""
    from ..verify.options import UsageError, VerifyOptions
    from ..verify.report import render_many_text
    from ..verify.runner import exit_code
    from ..verify.session import verify_many

    opts = VerifyOptions(cpu=args.mode == "cpu", isolated=args.isolated, config_file=args.config or None,
                         target=args.target or None, fail_on=args.fail_on or None, op_cache=args.op_cache or None,
                         color=False)
    try:
        outcome = verify_many(configs, opts)
    except UsageError as e:
        print(f"zerolint: error: {safe_line(str(e))}", flush=True)
        return EXIT_USAGE, None
    except KeyboardInterrupt as e:
        print("zerolint verify: interrupted; every process of the run was stopped", flush=True)
        return exit_code(e), None
    sys.stdout.write(render_many_text(outcome.reports, outcome.diagnostics, outcome.documents, outcome.summary))
    sys.stdout.flush()
    return outcome.code, outcome.payload()


# -- suggest -----------------------------------------------------------------------------------------------------------

def _pull_request() -> tuple[int, str] | None:
    path = os.environ.get("GITHUB_EVENT_PATH")
    try:
        with open(path or "", encoding="utf-8") as f:
            pr = json.load(f).get("pull_request") or {}
        return int(pr["number"]), str(pr["head"]["sha"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _suggestions(args, candidates: list[str]) -> tuple[list, dict[str, str]]:
    """(suggestions, {path: git blob id of the checked-out file}) from the safe fixes, computed in memory."""
    from ..integrations.github_review import blob_sha, edit_lines, suggestions_for
    from ..pipeline import Options, Pipeline

    pipeline = Pipeline(Options(files=tuple(candidates), only_configs=True, fix="diff", isolated=args.isolated,
                                config_file=args.config or None, target=args.target or None,
                                include=tuple(args.include),
                                world_size=args.world_size, deepspeed_version=args.deepspeed_version or None))
    run = pipeline.fix()
    out, shas = [], {}
    for ff in run.fixes:
        result = ff.result
        if result is None or not result.changed or ff.original is None:
            continue
        path = os.path.normpath(ff.path)
        shas[path] = blob_sha(ff.original.encode("utf-8"))
        one_pass = len(result.passes) == 1  # the fixes' edits are on the original text: each one's lines are known
        applied = [(edit_lines(ff.original, a.fix.edits) if one_pass else None,
                    f"{a.code} {a.diagnostic.name}: {a.fix.description}") for a in result.applied]
        out += suggestions_for(path, ff.original, result.text, applied)
    return out, shas


def suggest(args) -> int:
    from ..integrations.github_api import APIError, GitHubAPI
    from ..integrations.github_review import comment_json, place, review_body, sync_review
    from ..project.settings import ConfigError

    pr = _pull_request()
    if pr is None:
        print("zerolint suggest: not a pull request event; nothing to post.")
        _output(suggestions=0)
        return EXIT_OK
    number, head = pr
    repo, token = os.environ.get("GITHUB_REPOSITORY", ""), os.environ.get("GITHUB_TOKEN", "")
    if not token or repo.count("/") != 1:
        print("::warning title=zerolint suggest::no GITHUB_TOKEN or GITHUB_REPOSITORY: nothing posted "
              "(set the github-token input)")
        _output(suggestions=0)
        return EXIT_OK
    try:
        found, shas = _suggestions(args, _names(args.list) or [])
    except ConfigError as e:
        _error("zerolint suggest", str(e))
        _output(suggestions=0)
        return EXIT_USAGE
    try:
        api = GitHubAPI(os.environ.get("GITHUB_API_URL") or "https://api.github.com", token)
        base = f"/repos/{repo}/pulls/{number}"
        files = {f["filename"]: f for f in api.get_all(f"{base}/files") if isinstance(f, dict) and "filename" in f}
        found = [s for s in found if s.path in files]  # files the pull request does not touch: not its review
        placed = place(found, files, shas)
        comments = [comment_json(s) for s in placed.inline]
        try:
            author = str((api.request("GET", "/user") or {}).get("login") or DEFAULT_AUTHOR)
        except APIError:
            author = DEFAULT_AUTHOR
        done = sync_review(api, base, head, comments, review_body(placed, head), author)
    except (APIError, ValueError) as e:
        print(f"::warning title=zerolint suggest::could not post the suggestions: {escape_data(safe_line(str(e)))} "
              "(the job needs `permissions: pull-requests: write`; pull requests from forks get a read-only token)")
        _output(suggestions=0)
        return EXIT_OK
    n = len(placed.inline)
    if done["unchanged"]:
        print(f"zerolint suggest: the review already holds these {n} suggestion(s); nothing posted.")
    else:
        print(f"zerolint suggest: {n} suggestion(s) on the diff, {len(placed.elsewhere)} in the review body; "
              f"{len(done['deleted'])} earlier suggestion(s) removed, {len(done['updated'])} earlier review(s) "
              "updated" + ("; review posted" if done["created"] is not None else ""))
    _output(suggestions=n + len(placed.elsewhere))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zerolint.cli.action")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("verify", "suggest"):
        p = sub.add_parser(name)
        p.add_argument("--list", required=True, help="NUL-separated candidate files (the Action's file list)")
        p.add_argument("--isolated", action="store_true")
        p.add_argument("--config", default="")
        p.add_argument("--target", default="")
        p.add_argument("--include", action="append", default=[], help="a glob of files that are DeepSpeed configs")
        if name == "verify":
            p.add_argument("--changed", default=None, help="NUL-separated files the pull request changes")
            p.add_argument("--mode", choices=("cpu", "gpu"), required=True)
            p.add_argument("--op-cache", default="", help="where DeepSpeed's op builds are kept between runs")
            p.add_argument("--fail-on", default="")
        else:
            p.add_argument("--world-size", type=int, default=None)
            p.add_argument("--deepspeed-version", default="")
    args = parser.parse_args(argv)
    return verify(args) if args.command == "verify" else suggest(args)


if __name__ == "__main__":
    sys.exit(main())
