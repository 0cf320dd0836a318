"""Trust of imported entries: unless the user trusts the file, an entry arrives pending with one
sighting and clamped times (`distrust`); `learn resolve` accepts or drops it (`accept_import`)."""

from __future__ import annotations

from datetime import UTC, datetime

MAX_TRUSTED_FREQUENCY = 1000
_TIMES = ("created", "last_used", "low_since")


def distrust(rec: dict, now: datetime, trusted: bool = False) -> None:
    """What an import may not claim. Times are never in the future and counters are bounded;
    unless the user trusts the file (`learn import --trust`), a live entry arrives `pending`
    with one sighting, no credits and no evidence from elsewhere: it reaches no agent context
    (session digest, hook answers) and no `learn flush` until a local sighting confirms it
    (engine.knowledge / capture.learner activate it) or the user accepts it (`learn resolve
    ID --keep`)."""
    from learn_cli.store.record import now_iso, parse_iso

    for name in _TIMES:
        when = parse_iso(rec.get(name))
        if when is not None and when > now:
            rec[name] = now_iso(now.timestamp())
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
