"""Counters in `analytics/stats.json`: per-day buckets (for "last 7 days") and totals.

Every capture bumps a few counters, so this file is the one thing all hook processes write.
A bump never waits for it: the process that finds the file's lock free folds its counts in at
once (read, add, atomic rewrite; not fsynced: a power cut may lose a count, never the file);
one that finds it busy leaves its counts in `analytics/pending/<unique>.json` and goes on.
Whoever holds the lock folds the pending files in before letting go, and looks again after
releasing it, so when the last process is done every count is in stats.json (unless it was
a hook out of time: it leaves the rest to the next bump). Readers add what is still pending.
A crash between rewriting stats.json and removing the folded files is harmless: the names
just folded are kept in the document and never counted twice.

(64 concurrent captures each waiting their turn for this lock on a busy 2-core machine queued
for seconds and ran into the hook's deadline.)
"""

from __future__ import annotations

import os
import time

from learn_cli.text import jsonlite  # not `json`: the SessionStart hook imports no `re`

from . import deadline
from .jsonl import atomic_write, read_bytes
from .locks import fcntl, file_lock, lock_path
from .paths import NOFOLLOW

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms of every hook)
if TYPE_CHECKING:
    from pathlib import Path

KEEP_DAYS = 60
PENDING_DIR = "pending"
MAX_FOLD = 5000  # pending files folded per pass (a pass runs under the lock)
DRAIN_SECONDS = 1.0  # a process stops handing in others' notes after this (the next bump folds them)


def today(ts: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() if ts is None else ts))


def read(path: Path) -> dict:
    """The counters, including counts still waiting in analytics/pending/."""
    doc = _read_doc(path)
    for _name, entry in _pending(path, set(doc.get("folded") or ())):
        _apply(doc, entry)
    doc.pop("folded", None)
    return doc


def bump(path: Path, counters: dict[str, int], ts: float | None = None, values: dict | None = None) -> None:
    """Add `counters` to today's bucket and the totals; set `values` (gauges) as given."""
    entry = {"day": today(ts), "counters": counters, "values": values or {}, "at": time.time()}
    if not _fold_if_free(path, entry):
        _leave_pending(path, entry)
    # The hand-off: a note left while the lock was busy is folded by whoever held the lock,
    # because every process looks again after letting go and keeps folding until no note is
    # left or another process holds the lock (which then looks again itself). A fixed number
    # of passes broke the chain under load: the last notes of a burst stayed pending. A hook
    # stops at its deadline (its alarm is held meanwhile): what it leaves, readers still add.
    stop = time.monotonic() + deadline.remaining(DRAIN_SECONDS)
    while _pending_names(path) and time.monotonic() < stop:
        if not _fold_if_free(path, None):
            break


def bump_later(path: Path, counters: dict[str, int], ts: float | None = None) -> None:
    """Add `counters` as a pending note only (one small write, never a fold): for a process
    whose time is nearly up (a hook that has just spooled its event), so the count is not lost
    to a fold of hundreds of notes cut short by its hard stop. The next bump folds it in."""
    _leave_pending(path, {"day": today(ts), "counters": counters, "values": {}, "at": time.time()})


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


# -- folding ---------------------------------------------------------------------------------

def _fold_if_free(path: Path, entry: dict | None) -> bool:
    """Under the file's lock, if it can be had at once: add `entry` and every pending note to
    the document. False (nothing done) when another process holds the lock."""
    if fcntl is None:  # pragma: no cover - no flock: wait for the lock instead
        with file_lock(path):
            _fold_locked(path, entry)
        return True
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        _fold_locked(path, entry)
        return True
    finally:
        os.close(fd)


def _fold_locked(path: Path, entry: dict | None) -> None:
    doc = _read_doc(path)
    already = set(doc.get("folded") or ())
    notes = _pending(path, already, keep_unreadable=True)[:MAX_FOLD]
    for _name, note in notes:
        if note is not None:
            _apply(doc, note)
    if entry is not None:
        _apply(doc, entry)
    if not notes and entry is None and not already:
        return
    doc["folded"] = [name for name, _ in notes]
    atomic_write(path, jsonlite.dumps(doc, separators=(",", ":")).encode(), durable=False)
    for name in already | set(doc["folded"]):  # unreadable notes go too: they never count
        try:
            os.unlink(os.path.join(_pending_dir(path), name))
        except FileNotFoundError:
            pass


def _apply(doc: dict, entry: dict) -> None:
    counters, values, day = entry.get("counters"), entry.get("values"), entry.get("day")
    totals = doc.setdefault("totals", {})
    days = doc.setdefault("days", {})
    if isinstance(counters, dict) and isinstance(day, str):
        bucket = days.setdefault(day, {})
        for name, n in counters.items():
            if isinstance(n, int) and not isinstance(n, bool):
                totals[name] = _int(totals.get(name)) + n
                bucket[name] = _int(bucket.get(name)) + n
    if isinstance(values, dict) and values:
        doc.setdefault("gauges", {}).update(values)
    for old in sorted(days)[:-KEEP_DAYS]:
        del days[old]


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _read_doc(path: Path) -> dict:
    try:
        doc = jsonlite.loads(read_bytes(path) or b"{}")
    except (OSError, ValueError):
        return {"schema": 1}
    return doc if isinstance(doc, dict) else {"schema": 1}


# -- pending notes ---------------------------------------------------------------------------

def _pending_dir(path: Path) -> str:
    return os.path.join(os.path.dirname(os.fspath(path)), PENDING_DIR)


def _pending_names(path: Path) -> list[str]:
    try:
        return sorted(n for n in os.listdir(_pending_dir(path)) if n.endswith(".json") and not n.startswith("."))
    except OSError:
        return []


def _pending(path: Path, skip: set, keep_unreadable: bool = False) -> list[tuple[str, dict | None]]:
    """(name, note) of every pending note not folded yet, oldest first; an unreadable note
    (not written by us: ours appear whole) is listed with None when `keep_unreadable`."""
    out = []
    for name in _pending_names(path):
        if name in skip:
            continue
        try:
            note = jsonlite.loads(read_bytes(os.path.join(_pending_dir(path), name)))
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            note = None
        if isinstance(note, dict) or keep_unreadable:
            out.append((name, note if isinstance(note, dict) else None))
    out.sort(key=lambda item: _stamp(item[1]))
    return out


def _stamp(note: dict | None) -> float:
    at = note.get("at") if note else None
    return at if isinstance(at, (int, float)) else 0.0


def _leave_pending(path: Path, entry: dict) -> None:
    """A note of this bump for the lock holder (written whole: temp name, then renamed)."""
    folder = _pending_dir(path)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    name = f"{time.time_ns():x}-{os.getpid()}-{os.urandom(4).hex()}.json"
    atomic_write(os.path.join(folder, name), jsonlite.dumps(entry, separators=(",", ":")).encode(), durable=False)
