"""How promote and prune write their decisions to the index (issue 14, fifth pass): an archived
record's row moves to its archive in place (its rowid and full-text entry kept), and the writes
of many files share transactions (`Store.batched`). The files and the reports must be what the
earlier path wrote (the archive appended with `put_many`, then the record removed from its
file), and the index what a rebuild from the files gives."""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.generate import generate
from learn_cli.engine.promotion import run_promotion
from learn_cli.engine.prune import run_prune
from learn_cli.store import jsonl
from learn_cli.store.api import Store
from learn_cli.store.index import Index
from learn_cli.store.locks import file_lock, lock_path
from learn_cli.store.record import make_record

NOW = 1_795_000_000.0
RUN_AT = "2026-11-20T12:00:00Z"  # shortly after the generator's clock
STAMPS = ("updated", "promoted")  # set from the wall clock as records are written


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen")
    generate(out, 1500, 12, seed=5, now=NOW)
    return out / "home"


def _files(home: Path) -> dict:
    """Every record of every record file, by (file, id), without the write stamps."""
    out = {}
    for path in sorted(home.glob("projects/*/*.jsonl")) + sorted(home.glob("global/*.json*")):
        if path.name.startswith("index.db"):
            continue
        for rid, rec in jsonl.load(path).records.items():
            out[(str(path.relative_to(home)), rid)] = {k: v for k, v in rec.items() if k not in STAMPS}
    return out


def _without_new_ids(files: dict, other: dict) -> dict:
    """New global records get random ids: those not in the other home become <new>."""
    import json

    fresh = {rid for _f, rid in files} - {rid for _f, rid in other}
    text = json.dumps(sorted((list(k), v) for k, v in files.items()), sort_keys=True)
    for rid in fresh:
        text = text.replace(rid, "<new>")
    return {tuple(k): v for k, v in json.loads(text)}


def _rows(db: sqlite3.Connection) -> set:
    return set(db.execute("SELECT file, id, key, scope, pid, type, category, status, body, data FROM learnings"))


def _index_is_rebuilt_as_is(home: Path, tmp_path: Path) -> None:
    """The index equals one rebuilt from the files, and its full-text index is sound."""
    db = sqlite3.connect(str(home / "global" / "index.db"))
    try:
        db.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 1)")  # raises when unsound
        rows = _rows(db)
    finally:
        db.close()
    fresh = tmp_path / "rebuilt"
    shutil.copytree(home, fresh)
    for suffix in ("", "-wal", "-shm"):
        (fresh / "global" / f"index.db{suffix}").unlink(missing_ok=True)
    store = Store(fresh, warn_stderr=False)
    try:
        store.refresh()
        assert _rows(store.index.db) == rows
    finally:
        store.close()


def _maintain(home: Path) -> tuple[dict, dict]:
    store = Store(home, warn_stderr=False)
    try:
        promoted = run_promotion(store, now=RUN_AT).as_json()
        pruned = run_prune(store, now=RUN_AT).as_json()
    finally:
        store.close()
    promoted.pop("promoted")  # new global records get random ids
    for name in ("disk_before", "disk_after", "disk_saved"):
        pruned["storage"].pop(name)
    return promoted, pruned


@pytest.fixture
def earlier_path(monkeypatch):
    """update_many as it was before moves: the archive copies appended on their own first."""
    update_many = Store.update_many

    def without_moves(self, path, changes, remove=(), rewrite=False, moves=None, archive=None):
        if moves:
            self.put_many(archive, moves)
        return update_many(self, path, changes, remove, rewrite)

    monkeypatch.setattr(Store, "update_many", without_moves)


def test_promote_and_prune_write_what_the_earlier_path_wrote(generated, tmp_path, request):
    new, old = tmp_path / "new", tmp_path / "old"
    shutil.copytree(generated, new)
    shutil.copytree(generated, old)
    new_reports = _maintain(new)
    request.getfixturevalue("earlier_path")
    old_reports = _maintain(old)
    assert new_reports[0]["counts"]["archived"] > 0 and new_reports[1]["archived"]["count"] > 0
    assert new_reports[0]["counts"]["conflicts"] > 0 and new_reports[1]["merged"]["removed"] > 0
    assert new_reports == old_reports
    new_files, old_files = _without_new_ids(_files(new), _files(old)), _without_new_ids(_files(old), _files(new))
    assert len(new_files) > 1000 and new_files == old_files
    _index_is_rebuilt_as_is(new, tmp_path)


