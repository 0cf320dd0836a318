"""One learning seen twice becomes one record (SPEC §2.2).

`merge` folds two copies of the same learning; `similarity` and `near_duplicates` find
learnings whose text says the same thing (used by `learn prune` and `learn import`, not on
the hot path). Stdlib only; difflib is imported when first needed.
"""

from __future__ import annotations

import math

from learn_cli.engine.scoring import frequency_of, impact_of, parse_time
from learn_cli.store.record import fix_text  # (here, too: the engine's name for it)
from learn_cli.text.sanitize import normalize_text, word_re  # (here, too; word_re: normalize_text's words)

TEXT_FIELDS = ("context", "error", "fix")
# Strongest first. `conflicted` is sticky: a merge never silently clears a conflict the
# user has to resolve. `archived` is the weakest: a fresh sighting revives a learning.
_STATUS_RANK = {"global": 4, "active": 3, "pending": 2, "archived": 0}
_UNKNOWN_STATUS_RANK = 1
_TRUNCATION_MARKS = ("…", "...", "characters truncated]", "[truncated]")


# ---------------------------------------------------------------- merge


def merge(into: dict, other: dict) -> dict:
    """A new record holding both copies of one learning; `into` keeps its id and wins clashes.

    frequency summed · projects, tags, conflict_with unioned in order · impact max ·
    created min · last_used and updated max · helped / not_helped summed · evidence unioned
    by (session, event) · better text per field (non-empty, not truncated, then longer) ·
    status the stronger (conflicted > global > active > pending > unknown > archived) ·
    low_since kept only when both were low (the later one) · any other field: `into`'s
    value unless it is empty.
    """
    result = dict(other)
    result.update({k: v for k, v in into.items() if not _is_empty(v) or k not in other})
    result["frequency"] = frequency_of(into) + frequency_of(other)
    result["impact"] = max(impact_of(into), impact_of(other))
    for field in ("projects", "tags", "conflict_with"):
        merged = _union(_as_list(into.get(field)), _as_list(other.get(field)), _plain_key)
        if merged or field in result:
            result[field] = merged
    evidence = _union(_as_list(into.get("evidence")), _as_list(other.get("evidence")), _evidence_key)
    if evidence or "evidence" in result:
        result["evidence"] = evidence
    for field in ("helped", "not_helped"):
        if field in into or field in other:
            result[field] = _count(into.get(field)) + _count(other.get(field))
    _pick_time(result, "created", into, other, min)
    _pick_time(result, "last_used", into, other, max)
    _pick_time(result, "updated", into, other, max)
    _merge_low_since(result, into, other)
    for field in TEXT_FIELDS:
        text = better_text(into.get(field), other.get(field))
        if text is not None:
            result[field] = text
    if result.get("key_from_text") is not None and (result.get("key_from_text") != into.get("key_from_text")
                                                    or result.get("error") != into.get("error")):
        del result["key_from_text"]  # not what `into`'s text gave: a baseline again (engine.rekey)
    result["status"] = _stronger_status(into.get("status"), other.get("status"))
    if "schema" in into or "schema" in other:
        result["schema"] = max(_count(into.get("schema")), _count(other.get("schema"))) or 1
    return {k: _fresh(v) for k, v in result.items()}  # nothing nested is shared with the inputs


def _fresh(value):
    """A copy of a JSON value's containers (scalars are immutable). A record is plain JSON, so
    this is all `copy.deepcopy` did, at a tenth of its cost: an import of 100,000 entries merges
    ~1 M times (issue 14 counted 1.9 M deepcopy calls in one)."""
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    return value


def better_text(a, b):
    """The better of two texts: non-empty, then not truncated, then longer; ties keep a."""
    a_ok, b_ok = isinstance(a, str) and a.strip(), isinstance(b, str) and b.strip()
    if not a_ok or not b_ok:
        return a if a_ok else (b if b_ok else a)
    a_cut, b_cut = _looks_truncated(a), _looks_truncated(b)
    if a_cut != b_cut:
        return b if a_cut else a
    return b if len(b.strip()) > len(a.strip()) else a


def _looks_truncated(text: str) -> bool:
    tail = text.rstrip()
    return tail.endswith(_TRUNCATION_MARKS[:2]) or any(m in text for m in _TRUNCATION_MARKS[2:])


def _stronger_status(a, b) -> str:
    if "conflicted" in (a, b):
        return "conflicted"
    a = a if isinstance(a, str) and a else "active"
    b = b if isinstance(b, str) and b else "active"
    rank = _STATUS_RANK.get
    return b if rank(b, _UNKNOWN_STATUS_RANK) > rank(a, _UNKNOWN_STATUS_RANK) else a


