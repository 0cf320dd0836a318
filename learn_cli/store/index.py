"""The derived SQLite index (SPEC §1.4): lookups by key and id, full-text search.

The JSONL files are the truth. For every file the index remembers the (size, mtime_ns, inode)
it last saw; whenever a file's stat differs (a crash between the append and the index update,
a hand edit, a copy from another machine) that file alone is re-read. A missing or corrupt
database is rebuilt from scratch, logged once. Writers update the file and then the index while
holding the file's lock, and never wait for a file lock inside an open transaction.

The full-text table is kept in step by this module, not by triggers: FTS5 fired from a trigger
flushes its buffer on every row's savepoint, which made indexing 100,000 records ~8x slower.
A record whose searchable text did not change is updated in place without touching FTS.
"""

from __future__ import annotations

import os
import sys
import time

from learn_cli.text import (
    jsonlite,  # json's C half, without `re`: hooks and fast reads import no `json`
    lite,
)
from learn_cli.text.lite import namedtuple  # not collections' (text/lite.py)

from . import deadline, jsonl
from .locks import file_lock
from .paths import ARCHIVE_FILE, FILE_MODE
from .record import LIVE_STATUSES


def _import_sqlite():
    """The C module that the `sqlite3` package wraps (the package adds date adapters this index
    never uses, and imports `datetime` for them: ~0.15x a bare start).

    `_sqlite3` takes `functools.lru_cache` when it is imported, for each connection's cache of
    prepared statements (`lru_cache(maxsize)(connection)`): in a process that has not imported
    `functools` (a hook: it and the `collections` it imports are ~11 M instructions, 0.3x a
    bare start), it gets text.lite's, which caches the same statements by their SQL, through a
    stand-in `functools` held in sys.modules for that import alone. Should the stand-in not do
    (another Python's module asking for more), the real one is imported."""
    if "functools" not in sys.modules:
        stand_in = type(sys)("functools")
        stand_in.lru_cache = lite.lru_cache
        sys.modules["functools"] = stand_in
        try:
            import _sqlite3

            return _sqlite3
        except ImportError:  # pragma: no cover - not CPython
            pass
        except Exception:  # noqa: BLE001 - pragma: no cover - the stand-in did not do: the real one
            sys.modules.pop("_sqlite3", None)
        finally:
            if sys.modules.get("functools") is stand_in:
                del sys.modules["functools"]
    try:
        import _sqlite3

        return _sqlite3
    except ImportError:  # pragma: no cover - not CPython
        import sqlite3

        return sqlite3


sqlite3 = _import_sqlite()

TYPE_CHECKING = False  # no pathlib on the hook path (paths.Layout)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

SCHEMA_VERSION = 13
FEW_FILES = 50  # a refresh of at most this many files asks the index about those alone

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, size INT, mtime_ns INT, ino INT,
    lines INT, superseded INT, bad INT);
CREATE TABLE IF NOT EXISTS learnings(rowid INTEGER PRIMARY KEY, file TEXT NOT NULL,
    id TEXT NOT NULL, key TEXT, scope TEXT, pid TEXT, type TEXT, category TEXT, status TEXT,
    updated TEXT, body TEXT, data TEXT, derived TEXT, features TEXT,
    score_frequency INT, score_impact REAL, score_used TEXT, score_base REAL, export_created TEXT, export_as_is INT,
    projects TEXT, fix_shape TEXT, fix_state TEXT, due_clock REAL, clock_start REAL, UNIQUE(file, id));
CREATE INDEX IF NOT EXISTS learnings_key ON learnings(key);
CREATE INDEX IF NOT EXISTS learnings_id ON learnings(id);
CREATE INDEX IF NOT EXISTS learnings_pid ON learnings(pid, status);
-- v6: `stats` and `graph` read their totals from this index alone, not from the wide rows
-- (issue 14). `category` first: no query looks a category up, so the planner never takes this
-- index for `scope = ? AND pid = ?` (scope first, it did: a scan per project in `export`).
CREATE INDEX IF NOT EXISTS learnings_counts ON learnings(category, type, status, scope);
-- v6: the few rows that count helped / not_helped (`stats`), without a scan of every `data`
CREATE INDEX IF NOT EXISTS learnings_helped ON learnings(scope, status) WHERE instr(data, 'helped"') > 0;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, content='learnings',
    content_rowid='rowid', tokenize="unicode61");
DROP TRIGGER IF EXISTS learnings_ai;
DROP TRIGGER IF EXISTS learnings_ad;
CREATE TABLE IF NOT EXISTS projects(pid TEXT PRIMARY KEY, name TEXT, root TEXT, remote TEXT);
-- v12: facts about the whole table (`derived_version`: the version of `derived` every live row
-- with its due columns set holds; see Index.rowids_to_derive)
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value);
"""

# v12: the terms of each row's conflict features (engine.conflicts.conflict_terms: what
# conflicts group records by), for Index.conflict_rowids. Triggers keep them honest whoever
# writes: a row whose features or key change, or that goes, loses its terms, and a row given
# features is noted in `terms_due`, whose terms the next promote stores (store_terms; making
# them in SQL from the features' JSON cost ~140 us a row inside every write).
_TERMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS terms(term TEXT, variant, row INTEGER, PRIMARY KEY(term, variant, row)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS terms_row ON terms(row);
CREATE TABLE IF NOT EXISTS terms_due(row INTEGER PRIMARY KEY);
CREATE TRIGGER IF NOT EXISTS learnings_terms_insert AFTER INSERT ON learnings WHEN new.features IS NOT NULL
    BEGIN INSERT OR IGNORE INTO terms_due VALUES (new.rowid); END;
CREATE TRIGGER IF NOT EXISTS learnings_terms_update AFTER UPDATE OF features, key ON learnings
    WHEN new.features IS NOT old.features OR new.key IS NOT old.key
    BEGIN DELETE FROM terms WHERE row = old.rowid;
    INSERT OR IGNORE INTO terms_due SELECT new.rowid WHERE new.features IS NOT NULL; END;
CREATE TRIGGER IF NOT EXISTS learnings_terms_delete AFTER DELETE ON learnings
    BEGIN DELETE FROM terms WHERE row = old.rowid; DELETE FROM terms_due WHERE row = old.rowid; END;
"""

BATCH_SECONDS = 0.25  # longest a batch of index writes (Index.batch) keeps SQLite's write lock
PROGRESS_STEPS = 20_000  # SQLite instructions between two looks at a hook's deadline
BUSY_TIMEOUT_S = 30.0  # how long a command waits for another writer; a hook waits its time left
BODY_LIMIT = 6000  # characters of a record's searchable text in the full-text index
SEARCH_FIELDS = ("context", "error", "fix", "command", "fix_command", "category", "type", "project")


# Live learnings: in a project or the global file, not archived.
LIVE_SQL = "scope IN ('project', 'global') AND (status IS NULL OR status != 'archived')"
# v7: `graph` reads (key, pid, id, projects) of every live row from this index alone: 250 -> 55 ms
# of SQLite at 100,000 (issue 14). v10: `projects` is a column (`projects_column`), set by the
# writers, no longer the expression json_extract(data, '$.projects'): SQLite updates an index on
# an expression of `data` at every write of `data`, which was half of the cost of an update in
# place (promote's and prune's thousands of patches: ~45 -> ~22 us each at 100,000).
_KEY_PROJECTS_INDEX = ("CREATE INDEX IF NOT EXISTS learnings_key_projects ON learnings(key, pid, id, projects) "
                       f"WHERE {LIVE_SQL}")


def _score():
    """store.score, imported when first used: it loads `_datetime`, and a failure's lookup,
    which writes no row, never needs it (~1.3 M instructions of a hook)."""
    from . import score

    return score


def score_sql(frequency: str, impact: str, used: str, now: str = "'now'") -> str:
    """`store.score`'s formula as an SQL expression over the given SQL values (frequency and
    impact as numbers, `used` the last use as ISO text), generated from its constants:
    min(max(f, 1), cap)/cap × min(max(i, 0), 1) × max(0, 1 − whole weeks/weeks), 1 when the
    date cannot be read."""
    cap, weeks = _score().FREQUENCY_CAP, _score().RECENCY_WEEKS
    return (f"(min(max({frequency}, 1), {cap}) / {float(cap)} * min(max({impact}, 0), 1)"
            f" * coalesce(max(0, 1 - {1 / weeks} * CAST((julianday({now}) - julianday({used})) / 7 AS INTEGER)), 1))")


def _field(name: str) -> str:
    return f"json_extract(data, '$.{name}')"


# Approximate (for choosing candidates): missing or odd fields take the formula's defaults.
@lite.cache
def _approx_score() -> str:
    return score_sql(f"coalesce(CAST({_field('frequency')} AS REAL), {_score().DEFAULT_FREQUENCY})",
                     f"coalesce(CAST({_field('impact')} AS REAL), {_score().DEFAULT_IMPACT})",
                     f"coalesce({_field('last_used')}, {_field('created')})")


def _typed(path: str, best) -> str:
    return f"CASE WHEN json_type(j, '{path}') IN ('integer', 'real') THEN json_extract(j, '{path}') ELSE {best} END"


# An upper bound of score() over j = [frequency, impact, last_used, created]: a field of the
# wrong type counts as its best value, a date SQLite cannot read as recency 1.
@lite.cache
def _score_bound() -> str:
    return score_sql(_typed("$[0]", _score().FREQUENCY_CAP), _typed("$[1]", 1),
                     "coalesce(json_extract(j, '$[2]'), json_extract(j, '$[3]'))", "?") + " + 0.000001"


# The learnings `stats` ranks by score, and (v8) their best scores in order, with what the
# score reads: the query reads this index alone, no wide row (issue 14).
_SCORED = f"{LIVE_SQL} AND (status IS NULL OR status IN ('active', 'global'))"
_SCORES_INDEX = (f"CREATE INDEX IF NOT EXISTS learnings_scores ON learnings(score_base DESC, score_frequency, "
                 f"score_impact, score_used, key, id) WHERE {_SCORED}")
_BEST_AT = "2000-01-01T00:00:00Z"  # any clock: without a last use the score takes it (recency 1)


def search_body(rec: dict) -> str:
    parts = [str(rec.get(f) or "") for f in SEARCH_FIELDS]
    tags = rec.get("tags")
    if isinstance(tags, list):
        parts.extend(str(t) for t in tags)
    return " ".join(p for p in parts if p)[:BODY_LIMIT]


# v9: what `learn export` reads of a row besides its data, decided when the row is written
# (engine/exchange/export.py): the text it sorts the row by, and whether it may write the
# record as stored. Without them it parsed every row's JSON twice in SQL to sort, and looked
# for the marks of a credential in every row's text (~0.5 s of an export of 100,000).
EXPORT_AS_IS = 1  # the version of credential_mark's list: bump it when the list changes


def export_columns(rec: dict, body: str) -> tuple[str, int | None]:
    """(`export_created`, `export_as_is`) of a record whose searchable text is `body`: the
    export's order (str() of `created`, "" when missing or empty), and EXPORT_AS_IS when the
    export writes the record as stored (its whole searchable text, which holds every text field
    and tag, shows no mark of a credential), else None: the export checks it again."""
    created = rec.get("created")
    order = created if type(created) is str else str(created or "")
    return order, (EXPORT_AS_IS if len(body) < BODY_LIMIT and not credential_mark(body) else None)


