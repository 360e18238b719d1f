"""Data types (DeepSpeed's DtypeEnum) and how sizes are shown."""

from __future__ import annotations

# -- data types ---------------------------------------------------------------------------------------------------

# DtypeEnum (runtime/config.py:144-149): every accepted spelling -> canonical name. Exact (case-sensitive).
DTYPE_ALIASES = {
    "torch.float16": "fp16", "fp16": "fp16", "float16": "fp16", "half": "fp16",
    "torch.float32": "fp32", "fp32": "fp32", "float32": "fp32", "float": "fp32",
    "torch.int8": "int8", "int8": "int8",
    "torch.bfloat16": "bf16", "bf16": "bf16", "bfloat16": "bf16",
}


def canonical_dtype(name: object) -> str | None:
    """DtypeEnum's canonical name for a spelling ('bfloat16' -> 'bf16'), None when DtypeEnum rejects it."""
    return DTYPE_ALIASES.get(name) if isinstance(name, str) else None


# DtypeEnum spellings -> canonical name, as a dict (used by View.grad_accum_dtype).
DTYPE_NAMES = DTYPE_ALIASES

# Bytes per element of each canonical dtype.
DTYPE_BYTES: dict[str, int] = {"fp16": 2, "bf16": 2, "fp32": 4, "int8": 1}


def human_bytes(n: float) -> str:
    """1e9 -> '1.0 GB' (decimal units, as DeepSpeed's own memory estimators print)."""
    if n != n or abs(n) >= 1e300:  # NaN, or an int beyond float range (it cannot be divided into a float)
        return f"{n:.3g} bytes" if isinstance(n, float) else f"about 1e{len(str(abs(n))) - 1} bytes"
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


def elements(n: int | float) -> str:
    """5e8 -> '5e8', 123456789 -> '123456789': how a bucket size is usually written."""
    if n != n or n in (float("inf"), float("-inf")):
        return str(n)
    n = int(n)
    if 10**6 <= n < 10**300:  # (a bigger int does not fit a float)
        mant, exp = f"{n:.0e}".split("e")
        if float(f"{mant}e{exp}") == n:
            return f"{mant}e{int(exp)}"
    return str(n)
