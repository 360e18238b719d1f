"""Fixing: the fix loop (safe / unsafe fixes, re-lint, verification) and `zerolint upgrade`."""
