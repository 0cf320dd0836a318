"""Streaming export and import (learn_cli.engine.exchange): the JSON stream reader across read
chunks, truncated files, the export's exact layout and order, the import's worker processes,
hand-made files (sections out of order, a project listed twice), and Index.load_rows keeping
the index equal to a full re-read of the file."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import orjson
import pytest

from learn_cli.engine import exchange
from learn_cli.store.api import Store
from learn_cli.store.record import coerce_record, make_record

# ---------------------------------------------------------------- helpers


def stream_of(text: str | bytes, chunk: int) -> exchange._JsonStream:
    data = text.encode() if isinstance(text, str) else text
    stream = exchange._JsonStream(io.BytesIO(data), "in.json")
    stream.CHUNK = chunk
    return stream


def read_all(stream: exchange._JsonStream):
    """The document rebuilt through members/items/value, as import walks it."""
    if stream.peek() == "{":
        doc = {}
        for key in stream.members():
            doc[key] = read_all(stream) if stream.peek() in "{[" else stream.value()
        return doc
    if stream.peek() == "[":
        return list(stream.items())
    return stream.value()


def export_doc(entries_by_project: dict, global_entries=(), archived=()) -> dict:
    return {"format": "self-learning-agent", "version": "1.0.0", "exported": "2026-01-01T00:00:00Z",
            "global": list(global_entries),
            "projects": {pid: {"name": f"app-{pid[:4]}", "root": f"/srv/{pid}", "remote": None, "learnings": recs}
                         for pid, recs in entries_by_project.items()},
            "archived": list(archived)}


def entries(n: int, tag: str = "") -> list[dict]:
    return [make_record(key=f"txt:{tag}k{i}", context=f"lesson {tag}{i} — ünïcode ✓ {'x' * (i % 7)}",
                        fix=f"do thing {i}", tags=["t", f"n{i}"], evidence=[{"session": "s", "at": "2026"}],
                        frequency=i % 5 + 1) for i in range(n)]


def stored(home: Path) -> dict:
    """rel path -> {id: record without `updated`} for every record file of a home."""
    from learn_cli.store import jsonl

    out = {}
    for path in sorted(home.rglob("*.json*")):
        if path.suffix in (".jsonl", ".json") and path.name not in ("config.json", "project.json"):
            recs = jsonl.load(path).records
            out[str(path.relative_to(home))] = {k: {f: v for f, v in r.items() if f != "updated"}
                                                for k, r in recs.items()}
    return out


# ---------------------------------------------------------------- the stream reader


DOCS = [
    {"a": 1, "b": [1, 2.5, -3e-4, True, False, None], "c": {"d": "é\u00e9\u4e2d\U0001f600", "e": []}, "f": {}},
    {"format": "x", "global": [{"k": "v" * 3000, "n": 12345678901234}, "s\\\"q", 0, [[[]]]]},
    [{"x": "\n\t\"\\/"}, {"y": "😀 an emoji"}, 1e300, -0.0, 2.5e-10, "end"],
]


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64])
def test_escapes_and_numbers_cut_anywhere(chunk):
    text = r'[{"e": "\ud83d\ude00 \u00e9 \n \" \\"}, 2.5e-10, -12.75E+3, 123456789012345678901234567890, true]'
    assert read_all(stream_of(text, chunk)) == json.loads(text)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64, 1 << 20])
@pytest.mark.parametrize("doc", DOCS)
def test_values_split_across_read_chunks_read_whole(doc, chunk):
    text = json.dumps(doc, ensure_ascii=False, indent=1)
    assert read_all(stream_of(text, chunk)) == json.loads(text)
    compact = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    assert read_all(stream_of(compact, chunk)) == json.loads(compact)


def test_an_entry_larger_than_a_chunk_is_read_by_growing_the_buffer():
    big = {"context": "ω" * 50_000, "n": 1}
    stream = stream_of(json.dumps([big, big, 7], ensure_ascii=False), 1000)
    assert list(stream.items()) == [big, big, 7]


def test_a_large_array_is_read_entry_by_entry():
    """Memory does not grow with the array: what is held is about a chunk."""
    rows = [{"id": f"learn-{i}", "context": f"text {i} " * 20} for i in range(20_000)]
    data = json.dumps(rows).encode()
    stream = stream_of(data, 4096)
    held = 0
    original = stream._more

    def more(least=0):
        nonlocal held
        done = original(least)
        held = max(held, len(stream.text))
        return done

    stream._more = more
    assert sum(1 for _ in stream.items()) == len(rows)
    assert len(data) > 3_000_000 and held < 3 * 4096


@pytest.mark.parametrize("text, message", [
    ('{"a": [1, 2', "Expecting ',' delimiter"),
    ('{"a": "unterminated', "Unterminated string starting at byte 6"),
    ('{"a": tru', "Expecting value"),
    ('{"a": 1} trailing', "Extra data"),
    ('{"a": NaN}', "NaN is not JSON"),
    (b'{"a": "\xff"}', "invalid UTF-8"),
    ("", "Expecting an object"),
])
def test_damage_is_reported_with_where(text, message):
    stream = stream_of(text, 3)
    with pytest.raises(exchange.ExchangeError, match="is not JSON") as caught:
        stream.document() if stream.peek() not in "{" else [stream.value() for _ in stream.members()] + [stream.end()]
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_offsets_count_bytes_for_seeking_back():
    text = '{"é€": [1, 2], "next": {"a": "ü"}}'
    stream = stream_of(text, 4)
    members = stream.members()
    assert next(members) == "é€"
    stream.skip()
    assert next(members) == "next"
    where = stream.offset()
    assert text.encode()[where:].startswith(b'{"a"')
    stream.seek(where)
    assert stream.value() == {"a": "ü"}


# ---------------------------------------------------------------- import


def test_a_truncated_export_is_refused_and_changes_nothing(tmp_path):
    doc = export_doc({"0123456789ab": entries(30, "p"), "ba9876543210": entries(20, "q")}, entries(5, "g"),
                     [dict(r, archived_from="0123456789ab") for r in entries(3, "a")])
    data = json.dumps(doc, indent=2).encode()
    home = tmp_path / "home"
    Store(home, warn_stderr=False).close()
    before = stored(home)
    for cut in (len(data) // 5, len(data) // 2, len(data) - 40, len(data) - 2):
        (tmp_path / "cut.json").write_bytes(data[:cut])
        store = Store(home, warn_stderr=False)
        with pytest.raises(exchange.ExchangeError, match="is not JSON"):
            exchange.import_file(store, tmp_path / "cut.json")
        assert store.index.count() == 0  # no rows left for files never renamed into place
        store.close()
        assert stored(home) == before
        assert not [p for p in home.iterdir() if p.name.startswith(".import-")]
        assert not (home / "projects").exists() or not any((home / "projects").iterdir())


def test_workers_and_in_process_import_the_same(tmp_path, monkeypatch):
    """A large file's redaction checks and index rows go to worker processes: same result."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    projects = {f"{n:012x}": entries(150, f"p{n}") for n in range(12)}
    projects["00000000000a"][7]["error"] = f"push failed with {token}"
    projects["00000000000b"][3]["tags"] = [f"token {token}"]
    projects["00000000000c"] = [dict(r, context=f"{r['context']} \u2028 next\x85line") for r in entries(5, "ls")]
    doc = export_doc(projects, entries(40, "g"), [dict(r, archived_from="000000000003") for r in entries(30, "a")])
    path = tmp_path / "team.json"
    path.write_text(json.dumps(doc))
    reports, homes, pools = [], [], []
    opened = exchange._Helpers.__init__

    def spy(self, *args):
        opened(self, *args)
        pools.append(self.pool is not None)

    monkeypatch.setattr(exchange._Helpers, "__init__", spy)
    # One clock for both imports: the archive clocks (`low_since`) they start are stamped with it.
    from datetime import UTC, datetime

    clock = datetime.now(UTC)
    monkeypatch.setattr("learn_cli.engine.exchange.importer._now", lambda: clock)
    for parallel in (False, True):
        monkeypatch.setattr(exchange._Helpers, "PARALLEL_BYTES", 0 if parallel else 1 << 40)
        monkeypatch.setattr(exchange._Helpers, "batch", 37)
        monkeypatch.setattr(exchange._Staging, "INDEX_BATCH", 500)
        home = tmp_path / f"home-{parallel}"
        store = Store(home, warn_stderr=False)
        report = exchange.import_file(store, path, loads=orjson.loads)
        assert (report.new, report.skipped) == (1875, 0)
        store.refresh()  # nothing to re-read: the rows were written from the records
        rows = {(f, i): json.loads(d) for f, i, d in store.index.db.execute("SELECT file, id, data FROM learnings")}
        store.close()
        reports.append(report.as_json())
        homes.append(stored(home))
        text = "".join(p.read_text() for p in home.rglob("*.jsonl"))
        assert token not in text and "[REDACTED:" in text
        assert {(rel, rid) for rel, recs in homes[-1].items() for rid in recs} == set(rows)
        # each row's `data` is its line of the file (a line break of Unicode's inside it)
        assert all({k: v for k, v in rec.items() if k != "updated"} == homes[-1][rel][rid]
                   for (rel, rid), rec in rows.items())
    assert pools == [False, True]
    assert reports[0] == reports[1]
    assert homes[0] == homes[1]


