"""A project's settings: [tool.zerolint] found upward, suppressions and the baseline, user policy rules."""
