#!/usr/bin/env bash
# Build the browser playground (docs/playground.md) into OUT_DIR: a static site that loads nothing from
# anywhere else. Needs node/npm and a Python with pip (PYTHON, default python3); the network only for npm ci
# (playground/package-lock.json) and pip (the build backend, the hjson wheel).
#
#   scripts/build_playground.sh OUT_DIR
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG="$ROOT/playground"
PYTHON=${PYTHON:-python3}
HJSON_VERSION=3.1.0  # DeepSpeed's config reader, the only dependency the lint path imports

mkdir -p "$1"
OUT=$(cd "$1" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# npm ci only when the lock file changed since the last install: a rebuild stays offline and fast.
if ! cmp -s "$PG/package-lock.json" "$PG/node_modules/.zerolint-lock" 2>/dev/null; then
    (cd "$PG" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp "$PG/package-lock.json" "$PG/node_modules/.zerolint-lock"
fi

rm -rf "$OUT/pyodide" "$OUT/wheels" "$OUT/py"
mkdir -p "$OUT/pyodide" "$OUT/wheels" "$OUT/py"

# The wheels Pyodide unpacks: zerolint from this tree and hjson. zerolint is built from a copy in the temp dir,
# so the build writes nothing (build/, *.egg-info) into the tree that others work in.
mkdir -p "$TMP/src"
cp -R "$ROOT/pyproject.toml" "$ROOT/README.md" "$ROOT/LICENSE" "$ROOT/src" "$TMP/src/"
find "$TMP/src" \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +
"$PYTHON" -m pip wheel --quiet --no-deps --disable-pip-version-check "$TMP/src" -w "$TMP/wheels"
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --disable-pip-version-check \
    "hjson==$HJSON_VERSION" -d "$TMP/wheels"
cp "$TMP"/wheels/zerolint-*.whl "$TMP"/wheels/hjson-*.whl "$OUT/wheels/"

# Pyodide: the runtime, its standard library and lock file, from the npm package.
for f in pyodide.js pyodide.asm.js pyodide.asm.wasm python_stdlib.zip pyodide-lock.json; do
    cp "$PG/node_modules/pyodide/$f" "$OUT/pyodide/"
done

"$PG/node_modules/.bin/esbuild" "$PG/src/main.js" --bundle --minify --format=iife --target=es2022 \
    --legal-comments=linked --log-level=warning --metafile="$TMP/meta.json" --outfile="$OUT/app.js"
cp "$PG/src/index.html" "$PG/src/style.css" "$OUT/"
cp "$PG/py/zerolint_playground.py" "$OUT/py/"

# build.json: the wheels to unpack and the examples (fixtures/examples/seed), read by the page at start.
# THIRD-PARTY.txt: the licenses of the npm packages esbuild put into app.js (its metafile lists them) and Pyodide's.
"$PYTHON" - "$ROOT/fixtures/examples/seed" "$OUT" "$PG" "$TMP/meta.json" <<'PY'
import json, pathlib, sys
seed, out, pg, meta = (pathlib.Path(a) for a in sys.argv[1:5])
packages = set()
for name in json.loads(meta.read_text())["inputs"]:
    parts = pathlib.PurePosixPath(name).parts
    if "node_modules" in parts:
        at = parts.index("node_modules") + 1
        packages.add("/".join(parts[at:at + (2 if parts[at].startswith("@") else 1)]))
notices = []
for package in sorted(packages | {"pyodide"}):
    root = pg / "node_modules" / package
    info = json.loads((root / "package.json").read_text())
    head = f"{info['name']} {info['version']} ({info.get('license', 'see its repository')})"
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.glob("LICEN[CS]E*"))]
    notices.append("\n".join([head, "=" * len(head), *texts]))
(out / "THIRD-PARTY.txt").write_text("\n\n".join(notices) + "\n", encoding="utf-8")
examples = {p.name: p.read_text(encoding="utf-8") for p in sorted(seed.glob("*.json"))}
wheels = sorted(p.name for p in (out / "wheels").glob("*.whl"))
build = {"default_example": "ds_offload_broken.json", "examples": examples, "wheels": wheels}
(out / "build.json").write_text(json.dumps(build, indent=1) + "\n", encoding="utf-8")
PY
touch "$OUT/.nojekyll"  # GitHub Pages: serve the files as they are
echo "playground built in $OUT ($(du -sh "$OUT" | cut -f1))"