def credential_mark(text: str) -> bool:
    """What the common credentials start with or sit beside: a key block, GitHub, GitLab, AWS,
    OpenAI/Anthropic, Slack, Google and JWT tokens, `*_SECRET=` labels. Few and literal on
    purpose (every row written pays it, a hook's too): each costs one `in` (written out: a
    generator over them cost more than the searches), where the redactor's whole rule set
    costs ~30 µs. Changing the list means bumping EXPORT_AS_IS."""
    return (("://" in text and "@" in text) or "PRIVATE KEY" in text
            or ("gh" in text and ("ghp_" in text or "gho_" in text or "ghs_" in text or "ghu_" in text
                                  or "github_pat_" in text))
            or "glpat-" in text or "AKIA" in text or "ASIA" in text or "sk-" in text or "xox" in text
            or "AIza" in text or "eyJ" in text or "ecret" in text or "ECRET" in text)


class Index:
    def __init__(self, layout, on_event: Callable[[str], None] | None = None):
        self.layout = layout
        self.path = layout.index_db
        self.on_event = on_event or (lambda msg: None)
        # (fields, features): record -> text of the `derived` and `features` columns, set by
        # whole-store commands (promote, prune), which read them back. Rows written without
        # them (the hooks) hold NULL and are derived by the next such command; a write that
        # leaves a record's searchable text as it was keeps its features (they come from it).
        # The third function gives the row's due columns (`due_clock`, `clock_start`: see
        # engine.scoring.clock_due), set with `derived` and emptied with it.
        self.derive: tuple[Callable[[dict], str], Callable[[dict], str], Callable[[dict], tuple]] | None = None
        self._batch: _Batch | None = None  # while writes of many files share transactions (batch)
        self.db = self._open()

    # -- opening and rebuilding ------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            if cannot_write(exc) or is_busy(exc):
                raise  # a full or read-only disk, or another writer: the index is fine, not ours now
            self.on_event(f"index rebuilt ({exc})")
            self._remove_files()
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        fresh = not os.path.exists(self.path)
        if fresh:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
            os.close(fd)
        wait = deadline.remaining(BUSY_TIMEOUT_S)
        db = sqlite3.connect(str(self.path), timeout=wait, isolation_level=None)
        try:
            db.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                db.execute("PRAGMA journal_mode=WAL")
                fix_columns_kept = _has_columns(db, ("fix_state",))  # before _SCHEMA: a new index has them
                due_columns_kept = _has_columns(db, ("due_clock",))
                db.executescript(_SCHEMA)
                _add_missing_columns(db)
                _add_score_columns(db)
                _add_export_columns(db)
                _add_projects_column(db, fill=version < 10)
                _add_fix_columns(db, reset=fix_columns_kept and version < 11)  # (v11 and later write them)
                _add_due_columns(db, reset=due_columns_kept)
                _add_archived_index(db)
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            db.execute("PRAGMA synchronous=NORMAL")  # derived data: a lost commit is re-read
            if deadline.active():  # a hook: no statement outlives its deadline (see store.deadline)
                db.set_progress_handler(deadline.passed, PROGRESS_STEPS)
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass

    def rebuild(self, reason: str) -> None:
        """Drop everything and re-read every file (corruption, schema change, user request)."""
        self.db.close()
        self._remove_files()
        self.on_event(f"index rebuilt ({reason})")
        self.db = self._connect()
        self.refresh(self.all_files())

    # -- freshness -------------------------------------------------------------------------
    # Every command checks every file (2,004 at 1,000 projects) before reading: these work on
    # path strings, which cost a tenth of what `Path` objects do per file.
    def all_files(self) -> list[str]:
        """Every record file of the store, as absolute path strings."""
        return self.layout.record_files()

    def refresh(self, paths: Iterable[str | os.PathLike], loads: Callable = jsonlite.loads, progress=None) -> list:
        """Re-read the files whose stat differs from the index. Returns bad lines found."""
        files = [(p, self.rel(p)) for p in paths]
        known = self._known_stats([rel for _path, rel in files] if len(files) <= FEW_FILES else None)
        return self._refresh(files, known, loads, progress)

    def _refresh(self, files: list[tuple[str | os.PathLike, str]], known: dict, loads: Callable, progress) -> list:
        """`refresh` over (path, name in the index) pairs, given what the index knows."""
        bad: list = []
        for path, rel in files:
            st = _stat(path)
            if st is None:
                if rel in known:
                    self._forget_file(rel)
                continue
            if known.get(rel) != st:
                bad.extend(self.reindex_file(path, loads))
            if progress:
                progress()
        return bad

    def refresh_all(self, loads: Callable = jsonlite.loads, progress=None, archives: bool = True) -> list:
        """`refresh` of every record file, forgetting those gone; `archives=False`: of the live
        files alone, for a reader that shows no archived record (half the files to check)."""
        files = [(p, self.rel(p)) for p in self.layout.record_files(archives)]
        known = self._known_stats()
        for rel in set(known).difference(rel for _path, rel in files):
            if archives or os.path.basename(rel) != ARCHIVE_FILE:
                self._forget_file(rel)
        return self._refresh(files, known, loads, progress)

    def _known_stats(self, rels: list[str] | None = None) -> dict:
        """What the index knows of every file (or of these: a hook's check of four files at
        300,000 learnings read the 6,000 rows of every project's files)."""
        return {p: (s, m, i) for p, s, m, i in self._files("path, size, mtime_ns, ino", rels)}

    def reindex_file(self, path: Path, loads: Callable = jsonlite.loads) -> list:
        """Replace the index rows of one file with what the file holds now.

        Checked again once the lock is held: a reader usually finds a file stale because a
        writer is between its append and its index update, and that writer has brought the
        index up to date by the time the lock is free. Re-reading a large file under the
        lock for nothing would stall every other writer of it."""
        with file_lock(path):
            if self.expect_stat(path):
                return []
            return self._reindex_locked(path, loads)

    def _forget_file(self, rel: str) -> None:
        with self._tx() as db:
            _delete_file_rows(db, rel)
            db.execute("DELETE FROM files WHERE path=?", (rel,))

    # -- writes by our own writers (caller holds the file lock) ---------------------------
    def record_write(self, path: Path, records: list[dict], lines_added: int, texts: list[str] | None = None,
                     before: dict[str, dict] | None = None) -> None:
        """Mirror records just appended to `path` (tombstones delete) and note its new stat
        (`texts`: the records' lines as appended, when the caller has them: their `data`;
        `before`: id -> the record its row holds now, for the records the caller patched: see
        _write_rows).

        If the index had not seen the file's previous state, the file is re-read instead, so
        an earlier crash between append and index update heals here.
        """
        rel = self.rel(path)
        row = self.db.execute("SELECT size, mtime_ns, ino, lines, superseded, bad FROM files "
                              "WHERE path=?", (rel,)).fetchone()
        st = _stat(path)
        if row is None or st is None:
            self._reindex_locked(path)
            return
        scope, pid = self.scope_of(path)
        with self._tx() as db:
            self._write_rows(db, rel, scope, pid, records, texts, before)
            db.execute("UPDATE files SET size=?, mtime_ns=?, ino=?, lines=lines+? WHERE path=?",
                       (*st, lines_added, rel))

    def record_moves(self, path: Path, records: list[dict], source: Path, texts: list[str] | None = None) -> None:
        """Mirror records just appended to the log `path` (an archive) that moved there from
        `source`, which was written too and whose index update follows (the caller holds both
        locks). A record whose searchable text is the same keeps its row, updated in place
        (file, scope, data, ...), and with its rowid its full-text entry: no full-text delete
        and insert, which made most of the index's work when promote archived thousands.
        The others are written as record_write would."""
        rel = self.rel(path)
        row = self.db.execute("SELECT 1 FROM files WHERE path=?", (rel,)).fetchone()
        st = _stat(path)
        if row is None or st is None:
            self._reindex_locked(path)
            return
        scope, pid = self.scope_of(path)
        ids = {r["id"] for r in records}
        texts = texts or [None] * len(records)
        with self._tx() as db:
            sources, here = self._rows_of(db, self.rel(source), ids), self._rows_of(db, rel, ids)
            rest, rest_texts = [], []
            for rec, text in zip(records, texts, strict=True):
                prev = sources.get(rec["id"])
                body = search_body(rec)
                if prev is None or rec["id"] in here or prev[1] != body:
                    rest.append(rec)
                    rest_texts.append(text)
                    continue
                sources.pop(rec["id"])  # a second copy of one id in `records` is written as usual
                _set_changed(db, prev, self._row(rel, scope, pid, rec, body, data=text))
            self._write_rows(db, rel, scope, pid, rest, rest_texts)
            db.execute("UPDATE files SET size=?, mtime_ns=?, ino=?, lines=lines+? WHERE path=?",
                       (*st, len(records), rel))

    def record_rewrite(self, path: Path, changed: list[dict], lines: int, texts: list[str] | None = None,
                       before: dict[str, dict] | None = None) -> None:
        """Mirror a whole-file rewrite (compaction, prune, promote) that changed only the
        records in `changed` (tombstones delete) and folded the rest as they were. The caller
        holds the file lock and had the index in step with the file before the rewrite, so
        only those rows and the file's stat change: re-reading thousands of records under
        the lock would stall every capture waiting for it."""
        rel = self.rel(path)
        st = _stat(path)
        if st is None:
            self._reindex_locked(path)
            return
        scope, pid = self.scope_of(path)
        with self._tx() as db:
            self._write_rows(db, rel, scope, pid, changed, texts, before)
            updated = db.execute("UPDATE files SET size=?, mtime_ns=?, ino=?, lines=?, superseded=0 WHERE path=?",
                                 (*st, lines, rel)).rowcount
        if not updated:
            self._reindex_locked(path)

    def expect_stat(self, path: Path) -> bool:
        """True when the index has seen `path` exactly as it is now (before our append)."""
        row = self.db.execute("SELECT size, mtime_ns, ino FROM files WHERE path=?",
                              (self.rel(path),)).fetchone()
        return row is not None and tuple(row) == _stat(path)

    def _reindex_locked(self, path: Path, loads: Callable = jsonlite.loads) -> list:
        st = _stat(path)
        loaded = jsonl.load(path, loads) if st else jsonl.Loaded({}, [], 0, 0)
        rel = self.rel(path)
        scope, pid = self.scope_of(path)
        rows = self._rows_again(rel, scope, pid, loaded.records.values())
        with self._tx() as db:
            _delete_file_rows(db, rel)
            db.executemany(_INSERT, rows)
            db.execute("INSERT INTO fts(rowid, body) SELECT rowid, body FROM learnings WHERE file=?", (rel,))
            if st:
                db.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?)",
                           (rel, *st, loaded.lines, loaded.superseded, len(loaded.bad)))
            else:
                db.execute("DELETE FROM files WHERE path=?", (rel,))
        return loaded.bad

    def _rows_again(self, rel: str, scope: str, pid: str, recs: Iterable[dict]) -> list[tuple]:
        """The rows of a file read again whole (a `.json` document after each write: promote
        and prune patch the global preferences most days). A record whose row holds the same
        `data` and, derived again, the same `derived` (of this version) keeps that row's
        conflict features, the costliest part of a row to derive (~1 ms a preference)."""
        derive = self.derive if scope in ("project", "global") else None
        if derive is None:
            return [self._row(rel, scope, pid, r) for r in recs]
        known = {rid: (data, derived, features) for rid, data, derived, features in self.db.execute(
            "SELECT id, data, derived, features FROM learnings WHERE file=? AND features IS NOT NULL", (rel,))}
        rows = []
        for rec in recs:
            data = jsonlite.dumps(rec, ensure_ascii=False, separators=(",", ":"))
            was = known.get(rec["id"])
            row = self._row(rel, scope, pid, rec, data=data, features=was[2]) if was and was[0] == data else None
            if row is None or row[11] != was[1]:
                row = self._row(rel, scope, pid, rec, data=data)
            rows.append(row)
        return rows

    def _write_rows(self, db: sqlite3.Connection, rel: str, scope: str, pid: str, recs: list[dict],
                    texts: list[str | None] | None = None, before: dict[str, dict] | None = None) -> None:
        """Insert, replace or (tombstones) delete records' rows, FTS included (`texts`: the
        records' compact JSON when the caller has it). The old rows are read in one query per
        500 ids; rows whose searchable text did not change are updated in place, without
        touching the full-text index, and only in the columns that changed (_set_changed).
        `before[id]`: the record a row holds now, given by a caller that patched it (promote's
        and prune's decisions): the row's values of the fields the patch left alone are kept
        (_patched_row), not derived again. (Each statement runs in order: a batch may hold two
        versions of one record, and a deleted row's rowid may be reused.)"""
        old = self._rows_of(db, rel, {r["id"] for r in recs})
        for rec, text in zip(recs, texts or [None] * len(recs), strict=True):
            prev = old.get(rec["id"])
            if rec.get("deleted") is True:
                if prev:
                    _delete_row(db, prev[0], prev[1])
                    del old[rec["id"]]
                continue
            was = before.pop(rec["id"], None) if before else None  # once: a second copy is derived as usual
            row = self._patched_row(rel, scope, pid, prev, was, rec, text) if prev and was is not None else None
            if row is not None:
                _set_changed(db, prev, row)
                old[rec["id"]] = (prev[0], row[9], row[12], _kept_values(row), row[17:19])
                continue
            body = search_body(rec)
            if prev and prev[1] == body:
                kept = prev[2] if len(body) < BODY_LIMIT else None  # a cut text may hide a change
                row = self._row(rel, scope, pid, rec, body, kept, text)
                _set_changed(db, prev, row)
                old[rec["id"]] = (prev[0], body, row[12], _kept_values(row), row[17:19])
                continue
            if prev:
                _delete_row(db, prev[0], prev[1])
            row = self._row(rel, scope, pid, rec, body, data=text)
            rowid = db.execute(_INSERT, row).lastrowid
            db.execute("INSERT INTO fts(rowid, body) VALUES (?, ?)", (rowid, body))
            old[rec["id"]] = (rowid, body, row[12], _kept_values(row), row[17:19])

    @staticmethod
    def _rows_of(db: sqlite3.Connection, rel: str, ids: set[str]) -> dict[str, tuple]:
        """id -> (rowid, body, features, the values of _NARROW's columns, the export columns) of
        the rows of one file with these ids."""
        ids, out = sorted(ids), {}
        columns = ", ".join(name for _at, name in _NARROW)
        width = 4 + len(_NARROW)
        for marks, chunk in _in_lists(ids):
            rows = db.execute(f"SELECT id, rowid, body, features, {columns}, export_created, export_as_is "
                              f"FROM learnings WHERE file=? AND id IN ({marks})", (rel, *chunk))
            out.update((row[0], (row[1], row[2], row[3], row[4:width], row[width:])) for row in rows)
        return out

    def _patched_row(self, rel: str, scope: str, pid: str, prev: tuple, was: dict, rec: dict,
                     data: str | None) -> tuple | None:
        """Index._row of `rec`, a patch of `was` (the record the row `prev` holds), taking from
        `prev` what only the fields the patch left alone decide: the searchable text with its
        features, the export columns, the score inputs, `projects`. None when the patch
        changed the searchable text (the caller derives the row whole). The same values as
        _row's, without searching, scoring or checking texts again for thousands of patches
        of an archive clock, a link or a conflict."""
        changed = {name for name in _KEPT_BY_FIELDS if not _same_value(was.get(name), rec.get(name))}
        if not changed.isdisjoint(_TEXT_FIELDS):
            return None
        body = prev[1]
        derive = self.derive if scope in ("project", "global") else None
        features = (prev[2] if len(body) < BODY_LIMIT else None) if derive else None  # as _write_rows keeps them
        if features is None and derive:
            features = derive[1](rec)
        narrow = dict(zip((name for _at, name in _NARROW), prev[3], strict=True))
        scores = (narrow["score_frequency"], narrow["score_impact"], narrow["score_used"], narrow["score_base"]) \
            if changed.isdisjoint(_SCORE_FIELDS) and narrow["score_base"] is not None else score_inputs(rec)
        kept_export = "created" not in changed and prev[4][0] is not None and prev[4][1] in (None, EXPORT_AS_IS)
        export = prev[4] if kept_export else export_columns(rec, body)  # (a row of another list's version: again)
        projects = narrow["projects"] if "projects" not in changed else projects_column(rec)
        if data is None:
            data = jsonlite.dumps(rec, ensure_ascii=False, separators=(",", ":"))
        return (rel, rec["id"], rec.get("key") or "", scope, pid, rec.get("type"), rec.get("category"),
                rec.get("status"), rec.get("updated") or "", body, data, derive[0](rec) if derive else None, features,
                *scores, *export, projects, *fix_columns(rec),  # a patch moves the clocks fix_state holds
                *(derive[2](rec) if derive else _NOT_DUE))

    def note_project(self, pid: str, name: str, root: str, remote: str | None) -> None:
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO projects VALUES (?,?,?,?)", (pid, name, root, remote))

    # -- queries ---------------------------------------------------------------------------
    def by_key(
        self, key: str, statuses: tuple = (), scopes: tuple = (), limit: int = -1, file: str | None = None
    ) -> list[tuple[str, str, str, dict]]:
        """The rows of a key (of these statuses and scopes; with `file`, of that file alone: a
        popular key has a row in every project that met it, and only the wanted ones are parsed)."""
        sql = "SELECT file, scope, pid, data FROM learnings WHERE key=?"
        args: list = [key]
        if file is not None:
            sql += " AND file=?"
            args.append(file)
        for column, values in (("status", statuses), ("scope", scopes)):
            if values:
                sql += f" AND {column} IN ({','.join('?' * len(values))})"
                args.extend(values)
        args.append(limit)
        return [(f, s, p, jsonlite.loads(d)) for f, s, p, d in self.db.execute(sql + " LIMIT ?", args)]

    def fix_rows(self, key: str, statuses: tuple, scopes: tuple, limit: int) -> list[tuple]:
        """(file, rowid, id, status, fix_shape, fix_state, data where those are NULL) of the
        rows `by_key` gives for the same arguments, in the same order: a failure's lookup
        (capture.offers) reads each row's `fix_columns`, not its whole record."""
        sql = ("SELECT file, rowid, id, status, fix_shape, fix_state, CASE WHEN fix_state IS NULL THEN data END "
               "FROM learnings WHERE key=?")
        args: list = [key]
        for column, values in (("status", statuses), ("scope", scopes)):
            if values:
                sql += f" AND {column} IN ({','.join('?' * len(values))})"
                args.extend(values)
        args.append(limit)
        return self.db.execute(sql + " LIMIT ?", args).fetchall()

    def record_at(self, rowid: int, rid: str) -> dict | None:
        """The record of one row, if it still holds the learning `rid`."""
        row = self.db.execute("SELECT data FROM learnings WHERE rowid=? AND id=?", (rowid, rid)).fetchone()
        return jsonlite.loads(row[0]) if row else None

    def store_fix_columns(self, rows: list[tuple[str, str, int, str]]) -> None:
        """Set (fix_shape, fix_state) of rows written before v11, given with the rowid and the
        data they were derived from (a row rewritten since is left alone), only if the write
        lock is free: a hook never waits for it."""
        if not rows or self.db.in_transaction:
            return
        waits = self.db.execute("PRAGMA busy_timeout").fetchone()[0]
        try:
            self.db.execute("PRAGMA busy_timeout=0")
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("UPDATE learnings SET fix_shape=?, fix_state=? WHERE rowid=? AND data=? "
                                "AND fix_state IS NULL", rows)
            self.db.execute("COMMIT")
        except sqlite3.OperationalError:  # another writer (the next lookup of the key tries again), a full disk
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        finally:
            self.db.execute(f"PRAGMA busy_timeout={int(waits)}")

    def integrity(self) -> str:
        """SQLite's quick check of the index file: "ok", or what is damaged (a DatabaseError's
        text when the file cannot even be read)."""
        try:
            return str(self.db.execute("PRAGMA quick_check").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            return str(exc)

    def rows_in_scope(self, scope: str, status: str | None = None, pid: str | None = None) -> Iterable[tuple]:
        """(file, scope, pid, data) of the rows of one scope, of one status and project when
        given, streamed."""
        conditions, args = ["scope = ?"], [scope]
        for column, value in (("status", status), ("pid", pid)):
            if value is not None:
                conditions.append(f"{column} = ?")
                args.append(value)
        return self.db.execute(f"SELECT file, scope, pid, data FROM learnings WHERE {' AND '.join(conditions)}", args)

    def data_by_id_in_file(self, rel: str, ids: list[str]) -> Iterable[tuple[str, str]]:
        """(id, data) of these ids in one file (at most 500 at a time)."""
        marks, ids = _in_list(ids)
        return self.db.execute(f"SELECT id, data FROM learnings WHERE file=? AND id IN ({marks})", (rel, *ids))

    def ids_in_file(self, rel: str, ids: list[str]) -> list[str]:
        """Which of these ids one file holds (at most 500 at a time)."""
        marks, ids = _in_list(ids)
        return [rid for (rid,) in self.db.execute(f"SELECT id FROM learnings WHERE file=? AND id IN ({marks})",
                                                  (rel, *ids))]

    def names_of(self, pids: list[str]) -> dict[str, str]:
        """Project id -> name, for these projects only."""
        marks = ",".join("?" * len(pids))
        return dict(self.db.execute(f"SELECT pid, name FROM projects WHERE pid IN ({marks})", pids)) if pids else {}

    def promotion_size(self, pid: str, limit: int) -> int:
        """How many records a promotion check of one project loads: its own, then the other
        copies of its keys (counted up to limit + 1)."""
        own = self.db.execute("SELECT count(*) FROM learnings WHERE pid = ? AND scope = 'project'",
                              (pid,)).fetchone()[0]
        if own > limit:
            return own
        others = self.db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM learnings WHERE key IN (SELECT key FROM learnings WHERE pid = ? "
            "AND scope = 'project' AND key != '') AND NOT (scope = 'project' AND pid = ?) LIMIT ?)",
            (pid, pid, limit + 1)).fetchone()[0]
        return own + others

    def keys_size(self, keys: list[str], limit: int) -> int:
        """How many records a promotion check of these keys loads (every live copy, counted up
        to limit + 1)."""
        marks = ",".join("?" * len(keys))
        return self.db.execute(f"SELECT count(*) FROM (SELECT 1 FROM learnings WHERE key IN ({marks}) "
                               "AND scope IN ('project', 'global') LIMIT ?)", (*keys, limit + 1)).fetchone()[0]

    def by_id(self, rid: str) -> list[tuple[str, str, str, dict]]:
        rows = self.db.execute("SELECT file, scope, pid, data FROM learnings WHERE id=?", (rid,))
        return [(f, s, p, jsonlite.loads(d)) for f, s, p, d in rows]

    def by_id_prefix(self, prefix: str, limit: int = 5) -> list[tuple[str, str, str, dict]]:
        rows = self.db.execute("SELECT file, scope, pid, data FROM learnings WHERE id >= ? AND id < ? "
                               "LIMIT ?", (prefix, prefix + "\uffff", limit))
        return [(f, s, p, jsonlite.loads(d)) for f, s, p, d in rows]

    def search(self, fts_query: str, limit: int = 200, scopes: tuple = ()) -> list:
        sql = ("SELECT l.file, l.scope, l.pid, l.data, bm25(fts) FROM fts JOIN learnings l "
               "ON l.rowid = fts.rowid WHERE fts MATCH ?")
        args: list = [fts_query]
        if scopes:
            sql += f" AND l.scope IN ({','.join('?' * len(scopes))})"
            args.extend(scopes)
        sql += " ORDER BY bm25(fts) LIMIT ?"
        args.append(limit)
        return [(f, s, p, jsonlite.loads(d), -rank) for f, s, p, d, rank in self.db.execute(sql, args)]

    def project_names(self) -> dict[str, dict]:
        rows = self.db.execute("SELECT pid, name, root, remote FROM projects")
        return {p: {"id": p, "name": n, "root": r, "remote": rm} for p, n, r, rm in rows}

    def names_shared_with(self, pids: list[str]) -> dict[str, str]:
        """pid -> name of these projects and of every project whose name one of them has."""
        marks = ",".join("?" * len(pids))
        rows = self.db.execute(f"SELECT pid, name FROM projects WHERE name IN "
                               f"(SELECT name FROM projects WHERE pid IN ({marks}))", pids)
        return dict(rows.fetchall())

    def file_stats(self, rels: list[str] | None = None) -> dict[str, tuple]:
        """(lines, superseded, bad) of every file the index knows, or of these (a session's end
        asks about one file: at 300,000 learnings the table has 6,000 rows)."""
        return {p: (lines, sup, bad) for p, lines, sup, bad in self._files("path, lines, superseded, bad", rels)}

    def _files(self, columns: str, rels: list[str] | None):
        """These columns of the `files` table: every row, or those of the files `rels`."""
        if rels is None:
            return self.db.execute(f"SELECT {columns} FROM files")
        return self.db.execute(f"SELECT {columns} FROM files WHERE path IN ({','.join('?' * len(rels))})", rels)

    def count(self) -> int:
        """How many learnings the index holds, every scope."""
        return self._count("1=1")

    def _count(self, where: str, args: tuple = ()) -> int:
        return self.db.execute(f"SELECT count(*) FROM learnings WHERE {where}", args).fetchone()[0]

    # -- named queries ---------------------------------------------------------------------
    def kind_counts(self) -> list[tuple[str, str, str, str, int]]:
        """(scope, type, category, status, count) of every learning, in one aggregate scan."""
        return self.db.execute("SELECT scope, type, category, status, count(*) FROM learnings "
                               "GROUP BY scope, type, category, status").fetchall()

    def promoted_count(self) -> int:
        """Live global learnings that a promotion made (they name `promoted_from`)."""
        return self.db.execute("SELECT count(*) FROM learnings WHERE pid = '' AND scope = 'global' AND "
                               "(status IS NULL OR status != 'archived') AND instr(data, '\"promoted_from\"') > 0"
                               ).fetchone()[0]

    def scores_filled(self) -> bool:
        """Whether every live active or global row has its score columns (v8: rows written
        since; an older index's rows until rewritten, or the next promote or prune)."""
        return self.db.execute(f"SELECT 1 FROM learnings WHERE {_SCORED} AND score_base IS NULL LIMIT 1"
                               ).fetchone() is None

    def best_scores(self) -> Iterable[tuple[int, str, int, float, str | None, float]]:
        """(rowid, key or id, frequency, impact, last use, best score: `score_inputs`) of every
        live active or global learning, highest best score first, streamed from an index (no
        sort: a caller stops once the best score left is below what it has)."""
        return self.db.execute(f"SELECT rowid, coalesce(nullif(key, ''), id), score_frequency, score_impact, "
                               f"score_used, score_base FROM learnings WHERE {_SCORED} ORDER BY score_base DESC")

    def score_bounds(self, now_iso: str) -> Iterable[tuple[int, str, str, float]]:
        """(rowid, key or id, JSON [frequency, impact, last_used, created], an upper bound of
        its score) of every live active or global learning, highest bound first (from `data`:
        for an index whose score columns are not filled)."""
        return self.db.execute(f"""
            WITH f AS MATERIALIZED (
                SELECT rowid AS r, coalesce(nullif(key, ''), id) AS k,
                       json_extract(data, '$.frequency', '$.impact', '$.last_used', '$.created') AS j
                  FROM learnings WHERE {_SCORED})
            SELECT r, k, j, {_score_bound()} AS bound FROM f ORDER BY bound DESC""", (now_iso,))

    def helped_fields(self) -> Iterable[tuple[int, str]]:
        """(rowid, JSON [helped, not_helped]) of the live learnings that name either."""
        return self.db.execute(f"SELECT rowid, json_extract(data, '$.helped', '$.not_helped') FROM learnings "
                               f"WHERE {LIVE_SQL} AND instr(data, 'helped\"') > 0")

    def row(self, rowid: int) -> tuple[str, str] | None:
        """(scope, data) of one row."""
        return self.db.execute("SELECT scope, data FROM learnings WHERE rowid = ?", (rowid,)).fetchone()

    def data_of_rows(self, rowids: list[int]) -> dict[int, str]:
        """rowid -> data of these rows (those that still exist)."""
        out: dict[int, str] = {}
        for marks, chunk in _in_lists(rowids):
            out.update(self.db.execute(f"SELECT rowid, data FROM learnings WHERE rowid IN ({marks})", chunk))
        return out

    def best_of_project(self, pid: str, limit: int) -> list[str]:
        """Data of a project's active learnings, best (approximate) score first."""
        return [d for (d,) in self.db.execute(
            f"SELECT data FROM learnings WHERE pid = ? AND status = 'active' AND scope = 'project' "
            f"ORDER BY {_approx_score()} DESC LIMIT ?", (pid, limit))]

    def best_global_bodies(self, limit: int) -> list[tuple[int, str]]:
        """(rowid, searchable text) of the global file's live learnings, best (approximate)
        score first."""
        return self.db.execute(
            f"SELECT rowid, body FROM learnings WHERE pid = '' AND status IN ('global', 'active') "
            f"AND scope = 'global' ORDER BY {_approx_score()} DESC LIMIT ?", (limit,)).fetchall()

    def live_errors_matching(self, phrase: str, pid: str, limit: int = 20) -> list[str]:
        """Data of the active or global error learnings (global, or this project's) whose text
        holds the full-text phrase."""
        return [d for (d,) in self.db.execute(
            "SELECT l.data FROM fts JOIN learnings l ON l.rowid = fts.rowid WHERE fts MATCH ? "
            "AND l.status IN ('active', 'global') AND l.type = 'error' AND (l.scope = 'global' "
            "OR (l.scope = 'project' AND l.pid = ?)) LIMIT ?", (phrase, pid, limit))]

    def projects_by_shared_key(self) -> Iterable[tuple[str, str, str | None]]:
        """(key, or `id:` + id for a learning without one; pid; `projects` as JSON text) of
        every live learning whose key may be seen in more than one project: the key is on more
        than one row, or the `projects` list has a comma. The others, most of a store, can
        only be seen in one (at 100,000 learnings: 28,500 rows read instead of 100,000)."""
        return self.db.execute(f"""
            SELECT coalesce(nullif(key, ''), 'id:' || id), pid, projects FROM learnings
             WHERE {LIVE_SQL} AND (projects LIKE '%,%' OR key IN (
                   SELECT key FROM learnings WHERE key != '' AND {LIVE_SQL} GROUP BY key HAVING count(*) > 1))""")

    def uses(self, column: str, values: list[str]) -> Iterable[tuple[str, int, int]]:
        """(value, sum of the project copies' frequencies, the global copy's) of the live
        learnings whose `column` (key or id) is one of values."""
        if column not in ("key", "id"):
            raise ValueError(column)
        freq = "max(1, coalesce(CAST(json_extract(data, '$.frequency') AS INTEGER), 1))"
        for start in range(0, len(values), 500):
            chunk = values[start:start + 500]
            yield from self.db.execute(f"""
                SELECT {column}, sum(CASE WHEN scope = 'project' THEN {freq} ELSE 0 END),
                       max(CASE WHEN scope = 'global' THEN {freq} ELSE 0 END)
                  FROM learnings WHERE {column} IN ({','.join('?' * len(chunk))}) AND {LIVE_SQL}
                 GROUP BY {column}""", chunk)

    def first_with_id(self, rid: str) -> tuple[str, str] | None:
        """(id, data) of one row with this id."""
        return self.db.execute("SELECT id, data FROM learnings WHERE id = ? LIMIT 1", (rid,)).fetchone()

    def best_live_with_key(self, key: str) -> tuple[str, str] | None:
        """(id, data) of the live learning with this key: the global copy, else the most frequent.
        A key with one global copy (the usual: the one a promotion made) gets it without ranking
        every copy by the frequency in its `data` (a hub of graph's has ~800 copies at 100,000
        learnings: ~20 M instructions each)."""
        only = self.db.execute(f"SELECT id, data FROM learnings WHERE key = ? AND scope = 'global' AND {LIVE_SQL} "
                               "LIMIT 2", (key,)).fetchall()
        if len(only) == 1:
            return only[0]
        return self.db.execute(f"SELECT id, data FROM learnings WHERE key = ? AND {LIVE_SQL} "
                               "ORDER BY scope = 'global' DESC, json_extract(data, '$.frequency') DESC LIMIT 1",
                               (key,)).fetchone()

    # -- import (engine/exchange/merging.py) ----------------------------------------------
    def keys_by_id(self) -> dict[str, str]:
        """id -> key ('' when none) of every row."""
        return dict(self.db.execute("SELECT id, key FROM learnings"))

    def merged_from_fields(self) -> Iterable[tuple[str]]:
        """(`merged_from` as JSON text,) of every row whose data names it, streamed."""
        return self.db.execute("SELECT json_extract(data, '$.merged_from') FROM learnings "
                               "WHERE data LIKE '%\"merged_from\"%'")

    def data_in_file(self, rel: str, statuses: tuple, keys: list[str] | None = None) -> Iterable[tuple[str]]:
        """(data,) of one file's rows whose status is one of statuses (and key one of `keys`
        when given), by id, streamed."""
        marks = ",".join("?" * len(statuses))
        if keys is None:
            return self.db.execute(f"SELECT data FROM learnings WHERE file = ? AND status IN ({marks}) ORDER BY id",
                                   (rel, *statuses))
        return self.db.execute(f"SELECT data FROM learnings WHERE file = ? AND status IN ({marks}) AND key IN "
                               f"(SELECT value FROM json_each(?)) ORDER BY id", (rel, *statuses, jsonlite.dumps(keys)))

    def features_in_file(self, rel: str, version: int) -> Iterable[tuple[str, str]]:
        """(id, features) of one file's rows derived at `version` (their features with them:
        engine.promotion derives both at once), streamed."""
        return self.db.execute("SELECT id, features FROM learnings WHERE file = ? AND features IS NOT NULL "
                               "AND derived LIKE ?", (rel, f"[{int(version)},%"))

    def count_in_file(self, rel: str) -> int:
        """How many rows one file has in the index."""
        return self._count("file = ?", (rel,))

    # -- export (engine/exchange/export.py) ------------------------------------------------
    def exported_projects(self) -> list[str]:
        """The projects that hold project or archived learnings, in order. (Only their rows
        have a pid: the index by pid answers alone, where a condition on the scope read every
        row.)"""
        return [pid for (pid,) in self.db.execute("SELECT DISTINCT pid FROM learnings WHERE pid != '' ORDER BY pid")]

    def use_export_order(self, created_order: Callable) -> None:
        """Give the export's order its rule for a `created` that is not text:
        created_order(json type, value) -> the text it sorts as (once per connection)."""
        self.db.create_function("export_created", 2, created_order, deterministic=True)

    def exported_rows(self, section: str, pid: str = "") -> Iterable[tuple[str, str, str, int, str | None]]:
        """(scope, pid, data, as_is, body) of one export section ("global", "project" of pid,
        "archived"), streamed in export order: `created` (`export_created`; for a row of an
        older index, text as it is, another type as use_export_order says), then id, then
        rowid. `as_is`: the row says the export may write its record as stored
        (`export_columns`); else `body` is search_body(record), for the export to decide."""
        where, args = _EXPORT_SECTIONS[section], ((pid,) if section == "project" else ())
        as_is = f"export_as_is IS {EXPORT_AS_IS}"
        return self.db.execute(f"SELECT scope, pid, data, {as_is}, CASE WHEN {as_is} THEN NULL ELSE body END "
                               f"FROM learnings WHERE {where} ORDER BY {_EXPORT_ORDER}", args)

    # -- promotion and prune (engine/promotion.py, engine/prune.py) -----------------------
    def rowids_to_derive(self, rows: Selection, version: int) -> list[int]:
        """Rowids of the live rows of a selection whose derived columns are empty or of
        another version than `version`. Of the whole store, once every live row was found of
        that version (`meta` says so: set by `all_derived`), the rows with an empty due clock
        alone, from its index (every writer empties it with `derived`; a scan of the whole
        table reads ~250 MB at 100,000 learnings)."""
        if rows is WHOLE_STORE and self._meta("derived_version") == version:
            return [r for (r,) in self.db.execute(f"SELECT rowid FROM learnings WHERE {LIVE_SQL} "
                                                  f"AND {_DUE_SOON} AND due_clock IS NULL")]
        # (the due columns are filled by whole-store runs: a session's end derives only what it needs)
        due = " OR due_clock IS NULL" if rows is WHOLE_STORE else ""
        query = (f"SELECT rowid FROM learnings WHERE {_live(rows)} AND (derived IS NULL OR "
                 f"derived NOT LIKE ? OR features IS NULL OR score_base IS NULL{due})")
        return [r for (r,) in self.db.execute(query, (*rows.args, f"[{version},%"))]

    def all_derived(self, version: int) -> None:
        """Note that every live row's derived columns are of `version` (rowids_to_derive)."""
        with self._tx() as tx:
            tx.execute("INSERT OR REPLACE INTO meta VALUES ('derived_version', ?)", (version,))

    def _meta(self, name: str):
        row = self.db.execute("SELECT value FROM meta WHERE name=?", (name,)).fetchone()
        return row[0] if row else None

    def to_derive(self, rowids: list[int]) -> list[tuple[int, str, int]]:
        """(rowid, data, whether the score columns are empty) of these rows."""
        return self.db.execute(f"SELECT rowid, data, score_base IS NULL FROM learnings "
                               f"WHERE rowid IN ({','.join('?' * len(rowids))})", rowids).fetchall()

    def store_derived(self, fresh: list[tuple[str, str, tuple | None, tuple, int, str]]) -> None:
        """Set (derived, features, score inputs unless None, the due columns, rowid, data) in
        one transaction, on the rows that still hold that data (a writer may have replaced them
        meanwhile). The score columns (`score_inputs` of the record) are given only where they
        are empty (the rows of an index older than v8): setting them where they are filled
        would rewrite the entries of the scores index for nothing (with a second parse of every
        record, ~6 s of a first promote at 100,000 on a home indexed without derived columns:
        the synthetic benchmark's)."""
        with self._tx() as tx:
            tx.executemany("UPDATE learnings SET derived=?, features=?, due_clock=?, clock_start=? "
                           "WHERE rowid=? AND data=?",
                           [(derived, features, *due, rowid, data)
                            for derived, features, scores, due, rowid, data in fresh if scores is None])
            tx.executemany("UPDATE learnings SET derived=?, features=?, score_frequency=?, "
                           "score_impact=?, score_used=?, score_base=?, due_clock=?, clock_start=? "
                           "WHERE rowid=? AND data=?",
                           [(derived, features, *scores, *due, rowid, data)
                            for derived, features, scores, due, rowid, data in fresh if scores is not None])

    # What a whole-store run again reads instead of every live row (engine.promotion.run_again):
    # the rows the clock may change, and the rows its other decisions read, found by indexes.
    def due_rowids(self, now: float, archive_cutoff: float) -> set[int]:
        """Rowids of the live rows the clock may have changed by `now` (epoch seconds): an
        empty or passed `due_clock`, an archive clock started by `archive_cutoff`, or one that
        starts after `now` (a clock set back)."""
        found: set[int] = set()
        # one range of an index each (an OR of two reads every entry of the index, and the rows)
        for condition, args in ((f"{_DUE_SOON} AND due_clock IS NULL", ()), (f"{_DUE_SOON} AND due_clock <= ?", (now,)),
                                ("clock_start <= ?", (archive_cutoff,)), ("clock_start > ?", (now,))):
            found.update(r for (r,) in self.db.execute(f"SELECT rowid FROM learnings WHERE {LIVE_SQL} AND "
                                                       f"{condition}", args))
        return found

    def conflict_rowids(self) -> list[int] | None:
        """Rowids of the live rows that share a conflict term with a row of another variant
        (see _TERMS_SCHEMA), ascending: the only rows conflicts can pair. None until the terms
        were filled (fill_terms), and while a row's are due (store_terms)."""
        if self._meta("terms") != 1 or self.db.execute(
                "SELECT 1 FROM terms_due CROSS JOIN learnings ON learnings.rowid = terms_due.row "
                "WHERE features IS NOT NULL LIMIT 1").fetchone():
            return None
        return [r for (r,) in self.db.execute(
            "SELECT DISTINCT terms.row FROM terms JOIN (SELECT term FROM terms GROUP BY term "
            "HAVING count(DISTINCT variant) > 1) AS pairing USING (term) JOIN learnings ON "
            f"learnings.rowid = terms.row WHERE {LIVE_SQL} ORDER BY terms.row")]

    def fill_terms(self) -> None:
        """Note every row with features as due for its terms, once (an index of v11, or
        emptied): the triggers note the others from then on."""
        if self._meta("terms") == 1:
            return
        with self._tx() as tx:
            tx.execute("DELETE FROM terms")
            tx.execute("INSERT OR IGNORE INTO terms_due SELECT rowid FROM learnings WHERE features IS NOT NULL")
            tx.execute("INSERT OR REPLACE INTO meta VALUES ('terms', 1)")

    def terms_due(self, limit: int) -> list[tuple[int, str, str]]:
        """(rowid, key, features) of up to `limit` rows given features since their terms were
        stored (the rows noted whose features went since are no longer due)."""
        due = self.db.execute("SELECT learnings.rowid, key, features FROM terms_due CROSS JOIN learnings "
                              "ON learnings.rowid = terms_due.row WHERE features IS NOT NULL LIMIT ?",
                              (limit,)).fetchall()
        if len(due) < limit:
            with self._tx() as tx:
                tx.execute("DELETE FROM terms_due WHERE NOT EXISTS (SELECT 1 FROM learnings "
                           "WHERE learnings.rowid = terms_due.row AND features IS NOT NULL)")
        return due

    def store_terms(self, terms: list[tuple[int, list[tuple[str, object]]]]) -> None:
        """Set the terms of these rows (rowid, [(term, variant), ...]), no longer due."""
        with self._tx() as tx:
            tx.executemany("DELETE FROM terms WHERE row=?", [(rowid,) for rowid, _ in terms])
            tx.executemany("INSERT OR IGNORE INTO terms(row, term, variant) VALUES (?,?,?)",
                           [(rowid, term, variant) for rowid, pairs in terms for term, variant in pairs])
            tx.executemany("DELETE FROM terms_due WHERE row=?", [(rowid,) for rowid, _ in terms])

    def live_counts(self) -> dict[str, int]:
        """pid -> number of live rows ('' for the global files), from the index of live keys."""
        return dict(self.db.execute(f"SELECT pid, count(*) FROM learnings INDEXED BY learnings_key_projects "
                                    f"WHERE {LIVE_SQL} GROUP BY pid"))  # (the pid index reads every row)

    def keys_with_status(self, pids: list[str], statuses: tuple) -> tuple[set[str], set[int]]:
        """(keys, rowids) of the live rows of these pids with one of these statuses (None in
        `statuses`: rows without one), by the index of (pid, status)."""
        keys, rowids = set(), set()
        named = [s for s in statuses if s is not None]
        status_sql = " OR ".join([*(["status IN (" + ",".join("?" * len(named)) + ")"] if named else []),
                                  *(["status IS NULL"] if None in statuses else [])])
        for marks, chunk in _in_lists(pids):
            for rowid, key in self.db.execute(f"SELECT rowid, key FROM learnings WHERE pid IN ({marks}) AND "
                                              f"({status_sql}) AND {LIVE_SQL}", (*chunk, *named)):
                keys.add(key)
                rowids.add(rowid)
        return keys, rowids

    def live_rowids_with(self, column: str, values: list[str]) -> set[int]:
        """Rowids of the live rows whose `key` or `id` (`column`) is one of `values`."""
        return self._live_with("rowid", column, values)

    def live_ids(self, ids: list[str]) -> set[str]:
        """Which of these ids are the id of a live row."""
        return self._live_with("id", "id", ids)

    def _live_with(self, wanted: str, column: str, values: list[str]) -> set:
        """`wanted` of the live rows whose `column` (key, id) is one of `values`, 500 a query."""
        assert column in ("key", "id")
        out: set = set()
        for marks, chunk in _in_lists(values):
            out.update(v for (v,) in self.db.execute(f"SELECT {wanted} FROM learnings WHERE {column} IN ({marks}) "
                                                     f"AND {LIVE_SQL}", chunk))
        return out

    def live_rows_of_key_kind(self, prefix: str) -> Iterable[tuple[int, str, str]]:
        """(rowid, file, data) of the live rows whose key starts with `prefix` ("err:"),
        streamed (engine.rekey: every learning an error's key finds)."""
        return self.db.execute(f"SELECT rowid, file, data FROM learnings WHERE {_KEY_KIND}", _key_range(prefix))

    def count_of_key_kind(self, prefix: str) -> int:
        """How many live rows live_rows_of_key_kind gives."""
        return self.db.execute(f"SELECT count(*) FROM learnings WHERE {_KEY_KIND}", _key_range(prefix)).fetchone()[0]

    def live_files(self) -> list[str]:
        """The files (relative) that hold a live row, asked file by file of the files table."""
        return [rel for (rel,) in self.db.execute(
            f"SELECT path FROM files WHERE EXISTS (SELECT 1 FROM learnings WHERE file=files.path AND {LIVE_SQL})")]

    def live_rowids_in_files(self, rels: list[str]) -> set[int]:
        """Rowids of the live rows of these files."""
        out: set[int] = set()
        for rel in rels:
            out.update(r for (r,) in self.db.execute(f"SELECT rowid FROM learnings WHERE file=? AND {LIVE_SQL}",
                                                     (rel,)))
        return out

    def derived_rows(self, rows: Selection) -> Iterable[tuple]:
        """(file, scope, pid, rowid, derived) of the live rows of a selection, streamed."""
        return self.db.execute(f"SELECT file, scope, pid, rowid, derived FROM learnings WHERE {_live(rows)}",
                               rows.args)

    def feature_rows(self, rows: Selection) -> Iterable[tuple[str, str, str | None, str | None, str | None,
                                                            str | None]]:
        """(id, key, status, `projects` as JSON, features, data where features or derived is
        empty) of the live rows of a selection, streamed."""
        # json_quote: the projects as JSON whatever their type (json_extract gives a string bare)
        return self.db.execute(f"SELECT id, key, status, json_quote(json_extract(derived, '$[1].projects')), "
                               f"features, CASE WHEN features IS NULL OR derived IS NULL THEN data END "
                               f"FROM learnings WHERE {_live(rows)}", rows.args)

    def data_of(self, rowid: int) -> str | None:
        """The data of one row (None when it is gone)."""
        row = self.db.execute("SELECT data FROM learnings WHERE rowid=?", (rowid,)).fetchone()
        return row[0] if row else None

    def archived_rows(self) -> list[tuple[int, str, str, str]]:
        """(rowid, file, id, updated) of every archived learning (project and global archives),
        in rowid order, read from the index of archived rows alone (_ARCHIVED_INDEX)."""
        return self.db.execute("SELECT rowid, file, id, updated FROM learnings INDEXED BY learnings_archived "
                               f"WHERE {ARCHIVED_SQL} ORDER BY rowid").fetchall()  # (the planner scans the table)

    def archived_count(self) -> int:
        """How many archived learnings there are (project and global archives)."""
        return self._count(ARCHIVED_SQL)

    def archived_before(self, cutoff_iso: str) -> int:
        """How many archived learnings were last used (else updated) before `cutoff_iso`."""
        return self._count(f"{ARCHIVED_SQL} AND "
                           "coalesce(json_extract(data, '$.last_used'), updated) < ?", (cutoff_iso,))

    def superseded_lines(self) -> list[tuple[str, int, int]]:
        """(file, lines, lines neither live nor corrupt) of every indexed file."""
        return self.db.execute(
            "SELECT f.path, f.lines, f.lines - f.bad - (SELECT count(*) FROM learnings l WHERE l.file = f.path) "
            "FROM files f").fetchall()

    # -- recall's windowed full-text search (engine/search.py) ----------------------------
    def row_total(self) -> int:
        """How many learnings the index holds, in every scope."""
        return self.db.execute("SELECT count(*) FROM learnings").fetchone()[0]

    def next_rowid(self) -> int:
        """One past the largest rowid (1 for an empty index)."""
        return self.db.execute("SELECT coalesce(max(rowid), 0) + 1 FROM learnings").fetchone()[0]

    def fts_any(self, query: str) -> bool:
        """Whether any row matches the full-text query (the first match is enough: no count)."""
        return self.db.execute("SELECT 1 FROM fts WHERE fts MATCH ? LIMIT 1", (query,)).fetchone() is not None

    def fts_count(self, query: str) -> int:
        """How many rows match the full-text query."""
        return self.db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (query,)).fetchone()[0]

    def fts_count_below(self, query: str, low: int) -> int:
        """How many rows below rowid `low` match the full-text query (in the full-text index
        alone: cheap, whatever their scope)."""
        return self.db.execute("SELECT count(*) FROM fts WHERE fts MATCH ? AND rowid < ?", (query, low)).fetchone()[0]

    def fts_window_start(self, query: str, high: int, window: int) -> int:
        """The rowid where a window of `window` matches below `high` starts, newest first (0
        when fewer are left)."""
        row = self.db.execute("SELECT rowid FROM fts WHERE fts MATCH ? AND rowid < ? ORDER BY rowid DESC "
                              "LIMIT 1 OFFSET ?", (query, high, window - 1)).fetchone()
        return row[0] if row else 0

    def ranked_in_window(self, query: str, low: int, high: int, near: FtsNear) -> Iterable[tuple[int, float]]:
        """(rowid, bm25) of the best matches with rowids in [low, high), every project's and
        the global store's, streamed."""
        scopes = f"(l.scope IN {near.glob_in} OR l.scope IN {near.proj_in})"
        return self._ranked(query, f"{scopes} AND fts.rowid >= ? AND fts.rowid < ?", (low, high), near)

    def ranked_near(self, query: str, near: FtsNear, below: int | None = None) -> Iterable[tuple[int, float]]:
        """(rowid, bm25) of the best matches of this project and the global store (those below
        rowid `below` only, when given), streamed."""
        local = f"((l.pid = ? AND l.scope IN {near.proj_in}) OR l.scope IN {near.glob_in})"
        if below is None:
            return self._ranked(query, local, (near.pid,), near)
        return self._ranked(query, local + " AND fts.rowid < ?", (near.pid, below), near)

    def _ranked(self, query: str, where: str, args: tuple, near: FtsNear) -> Iterable[tuple[int, float]]:
        sql = ("SELECT l.rowid, bm25(fts) FROM fts JOIN learnings l ON l.rowid = fts.rowid "
               f"WHERE fts MATCH ? AND {where} ORDER BY bm25(fts) * CASE WHEN l.pid = ? THEN {near.boost_project} "
               f"WHEN l.pid = '' THEN {near.boost_global} ELSE 1.0 END LIMIT {near.limit}")
        return self.db.execute(sql, (query, *args, near.pid))

    def other_projects_below(self, high: int, near: FtsNear) -> list[str]:
        """The projects other than this one with learnings below rowid `high`, sorted."""
        rows = self.db.execute(f"SELECT DISTINCT pid FROM learnings WHERE rowid < ? AND scope IN {near.proj_in} "
                               "AND pid != ?", (high, near.pid))
        return sorted(p for (p,) in rows)

    def placed_scores(self, rowids: list[int]) -> dict[int, tuple]:
        """rowid -> (file, scope, pid, frequency, impact, last use) of these rows (those that
        still exist): where they are and what their score reads (`score_inputs`; None where
        an older index has not filled the columns yet), without their `data`."""
        out: dict[int, tuple] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start:start + 500]
            sql = ("SELECT rowid, file, scope, pid, score_frequency, score_impact, score_used FROM learnings "
                   f"WHERE rowid IN ({','.join('?' * len(chunk))})")
            for rowid, *rest in self.db.execute(sql, chunk):
                out[rowid] = tuple(rest)
        return out

    def interrupt_at(self, deadline: float | None, clock: Callable[[], float], steps: int) -> _Interrupt:
        """A context in which a running query is interrupted (sqlite3.OperationalError
        "interrupted") once clock() reaches deadline, looked at every `steps` SQLite steps;
        no limit when deadline is None."""
        return _Interrupt(self.db, deadline, clock, steps)

    # -- helpers ---------------------------------------------------------------------------
    def rel(self, path: str | os.PathLike) -> str:
        """How the index names a file: its path relative to the home (as given when outside)."""
        text, home = os.fspath(path), str(self.layout.home)
        if text.startswith(home) and text[len(home):len(home) + 1] == os.sep:  # the usual case, no `Path`
            return text[len(home) + 1:]
        from pathlib import Path  # a path outside the home, or spelled differently: rare

        try:
            return str(Path(path).relative_to(self.layout.home))
        except ValueError:
            return str(path)

    def scope_of(self, path: str | os.PathLike) -> tuple[str, str]:
        """('project'|'archive'|'global'|'global-archive', project id or '')."""
        parts = self.rel(path).split(os.sep)
        archived = parts[-1] == ARCHIVE_FILE
        if parts[0] == "projects" and len(parts) >= 3:
            return ("archive" if archived else "project"), parts[1]
        return ("global-archive" if archived else "global"), ""

    def _row(
        self, rel: str, scope: str, pid: str, rec: dict, body: str | None = None, features: str | None = None,
        data: str | None = None,
    ) -> tuple:
        """The learnings row of a record (`features` when already known; `data`, its compact
        JSON, when the caller holds it). Archived rows get no derived columns: only live rows
        are read through them."""
        derive = self.derive if scope in ("project", "global") else None
        if features is None and derive:
            features = derive[1](rec)
        if data is None:
            data = jsonlite.dumps(rec, ensure_ascii=False, separators=(",", ":"))
        if body is None:
            body = search_body(rec)
        return (rel, rec["id"], rec.get("key") or "", scope, pid, rec.get("type"), rec.get("category"),
                rec.get("status"), rec.get("updated") or "", body, data, derive[0](rec) if derive else None, features,
                *score_inputs(rec), *export_columns(rec, body), projects_column(rec), *fix_columns(rec),
                *(derive[2](rec) if derive else _NOT_DUE))

    def _tx(self):
        return _Transaction(self.db, self._batch)

    def batch(self) -> _Batch:
        """A context in which the writes of many files (promote's and prune's decisions,
        compaction) share a transaction, committed every BATCH_SECONDS and at the end instead
        of once per file: a commit per file (and the full-text segments each one flushes)
        made most of a first promote's time at 100,000 learnings. Each file's rows are
        written whole inside it, after the file itself: a crash before the commit leaves
        files whose stat the index has not recorded, re-read by the next refresh. Writers
        wait for a busy file lock only after committing (`commit_batch`)."""
        return _Batch(self)

    def commit_batch(self) -> None:
        """Commit the batch's open transaction (before waiting for a file lock)."""
        if self._batch is not None and self.db.in_transaction:
            self.db.execute("COMMIT")

    def close(self) -> None:
        self.db.close()

    def use_page_cache(self, kib: int) -> None:
        """SQLite's page cache of this connection, in KiB (its default is 2,000)."""
        self.db.execute(f"PRAGMA cache_size=-{int(kib)}")

    def load_rows(self, files: Iterable[tuple]) -> None:
        """Replace the rows of whole files just written (import) with the records the writer
        holds, instead of reading the files back; one transaction for all of them. Each item
        is (path, records, written) or (path, records, written, lines): `records` is the file's
        content (one line each, distinct ids), `lines` their lines as text (compact JSON: the
        `data` of their rows, not written again), and `written` the file holding those bytes
        now: `path` itself, or a file renamed onto it afterwards (a rename keeps the stat
        recorded here). A file that changes in between has another stat, so the next refresh
        re-reads it."""
        self.load_file_rows([self.file_rows(path, records, written, *lines)
                             for path, records, written, *lines in files])

    def file_rows(self, path: Path, records: list[dict], written: Path, lines: list[str] | None = None) -> tuple:
        """`load_rows`' rows of one file, made while its records are at hand: a writer that
        gathers many files for one transaction holds these (~1.3 KB a record), not the records."""
        rel = self.rel(path)
        scope, pid = self.scope_of(path)
        datas = lines if lines is not None else [None] * len(records)
        return rel, [self._row(rel, scope, pid, r, data=d) for r, d in zip(records, datas, strict=True)], _stat(written)

    def load_file_rows(self, batch: list[tuple]) -> None:
        """Write the rows `file_rows` made, in one transaction (see load_rows)."""
        with self._tx() as db:
            for rel, _rows, _st in batch:
                _delete_file_rows(db, rel)
            last = db.execute("SELECT coalesce(max(rowid), 0) FROM learnings").fetchone()[0]
            for rel, rows, st in batch:
                db.executemany(_INSERT, rows)
                if st:
                    db.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?)", (rel, *st, len(rows), 0, 0))
                else:
                    db.execute("DELETE FROM files WHERE path=?", (rel,))
            # New rows get rowids past the largest one: their full text goes in with one statement.
            db.execute("INSERT INTO fts(rowid, body) SELECT rowid, body FROM learnings WHERE rowid > ?", (last,))


