"""Edit distance between two commands or names: the measure behind "a small change".

`levenshtein` is bit-parallel (Myers/Hyyrö): one big-int step per character, faster on the
≤ 1,000-character commands the hook compares than importing rapidfuzz. `edit_ratio` is the
distance over the longer length; `within_ratio` answers "ratio <= limit" and skips the work
when the lengths alone decide; `indel_ratio` is rapidfuzz's `fuzz.ratio` / 100 (the longest
common subsequence, bit-parallel too), for a hook that compares a few texts. Stdlib only (hot
path).
"""

from __future__ import annotations

__all__ = ["levenshtein", "edit_ratio", "within_ratio", "indel_ratio", "RETRY_RATIO"]

RETRY_RATIO = 0.40  # SPEC §2.4: normalised edit distance of a retry



def levenshtein(a: str, b: str) -> int:
    """Levenshtein distance, bit-parallel (Myers/Hyyrö): one big-int step per char."""
    if a == b:
        return 0
    # Common prefix and suffix cost nothing and are the bulk of a retry.
    start = 0
    limit = min(len(a), len(b))
    while start < limit and a[start] == b[start]:
        start += 1
    a, b = a[start:], b[start:]
    end = 0
    limit = min(len(a), len(b))
    while end < limit and a[-1 - end] == b[-1 - end]:
        end += 1
    if end:
        a, b = a[:-end], b[:-end]
    if len(a) < len(b):
        a, b = b, a
    m = len(b)
    if m == 0:
        return len(a)
    peq: dict[str, int] = {}
    for i, ch in enumerate(b):
        peq[ch] = peq.get(ch, 0) | (1 << i)
    full = (1 << m) - 1
    top = 1 << (m - 1)
    pv, mv, score = full, 0, m
    for ch in a:
        eq = peq.get(ch, 0)
        xv = eq | mv
        xh = ((((eq & pv) + pv) & full) ^ pv) | eq
        ph = mv | (~(xh | pv) & full)
        mh = pv & xh
        if ph & top:
            score += 1
        elif mh & top:
            score -= 1
        ph = ((ph << 1) | 1) & full
        mh = (mh << 1) & full
        pv = mh | (~(xv | ph) & full)
        mv = ph & xv
    return score


def edit_ratio(a: str, b: str) -> float:
    """Levenshtein distance divided by the longer length (0.0 identical, 1.0 disjoint)."""
    longest = max(len(a), len(b))
    return levenshtein(a, b) / longest if longest else 0.0


def within_ratio(a: str, b: str, limit: float = RETRY_RATIO) -> bool:
    """edit_ratio(a, b) <= limit, with a free exit when the lengths alone exceed it."""
    longest = max(len(a), len(b))
    if not longest:
        return True
    if abs(len(a) - len(b)) > limit * longest:
        return False
    return levenshtein(a, b) <= limit * longest


def indel_ratio(a: str, b: str) -> float:
    """2 x the longest common subsequence / (len(a) + len(b)), computed as rapidfuzz's
    `fuzz.ratio(a, b) / 100` is (1 - Indel distance / total length), so the two agree to the
    last bit: rapidfuzz costs a hook ~13 ms to import for one or two comparisons."""
    total = len(a) + len(b)
    if not total:
        return 1.0
    lcs = _lcs_length(a, b) if len(a) <= len(b) else _lcs_length(b, a)
    return (1.0 - (total - 2 * lcs) / total) * 100 / 100.0


def _lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence (Hyyrö's bit-vector algorithm: one big-int
    step per character of `b`, over a bit per character of `a`)."""
    if not a:
        return 0
    masks: dict[str, int] = {}
    for i, char in enumerate(a):
        masks[char] = masks.get(char, 0) | (1 << i)
    full = (1 << len(a)) - 1
    row = full
    for char in b:
        matches = row & masks.get(char, 0)
        row = ((row + matches) | (row - matches)) & full
    return len(a) - bin(row).count("1")
