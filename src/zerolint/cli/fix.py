"""`zerolint check --fix / --diff / --fix-only` and `zerolint upgrade`: read, fix, verify, write safely, report.

Kept out of cli.py so that the command module stays small; cli.py calls `run_fixes` with its parsed options.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Sequence

import click

from ..model.diagnostics import Diagnostic
from ..model.document import Document


@dataclass
class FileOutcome:
    path: str
    document: Document | None
    remaining: list[Diagnostic] = field(default_factory=list)
    fixed: int = 0
    changed: bool = False
    failed: list = field(default_factory=list)
    applied: list = field(default_factory=list)
    note: str = ""  # why the file was not fixed / not written


def roots_for(args: Sequence[str]) -> list[str]:
    """The trees being checked: the working directory and every directory named (or holding a file named) on the
    command line. A symlink may be written through only when its target is inside one of them."""
    roots = [os.getcwd()]
    for a in args:
        if a == "-":
            continue
        roots.append(a if os.path.isdir(a) else os.path.dirname(os.path.abspath(a)))
    return roots


YAML_SUFFIXES = (".yaml", ".yml")  # hf.YAML_SUFFIXES (hf is imported only when a YAML is read)


def is_yaml(name: str) -> bool:
    return name.lower().endswith(YAML_SUFFIXES)


def reader_of(text: str) -> str:
    """The reader a fixed file must still satisfy: "json" when `json.loads` reads the original (HF, Accelerate),
    else "hjson" (DeepSpeed). YAML files are never edited."""
    import json

    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return "hjson"
    return "json"


def reread_error(reader: str, text: str) -> str:
    """'' when `text` still parses with `reader`, else why not: the last check before anything is written (fix_text
    verifies every pass already; this holds even if a fixer, e.g. upgrade's, did not)."""
    try:
        if reader == "json":
            import json

            json.loads(text)
        else:
            import hjson

            hjson.loads(text)
    except Exception as e:  # any failure of the reader means the file would no longer load
        return f"the fixed text does not parse with {reader} any more ({type(e).__name__}: {str(e)[:200]})"
    return ""


def accelerate_outcomes(path: str, settings, selection, limits) -> list[FileOutcome]:
    """An Accelerate YAML is linted (with the DeepSpeed config it names) but never edited: the fixer edits only
    json/hjson DeepSpeed configs, and a YAML rewritten by them would no longer load (issue 12 item 4)."""
    from dataclasses import replace

    from ..base.fsio import read_roots
    from ..pipeline import lint_accelerate

    if limits.roots is None:
        limits = replace(limits, roots=read_roots(path))
    results = lint_accelerate(path, settings, selection, limits)
    named = [r.path for r in results[1:]]
    how = f"; to fix the DeepSpeed config it names, run --fix on {named[0]}" if named else ""
    out = [FileOutcome(results[0].path, results[0].document, results[0].diagnostics,
                       note=f"not fixed: an Accelerate YAML is never edited{how}")]
    out += [FileOutcome(r.path, r.document, r.diagnostics) for r in results[1:]]
    return out


def fix_bytes(data: bytes, path: str, settings, selection, limits, unsafe: bool, prefer: Sequence[str],
              fixer: Callable | None = None):
    """(original text or None, FixResult or None, lint Result of the original when no fix was attempted)."""
    from ..fix.engine import fix_text
    from ..pipeline import lint_bytes

    if len(data) > limits.max_bytes:
        return None, None, lint_bytes(data, path, settings, selection, limits)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, None, lint_bytes(data, path, settings, selection, limits)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, None, lint_bytes(data, path, settings, selection, limits)
    fixer = fixer or (lambda t: fix_text(t, path, settings, selection, unsafe=unsafe, prefer=prefer))
    return text, fixer(text), None


def run_fixes(files, paths, unreadable, settings, selection, limits, *, fix: bool, diff: bool, fix_only: bool,
              unsafe: bool, prefer: Sequence[str], formats, outputs, quiet: bool, color: bool, fail_on: str,
              stdin_filename: str | None, fixer_factory: Callable | None = None, verb: str = "Fixed",
              show_applied: bool = False) -> int:
    """Fix every path; returns the exit code. `fixer_factory(path)` -> (text -> FixResult) replaces the
    default `fix_text` (the `upgrade` command uses it)."""
    from dataclasses import replace as _replace

    from ..base.fsio import Snapshot, UnreadableFile, WriteRefused, atomic_write, read_bytes, read_roots
    from ..fix.engine import unified_diff
    from ..model.diagnostics import Severity
    from ..report.output import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, default_formats, emit, make_summary, render

    roots = roots_for(files)
    outcomes: list[FileOutcome] = []
    refused: list[str] = []
    stdin_fixed_out = fix and not diff and "-" in paths
    any_diff = False
    for path in paths:
        name = (stdin_filename or "<stdin>") if path == "-" else path
        if is_yaml(name):
            try:
                if path == "-":
                    data = sys.stdin.buffer.read(limits.max_bytes + 1)
                    if stdin_fixed_out:
                        sys.stdout.buffer.write(data)
                    outcomes.append(FileOutcome(name, None, note="not fixed: an Accelerate YAML is never edited"))
                else:
                    outcomes.extend(accelerate_outcomes(path, settings, selection, limits))
            except UnreadableFile as e:
                unreadable.append(str(e))
            continue
        try:
            data = sys.stdin.buffer.read(limits.max_bytes + 1) if path == "-" else \
                read_bytes(path, _replace(limits, roots=read_roots(path)))  # reads stay in the tree (fsio)
        except UnreadableFile as e:
            unreadable.append(str(e))
            continue
        snapshot = Snapshot.of(path, data) if path != "-" else None
        fixer = fixer_factory(name) if fixer_factory else None
        text, result, plain = fix_bytes(data, name, settings, selection, limits, unsafe, prefer, fixer)
        if result is None:
            out = FileOutcome(name, plain.document, plain.diagnostics,
                              note="not fixed: the file is not UTF-8 text or is over the size limit")
            if path == "-" and stdin_fixed_out:
                sys.stdout.buffer.write(data)
            outcomes.append(out)
            continue
        out = FileOutcome(name, result.document, result.remaining, fixed=len(result.applied),
                          changed=result.changed, failed=result.failed, applied=result.applied, note=result.skipped)
        if diff:
            if result.changed:
                any_diff = True
                click.echo(unified_diff(name, text, result.text), nl=False)
        elif path == "-":
            problem = reread_error(reader_of(text), result.text) if result.changed else ""
            if problem:
                refused.append(f"{name}: {problem}; the input is printed unchanged")
            sys.stdout.buffer.write(data if problem else result.text.encode("utf-8"))
            sys.stdout.flush()
        elif result.changed:
            try:
                problem = reread_error(reader_of(text), result.text)
                if problem:
                    raise WriteRefused(f"{path}: {problem}; not written")
                atomic_write(path, result.text.encode("utf-8"), snapshot, roots)
            except (WriteRefused, OSError) as e:
                refused.append(str(e) if isinstance(e, WriteRefused) else f"{path}: cannot write ({e.strerror or e})")
                from ..pipeline import lint_bytes

                plain = lint_bytes(data, name, settings, selection, limits)
                out = FileOutcome(name, plain.document, plain.diagnostics, note="not written")
        outcomes.append(out)

    remaining = [d for o in outcomes for d in o.remaining]
    fixed = sum(o.fixed for o in outcomes if o.note != "not written")
    documents = {o.path: o.document for o in outcomes if o.document is not None}
    to_err = diff or stdin_fixed_out
    if not diff and not fix_only:
        summary = make_summary(remaining, len(outcomes))
        fmts = formats or default_formats(outputs)
        if to_err:
            for fmt in fmts:
                click.echo(render(fmt, remaining, documents, summary, quiet=quiet), nl=False, err=True)
        else:
            emit(fmts, outputs, remaining, documents, summary, quiet=quiet, color=color)
    from ..base.escape import safe  # file names and fix descriptions carry text from the config

    for o in outcomes:
        if show_applied and o.note != "not written":
            for a in o.applied:
                d = a.diagnostic
                click.echo(safe(f"{o.path}:{d.line}:{d.column}: {'would ' if diff else ''}{a.fix.description}"),
                           err=to_err)
        for a in o.failed:
            d = a.diagnostic
            click.echo(safe(f"zerolint: {o.path}:{d.line}:{d.column}: {d.code} fix not applied "
                            f"({a.fix.description}): {a.reason}"), err=True)
        if o.note and o.note != "not written":
            click.echo(safe(f"zerolint: {o.path}: {o.note}"), err=True)
    n_files = sum(o.changed for o in outcomes if o.note != "not written")
    if diff:
        line = (f"Would fix {fixed} finding{'s' * (fixed != 1)} in {n_files} file{'s' * (n_files != 1)} "
                f"({len(remaining)} would remain).")
    else:
        line = (f"{verb} {fixed} finding{'s' * (fixed != 1)} in {n_files} file{'s' * (n_files != 1)} "
                f"({len(remaining)} remaining).")
    reported = not diff and not fix_only  # the report's own summary line already counts the unsafe fixes
    hidden = sum(1 for d in remaining if d.fix is not None and not d.fix.safe) if not (unsafe or reported) else 0
    if hidden:
        line += f" {hidden} more with --unsafe-fixes."
    choices = sum(1 for d in remaining if d.fix is None and any(f.choice for f in d.fixes))
    if choices:
        line += f" {choices} with alternatives: pick one with --prefer CHOICE."
    plain_text = not to_err and not outputs and (formats or default_formats(outputs)) == ("text",)
    click.echo(line, err=not plain_text)
    for msg in refused:
        click.echo(f"zerolint: error: {safe(msg)}", err=True)
    for msg in unreadable:
        click.echo(f"zerolint: error: {safe(msg)}", err=True)
    if unreadable or refused:
        return EXIT_USAGE
    if diff:
        return EXIT_FINDINGS if any_diff else EXIT_OK
    if fix_only:
        return EXIT_OK
    threshold = Severity.parse(fail_on).rank
    return EXIT_FINDINGS if any(d.severity.rank >= threshold for d in remaining) else EXIT_OK
