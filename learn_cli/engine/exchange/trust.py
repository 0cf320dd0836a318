"""Trust of imported entries: unless the user trusts the file, an entry arrives pending with one
sighting and clamped times (`distrust`); `learn resolve` accepts or drops it (`accept_import`)."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache, lru_cache

from learn_cli.store.record import parse_iso

MAX_TRUSTED_FREQUENCY = 1000
_TIMES = ("created", "last_used", "low_since")


def distrust(rec: dict, now: datetime, trusted: bool = False) -> None:
    """What an import may not claim. Times are never in the future and counters are bounded;
    unless the user trusts the file (`learn import --trust`), a live entry arrives `pending`
    with one sighting, no credits and no evidence from elsewhere: it reaches no agent context
    (session digest, hook answers) and no `learn flush` until a local sighting confirms it
    (engine.knowledge / capture.learner activate it) or the user accepts it (`learn resolve
    ID --keep`)."""
    now_text = _as_text(now)
    for name in _TIMES:
        text = rec.get(name)
        if type(text) is str and text <= now_text and _canonical_time(text):
            continue  # not in the future: the order of such texts is the order of their times
        when = parse_iso(text)
        if when is not None and when > now:
            rec[name] = now_text
    for name, cap in (("frequency", MAX_TRUSTED_FREQUENCY), ("helped", MAX_TRUSTED_FREQUENCY),
                      ("not_helped", MAX_TRUSTED_FREQUENCY)):
        if isinstance(rec.get(name), int) and rec[name] > cap:
            rec[name] = cap
    if trusted:
        return
    if rec.get("status") in ("active", "global", "conflicted"):
        rec["status"] = "pending"
    rec["frequency"] = 1
    for name in ("helped", "not_helped", "evidence", "pre_conflict_status", "conflict_with", "helped_by"):
        rec.pop(name, None)


def _canonical_time(text: str) -> bool:
    """A UTC time as learn writes it (`2026-01-31T12:00:00Z`): fixed-width fields, so that
    comparing two such texts compares their times (~5 µs less a time than parsing it)."""
    return _canonical_re()(text) is not None


@cache
def _canonical_re():
    import re

    return re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", re.ASCII).fullmatch


@lru_cache(maxsize=1)
def _as_text(now: datetime) -> str:
    """The import's clock as a canonical time (one clock for every entry)."""
    from learn_cli.store.record import now_iso

    return now_iso(now.timestamp())


def is_untrusted_import(rec: dict) -> bool:
    """An imported learning still waiting for a local sighting or the user's word."""
    return rec.get("status") == "pending" and str(rec.get("source") or "").startswith("import:")


def accept_import(store, rid: str, keep: bool) -> dict | None:
    """`learn resolve ID --keep` on an untrusted import: it becomes live (global in a global
    file, active in a project); `--drop`: it is deleted. None when `rid` is not one."""
    found = store.get(rid)
    if found is None or not is_untrusted_import(found[1]):
        return None
    path, rec = found
    if not keep:
        store.remove(path, rec["id"])
        return rec
    status = "global" if path.parent == store.layout.global_dir else "active"
    return store.update(path, rec["id"], lambda cur: dict(cur, status=status))


def _now() -> datetime:
    return datetime.now(UTC)
