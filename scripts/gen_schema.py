#!/usr/bin/env python3
"""Generate JSON Schemas (draft 2020-12) of the DeepSpeed config, one per DeepSpeed minor line.

    python scripts/gen_schema.py                      # all lines -> src/zerolint/data/schemas/deepspeed-0.XX.json
    python scripts/gen_schema.py --version 0.19       # one line
    python scripts/gen_schema.py --version 0.19 --check   # exit 1 (with a diff) if the file is stale
    python scripts/gen_schema.py --fetch              # pip-download missing sdists into --src-root first

Every schema is generated from that DeepSpeed version's OWN pydantic models (imported in a subprocess,
with PYTHONPATH pointing at the unpacked sdist) plus the hand-maintained part in
``scripts/schema_curated.py`` (top level and the plain-dict "lax" sections).

Where the DeepSpeed source comes from, per line:
  * 0.19: the installed ``deepspeed`` (must be 0.19.8) unless ``--ds-src`` is given;
  * 0.14 / 0.15 / 0.16 / 0.17 / 0.18: ``--ds-src PATH`` (only with a single ``--version``), else
    ``<--src-root>/<full version>`` (default ``/tmp/ds-src/0.14.5`` ...), an unpacked PyPI sdist.
    ``--fetch`` runs ``pip download --no-deps --no-binary :all: deepspeed==X`` and unpacks it there.
Old versions import fine from the plain sdist with DS_BUILD_OPS=0 and DS_ACCELERATOR=cpu (no
workaround needed for 0.14.5, 0.15.4, 0.16.9, 0.17.6, 0.18.9 with torch 2.13 / pydantic 2.14).

DeepSpeed 0.14 and older define their models with pydantic v1 (``deepspeed/pydantic_v1.py`` imports ``pydantic.v1``,
which pydantic 2 still ships); 0.15 and later with pydantic v2. The emitter reads each model through the adapter for
its API (PydanticV1 / PydanticV2), which give the same schema layout.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import enum
import inspect
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
SCHEMA_DIR = REPO / "src" / "zerolint" / "data" / "schemas"
GENERATOR = "scripts/gen_schema.py"

# Newest patch release of each supported minor line.
LINES = {"0.14": "0.14.5", "0.15": "0.15.4", "0.16": "0.16.9", "0.17": "0.17.6", "0.18": "0.18.9", "0.19": "0.19.8"}
INSTALLED_LINE = "0.19"
DEFAULT_SRC_ROOT = Path(os.environ.get("ZEROLINT_DS_SRC_ROOT", "/tmp/ds-src"))


def vtuple(v: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def schema_path(line: str) -> Path:
    return SCHEMA_DIR / f"deepspeed-{line}.json"


def dumps(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------------------------------------
# Parent side: locate sources, run the emitter in a subprocess, write / check files
# ----------------------------------------------------------------------------------------------


def fetch_sdist(full_version: str, src_root: Path) -> Path:
    dest = src_root / full_version
    if (dest / "deepspeed" / "__init__.py").exists():
        return dest
    src_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                        f"deepspeed=={full_version}", "-d", tmp], check=True)
        (tarball, ) = Path(tmp).glob("deepspeed-*.tar.gz")
        with tarfile.open(tarball) as tf:
            tf.extractall(tmp, filter="data")
        shutil.move(str(Path(tmp) / f"deepspeed-{full_version}"), str(dest))
    return dest


def resolve_source(line: str, args) -> Path | None:
    """Directory to put on PYTHONPATH (None = the installed deepspeed, used for the 0.19 line)."""
    full = LINES[line]
    if args.ds_src:
        return Path(args.ds_src).resolve()
    if line == INSTALLED_LINE:
        return None
    cand = args.src_root / full
    if (cand / "deepspeed" / "__init__.py").exists():
        return cand.resolve()
    if args.fetch:
        return fetch_sdist(full, args.src_root).resolve()
    raise SystemExit(f"gen_schema: no DeepSpeed {full} source for the {line} line: unpack its sdist to {cand} "
                     f"(pip download --no-deps --no-binary :all: deepspeed=={full}), pass --ds-src, or use --fetch")


def generate_text(line: str, src: Path | None) -> str:
    env = dict(os.environ)
    env.update(DS_BUILD_OPS="0", DS_ACCELERATOR="cpu", PYTHONDONTWRITEBYTECODE="1", TOKENIZERS_PARALLELISM="false")
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    else:
        env.pop("PYTHONPATH", None)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "schema.json"
        # cwd outside the repo and the source tree so that nothing shadows the deepspeed under test
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--_emit", line, "--_out",
                               str(out)], env=env, cwd=tmp, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-8000:])
            raise SystemExit(f"gen_schema: generating the {line} schema failed (exit {proc.returncode})")
        return out.read_text(encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", action="append", choices=sorted(LINES), help="DeepSpeed minor line (repeatable)")
    ap.add_argument("--check", action="store_true", help="regenerate in memory; exit 1 with a diff if stale")
    ap.add_argument("--ds-src", help="unpacked DeepSpeed source dir (the one containing deepspeed/); one --version")
    ap.add_argument("--src-root", type=Path, default=DEFAULT_SRC_ROOT, help="dir of unpacked sdists <root>/<X.Y.Z>")
    ap.add_argument("--fetch", action="store_true", help="pip download + unpack missing sdists into --src-root")
    ap.add_argument("--_emit", help=argparse.SUPPRESS)
    ap.add_argument("--_out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args._emit:
        schema = build_schema(args._emit)
        Path(args._out).write_text(dumps(schema), encoding="utf-8")
        return 0

    lines = args.version or sorted(LINES, key=vtuple)
    if args.ds_src and len(lines) != 1:
        ap.error("--ds-src needs exactly one --version")
    stale = 0
    for line in lines:
        text = generate_text(line, resolve_source(line, args))
        path = schema_path(line)
        if args.check:
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            if old != text:
                stale += 1
                sys.stdout.writelines(
                    difflib.unified_diff(old.splitlines(True), text.splitlines(True), f"{path.name} (committed)",
                                         f"{path.name} (generated)"))
                print(f"gen_schema: {path.relative_to(REPO)} is out of date")
            else:
                print(f"gen_schema: {path.relative_to(REPO)} is up to date")
        else:
            SCHEMA_DIR.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"gen_schema: wrote {path.relative_to(REPO)}")
    return 1 if stale else 0


# ----------------------------------------------------------------------------------------------
# Emitter side (runs in a subprocess with the DeepSpeed under test importable)
# ----------------------------------------------------------------------------------------------

# JSON-Schema keywords that describe the *type* of a value (kept when wrapping in anyOf for "auto")
ANNOTATION_KEYS = {"description", "default", "deprecated", "title", "$comment", "examples"}
KEY_ORDER = ("$ref", "type", "enum", "const", "format", "minimum", "exclusiveMinimum", "maximum",
             "exclusiveMaximum", "items", "additionalProperties")
DEPRECATION_KEYS = ("deprecated", "new_param", "new_param_fn", "set_new_param", "deprecated_msg")


def first_paragraph(text: str | None) -> str | None:
    if not text:
        return None
    text = textwrap.dedent(text).strip()
    para = re.split(r"\n\s*\n", text)[0]
    para = " ".join(para.split())
    return para or None


def field_docstrings(cls) -> dict:
    """Field docstrings: the string literal right after a field (DeepSpeed's convention). A string that
    follows another string (not a field) is an orphan and is attached to the next field (zero/config.py
    puts pipeline_loading_checkpoint's doc before the field)."""
    docs = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith("pydantic") or klass is object:
            continue
        try:
            src_file = inspect.getsourcefile(klass)
            tree = ast.parse(Path(src_file).read_text(encoding="utf-8"))
        except (TypeError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == klass.__name__:
                body = node.body
                orphan = None
                for i, stmt in enumerate(body):
                    is_str = (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                              and isinstance(stmt.value.value, str))
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        name = stmt.target.id
                        nxt = body[i + 1] if i + 1 < len(body) else None
                        if (nxt is not None and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                                and isinstance(nxt.value.value, str)):
                            docs[name] = nxt.value.value
                        elif orphan:
                            docs[name] = orphan
                        orphan = None
                    elif is_str:
                        prev = body[i - 1] if i > 0 else None
                        orphan = stmt.value.value if (prev is not None and not isinstance(prev, ast.AnnAssign)
                                                      and i > 0) else None
                    else:
                        orphan = None
                break
    return docs


def class_source(cls) -> str | None:
    try:
        path = Path(inspect.getsourcefile(cls)).resolve()
        line = inspect.getsourcelines(cls)[1]
    except (TypeError, OSError):
        return None
    parts = path.parts
    if "deepspeed" in parts:
        idx = len(parts) - 1 - parts[::-1].index("deepspeed")
        return "/".join(parts[idx:]) + f":{line}"
    return f"{path.name}:{line}"


def to_json_value(value):
    """Best-effort JSON-serialisable form of a Python default; raises ValueError when impossible."""
    from pydantic import BaseModel
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return to_json_value(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite float")
        return float(value)
    if isinstance(value, BaseModel):
        return to_json_value(value.model_dump(mode="python", by_alias=False))
    if PydanticV1.handles(type(value)):
        return to_json_value(value.dict(by_alias=False))
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(to_json_value(v) for v in value)
    if isinstance(value, Path):
        return str(value)
    mod = type(value).__module__
    if mod.startswith("torch"):
        return str(value)
    raise ValueError(f"cannot serialise {type(value).__name__}")


def is_type_key(key: str) -> bool:
    return key not in ANNOTATION_KEYS and not key.startswith("x-")


def finalize_prop(prop: dict) -> dict:
    """Keep $ref objects free of other keywords except description/default: move the $ref into allOf."""
    if "$ref" in prop and set(prop) - {"$ref", "description", "default"}:
        ref = prop.pop("$ref")
        out = {}
        for k, v in prop.items():
            if k in ("description", "default"):
                out[k] = v
        out["allOf"] = [{"$ref": ref}]
        for k, v in prop.items():
            if k not in out:
                out[k] = v
        return out
    return prop


# ----------------------------------------------------------------------------------------------
# pydantic API adapters: Builder.model_def reads a model only through one of these
# ----------------------------------------------------------------------------------------------


class ModelField(NamedTuple):
    """One field of a DeepSpeed model, independent of the pydantic API that defines it."""
    name: str
    alias: str | None  # the other accepted spelling (pydantic alias), None when there is none
    input_key: str  # the spelling a probe value is given under when constructing the model
    description: str | None  # Field(description=...)
    required: bool
    default: object  # meaningful when not required and default_factory is None
    default_factory: object  # a callable or None
    extra: dict  # DeepSpeed's deprecation metadata: deprecated, new_param, set_new_param, deprecated_msg, ...


class PydanticV2:
    """DeepSpeed 0.15 and later: models subclass pydantic.BaseModel (v2 API)."""

    marker = {}  # what model_def adds to the $defs entry of such a model

    @staticmethod
    def nested_models(cls) -> list:
        """cls and every model class its fields' annotations reach (to map pydantic's $defs back to classes)."""
        import typing

        from pydantic import BaseModel
        seen = []

        def walk(tp):
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                if tp not in seen:
                    seen.append(tp)
                    for f in tp.model_fields.values():
                        walk(f.annotation)
                return
            for a in typing.get_args(tp):
                walk(a)

        walk(cls)
        return seen

    @staticmethod
    def property_schemas(cls) -> tuple[dict, dict]:
        """(field name -> pydantic's JSON schema of the field, $defs) from model_json_schema()."""
        from pydantic.json_schema import GenerateJsonSchema

        class Gen(GenerateJsonSchema):

            def handle_invalid_for_json_schema(self, schema, error_info):
                cls_name = None
                if schema.get("type") == "is-instance":
                    c = schema.get("cls")
                    cls_name = f"{getattr(c, '__module__', '')}.{getattr(c, '__qualname__', c)}".lstrip(".")
                return {"not": {}, "x-zerolint-python-type": cls_name or error_info}

            def default_schema(self, schema):
                # defaults are computed by the generator itself (to_json_value)
                return self.generate_inner(schema["schema"])

            def callable_schema(self, schema):
                return {"not": {}, "x-zerolint-python-type": "callable"}

        import functools

        import pydantic.json_schema as pjs
        orig = pjs.to_jsonable_python
        # json_schema_extra carries DeepSpeed's new_param_fn lambdas; serialise them as repr (then dropped)
        pjs.to_jsonable_python = functools.partial(orig, fallback=repr)
        try:
            js = cls.model_json_schema(by_alias=False, ref_template="#/$defs/{model}", schema_generator=Gen,
                                       mode="validation")
        finally:
            pjs.to_jsonable_python = orig
        return js.get("properties", {}), js.get("$defs", {})

    @staticmethod
    def forbids_extra(cls) -> bool:
        return cls.model_config.get("extra") == "forbid"

    @staticmethod
    def fields(cls) -> list[ModelField]:
        from pydantic_core import PydanticUndefined
        return [ModelField(name=name, alias=f.alias if f.alias and f.alias != name else None, input_key=name,
                           description=f.description,
                           required=f.default_factory is None and f.default is PydanticUndefined,
                           default=f.default, default_factory=f.default_factory,
                           extra=f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {})
                for name, f in cls.model_fields.items()]


class PydanticV1:
    """DeepSpeed 0.14 and older: models subclass pydantic.v1.BaseModel (deepspeed/pydantic_v1.py imports
    ``pydantic.v1`` under pydantic 2). Read through ``__fields__`` (ModelField: alias, allow_none, required,
    default, default_factory, ``field_info.extra`` for DeepSpeed's ``Field(..., deprecated=True, new_param=...)``
    kwargs) and ``__config__`` (``extra = "forbid"``). The field schemas come from pydantic v1's own
    ``field_schema()`` and are brought into the shape pydantic v2 gives the same Python type (``v2_shape``), so
    that one Builder turns both into the same layout. Its lax mode differs, and x-zerolint-coerces (probed) shows
    it; the $defs entry says ``x-zerolint-pydantic-v1: true``."""

    marker = {"x-zerolint-pydantic-v1": True}

    @staticmethod
    def handles(cls) -> bool:
        try:
            from pydantic import v1
        except ImportError:  # pydantic 1.x itself: not the pinned environment
            return False
        return isinstance(cls, type) and issubclass(cls, v1.BaseModel)

    @staticmethod
    def nested_models(cls) -> list:
        import typing
        seen = []

        def walk(tp):
            if PydanticV1.handles(tp):
                if tp not in seen:
                    seen.append(tp)
                    for f in tp.__fields__.values():
                        walk(f.outer_type_)  # Optional[...] is already stripped here (f.allow_none)
                return
            for a in typing.get_args(tp):
                walk(a)

        walk(cls)
        return seen

    @staticmethod
    def property_schemas(cls) -> tuple[dict, dict]:
        from pydantic.v1.schema import SkipField, field_schema, get_flat_models_from_model, get_model_name_map
        name_map = get_model_name_map(get_flat_models_from_model(cls))
        props, defs = {}, {}
        for name, f in cls.__fields__.items():
            try:
                js, sub_defs, _ = field_schema(f, by_alias=False, model_name_map=name_map,
                                               ref_template="#/$defs/{model}")
            except SkipField:  # a Callable: v1 leaves it out of the schema (the v2 adapter's callable_schema)
                js, sub_defs = {"not": {}, "x-zerolint-python-type": "callable"}, {}
            except ValueError:  # an arbitrary Python type (v2: handle_invalid_for_json_schema)
                t = f.outer_type_
                js = {"not": {}, "x-zerolint-python-type": f"{getattr(t, '__module__', '')}."
                                                            f"{getattr(t, '__qualname__', t)}".lstrip(".")}
                sub_defs = {}
            defs.update(sub_defs)
            props[name] = PydanticV1.v2_shape(js, nullable=f.allow_none)
        return props, defs

    @staticmethod
    def v2_shape(node, nullable: bool = False):
        """pydantic v1's JSON schema of a field -> the one pydantic v2 writes for the same Python type:
          * a $ref with siblings (title, default) is wrapped as ``allOf: [{$ref}]``: unwrapped (v2 writes the $ref);
          * a dict of arbitrary values is ``{"type": "object"}``: v2 adds ``additionalProperties: true`` (the same
            meaning);
          * ``Optional[X]``, and v1's implicit optional ``x: bool = None`` (``allow_none``), is rendered as X
            alone although v1 accepts null: v2's ``anyOf: [X, {"type": "null"}]``."""
        if isinstance(node, list):
            return [PydanticV1.v2_shape(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {k: PydanticV1.v2_shape(v) if k not in ("default", "enum", "const") else v for k, v in node.items()}
        wrapped = out.get("allOf")
        if (isinstance(wrapped, list) and len(wrapped) == 1 and isinstance(wrapped[0], dict)
                and "$ref" in wrapped[0] and not set(out) - {"allOf", "title", "default", "description"}):
            out = {**{k: v for k, v in out.items() if k != "allOf"}, **wrapped[0]}
        if out.get("type") == "object" and not {"properties", "additionalProperties", "patternProperties"} & set(out):
            out["additionalProperties"] = True
        if nullable and not PydanticV1.admits_null(out):
            ann = {k: v for k, v in out.items() if k in ANNOTATION_KEYS or k in DEPRECATION_KEYS}
            type_part = {k: v for k, v in out.items() if k not in ann}
            branches = type_part["anyOf"] if set(type_part) == {"anyOf"} else [type_part]
            out = {**ann, "anyOf": branches + [{"type": "null"}]}
        return out

    @staticmethod
    def admits_null(node: dict) -> bool:
        t = node.get("type")
        return (t == "null" or isinstance(t, list) and "null" in t or node == {}
                or any(isinstance(b, dict) and PydanticV1.admits_null(b) for b in node.get("anyOf", ())))

    @staticmethod
    def forbids_extra(cls) -> bool:
        return cls.__config__.extra == "forbid"  # pydantic.v1.Extra is a str enum

    @staticmethod
    def fields(cls) -> list[ModelField]:
        return [ModelField(name=name, alias=f.alias if f.alias != name else None,
                           # v1 takes the field name only with allow_population_by_field_name; the alias always
                           input_key=f.alias, description=f.field_info.description, required=bool(f.required),
                           default=f.default, default_factory=f.default_factory, extra=dict(f.field_info.extra))
                for name, f in cls.__fields__.items()]


def pydantic_api(cls):
    return PydanticV1 if PydanticV1.handles(cls) else PydanticV2


class Builder:

    def __init__(self, line: str, full_version: str, curated):
        self.line = line
        self.version = full_version
        self.vt = vtuple(full_version)
        self.C = curated
        self.defs = {}  # name -> schema
        self.def_classes = {}  # name -> class
        self.removed_seen = set()

    # -- version gates -----------------------------------------------------------------------------
    def gate(self, node: dict) -> bool:
        if "@since" in node and self.vt < vtuple(node["@since"]):
            return False
        if "@until" in node and self.vt >= vtuple(node["@until"]):
            return False
        return True

    # -- pydantic models ---------------------------------------------------------------------------
    def import_obj(self, spec: str):
        import importlib
        mod, _, name = spec.partition(":")
        obj = importlib.import_module(mod)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj

    def ref_for(self, cls, section: str) -> dict:
        name = cls.__name__
        if name in self.def_classes and self.def_classes[name] is not cls:
            name = f"{cls.__module__.replace('.', '_')}__{cls.__name__}"
        if name not in self.def_classes:
            self.def_classes[name] = cls
            self.defs[name] = None  # placeholder; built below (recursion-safe)
            self.defs[name] = self.model_def(cls, section)
        return {"$ref": f"#/$defs/{name}"}

    def convert(self, node, pdefs: dict, section: str, field: str):
        """pydantic property schema -> our type schema (enums inlined, model refs mapped, titles dropped)."""
        if isinstance(node, list):
            return [self.convert(n, pdefs, section, field) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            target = pdefs.get(name, {})
            if "enum" in target:
                out = {k: target[k] for k in ("type", "enum") if k in target}
                out["enum"] = list(dict.fromkeys(out["enum"]))
                return out
            cls = self.find_model(name)
            return self.ref_for(cls, f"{section}.{field}" if section else field)
        out = {}
        for k, v in node.items():
            if k in ("title", "default", "description") or k in DEPRECATION_KEYS:
                continue
            if k in ("properties", "$defs", "patternProperties"):
                out[k] = {kk: self.convert(vv, pdefs, section, field) for kk, vv in v.items()}
            else:
                out[k] = self.convert(v, pdefs, section, field)
        # Optional[X] of plain types -> "type": [..]
        if set(out) == {"anyOf"} and all(isinstance(i, dict) and set(i) == {"type"} for i in out["anyOf"]):
            types = []
            for i in out["anyOf"]:
                types += i["type"] if isinstance(i["type"], list) else [i["type"]]
            out = {"type": list(dict.fromkeys(types))}
        first = [k for k in KEY_ORDER if k in out]
        return {k: out[k] for k in first + [k for k in out if k not in first]}

    def find_model(self, pyd_name: str):
        for cls in self._model_candidates:
            if cls.__name__ == pyd_name or f"{cls.__module__}__{cls.__qualname__}".replace(".", "__") == pyd_name:
                return cls
        raise KeyError(f"pydantic $def {pyd_name!r} has no matching model class")

    def coerces(self, cls, key: str, type_schema: dict) -> list:
        """JSON types that DeepSpeed's model (pydantic lax mode + its validators) accepts for this field besides
        the declared ones: verified by constructing the model with only that field set to a probe value (under
        ``key``). The probes are the same for pydantic v1 and v2; the model decides. Under v2 a non-integral number
        (1.5) for an int and any non-string for a str are rejected; pydantic v1 (DeepSpeed 0.14) truncates 1.5 to 1
        (``int(v)``) and turns 1, 1.5 and true into "1", "1.5" and "True"."""
        t = type_schema.get("type")
        types = t if isinstance(t, list) else [t] if t else []
        if not types or set(types) - {"boolean", "integer", "number", "string", "null", "array"}:
            return []
        if "const" in type_schema:
            return []
        # Several probe values where a range constraint could reject the first (offload ratio is 0..1).
        probes = {"boolean": {"string": "true", "integer": 1},
                  "integer": {"string": ("1", "8"), "boolean": True, "number": (1.5, 8.5)},
                  "number": {"string": ("1.5", "0.5"), "boolean": True},
                  "string": {"integer": 1, "number": 1.5, "boolean": True},
                  "array": {"string": "x"}}  # a before-validator that wraps one string (leaf_module.names)
        if "enum" in type_schema:
            # An integer enum (ZeRO stage): lax mode still converts "3" and true (-> 1) before the enum check.
            ints = [e for e in type_schema["enum"] if isinstance(e, int) and not isinstance(e, bool)]
            if not ints or set(types) - {"integer", "null"}:
                return []
            probes = {"integer": {"string": str(ints[-1]), **({"boolean": True} if 1 in ints else {})}}
        found = []
        import logging
        logging.disable(logging.CRITICAL)
        try:
            for base in types:
                for jtype, probe in probes.get(base, {}).items():
                    if jtype in types or jtype in found or (jtype == "integer" and "number" in types):
                        continue
                    for value in probe if isinstance(probe, tuple) else (probe,):
                        try:
                            cls(**{key: value})
                        except Exception:
                            continue
                        found.append(jtype)
                        break
        finally:
            logging.disable(logging.NOTSET)
        return sorted(found)

    def model_def(self, cls, section: str) -> dict:
        api = pydantic_api(cls)
        self._model_candidates = getattr(self, "_model_candidates", [])
        for c in api.nested_models(cls):
            if c not in self._model_candidates:
                self._model_candidates.append(c)
        pprops, pdefs = api.property_schemas(cls)
        docs = field_docstrings(cls)
        strict = api.forbids_extra(cls)
        out = {}
        desc = first_paragraph(cls.__dict__.get("__doc__"))
        if desc:
            out["description"] = desc
        out["type"] = "object"
        props = {}
        required = []
        for f in api.fields(cls):
            name = f.name
            path = f"{section}.{name}"
            type_schema = self.convert(pprops.get(name, {}), pdefs, section, name)
            prop = {}
            d = (first_paragraph(f.description) or first_paragraph(docs.get(name))
                 or self.C.FIELD_DESCRIPTIONS.get(path))
            if d:
                prop["description"] = d
            if f.default_factory is not None:
                try:
                    prop["default"] = to_json_value(f.default_factory())
                except (ValueError, TypeError):
                    pass
            elif f.required:
                required.append(name)
            else:
                try:
                    prop["default"] = to_json_value(f.default)
                except ValueError:
                    pass
            if "x-zerolint-python-type" in type_schema:
                prop["description"] = (prop.get("description", "") + " Python object only (" +
                                       type_schema["x-zerolint-python-type"] + "): every JSON value is rejected "
                                       "(a literal \"auto\" is dropped).").strip()
            prop.update(type_schema)
            # constraints a model validator enforces (invisible to model_json_schema): merged over the type
            override = getattr(self.C, "FIELD_SCHEMA", {}).get(path)
            override = self.resolve(override, path, prop=False) if override else None  # @since/@variants
            if override:
                prop.update(override)
            extra = f.extra
            if extra.get("deprecated"):
                prop["deprecated"] = True
                if extra.get("new_param"):
                    prop["x-zerolint-replaced-by"] = extra["new_param"]
                if extra.get("deprecated_msg"):
                    prop["x-zerolint-deprecated-msg"] = extra["deprecated_msg"]
                if extra.get("new_param") and extra.get("set_new_param", True) is False:
                    prop["x-zerolint-sets-new-param"] = False
            co = self.coerces(cls, f.input_key, type_schema)
            if co:
                prop["x-zerolint-coerces"] = co
            alias = f.alias
            if alias:
                prop["x-zerolint-aliases"] = [alias]
            self.apply_overlay(prop, path, strict=strict)
            props[name] = finalize_prop(prop)
            if alias:
                aprop = {}
                if "description" in prop:
                    aprop["description"] = prop["description"]
                if "default" in prop:
                    aprop["default"] = prop["default"]
                aprop.update(type_schema)
                if co:
                    aprop["x-zerolint-coerces"] = co
                aprop["x-zerolint-alias-of"] = name
                self.apply_overlay(aprop, f"{section}.{alias}", strict=strict)
                props[alias] = finalize_prop(aprop)
        # curated extra properties of a model section (e.g. keys DeepSpeed rejects as removed)
        for key, node in self.C.MODEL_EXTRA_PROPERTIES.get(section, {}).items():
            p = self.resolve(node, f"{section}.{key}")
            if p is not None:
                props[key] = p
        out["properties"] = props
        if required:
            out["required"] = required
        if strict:
            out["additionalProperties"] = False
            out["x-zerolint-unknown"] = "rejected"
        else:
            out["x-zerolint-unknown"] = "ignored"
        out["x-zerolint-section"] = section
        src = class_source(cls)
        if src:
            out["x-zerolint-source"] = src
        out.update(api.marker)
        return out

    # -- curated overlays --------------------------------------------------------------------------
    def apply_overlay(self, prop: dict, path: str, strict: bool):
        ign = self.C.IGNORED.get(path)
        if ign and self.gate(ign):
            prop["x-zerolint-ignored"] = ign["why"]
        auto = self.C.AUTO_FILLED.get(path)
        if auto and self.gate(auto):
            if strict:
                note = ("Filled by the HF Trainer / Accelerate; raw DeepSpeed silently drops a literal \"auto\" "
                        "in this strict section, so the default applies.")
            else:
                note = "Filled by the HF Trainer / Accelerate; raw DeepSpeed " + auto["raw"]
            type_part = {k: prop.pop(k) for k in list(prop) if is_type_key(k)}
            ann = {k: prop.pop(k) for k in list(prop)}
            new = {k: ann.pop(k) for k in ("description", "default") if k in ann}
            new["anyOf"] = [type_part, {"const": "auto", "description": note}]
            new.update(ann)
            new["x-zerolint-auto-filled-by"] = list(auto["by"])
            prop.clear()
            prop.update(new)

    def resolve(self, node, path: str, prop: bool = True):
        """Curated node -> schema, honouring @-directives. Returns None when gated out. ``prop``: the node is
        the schema of the property at ``path`` (overlays apply), not a sub-schema of it."""
        if isinstance(node, list):
            return [self.resolve(n, path, False) for n in node]
        if not isinstance(node, dict):
            return node
        if not self.gate(node):
            return None
        if "@variants" in node:
            for variant in node["@variants"]:
                if self.gate(variant):
                    merged = {k: v for k, v in node.items() if k != "@variants"}
                    merged.update({k: v for k, v in variant.items() if k not in ("@since", "@until")})
                    return self.resolve(merged, path, prop)
            return None
        if "@removed" in node:
            rem = node["@removed"]
            if self.vt >= vtuple(rem["in"]):
                self.removed_seen.add(path)
                return {"description": f"Removed in DeepSpeed {rem['in']}: {rem['msg']}", "deprecated": True,
                        "x-zerolint-removed-in": rem["in"], "not": {}}
            node = {k: v for k, v in node.items() if k != "@removed"}
        if "@model" in node:
            cls = self.import_obj(node["@model"])
            ref = self.ref_for(cls, path)
            rest = {k: v for k, v in node.items() if not k.startswith("@")}
            out = {k: rest[k] for k in ("description", "default") if k in rest}
            out.update(ref)
            out.update({k: v for k, v in rest.items() if k not in out})
            return finalize_prop(out)
        out = {}
        for k, v in node.items():
            if k.startswith("@"):
                continue
            if k == "properties":
                props = {}
                for pk, pv in v.items():
                    r = self.resolve(pv, f"{path}.{pk}" if path else pk)
                    if r is not None:
                        props[pk] = r
                out[k] = props
            elif k in ("anyOf", "oneOf", "allOf", "prefixItems"):
                out[k] = [x for x in (self.resolve(i, path, False) for i in v) if x is not None]
            elif k in ("items", "additionalProperties", "not") and isinstance(v, dict):
                out[k] = self.resolve(v, path, False)
            else:
                out[k] = v
        section = node.get("@section")
        if section:
            out.setdefault("type", "object")
            out.setdefault("properties", {})
            out["x-zerolint-unknown"] = {"lax": "ignored", "init": "rejected_at_init"}[section]
            out["x-zerolint-section"] = path
        if "@read_by" in node:  # a dict handed on whole: the keys its readers take from it (scripts/code_reads.py)
            import deepspeed
            from code_reads import code_reads
            reads = code_reads(Path(deepspeed.__file__).resolve().parent, node["@read_by"]["files"],
                               node["@read_by"].get("constants", []))
            out["x-zerolint-code-reads"] = {k: v for k, v in reads.items() if k not in out.get("properties", {})}
        if prop:
            self.apply_overlay(out, path, strict=False)
        return out


def build_schema(line: str) -> dict:
    import deepspeed  # noqa: F401  (the one under test)
    import pydantic
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import schema_curated as C

    ds_dir = Path(deepspeed.__file__).resolve().parent
    version_txt = ds_dir.parent / "version.txt"
    full = version_txt.read_text().strip() if version_txt.exists() else deepspeed.__version__.strip()
    full = re.match(r"\d+\.\d+\.\d+", full).group(0)
    if full != LINES[line]:
        raise SystemExit(f"gen_schema: the {line} line must be generated from DeepSpeed {LINES[line]}, "
                         f"but {ds_dir} is {full}")
    b = Builder(line, full, C)
    props = {}
    for key, node in C.TOP_LEVEL.items():
        p = b.resolve(node, key)
        if p is not None:
            props[key] = p
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://zerolint.dev/schemas/deepspeed-{line}.json",
        "title": f"DeepSpeed {line} configuration (ds_config.json)",
        "description": (f"Keys that DeepSpeed {full} reads from its JSON config (the dict given to "
                        "deepspeed.initialize / DeepSpeedConfig). Generated by zerolint's "
                        f"{GENERATOR} from DeepSpeed {full}'s own pydantic models plus a curated part for the "
                        "top level and the plain-dict sections. Unknown top-level keys are silently ignored by "
                        "DeepSpeed (x-zerolint-unknown: ignored), so this schema does not reject them; strict "
                        "sections (additionalProperties: false) are rejected by DeepSpeed at parse time."),
        "x-zerolint": {"deepspeed_version": full, "generator": GENERATOR, "pydantic": pydantic.VERSION},
        "type": "object",
        "properties": props,
        "x-zerolint-unknown": "ignored",
        "$defs": {k: b.defs[k] for k in sorted(b.defs)},
    }
    # every key DeepSpeed itself rejects as removed must have a removed stub in the curated part
    import deepspeed.runtime.config as ds_config
    ds_removed = set(getattr(ds_config, "_REMOVED_TOP_LEVEL_CONFIG_KEYS", {}))
    ds_removed |= {f"zero_optimization.{k}" for k in getattr(ds_config, "_REMOVED_ZERO_CONFIG_KEYS", {})}
    missing = ds_removed - b.removed_seen
    extra = b.removed_seen - ds_removed
    if missing or extra:
        raise SystemExit(f"gen_schema: curated removed keys disagree with DeepSpeed {full}: "
                         f"missing {sorted(missing)}, not removed in DeepSpeed {sorted(extra)}")
    return schema


if __name__ == "__main__":
    sys.exit(main())
