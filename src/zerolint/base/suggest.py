"""Did-you-mean for keys and values."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

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
    """Damerau-Levenshtein (optimal string alignment) distance, bit-parallel (Hyyrö 2003, as in rapidfuzz): one
    pass over `b` with a few integer operations per character, instead of a Python loop over every cell of the
    len(a) x len(b) table (100,000 misspelled keys took minutes). With `bound`, a distance above it is returned as
    bound + 1."""
    if a == b:
        return 0
    if bound is not None and abs(len(a) - len(b)) > bound:
        return bound + 1
    d = _osa(a, b) if a else len(b)
    return d if bound is None or d <= bound else bound + 1


def _osa(a: str, b: str) -> int:
    masks: dict[str, int] = {}  # character -> bit set of its positions in a
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << len(a)) - 1
    last = 1 << (len(a) - 1)
    vp, vn, d0, pm_prev, dist = full, 0, 0, 0, len(a)
    for ch in b:
        pm = masks.get(ch, 0)
        tr = (((~d0) & pm) << 1) & pm_prev  # a transposition of this character and the previous one
        d0 = ((((pm & vp) + vp) ^ vp) | pm | vn | tr) & full
        hp = (vn | ~(d0 | vp)) & full
        hn = d0 & vp
        dist += (hp & last != 0) - (hn & last != 0)
        hp = ((hp << 1) | 1) & full
        hn = (hn << 1) & full
        vp = (hn | ~(d0 | hp)) & full
        vn = hp & d0
        pm_prev = pm
    return dist


def closest(word: str, candidates: Iterable[str], max_distance: int | None = None) -> str | None:
    """The closest candidate to `word`, or None when nothing is plausibly what was meant."""
    from difflib import SequenceMatcher  # (imported here: most runs never need a suggestion)

    prepared = _prepared(tuple(candidates))
    w = _normal(word)
    lw = len(w)
    wbag = prepared.unary(w)
    # Cheap bounds first, so that configs with 10^6 unknown keys stay fast: a candidate is skipped only when it
    # provably fails every test below. The distance is at least the length difference and at least
    # max(len) - (characters in common); difflib's ratio is at most 2 * min(len) / total and at most
    # 2 * common / total (its real_quick_ratio and quick_ratio). First for all candidates at once: a word sharing
    # too few characters with every candidate (most unknown keys) costs no loop.
    if (wbag & prepared.union).bit_count() < prepared.fewest_common(lw, max_distance):
        return None
    best, best_score = None, 0.0
    for cand, c, lc, cbag in prepared.entries:
        if c == w:
            return cand
        limit = max_distance if max_distance is not None else max(1, min(3, lc // 4))
        if abs(lc - lw) > limit and 2.0 * min(lc, lw) / (lc + lw) < 0.7:
            continue  # (0.7: the lowest `need` below, so this skips only what that test would skip)
        prefix = lw >= 6 and (c.startswith(w) or w.startswith(c))
        need = 0.7 if prefix else 0.85  # the smallest ratio that could be accepted without the distance test
        if abs(lc - lw) > limit and 2.0 * min(lc, lw) / (lc + lw) < need:
            continue
        common = (wbag & cbag).bit_count()
        if 2.0 * common / (lw + lc) < need:  # only the distance test can pass
            if max(lw, lc) - common > limit:
                continue
            d = distance(w, c, bound=limit)  # exact when <= limit, else limit + 1
            if d > limit:
                continue
        else:
            d = distance(w, c)
        ratio = SequenceMatcher(None, w, c).ratio()
        if d <= limit or ratio >= 0.85 or (prefix and ratio > 0.7):
            score = ratio - d * 0.01
            if score > best_score:
                best, best_score = cand, score
    return best


class _Prepared:
    """Candidates normalised once, with their character counts as unary bit lanes: one lane of `width` bits per
    slot, holding as many 1 bits as the slot's count. `(a & b).bit_count()` is then the number of characters two
    strings have in common (the sum over slots of the smaller count), in one integer operation."""

    def __init__(self, candidates: tuple[str, ...]) -> None:
        normal = [_normal(cand) for cand in candidates]
        self.width = max([1] + [n for c in normal for n in _bag(c)])
        self.entries = [(cand, c, len(c), self.unary(c)) for cand, c in zip(candidates, normal)]
        self.union = 0  # every slot's largest count: an upper bound of `common` for every candidate at once
        for *_, bag in self.entries:
            self.union |= bag
        self._fewest: dict[tuple[int, int | None], float] = {}

    def unary(self, s: str) -> int:
        out = 0
        for slot, n in enumerate(_bag(s)):
            if n:  # capped at the width: no candidate has more, so min(count, candidate's count) is unchanged
                out |= ((1 << min(n, self.width)) - 1) << (slot * self.width)
        return out

    def fewest_common(self, lw: int, max_distance: int | None) -> float:
        """The fewest characters in common with which a word of length lw could pass closest's tests for some
        candidate (infinity: none can)."""
        key = (lw, max_distance)
        if key not in self._fewest:
            fewest = float("inf")
            for lc in sorted({e[2] for e in self.entries}):
                limit = max_distance if max_distance is not None else max(1, min(3, lc // 4))
                if abs(lc - lw) > limit and 2.0 * min(lc, lw) / (lc + lw) < 0.7:
                    continue
                by_ratio = max(0, int(0.35 * (lw + lc)) - 1)  # then up to the exact float test's first pass
                while 2.0 * by_ratio / (lw + lc) < 0.7:
                    by_ratio += 1
                fewest = min(fewest, by_ratio, max(0, max(lw, lc) - limit))
            self._fewest[key] = fewest
        return self._fewest[key]


@lru_cache(maxsize=256)
def _prepared(candidates: tuple[str, ...]) -> _Prepared:
    return _Prepared(candidates)


def edit_distance(word: str, cand: str) -> int:
    return distance(_normal(word), _normal(cand))