def test_sections_out_of_order_import_like_the_usual_order(tmp_path, monkeypatch):
    """`archived` before `projects`, the format after the sections: read again from where
    they start, once the file proved to be an export."""
    from datetime import UTC, datetime

    clock = datetime.now(UTC)  # both imports start the same archive clocks (`low_since`)
    monkeypatch.setattr("learn_cli.engine.exchange.importer._now", lambda: clock)
    doc = export_doc({"0123456789ab": entries(10, "p")}, entries(4, "g"),
                     [dict(r, archived_from="0123456789ab") for r in entries(3, "a")])
    usual = json.dumps(doc)
    odd = json.dumps({"archived": doc["archived"], "projects": doc["projects"], "global": doc["global"],
                      "version": "1.0.0", "format": "self-learning-agent"})
    results = []
    for name, text in (("usual", usual), ("odd", odd)):
        (tmp_path / f"{name}.json").write_text(text)
        store = Store(tmp_path / name, warn_stderr=False)
        report = exchange.import_file(store, tmp_path / f"{name}.json")
        store.close()
        # (the archive clock starts at each import's own clock: a second may pass between them)
        records = {rel: {rid: dict(r, source="", low_since=bool(r.get("low_since"))) for rid, r in recs.items()}
                   for rel, recs in stored(tmp_path / name).items()}
        results.append((report.new, report.entries, records))
    assert results[0] == results[1] and results[0][0] == 17


def test_a_project_listed_twice_merges_its_second_part_with_the_first(tmp_path):
    """Two ids of the file that make one project (same remote): the second part merges with
    what the first staged, as it would with records already in the store; a dry run agrees."""
    first = entries(6, "x")
    again = [dict(r, id=r["id"] + "b", fix=r["fix"] + " (v2)") for r in first[:3]] + entries(2, "y")
    doc = {"format": "self-learning-agent", "version": "1.0.0", "projects": {
        "team/app": {"name": "app", "remote": "git@example.com:team/app.git", "learnings": first},
        "app-copy": {"name": "app", "remote": "git@example.com:team/app.git", "learnings": again}}}
    (tmp_path / "twice.json").write_text(json.dumps(doc))
    store = Store(tmp_path / "home", warn_stderr=False)
    dry = exchange.import_file(store, tmp_path / "twice.json", dry_run=True).as_json()
    real = exchange.import_file(store, tmp_path / "twice.json").as_json()
    store.close()
    for name in ("new", "merged", "duplicates", "conflicts", "skipped"):
        assert dry[name] == real[name], name
    assert (real["new"], real["merged"]) == (8, 3)
    (recs,) = [recs for rel, recs in stored(tmp_path / "home").items() if rel.endswith("learnings.jsonl")]
    assert len(recs) == 8 and sum(1 for r in recs.values() if r.get("merged_from")) == 3


def test_a_section_given_twice_is_read_once(tmp_path):
    text = ('{"format": "self-learning-agent", "version": "1.0.0", "global": '
            + json.dumps(entries(2, "a")) + ', "global": ' + json.dumps(entries(3, "b")) + "}")
    (tmp_path / "twice.json").write_text(text)
    store = Store(tmp_path / "home", warn_stderr=False)
    report = exchange.import_file(store, tmp_path / "twice.json")
    store.close()
    assert report.new == 2 and report.warnings == ['"global" appears twice (the second one is skipped)']


# ---------------------------------------------------------------- export


