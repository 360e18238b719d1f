"""The document and what each consumer makes of it: parse, diagnostics, versions, schema, facts, the View."""
