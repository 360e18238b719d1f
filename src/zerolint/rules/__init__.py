"""zerolint's built-in rules, one module each (installed as the package `zerolint.rules`)."""