def test_an_archived_record_keeps_its_row_and_stays_searchable(generated, tmp_path, monkeypatch):
    """The move into the archive keeps each record's row. (Its rowid as the move begins: a
    `.json` document written earlier in the same run is read again whole, with new rowids.)"""
    home = tmp_path / "home"
    shutil.copytree(generated, home)
    store = Store(home, warn_stderr=False)
    before: dict = {}
    record_moves = Index.record_moves

    def noting_rows(self, path, records, source, texts=None):
        ids = [rec["id"] for rec in records]
        before.update(self.db.execute(f"SELECT id, rowid FROM learnings WHERE id IN ({','.join('?' * len(ids))})", ids))
        return record_moves(self, path, records, source, texts)

    monkeypatch.setattr(Index, "record_moves", noting_rows)
    try:
        store.refresh()
        report = run_promotion(store, now=RUN_AT)
        archived = [item["id"] for item in report.archived]
        assert archived
        rows = {rid: (rowid, scope) for rid, rowid, scope in store.index.db.execute(
            f"SELECT id, rowid, scope FROM learnings WHERE id IN ({','.join('?' * len(archived))})", archived)}
        assert all(rows[rid][0] == before[rid] and rows[rid][1].endswith("archive") for rid in archived)
        rid = archived[0]
        word = max(store.index.db.execute("SELECT body FROM learnings WHERE id=?", (rid,)).fetchone()[0].split(),
                   key=len).strip("\"'():.,;`")
        assert rid in {rec["id"] for _f, _s, _p, rec, _rank in store.index.search(f'"{word}"', limit=10_000)}
    finally:
        store.close()


def test_a_moved_record_whose_text_changed_is_indexed_again(store, tmp_path):
    path, archive = store.layout.learnings("p1"), store.layout.archive("p1")
    os.makedirs(path.parent, exist_ok=True)
    kept, changed = make_record(context="use pnpm here", key="txt:a"), make_record(context="use uv here", key="txt:b")
    store.put_many(path, [kept, changed])
    moves = [dict(kept, status="archived"), dict(changed, status="archived", context="use uv sync here")]
    store.update_many(path, {}, [kept["id"], changed["id"]], moves=moves, archive=archive)
    db = store.index.db
    db.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 1)")
    assert {r for (r,) in db.execute("SELECT scope FROM learnings")} == {"archive"}
    found = {rec["id"] for _f, _s, _p, rec, _rank in store.index.search('"uv sync"')}
    assert found == {changed["id"]}
    assert jsonl.load(path).records == {} and set(jsonl.load(archive).records) == {kept["id"], changed["id"]}