def test_export_is_orjson_indented_document_in_the_usual_order(tmp_path):
    store = Store(tmp_path / "home", warn_stderr=False)
    for pid in ("0123456789ab", "ba9876543210"):
        store.layout.ensure_project(pid)
    recs = [make_record(key=f"txt:k{i}", context=f"ctx {i} ✓", fix="f", created=f"2026-01-0{9 - i}T00:00:00Z",
                        env={"os": "linux"}, evidence=[{"session": "s", "event": "e"}], tags=[])
            for i in range(5)]
    store.put_many(store.layout.learnings("0123456789ab"), recs[:3])
    store.put(store.layout.archive("ba9876543210"), dict(recs[3], status="archived"))  # archived only
    store.put(store.layout.global_archive, dict(recs[4], status="archived"))
    store.put(store.layout.global_patterns, dict(recs[0], id="learn-g", status="global", created=None))
    out = io.BytesIO()
    result = exchange.write_export(store, out, orjson.loads, now="2026-02-02T00:00:00Z")
    store.close()
    data = out.getvalue()
    doc = orjson.loads(data)
    assert data == orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    assert list(doc) == ["format", "version", "exported", "global", "projects", "archived"]
    assert list(doc["projects"]) == ["0123456789ab", "ba9876543210"]
    assert doc["projects"]["ba9876543210"]["learnings"] == []
    learnings = doc["projects"]["0123456789ab"]["learnings"]
    assert [r["created"] for r in learnings] == sorted(r["created"] for r in learnings)
    assert [r["archived_from"] for r in doc["archived"]] == ["global", "ba9876543210"]  # by created
    assert all("updated" not in r for r in learnings + doc["archived"] + doc["global"])
    assert (result.total, result.nbytes, result.project_counts) == (6, len(data), {"0123456789ab": 3,
                                                                                 "ba9876543210": 0})


def test_an_empty_store_exports_empty_sections(tmp_path):
    store = Store(tmp_path / "home", warn_stderr=False)
    out = io.BytesIO()
    exchange.write_export(store, out, orjson.loads, now="2026-02-02T00:00:00Z")
    store.close()
    doc = orjson.loads(out.getvalue())
    assert out.getvalue() == orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    assert (doc["global"], doc["projects"], doc["archived"]) == ([], {}, [])


