"""Did-you-mean for keys and values."""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Iterable


def _normal(s: str) -> str:
    # British spellings and separators are the usual slips: zero_optimisation, offload-optimizer, ZeroOptimization.
    s = s.lower().replace("-", "_").replace(" ", "_")
    return s.replace("optimis", "optimiz").replace("optimiser", "optimizer")


def distance(a: str, b: str) -> int:
    """Damerau-Levenshtein (optimal string alignment) distance."""
    if a == b:
        return 0
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def closest(word: str, candidates: Iterable[str], max_distance: int | None = None) -> str | None:
    """The closest candidate to `word`, or None when nothing is plausibly what was meant."""
    w = _normal(word)
    best, best_score = None, 0.0
    for cand in candidates:
        c = _normal(cand)
        if c == w:
            return cand
        d = distance(w, c)
        limit = max_distance if max_distance is not None else max(1, min(3, len(c) // 4))
        ratio = SequenceMatcher(None, w, c).ratio()
        if d <= limit or ratio >= 0.85 or (len(w) >= 6 and (c.startswith(w) or w.startswith(c)) and ratio > 0.7):
            score = ratio - d * 0.01
            if score > best_score:
                best, best_score = cand, score
    return best


def edit_distance(word: str, cand: str) -> int:
    return distance(_normal(word), _normal(cand))
