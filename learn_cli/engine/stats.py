"""`learn stats`: what the store holds and how well capture works, from index aggregates.

Counts come from SQL over the index (GROUP BY scope/type/status), so the cost does not grow
with the records' size; the only records parsed are the few top learnings and those with
`helped` counts. Capture health comes from analytics/stats.json (last 7 days), whose
counters the capture path bumps: events, failures, pairs, suggestions, helped, not_helped.

    repeated-failure rate = not_helped / suggestions
    (suggested fixes after which the same failure came right back)
"""

from __future__ import annotations

import json
from typing import Callable

from learn_cli.engine import scoring

TYPE_LABEL = {"error": "errors", "pattern": "patterns", "preference": "prefs", "workflow": "workflows"}
TYPE_ORDER = ("error", "pattern", "preference", "workflow")
HEALTH_COUNTERS = ("events", "failures", "pairs", "suggestions", "helped", "not_helped")
WINDOW_DAYS = 7
TOP = 3
_LIVE = "scope IN ('project', 'global') AND (status IS NULL OR status != 'archived')"
# score() in SQL, rounded up to an upper bound (an odd field counts as its best value, a date
# SQLite cannot read as recency 1): candidates for the top list are read in this order and
# scored exactly; reading stops once the bound cannot beat the third best.
_BOUND = ("min(max(CASE WHEN json_type(data, '$.frequency') IN ('integer', 'real') "
          "THEN json_extract(data, '$.frequency') ELSE 10 END, 1), 10) / 10.0 * "
          "CASE WHEN json_type(data, '$.impact') IN ('integer', 'real') "
          "THEN min(max(json_extract(data, '$.impact'), 0), 1) ELSE 1 END * "
          "coalesce(max(0, 1 - 0.1 * CAST((julianday(?) - julianday(coalesce(json_extract(data, '$.last_used'), "
          "json_extract(data, '$.created')))) / 7 AS INTEGER)), 1) + 0.001")


def gather(store, project=None, now=None, loads: Callable = json.loads) -> dict:
    """The stats document (the `--json` output, documented in docs/cmd-stats.md)."""
    from learn_cli.store import analytics

    store.refresh(loads=loads)
    db = store.index.db
    doc = _counts(db)
    doc["top"] = _top(db, now, loads)
    doc["helpful"] = _helpful(db, loads)
    window = analytics.window(analytics.read(store.layout.stats), WINDOW_DAYS)
    health = {name: int(window.get(name, 0)) for name in HEALTH_COUNTERS}
    suggestions = health["suggestions"]
    health["repeated_failure_rate"] = round(health["not_helped"] / suggestions, 3) if suggestions else None
    health["days"] = WINDOW_DAYS
    doc["capture"] = health
    doc["context"] = _context(store, project, loads)
    return doc


def _counts(db) -> dict:
    types = {t: 0 for t in TYPE_ORDER}
    statuses: dict[str, int] = {}
    live = global_ = archived = 0
    promoted = 0
    for scope, rtype, status, n in db.execute(
            "SELECT scope, type, status, count(*) FROM learnings GROUP BY scope, type, status"):
        if scope in ("archive", "global-archive") or status == "archived":
            archived += n
            continue
        live += n
        types[rtype if rtype in types else "other"] = types.get(rtype if rtype in types else "other", 0) + n
        statuses[status or "active"] = statuses.get(status or "active", 0) + n
        if scope == "global":
            global_ += n
    promoted = db.execute("SELECT count(*) FROM learnings WHERE scope = 'global' AND status != 'archived' "
                          "AND data LIKE '%\"promoted_from\"%'").fetchone()[0]
    categories = [{"type": t, "category": c, "count": n} for t, c, n in db.execute(
        f"SELECT type, category, count(*) FROM learnings WHERE {_LIVE} GROUP BY type, category "
        "ORDER BY count(*) DESC, type, category")]
    return {"total": live, "global": global_, "archived": archived, "promoted": promoted,
            "types": {t: n for t, n in types.items() if n or t in TYPE_ORDER},
            "statuses": dict(sorted(statuses.items())), "categories": categories}


def _top(db, now, loads: Callable) -> list:
    """The TOP live learnings by score (exact), reading candidates best bound first."""
    from learn_cli.engine.promotion import title

    now = scoring.parse_time(now) or scoring.parse_time(scoring.format_time(_utc_now()))
    best: dict[str, tuple[float, str, dict, str]] = {}  # one per learning (key): its best copy
    worst_kept = 0.0
    rows = db.execute(f"SELECT {_BOUND}, scope, data FROM learnings WHERE {_LIVE} "
                      "AND (status IS NULL OR status IN ('active', 'global')) ORDER BY 1 DESC",
                      (scoring.format_time(now),))
    for bound, scope, data in rows:
        if len(best) >= TOP and bound is not None and bound < worst_kept:
            break
        rec = loads(data)
        item = (scoring.score(rec, now), rec["id"], rec, scope)
        key = rec.get("key") or rec["id"]
        if key not in best or (item[0], scope == "global") > (best[key][0], best[key][3] == "global"):
            best[key] = item
        kept = sorted(best.values(), key=lambda i: (-i[0], i[1]))[:TOP]
        best = {(i[2].get("key") or i[1]): i for i in kept}
        worst_kept = kept[-1][0] if len(kept) >= TOP else 0.0
    best = sorted(best.values(), key=lambda i: (-i[0], i[1]))
    return [{"id": rid, "text": title(rec, 60), "score": round(value, 2), "scope": scope,
             "frequency": scoring.frequency_of(rec), "projects": scoring.project_count(rec)}
            for value, rid, rec, scope in best]


def _helpful(db, loads: Callable) -> dict:
    """Per-learning helped / not_helped counts, where records carry them."""
    from learn_cli.engine.promotion import title

    helped = not_helped = with_counts = 0
    items = []
    for (data,) in db.execute(f"SELECT data FROM learnings WHERE {_LIVE} AND data LIKE '%helped\"%'"):
        rec = loads(data)
        h, nh = _count(rec.get("helped")), _count(rec.get("not_helped"))
        if not h and not nh:
            continue
        with_counts += 1
        helped += h
        not_helped += nh
        items.append({"id": rec["id"], "text": title(rec, 60), "helped": h, "not_helped": nh})
    items.sort(key=lambda i: (-i["helped"], i["not_helped"], i["id"]))
    return {"learnings": with_counts, "helped": helped, "not_helped": not_helped, "top": items[:TOP]}


def _context(store, project, loads: Callable) -> dict:
    from learn_cli.engine.digest import session_digest
    from learn_cli.engine.promotion import _positive

    if project is None:
        return {"tokens": 0, "budget": 0, "items": 0}
    budget = int(_positive(store.setting("budget", project.id), 2000))
    result = session_digest(store, project, budget, loads=loads)
    return {"tokens": result.tokens, "budget": budget, "items": len(result.items),
            "before_tokens": result.before_tokens, "dropped": result.dropped}


def _count(value) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0


def _utc_now():
    from datetime import datetime, timezone

    return datetime.now(timezone.utc)