@pytest.mark.parametrize("secret", ["ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
                                    "https://deploy:hunter2pass@git.example.com/x.git",
                                    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"])
def test_export_redacts_what_a_hand_edit_put_in_the_store(tmp_path, secret):
    store = Store(tmp_path / "home", warn_stderr=False)
    store.layout.ensure_project("0123456789ab")
    store.put(store.layout.learnings("0123456789ab"), make_record(context="ctx", error=f"failed: {secret}", fix="f"))
    out = io.BytesIO()
    exchange.write_export(store, out, orjson.loads)
    store.close()
    assert secret not in out.getvalue().decode() and b"[REDACTED:" in out.getvalue()


@pytest.mark.parametrize("where", ["tags", "project", "past the searchable text"])
def test_export_finds_a_hand_edited_secret_wherever_its_row_holds_it(tmp_path, where):
    """The export looks for the marks of a secret in the row's searchable text (`body`), not
    in the fields gathered again: a tag and the project name are in it, and a text longer
    than the body holds is checked field by field."""
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    fields = {"tags": {"tags": ["ci", f"token {secret}"]}, "project": {"project": f"app {secret}"},
              "past the searchable text": {"error": "word " * 1300 + secret}}[where]
    store = Store(tmp_path / "home", warn_stderr=False)
    store.layout.ensure_project("0123456789ab")
    store.put(store.layout.learnings("0123456789ab"), make_record(context="ctx", fix="f", **fields))
    out = io.BytesIO()
    exchange.write_export(store, out, orjson.loads)
    store.close()
    assert secret not in out.getvalue().decode() and b"[REDACTED:" in out.getvalue()


def _export_bytes(store) -> bytes:
    out = io.BytesIO()
    exchange.write_export(store, out, orjson.loads, now="2026-02-02T00:00:00Z")
    return out.getvalue()


def _expected_export(store) -> bytes:
    """The export as its rules say, from the files: every section sorted by (str(created) or
    "", id), `updated` dropped, the records with a mark of a credential redacted again."""
    from learn_cli.engine.exchange.export import _recheck_secrets
    from learn_cli.store import jsonl

    def records(path, archived_from=None):
        recs = []
        for rec in jsonl.load(path).records.values():
            rec.pop("updated", None)
            if archived_from is not None:
                rec["archived_from"] = archived_from
            recs.append(_recheck_secrets(rec))
        return recs

    def ordered(recs):
        return sorted(recs, key=lambda r: (str(r.get("created") or ""), r["id"]))

    lay, pids = store.layout, sorted(store.projects())
    projects = {pid: {"name": store.projects()[pid]["name"], "root": "", "remote": None,
                      "learnings": ordered(records(lay.learnings(pid)))} for pid in pids}
    archived = [*records(lay.global_archive, "global")]
    for pid in pids:
        archived.extend(records(lay.archive(pid), pid))
    doc = {"format": exchange.FORMAT, "version": exchange.VERSION, "exported": "2026-02-02T00:00:00Z",
           "global": ordered([r for path in lay.global_files() for r in records(path)]),
           "projects": projects, "archived": ordered(archived)}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def _odd_store(tmp_path) -> Store:
    """Records of every shape the export's order and check meet: `created` of other types,
    missing or equal (then by id), secrets a hand edit left, with and without a mark."""
    from learn_cli.store.project import Project

    store = Store(tmp_path / "home", warn_stderr=False)
    store.register_project(Project(id="0123456789ab", name="app", root="", remote=None))
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    createds = ["2026-01-02T00:00:00Z", 20260101, None, True, False, [1, "a"], {"b": 2}, "", 1.5,
                "2026-01-02T00:00:00Z", "zz"]
    recs = [make_record(key=f"txt:k{i}", context=f"ctx {i}", fix="f", id=f"learn-{9 - i:02d}", created=c)
            for i, c in enumerate(createds)]
    del recs[-1]["created"]
    recs.append(make_record(context="ctx", error=f"failed: {secret}", fix="f", created="2026-01-01T00:00:00Z"))
    recs.append(make_record(context="see https://deploy@git.example.com/x.git", fix="f"))  # a mark, no secret
    recs.append(make_record(context="ctx", fix="f", tags=[f"token {secret}"]))
    path = store.layout.learnings("0123456789ab")
    store.put_many(path, recs)
    store.put_many(store.layout.global_patterns, [dict(r, id=f"g{r['id']}", status="global") for r in recs[:6]])
    store.put_many(store.layout.archive("0123456789ab"), [dict(r, id=f"a{r['id']}", status="archived")
                                                         for r in recs[6:]])
    return store


def test_export_writes_what_its_rules_say_from_the_columns_the_index_wrote(tmp_path):
    """The order (`export_created`) and the check (`export_as_is`) decided when each row was
    written give the export its rules give: created as text, then id, for every type of
    `created`; a record with a mark of a credential redacted again, the others as stored."""
    store = _odd_store(tmp_path)
    data = _export_bytes(store)
    assert data == _expected_export(store)
    assert b"ghp_" not in data and data.count(b"[REDACTED:") == 4  # two in the project, two in its archive
    marked = store.index.db.execute("SELECT count(*) FROM learnings WHERE export_as_is IS NULL").fetchone()[0]
    assert marked == 3 + 3  # the three with a mark, in the project and in its archive
    store.close()


def test_export_checks_only_the_rows_whose_text_shows_a_mark(tmp_path, monkeypatch):
    """The rows the index marked `export_as_is` are written without a look at their text."""
    from learn_cli.engine.exchange import export

    store = _odd_store(tmp_path)
    looked = []
    monkeypatch.setattr(export, "credential_mark", lambda text: looked.append(text) or True)
    _export_bytes(store)
    store.close()
    assert len(looked) == 2 * 6 and all("ghp_" in t or "://" in t for t in looked)  # body, then the fields


def test_an_index_of_v8_exports_the_same_bytes_as_one_of_v9(tmp_path):
    """Rows of an older index have no export columns (NULL after the upgrade): the export
    computes the order from `data` and checks `body`, as before, to the same bytes."""
    import sqlite3

    store = _odd_store(tmp_path)
    want = _export_bytes(store)
    store.close()
    db = sqlite3.connect(str(store.layout.index_db))
    for name in ("export_created", "export_as_is"):
        db.execute(f"ALTER TABLE learnings DROP COLUMN {name}")
    db.execute("PRAGMA user_version=8")
    db.commit()
    db.close()
    again = Store(tmp_path / "home", warn_stderr=False)
    assert again.index.db.execute("SELECT count(*) FROM learnings WHERE export_created IS NOT NULL "
                                  "OR export_as_is IS NOT NULL").fetchone()[0] == 0  # upgraded in place, no rebuild
    assert _export_bytes(again) == want
    again.close()


def test_a_change_in_place_keeps_the_export_columns_in_step(tmp_path):
    """An update that keeps a record's searchable text is written in place (_set_changed):
    its `created` and its check follow it."""
    store = _odd_store(tmp_path)
    path = store.layout.learnings("0123456789ab")
    first = store.index.db.execute("SELECT id FROM learnings WHERE file LIKE 'projects/%' AND export_as_is = 1 "
                                   "ORDER BY export_created LIMIT 1").fetchone()[0]
    rowid = store.index.db.execute("SELECT rowid FROM learnings WHERE id=?", (first,)).fetchone()[0]
    store.update(path, first, lambda rec: dict(rec, created="2099-01-01T00:00:00Z"))
    assert store.index.db.execute("SELECT rowid, export_created FROM learnings WHERE id=?",
                                  (first,)).fetchone() == (rowid, "2099-01-01T00:00:00Z")  # in place
    assert _export_bytes(store) == _expected_export(store)
    store.close()


@pytest.mark.parametrize("depth", [1, 3])
@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 130])
def test_records_dumped_in_batches_are_the_bytes_of_one_dump_per_record(depth, count):
    """The writer dumps its records BATCH at a time as the items of a list nested at their
    depth: the same bytes as each record dumped alone and indented to it, also when a record
    of a batch is one orjson cannot write (an integer past 64 bits: that batch falls back to
    one dump per record, the standard library's for that one)."""
    from learn_cli.engine.exchange.export import _IndentedWriter

    recs = [{"id": f"r{i}", "n": i, "tags": [] if i % 2 else ["a", "ü"], "env": {} if i % 3 else {"os": "x"},
             "deep": [[{"k": [i]}]]} for i in range(count)]
    if count > 2:
        recs[count // 2]["big"] = 2 ** 70
    out = io.BytesIO()
    assert _IndentedWriter(out).records(depth, iter(recs)) == count
    pad = b"\n" + b"  " * (depth + 1)

    def alone(rec):
        try:
            text = orjson.dumps(rec, option=orjson.OPT_INDENT_2)
        except TypeError:
            text = json.dumps(rec, indent=2, ensure_ascii=False).encode()
        return pad + text.replace(b"\n", pad)

    want = b"[" + b",".join(alone(r) for r in recs) + b"\n" + b"  " * depth + b"]" if recs else b"[]"
    assert out.getvalue() == want


def test_a_text_of_a_marked_record_is_checked_once_an_export(tmp_path, monkeypatch):
    """The export asks the redactor about each distinct text of the records with a mark once:
    a secret that recurs is redacted wherever it is, and the clean texts are not asked again."""
    from learn_cli.engine.exchange import export

    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    store = Store(tmp_path / "home", warn_stderr=False)
    store.layout.ensure_project("0123456789ab")
    recs = [make_record(key=f"txt:k{i}", context="the SECRET_KEY is not set", fix=f"fix {i % 2}",
                        tags=[f"token {secret}"] if i % 3 == 0 else ["ci"]) for i in range(9)]
    store.put_many(store.layout.learnings("0123456789ab"), recs)
    asked = []
    real = export.may_hold_secret
    monkeypatch.setattr(export, "may_hold_secret", lambda text: asked.append(text) or real(text))
    data = _export_bytes(store)
    assert len(asked) == len(set(asked)) and {"the SECRET_KEY is not set", "fix 0", "fix 1", "ci"} <= set(asked)
    assert data == _expected_export(store)  # (each record checked on its own)
    store.close()
    assert secret not in data.decode() and data.count(b"[REDACTED:") == 3


# ---------------------------------------------------------------- the pieces


ODD_VALUES = [["x"] * 201, {f"k{i}": i for i in range(101)}, {"k" * 70: 1}, [[[[["deep"]]]]],
              [{"a": {"b": {"c": [1]}}}], "y" * 2500, [{"s": "z" * 2100}], {"e": ["q", 1, None]},
              [1, 2.5, True, None, "ok"], {"os": "linux", "shell": "zsh"}]


@pytest.mark.parametrize("value", ODD_VALUES)
def test_coerce_keeps_only_values_the_caps_leave_alone(value):
    from learn_cli.store.record import _cap_value

    rec, _ = coerce_record({"context": "c", "extra": value})
    assert rec["extra"] == _cap_value(value)


def test_load_rows_leaves_the_index_as_a_full_read_of_the_file_would(tmp_path):
    from learn_cli.store import jsonl

    store = Store(tmp_path / "home", warn_stderr=False)
    path = store.layout.learnings("0123456789ab")
    path.parent.mkdir(parents=True)
    store.put(path, make_record(key="txt:old", context="replaced by the rewrite", fix="x"))
    recs = [dict(r, updated="2026-01-01T00:00:00Z") for r in entries(40, "r")]
    recs[5]["context"] = "line\nbreak and ünïcode \u2028 and \"quotes\""
    jsonl.rewrite(path, recs)
    store.index.load_rows([(path, recs, path)])

    def snapshot():
        rows = sorted((f, i, k, s, p, t, c, st, u, b, json.loads(d)) for f, i, k, s, p, t, c, st, u, b, d in
                      store.index.db.execute("SELECT file, id, key, scope, pid, type, category, status, updated, "
                                             "body, data FROM learnings"))
        files = list(store.index.db.execute("SELECT * FROM files WHERE path = ?", (store.index.rel(path),)))
        hits = sorted(r[0] for r in store.index.db.execute(
            "SELECT l.id FROM fts JOIN learnings l ON l.rowid = fts.rowid WHERE fts MATCH 'break'"))
        return rows, files, hits

    mine = snapshot()
    assert store.index.expect_stat(path)  # the next refresh reads nothing again
    store.index.rebuild("test")
    assert snapshot() == mine and mine[2] == [recs[5]["id"]]
    store.close()


def test_load_rows_records_the_stat_of_the_file_renamed_onto_the_path(tmp_path):
    from learn_cli.store import jsonl

    store = Store(tmp_path / "home", warn_stderr=False)
    path = store.layout.global_errors
    staged = tmp_path / "staged.tmp"
    recs = [dict(r, updated="2026-01-01T00:00:00Z") for r in entries(3, "s")]
    jsonl.rewrite(staged, recs)
    store.index.load_rows([(path, recs, staged)])
    assert not store.index.expect_stat(path)  # not there yet: a refresh would forget the rows
    os.replace(staged, path)
    assert store.index.expect_stat(path) and store.index.count_in_file("global/errors.jsonl") == 3
    store.close()


@pytest.mark.parametrize("parallel", [False, True])
def test_import_leaves_nothing_for_the_first_promotion_to_write(tmp_path, monkeypatch, parallel):
    """The import writes its records as the first promote would leave them: archive clocks
    started (`low_since`), with or without workers. The index's derived columns are left NULL,
    as a hook's writes leave them (conflict features were most of an import's index work): the
    first promotion derives them, and at the import's clock changes no clock."""
    from datetime import UTC, datetime, timedelta

    from learn_cli.engine import promotion
    from learn_cli.store import index as _index

    old = make_record(key="txt:old", context="an old lesson", fix="x", last_used="2020-01-01T00:00:00Z",
                      created="2020-01-01T00:00:00Z")
    projects = {f"{n:012x}": [*entries(60, f"p{n}"), dict(old, id=f"learn-20200101T000000Z-00000{n}")]
                for n in range(4)}
    path = tmp_path / "team.json"
    path.write_text(json.dumps(export_doc(projects, entries(20, "g"), entries(5, "a"))))
    clock = datetime.now(UTC)
    monkeypatch.setattr("learn_cli.engine.exchange.importer._now", lambda: clock)
    monkeypatch.setattr(exchange._Helpers, "PARALLEL_BYTES", 0 if parallel else 1 << 40)
    store = Store(tmp_path / "home", warn_stderr=False)
    exchange.import_file(store, path, loads=orjson.loads)
    store.refresh()
    live = [rowid for (rowid,) in store.index.db.execute(
        f"SELECT rowid FROM learnings WHERE {_index.LIVE_SQL} ORDER BY rowid")]
    assert sorted(store.index.rowids_to_derive(_index.WHOLE_STORE, promotion._DERIVED_VERSION)) == live
    assert store.index.db.execute("SELECT count(*) FROM learnings WHERE derived IS NOT NULL OR features IS NOT "
                                  "NULL").fetchone() == (0,)
    clocks = [json.loads(d).get("low_since") for (d,) in store.index.db.execute(
        "SELECT data FROM learnings WHERE scope = 'project'")]
    assert clocks.count(None) < len(clocks) and set(clocks) - {None} == {promotion.scoring.format_time(clock)}
    report = promotion.run_promotion(store, now=clock + timedelta(seconds=1), dry_run=True)
    assert report.counts()["low_since_changed"] == 0 and report.counts()["rescored"] == 4 * 61 + 20
    store.close()


def test_an_import_links_its_new_logs_into_place_without_placeholders_or_lock_files(tmp_path, monkeypatch):
    """A new project's logs are put in place from the staged files by a link (no file is
    created empty first and replaced, no lock file made: creating files was most of an
    import's system time), with the index rows recorded for them (nothing re-read), and
    the derived columns left NULL, as a hook's write leaves them."""
    path = tmp_path / "team.json"
    path.write_text(json.dumps(export_doc({"0123456789ab": entries(30, "p")}, entries(5, "g"),
                                          [dict(r, archived_from="0123456789ab") for r in entries(3, "a")])))
    from learn_cli.store import paths

    created, touch = [], paths.touch

    def spy_touch(target):
        created.append(os.path.basename(os.fspath(target)))
        touch(target)

    monkeypatch.setattr(paths, "touch", spy_touch)
    store = Store(tmp_path / "home", warn_stderr=False)
    created.clear()  # (the layout's own files)
    report = exchange.import_file(store, path)
    assert (report.new, report.skipped) == (38, 0)
    folder = tmp_path / "home" / "projects" / "0123456789ab"
    assert sorted(p.name for p in folder.iterdir()) == ["archive.jsonl", "learnings.jsonl", "project.json"]
    assert created == []  # no placeholder made for the logs linked into place
    assert not list((tmp_path / "home").glob(".import-*/*")) and not list(folder.glob("*.lock"))
    assert store.refresh() == [] and store.index.expect_stat(folder / "learnings.jsonl")
    assert (store.index.count_in_file("projects/0123456789ab/learnings.jsonl"),
            store.index.count_in_file("projects/0123456789ab/archive.jsonl")) == (30, 3)
    assert store.index.db.execute("SELECT count(*) FROM learnings WHERE derived IS NOT NULL OR features IS NOT "
                                  "NULL").fetchone() == (0,)
    store.close()


def test_a_capture_into_a_new_project_during_an_import_loses_nothing(tmp_path, monkeypatch):
    """A hook that writes the first learning of a project the import is creating, after the
    import staged that project's log and before it is put in place: the link finds the file
    there, and the import's records are appended to it under its lock (none lost, the index in
    step with the file)."""
    path = tmp_path / "team.json"
    path.write_text(json.dumps(export_doc({"0123456789ab": entries(20, "p")})))
    store = Store(tmp_path / "home", warn_stderr=False)
    hook_store = Store(tmp_path / "home", warn_stderr=False)
    target = store.layout.learnings("0123456789ab")
    mine = make_record(key="txt:mine", context="captured while the import ran", fix="keep it")
    commit = exchange._Staging.commit

    def capture_first(staging):
        hook_store.put_many(target, [dict(mine)])
        commit(staging)

    monkeypatch.setattr(exchange._Staging, "commit", capture_first)
    report = exchange.import_file(store, path)
    assert report.new == 20
    recs = stored(tmp_path / "home")["projects/0123456789ab/learnings.jsonl"]
    assert len(recs) == 21 and recs[mine["id"]]["context"] == "captured while the import ran"
    assert store.refresh() == [] and store.index.count_in_file("projects/0123456789ab/learnings.jsonl") == 21
    hook_store.close()
    store.close()


def test_another_fix_of_a_known_key_is_kept_as_an_alternative(tmp_path):
    """One learning is one key and one fix (issue 10), for import as for capture and prune: a
    second, different fix of a key arrives beside the first; a refinement of it merges."""
    error = "ModuleNotFoundError: No module named 'jose'"
    fixes = ["pip install python-jose", "pip install 'python-jose[cryptography]'", "uv add python-jose"]
    docs = [[make_record(key="err:jose", error=error, command="python app.py", fix=fix, fix_command=fix)]
            for fix in fixes]
    store = Store(tmp_path / "home", warn_stderr=False)
    reports = []
    for n, learnings in enumerate(docs):
        path = tmp_path / f"part{n}.json"
        path.write_text(json.dumps({"format": "self-learning-agent", "version": "1.0.0", "projects": {
            "team/app": {"name": "app", "remote": "git@example.com:team/app.git", "learnings": learnings}}}))
        reports.append(exchange.import_file(store, path, trust=True).as_json())
    store.close()
    assert [(r["new"], r["merged"]) for r in reports] == [(1, 0), (0, 1), (1, 0)]
    (recs,) = [recs for rel, recs in stored(tmp_path / "home").items() if rel.endswith("learnings.jsonl")]
    assert sorted(r["fix"] for r in recs.values()) == ["pip install 'python-jose[cryptography]'", "uv add python-jose"]


def _import_twice(tmp_path, store, learnings_of: list[list[dict]]) -> list[dict]:
    """Each list of learnings as a file of its own (one project), imported in turn."""
    reports = []
    for n, learnings in enumerate(learnings_of):
        path = tmp_path / f"file{n}.json"
        path.write_text(json.dumps(export_doc({"0123456789ab": learnings})))
        reports.append(exchange.import_file(store, path).as_json())
    return reports


NPM = "Use npm for JavaScript dependencies"
PNPM = "Use pnpm, not npm, for JavaScript dependencies in this repository"


def test_an_import_into_a_maintained_home_reads_the_features_a_promote_derived(tmp_path, monkeypatch):
    """Into a home whose rows a promote derived, the import's conflicts read the target's
    conflict features from the index (record_features runs for the entries only) and its
    near duplicates read the records of the entries' types and categories only: the same
    report and records as an import into the same home not derived."""
    import shutil

    from learn_cli.engine import conflicts
    from learn_cli.engine.promotion import WHOLE_STORE, _derive_missing

    npm = make_record(type="preference", key="txt:npm", context=NPM, fix=NPM)
    ci = make_record(type="workflow", category="ci-cd", key="txt:ci", context="Run npm ci before the build in CI",
                     fix="npm ci")
    others = [make_record(type="error", category="network", key=f"err:{i:016x}", error=f"timeout {i} reaching host",
                          fix=f"retry {i}") for i in range(12)]
    store = Store(tmp_path / "home", warn_stderr=False)
    _import_twice(tmp_path, store, [[npm, ci, *others]])
    store.close()
    shutil.copytree(tmp_path / "home", tmp_path / "plain")
    incoming = [make_record(type="preference", key="txt:pnpm", context=PNPM, fix=PNPM),
                make_record(type="workflow", category="ci-cd", key="txt:ci2", fix="npm ci",
                            context="Run npm ci before the build in CI pipelines"),
                make_record(type="workflow", category="ci-cd", key="txt:new", context="Cache the npm store", fix="x")]
    (tmp_path / "file1.json").write_text(json.dumps(export_doc({"0123456789ab": incoming})))
    reports, computed = {}, {}
    real = conflicts.record_features
    for name in ("home", "plain"):
        store = Store(tmp_path / name, warn_stderr=False)
        if name == "home":
            import orjson as _orjson

            _derive_missing(store, WHOLE_STORE, _orjson.loads)
        asked = []
        monkeypatch.setattr(conflicts, "record_features", lambda rec, asked=asked: asked.append(rec["id"]) or real(rec))
        reports[name] = exchange.import_file(store, tmp_path / "file1.json").as_json()
        computed[name] = set(asked)
        store.close()
    assert reports["home"] == reports["plain"] and _counts(reports["home"]) == (1, 1, 0, 1)
    assert computed["home"] == {r["id"] for r in incoming}  # the entries' alone
    assert computed["plain"] > computed["home"]
    strip = lambda recs: {rel: {i: {k: v for k, v in r.items() if k not in ("low_since", "created")}  # noqa: E731
                                for i, r in rs.items()} for rel, rs in recs.items()}
    assert strip(stored(tmp_path / "home")) == strip(stored(tmp_path / "plain"))


def _counts(report: dict) -> tuple:
    return tuple(report[name] for name in ("new", "merged", "duplicates", "conflicts"))


def test_importing_a_file_again_adds_nothing_even_its_copies_that_conflict(tmp_path):
    """A file holding two copies of one learning (same key and text, two ids) and a
    preference that contradicts it: the first import keeps one copy (nothing in the home to
    judge conflicts against). Importing the file again found the second copy in conflict with
    the preference and added it, as a conflicted record, every time; now it is a duplicate
    of the copy kept, and the second import changes nothing."""
    pnpm = make_record(type="preference", key="txt:pnpm", context=PNPM, fix=PNPM)
    copy = dict(pnpm, id=pnpm["id"] + "c")
    npm = make_record(type="preference", key="txt:npm", context=NPM, fix=NPM)
    store = Store(tmp_path / "home", warn_stderr=False)
    first, = _import_twice(tmp_path, store, [[npm, pnpm, copy]])
    before = stored(tmp_path / "home")
    again, third = (exchange.import_file(store, tmp_path / "file0.json").as_json() for _ in range(2))
    store.close()
    assert _counts(first) == (2, 0, 1, 0)
    assert _counts(again) == _counts(third) == (0, 0, 3, 0)
    assert stored(tmp_path / "home") == before


def test_an_entry_whose_id_another_learning_has_is_found_again_by_that_id(tmp_path):
    """An entry whose id is taken by a learning of another key gets a new id, and remembers
    the one it came with in `merged_from`: importing its file again finds it there, even once
    its copy no longer has its text (a trusted import's merge, an edit), and even when it
    contradicts a learning of the home."""
    pnpm = make_record(type="preference", key="txt:pnpm", context=PNPM, fix=PNPM)
    npm = make_record(type="preference", key="txt:npm", context=NPM, fix=NPM, id=pnpm["id"])  # the same id
    store = Store(tmp_path / "home", warn_stderr=False)
    reports = _import_twice(tmp_path, store, [[pnpm], [npm]])
    path = store.layout.learnings("0123456789ab")
    (renamed,) = [r for r in stored(tmp_path / "home")[str(path.relative_to(tmp_path / "home"))].values()
                  if r["key"] == "txt:npm"]
    assert renamed["id"] != pnpm["id"] and renamed["merged_from"] == [pnpm["id"]]
    store.update(path, renamed["id"], lambda rec: dict(rec, fix=NPM + " (edited)"))
    before = stored(tmp_path / "home")
    again = exchange.import_file(store, tmp_path / "file1.json").as_json()
    store.close()
    assert [_counts(r) for r in reports] == [(1, 0, 0, 0), (0, 0, 0, 1)]  # conflicted: added, not new
    assert _counts(again) == (0, 0, 1, 0)
    assert stored(tmp_path / "home") == before


def test_entries_are_held_marshalled_and_arrive_distrusted(tmp_path, monkeypatch):
    """The merger holds the entries of a target until it is merged (an archive's until the
    end of the file); past HELD_AS_RECORDS of a target, and in an archive, marshalled (a fifth
    of a record's memory), taken as they are once `distrust` has run (one sighting, no
    credits)."""
    from learn_cli.engine.exchange import merging

    held = []
    add = merging._Merger.add

    def watch(self, inc):
        add(self, inc)
        held.append((inc.target.name, type(self.batches[inc.target][-1][2])))

    monkeypatch.setattr(merging._Merger, "add", watch)
    monkeypatch.setattr(merging._Merger, "HELD_AS_RECORDS", 1)
    old = [dict(r, status="archived", helped=4, not_helped=1, frequency=9) for r in entries(3, "a")]
    live = [dict(r, helped=2, frequency=7) for r in entries(2, "l")]
    path = tmp_path / "f.json"
    path.write_text(json.dumps(export_doc({"0123456789ab": [*live, old[0]]},
                                          archived=[dict(r, archived_from="0123456789ab") for r in old[1:]])))
    store = Store(tmp_path / "home", warn_stderr=False)
    exchange.import_file(store, path)
    store.close()
    assert held == [("learnings.jsonl", dict), ("learnings.jsonl", bytes), ("archive.jsonl", bytes),
                    ("archive.jsonl", bytes), ("archive.jsonl", bytes)]
    for recs in stored(tmp_path / "home").values():
        for rec in recs.values():
            assert rec["frequency"] == 1 and "helped" not in rec and "not_helped" not in rec, rec


def test_a_file_imported_again_reads_only_the_records_of_its_keys(tmp_path, monkeypatch):
    """Its entries are found by id, or are copies of records of their keys: no target is read
    whole (nor judged for conflicts) for them."""
    from learn_cli.engine.exchange import merging

    pnpm = make_record(type="preference", key="txt:pnpm", context=PNPM, fix=PNPM)
    npm = make_record(type="preference", key="txt:npm", context=NPM, fix=NPM)
    learnings = [npm, pnpm, dict(pnpm, id=pnpm["id"] + "c"), *entries(20, "r")]
    store = Store(tmp_path / "home", warn_stderr=False)
    _import_twice(tmp_path, store, [learnings])
    read = []
    existing = merging._Merger._existing
    monkeypatch.setattr(merging._Merger, "_existing", lambda self, target, keys=None: read.append(keys) or
                        existing(self, target, keys))
    report = exchange.import_file(store, tmp_path / "file0.json").as_json()
    store.close()
    assert read == [["txt:pnpm"]] and _counts(report) == (0, 0, 23, 0)


# ---------------------------------------------------------------- the redaction checks of an import


def test_shapes_the_import_does_not_send_to_redaction_are_ones_it_never_changes():
    """A UTC time, a learning id and a key (err:/txt: and 16 hex digits) are not checked one by
    one (each entry has its own): redaction leaves every such text as it is. A label with a hex
    value is no such shape: `token:<hex>` is redacted, and checked."""
    import random
    import string

    from learn_cli.engine.exchange.importer import _holds_no_secret
    from learn_cli.text.redact import redact

    plain = _holds_no_secret()
    rng = random.Random(14)
    hexes = "0123456789abcdef"
    for _ in range(3000):
        digits = "".join(rng.choices(string.digits, k=14))
        shapes = [f"{digits[:4]}-{digits[4:6]}-{digits[6:8]}T{digits[8:10]}:{digits[10:12]}:{digits[12:]}Z",
                  f"{digits[:4]}-{digits[4:6]}-{digits[6:8]}T{digits[8:10]}:{digits[10:12]}:{digits[12:]}.123456Z",
                  f"learn-{digits[:8]}T{digits[8:]}Z-{''.join(rng.choices(hexes, k=6))}",
                  f"{rng.choice(['err', 'txt'])}:{''.join(rng.choices(hexes, k=16))}"]
        for text in shapes:
            assert plain(text) and redact(text) == text, text
    for label in ("token", "password", "secret", "apikey", "auth", "key"):
        text = f"{label}:0123456789abcdef"
        assert not plain(text) and redact(text) != text


@pytest.mark.parametrize("parallel", [False, True])
def test_a_secret_repeated_across_the_file_is_redacted_in_every_entry(tmp_path, monkeypatch, parallel):
    """Each distinct text is checked once and its answer reused: the same secret in entries of
    many batches (answers forgotten in between, LIMIT 3) is redacted in every one of them."""
    from learn_cli.engine.exchange.importer import _Verdicts

    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    leaked = f"push failed: remote rejected {token}"
    projects = {f"{n:012x}": entries(60, f"p{n}") for n in range(8)}
    for recs in projects.values():
        for rec in recs[::9]:
            rec["error"] = leaked
            rec["command"] = "git push"  # a clean text that repeats as well
    path = tmp_path / "team.json"
    path.write_text(json.dumps(export_doc(projects)))
    monkeypatch.setattr(exchange._Helpers, "PARALLEL_BYTES", 0 if parallel else 1 << 40)
    monkeypatch.setattr(exchange._Helpers, "batch", 13)
    monkeypatch.setattr(_Verdicts, "LIMIT", 3)
    asked = []
    checked = exchange._Helpers.submit
    monkeypatch.setattr(exchange._Helpers, "submit", lambda self, texts: asked.extend(texts) or checked(self, texts))
    home = tmp_path / "home"
    store = Store(home, warn_stderr=False)
    report = exchange.import_file(store, path, loads=orjson.loads)
    store.close()
    assert (report.new, report.skipped) == (480, 0)
    errors = [r.get("error") for recs in stored(home).values() for r in recs.values()]
    assert token not in "".join(p.read_text() for p in home.rglob("*.jsonl"))
    assert sum("[REDACTED:" in (e or "") for e in errors) == 8 * len(range(0, 60, 9))
    assert not any(token in (e or "") for e in errors)
    assert asked.count("git push") < 8 * len(range(0, 60, 9))  # answers reused, not asked for each entry


@pytest.mark.parametrize(("text", "kept"), [
    ("2026-12-01T22:00:00Z", True), ("2026-01-01T00:00:00Z", True), ("2026-12-01T22:00:01Z", False),
    ("2027-01-01T00:00:00Z", False), ("2026-12-01 23:00:00Z", False), ("2026-12-01T23:00:00+00:00", False),
    ("2026-12-01T22:00:00.9Z", False), ("2026-13-45T99:99:99Z", True), ("not a time", True)])
def test_an_imported_time_in_the_future_is_brought_back_to_the_import(text, kept):
    """Times compared as text when learn wrote them (fixed width), parsed otherwise: the same
    clamp either way (a space for the `T`, an offset, a fraction of a second in the future
    are parsed and clamped; a time that is no time is left to the caller's checks)."""
    from datetime import UTC, datetime

    now = datetime(2026, 12, 1, 22, 0, 0, 500000, tzinfo=UTC)
    rec = {"created": text, "last_used": text, "low_since": text}
    exchange.distrust(rec, now, trusted=True)
    assert rec == dict.fromkeys(rec, text if kept else "2026-12-01T22:00:00Z")


def test_an_entry_the_store_holds_is_a_duplicate_before_it_is_checked(tmp_path, monkeypatch):
    """Importing a file again: an entry whose id is a learning's of its key, or was merged into
    one, is a duplicate as soon as it is read, never redacted, coerced or held; the report and
    the store are those of the full path. Its id is enough: an entry the store holds by id is
    a duplicate even if `coerce_record` would now refuse it (no text any more), and one whose
    key does not match takes the full path."""
    from learn_cli.engine.exchange import importer

    pnpm = make_record(type="preference", key="txt:pnpm", context=PNPM, fix=PNPM)
    copy = dict(pnpm, id=pnpm["id"] + "c")
    learnings = [pnpm, copy, *entries(20, "k")]
    merged = dict(learnings[5], id=learnings[5]["id"] + "m", fix=learnings[5]["fix"] + " (another way)")
    store = Store(tmp_path / "home", warn_stderr=False)
    first, = _import_twice(tmp_path, store, [[*learnings, merged]])
    assert _counts(first) == (21, 1, 1, 0)
    before = stored(tmp_path / "home")
    coerced = []
    coerce = importer.coerce_record
    monkeypatch.setattr(importer, "coerce_record", lambda obj, clean=None: coerced.append(obj.get("id")) or
                        coerce(obj, clean))
    again = exchange.import_file(store, tmp_path / "file0.json").as_json()
    assert _counts(again) == (0, 0, 23, 0) and again["skipped"] == 0
    assert coerced == [copy["id"]]  # the copy kept no id of its own: found by its text, as before
    assert stored(tmp_path / "home") == before
    # Known by id, though no longer valid: a duplicate. Its key changed: the full path.
    odd = [dict(learnings[2], context="", error="", fix=""),
           dict(learnings[3], key="txt:another", context="a lesson of its own", fix="run the other tool")]
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(export_doc({"0123456789ab": odd})))
    coerced.clear()
    report = exchange.import_file(store, path).as_json()
    store.close()
    assert coerced == [learnings[3]["id"]]
    assert _counts(report) == (1, 0, 1, 0) and report["skipped"] == 0


