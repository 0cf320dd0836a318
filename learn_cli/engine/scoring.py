"""Lifecycle of a learning (SPEC §2.1): promote, candidate, archive or keep, by its score.

The score itself is defined once, in `learn_cli.store.score` (re-exported here):

    score   = min(frequency, 10) / 10 × impact × recency
    recency = max(0, 1 − 0.1 × whole weeks since last_used)

Hot path (every capture re-scores): stdlib only, nothing compiled at import time.
Records come from users' files, so every field is read defensively: a missing or odd
frequency counts as 1, impact as 0.5, last_used falls back to created, then to now.
"""

from __future__ import annotations

from learn_cli.store.paths import DEFAULT_CONFIG, number
from learn_cli.store.score import (  # noqa: F401  (the formula: re-exported for the engine)
    FREQUENCY_CAP,
    NEVER_DUE,
    RECENCY_WEEKS,
    UTC,
    _now,
    datetime,
    format_time,
    frequency_of,
    impact_of,
    last_used_of,
    parse_time,
    project_count,
    recency,
    score,
    scorer,
)

PROMOTE = "promote"
CANDIDATE = "candidate"
ARCHIVE = "archive"
KEEP = "keep"

LOW_SCORE = 0.3  # below this a learning starts its way to the archive
HIGH_SCORE = 0.7  # strictly above this a learning is worth promoting
PROMOTE_ALWAYS_PROJECTS = 3  # seen in this many projects: promoted whatever the score
DEFAULT_PROMOTE_MIN_PROJECTS = DEFAULT_CONFIG["promote_min_projects"]
DEFAULT_ARCHIVE_DAYS = DEFAULT_CONFIG["archive_days"]


def lifecycle(
    rec: dict,
    now=None,
    promote_min_projects: int = DEFAULT_PROMOTE_MIN_PROJECTS,
    archive_days: float = DEFAULT_ARCHIVE_DAYS,
    value: float | None = None,
) -> str:
    """What the lifecycle wants done with a learning: promote, candidate, archive or keep.

    - only `active` learnings (and records without a status) are promoted or listed as
      candidates: `pending` ones have not earned it yet, `conflicted` ones wait for the
      user, `global` ones are already promoted copies, `archived` ones are gone;
    - promote: seen in ≥ 3 distinct projects (whatever the score), or score > 0.7 and
      seen in ≥ promote_min_projects projects;
    - candidate: 0.3 ≤ score ≤ 0.7, or > 0.7 in too few projects;
    - archive: score < 0.3 and `low_since` at least archive_days old (active, pending
      and global learnings alike; conflicted and archived ones are left alone);
    - keep: everything else.

    `value`: the record's score at `now` when the caller has it already (scored once a run).
    """
    now = _now(now)
    status = rec.get("status") or "active"
    if status in ("archived", "conflicted"):
        return KEEP
    # Only an active learning is promoted: its projects are counted for it alone (a whole-store
    # run asks about every record, most of them pending).
    projects = project_count(rec) if status == "active" else 0
    if projects >= PROMOTE_ALWAYS_PROJECTS:
        return PROMOTE
    if value is None:
        value = score(rec, now)
    if value < LOW_SCORE:
        low_since = parse_time(rec.get("low_since"))
        if low_since is not None and (now - low_since).total_seconds() >= archive_days * 86400:
            return ARCHIVE
        return KEEP
    if status != "active":
        return KEEP
    if value > HIGH_SCORE and projects >= promote_min_projects:
        return PROMOTE
    return CANDIDATE


def update_low_since(rec: dict, now=None, value: float | None = None) -> bool:
    """Start the archive clock when the score first falls below 0.3, stop it when it rises.

    Mutates rec (sets or removes `low_since`) and returns whether it changed. `value`: the
    record's score at `now` when the caller has it already.
    """
    now = _now(now)
    low = (score(rec, now) if value is None else value) < LOW_SCORE
    has_clock = parse_time(rec.get("low_since")) is not None
    if low and not has_clock:
        rec["low_since"] = format_time(now)
        return True
    if not low and "low_since" in rec:
        del rec["low_since"]
        return True
    return False


NEVER = NEVER_DUE  # a due time no clock reaches (epoch seconds, ~285 million years from now)
_EARLY_S = 60.0  # due times are a minute early: a datetime's float seconds never make a row late
_CLOCK_STATUSES = ("active", "pending", "global")  # those archive_stale archives


def clock_due(rec: dict) -> tuple[float, float | None]:
    """When the clock alone can next change what a whole-store run decides about a learning
    (index v12's due columns; a run again reads only the rows due, engine.promotion):
    (due_clock, clock_start), epoch seconds.

    - due_clock: from when update_low_since may change it. The score only falls as time
      passes (recency), so a record without an archive clock changes at the start of the
      first whole week in which its score is below LOW_SCORE (0: already; NEVER: it never
      falls, having no time to age from); one whose clock started while its score was still
      at least LOW_SCORE (its fields changed since: the clock may stop) or whose clock is not
      a time is due at once (0); any other clock stays (NEVER).
    - clock_start: the start of its archive clock, or None: lifecycle archives once it is
      archive_days old (a setting: the run adds it), and a clock that starts after the run's
      `now` (a clock set back) may stop; the run asks for both.
    """
    low_since = rec.get("low_since")
    start = parse_time(low_since)
    if start is not None:
        due = 0.0 if score(rec, start) >= LOW_SCORE else NEVER
        return due, start.timestamp() - _EARLY_S
    if low_since is not None:
        return 0.0, None  # a clock that is not a time: set again or removed at once
    moment = parse_time(rec.get("last_used")) or parse_time(rec.get("created"))
    if moment is None:  # scored at `now` whatever the clock: it never changes
        return (0.0 if score(rec, datetime.fromtimestamp(0, UTC)) < LOW_SCORE else NEVER), None
    if score(rec, moment) < LOW_SCORE:
        return 0.0, None
    # the first whole week whose score is below LOW_SCORE: the score never rises with the
    # weeks, and is 0 after RECENCY_WEEKS (found in ~4 scorings, not up to 11)
    high, low = 0, RECENCY_WEEKS
    while low - high > 1:
        middle = (high + low) // 2
        if score(rec, moment + _week(middle)) < LOW_SCORE:
            low = middle
        else:
            high = middle
    return (moment + _week(low)).timestamp() - _EARLY_S, None


def _week(weeks: int):
    try:
        from _datetime import timedelta  # the C module, as store.score imports it
    except ImportError:  # pragma: no cover - not CPython
        from datetime import timedelta
    return timedelta(weeks=weeks)


def classify(rec: dict, now=None, cfg: dict | None = None) -> str:
    """lifecycle() with thresholds read from a config dict (ARCHITECTURE's name)."""
    cfg = cfg or {}
    return lifecycle(
        rec,
        now,
        promote_min_projects=number(cfg.get("promote_min_projects"), "promote_min_projects"),
        archive_days=number(cfg.get("archive_days"), "archive_days"),
    )


touch_low_since = update_low_since  # ARCHITECTURE's name

