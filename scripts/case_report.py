"""Print what each example case of a rule produces (to help write `expect`; review it before pasting!).

    python scripts/case_report.py ZL101 [ZL102 ...]
"""

from __future__ import annotations

import sys

from zerolint.model.document import parse
from zerolint.rules.cases import load_cases
from zerolint.rules.engine import Selection, run_rules
from zerolint.rules.ruleset import RuleSet


def main(codes: list[str]) -> None:
    for code in codes:
        rule = RuleSet.builtin().find(code)
        if rule is None:
            sys.exit(f"no rule {code}")
        for case in load_cases(rule.code):
            doc = parse(case.config, "ds_config.json")
            diags = [d for d in run_rules(doc, case.settings, Selection(select=[rule.code]))]
            print(f"# {rule.code} {case.kind}: {case.name}")
            for d in diags:
                print(f'  {{ severity = "{d.severity.value}", pointer = "{d.pointer}", line = {d.line}, '
                      f"column = {d.column} }},  # {d.code} {d.message}")
            if not diags:
                print("  (nothing)")


if __name__ == "__main__":
    main(sys.argv[1:])
