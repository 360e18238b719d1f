"""Generated docs must match the rules (run `python scripts/gen_docs.py` after changing a rule or its cases)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_generated_docs_are_fresh():
    r = subprocess.run([sys.executable, "scripts/gen_docs.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_diagnostic_url_points_at_its_page():
    from zerolint.rules.ruleset import RuleSet

    for rule in RuleSet.builtin().rules:
        assert rule.url.endswith(f"docs/rules/{rule.code}.md")
        assert (ROOT / "docs" / "rules" / f"{rule.code}.md").exists()