def test_a_batch_commits_before_waiting_for_a_busy_lock(store, tmp_path):
    """Nobody waits for a file lock inside an open transaction: the batch commits first."""
    first, second = store.layout.learnings("p1"), store.layout.learnings("p2")
    for path in (first, second):
        os.makedirs(path.parent, exist_ok=True)
    fd = os.open(lock_path(second), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another writer holds the second file
        with store.batched():
            store.put_many(first, [make_record(context="one", key="txt:one")])
            assert store.index.db.in_transaction  # the batch keeps it open
            with pytest.raises(TimeoutError), file_lock(second, timeout=0.05, before_wait=store.index.commit_batch):
                pass
            assert not store.index.db.in_transaction
            other = sqlite3.connect(str(store.layout.index_db))
            try:
                assert other.execute("SELECT count(*) FROM learnings").fetchone()[0] == 1  # committed
            finally:
                other.close()
    finally:
        os.close(fd)


def _updates(store, act) -> list[str]:
    """The UPDATE statements on the learnings table that `act()` runs."""
    seen: list[str] = []
    store.index.db.set_trace_callback(seen.append)
    try:
        act()
    finally:
        store.index.db.set_trace_callback(None)
    # (SQLite traces a statement again for each trigger program it enters: index v12's triggers
    # on `features` and `key`; a statement repeated at once is one statement)
    return [s for n, s in enumerate(seen) if s.startswith("UPDATE learnings") and (n == 0 or seen[n - 1] != s)]


def test_an_update_in_place_names_only_the_indexed_columns_that_changed(store, tmp_path):
    """SQLite updates every index naming a column of the SET clause, whatever its value: a
    patch of the archive clock names no indexed column; one of the status names the status."""
    path = store.layout.learnings("p1")
    os.makedirs(path.parent, exist_ok=True)
    rec = make_record(context="use pnpm here", key="txt:a")
    store.put_many(path, [rec])

    def patch(**fields):
        return lambda: store.update_many(path, {rec["id"]: lambda r: dict(r, **fields)})

    clock = _updates(store, patch(low_since="2026-11-01T00:00:00Z"))
    assert len(clock) == 1 and " key=" not in clock[0] and "status=" not in clock[0] and "data=" in clock[0]
    status = _updates(store, patch(status="conflicted", conflict_with=["x"]))
    assert len(status) == 1 and "status=" in status[0] and " key=" not in status[0] and "scope=" not in status[0]
    _index_is_rebuilt_as_is(store.home, tmp_path)


def test_a_rewrite_and_a_compaction_write_unchanged_lines_as_they_were(store):
    """A record a rewrite or a compaction leaves as it was keeps its line byte for byte (not
    dumped again); a changed one is written in the compact form; the records are the same."""
    path = store.layout.learnings("p1")
    os.makedirs(path.parent, exist_ok=True)
    a_line = b'{"id": "a", "key": "txt:a", "context": "use pnpm",  "status": "active"}'
    b_old = b'{"id": "b", "key": "txt:b", "context": "use uv", "status": "active"}'
    b_new = b'{ "id": "b", "key": "txt:b", "context": "use uv sync", "status": "active" }'
    path.write_bytes(a_line + b"\n" + b_old + b"\n" + b_new + b"\n")
    before = jsonl.load(path).records
    assert jsonl.compact(path) == (3, 2)
    assert path.read_bytes() == a_line + b"\n" + b_new + b"\n"
    assert jsonl.load(path).records == before
    store.refresh()
    store.update_many(path, {"b": lambda r: dict(r, frequency=2)}, rewrite=True)
    lines = path.read_bytes().splitlines()
    assert lines[0] == a_line and lines[1] == jsonl.dumps(jsonl.load(path).records["b"]).encode()
    assert jsonl.load(path).records["b"]["frequency"] == 2 and len(lines) == 2


_COLUMNS = ("file, id, key, scope, pid, type, category, status, updated, body, data, derived, features, "
            "score_frequency, score_impact, score_used, score_base, export_created, export_as_is, projects, "
            "fix_shape, fix_state, due_clock, clock_start")


@pytest.mark.parametrize("rewrite", [False, True])
def test_a_patched_row_is_the_row_its_record_derives(store, rewrite):
    """Promote's and prune's patches keep the columns a patch left alone (Index._patched_row):
    every column of every row is what `_row` derives from the record as written, whichever
    fields the patch touched (none of the text, the text, the score's inputs, the creation
    time, the projects, a value that only changed its type)."""
    from learn_cli.engine.promotion import DERIVE

    store.index.derive = DERIVE
    path = store.layout.learnings("p1")
    os.makedirs(path.parent, exist_ok=True)
    recs = [make_record(type="error", error=f"pytest: error {n}", fix=f"pip install mod{n}", key=f"err:{n}",
                        projects=["p1"], tags=["ci"], frequency=1) for n in range(9)]
    recs.append(make_record(context="never use npm here", key="txt:npm", type="preference"))
    store.put_many(path, recs)
    patches = [dict(low_since="2026-11-01T00:00:00Z"), dict(status="conflicted", conflict_with=["x"]),
               dict(fix="pip install --user mod2"), dict(frequency=7, last_used="2026-11-30T00:00:00Z"),
               dict(created="2025-01-01T00:00:00Z"), dict(projects=["p1", "p2"]), dict(tags=["ci", "docker"]),
               dict(frequency=True), dict(impact=1), dict(context="always use npm here")]
    store.update_many(path, {rec["id"]: (lambda r, p=p: dict(r, **p)) for rec, p in zip(recs, patches, strict=True)},
                      rewrite=rewrite)
    rows = store.index.db.execute(f"SELECT {_COLUMNS} FROM learnings WHERE file=?", (store.index.rel(path),)).fetchall()
    assert len(rows) == len(recs)
    for row in rows:
        rec = jsonl.jsonlite.loads(row[10])
        assert row == store.index._row(row[0], "project", "p1", rec), rec["id"]


def test_a_document_read_again_keeps_the_features_of_its_unchanged_records(store, monkeypatch):
    """A `.json` document is read again whole after each write (Index._rows_again): the rows
    of its unchanged records (the same `data`) keep their conflict features instead of deriving
    them again, and every column of every row is still what `_row` derives from the record as written
    (the changed record's features derived again; a record read by another version of
    `derived` derived whole)."""
    from learn_cli.engine import conflicts, promotion

    store.index.derive = promotion.DERIVE
    path = store.layout.global_preferences
    recs = [make_record(context=f"always use tool{n} for builds", key=f"txt:tool{n}", type="preference",
                        status="global") for n in range(6)]
    store.put_many(path, recs)
    rel = store.index.rel(path)
    version = promotion._DERIVED_VERSION  # (a row `derived` by the version before)
    store.index.db.execute("UPDATE learnings SET derived=replace(derived, ?, ?) WHERE id=?",
                           (f"[{version},", f"[{version - 1},", recs[5]["id"]))
    derived = []
    record_features = conflicts.record_features
    monkeypatch.setattr(conflicts, "record_features", lambda rec: derived.append(rec["id"]) or record_features(rec))
    store.update_many(path, {recs[0]["id"]: lambda r: dict(r, context="never use tool0 for builds"),
                             recs[1]["id"]: lambda r: dict(r, low_since="2026-11-01T00:00:00Z")})
    # the two records written, and the one whose `derived` an older version wrote
    assert sorted(derived) == sorted(recs[n]["id"] for n in (0, 1, 5))
    rows = store.index.db.execute(f"SELECT {_COLUMNS} FROM learnings WHERE file=?", (rel,)).fetchall()
    assert len(rows) == len(recs)
    for row in rows:
        assert row == store.index._row(row[0], "global", "", jsonl.jsonlite.loads(row[10]))