# Some rows of the learnings table: a condition and its arguments, made by the functions below
# (never from data); the queries that take one read its live rows. (namedtuple: typing.NamedTuple
# costs ~2 ms of `learn recall`'s start.)
Selection = namedtuple("Selection", "where args", module=__name__)


WHOLE_STORE = Selection("scope IN ('project', 'global')", ())  # what a whole-store run reads


def of_project(pid: str) -> Selection:
    """A project's own learnings."""
    return Selection("scope = 'project' AND pid = ?", (pid,))


def copies_elsewhere(keys: list[str], pid: str) -> Selection:
    """The project or global learnings with one of these keys, except the
    project's own."""
    marks = ",".join("?" * len(keys))
    return Selection(f"key IN ({marks}) AND NOT (scope = 'project' AND pid = ?) AND scope IN ('project', 'global')",
                     (*keys, pid))


def of_project_keys(pid: str, keys: list[str]) -> Selection:
    """A project's own learnings with one of these keys (a session's end: what it changed)."""
    return Selection(f"scope = 'project' AND pid = ? AND key IN ({','.join('?' * len(keys))})", (pid, *keys))


# The live rows whose key starts with a prefix: a range, so the key's index serves it.
_KEY_KIND = f"key >= ? AND key < ? AND {LIVE_SQL}"


