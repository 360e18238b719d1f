"""zerolint's built-in rules, one module each (`zlNNN_short_name.py`): every module in this package is a rule.

`RuleSet.builtin()` (rules/ruleset.py) lists the package; nothing else knows the rules by name.
"""
