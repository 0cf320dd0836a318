"""Counters in `analytics/stats.json`: per-day buckets (for "last 7 days") and totals.

Counters are bumped by short-lived capture processes under the file's lock; the rewrite is
atomic but not fsynced (a power cut may lose a count, never the file).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .jsonl import atomic_write
from .locks import file_lock

KEEP_DAYS = 60


def today(ts: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() if ts is None else ts))


def read(path: Path) -> dict:
    try:
        doc = json.loads(Path(path).read_bytes() or b"{}")
    except (OSError, ValueError):
        return {"schema": 1}
    return doc if isinstance(doc, dict) else {"schema": 1}


def bump(path: Path, counters: dict[str, int], ts: float | None = None, values: dict | None = None) -> None:
    """Add `counters` to today's bucket and the totals; set `values` (gauges) as given."""
    day = today(ts)
    with file_lock(path):
        doc = read(path)
        totals = doc.setdefault("totals", {})
        days = doc.setdefault("days", {})
        bucket = days.setdefault(day, {})
        for name, n in counters.items():
            totals[name] = int(totals.get(name, 0)) + n
            bucket[name] = int(bucket.get(name, 0)) + n
        if values:
            doc.setdefault("gauges", {}).update(values)
        for old in sorted(days)[:-KEEP_DAYS]:
            del days[old]
        atomic_write(path, json.dumps(doc, separators=(",", ":")).encode(), durable=False)


def window(doc: dict, days: int = 7, ts: float | None = None) -> dict[str, int]:
    """Sum of the last `days` daily buckets."""
    now = time.time() if ts is None else ts
    wanted = {today(now - 86400 * i) for i in range(days)}
    out: dict[str, int] = {}
    for day, bucket in (doc.get("days") or {}).items():
        if day in wanted and isinstance(bucket, dict):
            for name, n in bucket.items():
                if isinstance(n, int):
                    out[name] = out.get(name, 0) + n
    return out