def _pick_time(result: dict, field: str, into: dict, other: dict, choose) -> None:
    candidates = [(t, v) for v in (into.get(field), other.get(field)) if (t := parse_time(v))]
    if candidates:
        result[field] = choose(candidates, key=lambda pair: pair[0])[1]


def _merge_low_since(result: dict, into: dict, other: dict) -> None:
    # The archive clock runs only while a learning is low; if either copy was healthy the
    # merged learning is not known to have been low all along (the caller re-scores it).
    a, b = parse_time(into.get("low_since")), parse_time(other.get("low_since"))
    if a and b:
        result["low_since"] = into["low_since"] if a >= b else other["low_since"]
    else:
        result.pop("low_since", None)


def _is_empty(value) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _as_list(value) -> list:
    if isinstance(value, list):
        return value
    if value is None or value == "":
        return []
    return [value]


def _union(first: list, second: list, key) -> list:
    seen, out = set(), []
    for item in (*first, *second):
        marker = key(item)
        if marker not in seen:
            seen.add(marker)
            out.append(item)
    return out


def _plain_key(item):
    return item.casefold() if isinstance(item, str) else repr(item)


def _evidence_key(item):
    if isinstance(item, dict) and (item.get("session") or item.get("event")):
        return ("sighting", str(item.get("session")), str(item.get("event")))
    if isinstance(item, dict):
        return ("other", repr(sorted(item.items(), key=lambda kv: str(kv[0]))))
    return ("other", repr(item))


def _count(value) -> int:
    if isinstance(value, bool):
        return 0
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0
    return 0 if math.isnan(number) or number < 0 else int(min(number, 1e12))


# ---------------------------------------------------------------- similarity


# difflib is quadratic in the worst case; the head of a learning says what it is about.
_RATIO_CHARS = 400


def text_similarity(a, b) -> float:
    """Mean of token Jaccard and difflib's character ratio over normalised text, in [0, 1]."""
    na, nb = normalize_text(a), normalize_text(b)
    if not na or not nb:  # no words at all: only identical non-blank text counts as alike
        same = isinstance(a, str) and isinstance(b, str) and a.strip() == b.strip() != ""
        return 1.0 if same else 0.0
    if na == nb:
        return 1.0
    return (_jaccard(set(na.split()), set(nb.split())) + _char_ratio(na, nb)) / 2


def _jaccard(x: set, y: set) -> float:
    union = len(x | y)
    return len(x & y) / union if union else 0.0


def _char_ratio(a: str, b: str) -> float:
    """Character similarity (2·matches / total, as difflib's ratio) — rapidfuzz computes it
    ~100× faster than SequenceMatcher, which dominated `learn prune` at 100,000 learnings. A
    hook (store.deadline set) compares one or two texts: the same figure from
    `engine.distance.indel_ratio`, without rapidfuzz's ~13 ms import."""
    from learn_cli.store import deadline

    if deadline.active():
        from learn_cli.engine.distance import indel_ratio

        return indel_ratio(a[:_RATIO_CHARS], b[:_RATIO_CHARS])
    try:
        from rapidfuzz.fuzz import ratio
    except ImportError:  # pragma: no cover - rapidfuzz is a dependency; keep working without it
        from learn_cli.engine.distance import indel_ratio as ratio

        return ratio(a[:_RATIO_CHARS], b[:_RATIO_CHARS])
    return ratio(a[:_RATIO_CHARS], b[:_RATIO_CHARS]) / 100.0


def problem_text(rec: dict) -> str:
    """What the learning is about: its error, else its context."""
    for field in ("error", "context", "command"):
        value = rec.get(field)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def similarity(a, b) -> float:
    """How alike two learnings (records) or two texts are, in [0, 1].

    For records: the lower of the problem similarity (error, else context) and the fix
    similarity, so the same error with a different fix is *not* a near-duplicate (that is
    a conflict or a refinement, see engine.conflicts). A part present on one side only
    counts as 0.
    """
    if not isinstance(a, dict) or not isinstance(b, dict):
        return text_similarity(a, b)
    parts = []
    for part in (problem_text, fix_text):
        pa, pb = part(a), part(b)
        if pa or pb:
            parts.append(text_similarity(pa, pb))
    return min(parts) if parts else 0.0


similar = similarity  # ARCHITECTURE's name


