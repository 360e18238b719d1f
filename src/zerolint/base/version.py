"""zerolint's version, in the bottom layer so that every layer can print it."""

__version__ = "0.2.0"