def _key_range(prefix: str) -> tuple[str, str]:
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def with_rowids(rowids: list[int]) -> Selection:
    """These rows."""
    return Selection(f"rowid IN ({','.join('?' * len(rowids))})", tuple(rowids))


def _live(rows: Selection) -> str:
    return f"({rows.where}) AND (status IN ({','.join(repr(s) for s in LIVE_STATUSES)}) OR status IS NULL)"


class FtsNear:
    """What a ranked full-text query of recall is near: this project (`pid`, '' for none) and
    the global store, boosted; the archives too when `archived`; `limit` rows per query."""

    __slots__ = ("boost_global", "boost_project", "glob_in", "limit", "pid", "proj_in")

    def __init__(self, pid: str, archived: bool, boost_project: float, boost_global: float, limit: int):
        self.pid, self.limit = pid, limit
        self.boost_project, self.boost_global = boost_project, boost_global
        proj = ("project", "archive") if archived else ("project",)
        glob = ("global", "global-archive") if archived else ("global",)
        self.proj_in = "(" + ",".join(f"'{s}'" for s in proj) + ")"
        self.glob_in = "(" + ",".join(f"'{s}'" for s in glob) + ")"


class _Interrupt:
    """Interrupt a running query at the deadline (SQLite's progress handler)."""

    def __init__(self, db: sqlite3.Connection, deadline: float | None, clock, steps: int):
        self.db, self.deadline, self.clock, self.steps = db, deadline, clock, steps

    def __enter__(self):
        if self.deadline is not None:
            self.db.set_progress_handler(lambda: int(self.clock() >= self.deadline), self.steps)

    def __exit__(self, *exc):
        if self.deadline is not None:
            self.db.set_progress_handler(None, 0)


