"""Promotion (SPEC §2.1): re-score every learning, promote project learnings to global, list
candidates, archive the stale, flag conflicts. `learn promote` runs it over the whole store
(`run_promotion`), the SessionEnd hook over one project (`promote_project`).

Decisions:
- The same learning in several projects is grouped by `key` and, for errors, by fix: two fixes
  of one key are alternatives, each judged on its own evidence (issue 10). A group is judged as a whole:
  frequency = the sum of its copies, projects = the union of their `projects` and of the
  project files they live in, so "seen in ≥ 3 projects" counts every project file the key
  appears in.
- A promoted group becomes one global record (status `global`, `promoted_from` = the copies'
  ids) in the global file for its type. When a live global learning with that key already
  exists, the copies not yet linked to it are folded into it instead (a new project's sighting
  of a global learning is folded on the next run whatever its own score). The fold is
  idempotent: frequency and helped counts take the larger of the two (the capture path already
  bumps the global copy on every sighting; summing would count them twice). Folded copies get
  `promoted_to` and stay in their projects; a linked copy is not folded again.
- A group is a candidate (0.3 ≤ score ≤ 0.7, or > 0.7 in too few projects) unless the
  learning is already global.
- Archive: a record whose score stayed < 0.3 for `archive_days` (its `low_since`) moves to
  the archive of its scope (status `archived`); `low_since` is updated on every record first.
- Conflicts: engine.conflicts over the live learnings (same scope); and, before a group is
  folded into global, between its copies and the global copy across projects (two projects
  may each keep their own fix, but global advice must be one) — copies compared one per
  distinct advice, every copy of two conflicting pieces of advice flagged. Both sides get
  status `conflicted`, `conflict_with` and `pre_conflict_status` (restored when resolved);
  neither is promoted. A conflicted learning whose partners are all gone is released.
- `promote_project` reads that project's learnings and, through the index, the other copies of
  the same keys and the global copies; it re-scores, archives and links only that project's
  records (other projects' copies are linked by their own session end or `learn promote`),
  and checks conflicts only against records that can meet that project's.

Writes are field patches applied under each file's lock to the record as it is then
(Store.update_many), so a capture that updated a record meanwhile is not overwritten; a file
with changes to at least half of its records is rewritten whole, atomically.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import reduce
from sys import intern

from learn_cli.engine import scoring
from learn_cli.store import index as _index
from learn_cli.store.jsonl import fast_loads
from learn_cli.store.paths import ARCHIVE_FILE, number
from learn_cli.store.record import LIVE_STATUSES, SHOWN_STATUSES, is_project_fact, new_id
from learn_cli.store.score import UTC, datetime  # the C module alone: see store.score
from learn_cli.text import jsonlite

TYPE_CHECKING = False  # no pathlib here: a SessionEnd hook passes its store's string paths
if TYPE_CHECKING:
    from pathlib import Path

WHOLE_STORE = _index.WHOLE_STORE  # what a whole-store run reads (its live rows)
LIST_LIMIT = 100  # items kept per list in as_json()
SUMMARY_WIDTH = 72
_DELETE = object()  # patch value: remove the field
_SCOPE_STATUS = {"project": "active", "global": "global"}
_SCORED_FIELDS = frozenset(("frequency", "impact", "last_used", "created"))  # what the score reads


class Entry:
    """One live record and where it lives; `patch` holds the fields this run changed.
    (Plain classes here, not dataclasses: the SessionEnd hook imports this module.)"""

    __slots__ = ("path", "scope", "pid", "rec", "patch", "archived", "removed", "rowid", "full", "score", "decided")

    def __init__(self, path: Path, scope: str, pid: str, rec: dict, rowid: int = 0, full: bool = True):
        self.path = path
        self.scope = scope  # project | global
        self.pid = pid
        self.rec = rec  # the record, or with full=False only its DECISION_FIELDS (see derive_fields)
        self.rowid = rowid  # its row in the index (0: not from the index)
        self.full = full
        self.patch: dict = {}
        self.archived = False  # to be moved to the archive of its scope
        self.removed = False  # to be deleted (folded into another record)
        self.score: float | None = None  # its score at the run's clock, once scored (rescore)
        self.decided: dict | None = None  # its decision fields while `rec` is whole (ensure_full, slim)

    def set(self, name: str, value) -> None:
        if name in _SCORED_FIELDS:
            self.score = None  # scored again when asked (scored_at)
        if value is _DELETE:
            if name in self.rec:
                del self.rec[name]
                self.patch[name] = _DELETE
        elif self.rec.get(name) != value:
            self.rec[name] = value
            self.patch[name] = value


class PromotionReport:
    def __init__(self, now: str):
        self.now = now
        self.dry_run = False
        self.scanned: dict = {}  # pid -> live learnings of that project
        self.global_count = 0
        self.promoted: list = []
        self.candidates: list = []
        self.archived: list = []
        self.conflicts: list = []
        self.rescored = 0  # records scored
        self.low_since_changed = 0  # records whose archive clock started or stopped
        self.released = 0  # conflicted records whose partners are gone
        self.files_written = 0

    def counts(self) -> dict:
        return {"scanned": sum(self.scanned.values()) + self.global_count, "projects": len(self.scanned),
                "promoted": len(self.promoted), "candidates": len(self.candidates),
                "archived": len(self.archived), "conflicts": len(self.conflicts),
                "new_conflicts": sum(1 for c in self.conflicts if c["new"]), "rescored": self.rescored,
                "low_since_changed": self.low_since_changed, "released": self.released,
                "files_written": self.files_written}

    def as_json(self, limit: int = LIST_LIMIT) -> dict:
        return {"now": self.now, "dry_run": self.dry_run, "counts": self.counts(),
                "scanned": dict(sorted(self.scanned.items())), "promoted": self.promoted[:limit],
                "candidates": self.candidates[:limit], "archived": self.archived[:limit],
                "conflicts": self.conflicts[:limit]}


# ---------------------------------------------------------------- entry points


def run_promotion(store, now=None, dry_run: bool = False, progress: Callable | None = None,
                  loads: Callable | None = None) -> PromotionReport:
    """Promotion over the whole store. `progress(phase, done, total)` is called as work goes."""
    from learn_cli.engine.conflicts import conflicts_among

    loads = loads or fast_loads()
    store.refresh(loads=loads)
    store.index.derive = DERIVE
    _fill_terms(store)  # before deriving: the rows derived now are noted by the triggers
    _derive_missing(store, WHOLE_STORE, loads)
    _store_terms(store, loads)
    # The conflicts read the features of the rows they can pair (conflict_items), with their
    # id, key, status and projects, one row at a time (only the groups they build are held,
    # freed when they return); the decisions read only the rows they can change (what_may_change).
    conflicts = conflicts_among(conflict_items(store, loads),
                                direction_texts=lambda rec, src, dst: _direction_texts(store, rec, src, dst))
    at = scoring.parse_time(now) or datetime.now(UTC)
    totals = store.index.live_counts()
    rowids = what_may_change(store, at, totals, {rid for pair in conflicts for rid in pair[:2]})
    entries = load_rowids(store, rowids, loads)
    return _Promotion(store, entries, at, focus=None, progress=progress, loads=loads, conflicts=conflicts,
                      totals=totals).run(dry_run)


def conflict_items(store, loads: Callable):
    """What conflicts_among reads of a whole store, in the index's order: the rows that share
    a term of their conflict features with a row of another variant (index v12's terms: the
    same key with another fix, a direction met the other way, a slot with another stance, a
    core with the other polarity). A group of records that agree pairs none of them, and every
    row of a group that can pair is read, so the conflicts are those of every row, in the same
    order. Every live row when the terms are not there (_fill_terms failed) or some row could
    not be derived (its features come from its record)."""
    import sqlite3

    index = store.index
    try:
        rowids = index.conflict_rowids()
    except sqlite3.Error:
        rowids = None
    if rowids is None or index.rowids_to_derive(WHOLE_STORE, _DERIVED_VERSION):
        yield from stream_features(store, WHOLE_STORE, loads)
        return
    for start in range(0, len(rowids), 500):
        yield from stream_features(store, _index.with_rowids(rowids[start:start + 500]), loads)


def _fill_terms(store) -> None:
    """Every row with features due for its conflict terms, once (an index of v11; the triggers
    note the rows given features from then on)."""
    import sqlite3

    try:
        store.index.fill_terms()
    except sqlite3.Error:
        pass  # (a busy or read-only index) the conflicts then read every row


def _store_terms(store, loads: Callable, batch: int = 5000) -> None:
    """The conflict terms of the rows given features since the last promote (conflict_terms),
    a batch per transaction."""
    import sqlite3

    from learn_cli.engine.conflicts import Features, conflict_terms

    try:
        while due := store.index.terms_due(batch):
            store.index.store_terms([(rowid, conflict_terms(key, Features(*loads(features))))
                                     for rowid, key, features in due])
    except (sqlite3.Error, TypeError, ValueError):
        pass  # rows left due: conflict_items reads every row while any is (Index.conflict_rowids)


def due_rowids(store, now: datetime) -> set[int]:
    """The live rows whose lifecycle the clock may have changed by `now` (rescore's archive
    clock, archive_stale), from the index's due columns (scoring.clock_due; an empty one is
    due). Every other row decides as it did at the last run: its score only fell, and not
    below LOW_SCORE, or its clock runs on, not yet archive_days old."""
    archive_days = number(store.config().get("archive_days"), "archive_days")
    moment = now.timestamp()
    return store.index.due_rowids(moment, moment - archive_days * 86400)


def what_may_change(store, now: datetime, totals: dict[str, int], conflicting: set[str]) -> list[int]:
    """The rows a whole-store promote decides from, in the order of the index (a whole
    store's scan): those due (due_rowids); every copy of a learning that has an active copy,
    a global one or a conflicted one (groups are judged whole, and a conflicted copy may be
    released to its status before); the conflicted (released when their partners are gone);
    the rows the conflicts name. A row outside them is in no group that _promote_groups
    considers, not due, and in no conflict: nothing about it changes."""
    index = store.index
    pids = sorted(totals)
    keys, rowids = index.keys_with_status([p for p in pids if p], ("active", "conflicted", None))
    global_keys, global_rows = index.keys_with_status([""], (*LIVE_STATUSES, None))
    keys |= global_keys
    rowids |= global_rows | due_rowids(store, now)
    rowids |= index.live_rowids_with("key", sorted(keys))  # '' among them: rows without a key, judged by id
    rowids |= index.live_rowids_with("id", sorted(conflicting))
    return sorted(rowids)


def load_rowids(store, rowids: list[int], loads: Callable) -> list[Entry]:
    """The entries of these rows (derived already), in their order, 500 to a query."""
    paths: dict[str, Path] = {}
    return [_entry(store, paths, row, loads) for start in range(0, len(rowids), 500)
            for row in store.index.derived_rows(_index.with_rowids(rowids[start:start + 500]))]


def promote_project(store, pid: str, now=None, dry_run: bool = False, loads: Callable = jsonlite.loads,
                    keys: list[str] | None = None) -> PromotionReport:
    """The cheap variant for one project (SessionEnd): its learnings (with `keys`, only those
    of these keys: what a session changed) plus the copies of the same keys elsewhere, found
    through the index; only this project's records are re-scored and archived."""
    lay = store.layout
    store.refresh([lay.learnings(pid), *lay.global_files()], loads)
    store.index.derive = DERIVE
    own = load_entries(store, _index.of_project(pid) if keys is None else _index.of_project_keys(pid, keys), loads)
    keys = sorted({e.rec.get("key") for e in own if e.rec.get("key")})
    others = []
    for start in range(0, len(keys), 500):
        others += load_entries(store, _index.copies_elsewhere(keys[start:start + 500], pid), loads)
    focus = {(e.path, e.rec["id"]) for e in own}
    return _Promotion(store, own + others, now, focus=focus, loads=loads).run(dry_run)


def load_entries(store, rows: _index.Selection, loads: Callable, derived: bool = False) -> list[Entry]:
    """The live records of an index selection, as entries holding only their decision
    fields (the index's `derived` column, filled first where empty, unless the caller just
    did: `derived`): a fraction of each record to parse and to hold."""
    if not derived:
        _derive_missing(store, rows, loads)
    paths: dict[str, Path] = {}
    return [_entry(store, paths, row, loads) for row in store.index.derived_rows(rows)]


# Decision fields with few distinct values: one string each for the whole run, not one per
# entry (type and status are ~5.6 MB of the 50,000 entries of promote again at 100,000; the
# archive clocks of an imported home mostly share the import's time).
_FEW_VALUES = ("type", "status", "low_since")


def _entry(store, paths: dict[str, Path], row: tuple, loads: Callable) -> Entry:
    """The entry of a `derived_rows` row: its decision fields, or the record itself."""
    rel, scope, pid, rowid, derived = row[:5]
    path = paths.get(rel)
    if path is None:
        path = paths[rel] = store.path_of(rel)
    fields = _parse_derived(derived, loads)
    if fields is not None:
        for name in _FEW_VALUES:
            value = fields.get(name)
            if type(value) is str:
                fields[name] = intern(value)
        return Entry(path, scope, pid, fields, rowid, full=False)
    # not stored (a home we may not write) or rewritten meanwhile: the record itself
    return Entry(path, scope, pid, loads(_row_data(store, rowid)), rowid)


def _derive_missing(store, rows: _index.Selection, loads: Callable, batch: int = 2000) -> None:
    """Fill the derived columns where empty or of an older version, a batch per transaction
    (hooks writing meanwhile wait for one batch, not for the whole store)."""
    import sqlite3

    todo = store.index.rowids_to_derive(rows, _DERIVED_VERSION)
    for start in range(0, len(todo), batch):
        chunk = todo[start:start + batch]
        # Only rows still holding the data that was derived: a writer may have replaced them. The
        # features are derived again with the decision fields: both are of the version that
        # wrote them (the conflict rules that read texts change with it).
        fresh = [(derive_fields(rec), derive_features(rec), _index.score_inputs(rec) if no_scores else None,
                  scoring.clock_due(rec), rowid, data)
                 for rowid, data, no_scores in store.index.to_derive(chunk) for rec in (loads(data),)]
        try:
            store.index.store_derived(fresh)
        except sqlite3.Error:
            return  # only derived data: the records are read whole instead
    if rows is WHOLE_STORE:
        try:
            store.index.all_derived(_DERIVED_VERSION)
        except sqlite3.Error:
            pass  # the next run checks every row again


# What a whole-store run reads of every record (see derive_fields); the texts are read only for the
# few records it writes or shows (Entry.full, ensure_full).
DECISION_FIELDS = ("id", "key", "type", "status", "frequency", "impact", "last_used", "low_since", "projects",
                   "promoted_to", "conflict_with", "pre_conflict_status")
_DERIVED_VERSION = 5  # 3: `advice`, which fix of its key a record is; 4: features without topic-only tools;
# 5: `here`, a project's own fact


def decision_fields(rec: dict) -> dict:
    """A record's DECISION_FIELDS, plus `created` when there is no usable last use and `project`
    when no `projects` (the fallbacks of scoring)."""
    fields = {name: rec[name] for name in DECISION_FIELDS if name in rec}
    fields["advice"] = advice_of(rec)
    if is_project_fact(rec):
        fields["here"] = True  # (a project's own fact: never promoted, `_promote_groups`)
    if "created" in rec and scoring.parse_time(rec.get("last_used")) is None:
        fields["created"] = rec["created"]
    if "project" in rec and not rec.get("projects"):
        fields["project"] = rec["project"]
    return fields


def derive_fields(rec: dict) -> str:
    """The index's `derived` value of a record (see decision_fields)."""
    return _dumps([_DERIVED_VERSION, decision_fields(rec)])


def derive_features(rec: dict) -> str:
    """The index's `features` value of a record: its conflict features."""
    from learn_cli.engine.conflicts import record_features

    return _dumps(tuple(record_features(rec)))


def _dumps(value) -> str:
    """Compact JSON text of a derived value: orjson's when a whole-store command loaded it
    (`store.jsonl.fast_loads`; a third of the cost of deriving 100,000 records was `json.dumps`), the
    standard library's otherwise (the hooks do not import orjson)."""
    fast = sys.modules.get("orjson")
    if fast is not None:
        try:
            return fast.dumps(value).decode()
        except TypeError:  # a value orjson does not take (an integer beyond 64 bits)
            pass
    return jsonlite.dumps(value, ensure_ascii=False, separators=(",", ":"))


DERIVE = (derive_fields, derive_features, scoring.clock_due)  # for Index.derive


def _parse_derived(text, loads: Callable) -> dict | None:
    """The decision fields of a derived value; None when unusable (absent, older version)."""
    try:
        version, fields = loads(text)
    except (TypeError, ValueError):
        return None
    return fields if version == _DERIVED_VERSION and isinstance(fields, dict) and "id" in fields else None


def stream_features(store, rows: _index.Selection, loads: Callable):
    """(id, key, status, projects) as a small record, and the conflict features, of every live
    record of an index selection, one at a time (from the whole record where the
    features column is empty)."""
    from learn_cli.engine.conflicts import Features, record_features

    for rid, key, status, projects, features, data in store.index.feature_rows(rows):
        if data is not None:  # not derived (a home where it could not be stored): the record itself
            rec = loads(data)
            yield {"id": rid, "key": key, "status": status, "projects": rec.get("projects")}, record_features(rec)
        else:
            yield ({"id": rid, "key": key, "status": status, "projects": loads(projects)},
                   Features(*loads(features)))


def derived_features(store, rel: str, loads: Callable) -> dict:
    """id -> the conflict features the index holds for the rows of one file derived at this
    version (what record_features gives their records: derived from the same data, checked
    by tests/test_exchange_stream.py); rows not derived are absent."""
    from learn_cli.engine.conflicts import Features

    return {rid: Features(*loads(features)) for rid, features in store.index.features_in_file(rel, _DERIVED_VERSION)}


def _direction_texts(store, rec: dict, src: str, dst: str) -> tuple[str, str]:
    """The shortened texts of a record's direction src → dst (digests), read from the record
    as the index holds it: the conflicts of a whole-store run hold digests only."""
    from learn_cli.engine.conflicts import record_features

    for _, _, _, whole in store.index.by_id(rec["id"]):
        for d_src, d_dst, src_text, dst_text in record_features(whole).directions:
            if (d_src, d_dst) == (src, dst):
                return src_text, dst_text
    return src, dst  # not found (rewritten meanwhile): the digests stand for the texts


def _row_data(store, rowid: int) -> str:
    data = store.index.data_of(rowid)
    return "{}" if data is None else data


def slim(entries: list[Entry]) -> None:
    """Back to decision fields once the whole records are no longer needed (prune, file by file):
    what was changed stays in each entry's patch, applied to the record as it is when written."""
    for e in entries:
        if e.full and e.rowid and not e.archived:
            # unchanged since ensure_full read it: the decision fields it was loaded with
            # (decision_fields' digest of the fix was ~5 % of a first prune at 100,000)
            e.rec = e.decided if e.decided is not None and not e.patch else decision_fields(e.rec)
            e.decided = None
            e.full = False


def ensure_full(store, entries: list[Entry], loads: Callable = jsonlite.loads, keep: bool = False) -> None:
    """Replace the decision fields of entries with their whole records (as the index holds
    them now), keeping what this run changed (the patches); with `keep`, the decision fields
    too, for `slim` to give back (only while a file is searched: ~1 KB a record)."""
    partial = [e for e in entries if not e.full]
    for start in range(0, len(partial), 500):
        chunk = partial[start:start + 500]
        data = store.index.data_of_rows([e.rowid for e in chunk])
        for e in chunk:
            rec = loads(data[e.rowid]) if e.rowid in data else None
            decided = e.rec if keep else None  # what it was decided on, the record as its row holds it (slim)
            if not isinstance(rec, dict) or rec.get("id") != e.rec["id"]:  # rewritten meanwhile: find it by id
                decided = None
                found = [r for f, _, _, r in store.index.by_id(e.rec["id"]) if store.path_of(f) == e.path]
                if not found:  # deleted meanwhile (`learn forget`): nothing of it is written
                    e.patch.clear()
                    e.archived = e.removed = False
                    e.full = True
                    continue
                rec = found[0]
            e.decided = decided
            e.rec = _patcher(e.patch)(rec)
            e.full = True
            e.score = None  # a capture may have changed what it reads since it was scored


# ---------------------------------------------------------------- the run


class _Promotion:
    def __init__(self, store, entries: list[Entry], now, focus: set | None, progress: Callable | None = None,
                 loads: Callable = jsonlite.loads, conflicts: list | None = None, totals: dict[str, int] | None = None):
        self.store = store
        self.loads = loads
        self.conflicts = conflicts  # the store's conflicting pairs when found beforehand
        # pid -> live rows ('' global) of the whole store, when `entries` are only the rows that
        # may change (what_may_change): what the report counts
        self.totals = totals
        self.entries = entries
        self.now = scoring.parse_time(now) or datetime.now(UTC)
        cfg = store.config()
        self.min_projects = number(cfg.get("promote_min_projects"), "promote_min_projects")
        self.archive_days = number(cfg.get("archive_days"), "archive_days")
        self.focus = focus
        self.focus_pid = next((e.pid for e in entries if (e.path, e.rec["id"]) in focus), "") if focus else ""
        self.progress = progress or (lambda phase, done, total: None)
        self.report = PromotionReport(now=scoring.format_time(self.now))
        self.by_id: dict[str, list[Entry]] = {}
        for e in entries:
            self.by_id.setdefault(e.rec["id"], []).append(e)
        self.new_globals: dict[Path, list[dict]] = {}
        self.partners: dict[int, tuple[list, set]] = {}  # id(entry) -> its conflict_with, as list and set

    def in_focus(self, e: Entry) -> bool:
        return self.focus is None or (e.path, e.rec["id"]) in self.focus

    def run(self, dry_run: bool) -> PromotionReport:
        self.report.dry_run = dry_run
        self._count_scanned()
        self._rescore()
        self._flag_conflicts()
        if self.focus is None:
            self._release_orphans()
        self._promote_groups()
        self._archive_stale()
        if not dry_run:
            self.report.files_written = write_entries(self.store, self.entries, self.new_globals, self.progress,
                                                      self.loads)
        self.report.candidates.sort(key=lambda c: (-c["score"], c["id"]))
        for items, fields in ((self.report.promoted, ("text",)), (self.report.candidates, ("text",)),
                              (self.report.conflicts, ("a_text", "b_text"))):
            for n, item in enumerate(items):
                for name in fields:
                    item[name] = self._summary(item[name]) if n < LIST_LIMIT else ""
        return self.report

    def _summary(self, entries: list[Entry]) -> str:
        """A report line's text: the summary of the copies it stands for, read in full."""
        ensure_full(self.store, entries, self.loads)
        return summary(group_view(entries) if len(entries) > 1 else entries[0].rec)

    def _count_scanned(self) -> None:
        if self.totals is not None:
            self.report.scanned = {pid: n for pid, n in self.totals.items() if pid}
            self.report.global_count = self.totals.get("", 0)
            return
        for e in self.entries:
            if not self.in_focus(e):
                continue
            if e.scope == "project":
                self.report.scanned[e.pid] = self.report.scanned.get(e.pid, 0) + 1
            else:
                self.report.global_count += 1

    def _rescore(self) -> None:
        scored, changed = rescore(self.entries, self.now, self.in_focus, self.progress)
        if self.totals is not None:
            scored = sum(self.totals.values())  # every live row is scored; only those loaded may change
        self.report.rescored, self.report.low_since_changed = scored, changed

    # -- conflicts -------------------------------------------------------------------------
    def _flag_conflicts(self) -> None:
        """Flag the conflicts among the candidates (their features read from the index)."""
        from learn_cli.engine.conflicts import conflicts_among

        if self.conflicts is None:
            rowids = [e.rowid for e in self._conflict_candidates() if e.rowid]
            self.conflicts = conflicts_among(item for start in range(0, len(rowids), 500) for item in stream_features(
                self.store, _index.with_rowids(rowids[start:start + 500]), self.loads))
        for a, b, reason in self.conflicts:
            ea, eb = self.by_id.get(a, []), self.by_id.get(b, [])
            if ea and eb and (self.focus is None or any(self.in_focus(e) for e in ea + eb)):
                self._flag(ea, eb, reason)

    def _conflict_candidates(self) -> list[Entry]:
        """Everything, or for one project its records and those that can meet them (global
        ones, or ones that list the project): pairs between other projects are not its business."""
        if self.focus is None:
            return self.entries
        return [e for e in self.entries if self.in_focus(e) or e.scope == "global"
                or e.rec.get("status") == "global" or not e.rec.get("projects")
                or self.focus_pid in (e.rec.get("projects") or ())]

    def _flag(self, side_a: list[Entry], side_b: list[Entry], reason: str) -> None:
        """Flag both sides (each side: the copies of one record, or of one distinct fix)."""
        a, b = side_a[0].rec, side_b[0].rec
        new = False
        for mine, theirs in ((side_a, side_b), (side_b, side_a)):
            their_ids = list(dict.fromkeys(e.rec["id"] for e in theirs))
            for e in mine:
                if e.rec.get("status") != "conflicted":
                    e.set("pre_conflict_status", e.rec.get("status") or _SCOPE_STATUS[e.scope])
                    e.set("status", "conflicted")
                new = self._add_partners(e, their_ids) or new
        self.report.conflicts.append({"a": a["id"], "b": b["id"], "reason": reason, "new": new,
                                      "a_text": side_a[:1], "b_text": side_b[:1]})  # texts written at the end

    def _add_partners(self, e: Entry, ids: list[str]) -> bool:
        """Append ids to e's conflict_with (kept as a set too: a global learning can conflict
        with thousands, and list membership would make flagging quadratic)."""
        known = self.partners.get(id(e))
        if known is None:
            partners = e.rec.get("conflict_with")
            partners = list(partners) if isinstance(partners, list) else []
            known = self.partners[id(e)] = (partners, set(partners))
        partners, members = known
        missing = [i for i in ids if i not in members]
        if not missing:
            return False
        partners.extend(missing)
        members.update(missing)
        e.rec["conflict_with"] = partners
        e.patch["conflict_with"] = partners
        return True

    def _release_orphans(self) -> None:
        """A conflicted learning whose partners are all gone goes back to what it was."""
        live = set(self.by_id)
        if self.totals is not None:  # the entries are some of the live rows: ask the index about the others
            partners = {p for e in self.entries if e.rec.get("status") == "conflicted"
                        for p in (e.rec.get("conflict_with") or []) if isinstance(p, str)}
            live |= self.store.index.live_ids(sorted(partners - live))
        for e in self.entries:
            if e.rec.get("status") != "conflicted":
                continue
            partners = [p for p in (e.rec.get("conflict_with") or []) if p in live]
            if partners:
                if partners != e.rec.get("conflict_with"):
                    e.set("conflict_with", partners)
                continue
            release(e)
            self.report.released += 1

    # -- promotion -------------------------------------------------------------------------
    def _promote_groups(self) -> None:
        groups: dict[str, list[Entry]] = {}
        globals_: dict[str, list[Entry]] = {}
        for e in self.entries:
            if _own_fact(e.rec):
                continue  # a project's own fact is never global (below: one an older version promoted)
            (groups if e.scope == "project" else globals_).setdefault(learning_identity(e.rec), []).append(e)
        self._archive_global_project_facts()
        focus_keys = None
        if self.focus is not None:
            focus_keys = {learning_identity(e.rec) for e in self.entries if self.in_focus(e)}
        for key, group in groups.items():
            if focus_keys is not None and key not in focus_keys:
                continue
            existing = globals_.get(key, [])
            if not existing and not any((e.rec.get("status") or "active") == "active" for e in group):
                continue  # no global copy, and none active: lifecycle promotes or lists no other
            if len(group) == 1 and not existing and not self._may_rise(group[0]):
                continue  # most learnings: one copy, no global one, nothing lifecycle could do
            self._consider(group, existing)

    def _archive_global_project_facts(self) -> None:
        """A project's fact made global by an earlier version (which grouped every project's "This
        project builds with …" by its goal alone and promoted one of them for all): to the
        archive, where `recall --archived` still finds it; the projects keep their own."""
        stray = [e for e in self.entries if e.scope == "global" and _own_fact(e.rec) and not e.archived
                 and e.rec.get("status") == "global"]
        ensure_full(self.store, stray, self.loads)
        for e in stray:
            archive(e, "a project's own fact, not global", self.now)
            self.report.archived.append({"id": e.rec["id"], "text": summary(e.rec), "project": "", "score":
                                         scored_at(e, self.now), "stale_days": 0})

    def _may_rise(self, e: Entry) -> bool:
        """Whether a lone copy could be promoted or listed as a candidate: only an active one
        seen in 3 projects or scoring at least 0.3 (scoring.lifecycle), decided without the
        copy of the record that group_view makes."""
        rec = e.rec
        if (rec.get("status") or "active") != "active":
            return False
        projects = {str(p) for p in _union(rec.get("projects"), [e.pid] if e.pid else [])}
        count = len(projects) or (1 if rec.get("project") else 0)
        return count >= scoring.PROMOTE_ALWAYS_PROJECTS or scored_at(e, self.now) >= scoring.LOW_SCORE

    def _consider(self, group: list[Entry], existing: list[Entry]) -> None:
        """One learning (its copies across projects): promote, fold into its global copy,
        or list as a candidate."""
        copies = [e for e in group if not e.rec.get("promoted_to")]
        if not copies or any(e.rec.get("status") == "conflicted" for e in group):
            return
        if existing and all(g.rec.get("status") == "conflicted" for g in existing):
            return  # its global copy waits for the user
        view = group_view(copies)  # what is folded in: the copies not linked yet
        whole = group_view(group) if len(copies) < len(group) else view  # what is judged: all of them
        decision = scoring.lifecycle(whole, self.now, self.min_projects, self.archive_days)
        live_global = [g for g in existing if g.rec.get("status") != "conflicted"]
        if not live_global and decision != scoring.PROMOTE:
            if decision == scoring.CANDIDATE:
                self.report.candidates.append(self._item(whole, copies, group))
            return
        # Already global (new sightings: fold them in, idempotently), or promoted now: the
        # records are read in full (decided on their decision fields, written whole).
        ensure_full(self.store, group + live_global, self.loads)
        view = group_view(copies)
        if self._cross_project_conflicts(copies, live_global):
            return
        target = live_global[0] if live_global else None
        global_id = self._fold(target, view, copies) if target else self._new_global(view, copies)
        for e in copies:
            if self.in_focus(e):
                e.set("promoted_to", global_id)
        if decision == scoring.PROMOTE:
            item = self._item(whole, copies, group)
            item.update(global_id=global_id, merged=target is not None)
            self.report.promoted.append(item)

    def _cross_project_conflicts(self, copies: list[Entry], globals_: list[Entry]) -> bool:
        """Do the copies of one learning (and its global copy) give contradicting advice?

        Copies are compared one per distinct advice, so hundreds of copies of one fix cost
        one comparison; when two pieces of advice conflict, every copy of each is flagged."""
        from learn_cli.engine.conflicts import find_conflicts

        sides: dict[tuple, list[Entry]] = {}
        for e in copies + globals_:
            sides.setdefault(_advice(e.rec), []).append(e)
        if len(sides) < 2:
            return False
        by_rep = {members[0].rec["id"]: members for members in sides.values()}
        pairs = find_conflicts([members[0].rec for members in sides.values()], same_scope_only=False)
        for a, b, reason in pairs:
            self._flag(by_rep[a], by_rep[b], reason)
        return bool(pairs)

    def _new_global(self, view: dict, copies: list[Entry]) -> str:
        rec = dict(view)
        for name in ("low_since", "promoted_to", "conflict_with", "pre_conflict_status", "updated"):
            rec.pop(name, None)
        rec.update(id=new_id(), status="global", promoted_from=[e.rec["id"] for e in copies],
                   promoted=scoring.format_time(self.now))
        path = self.store.global_file(rec)
        self.new_globals.setdefault(path, []).append(rec)
        entry = Entry(path, "global", "", rec)
        self.entries.append(entry)
        self.by_id.setdefault(rec["id"], []).append(entry)
        return rec["id"]

    def _fold(self, target: Entry, view: dict, copies: list[Entry]) -> str:
        from learn_cli.engine.merge import merge

        old = target.rec
        folded = merge(old, view)
        folded["frequency"] = max(scoring.frequency_of(old), scoring.frequency_of(view))
        for name in ("helped", "not_helped"):
            if name in folded:
                folded[name] = max(_count(old.get(name)), _count(view.get(name)))
        folded["status"] = "global"
        folded["promoted_from"] = _union(old.get("promoted_from"), [e.rec["id"] for e in copies])
        for name in ("low_since", "promoted_to", "pre_conflict_status"):
            folded.pop(name, None)
        for name in set(old) | set(folded):
            if name not in ("id", "updated"):
                target.set(name, folded.get(name, _DELETE))
        return old["id"]

    def _item(self, view: dict, copies: list[Entry], group: list[Entry]) -> dict:
        """A report line; its text (of the whole group) is written later, only for the lines
        that are shown."""
        return {"id": copies[0].rec["id"], "ids": [e.rec["id"] for e in copies], "key": view.get("key") or "",
                "text": group, "score": scoring.score(view, self.now), "projects": scoring.project_count(view)}

    # -- archive ---------------------------------------------------------------------------
    def _archive_stale(self) -> None:
        fresh = _ids(self.new_globals)
        candidates = [e for e in self.entries if self.in_focus(e) and not e.patch.get("promoted_to")
                      and e.rec["id"] not in fresh]
        self.report.archived += archive_stale(candidates, self.now, self.min_projects, self.archive_days,
                                              self.store, self.loads)


# ---------------------------------------------------------------- shared helpers


def scored_at(e: Entry, now: datetime) -> float:
    """An entry's score at the run's clock `now`: computed once (rescore) and kept until a
    field it reads changes (Entry.set); rescore, the archive check, the promotion groups and
    prune's ranking each scored every entry again."""
    if e.score is None:
        e.score = scoring.score(e.rec, now)
    return e.score


def rescore(entries: list[Entry], now: datetime, in_focus: Callable = lambda e: True,
            progress: Callable | None = None) -> tuple[int, int]:
    """update_low_since on every entry; returns (records scored, records whose clock changed).
    Every entry's score is kept for the rest of the run (scored_at): `now` is its clock."""
    scored = changed = 0
    total = len(entries)
    for n, e in enumerate(entries, 1):
        if not in_focus(e):
            continue
        before = e.rec.get("low_since")
        if scoring.update_low_since(e.rec, now, scored_at(e, now)):
            e.patch["low_since"] = e.rec.get("low_since", _DELETE)
            changed += before != e.rec.get("low_since")
        scored += 1
        if progress and n % 5000 == 0:
            progress("scoring", n, total)
    if progress:
        progress("scoring", total, total)
    return scored, changed


def archive_stale(entries: list[Entry], now: datetime, min_projects, archive_days, store,
                  loads: Callable = jsonlite.loads) -> list[dict]:
    """Mark for the archive every entry whose score stayed < 0.3 for archive_days (read in
    full: the archive gets the whole record); report them."""
    stale = []
    for e in entries:
        if e.archived or not e.rec.get("low_since") or e.rec.get("status") not in ("active", "pending", "global"):
            continue  # no archive clock running: nothing to archive (checked first, it is cheap)
        if scored_at(e, now) >= scoring.LOW_SCORE:
            continue  # a clock that stops now (rescore) or a patch raised it: never archived
        if scoring.lifecycle(e.rec, now, min_projects, archive_days, scored_at(e, now)) == scoring.ARCHIVE:
            stale.append(e)
    ensure_full(store, stale, loads)
    out = []
    for e in stale:
        low = scoring.parse_time(e.rec.get("low_since"))
        stale_days = int((now - low).total_seconds() // 86400) if low else 0
        archive(e, f"score < {scoring.LOW_SCORE} for {stale_days} days", now)
        out.append({"id": e.rec["id"], "text": summary(e.rec) if len(out) < LIST_LIMIT else "", "project": e.pid,
                    "score": scored_at(e, now), "stale_days": stale_days})
    return out



def group_view(copies: list[Entry]) -> dict:
    """One record standing for the copies of a learning: the best-scoring copy's fields, with
    frequency and helped counts summed, impact the max, projects (with the copies' own
    project files) and tags unioned, created the first, last_used the latest, each text the
    better one, status the strongest.

    The same fold as engine.merge.merge, in one pass: folding hundreds of copies pairwise
    with merge() (which deep-copies and unions evidence each time) is quadratic."""
    from learn_cli.engine.merge import better_text

    if len(copies) == 1:
        view = dict(copies[0].rec)
        view["projects"] = _union(view.get("projects"), [copies[0].pid] if copies[0].pid else [])
        return view
    recs = [e.rec for e in copies]
    base = max(recs, key=lambda r: min(scoring.frequency_of(r), 10) * scoring.impact_of(r))
    view = dict(base)
    view["frequency"] = sum(scoring.frequency_of(r) for r in recs)
    view["impact"] = max(scoring.impact_of(r) for r in recs)
    projects: list = []
    tags: list = []
    for e in copies:
        projects = _union(projects, [*(e.rec.get("projects") or []), e.pid] if e.pid else e.rec.get("projects") or [])
        if isinstance(e.rec.get("tags"), list):
            tags = _union(tags, e.rec["tags"])
    view["projects"] = projects
    if tags:
        view["tags"] = tags
    for name, pick in (("created", min), ("last_used", max)):
        times = [(t, r[name]) for r in recs if (t := scoring.parse_time(r.get(name)))]
        if times:
            view[name] = pick(times, key=lambda pair: pair[0])[1]
    for name in ("helped", "not_helped"):
        if any(name in r for r in recs):
            view[name] = sum(_count(r.get(name)) for r in recs)
    for name in ("context", "error", "fix"):
        text = reduce(better_text, [r.get(name) for r in recs])
        if text is not None:
            view[name] = text
    statuses = {r.get("status") or "active" for r in recs}
    view["status"] = next(
        (s for s in ("conflicted", "global", "active", "pending") if s in statuses), base.get("status")
    )
    view.pop("low_since", None)
    return view


def _own_fact(rec: dict) -> bool:
    """A project's own fact, read from a whole record or from its decision fields."""
    return bool(rec.get("here")) or is_project_fact(rec)


def learning_identity(rec: dict) -> tuple:
    """What makes copies one learning: the key and, for an error, its fix. Two fixes of one
    key are alternatives (issue 10), each promoted on its own evidence, never merged."""
    advice = rec["advice"] if "advice" in rec else advice_of(rec)
    return (rec.get("key") or f"id:{rec['id']}", advice)


_ADVICE: dict[str, str] = {}  # fix text -> its advice_of digest (copies of a learning share their fix)


def advice_of(rec: dict) -> str:
    """A short digest of an error learning's fix (normalised); "" for other types."""
    from learn_cli.engine.merge import fix_text, normalize_text
    from learn_cli.text.hashes import sha1_hex

    if rec.get("type", "error") != "error":
        return ""
    fix = fix_text(rec)
    advice = _ADVICE.get(fix)
    if advice is None:
        if len(_ADVICE) >= 4096:
            _ADVICE.clear()
        advice = _ADVICE[fix] = sha1_hex(normalize_text(fix).encode("utf-8", "surrogatepass"))[:12]
    return advice


def _advice(rec: dict) -> tuple:
    """What a copy of a learning advises: copies alike here cannot conflict with each other."""
    from learn_cli.engine.merge import fix_text, normalize_text

    context = normalize_text(rec.get("context")) if rec.get("type", "error") != "error" else ""
    return (normalize_text(fix_text(rec)), context, str(rec.get("command") or ""), str(rec.get("fix_command") or ""))


def summary(rec: dict, width: int = SUMMARY_WIDTH) -> str:
    """One line stating the learning (problem: fix), as the session digest shows it."""
    from learn_cli.engine.context import summarize

    return summarize(rec, None, width) or str(rec.get("id", ""))


# A learning's line in lists: long enough for a rule and its fix whole (at 60 characters, 70 of
# 394 harvested pairs lost the fix's own words; at 100, 25, most of them inline scripts).
TITLE_WIDTH = 100


def title(rec: dict, width: int = TITLE_WIDTH) -> str:
    """A learning's line in lists (stats, graph hubs): the context of a rule, the problem and
    its fix for an error."""
    from learn_cli.text.sanitize import sanitize

    context = rec.get("context")
    is_error = rec.get("type", "error") == "error" and isinstance(rec.get("error"), str) and rec["error"].strip()
    if isinstance(context, str) and context.strip() and not is_error:
        return sanitize(" ".join(context.split()), width)
    return summary(rec, width)


def archive(e: Entry, reason: str, now: datetime) -> None:
    """Mark an entry to be moved to the archive of its scope."""
    e.set("status", "archived")
    e.set("archived", scoring.format_time(now))
    e.set("archived_reason", reason)
    e.archived = True


def release(e: Entry) -> None:
    """Leave the conflicted state: back to the status it had before."""
    before = e.rec.get("pre_conflict_status")
    e.set("status", before if before in ("pending", *SHOWN_STATUSES) else _SCOPE_STATUS.get(e.scope, "active"))
    e.set("conflict_with", _DELETE)
    e.set("pre_conflict_status", _DELETE)


def archive_path(store, path: Path) -> Path:
    """The archive file next to a live file: the project's archive.jsonl, or the global one
    (of the kind of path the store's layout gives: a `Path`, or a hook's string)."""
    lay = store.layout
    folder = os.path.dirname(os.fspath(path))
    if os.path.dirname(folder) == os.fspath(lay.projects_dir):
        return lay.kind(os.path.join(folder, ARCHIVE_FILE))
    return lay.global_archive


def write_entries(store, entries: list[Entry], new_records: dict[Path, list[dict]] | None = None,
                  progress: Callable | None = None, loads: Callable = jsonlite.loads) -> int:
    """Write what a run changed: new records first, then each live file's archive copies
    with its patches and removals (the archive written first, so a crash leaves two copies,
    never none). Returns files written."""
    progress = progress or (lambda phase, done, total: None)
    ensure_full(store, [e for e in entries if e.archived], loads)  # the archive gets whole records
    adds: dict[Path, list[dict]] = {p: list(recs) for p, recs in (new_records or {}).items()}
    new_ids = {r["id"] for recs in adds.values() for r in recs}
    patches: dict[Path, dict] = {}
    removals: dict[Path, list[str]] = {}
    moves: dict[Path, list[dict]] = {}  # live file -> its records going to its archive
    for e in entries:
        if e.rec["id"] in new_ids:
            continue
        if e.archived:
            moves.setdefault(e.path, []).append(e.rec)
            removals.setdefault(e.path, []).append(e.rec["id"])
        elif e.removed:
            removals.setdefault(e.path, []).append(e.rec["id"])
        elif e.patch:
            patches.setdefault(e.path, {})[e.rec["id"]] = _patcher(e.patch)
    paths = sorted(set(patches) | set(removals))
    with store.batched():
        for path, recs in adds.items():
            store.put_many(path, recs)
        for n, path in enumerate(paths, 1):
            changes, gone = patches.get(path, {}), removals.get(path, [])
            size = store.index.count_in_file(store.index.rel(path))
            rewrite = 2 * (len(changes) + len(gone)) >= max(size, 1)
            store.update_many(path, changes, gone, rewrite=rewrite, moves=moves.get(path),
                              archive=archive_path(store, path))
            if n % 50 == 0:
                progress("writing", n, len(paths))
    progress("writing", len(paths), len(paths))
    return len(set(adds) | {archive_path(store, path) for path in moves} | set(paths))


def _patcher(patch: dict) -> Callable[[dict], dict]:
    def apply(rec: dict) -> dict:
        for name, value in patch.items():
            if value is _DELETE:
                rec.pop(name, None)
            else:
                rec[name] = value
        return rec

    return apply


def _ids(records_by_path: dict[Path, list[dict]]) -> set[str]:
    return {r["id"] for recs in records_by_path.values() for r in recs}


def _union(first, second) -> list:
    out = [x for x in (first if isinstance(first, list) else []) if x]
    for x in second:
        if x and x not in out:
            out.append(x)
    return out


def _count(value) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0


# ---------------------------------------------------------------- resolving a conflict


class ResolveError(ValueError):
    """The learning cannot be resolved (unknown id, not in conflict); the message says why."""


class Resolution:
    def __init__(self):
        self.kept: list = []  # records now live again
        self.archived: list = []  # records moved to the archive


def resolve_conflict(store, rid: str, keep: bool, now=None) -> Resolution:
    """Resolve the conflicts of one learning. keep: it goes back to its status before the
    conflict and every learning it conflicts with is archived (restorable with `learn
    restore`); drop: it is archived and the others are released (a learning that still
    conflicts with a third one stays conflicted)."""
    now = scoring.parse_time(now) or datetime.now(UTC)
    store.refresh()
    found = store.get(rid)
    if found is None:
        raise ResolveError(f"no learning with id {rid}")
    entries = _Entries(store)
    me = entries.add(*found)
    if me.rec.get("status") != "conflicted":
        raise ResolveError(f"{me.rec['id']} is not in conflict (status {me.rec.get('status') or 'active'})")
    result = Resolution()
    if keep:
        partners = entries.partners(me)
        release(me)
        result.kept.append(me.rec)
        for p in partners:
            _leave(entries, p, now, f"conflict resolved: kept {me.rec['id']}", result)
    else:
        _leave(entries, me, now, "conflict resolved: dropped", result)
    write_entries(store, list(entries.by_id.values()))
    return result


class _Entries:
    """The records a resolution touches, one Entry per id."""

    def __init__(self, store):
        self.store = store
        self.by_id: dict[str, Entry] = {}

    def add(self, path: Path, rec: dict) -> Entry:
        if rec["id"] not in self.by_id:
            scope, pid = self.store.index.scope_of(path)
            self.by_id[rec["id"]] = Entry(self.store.layout.kind(path), scope, pid, rec)
        return self.by_id[rec["id"]]

    def partners(self, e: Entry) -> list[Entry]:
        out = []
        for oid in e.rec.get("conflict_with") or []:
            if not isinstance(oid, str) or oid == e.rec["id"]:
                continue
            found = self.by_id.get(oid)
            if found is None:
                hit = self.store.get(oid)
                found = self.add(*hit) if hit else None
            if found is not None and found.rec.get("status") == "conflicted":
                out.append(found)
        return out


def _leave(entries: _Entries, e: Entry, now: datetime, reason: str, result: Resolution) -> None:
    """Archive a conflicted learning; the others it conflicted with lose it as a partner."""
    others = entries.partners(e)
    e.set("conflict_with", _DELETE)
    e.set("pre_conflict_status", _DELETE)
    archive(e, reason, now)
    result.archived.append(e.rec)
    for other in others:
        rest = [p for p in other.rec.get("conflict_with") or [] if p != e.rec["id"]]
        if rest:
            other.set("conflict_with", rest)
        else:
            release(other)
            result.kept.append(other.rec)