def test_the_stream_holds_less_text_than_the_allocator_would_map(tmp_path):
    """The text the reader holds (the rest of a chunk and the next) stays under glibc's mmap
    threshold (128 KB) for entries of the usual size, even of characters past Latin-1: a
    larger buffer raised the threshold and then came from the heap, which the entries' small
    objects kept from shrinking."""
    doc = export_doc({"0123456789ab": entries(3000)})
    stream = stream_of(json.dumps(doc), exchange._JsonStream.CHUNK)
    held = []
    more = stream._more

    def watch(least=0):
        grew = more(least)
        held.append(sys.getsizeof(stream.text))
        return grew

    stream._more = watch
    assert read_all(stream) == doc
    assert len(held) > 3 and max(held) < 128 * 1024  # (two bytes a character: the text has a ✓)


def test_the_projects_an_import_creates_share_transactions(tmp_path):
    """Registering 40 projects: their index rows in one commit, not one each."""
    path = tmp_path / "f.json"
    path.write_text(json.dumps(export_doc({f"{n:012x}": entries(1, str(n)) for n in range(40)})))
    store = Store(tmp_path / "home", warn_stderr=False)
    commits = []
    store.index.db.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
    report = exchange.import_file(store, path)
    store.index.db.set_trace_callback(None)
    assert len(report.projects_created) == 40 and len(store.projects()) == 40
    store.close()
    assert len(commits) < 10, len(commits)