# Export's sections, and its order: `created` as the export compares it (str() of the field,
# "" when missing or empty), then id, then where the index holds them.
# The archived rows are found in an index that holds the scope (`learnings_counts`, read whole
# but ~1/60 of the table's pages), then read by rowid: the plain condition scanned the whole
# table for them (~80,000 pages read for ~27,000 rows at 100,000; ~0.1 s of an export).
ARCHIVED_SQL = "scope IN ('archive', 'global-archive')"  # the rows of project and global archives
_EXPORT_SECTIONS = {"global": "scope = 'global' AND pid = ''", "project": "scope = 'project' AND pid = ?",
                    "archived": f"rowid IN (SELECT rowid FROM learnings WHERE {ARCHIVED_SQL}) AND {ARCHIVED_SQL}"}
_EXPORT_ORDER = ("coalesce(export_created, CASE json_type(data, '$.created') WHEN 'text' THEN "
                 "json_extract(data, '$.created') ELSE export_created(json_type(data, '$.created'), "
                 "json_extract(data, '$.created')) END), id, rowid")

_INSERT = ("INSERT INTO learnings(file, id, key, scope, pid, type, category, status, updated, body, data, derived, "
           "features, score_frequency, score_impact, score_used, score_base, export_created, export_as_is, projects, "
           "fix_shape, fix_state, due_clock, clock_start) VALUES (" + ",".join("?" * 24) + ")")
