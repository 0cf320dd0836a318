"""The score of a learning (SPEC §2.1): the one definition of the formula.

    score   = min(frequency, 10) / 10 × impact × recency
    recency = max(0, 1 − 0.1 × whole weeks since last_used)

Python here (`score`, `scorer`); the index's SQL orders by the same formula, generated from
these constants (`store.index.score_sql`). Hot path (every capture re-scores): stdlib only,
nothing compiled at import time. Records come from users' files, so every field is read
defensively: a missing or odd frequency counts as 1, impact as 0.5, last_used falls back to
created, then to now.
"""

from __future__ import annotations

import math

try:  # the C module that `datetime` re-exports: its Python half, never used here, costs a hook
    from _datetime import UTC, datetime  # ~0.15x a bare interpreter's start
except ImportError:  # pragma: no cover - not CPython
    from datetime import UTC, datetime

FREQUENCY_CAP = 10  # sightings beyond this add nothing
DEFAULT_FREQUENCY = 1
DEFAULT_IMPACT = 0.5
RECENCY_WEEKS = 10  # recency loses 1/RECENCY_WEEKS a whole week: 0 after this many weeks

_WEEK_SECONDS = 7 * 24 * 3600
NEVER_DUE = 9e15  # a due time no clock reaches (epoch seconds; engine.scoring.clock_due, index v12)
_SCALE = 1_000_000 // (FREQUENCY_CAP * RECENCY_WEEKS)  # 6 decimals of min(f, cap)/cap × recency


def parse_time(value) -> datetime | None:
    """An aware UTC datetime from an ISO-8601 string (or datetime), None when unusable."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value:
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:  # naive timestamps in users' files are taken as UTC
        return moment.replace(tzinfo=UTC)
    return moment


def format_time(moment: datetime) -> str:
    """`2026-11-29T17:55:00Z`: the record's timestamp format."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _now(now) -> datetime:
    return parse_time(now) or datetime.now(UTC)


def frequency_of(rec: dict) -> int:
    """The record's frequency as an int ≥ 1 (1 when missing or not a number)."""
    value = rec.get("frequency")
    if type(value) is int:  # the common case, checked first: scoring runs on every record
        return max(value, 1)
    if isinstance(value, bool):
        return DEFAULT_FREQUENCY
    try:
        number = float(value)
    except (TypeError, ValueError):
        return DEFAULT_FREQUENCY
    if math.isnan(number) or number < 1:
        return DEFAULT_FREQUENCY
    return int(min(number, 1e9))


def impact_of(rec: dict) -> float:
    """The record's impact clamped to [0, 1] (0.5 when missing or not a number)."""
    value = rec.get("impact")
    if type(value) is float and 0.0 <= value <= 1.0:
        return value
    if isinstance(value, bool):
        return DEFAULT_IMPACT
    try:
        number = float(value)
    except (TypeError, ValueError):
        return DEFAULT_IMPACT
    if math.isnan(number):
        return DEFAULT_IMPACT
    return min(max(number, 0.0), 1.0)


def last_used_of(rec: dict, now=None) -> datetime:
    """last_used, else created, else now."""
    return parse_time(rec.get("last_used")) or parse_time(rec.get("created")) or _now(now)


def project_count(rec: dict) -> int:
    """Distinct projects the learning was seen in (at least 1 when it names a project)."""
    projects = rec.get("projects")
    if isinstance(projects, str):
        projects = [projects]
    distinct = {str(p) for p in projects if p} if isinstance(projects, list) else set()
    if not distinct and rec.get("project"):
        return 1
    return len(distinct)


def recency(last_used, now=None) -> float:
    """1.0 minus 0.1 per whole week since last_used, never below 0; future dates give 1.0."""
    moment = parse_time(last_used)
    if moment is None:
        return 1.0
    return _recency_at(moment, _now(now))


def _recency_at(moment: datetime, now: datetime) -> float:
    elapsed = (now - moment).total_seconds()
    if elapsed <= 0:
        return 1.0
    weeks = int(elapsed // _WEEK_SECONDS)
    return max(0, RECENCY_WEEKS - weeks) / RECENCY_WEEKS  # integer arithmetic: 0.7, not 0.7000000000000001


def score(rec: dict, now=None) -> float:
    """min(frequency, 10)/10 × impact × recency, in [0, 1]."""
    return _score_at(rec, now if type(now) is datetime and now.tzinfo is not None else _now(now))


def scorer(now=None):
    """score() with `now` fixed, for scoring many records at once."""
    now = _now(now)
    return lambda rec: _score_at(rec, now)


def _score_at(rec: dict, now: datetime) -> float:
    # Inlined fast paths: the digest scores every record at each session start.
    frequency = rec.get("frequency")
    if type(frequency) is not int or frequency < 1:
        frequency = frequency_of(rec)
    impact = rec.get("impact")
    if type(impact) is not float or not 0.0 <= impact <= 1.0:
        impact = impact_of(rec)
    moment = None
    stamp = rec.get("last_used")
    if type(stamp) is str:
        try:
            moment = datetime.fromisoformat(stamp)
        except ValueError:
            pass
    if moment is None:
        moment = last_used_of(rec, now)
    elif moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    elapsed = (now - moment).total_seconds()
    weeks = int(elapsed // _WEEK_SECONDS) if elapsed > 0 else 0
    if weeks >= RECENCY_WEEKS:
        return 0.0
    # min(frequency, 10)/10 × impact × (10 − weeks)/10, rounded to 6 decimals so that float
    # noise (0.1 × 3 = 0.30000000000000004) never moves a learning across the 0.3 / 0.7
    # boundaries; int(x + 0.5) rounds like round() for x ≥ 0, at a fifth of the cost.
    return int(min(frequency, FREQUENCY_CAP) * (RECENCY_WEEKS - weeks) * impact * _SCALE + 0.5) / 1_000_000
