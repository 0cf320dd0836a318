"""Capture: whether the agents' hooks are registered and would run (each agent module's
`doctor_check`, read-only), what was captured lately, and the spool."""

from __future__ import annotations

import os
import time
from pathlib import Path

from learn_cli.doctor import OK, PROBLEM, REPAIRED, WARN, Check, home_path, plural


def hooks(project) -> list[Check]:
    """The hooks check of every agent module that has one (`doctor_check`; Claude Code's
    today), in registry order: `hooks` for the default agent, `hooks: NAME` for another."""
    from learn_cli import agents

    checks = []
    for mod in agents.modules():
        check = getattr(mod, "doctor_check", None)
        if check is not None:
            status, summary, details = check(project, home_path)
            name = "hooks" if mod.AGENT == agents.DEFAULT else f"hooks: {mod.AGENT}"
            checks.append(Check(name, status, summary, details))
    return checks


def capture(store, project, hooks: list[Check]) -> Check:
    """Events captured in the last 7 days, the last capture, warnings in learn.log; a warning
    when nothing was captured although some agent's hooks are registered."""
    from learn_cli.store import analytics

    doc = analytics.read(store.layout.stats)
    week = analytics.window(doc, 7)
    events = week.get("events", 0)
    details = [f"{name}: {count:,}" for name, count in sorted(week.items()) if name != "events"]
    last = _last_capture(doc)
    if last:
        details.append(f"last capture: {last}")
    auto = store.setting("auto_capture", project.id if project else None)
    details.append(f"auto-capture: {'on' if auto else 'off'}{' (this project)' if project else ''}")
    warnings, latest = _recent_warnings(store.layout.log)
    if warnings:
        details.append(f"latest warning: {latest}")
    summary = f"{plural(events, 'event')} captured in the last 7 days"
    if warnings:
        return Check("capture", WARN, summary + f", {plural(warnings, 'warning')} in {home_path(store.layout.log)}",
                     details)
    if not events and any(check.status == OK for check in hooks) and auto:
        return Check("capture", WARN, summary + " although the hooks are registered", details)
    return Check("capture", OK, summary, details)


def spool(store) -> Check:
    """The spool's counters over the last 7 days, after learning whatever still waits in it."""
    from learn_cli.capture.spool import finish
    from learn_cli.store import analytics

    result = finish(store)
    week = analytics.window(analytics.read(store.layout.stats), 7)
    deferred, replayed, dropped = (week.get(name, 0) for name in ("deferred", "replayed", "dropped"))
    details = [f"last 7 days: {deferred:,} deferred, {replayed:,} learned later, {dropped:,} dropped"]
    if dropped:
        return Check("spool", PROBLEM, f"{plural(dropped, 'event')} dropped in the last 7 days: capture could not "
                     "learn them (reasons in learn.log)", details)
    if result.left:
        why = (
            "the index is busy"
            if result.busy
            else "the store is read-only"
            if not store.writable()
            else "see learn.log"
        )
        return Check("spool", WARN, f"{plural(result.left, 'event')} waiting in the spool ({why})", details)
    if result.replayed:
        return Check("spool", REPAIRED, f"learned {plural(result.replayed, 'event')} that hooks had spooled", details)
    if deferred:
        return Check(
            "spool", OK, f"{plural(deferred, 'event')} deferred in the last 7 days, all learned since", details
        )
    return Check("spool", OK, "no event deferred or dropped in the last 7 days")


def _last_capture(doc: dict) -> str | None:
    gauges = doc.get("gauges") if isinstance(doc.get("gauges"), dict) else {}
    stamps = [str(v) for k, v in gauges.items() if "last" in str(k) and isinstance(v, str)]
    if stamps:
        return max(stamps)
    days = [d for d, bucket in (doc.get("days") or {}).items() if isinstance(bucket, dict) and bucket]
    return f"on {max(days)}" if days else None


def _recent_warnings(log: Path, days: int = 7) -> tuple[int, str]:
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days * 86400))
    try:
        with open(log, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 256 * 1024))  # the log is bounded; its tail is enough
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return 0, ""
    recent = [ln for ln in lines if ln[:20] >= cutoff and len(ln) > 21]
    return len(recent), (recent[-1][21:][:160] if recent else "")
