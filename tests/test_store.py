"""The store: layout, modes, project identity, the JSONL log, corrupt lines, the index."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess

from learn_cli.store import jsonl
from learn_cli.store.project import identify, normalize_remote
from learn_cli.store.record import coerce_record, make_record, new_id


def modes(root):
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            yield os.path.join(dirpath, d), 0o700
        for f in filenames:
            yield os.path.join(dirpath, f), 0o600


def test_first_run_creates_layout_with_private_modes(store):
    home = store.home
    for rel in ("config.json", "global/errors.jsonl", "global/patterns.jsonl", "global/preferences.json",
                "projects", "sessions", "analytics/stats.json"):
        assert (home / rel).exists(), rel
    _ = store.index  # opening the index creates its files too
    for path, want in modes(home):
        assert stat.S_IMODE(os.stat(path).st_mode) == want, path


def test_ids_are_unique_within_one_second():
    ids = {new_id(1_700_000_000) for _ in range(5000)}
    assert len(ids) == 5000
    assert all(i.startswith("learn-20231114T221320Z-") for i in ids)


def test_remote_normalisation_makes_clones_one_project(tmp_path):
    assert normalize_remote("git@github.com:Me/App.git") == normalize_remote("https://github.com/me/app")
    assert normalize_remote("ssh://git@github.com/me/app.git") == "github.com/me/app"
    assert normalize_remote("https://user:secret@gitlab.com/x/y.git") == "gitlab.com/x/y"
    a, b = tmp_path / "a" / "app", tmp_path / "b" / "app"
    for p, url in ((a, "git@github.com:me/app.git"), (b, "https://github.com/me/app")):
        (p / ".git").mkdir(parents=True)
        (p / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {url}\n')
    assert identify(a).id == identify(b / "sub" if (b / "sub").mkdir() is None else b).id


def test_same_basename_different_projects(tmp_path):
    a, b = tmp_path / "x" / "api", tmp_path / "y" / "api"
    a.mkdir(parents=True), b.mkdir(parents=True)
    assert identify(a).name == identify(b).name == "api"
    assert identify(a).id != identify(b).id


def test_labels_of_a_few_projects_are_those_of_all_of_them(store, tmp_path):
    """recall labels its ten hits from the index's rows of them and of the projects sharing
    their names, not from every project: the same labels projects() gives."""
    import shutil

    from learn_cli.store.project import Project

    projects = [Project(f"{n:012x}", name, str(tmp_path / f"{name}{n}"), None)
                for n, name in enumerate(("api", "api", "web", "cli", "api"))]
    for project in projects:
        store.register_project(project)
    shutil.rmtree(store.layout.project_dir(projects[4].id))  # a project removed: no longer shares "api"
    whole = {pid: info["label"] for pid, info in store.projects().items()}
    assert whole[projects[0].id] == f"api ({projects[0].id})" and whole[projects[2].id] == "web"
    for few in ([projects[0].id], [projects[2].id, projects[3].id], [p.id for p in projects]):
        assert store.labels(few) == {pid: whole[pid] for pid in few if pid in whole}
    store.index.db.execute("DELETE FROM projects WHERE pid = ?", (projects[3].id,))  # not in the index yet
    assert store.labels([projects[3].id]) == {projects[3].id: "cli"}
    assert store.labels([]) == {}


def test_log_supersedes_and_deletes(tmp_path):
    path = tmp_path / "l.jsonl"
    r1 = make_record(context="a", fix="b")
    jsonl.append(path, [r1, dict(r1, frequency=5), make_record(context="c", fix="d")])
    jsonl.append(path, [jsonl.tombstone(r1["id"])])
    loaded = jsonl.load(path)
    assert r1["id"] not in loaded.records and len(loaded.records) == 1
    assert loaded.superseded == 3  # both versions of r1 and the tombstone are dead lines


def test_corrupt_lines_are_skipped_and_reported(tmp_path):
    path = tmp_path / "l.jsonl"
    good = [make_record(context=f"c{i}", fix="f") for i in range(3)]
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in good[:2]) + b"{not json\n\xff\xfe\n[1,2]\n"
                     + json.dumps(good[2]).encode() + b"\n" + b'{"id": "trunc')
    loaded = jsonl.load(path)
    assert len(loaded.records) == 3
    assert [b.line for b in loaded.bad] == [3, 4, 5, 7]


def test_append_after_truncated_line_does_not_glue(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_bytes(b'{"id": "x", "context": "half')
    rec = make_record(context="new", fix="f")
    jsonl.append(path, [rec])
    loaded = jsonl.load(path)
    # the half line a killed writer left is cut off and kept aside, never left inside the file
    assert rec["id"] in loaded.records and not loaded.bad and loaded.lines == 1
    assert path.with_name("l.jsonl.corrupt").read_bytes() == b'{"id": "x", "context": "half\n'


def test_append_after_a_whole_record_without_its_newline_keeps_it(tmp_path):
    path = tmp_path / "l.jsonl"
    first = make_record(context="old", fix="f")
    path.write_bytes(jsonl.utf8(jsonl.dumps(first)))  # killed just before the newline
    second = make_record(context="new", fix="g")
    jsonl.append(path, [second])
    loaded = jsonl.load(path)
    assert set(loaded.records) == {first["id"], second["id"]} and not loaded.bad
    assert not path.with_name("l.jsonl.corrupt").exists()


def test_rewrite_is_atomic_and_private(tmp_path):
    path = tmp_path / "l.jsonl"
    jsonl.rewrite(path, [make_record(context="a", fix="b")])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_compaction_keeps_live_records_and_bad_lines(tmp_path):
    path = tmp_path / "l.jsonl"
    rec = make_record(context="a", fix="b")
    jsonl.append(path, [dict(rec, frequency=n) for n in range(1, 11)])
    with open(path, "ab") as fh:
        fh.write(b"garbage\n")
    before, after = jsonl.compact(path)
    assert (before, after) == (11, 2)
    loaded = jsonl.load(path)
    assert loaded.records[rec["id"]]["frequency"] == 10 and len(loaded.bad) == 1


def test_unknown_fields_survive_update(store, tmp_path):
    project = identify(tmp_path)
    store.register_project(project)
    path = store.layout.learnings(project.id)
    rec = make_record(context="a", fix="b", key="k1", future_field={"x": 1})
    store.put(path, rec)
    store.update(path, rec["id"], lambda r: dict(r, frequency=3))
    on_disk = jsonl.load(path).records[rec["id"]]
    assert on_disk["future_field"] == {"x": 1} and on_disk["frequency"] == 3


def test_index_rebuilds_when_deleted_or_corrupt(store, tmp_path):
    project = identify(tmp_path)
    store.register_project(project)
    path = store.layout.learnings(project.id)
    rec = make_record(context="docker platform", fix="--platform linux/amd64", key="k2")
    store.put(path, rec)
    store.close()
    db = store.layout.index_db
    db.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{db}{suffix}"):
            os.unlink(f"{db}{suffix}")
    store.refresh()
    assert store.index.by_key("k2")[0][3]["id"] == rec["id"]
    store.close()
    os.unlink(db)
    store.refresh()
    assert store.index.by_key("k2")


def test_an_index_locked_by_another_writer_is_never_rebuilt(store, tmp_path, monkeypatch):
    """A busy index is not a damaged one: removing it under the other processes (as a hook
    once did when its short deadline met another writer's lock) broke their work."""
    import sqlite3

    from learn_cli.store.index import Index

    project = identify(tmp_path)
    store.register_project(project)
    store.put(store.layout.learnings(project.id), make_record(context="x", fix="y", key="k3"))
    store.close()
    inode = os.stat(store.layout.index_db).st_ino

    def locked(self):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(Index, "_connect", locked)
    try:
        Index(store.layout)
    except sqlite3.OperationalError:
        pass
    else:
        raise AssertionError("a locked index must be reported, not rebuilt")
    assert os.stat(store.layout.index_db).st_ino == inode  # the same file, untouched


def test_index_notices_hand_edits(store, tmp_path):
    project = identify(tmp_path)
    store.register_project(project)
    path = store.layout.learnings(project.id)
    store.put(path, make_record(context="a", fix="b", key="k3"))
    extra = make_record(context="added by hand", fix="x", key="k4")
    with open(path, "a") as fh:
        fh.write(json.dumps(extra) + "\n")
    store.refresh()
    assert store.index.by_key("k4")


def test_index_forgets_a_removed_project_and_checks_files_by_string_path(store, tmp_path):
    project = identify(tmp_path)
    store.register_project(project)
    lay = store.layout
    store.put(lay.learnings(project.id), make_record(context="gone soon", fix="x", key="k5"))
    files = store.index.all_files()
    assert files == [str(p) for p in (*lay.global_files(), lay.global_archive, lay.learnings(project.id),
                                      lay.archive(project.id))]
    shutil.rmtree(lay.project_dir(project.id))
    store.refresh()
    assert not store.index.by_key("k5")


def test_index_names_files_relative_to_the_home_whether_str_or_path(store):
    lay, index, pid = store.layout, store.index, "0123456789ab"
    cases = [(lay.learnings(pid), f"projects/{pid}/learnings.jsonl", ("project", pid)),
             (lay.archive(pid), f"projects/{pid}/archive.jsonl", ("archive", pid)),
             (lay.global_errors, "global/errors.jsonl", ("global", "")),
             (lay.global_archive, "global/archive.jsonl", ("global-archive", ""))]
    for path, rel, scope in cases:
        for given in (path, str(path)):
            assert index.rel(given) == rel and index.scope_of(given) == scope
    assert index.rel("/elsewhere/archive.jsonl") == "/elsewhere/archive.jsonl"
    assert index.scope_of("/elsewhere/archive.jsonl") == ("global-archive", "")


def test_coerce_record_rejects_and_caps():
    assert coerce_record([1])[0] is None
    assert coerce_record({"type": "error"})[1].startswith("no text")
    assert (
        "must be text" in coerce_record({"context": 5, "fix": "x"})[1] or coerce_record({"context": 5, "fix": "x"})[0]
    )
    rec, why = coerce_record({"context": "x" * 10_000, "fix": "y", "frequency": "lots", "impact": 7, "id": "../../etc"})
    assert why is None and len(rec["context"]) == 500 and rec["frequency"] == 1 and rec["impact"] == 1.0


def test_is_time_answers_as_parse_iso():
    """`is_time` spares the parse of learn's own time shape; its answer is parse_iso's."""
    import random

    from learn_cli.store.record import is_time, parse_iso

    odd = ["2026-02-29T00:00:00Z", "2024-02-29T23:59:59Z", "0000-01-01T00:00:00Z", "2026-01-31T24:00:00Z",
           "2026-04-31T01:02:03Z", "\uff12026-01-31T12:00:00Z", "2026-01-31T12:00:00+00:00", "2026-01-31", "", None, 7]
    draw = random.Random(3).randint
    made = [f"{draw(0, 9999):04d}-{draw(0, 13):02d}-{draw(0, 32):02d}T{draw(0, 25):02d}:{draw(0, 61):02d}:"
            f"{draw(0, 61):02d}Z" for _ in range(20_000)]
    assert [v for v in odd + made if is_time(v) != (parse_iso(v) is not None)] == []
    assert sum(map(is_time, made)) > 1000  # both answers are met


def test_an_index_of_the_previous_schema_gains_the_derived_columns(store, tmp_path):
    """A v4 index (no derived/features columns) is upgraded in place, its rows kept; promotion
    then fills the new columns."""
    import sqlite3

    from learn_cli.engine.promotion import run_promotion

    project = identify(tmp_path)
    store.register_project(project)
    rec = make_record(context="docker platform", fix="--platform linux/amd64", key="k-old")
    store.put(store.layout.learnings(project.id), rec)
    store.close()
    db = sqlite3.connect(str(store.layout.index_db))
    for trigger in ("insert", "update", "delete"):  # (v12's, on `features`: a v4 index had none)
        db.execute(f"DROP TRIGGER learnings_terms_{trigger}")
    db.execute("ALTER TABLE learnings DROP COLUMN derived")
    db.execute("ALTER TABLE learnings DROP COLUMN features")
    db.execute("PRAGMA user_version=4")
    db.commit()
    db.close()
    assert store.index.by_key("k-old")[0][3]["id"] == rec["id"]  # rows kept, no rebuild
    run_promotion(store)
    derived, features = store.index.db.execute("SELECT derived, features FROM learnings WHERE id=?",
                                               (rec["id"],)).fetchone()
    assert json.loads(derived)[1]["id"] == rec["id"] and json.loads(features)[0] == "--platform linux/amd64"


def test_an_index_of_v7_gains_the_score_columns_filled_by_the_next_promotion(store, tmp_path):
    """A v7 index (no score columns) is upgraded in place; `stats` reads `data` until the next
    whole-store run fills the columns, then the columns (issue 14)."""
    import sqlite3

    from learn_cli.engine.promotion import run_promotion
    from learn_cli.store.index import score_inputs

    project = identify(tmp_path)
    store.register_project(project)
    rec = make_record(context="use pnpm", key="k-old", frequency=4, impact=0.8, last_used="2026-11-01T00:00:00Z")
    store.put(store.layout.learnings(project.id), rec)
    store.close()
    db = sqlite3.connect(str(store.layout.index_db))
    db.execute("DROP INDEX learnings_scores")
    for name in ("score_frequency", "score_impact", "score_used", "score_base"):
        db.execute(f"ALTER TABLE learnings DROP COLUMN {name}")
    db.execute("PRAGMA user_version=7")
    db.commit()
    db.close()
    assert store.index.by_key("k-old")[0][3]["id"] == rec["id"]  # rows kept, no rebuild
    assert not store.index.scores_filled()
    run_promotion(store, dry_run=True)
    assert store.index.scores_filled()
    row = store.index.db.execute("SELECT score_frequency, score_impact, score_used, score_base FROM learnings "
                                 "WHERE id=?", (rec["id"],)).fetchone()
    assert row == score_inputs(rec) == (4, 0.8, "2026-11-01T00:00:00+00:00", 0.32)


def test_two_versions_of_a_record_in_one_write_leave_the_index_on_the_last(store, tmp_path):
    """One append with an in-place change and then a new text for the same id: the index
    holds the last version (its full text too), as a re-read of the file would."""
    project = identify(tmp_path)
    store.register_project(project)
    path = store.layout.learnings(project.id)
    rec = make_record(context="docker platform", fix="--platform linux/amd64", key="k-two")
    store.put(path, rec)
    first, second = dict(rec, frequency=3), dict(rec, fix="use buildx", frequency=4)
    with jsonl.file_lock(path):
        jsonl.append(path, [first, second])
        store.index.record_write(path, [first, second], 2)
    rows = store.index.by_id(rec["id"])
    assert len(rows) == 1 and rows[0][3]["fix"] == "use buildx" and rows[0][3]["frequency"] == 4
    hits = store.index.search('"buildx"')
    assert [h[3]["id"] for h in hits] == [rec["id"]]
    store.close()
    store.refresh()
    assert store.index.by_id(rec["id"])[0][3]["fix"] == "use buildx"


def test_no_index_but_the_helped_one_reads_data_so_updates_in_place_leave_them_alone(store):
    """SQLite updates every index naming a column of an UPDATE's SET clause, and an index on
    an expression of `data` at every write of `data`: promote's and prune's thousands of
    patches rewrote the v7 `learnings_key_projects` entry of each row (half the cost of an
    update in place at 100,000). v10 indexes a `projects` column, set only when it changes."""
    _ = store.index
    sqls = dict(store.index.db.execute("SELECT name, sql FROM sqlite_master WHERE type='index' AND "
                                       "tbl_name='learnings' AND sql IS NOT NULL"))
    assert "projects" in sqls["learnings_key_projects"]
    assert [name for name, sql in sqls.items() if "data" in sql] == ["learnings_helped"]


def test_an_index_of_v9_gains_the_projects_column_filled_from_data(store, tmp_path):
    """A v9 index (`learnings_key_projects` on json_extract(data, '$.projects')) is upgraded in
    place: the column is filled from each row's data (a list only), the index is rebuilt on it,
    and `graph` reads the same projects; later writes keep the column in step."""
    import sqlite3

    from learn_cli.engine.graph import _keys

    project = identify(tmp_path)
    store.register_project(project)
    path = store.layout.learnings(project.id)
    rec = make_record(context="use pnpm", key="k-many", projects=[project.id, "p2", "p-é"])
    odd = make_record(context="use yarn", key="k-odd", projects="p3")
    store.put(path, rec)
    store.put(path, odd)
    before = _keys(store.index, json.loads)
    store.close()
    db = sqlite3.connect(str(store.layout.index_db))
    db.execute("DROP INDEX learnings_key_projects")
    db.execute("UPDATE learnings SET projects=NULL")
    db.execute("CREATE INDEX learnings_key_projects ON learnings(key, pid, id, json_extract(data, '$.projects')) "
               "WHERE scope IN ('project', 'global') AND (status IS NULL OR status != 'archived')")
    db.execute("PRAGMA user_version=9")
    db.commit()
    db.close()
    rows = dict(store.index.db.execute("SELECT key, projects FROM learnings"))
    assert json.loads(rows["k-many"]) == [project.id, "p2", "p-é"] and rows["k-odd"] is None
    assert "json_extract" not in store.index.db.execute(
        "SELECT sql FROM sqlite_master WHERE name='learnings_key_projects'").fetchone()[0]
    assert _keys(store.index, json.loads) == before
    store.put(path, dict(rec, projects=[project.id], frequency=3))
    assert store.index.db.execute("SELECT projects FROM learnings WHERE key='k-many'").fetchone()[0] == \
        f'["{project.id}"]'


def test_a_compaction_folds_with_orjson_and_keeps_the_lines_as_read(store, tmp_path, monkeypatch):
    """A compaction parses with orjson once a command has loaded it (the standard library's
    parser for the lines orjson refuses: NaN) and writes back every live line as read: a value
    orjson reads otherwise (an integer beyond 64 bits: a float) is kept as it was."""
    import sys

    import orjson

    from learn_cli.text import jsonlite

    monkeypatch.delitem(sys.modules, "orjson")
    assert jsonl.fold_loads() is jsonlite.loads  # never imports orjson itself (the hooks)
    monkeypatch.setitem(sys.modules, "orjson", orjson)
    assert jsonl.fold_loads() is not jsonlite.loads
    project = identify(tmp_path)
    store.register_project(project)
    path = store.layout.learnings(project.id)
    store.put(path, make_record(context="first", key="k1"))
    live = [b'{"id":"a","n":123456789012345678901234567890}', b'{"id":"b","n":NaN}']
    with open(path, "ab") as f:
        f.write(b'{"id":"a","n":1}\n{"id":"b","n":2}\n' + b"".join(line + b"\n" for line in live))
    store.refresh()
    before, after = store.compact(path)
    assert (before, after) == (5, 3)
    assert path.read_bytes().splitlines()[1:] == live


def test_a_kept_digest_or_regex_cache_cut_short_leaves_a_temp_that_is_cleared(store, monkeypatch):
    """The caches beside the records (the kept digest, the hooks' regex cache) are written to a
    temp file and renamed; a process killed in between leaves the temp, named as the store's
    rewrites name theirs, so `doctor` and `prune` clear it (the crash campaign found one that
    nothing cleared)."""
    import pytest

    from learn_cli.capture import regex_cache
    from learn_cli.engine import digest
    from learn_cli.engine.context import ContextResult

    def killed(*_args):
        raise SystemExit("killed between the write and the rename")

    regex_cache.uninstall()  # an earlier test's cache, still installed with patterns to save, is not this one's
    monkeypatch.setattr(os, "replace", killed)
    project_dir = store.layout.project_dir("abcdefabcdef")
    project_dir.mkdir(parents=True, exist_ok=True)
    with pytest.raises(SystemExit):
        digest._write_cache(str(project_dir / digest.CACHE_FILE), [], ContextResult("", 0, [], 0, 0))
    regex_cache.install(str(store.layout.global_dir / regex_cache.FILE_NAME), patch=False)
    try:
        regex_cache._serve(r"x+\d", 0)
        with pytest.raises(SystemExit):
            regex_cache.save()
    finally:
        regex_cache.uninstall()
    monkeypatch.undo()
    assert len(store.remove_stale_temps(older_than_s=0)) == 2
    assert not [p for p in store.home.rglob("*.tmp")]


def test_a_worktree_of_a_repository_without_a_remote_is_its_project(tmp_path):
    """`git worktree add` (the worktree workflow agents use) checks a branch out in a folder of its
    own whose `.git` is a file; with a remote the two were one project already, without one the
    worktree was a project of its own and learned nothing from the main checkout."""
    main = tmp_path / "app"
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull, "HOME": str(tmp_path),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q", str(main)], ["-C", str(main), "commit", "-q", "--allow-empty", "-m", "start"],
                 ["-C", str(main), "worktree", "add", "-q", str(main / ".worktrees" / "feature")]):
        subprocess.run(["git", *args], check=True, env=env, capture_output=True)
    worktree = identify(main / ".worktrees" / "feature")
    assert worktree.root == str((main / ".worktrees" / "feature").resolve())
    assert worktree.id == identify(main).id and worktree.remote is None
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True, env=env)
    assert identify(other).id != identify(main).id
