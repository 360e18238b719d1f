"""Did-you-mean for keys and values."""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable


_SLOT = {ch: i for i, ch in enumerate("abcdefghijklmnopqrstuvwxyz0123456789_")}  # any other character: slot 37


@lru_cache(maxsize=4096)
def _bag(s: str) -> tuple[int, ...]:
    """Character counts by slot. Characters outside the slots share one, so `common` below can only overcount:
    the bounds built on it stay safe."""
    counts = [0] * 38
    for ch in s:
        counts[_SLOT.get(ch, 37)] += 1
    return tuple(counts)


@lru_cache(maxsize=4096)
def _normal(s: str) -> str:
    # British spellings and separators are the usual slips: zero_optimisation, offload-optimizer, ZeroOptimization.
    s = s.lower().replace("-", "_").replace(" ", "_")
    return s.replace("optimis", "optimiz").replace("optimiser", "optimizer")


def distance(a: str, b: str, bound: int | None = None) -> int:
    """Damerau-Levenshtein (optimal string alignment) distance. With `bound`, stops early and returns bound + 1 as
    soon as the distance is known to exceed `bound` (two consecutive rows above it)."""
    if a == b:
        return 0
    if bound is not None and abs(len(a) - len(b)) > bound:
        return bound + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if bound is not None and min(cur) > bound and min(prev) > bound:
            return bound + 1
        prev2, prev = prev, cur
    return prev[-1]


def closest(word: str, candidates: Iterable[str], max_distance: int | None = None) -> str | None:
    """The closest candidate to `word`, or None when nothing is plausibly what was meant."""
    from difflib import SequenceMatcher  # (imported here: most runs never need a suggestion)

    w = _normal(word)
    lw = len(w)
    best, best_score = None, 0.0
    wbag = _bag(w)
    # Cheap bounds first, so that configs with thousands of unknown keys stay fast: a candidate is skipped only when
    # it provably fails every test below. The distance is at least the length difference and at least
    # max(len) - (characters in common); difflib's ratio is at most 2 * min(len) / total and at most
    # 2 * common / total (its real_quick_ratio and quick_ratio).
    for cand, c, lc, cbag in _prepared(tuple(candidates)):
        if c == w:
            return cand
        limit = max_distance if max_distance is not None else max(1, min(3, lc // 4))
        prefix = lw >= 6 and (c.startswith(w) or w.startswith(c))
        need = 0.7 if prefix else 0.85  # the smallest ratio that could be accepted without the distance test
        if abs(lc - lw) > limit and 2.0 * min(lc, lw) / (lc + lw) < need:
            continue
        common = sum(map(min, wbag, cbag))
        if 2.0 * common / (lw + lc) < need:  # only the distance test can pass
            if max(lw, lc) - common > limit:
                continue
            d = distance(w, c, bound=limit)  # exact when <= limit, else limit + 1
            if d > limit:
                continue
        else:
            d = distance(w, c, bound=limit)
        ratio = SequenceMatcher(None, w, c).ratio()
        if d > limit and (ratio >= 0.85 or (prefix and ratio > 0.7)):
            d = distance(w, c)
        if d <= limit or ratio >= 0.85 or (prefix and ratio > 0.7):
            score = ratio - d * 0.01
            if score > best_score:
                best, best_score = cand, score
    return best


@lru_cache(maxsize=256)
def _prepared(candidates: tuple[str, ...]) -> list[tuple[str, str, int, tuple[int, ...]]]:
    out = []
    for cand in candidates:
        c = _normal(cand)
        out.append((cand, c, len(c), _bag(c)))
    return out


def edit_distance(word: str, cand: str) -> int:
    return distance(_normal(word), _normal(cand))
