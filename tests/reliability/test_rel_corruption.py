"""Corruption (SPEC §1.3, §1.4, §6): a truncated last line, garbage lines, zero-byte files,
invalid UTF-8, a deleted or corrupt index, damaged JSON documents. Everything still readable
loads, the damage is reported with file and line, `learn doctor` repairs it, and no good
record is ever dropped."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from pathlib import Path

import pytest

import reliability_kit as kit


def _store(home: Path):
    from learn_cli.store.api import Store

    return Store(home, warn_stderr=False)


def _seed(learn, n: int = 30, seed: str = "corrupt") -> tuple[Path, list[dict]]:
    """n learnings in the project of learn.cwd (some superseded by later lines)."""
    from learn_cli.store.project import identify

    rng = random.Random(seed)
    project = identify(learn.cwd)
    store = _store(learn.home)
    store.register_project(project)
    path = store.layout.learnings(project.id)
    recs = [kit.error_record(rng, project) for _ in range(n)]
    store.put_many(path, recs)
    store.put_many(path, [dict(r, frequency=9) for r in recs[::3]])
    store.close()
    final = {r["id"]: r for r in recs}
    for r in recs[::3]:
        final[r["id"]] = dict(r, frequency=9)
    return path, list(final.values())


def exported(learn) -> dict[str, dict]:
    proc = learn("export", "-o", "-")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    out = {r["id"]: r for r in doc["global"] + doc["archived"]}
    for project in doc["projects"].values():
        out.update((r["id"], r) for r in project["learnings"])
    return out


def same_records(got: dict[str, dict], want: list[dict]) -> None:
    assert set(got) == {r["id"] for r in want}
    for rec in want:
        assert got[rec["id"]]["frequency"] == rec["frequency"], rec["id"]
        assert got[rec["id"]]["error"] == rec["error"]


def doctor(learn) -> dict:
    proc = learn("doctor", "--json")
    assert "Traceback" not in proc.stderr
    return {c["name"]: c for c in json.loads(proc.stdout)["checks"]}


# ---------------------------------------------------------------------------------------------


def test_truncated_last_line(learn):
    path, recs = _seed(learn)
    data = path.read_bytes()
    path.write_bytes(data[:-40])  # a crash in the middle of the last append
    last_line = data.count(b"\n")
    lost = json.loads(data.rstrip(b"\n").split(b"\n")[-1])["id"]

    first = learn("recall", "not", "found")
    assert first.returncode == 0 and "Traceback" not in first.stderr
    assert f"learnings.jsonl:{last_line}:" in first.stderr  # file and line, reported once
    assert "learnings.jsonl" not in learn("recall", "not", "found").stderr
    # The torn line was the newest version of one record: the version before it is what is left.
    expected = [dict(r, frequency=5) if r["id"] == lost else r for r in recs]
    same_records(exported(learn), expected)

    checks = doctor(learn)
    assert checks["data"]["status"] == "repaired" and f":{last_line}:" in " ".join(checks["data"]["details"])
    assert path.with_name("learnings.jsonl.corrupt").read_bytes() == data[:-40].split(b"\n")[-1] + b"\n"
    kit.every_file_parses(learn.home)
    same_records(exported(learn), expected)
    assert doctor(learn)["data"]["status"] == "ok"
    learn("add", "after the repair: zorbs need frobbing", check=0)
    assert len(exported(learn)) == len(expected) + 1


GARBAGE = [
    b"\x00" * 64,  # a power cut's zero-filled block
    b"\xff\xfe\xfd not text at all",
    b"[1, 2, 3]",
    b'{"no_id": true}',
    b'{"id": 42, "context": "id of the wrong type"}',
    b"{" * 5000,
    b'{"id": "learn-x", "context": "cut',
    b"x" * (2 << 20),  # a 2 MiB line: not ours
]


def test_garbage_lines_between_good_ones(learn):
    path, recs = _seed(learn, n=40, seed="garbage")
    lines = path.read_bytes().rstrip(b"\n").split(b"\n")
    rng = random.Random("garbage-positions")
    for junk in GARBAGE:
        lines.insert(rng.randrange(len(lines) + 1), junk)
    path.write_bytes(b"\n".join(lines) + b"\n")
    bad_at = sorted(i for i, line in enumerate(lines, 1) if line in GARBAGE)

    first = learn("context")
    assert first.returncode == 0
    for n in bad_at:
        assert f"learnings.jsonl:{n}:" in first.stderr
    same_records(exported(learn), recs)

    checks = doctor(learn)
    assert checks["data"]["status"] == "repaired"
    assert len(checks["data"]["details"]) == len(GARBAGE)
    kept = path.with_name("learnings.jsonl.corrupt").read_bytes()
    assert all(junk in kept for junk in GARBAGE)  # set aside, not thrown away
    kit.every_file_parses(learn.home)
    same_records(exported(learn), recs)


def test_zero_byte_files_everywhere(learn):
    _seed(learn, n=5)
    learn("add", "a global lesson about flurbs", "--global", check=0)
    for path in learn.home.rglob("*"):
        if path.is_file() and not path.name.endswith(".lock"):
            path.write_bytes(b"")
    for args in (("context",), ("recall", "flurbs"), ("stats",), ("export", "-o", "-"), ("promote", "--dry-run"),
                 ("prune", "--dry-run"), ("add", "learned again: flurbs need a restart")):
        proc = learn(*args)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
    code, out, _ = _capture(learn, kit.failure(learn.cwd, "s-zero", "t1", "flurb run", "Error: flurbs exploded"))
    assert code == 0 and kit.check_hook_stdout(out) is None
    assert doctor(learn)["data"]["status"] in ("ok", "repaired")
    kit.every_file_parses(learn.home)
    assert "flurbs need a restart" in json.dumps(exported(learn))


def test_invalid_utf8_inside_a_record_still_loads(learn):
    path, recs = _seed(learn, n=10, seed="utf8")
    victim = recs[4]
    raw = path.read_bytes()
    line = json.dumps(dict(victim, frequency=7), ensure_ascii=False).encode()
    damaged = line.replace(b'"context": "', b'"context": "caf\xe9 \xff ')  # Latin-1 and a stray byte
    assert damaged != line
    path.write_bytes(raw + damaged + b"\n" + b"\xc3\x28\xa0\xa1 plain garbage\n")
    total = raw.count(b"\n") + 2

    first = learn("recall", "caf")
    assert first.returncode == 0
    assert f"learnings.jsonl:{total - 1}:" in first.stderr and "invalid UTF-8" in first.stderr
    assert f"learnings.jsonl:{total}:" in first.stderr
    got = exported(learn)
    assert len(got) == len(recs) and got[victim["id"]]["frequency"] == 7  # the damaged line's version
    assert got[victim["id"]]["context"].startswith("caf\ufffd \ufffd ")

    checks = doctor(learn)
    assert checks["data"]["status"] == "repaired"
    kept = path.with_name("learnings.jsonl.corrupt").read_bytes()
    assert damaged in kept and b"plain garbage" in kept  # the original bytes are kept
    kit.every_file_parses(learn.home)
    got = exported(learn)
    assert len(got) == len(recs) and got[victim["id"]]["frequency"] == 7


def test_compaction_keeps_a_damaged_line_older_than_the_record_s_later_versions(tmp_path):
    from learn_cli.store import jsonl
    from learn_cli.store.record import make_record

    path = tmp_path / "learnings.jsonl"
    rec = make_record(context="v1", fix="f")
    damaged = json.dumps(dict(rec, context="v2 X")).encode().replace(b"v2 X", b"v2 \xff")
    path.write_bytes(json.dumps(rec).encode() + b"\n" + damaged + b"\n")
    jsonl.append(path, [dict(rec, context="v3")])
    assert jsonl.load(path).records[rec["id"]]["context"] == "v3"
    jsonl.compact(path)
    loaded = jsonl.load(path)
    assert loaded.records[rec["id"]]["context"] == "v3"  # not resurrected by the kept raw line
    assert damaged in path.read_bytes()


INDEX_DAMAGE = {
    "deleted": lambda db: db.unlink(),
    "zero bytes": lambda db: db.write_bytes(b""),
    "garbage": lambda db: db.write_bytes(os.urandom(64 * 1024)),
    "truncated": lambda db: db.write_bytes(db.read_bytes()[:3000]),
    "pages scrambled": lambda db: db.write_bytes(db.read_bytes()[:100] + os.urandom(len(db.read_bytes()) - 100)),
    "garbage wal": lambda db: db.with_name("index.db-wal").write_bytes(os.urandom(40000)),
    "a folder": lambda db: (db.unlink(), db.mkdir()),
    "another schema": lambda db: _other_schema(db),
}


def _other_schema(db: Path) -> None:
    db.unlink()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE learnings(x)")
    con.execute("PRAGMA user_version=4")
    con.commit()
    con.close()


@pytest.mark.parametrize("damage", list(INDEX_DAMAGE))
def test_deleted_or_corrupt_index(learn, damage):
    _, recs = _seed(learn, n=25, seed=f"index-{damage}")
    learn("add", "a global note on glorps", "--global", check=0)
    db = learn.home / "global" / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    INDEX_DAMAGE[damage](db)

    recall = learn("recall", "glorps")
    assert recall.returncode == 0 and "Traceback" not in recall.stderr, recall.stderr
    assert "glorps" in recall.stdout
    got = exported(learn)
    assert {r["id"] for r in recs} <= set(got) and len(got) == len(recs) + 1
    ctx = learn("context")
    assert ctx.returncode == 0 and "Traceback" not in ctx.stderr
    checks = doctor(learn)
    if damage == "a folder":
        assert checks["index"]["status"] in ("warn", "problem")  # cannot be repaired by removing a folder
        return
    assert checks["index"]["status"] in ("ok", "repaired")
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM learnings").fetchone()[0] == len(recs) + 1
    con.close()


def test_damaged_preferences_document_keeps_what_is_readable(learn):
    for n in range(6):
        learn("add", f"prefer tool{'abcdef'[n]} over the old one", "--type", "preference", "--global", check=0)
    prefs = learn.home / "global" / "preferences.json"
    data = prefs.read_bytes()
    doc = json.loads(data)
    assert len(doc["learnings"]) == 6
    cut = data.index(doc["learnings"][4]["id"].encode())  # inside the 5th entry
    prefs.write_bytes(data[:cut])

    first = learn("recall", "prefer")
    assert first.returncode == 0 and "preferences.json:1:" in first.stderr
    got = exported(learn)
    assert {r["id"] for r in doc["learnings"][:4]} <= set(got)  # the four whole entries still load
    learn("add", "prefer toolz over everything", "--type", "preference", "--global", check=0)
    assert prefs.with_name("preferences.json.corrupt").read_bytes().startswith(data[:cut])
    after = json.loads(prefs.read_bytes())
    assert {r["id"] for r in doc["learnings"][:4]} <= {r["id"] for r in after["learnings"]}
    assert doctor(learn)["data"]["status"] == "ok"


@pytest.mark.parametrize("name", ["config.json", "analytics/stats.json", "project.json", "overrides.json"])
def test_damaged_settings_documents(learn, name):
    from learn_cli.store.project import identify

    _seed(learn, n=3)
    learn("--auto", check=0)  # writes overrides.json
    learn("--auto", check=0)
    pid = identify(learn.cwd).id
    path = learn.home / "projects" / pid / name if name in ("project.json", "overrides.json") else learn.home / name
    assert path.exists(), path
    path.write_bytes(b'{"budget": 2000, "auto_capture": tr')
    for args in (("context",), ("recall", "found"), ("stats",)):
        proc = learn(*args)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert len([line for line in proc.stderr.splitlines() if line.strip()]) <= 2, proc.stderr
    code, out, _ = _capture(learn, kit.failure(learn.cwd, "s-cfg", "t1", "zorp build", "Error: zorp failed"))
    assert code == 0 and kit.check_hook_stdout(out) is None
    checks = doctor(learn)
    assert checks["data"]["status"] in ("repaired", "ok")
    kit.every_file_parses(learn.home)


def test_damaged_session_buffer(learn):
    cwd = learn.cwd
    sid = "s-damaged"
    learn("capture", input=kit.failure(cwd, sid, "t1", "blorp make", "Error: blorp is missing its frob"), check=0)
    buffer = next((learn.home / "sessions").glob("*.jsonl"))
    buffer.write_bytes(buffer.read_bytes() + b"\x00\x00garbage\xff\n{\"id\": \"half")
    ok = learn("capture", input=kit.success(cwd, sid, "t2", "blorp make --frob"))
    assert ok.returncode == 0 and ok.stdout == ""
    found = [r for r in exported(learn).values() if "blorp" in r.get("fix", "")]
    assert len(found) == 1  # the pair was still learned


def _capture(learn, payload) -> tuple[int, str, str]:
    proc = learn("capture", input=payload)
    return proc.returncode, proc.stdout, proc.stderr


def test_text_that_is_not_utf8_is_stored_not_fatal(learn):
    """Bytes that are not UTF-8 in argv, and lone surrogates in a hook payload (JSON allows
    the escape), are written as U+FFFD instead of failing the command or the capture."""
    import subprocess

    add = subprocess.run([learn.exe, "add", b"bad byte \xff in the lesson", "--fix", b"x \xfe"],
                         capture_output=True, cwd=learn.cwd, env=learn.env, timeout=60)
    assert add.returncode == 0 and b"Traceback" not in add.stderr, add.stderr
    payload = json.dumps(kit.failure(learn.cwd, "s-sur", "t1", "zorp \ud800 build", "Error: zorp \udfff broke"))
    cap = learn("capture", input=payload)
    assert cap.returncode == 0 and cap.stdout == ""
    from learn_cli.store.record import utf8_safe

    assert utf8_safe({"context": "a\ud800b", "tags": ["\udcff"]}) == {"context": "a\ufffdb", "tags": ["\ufffd"]}
    kit.every_file_parses(learn.home)
    assert "bad byte \ufffd in the lesson" in json.dumps(exported(learn), ensure_ascii=False)