def near_duplicates(records: list[dict], threshold: float = 0.85,
                    around: list[dict] | None = None) -> list[list[dict]]:
    """Groups (≥ 2 records each) of learnings whose similarity() ≥ threshold and whose words
    differ only by additions (a word swapped for another is another learning: _substitutes).

    Leader clustering in input order (pass records best first to make the best one the
    leader): each record joins the first earlier leader it is similar to, else leads a new
    group, so there is no chaining: every member is similar to its leader. Leaders are only compared when they
    share (type, category, which parts are present) and a prefix-filter token: since
    similarity ≥ t needs token Jaccard ≥ 2t − 1 on the problem part (the char ratio is at
    most 1), two such texts must share a token among the first |x| − ⌈(2t−1)|x|⌉ + 1 of
    their tokens ordered rarest first (Bayardo et al., "Scaling up all pairs similarity
    search"), so the filter loses no pair. Exact duplicates are folded by a dict first.

    Cost: O(n · p) to index plus one check per candidate pair that shares a rare token;
    near-linear for real stores (10,000 records in well under a second), O(n²) only when
    thousands of different records share their rarest tokens.

    `around`: only the groups that may hold one of these records are formed (a bucket is
    clustered on its own, so the groups of a bucket with one of them are the same): the
    records of another type or category are not even read (an import asks about its entries
    among a project's records).
    """
    jaccard_floor = max(0.0, 2 * threshold - 1)
    buckets: dict[tuple, list[_Words]] = {}
    words_of = word_re().findall  # normalize_text's words, kept: the word sets are made of them
    kinds = None if around is None else {_kind(rec) for rec in around if isinstance(rec, dict)}
    for rec in records:
        if not isinstance(rec, dict) or kinds is not None and _kind(rec) not in kinds:
            continue
        problem, fix = words_of(problem_text(rec).casefold()), words_of(fix_text(rec).casefold())
        if not problem and not fix:
            continue
        bucket = (*_kind(rec), bool(problem), bool(fix))
        buckets.setdefault(bucket, []).append(_Words(rec, problem, fix))
    groups: list[list[dict]] = []
    for entries in buckets.values():
        groups.extend(_cluster_bucket(entries, threshold, jaccard_floor))
    return [group for group in groups if len(group) > 1]


def _kind(rec: dict) -> tuple[str, str]:
    """The part of a record's near_duplicates bucket its fields give: type and category."""
    return str(rec.get("type") or ""), str(rec.get("category") or "")


class _Words:
    """A record as near_duplicates compares it: its normalised problem and fix (computed
    once, not at every comparison) and their word sets (the parts present)."""

    __slots__ = ("fix", "parts", "problem", "rec", "signature")

    def __init__(self, rec: dict, problem: list[str], fix: list[str]):
        """`problem`, `fix`: the words of each (normalize_text's, before they are joined)."""
        self.rec, self.problem, self.fix = rec, " ".join(problem), " ".join(fix)
        self.signature = self.problem + "\x00" + self.fix
        self.parts = tuple(frozenset(words) for words in (problem, fix) if words)


def _cluster_bucket(entries: list[_Words], threshold: float, jaccard_floor: float) -> list[list[dict]]:
    parts = len(entries[0].parts)  # one bucket: the same parts present in every record
    ranks = [_ranks([words.parts[at] for words in entries]) for at in range(parts)]
    exact: dict[str, list[dict]] = {}
    leaders: list[tuple[_Words, list[dict]]] = []
    index: list[dict[str, list[int]]] = [{} for _ in range(parts)]  # per part: token -> leaders with it in their prefix
    rarest: list[dict[str, list[int]]] = [{} for _ in range(parts)]  # per part: token -> leaders it is the rarest of
    for words in entries:
        if words.signature in exact:  # identical normalised text: no comparison needed
            exact[words.signature].append(words.rec)
            continue
        prefixes = [_prefix(tokens, rank, jaccard_floor) for tokens, rank in zip(words.parts, ranks, strict=True)]
        home = _find_leader(words, _candidates(prefixes, index, rarest), leaders, threshold, jaccard_floor) \
            if leaders else None
        if home is None:
            home = [words.rec]
            leaders.append((words, home))
            for prefix, held, first in zip(prefixes, index, rarest, strict=True):  # leaders are indexed by every part
                for token in prefix:
                    held.setdefault(token, []).append(len(leaders) - 1)
                first.setdefault(prefix[0], []).append(len(leaders) - 1)
        else:
            home.append(words.rec)
        exact[words.signature] = home
    return [members for _, members in leaders]


def _ranks(word_sets: list[frozenset]) -> dict[str, int]:
    """Each token of one part ranked rarest first (fewest records, then alphabetically), once,
    so that a prefix sorts by a dict lookup."""
    from collections import Counter
    from itertools import chain

    frequency = Counter(chain.from_iterable(word_sets))
    order = sorted(frequency)
    order.sort(key=frequency.__getitem__)  # stable: alphabetical among tokens of one frequency
    return {token: n for n, token in enumerate(order)}


