"""What the playground page asks of zerolint: one call per panel, each taking the editor's text and the selectors
and returning JSON text (one crossing of the Pyodide boundary, no proxies to free).

Findings come from the public API (`zerolint.lint_text`). The API has no call for fixes of a text or for the
memory estimate of a text, so those two go through the same internals `zerolint check --diff` and
`zerolint estimate` use (fix.engine.fix_text with the pipeline's settings; estimate.memory.estimate_view).
Nothing here reads or writes a file or the network: the text is only ever data for the linter."""

from __future__ import annotations

import json

import zerolint

NAME = "ds_config.json"  # the name diffs and findings show: the text has no file


def _opts(target: str, deepspeed_version: str, world_size: int) -> dict:
    return {"target": target or "auto", "deepspeed_version": deepspeed_version or None,
            "world_size": int(world_size) if world_size else None}


def _utf16(text: str, offset: int) -> int:
    # zerolint's offsets count code points; CodeMirror counts UTF-16 units (they differ past U+FFFF)
    head = text[:offset]
    return len(head) + sum(1 for ch in head if ord(ch) > 0xFFFF)


def lint(text: str, target: str = "auto", deepspeed_version: str = "", world_size: int = 0) -> str:
    """The findings as `zerolint check --format json` writes them, plus `from`/`to` for the editor and
    `quick_fixes`: each fix of the finding as editor changes, as the language server offers them (the safe ones
    first; its edits applied as they are, without the re-lint of `--fix`)."""
    out = []
    for d in zerolint.lint_text(text, **_opts(target, deepspeed_version, world_size)):
        item = d.to_json()
        item["file"] = NAME
        item["from"], item["to"] = _utf16(text, d.start), _utf16(text, max(d.end, d.start))
        fixes = sorted((f for f in d.fixes if f.edits), key=lambda f: not f.safe)  # stable: the default first
        item["quick_fixes"] = [{"title": _title(d, f), "safe": f.safe, "changes": [
            {"from": _utf16(text, e.start), "to": _utf16(text, e.end), "insert": e.text} for e in f.edits]}
            for f in fixes]
        out.append(item)
    return json.dumps(out)


def _title(d, fix) -> str:
    notes = []
    if fix.choice is not None:
        notes.append(f"one of {sum(1 for f in d.fixes if f.choice is not None)} alternatives")
    if not fix.safe:
        notes.append("unsafe: changes behaviour")
    return fix.description + (f" ({', '.join(notes)})" if notes else "")


def fix(text: str, target: str = "auto", deepspeed_version: str = "", world_size: int = 0,
        unsafe: bool = False) -> str:
    """What `zerolint check --diff` (with `unsafe`: `--unsafe-fixes`) would do to the text: the fixed text, its
    diff, the fixes applied and those refused."""
    from zerolint.fix.engine import fix_text, reader_of, reread_error, unified_diff
    from zerolint.pipeline import Options, Pipeline

    o = _opts(target, deepspeed_version, world_size)
    pipeline = Pipeline(Options(isolated=True, unsafe=bool(unsafe), fix="diff", **o))
    s = pipeline.setup("-")  # the settings `lint_text` uses: no file, no zerolint config read
    result = fix_text(text, NAME, s.settings, s.selection, unsafe=bool(unsafe), rules=s.rules)
    problem = reread_error(reader_of(text), result.text) if result.changed else ""
    fixed = text if problem else result.text
    return json.dumps({
        "text": fixed,
        "diff": unified_diff(NAME, text, fixed),
        "applied": [a.to_json() for a in result.applied] if not problem else [],
        "failed": [a.to_json() for a in result.failed],
        "skipped": result.skipped or problem,
    })


def estimate(text: str, params: str, target: str = "auto", deepspeed_version: str = "", world_size: int = 0,
             gpu_memory: str = "") -> str:
    """`zerolint estimate --format json --params P --gpus-per-node W [--gpu-memory M]` for the text, or
    {"error": why} when the model size, the memory or the config cannot be used."""
    from zerolint.estimate.memory import Cluster, EstimateError, Workload, estimate_view, parse_bytes
    from zerolint.estimate.modelspec import ModelSpecError, resolve
    from zerolint.model.document import parse_bytes as parse_config
    from zerolint.model.view import Settings, View

    o = _opts(target, deepspeed_version, world_size)
    try:
        model = resolve(params=params.strip())
        memory = parse_bytes(gpu_memory.strip()) if gpu_memory.strip() else None
    except (ModelSpecError, ValueError) as e:
        return json.dumps({"error": str(e)})
    cluster = Cluster(nodes=1, gpus_per_node=o["world_size"] or 1)
    doc = parse_config(text.encode("utf-8"), NAME)
    if doc.root is None:
        return json.dumps({"error": "the config cannot be parsed: fix the syntax error first"})
    settings = Settings(target=o["target"], deepspeed_version=o["deepspeed_version"], world_size=cluster.world)
    try:
        est = estimate_view(View(doc, settings), model, cluster, Workload(), memory, None, None, config_path=NAME)
    except EstimateError as e:
        return json.dumps({"error": str(e)})
    return json.dumps(est.to_dict())


def about() -> str:
    """The version, and the DeepSpeed versions zerolint ships facts for (the version selector)."""
    from zerolint.model.versions import DEFAULT_DEEPSPEED_VERSION, SCHEMA_LINES

    return json.dumps({"version": zerolint.__version__, "default_deepspeed": DEFAULT_DEEPSPEED_VERSION,
                       "deepspeed_lines": list(SCHEMA_LINES)})
