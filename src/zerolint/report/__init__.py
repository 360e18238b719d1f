"""Reporters turn diagnostics into text for people and machines. They never change diagnostics."""

FORMATS = ("text", "json", "sarif", "github", "junit")