def _candidates(prefixes: list[list[str]], index: list[dict], rarest: list[dict]) -> set[int]:
    """The leaders a record may join: a near-duplicate's word sets hold one another in every
    part (_added_words_only), and a prefix of the larger set holds the smaller set's rarest
    token (it holds a token of the smaller set, which has at least the floor's share of the
    larger one's tokens, and the smaller set's rarest is the first of them in the larger one's
    order). So in each part either the record's rarest token is in the leader's prefix (the
    record is the smaller) or the leader's rarest token is in the record's prefix: a subset
    of the leaders sharing a prefix token, which loses no pair; the parts' candidates are
    intersected."""
    found: set[int] | None = None
    for prefix, held, first in zip(prefixes, index, rarest, strict=True):
        here = set(held.get(prefix[0], ()))
        for token in prefix:
            leaders = first.get(token)
            if leaders is not None:
                here.update(leaders)
        found = here if found is None else found & here
        if not found:
            break
    return found or set()


def _prefix(tokens: frozenset, rank: dict[str, int], jaccard_floor: float) -> list[str]:
    """The first tokens of a part, rarest first (by fewest records, then alphabetically)."""
    ordered = sorted(tokens, key=rank.__getitem__)
    keep = len(ordered) - math.ceil(jaccard_floor * len(ordered) - 1e-9) + 1  # float-safe ceil
    return ordered[:keep]


def _find_leader(words: _Words, met: set[int], leaders, threshold, jaccard_floor):
    """The earliest of the candidate leaders `met` whose every part passes the Jaccard bound
    without a swapped word (cheap set arithmetic) and then the full similarity."""
    floor = jaccard_floor - 1e-9
    if not met:  # most records: no leader can hold or be held by them
        return None
    for leader_at in sorted(met):
        leader, members = leaders[leader_at]
        if all(_added_words_only(x, y, floor) for x, y in zip(words.parts, leader.parts, strict=True)) \
                and _similar_words(leader, words, threshold):
            return members
    return None


def _added_words_only(x: frozenset, y: frozenset, floor: float) -> bool:
    """Token Jaccard ≥ floor and no swapped word (`_substitutes`), in one step: without a
    swapped word one set holds the other, so their Jaccard index is the smaller size over
    the larger (no intersection or differences to build)."""
    if x <= y:
        return len(x) >= floor * len(y)
    return y <= x and len(y) >= floor * len(x)


def _similar_words(a: _Words, b: _Words, threshold: float) -> bool:
    """`similarity(a.rec, b.rec) >= threshold` for two records of one bucket whose parts
    passed _added_words_only, from the normalised texts near_duplicates computed once: a
    part both normalise to words is text_similarity's formula, whose Jaccard index is the
    smaller word set's size over the larger's (one holds the other); a part without words
    on either side goes through text_similarity itself."""
    for part, na, nb, at in ((problem_text, a.problem, b.problem, 0), (fix_text, a.fix, b.fix, 1 if a.problem else 0)):
        if na and nb:
            x, y = a.parts[at], b.parts[at]
            value = 1.0 if na == nb else (min(len(x), len(y)) / max(len(x), len(y)) + _char_ratio(na, nb)) / 2
            if value < threshold:
                return False
        else:
            raw_a, raw_b = part(a.rec), part(b.rec)
            if (raw_a or raw_b) and text_similarity(raw_a, raw_b) < threshold:
                return False
    return True


def is_near_duplicate(a: dict, b: dict, threshold: float) -> bool:
    """The rule near_duplicates applies to two records (of one bucket)."""
    words_a = _word_sets(normalize_text(problem_text(a)), normalize_text(fix_text(a)))
    words_b = _word_sets(normalize_text(problem_text(b)), normalize_text(fix_text(b)))
    swapped = any(_substitutes(x, y) for x, y in zip(words_a, words_b, strict=False))  # parts absent: bucketed apart
    return not swapped and similarity(a, b) >= threshold


def _word_sets(problem: str, fix: str) -> tuple[frozenset, ...]:
    return tuple(frozenset(text.split()) for text in (problem, fix) if text)


def _substitutes(x: frozenset, y: frozenset) -> bool:
    """Does each text have a word the other lacks? Then one says something else, however alike
    they read ("use toolgx" / "use toolhx", `pytest -x` / `pytest -q`, `no module named foo` /
    `bar`): two learnings, not one. Near-duplicates only add or drop words, or reorder them."""
    return bool(x - y) and bool(y - x)

