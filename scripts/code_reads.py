"""The config keys a DeepSpeed module reads, found in its source with `ast` (used by scripts/gen_schema.py).

Some sections are handed on as plain dicts, copied whole (`copy.copy(param_dict[RANDOM_LTD])`,
runtime/data_pipeline/config.py), and read key by key far from the config parse: random-LTD's scheduler and the
engine read `total_layer_num`, `random_ltd_schedule`, ... with `config[KEY]`. Those keys are in no model and no
`get_scalar_param` of the parse, yet deleting one makes initialize raise KeyError. A section of
scripts/schema_curated.py that says `"@read_by": {"files": [...], "constants": [...]}` gets, in the generated
schema, `x-zerolint-code-reads`: each key read in those files, with its first read site (`path:line`), so that
ZL103 never calls such a key unknown.

A read is `d[KEY]` (not as an assignment target), `d.get(KEY...)`, `d.pop(KEY...)`, `KEY in d`, or a
`get_*_param(d, KEY, ...)` call, where KEY is a string literal or a name bound to one in the given constants modules
or in the file itself. Only identifier-like strings count (not format strings or messages).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _constants(path: Path) -> dict[str, str]:
    """NAME -> string for the module-level `NAME = "text"` assignments of one module."""
    out: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value,
                                                                                                  str):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node.value.value
    return out


def _key(node: ast.AST, names: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        value = node.value
    elif isinstance(node, ast.Name):
        value = names.get(node.id)
    elif isinstance(node, ast.Attribute):  # constants.KEY
        value = names.get(node.attr)
    else:
        return None
    return value if value is not None and _KEY.match(value) else None


def _reads(tree: ast.AST, names: dict[str, str]):
    """(key, line) for every read of a config key in `tree`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = _key(node.slice, names)
            if key:
                yield key, node.lineno
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("get", "pop", "setdefault") and node.args:
                key = _key(node.args[0], names)
            elif isinstance(func, (ast.Name, ast.Attribute)) and re.fullmatch(
                    r"get_\w*param\w*", func.id if isinstance(func, ast.Name) else func.attr) and len(node.args) >= 2:
                key = _key(node.args[1], names)
            else:
                key = None
            if key:
                yield key, node.lineno
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            key = _key(node.left, names)
            if key:
                yield key, node.lineno


def code_reads(package_dir: Path, files: list[str], constants: list[str]) -> dict[str, str]:
    """key -> "deepspeed/<file>:<line>" (its first read) over `files` (paths in the package, or directories: every
    .py under them), keys resolved through the `constants` modules."""
    shared: dict[str, str] = {}
    for c in constants:
        shared.update(_constants(package_dir / c))
    paths: list[Path] = []
    for f in files:
        p = package_dir / f
        paths.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    found: dict[str, str] = {}
    for path in paths:
        names = {**shared, **_constants(path)}
        rel = path.relative_to(package_dir.parent).as_posix()
        for key, line in sorted(_reads(ast.parse(path.read_text(encoding="utf-8")), names), key=lambda r: r[1]):
            found.setdefault(key, f"{rel}:{line}")
    return dict(sorted(found.items()))
