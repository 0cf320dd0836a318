"""`learn stats`: what the store holds and how well capture works, from index aggregates.

Counts come from one aggregate scan of the index (GROUP BY scope/type/category/status); the
top learnings and helped counts from one more, in which SQLite extracts only the few fields
needed; just the handful of records shown are parsed whole. Capture health comes from
analytics/stats.json (last 7 days), whose counters the capture path bumps: events, failures,
pairs, suggestions, helped, not_helped, ignored, and the spool's deferred, replayed, dropped
(events a hook had no time for; `spooled` is how many wait in it now).

    repeated-failure rate = (not_helped + ignored) / suggestions
    (suggested fixes after which the same failure came right back: tried and failed, or the
    failed command run again as it was, the suggestion not tried)
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC

from learn_cli.engine import scoring
from learn_cli.store.record import TYPES as TYPE_ORDER
from learn_cli.text import jsonlite

HEALTH_COUNTERS = ("events", "failures", "pairs", "suggestions", "helped", "not_helped", "ignored",
                   "deferred", "replayed", "dropped")
WINDOW_DAYS = 7
TOP = 3


def gather(store, project=None, now=None, loads: Callable = jsonlite.loads) -> dict:
    """The stats document (the `--json` output, documented in docs/cmd-stats.md)."""
    from learn_cli.store import analytics

    store.refresh(loads=loads)
    doc = _counts(store.index)
    doc["top"], doc["helpful"] = _scores_and_helped(store.index, scoring.parse_time(now) or _utc_now(), loads)
    window = analytics.window(analytics.read(store.layout.stats), WINDOW_DAYS)
    health = {name: int(window.get(name, 0)) for name in HEALTH_COUNTERS}
    suggestions = health["suggestions"]
    repeated = health["not_helped"] + health["ignored"]
    health["repeated_failure_rate"] = round(repeated / suggestions, 3) if suggestions else None
    health["days"] = WINDOW_DAYS
    health["spooled"] = _spooled(store)
    doc["capture"] = health
    doc["context"] = _context(store, project, loads)
    return doc


def _spooled(store) -> int:
    """Events waiting in the spool now (hooks deferred them; a later hook or `learn promote`
    learns them)."""
    from learn_cli.store.spool import SpoolFiles

    return sum(SpoolFiles(store.home).waiting().values())


def _counts(index) -> dict:
    """Totals by type, category and status in one aggregate scan of the index."""
    types = {t: 0 for t in TYPE_ORDER}
    statuses: dict[str, int] = {}
    categories: dict[tuple, int] = {}
    live = global_ = archived = 0
    for scope, rtype, category, status, n in index.kind_counts():
        if scope in ("archive", "global-archive") or status == "archived":
            archived += n
            continue
        live += n
        rtype = rtype if rtype in TYPE_ORDER else "other"
        types[rtype] = types.get(rtype, 0) + n
        statuses[status or "active"] = statuses.get(status or "active", 0) + n
        categories[(rtype, category or "?")] = categories.get((rtype, category or "?"), 0) + n
        if scope == "global":
            global_ += n
    promoted = index.promoted_count()
    ordered = sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"total": live, "global": global_, "archived": archived, "promoted": promoted,
            "types": {t: n for t, n in types.items() if n or t in TYPE_ORDER},
            "statuses": dict(sorted(statuses.items())),
            "categories": [{"type": t, "category": c, "count": n} for (t, c), n in ordered]}


def _by_bound(index, now, loads: Callable):
    """(rowid, key, the fields the score reads, an upper bound of the score) of the live active
    and global learnings, highest bound first: from the index's score columns (the best score
    any clock gives, in an index's order), else (an older index) from every row's `data`."""
    if index.scores_filled():
        for rowid, key, frequency, impact, used, best in index.best_scores():
            yield rowid, key, {"frequency": frequency, "impact": impact, "last_used": used}, best
        return
    for rowid, key, fields, bound in index.score_bounds(scoring.format_time(now)):
        frequency, impact, last_used, created = loads(fields)
        yield rowid, key, {"frequency": frequency, "impact": impact, "last_used": last_used, "created": created}, bound


def _scores_and_helped(index, now, loads: Callable) -> tuple[list, dict]:
    """The TOP learnings by score (one per key) and the helped counts.

    The learnings come best score first (the score at recency 1, an index of the v8 score
    columns; for an older index SQLite parses each record's four score fields and sorts by an
    upper bound of the score); exact scores are computed in Python only until the bound cannot
    beat the third best. Helped counts are read only from records that hold the word.
    """
    from learn_cli.engine.promotion import title

    best: dict[str, float] = {}  # key -> its best score so far
    leaders: list[tuple[float, int, str]] = []  # the TOP best (score, row, key), best first
    for rowid, key, fields, bound in _by_bound(index, now, loads):
        if len(leaders) == TOP and bound < leaders[-1][0]:
            break
        value = scoring.score(fields, now)
        if key in best and value <= best[key]:
            continue
        best[key] = value
        leaders = sorted([item for item in leaders if item[2] != key] + [(value, rowid, key)],
                         key=lambda item: (-item[0], item[1]))[:TOP]
    top = []
    for value, rowid, _key in leaders:
        scope, data = index.row(rowid)
        rec = loads(data)
        top.append({"id": rec["id"], "text": title(rec), "score": round(value, 2), "scope": scope,
                    "frequency": scoring.frequency_of(rec), "projects": scoring.project_count(rec)})
    helped_rows = []
    helped = not_helped = 0
    for rowid, fields in index.helped_fields():
        h, nh = (_count(v) for v in loads(fields))
        if h or nh:
            helped, not_helped = helped + h, not_helped + nh
            helped_rows.append((-h, nh, rowid))
    items = []
    for minus_h, nh, rowid in sorted(helped_rows)[:TOP]:
        rec = loads(index.row(rowid)[1])
        items.append({"id": rec["id"], "text": title(rec), "helped": -minus_h, "not_helped": nh})
    return top, {"learnings": len(helped_rows), "helped": helped, "not_helped": not_helped, "top": items}


def _context(store, project, loads: Callable) -> dict:
    from learn_cli.engine.digest import session_digest

    if project is None:
        return {"tokens": 0, "budget": 0, "items": 0}
    budget = store.number("budget", project.id)
    result = session_digest(store, project, budget, loads=loads)
    return {"tokens": result.tokens, "budget": budget, "items": len(result.items),
            "before_tokens": result.before_tokens, "dropped": result.dropped}


def _count(value) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0


def _utc_now():
    from datetime import datetime

    return datetime.now(UTC)
