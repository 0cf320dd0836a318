"""`learn prune`: the knowledge base's housekeeping (seed: "Clean up knowledge base").

Steps, in the order they run (the report shows them as the seed's four):
0. once the key rules changed (a new release), key again the learnings whose text they now key
   otherwise (engine.rekey; reported with the merge, which then folds them with their copies);
1. re-score every live learning (`low_since` started or stopped: "Score changes");
2. archive the stale: score < 0.3 continuously for `archive_days` (engine.promotion);
3. merge duplicates inside each file: records with the same key and the same fix, or a refinement
   of it (two fixes of one key are alternatives and both stay; two processes may have
   stored one concurrently), then near-duplicates (engine.merge.near_duplicates, best first
   so the best record leads); conflicted records are left to `learn resolve`;
4. the session digest of the current project, raw and compressed (engine.digest), to show
   what compression saves and how much of the budget is used.
Then storage: logs whose superseded lines are a quarter of them are compacted, session
buffers older than `session_max_age_days` removed, and with `hard` archived learnings not used for
`hard_delete_days` deleted for good. Nothing is written with `dry_run`.

A file the last prune left duplicate-free and nothing touched since (same size and mtime,
remembered in analytics/prune.json, derived data) is not searched for duplicates again: a
daily prune of a large store only examines the files that changed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import reduce
from pathlib import Path

from learn_cli.engine import rekey, scoring
from learn_cli.engine.promotion import (
    _DELETE,
    DERIVE,
    WHOLE_STORE,
    Entry,
    _derive_missing,
    archive_stale,
    due_rowids,
    ensure_full,
    load_rowids,
    rescore,
    scored_at,
    slim,
    summary,
    write_entries,
)
from learn_cli.store.paths import number

NEAR_DUPLICATE = 0.85
LARGE_ARCHIVE_BYTES = 5 * 1024 * 1024
LIST_LIMIT = 100


@dataclass
class PruneReport:
    dry_run: bool = False
    hard: bool = False
    entries_before: int = 0
    entries_after: int = 0
    archived: list = field(default_factory=list)
    merged: list = field(default_factory=list)  # {id, ids, text}: one per unified entry
    removed: int = 0  # records folded into another
    rekeyed: int = 0  # learnings given the key today's key rules give them (engine.rekey)
    scored: int = 0
    rescored: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    budget: int = 0
    compacted_files: int = 0
    lines_folded: int = 0
    sessions_removed: int = 0
    hard_deleted: int = 0
    archive_entries: int = 0
    archive_bytes: int = 0
    archive_old: int = 0  # archived entries older than hard_delete_days (what --hard deletes)
    hard_delete_days: int = 90
    disk_before: int = 0
    disk_after: int = 0

    @property
    def disk_saved(self) -> int:
        return self.disk_before - self.disk_after

    @property
    def large_archive(self) -> bool:
        return not self.hard and (self.archive_old > 0 or self.archive_bytes > LARGE_ARCHIVE_BYTES)

    def as_json(self) -> dict:
        return {
            "dry_run": self.dry_run, "hard": self.hard,
            "entries": {"before": self.entries_before, "after": self.entries_after},
            "archived": {"count": len(self.archived), "items": self.archived[:LIST_LIMIT]},
            "merged": {"groups": len(self.merged), "removed": self.removed, "items": self.merged[:LIST_LIMIT]},
            "rekeyed": self.rekeyed,
            "scores": {"updated": self.scored, "rescored": self.rescored},
            "context": {"before_tokens": self.tokens_before, "after_tokens": self.tokens_after,
                        "budget": self.budget},
            "storage": {"compacted_files": self.compacted_files, "lines_folded": self.lines_folded,
                        "sessions_removed": self.sessions_removed, "hard_deleted": self.hard_deleted,
                        "disk_before": self.disk_before, "disk_after": self.disk_after,
                        "disk_saved": self.disk_saved},
            "archive": {"entries": self.archive_entries, "bytes": self.archive_bytes,
                        "older_than_hard_delete_days": self.archive_old,
                        "hard_delete_days": self.hard_delete_days, "suggest_hard": self.large_archive},
        }


def run_prune(store, project=None, now=None, dry_run: bool = False, hard: bool = False,
              loads: Callable | None = None, progress: Callable | None = None) -> PruneReport:
    from learn_cli.store.jsonl import fast_loads

    loads = loads or fast_loads()
    now = scoring.parse_time(now) or datetime.now(UTC)
    cfg = store.config()
    report = PruneReport(dry_run=dry_run, hard=hard)
    report.hard_delete_days = number(cfg.get("hard_delete_days"), "hard_delete_days")
    report.disk_before = data_bytes(store)
    store.refresh(loads=loads)
    store.index.derive = DERIVE
    _derive_missing(store, WHOLE_STORE, loads)
    keyed = rekey.changes(store, loads, progress)  # None: the key rules are those of the last prune
    rules_changed, keyed = keyed is not None, keyed or {}
    checked = _checked_files(store)
    # Only the rows that may change are read (see rows_to_prune); the others count.
    live_files = [store.path_of(rel) for rel in store.index.live_files()]
    entries = load_rowids(store, rows_to_prune(store, now, [p for p in live_files if not checked(p)], keyed), loads)
    report.rekeyed = _key_again(entries, keyed)
    rekeyed_files = {e.path for e in entries if e.rowid in keyed}
    report.entries_before = sum(store.index.live_counts().values())
    report.rescored = rescore(entries, now, progress=progress)[1]
    report.scored = report.entries_before  # every live row is scored; only those read may change
    report.archived = archive_stale(entries, now, number(cfg.get("promote_min_projects"), "promote_min_projects"),
                                    number(cfg.get("archive_days"), "archive_days"), store, loads)
    merge_duplicates(entries, now, report, skip=lambda path: checked(path) and path not in rekeyed_files,
                     full=lambda group: ensure_full(store, group, loads, keep=True), done=slim)
    report.entries_after = report.entries_before - len(report.archived) - report.removed
    doomed = _hard_deletions(store, now, report, loads)
    if not dry_run:
        write_entries(store, entries, progress=progress, loads=loads)
    with store.batched():
        for path, ids in ({} if dry_run else doomed).items():
            store.update_many(path, {}, ids, rewrite=True)
        _compact(store, report, dry_run)
    if not dry_run:
        _remember_checked(store, live_files)
        if rules_changed:
            rekey.remember_rules(store)
    _clean_sessions(store, now, report, dry_run, number(cfg.get("session_max_age_days"), "session_max_age_days"))
    _archive_usage(store, now, report, doomed)
    _context(store, project, report, loads)
    report.disk_after = data_bytes(store) if not dry_run else report.disk_before
    return report


def rows_to_prune(store, now: datetime, searched: list[Path], keyed: dict[int, tuple[str, dict]]) -> list[int]:
    """The rows a prune decides from, in the index's order: those the clock may have changed
    (promotion.due_rowids: rescore, archive_stale), those keyed again (engine.rekey) and every
    live row of the files searched for duplicates (those the last prune did not leave as they
    are now, and those of the rows keyed again). Any other row is neither due nor searched:
    nothing about it changes."""
    rowids = due_rowids(store, now) | set(keyed)
    rels = {store.index.rel(path) for path in searched} | {rel for rel, _fields in keyed.values()}
    rowids |= store.index.live_rowids_in_files(sorted(rels))
    return sorted(rowids)


def _key_again(entries: list[Entry], keyed: dict[int, tuple[str, dict]]) -> int:
    """Give the entries keyed again their new fields (written with the prune's other changes);
    returns how many took another key."""
    moved = 0
    for e in entries:
        fields = keyed[e.rowid][1] if e.rowid in keyed else None
        if fields:
            moved += "key" in fields
            for name, value in fields.items():
                e.set(name, value)
    return moved


# ---------------------------------------------------------------- merging duplicates


def merge_duplicates(entries: list[Entry], now: datetime, report: PruneReport,
                     skip: Callable[[Path], bool] = lambda path: False,
                     full: Callable[[list[Entry]], None] = lambda group: None,
                     done: Callable[[list[Entry]], None] = lambda group: None) -> None:
    """Fold same-key and near-duplicate records of one file into the best of them (files that
    `skip` says were checked by an earlier prune and have not changed since are left alone;
    `full` reads the records of the files that are searched whole, `done` is told when a file
    is finished, so that a first prune does not hold every record of the store at once)."""
    from learn_cli.engine.merge import near_duplicates

    by_file: dict[Path, list[Entry]] = {}
    for e in entries:
        if not e.archived and e.rec.get("status") != "conflicted":
            by_file.setdefault(e.path, []).append(e)
    by_file = {path: group for path, group in by_file.items() if not skip(path)}
    for group in by_file.values():
        if len(group) < 2:
            continue
        full(group)
        group.sort(key=lambda e: _rank(e, now))
        by_key: dict[str, list[Entry]] = {}
        for e in group:
            if e.rec.get("key"):
                by_key.setdefault(e.rec["key"], []).append(e)
        for same in by_key.values():
            for copies in _same_fix(same):
                if len(copies) > 1:
                    _fold(copies, report)
        rest = [e for e in group if not e.removed]
        owner = {id(e.rec): e for e in rest}
        for similar in near_duplicates([e.rec for e in rest], NEAR_DUPLICATE):
            _fold([owner[id(r)] for r in similar], report)
        done(group)


def _same_fix(same_key: list[Entry]) -> list[list[Entry]]:
    """Copies of one key grouped by fix, best first: a fix and its refinements (`pip install x`,
    `pip install x[extra]`) are one learning; two different fixes are alternatives, both kept."""
    from learn_cli.engine.knowledge import same_learning

    groups: list[list[Entry]] = []
    for e in same_key:
        home = next((g for g in groups if same_learning(g[0].rec, e.rec)), None)
        if home is None:
            groups.append([e])
        else:
            home.append(e)
    return groups


def _rank(e: Entry, now: datetime) -> tuple:
    """Best first: higher score, then more frequent, then older (the original), then id."""
    return (-scored_at(e, now), -scoring.frequency_of(e.rec), str(e.rec.get("created") or ""),
            e.rec["id"])


def _fold(group: list[Entry], report: PruneReport) -> None:
    from learn_cli.engine.merge import merge

    leader, others = group[0], group[1:]
    merged = reduce(merge, [leader.rec, *(e.rec for e in others)])
    merged["merged_from"] = _union(leader.rec.get("merged_from"), [e.rec["id"] for e in others])
    for name in set(leader.rec) | set(merged):
        if name not in ("id", "updated"):
            leader.set(name, merged.get(name, _DELETE))
    for e in others:
        e.removed = True
    report.removed += len(others)
    text = summary(leader.rec) if len(report.merged) < LIST_LIMIT else ""
    report.merged.append({"id": leader.rec["id"], "ids": [e.rec["id"] for e in others], "text": text})


# ---------------------------------------------------------------- storage


def _hard_deletions(store, now: datetime, report: PruneReport, loads: Callable) -> dict[Path, list[str]]:
    """Entries archived more than hard_delete_days ago (deleted only with --hard). Aged by
    `updated` — set when the entry moved to the archive — so a learning archived today is
    never deleted by the same or the next prune, whatever its last use."""
    cutoff = now.timestamp() - report.hard_delete_days * 86400
    old: dict[Path, list[str]] = {}
    for rowid, rel, rid, updated in store.index.archived_rows():
        when = scoring.parse_time(updated)
        if when is None:  # no usable `updated`: the record is read for its last use
            rec = loads(store.index.data_of(rowid))
            when = scoring.parse_time(rec.get("last_used")) or scoring.parse_time(rec.get("created"))
        if when is not None and when.timestamp() < cutoff:
            old.setdefault(store.path_of(rel), []).append(rid)
    report.archive_old = sum(len(ids) for ids in old.values())
    if not report.hard:
        return {}
    report.hard_deleted = report.archive_old
    return old


# A log is folded once a quarter of its lines are dead. A daily prune appends a few patched
# lines to hundreds of files (scores crossing 0.3, the archived removed); rewriting each of
# them for those few lines made most of its time at 100,000 learnings (838 files for 4,541
# lines), and they fold a few days later with the rest.
FOLD_SHARE = 4  # fold when superseded lines × FOLD_SHARE ≥ lines


def _compact(store, report: PruneReport, dry_run: bool) -> None:
    """Fold every log whose superseded lines (lines − live − corrupt) are a quarter of it."""
    for rel, lines, superseded in store.index.superseded_lines():
        if not superseded or superseded <= 0 or superseded * FOLD_SHARE < lines or not rel.endswith(".jsonl"):
            continue
        report.compacted_files += 1
        if dry_run:
            report.lines_folded += superseded
            continue
        before, after = store.compact(store.path_of(rel))
        report.lines_folded += before - after


def _clean_sessions(store, now: datetime, report: PruneReport, dry_run: bool, max_age_days) -> None:
    cutoff = now.timestamp() - max_age_days * 86400
    try:
        files = list(os.scandir(store.layout.sessions_dir))
    except FileNotFoundError:
        return
    for entry in files:
        if not entry.name.endswith(".jsonl") or not entry.is_file(follow_symlinks=False):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime >= cutoff:
                continue
            report.sessions_removed += 1
            if not dry_run:
                os.unlink(entry.path)
                _unlink_quietly(entry.path + ".lock")
        except OSError:
            continue


def _archive_usage(store, now: datetime, report: PruneReport, deleted: dict) -> None:
    report.archive_entries = store.index.archived_count()
    if report.dry_run:
        report.archive_entries -= sum(len(ids) for ids in deleted.values())
        report.archive_entries += len(report.archived)
    lay = store.layout
    files = [lay.global_archive] + [lay.archive(pid) for pid in _project_ids(store)]
    report.archive_bytes = sum(_size(f) for f in files)


def _context(store, project, report: PruneReport, loads: Callable) -> None:
    from learn_cli.engine.digest import session_digest

    if project is None:
        return
    report.budget = store.number("budget", project.id)
    result = session_digest(store, project, report.budget, loads=loads, keep=not report.dry_run)
    report.tokens_before, report.tokens_after = result.before_tokens, result.tokens


def _state_path(store) -> Path:
    return store.layout.analytics / "prune.json"


def _checked_files(store) -> Callable[[Path], bool]:
    """Which files the last prune left duplicate-free and nothing has touched since: derived
    data (a missing or unreadable state only means every file is checked again)."""
    import json

    try:
        seen = json.loads(_state_path(store).read_bytes()).get("files", {})
    except (OSError, ValueError, AttributeError):
        seen = {}

    def unchanged(path: Path) -> bool:
        recorded = seen.get(store.index.rel(path))
        return recorded is not None and recorded == list(_stat(path))

    return unchanged


def _remember_checked(store, paths) -> None:
    import json

    from learn_cli.store.jsonl import atomic_write

    files = {store.index.rel(p): list(_stat(p)) for p in paths if _stat(p) != (0, 0)}
    try:
        atomic_write(_state_path(store), json.dumps({"files": files}).encode(), durable=False)
    except OSError:
        pass  # only an optimisation: the next prune checks everything


def _stat(path) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0)
    return (st.st_size, st.st_mtime_ns)


def data_bytes(store) -> int:
    """Bytes of everything the store holds as data (records, sessions); not the derived index."""
    lay = store.layout
    total = sum(_size(f) for f in (*lay.global_files(), lay.global_archive))
    for pid in _project_ids(store):
        total += _size(lay.learnings(pid)) + _size(lay.archive(pid))
    try:
        total += sum(e.stat().st_size for e in os.scandir(lay.sessions_dir) if e.is_file())
    except OSError:
        pass
    return total


def _project_ids(store) -> list[str]:
    try:
        return [e.name for e in os.scandir(store.layout.projects_dir) if e.is_dir()]
    except FileNotFoundError:
        return []


def _size(path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _union(first, second) -> list:
    out = [x for x in (first if isinstance(first, list) else []) if x]
    for x in second:
        if x not in out:
            out.append(x)
    return out

