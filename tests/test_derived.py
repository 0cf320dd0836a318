"""The index's `derived` column (a record's decision fields and conflict features) is a cache:
promotion and prune must decide exactly as they do from whole records. Each test runs the same
command on two copies of one generated home, one read from whole records (the column left
empty, as in a home where it cannot be written) and one from the column, and compares the
reports and the files written."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import sys
from datetime import timedelta
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.generate import generate
from bench.run import index_rows
from learn_cli.engine import promotion
from learn_cli.engine import prune as prune_module
from learn_cli.engine.promotion import run_promotion
from learn_cli.engine.prune import run_prune
from learn_cli.store.api import Store
from learn_cli.store.index import LIVE_SQL

NOW = 1_795_000_000.0
RUN_AT = "2026-11-20T12:00:00Z"  # shortly after the generator's clock


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen")
    generate(out, 1500, 12, seed=11, now=NOW)
    return out / "home"


def _copies(generated: Path, tmp_path: Path) -> tuple[Path, Path]:
    cold, warm = tmp_path / "cold", tmp_path / "warm"
    shutil.copytree(generated, cold)
    shutil.copytree(generated, warm)
    return cold, warm


def _derived_rows(home: Path) -> tuple[int, int]:
    db = sqlite3.connect(str(home / "global" / "index.db"))
    try:
        return db.execute("SELECT count(derived), count(*) FROM learnings WHERE scope IN ('project', 'global') "
                          "AND status IS NOT 'archived'").fetchone()
    finally:
        db.close()


def _state(home: Path) -> dict:
    """Every record of the home by (file, id), without the write stamp."""
    out = {}
    for path in sorted(home.glob("projects/*/*.jsonl")) + sorted(home.glob("global/*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                rec.pop("updated", None)
                out[(str(path.relative_to(home)), rec["id"])] = rec
    for rec in json.loads((home / "global" / "preferences.json").read_text())["learnings"]:
        rec.pop("updated", None)
        out[("global/preferences.json", rec["id"])] = rec
    return out


_ID = re.compile(r"learn-\d{8}T\d{6}Z-[0-9a-f]{6}")


def _known_ids(home: Path) -> set[str]:
    return {rid for _file, rid in _state(home)}


def _masked(value, known: set[str]):
    """`value` (reports, records) with the ids of the records a run made (new global copies)
    as `<new>`: such an id carries the wall clock and a process sequence, so two runs that
    decide alike still name them differently."""
    text = _ID.sub(lambda m: m.group(0) if m.group(0) in known else "<new>", json.dumps(value, sort_keys=True))
    return json.loads(text)


def _masked_state(home: Path, known: set[str]) -> list:
    """_state, its new records' ids masked, in an order that does not depend on those ids."""
    return sorted(_masked([[file, rec] for (file, _rid), rec in _state(home).items()], known), key=json.dumps)


def _fill_derived(home: Path) -> None:
    store = Store(home)
    try:
        run_promotion(store, now=RUN_AT, dry_run=True)  # reads every record once: fills the column
    finally:
        store.close()
    filled, total = _derived_rows(home)
    assert filled == total > 0


@pytest.fixture
def whole_records(monkeypatch):
    """Runs that read every record whole: the column is never filled before reading."""
    def use(home: Path) -> None:
        monkeypatch.setattr(promotion, "_derive_missing", lambda *args, **kwargs: None)
    return use


def _promote(home: Path) -> dict:
    store = Store(home)
    try:
        return run_promotion(store, now=RUN_AT).as_json()
    finally:
        store.close()


def test_promotion_decides_the_same_from_derived_fields(generated, tmp_path, whole_records):
    cold, warm = _copies(generated, tmp_path)
    _fill_derived(warm)
    warm_report = _promote(warm)
    whole_records(cold)
    assert _derived_rows(cold)[0] == 0  # the generator leaves the column empty
    cold_report = _promote(cold)
    assert cold_report["counts"]["promoted"] > 0 and cold_report["counts"]["conflicts"] > 0
    assert cold_report["counts"]["archived"] > 0
    known = _known_ids(generated)
    assert _masked(cold_report, known) == _masked(warm_report, known)
    cold_state, warm_state = _state(cold), _state(warm)
    assert cold_state.keys() - warm_state.keys() == set() or all(
        k[0].startswith("global/") for k in cold_state.keys() ^ warm_state.keys())
    assert len(cold_state.keys() & warm_state.keys()) > 1000
    assert _masked_state(cold, known) == _masked_state(warm, known)


