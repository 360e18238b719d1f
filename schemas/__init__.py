"""Generated DeepSpeed config schemas (package data)."""