# The indexed columns of a row (by their place in Index._row's tuple) that an update in place
# sets only when their value changed: SQLite updates every index that names a column of the SET
# clause, whatever its value, and a promote or prune patch (an archive clock, a conflict) changes
# none of key, scope, pid, type, category, and often not the status nor the score: 3 to 5 of the
# 8 indexes are left alone. `updated`, `data`, `derived`, `features`, the export's two and the
# fix columns are always set (the first two change with any patch; the others are in no index).
_NARROW = ((0, "file"), (2, "key"), (3, "scope"), (4, "pid"), (5, "type"), (6, "category"), (7, "status"),
           (13, "score_frequency"), (14, "score_impact"), (15, "score_used"), (16, "score_base"), (19, "projects"),
           (22, "due_clock"), (23, "clock_start"))
_NOT_DUE = (None, None)  # the due columns of a row written without `derive` (a hook's): to be derived


# The fields a row's searchable text (search_body) is made of, and those its score inputs
# (score_inputs) read: a patch that leaves them alone leaves those columns as they are.
_TEXT_FIELDS = frozenset((*SEARCH_FIELDS, "tags"))
_SCORE_FIELDS = frozenset(("frequency", "impact", "last_used", "created"))
_KEPT_BY_FIELDS = (*_TEXT_FIELDS, *_SCORE_FIELDS, "projects")  # what _patched_row compares