def test_promotion_settles_and_keeps_the_column_filled(generated, tmp_path):
    """Copies folded into a global learning are archived by the next run when stale; from then
    on a run changes nothing, and every live row keeps its derived value (rows the runs wrote
    were derived as they were written)."""
    home = tmp_path / "home"
    shutil.copytree(generated, home)
    _promote(home)
    _promote(home)
    before = _state(home)
    again = _promote(home)
    assert again["counts"]["promoted"] == again["counts"]["new_conflicts"] == again["counts"]["archived"] == 0
    assert again["counts"]["files_written"] == 0
    filled, total = _derived_rows(home)
    assert filled == total
    assert _state(home) == before


def test_prune_decides_the_same_from_derived_fields(generated, tmp_path, whole_records):
    cold, warm = _copies(generated, tmp_path)
    _fill_derived(warm)
    reports = []
    for home in (warm, cold):
        if home == cold:
            whole_records(cold)
        store = Store(home)
        try:
            reports.append(run_prune(store, now=RUN_AT).as_json())
        finally:
            store.close()
    for report in reports:
        report["storage"].pop("disk_before")
        report["storage"].pop("disk_after")
        report["storage"].pop("disk_saved")
    assert reports[0]["archived"]["count"] > 0
    assert reports[0] == reports[1]
    assert _state(cold) == _state(warm)


def test_a_record_rewritten_by_a_hook_is_read_again(generated, tmp_path):
    """A write without derive (the hooks) empties the column: the next run reads the record."""
    home = tmp_path / "home"
    shutil.copytree(generated, home)
    _fill_derived(home)
    store = Store(home)
    try:
        path, rec = next((store.path_of(f), r) for f, s, _, r in store.iter_index("project")
                         if r.get("status") == "active")
        store.update(path, rec["id"], lambda r: dict(r, frequency=9, impact=0.9, last_used=RUN_AT))
        row = store.index.db.execute("SELECT derived FROM learnings WHERE id=?", (rec["id"],)).fetchone()
        assert row[0] is None
        report = run_promotion(store, now=RUN_AT, dry_run=True)
        assert rec["id"] not in {c["id"] for c in report.archived}
    finally:
        store.close()


def test_odd_projects_values_meet_as_from_whole_records(tmp_path):
    """`projects` written by hand as a string, a number or missing: the streamed features give
    conflicts the same meeting rules as the whole records."""
    from learn_cli.store.project import identify
    from learn_cli.store.record import make_record

    store = Store(tmp_path / "home")
    try:
        project = identify(tmp_path)
        store.register_project(project)
        path = store.layout.learnings(project.id)
        a = make_record(type="preference", context="Use Jest for unit tests", key="txt:a", projects=project.id)
        b = make_record(type="preference", context="Use Vitest for unit tests", key="txt:b", projects=[project.id])
        c = make_record(type="preference", context="Use Mocha for unit tests", key="txt:c", projects=7)
        store.put_many(path, [a, b, c])
        first = run_promotion(store, now=RUN_AT, dry_run=True).as_json()["conflicts"]
        second = run_promotion(store, now=RUN_AT, dry_run=True).as_json()["conflicts"]
    finally:
        store.close()
    pairs = [{x["a"], x["b"]} for x in first]
    assert {a["id"], b["id"]} in pairs and len(pairs) == 3
    assert [{x["a"], x["b"]} for x in second] == pairs


def _every_live_row(store, *args) -> list[int]:
    """What a run read before index v12: every live row."""
    return sorted(r for (r,) in store.index.db.execute(f"SELECT rowid FROM learnings WHERE {LIVE_SQL}"))


@pytest.fixture
def every_row(monkeypatch):
    """Runs that read every live row, as before the due columns and the conflict terms (issue 14)."""
    monkeypatch.setattr(promotion, "what_may_change", _every_live_row)
    monkeypatch.setattr(prune_module, "rows_to_prune", _every_live_row)
    monkeypatch.setattr(promotion, "conflict_items", lambda store, loads: promotion.stream_features(
        store, promotion.WHOLE_STORE, loads))


def _days_of_runs(home: Path, hook_write: bool) -> list:
    """promote then prune on the day of RUN_AT, then promote and prune again 1, 8 and 60 days
    later (each day after the first: a learning used again by a hook, when `hook_write`)."""
    out, known = [], _known_ids(home)
    for days in (0, 1, 8, 60):
        at = _day(days)
        store = Store(home)
        try:
            if hook_write and days:
                path, rec = next((store.path_of(f), r) for f, s, _, r in store.iter_index("project")
                                 if r.get("status") in ("active", "pending") and r.get("low_since"))
                store.update(path, rec["id"], lambda r, at=at: dict(r, frequency=5, impact=0.8, last_used=at))
            out.append(_masked(run_promotion(store, now=at).as_json(), known))
            pruned = run_prune(store, now=at).as_json()
            for name in ("disk_before", "disk_after", "disk_saved"):
                pruned["storage"].pop(name)
            out.append(_masked(pruned, known))
        finally:
            store.close()
    return out


