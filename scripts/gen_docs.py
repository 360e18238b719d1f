"""Generate docs/rules/<CODE>.md and docs/rules/README.md from rule metadata and example cases, and the rule
table in README.md (between the `rules:begin` / `rules:end` markers).

    python scripts/gen_docs.py          # write
    python scripts/gen_docs.py --check  # exit 1 if anything is stale (tests/test_docs.py runs this)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from zerolint.rules.docs import render_index, render_rule
from zerolint.rules.ruleset import RuleSet

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "rules"
BEGIN, END = "<!-- rules:begin -->", "<!-- rules:end -->"


def readme_table() -> str:
    rows = ["| code | name | severity | summary |", "| --- | --- | --- | --- |"]
    for r in RuleSet.builtin().rules:
        rows.append(f"| [{r.code}](docs/rules/{r.code}.md) | `{r.name}` | {r.severity} | {r.summary} |")
    return "\n".join(rows)


def expected() -> dict[Path, str]:
    out = {DOCS / f"{r.code}.md": render_rule(r) for r in RuleSet.builtin().rules}
    out[DOCS / "README.md"] = render_index()
    readme = ROOT / "README.md"
    text = readme.read_text("utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        out[readme] = f"{head}{BEGIN}\n{readme_table()}\n{END}{tail}"
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    stale = []
    want = expected()
    for path, text in want.items():
        current = path.read_text("utf-8") if path.exists() else None
        if current != text:
            stale.append(path)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, "utf-8")
    extra = [p for p in DOCS.glob("ZL*.md") if p not in want]
    for p in extra:
        stale.append(p)
        if not args.check:
            p.unlink()
    if args.check and stale:
        print("stale generated docs (run python scripts/gen_docs.py):", *[str(p.relative_to(ROOT)) for p in stale],
              sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