def _same_value(a, b) -> bool:
    """Equal and of the same types (str() of 1 and True differ, and the row's text is made
    of str() of the fields): JSON values, so lists and dicts are compared element by element.
    A field a patch left alone is the same object (the record patched is a shallow copy)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is list:
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same_value(v, b[k]) for k, v in a.items())
    return a == b


def _in_lists(values: list) -> Iterable[tuple[str, list]]:
    """`_in_list` of each run of IN_CHUNK values: the lists of one long `IN (...)` query."""
    for start in range(0, len(values), IN_CHUNK):
        yield _in_list(values[start:start + IN_CHUNK])


IN_CHUNK = 500  # values in one `IN (...)`: well under SQLite's limit of bound parameters


def _in_list(values: list) -> tuple[str, list]:
    """The placeholders of `IN (...)` for these values (at least one), padded to a power of two
    with the last value again: a few shapes of each statement, which stay in the connection's
    cache of prepared statements, instead of one prepared again for every length of list
    (promote's and prune's thousands of files: ~4 % of a first promote's instructions)."""
    size = 1
    while size < len(values):
        size *= 2
    return ",".join("?" * size), [*values, *[values[-1]] * (size - len(values))]


def _kept_values(row: tuple) -> tuple:
    """The values of _NARROW's columns in a row tuple (as _rows_of reads them back)."""
    return tuple(row[at] for at, _name in _NARROW)


def _set_changed(db: sqlite3.Connection, prev: tuple, row: tuple) -> None:
    """Update the row `prev` (from _rows_of) to `row` (Index._row's tuple) in place: its
    `updated`, `data`, `derived`, `features`, export and fix columns, and of _NARROW's columns
    those whose value differs."""
    changed = tuple((name, row[at]) for (at, name), before in zip(_NARROW, prev[3], strict=True) if row[at] != before)
    db.execute(_update_sql(tuple(name for name, _value in changed)),
               (row[8], row[10], row[11], row[12], row[17], row[18], row[20], row[21],
                *(value for _name, value in changed), prev[0]))


_UPDATE_SQL: dict[tuple[str, ...], str] = {}


def _update_sql(columns: tuple[str, ...]) -> str:
    sql = _UPDATE_SQL.get(columns)
    if sql is None:
        named = "".join(f", {name}=?" for name in columns)
        sql = (f"UPDATE learnings SET updated=?, data=?, derived=?, features=?, export_created=?, "
               f"export_as_is=?, fix_shape=?, fix_state=?{named} WHERE rowid=?")
        _UPDATE_SQL[columns] = sql
    return sql


def is_busy(exc: BaseException) -> bool:
    """Another connection holds the lock: nothing is wrong with the file (never rebuild it
    for that: removing it under the other processes is what damages their work)."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _delete_row(db: sqlite3.Connection, rowid: int, body: str) -> None:
    db.execute("INSERT INTO fts(fts, rowid, body) VALUES ('delete', ?, ?)", (rowid, body))
    db.execute("DELETE FROM learnings WHERE rowid=?", (rowid,))


def _add_columns(db: sqlite3.Connection, columns: tuple[tuple[str, str], ...]) -> None:
    """Add to `learnings` the (name, type) columns that an index made by an older version lacks."""
    have = {row[1] for row in db.execute("PRAGMA table_info(learnings)")}
    for name, kind in columns:
        if name not in have:
            db.execute(f"ALTER TABLE learnings ADD COLUMN {name} {kind}")


def _add_missing_columns(db: sqlite3.Connection) -> None:
    """Columns added since an index was created (derived caches, NULL until filled)."""
    _add_columns(db, (("derived", "TEXT"), ("features", "TEXT")))  # v5: what promotion and prune read of a record


def _add_score_columns(db: sqlite3.Connection) -> None:
    """v8: what a learning's score reads, as columns (`score_inputs`), for `stats`' best
    learnings (`score_bounds`) without parsing `data` of every live row (issue 14). Rows of an
    older index keep NULL there until rewritten; `score_bounds` reads their `data` instead."""
    _add_columns(db, (("score_frequency", "INT"), ("score_impact", "REAL"), ("score_used", "TEXT"),
                      ("score_base", "REAL")))
    db.execute(_SCORES_INDEX)


def _add_export_columns(db: sqlite3.Connection) -> None:
    """v9: the export's order and check of each row (`export_columns`). Rows of an older index
    keep NULL until rewritten; the export computes both from `data` and `body` for those."""
    _add_columns(db, (("export_created", "TEXT"), ("export_as_is", "INT")))


def _add_projects_column(db: sqlite3.Connection, fill: bool = True) -> None:
    """v10: `projects` as a column (see _KEY_PROJECTS_INDEX), filled from `data` for the rows
    of an index older than v10 (`fill`: also after a version older than v10 wrote rows
    without it; not for an index of v10 or later, whose writers all set it: filling it again
    rewrites every row, ~70 s of CPU at 300,000 learnings, within a hook), and the index on it
    in place of v7's index on the expression."""
    _add_columns(db, (("projects", "TEXT"),))
    old = db.execute("SELECT sql FROM sqlite_master WHERE name='learnings_key_projects'").fetchone()
    if old is not None and "json_extract" in (old[0] or ""):
        db.execute("DROP INDEX learnings_key_projects")
    if fill:
        db.execute("UPDATE learnings SET projects=CASE WHEN json_valid(data) AND "
                   "json_type(data, '$.projects')='array' THEN json_extract(data, '$.projects') END")
    db.execute(_KEY_PROJECTS_INDEX)


def projects_column(rec: dict) -> str | None:
    """The `projects` column of a record: its `projects` as compact JSON when a list, else NULL
    (what `graph` reads of it: only a list names projects)."""
    projects = rec.get("projects")
    if type(projects) is not list:
        return None
    if all(type(p) is str and p.isascii() and p.isalnum() for p in projects):  # project ids: no escapes
        return '["' + '","'.join(projects) + '"]' if projects else "[]"
    try:
        return jsonlite.dumps(projects, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # pragma: no cover - a record read from JSON dumps again
        return None


def _add_fix_columns(db: sqlite3.Connection, reset: bool) -> None:
    """v11: what a failure's lookup reads of a row (`fix_columns`), so that it decodes a few
    hundred bytes a row instead of the whole record (issue 14). Adding them rewrites nothing;
    the rows of an older index keep NULL until written again, and the lookup reads their
    `data` instead (and stores their columns when it can without waiting: `store_fix_columns`).
    `reset`: the index had them, and an older version has written to it since (its updates in
    place leave them as they were): they are emptied, to be derived again."""
    _add_columns(db, (("fix_shape", "TEXT"), ("fix_state", "TEXT")))
    if reset:
        db.execute("UPDATE learnings SET fix_shape=NULL, fix_state=NULL WHERE fix_state IS NOT NULL")


# v12: the live rows whose lifecycle the clock may change, found without reading every row
# (the rows never due left out: an index of every live row would be the planner's pick for
# any scan of them, in its order, e.g. graph's, which reads learnings_key_projects alone)
_DUE_SOON = "(due_clock IS NULL OR due_clock < 9e15)"  # store.score.NEVER_DUE
_DUE_INDEXES = (f"CREATE INDEX IF NOT EXISTS learnings_due ON learnings(due_clock) WHERE {LIVE_SQL} AND {_DUE_SOON}",
                f"CREATE INDEX IF NOT EXISTS learnings_clock ON learnings(clock_start) WHERE {LIVE_SQL} "
                "AND clock_start IS NOT NULL")


# v13: what prune reads of every archived row (its hard-delete scan: `archived_rows`, and the
# count) from an index of those rows alone; without it the scope's condition read every wide row
# of the table (~0.5 s of each prune at 100,000 learnings, 23,000 of them archived).
_ARCHIVED_INDEX = ("CREATE INDEX IF NOT EXISTS learnings_archived ON learnings(file, id, updated, scope) "
                   f"WHERE {ARCHIVED_SQL}")


def _add_archived_index(db: sqlite3.Connection) -> None:
    """v13: the index of the archived rows (_ARCHIVED_INDEX); made from the rows at hand."""
    db.execute(_ARCHIVED_INDEX)


def _add_due_columns(db: sqlite3.Connection, reset: bool) -> None:
    """v12: when the clock alone can next change a live row's lifecycle (`due_clock`, and
    `clock_start`, its archive clock's start), set with `derived` (Index.derive), so that a
    whole-store run again reads only the rows due and those its other decisions need
    (engine.promotion). Adding them rewrites nothing: the rows keep NULL, which reads as due,
    until the next promote or prune derives them. `reset`: the index had them and an older
    version has written to it since (its updates in place leave them as they were): they are
    emptied, and the note that every row was derived is dropped."""
    _add_columns(db, (("due_clock", "REAL"), ("clock_start", "REAL")))
    if reset:
        db.execute("UPDATE learnings SET due_clock=NULL, clock_start=NULL WHERE due_clock IS NOT NULL "
                   "OR clock_start IS NOT NULL")
    db.execute("DELETE FROM meta WHERE name IN ('derived_version', 'terms')")
    for sql in _DUE_INDEXES:
        db.execute(sql)
    db.executescript(_TERMS_SCHEMA)  # empty until the next promote fills it (Index.fill_terms)


def _has_columns(db: sqlite3.Connection, names: tuple[str, ...]) -> bool:
    """Does `learnings` exist with these columns?"""
    have = {row[1] for row in db.execute("PRAGMA table_info(learnings)")}
    return all(name in have for name in names)


# The fields of a record that say which fix it states and how it reads (capture.offers: Fix,
# change_of, applies_to, wording.fix_kind): a popular failure's rows share a few of these.
FIX_SHAPE_FIELDS = ("type", "tool", "fix", "fix_command", "fix_kind", "command", "error")
_SCALARS = (str, int, float, bool, type(None))


def fix_facts(rec: dict) -> tuple[dict, list]:
    """(shape, state) of a record, what a failure's lookup reads of it: `shape`, the fields of
    FIX_SHAPE_FIELDS it has; `state`, [helped, failed_at, worked_at, frequency, last_used,
    projects, [[session, event] of each evidence entry that is an object]], each as stored
    (the lookup reads them as it read the record). Raises TypeError where the record's
    evidence cannot be read as a list, as reading the record itself does."""
    shape = {name: rec[name] for name in FIX_SHAPE_FIELDS if name in rec}
    pairs = [[e.get("session"), e.get("event")] for e in rec.get("evidence") or [] if isinstance(e, dict)]
    get = rec.get
    return shape, [get("helped"), get("failed_at"), get("worked_at"), get("frequency"), get("last_used"),
                   get("projects"), pairs]


def fix_columns(rec: dict) -> tuple[str | None, str | None]:
    """(`fix_shape`, `fix_state`): fix_facts as compact JSON, for the rows of an error key;
    NULL for the others (no failure looks them up) and for a record whose facts might read
    otherwise once decoded from its `data` (a tuple, a set: not a value JSON gives back as it
    was), which the lookup then reads whole."""
    from learn_cli.text.keys import ERROR_KEY  # (loaded once; whoever makes learnings has it already)

    key, evidence = rec.get("key"), rec.get("evidence")
    if type(key) is not str or not key.startswith(ERROR_KEY) or type(evidence) not in (list, str, dict, type(None)):
        return None, None
    shape, state = fix_facts(rec)
    projects = state[5]
    if (any(type(value) not in _SCALARS for value in (*shape.values(), *state[:5], *(part for pair in state[6]
                                                                                   for part in pair)))
            or not (type(projects) in _SCALARS or type(projects) is list
                    and all(type(p) in _SCALARS for p in projects))):
        return None, None
    try:
        return (jsonlite.dumps(shape, ensure_ascii=False, separators=(",", ":")),
                jsonlite.dumps(state, ensure_ascii=False, separators=(",", ":")))
    except (TypeError, ValueError):  # pragma: no cover - a record read from JSON dumps again
        return None, None


def score_inputs(rec: dict) -> tuple[int, float, str | None, float]:
    """(frequency, impact, last use, best score) of a record as `store.score` reads them: the
    frequency and impact it uses, the moment of last_used, else created, as ISO text with its
    offset and microseconds (None when neither is a time: the score then takes `now`), and
    its score at that moment (recency 1), which no later clock exceeds."""
    score = _score()
    moment = score.parse_time(rec.get("last_used")) or score.parse_time(rec.get("created"))
    frequency, impact = score.frequency_of(rec), score.impact_of(rec)
    return frequency, impact, moment.isoformat() if moment else None, _best_score(frequency, impact)


_BEST: dict[tuple, float] = {}  # (frequency, impact, their types) -> the score at recency 1


def _best_score(frequency, impact) -> float:
    """A few hundred pairs make the rows of a whole import (each ~5 µs scored)."""
    key = (frequency, impact, type(frequency), type(impact))
    best = _BEST.get(key)
    if best is None:
        if len(_BEST) >= 4096:
            _BEST.clear()
        best = _BEST[key] = _score().score({"frequency": frequency, "impact": impact}, _score().parse_time(_BEST_AT))
    return best


def _delete_file_rows(db: sqlite3.Connection, rel: str) -> None:
    db.execute("INSERT INTO fts(fts, rowid, body) SELECT 'delete', rowid, body FROM learnings WHERE file=?", (rel,))
    db.execute("DELETE FROM learnings WHERE file=?", (rel,))


class _Transaction:
    def __init__(self, db: sqlite3.Connection, batch: _Batch | None = None):
        self.db = db
        self.batch = batch

    def __enter__(self) -> sqlite3.Connection:
        if self.batch is not None and self.db.in_transaction:
            return self.db  # the batch's transaction, still open
        if deadline.active():  # a hook: wait for the write lock only as long as its time lasts
            self.db.execute(f"PRAGMA busy_timeout={int(deadline.remaining(BUSY_TIMEOUT_S) * 1000)}")
        self.db.execute("BEGIN IMMEDIATE")
        if self.batch is not None:
            self.batch.began = time.monotonic()
        return self.db

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type:
            if self.db.in_transaction:  # in a batch: the files written before lose their rows too
                self.db.execute("ROLLBACK")  # (their stats were not recorded: re-read on refresh)
        elif self.batch is None or time.monotonic() - self.batch.began >= BATCH_SECONDS:
            self.db.execute("COMMIT")


class _Batch:
    """Index.batch's context: while it is open, Index._tx shares one transaction."""

    def __init__(self, index: Index):
        self.index = index
        self.began = 0.0

    def __enter__(self) -> Index:
        if self.index._batch is None:
            self.index._batch = self
        return self.index

    def __exit__(self, *exc) -> None:
        if self.index._batch is not self:
            return  # an inner batch of an outer one: the outer commits
        self.index._batch = None
        if self.index.db.in_transaction:  # every file's rows in it are whole: keep them
            try:
                self.index.db.execute("COMMIT")
            except sqlite3.Error:  # lost rows: their files' stats were not recorded either
                if self.index.db.in_transaction:
                    self.index.db.execute("ROLLBACK")


def cannot_write(exc: Exception) -> bool:
    """An SQLite error of the disk or the permissions (full, read-only, I/O), not damage to
    the index: deleting and rebuilding it cannot help and would only lose it."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and any(
        hint in text for hint in ("disk i/o", "disk is full", "readonly", "read-only", "unable to open"))


def _stat(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


class MemoryIndex(Index):
    """An index that lives in memory, for homes we may not write to (`Store._memory_index`)."""

    def _connect(self):
        db = sqlite3.connect(":memory:", isolation_level=None)
        db.executescript(_SCHEMA)
        db.executescript(_TERMS_SCHEMA)
        _add_score_columns(db)
        for sql in (_KEY_PROJECTS_INDEX, _ARCHIVED_INDEX, *_DUE_INDEXES):
            db.execute(sql)
        return db

    def _open(self):
        db = self._connect()
        self.db = db
        return db
