"""The store's folders and files: layout, permissions, temp files left behind, free disk,
the archive's size."""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

from learn_cli.doctor import (
    OK,
    PROBLEM,
    REPAIRED,
    WARN,
    Check,
    capped,
    plural,
    size_text,
)

DISK_PROBLEM = 50 * 1024**2  # below this, captures start failing
DISK_WARN = 500 * 1024**2
ARCHIVE_WARN_BYTES = 20 * 1024**2
ARCHIVE_WARN_ENTRIES = 10_000


def missing_layout(lay) -> list[str]:
    wanted = [lay.home, lay.global_dir, lay.projects_dir, lay.sessions_dir, lay.analytics, lay.config,
              lay.global_errors, lay.global_patterns, lay.global_preferences, lay.global_archive, lay.stats]
    return [str(p.relative_to(lay.home)) or "." for p in wanted if not p.exists()]


def layout(store, missing: list[str]) -> Check:
    if not store.writable():
        return Check("layout", PROBLEM, f"the store at {store.home} is read-only: nothing can be learned or repaired",
                     [f"missing: {m}" for m in missing])
    still = missing_layout(store.layout)
    if still:
        return Check("layout", PROBLEM, "parts of the store are missing and could not be created", still)
    if "." in missing:
        return Check("layout", REPAIRED, f"there was no store: created one at {store.home}")
    if missing:
        return Check("layout", REPAIRED, f"created {plural(len(missing), 'missing part')} of the store", missing)
    return Check("layout", OK, "folders and files present")


def permissions(store, writable: bool) -> Check:
    wrong: list[tuple[str, int, int]] = []
    for path, want in _private_paths(store.home):
        try:
            mode = stat.S_IMODE(os.lstat(path).st_mode)
        except OSError:
            continue
        if mode != want:
            wrong.append((path, mode, want))
    if not wrong:
        return Check("permissions", OK, "folders 0700, files 0600")
    details, failed = [], 0
    for path, mode, want in wrong:
        rel = os.path.relpath(path, store.home)
        try:
            if not writable:
                raise PermissionError
            os.chmod(path, want)
            details.append(f"{rel}: {mode:04o} → {want:04o}")
        except OSError:
            failed += 1
            details.append(f"{rel}: {mode:04o}, should be {want:04o} (could not change it)")
    details = capped(details)
    if failed:
        return Check("permissions", PROBLEM, f"{failed} of {plural(len(wrong), 'path')} have the wrong mode", details)
    return Check("permissions", REPAIRED, f"fixed the mode of {plural(len(wrong), 'path')}", details)


def _private_paths(home: Path):
    yield str(home), 0o700
    for dirpath, dirnames, filenames in os.walk(home):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                yield path, 0o700
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                yield path, 0o600


def disk(store) -> Check:
    try:
        usage = shutil.disk_usage(store.home)
    except OSError as exc:
        return Check("disk", WARN, f"free space unknown ({exc.strerror})")
    free = f"{size_text(usage.free)} free of {size_text(usage.total)}"
    if usage.free < DISK_PROBLEM:
        return Check("disk", PROBLEM, f"almost full: {free}; captures will start failing")
    if usage.free < DISK_WARN:
        return Check("disk", WARN, f"low on space: {free}")
    return Check("disk", OK, free)


def stale_temps(store) -> Check:
    """Temp files of whole-file rewrites that a killed process left behind (never read as data)."""
    removed = store.remove_stale_temps()
    if removed:
        return Check(
            "temp files",
            REPAIRED,
            f"removed {plural(len(removed), 'temp file')} left by an interrupted rewrite",
            [str(p) for p in removed[:5]],
        )
    return Check("temp files", OK, "none left behind")


def archive(store) -> Check:
    lay = store.layout
    files = [lay.global_archive] + [lay.archive(pid) for pid in _pids(lay)]
    size = sum(p.stat().st_size for p in files if p.exists())
    entries = store.index.archived_count()
    days = _hard_delete_days(store)
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days * 86400))
    old = store.index.archived_before(cutoff)
    summary = f"{plural(entries, 'archived learning')}, {size_text(size)}"
    if size > ARCHIVE_WARN_BYTES or entries > ARCHIVE_WARN_ENTRIES:
        hint = (f"{old:,} are older than {days} days: `learn prune --hard` deletes them for good" if old
                else f"none is older than {days} days yet; `learn prune --hard` deletes those that are")
        return Check("archive", WARN, f"large archive: {summary}", [hint])
    return Check("archive", OK, summary + (f" ({old:,} older than {days} days)" if old else ""))


def _pids(lay) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(lay.projects_dir) if e.is_dir())
    except OSError:
        return []


def _hard_delete_days(store) -> int:
    return store.number("hard_delete_days")