def _day(days: int) -> str:
    from learn_cli.store.score import format_time, parse_time

    return format_time(parse_time(RUN_AT) + timedelta(days=days))


@pytest.mark.parametrize("hook_write", [False, True])
def test_runs_again_decide_as_runs_reading_every_row(generated, tmp_path, every_row, monkeypatch, hook_write):
    """A whole-store run reads only the rows the clock may have changed (index v12's due
    columns), those its other decisions need (what_may_change, rows_to_prune) and, for its
    conflicts, the rows that share a term with a row of another variant (conflict_items): day after day,
    with a learning used again between runs, it reports and writes what a run reading every
    live row does."""
    few, every = _copies(generated, tmp_path)
    wanted = _days_of_runs(every, hook_write)
    monkeypatch.undo()
    got = _days_of_runs(few, hook_write)
    assert sum(r["counts"]["archived"] for r in wanted[::2]) > 0
    assert got == wanted
    known = _known_ids(generated)
    assert _masked_state(few, known) == _masked_state(every, known)


def test_a_run_again_reads_only_the_rows_that_may_change(generated, tmp_path, monkeypatch):
    """The day after a promote and a prune, a promote reads only the groups with an active, a
    global or a conflicted copy, the conflicts' rows and the rows due; a prune only those due:
    the others decide as they did yesterday. The report still counts every row."""
    home = tmp_path / "home"
    shutil.copytree(generated, home)
    store = Store(home)
    try:
        run_promotion(store, now=_day(0))
        run_prune(store, now=_day(0))
        live = len(_every_live_row(store))
        loaded = []
        real = promotion.load_rowids
        monkeypatch.setattr(promotion, "load_rowids", lambda s, rowids, loads: loaded.append(len(rowids))
                            or real(s, rowids, loads))
        monkeypatch.setattr(prune_module, "load_rowids", promotion.load_rowids)
        report = run_promotion(store, now=_day(1), dry_run=True)
        pruned = run_prune(store, now=_day(1), dry_run=True)
    finally:
        store.close()
    assert report.counts()["scanned"] == report.rescored == pruned.scored == pruned.entries_before == live
    assert loaded[0] < live and loaded[1] < live / 20  # (this home's learnings are mostly active: promote reads them)


def test_entries_share_one_string_per_status_and_type(generated, tmp_path):
    """Loaded entries hold one string per distinct type and status for the whole run (memory:
    ~5.6 MB of promote again's 50,000 entries at 100,000 learnings were these words again)."""
    home = tmp_path / "home"
    shutil.copytree(generated, home)
    _fill_derived(home)
    store = Store(home)
    try:
        entries = promotion.load_entries(store, promotion.WHOLE_STORE, json.loads)
    finally:
        store.close()
    assert all(not e.full for e in entries)
    for name in ("type", "status"):
        first: dict = {}
        for e in entries:
            value = e.rec.get(name)
            if value is not None:
                assert first.setdefault(value, value) is value
        assert len(first) > 1


def _as_v11(home: Path) -> None:
    """The index as version 11 left it: no due columns, meta or terms tables, triggers."""
    db = sqlite3.connect(str(home / "global" / "index.db"))
    for name in ("learnings_due", "learnings_clock"):
        db.execute(f"DROP INDEX {name}")
    for name in ("due_clock", "clock_start"):
        db.execute(f"ALTER TABLE learnings DROP COLUMN {name}")
    for trigger in ("insert", "update", "delete"):
        db.execute(f"DROP TRIGGER learnings_terms_{trigger}")
    for table in ("meta", "terms", "terms_due"):
        db.execute(f"DROP TABLE {table}")
    db.execute("PRAGMA user_version=11")
    db.commit()
    db.close()


def test_an_index_of_v11_gains_the_due_columns_without_a_rewrite(generated, tmp_path):
    """Opening an index of v11 adds the due columns empty (no row rewritten, the fix columns
    kept: v11 wrote them); the rows read as due until the next promote derives them."""
    home = tmp_path / "home"
    shutil.copytree(generated, home)
    _fill_derived(home)
    _as_v11(home)
    before = index_rows(home, "SELECT rowid, data, derived, fix_state FROM learnings ORDER BY rowid")
    store = Store(home)
    try:
        store.index  # noqa: B018 - opened: upgraded
    finally:
        store.close()
    assert index_rows(home, "SELECT rowid, data, derived, fix_state FROM learnings ORDER BY rowid") == before
    assert any(state is not None for *_rest, state in before)
    assert index_rows(home, "SELECT count(*) FROM learnings WHERE due_clock IS NOT NULL") == [(0,)]
    _promote(home)
    assert index_rows(home, f"SELECT count(*) FROM learnings WHERE {LIVE_SQL} AND due_clock IS NULL") == [(0,)]
    assert index_rows(home, "SELECT value FROM meta WHERE name='derived_version'") == [(promotion._DERIVED_VERSION,)]


def test_due_columns_an_older_version_may_have_left_behind_are_emptied(generated, tmp_path):
    """v12 → an older version (its updates in place leave the due columns as they were) → v12:
    the columns are emptied and every row is checked again."""
    home = tmp_path / "home"
    shutil.copytree(generated, home)
    _fill_derived(home)
    db = sqlite3.connect(str(home / "global" / "index.db"))
    db.execute("PRAGMA user_version=11")
    db.commit()
    db.close()
    store = Store(home)
    try:
        store.index  # noqa: B018
    finally:
        store.close()
    assert index_rows(home, "SELECT count(*) FROM learnings WHERE due_clock IS NOT NULL OR clock_start IS NOT NULL") \
        == [(0,)]
    assert index_rows(home, "SELECT count(*) FROM meta") == [(0,)]


def test_the_conflict_terms_follow_every_write_of_the_features(generated, tmp_path):
    """The terms table is kept by triggers: a write that gives a row features notes it as due,
    and the next promote stores its terms; a hook's write that changes a record's text empties
    its features and its terms, the next promote derives both again; the rows
    conflicts read are those whose terms another row states otherwise, a fraction of the
    live rows, and every row of every conflict is among them."""
    home = tmp_path / "home"
    shutil.copytree(generated, home)
    store = Store(home)
    try:
        report = run_promotion(store, now=_day(0))
        index = store.index
        assert index.conflict_rowids() is None  # the rows it wrote with new features: due until the next promote
        promotion._store_terms(store, json.loads)
        rowids = index.conflict_rowids()
        live = _every_live_row(store)
        assert rowids and len(rowids) < len(live) / 2
        paired = {r for c in report.conflicts for r in (c["a"], c["b"])}
        marks = ",".join(map(str, rowids))
        ids = {i for (i,) in index.db.execute(f"SELECT id FROM learnings WHERE rowid IN ({marks})")}
        assert paired and paired <= ids
        (rowid, rid, rel), *_ = index.db.execute(
            "SELECT terms.row, id, file FROM terms JOIN learnings ON learnings.rowid = terms.row "
            "WHERE term LIKE 'k:%' AND scope = 'project'")
        store.update(store.path_of(rel), rid, lambda r: dict(r, fix="an entirely new fix"))
        assert index.db.execute("SELECT count(*) FROM terms WHERE row = ?", (rowid,)).fetchone() == (0,)
        run_promotion(store, now=_day(0), dry_run=True)
        (new_rowid,) = index.db.execute("SELECT rowid FROM learnings WHERE id = ? AND file = ?", (rid, rel)).fetchone()
        assert ("k:" + index.db.execute("SELECT key FROM learnings WHERE rowid = ?", (new_rowid,)).fetchone()[0],
                "an entirely new fix") in index.db.execute("SELECT term, variant FROM terms WHERE row = ?",
                                                            (new_rowid,)).fetchall()
    finally:
        store.close()


def test_an_index_of_v12_gains_the_index_of_archived_rows(generated, tmp_path):
    """v13: prune's hard-delete scan reads the archived rows from an index of those alone
    (learnings_archived), added to an index of v12 when opened; the rows are those a scan of
    the table gives, in rowid order, and the index follows the rows prune archives."""
    home = tmp_path / "home"
    shutil.copytree(generated, home)
    _promote(home)
    db = sqlite3.connect(str(home / "global" / "index.db"))
    db.execute("DROP INDEX learnings_archived")
    db.execute("PRAGMA user_version=12")
    db.commit()
    db.close()
    scan = "SELECT rowid, file, id, updated FROM learnings WHERE scope IN ('archive', 'global-archive') ORDER BY rowid"
    store = Store(home)
    try:
        run_prune(store, now=_day(400))
        rows = store.index.archived_rows()
        plan = store.index.db.execute("EXPLAIN QUERY PLAN SELECT rowid, file, id, updated FROM learnings "
                                      "INDEXED BY learnings_archived WHERE scope IN ('archive', 'global-archive') "
                                      "ORDER BY rowid").fetchall()
    finally:
        store.close()
    assert "COVERING INDEX learnings_archived" in str(plan)
    assert rows == [tuple(r) for r in index_rows(home, scan)] and len(rows) > 100

