"""`learn export` / `learn import` end to end: the seed's reports, the file format, the round
trip, merge semantics (new, merged, duplicate, conflict), partial import of incompatible
entries, untrusted input (size, nesting, format, version, paths, secrets), --dry-run."""

from __future__ import annotations

import json
import os
import stat
import time

import pytest

from learn_cli.store.api import Store
from learn_cli.store.project import identify
from learn_cli.store.record import make_record


def days_ago(n: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - n * 86400))


@pytest.fixture
def seeded(learn):
    here = identify(learn.cwd)
    other = identify(learn.project("ml-pipeline", remote="git@github.com:acme/ml-pipeline.git"))
    store = Store(learn.home, warn_stderr=False)
    for p in (here, other):
        store.register_project(p)
    recs = {
        "g": make_record(type="pattern", key="txt:g", context="Run the linter first", fix="make lint", status="global",
                         frequency=4, projects=[here.id, other.id]),
        "a": make_record(key="err:a", error="No module named 'jose'", fix="pip install python-jose",
                         projects=[here.id]),
        "b": make_record(type="preference", key="txt:b", context="Use pnpm", fix="pnpm install", projects=[here.id],
                         frequency=2),
        "c": make_record(key="err:c", error="Connection refused", fix="make db-up", projects=[other.id],
                         status="pending"),
        "old": make_record(key="txt:old", context="Pin Node.js to v16", fix="nvm use 16", status="archived",
                           projects=[other.id]),
        "gold": make_record(key="txt:gold", context="Old global", fix="x", status="archived"),
    }
    store.put(store.layout.global_patterns, recs["g"])
    store.put_many(store.layout.learnings(here.id), [recs["a"], recs["b"]])
    store.put(store.layout.learnings(other.id), recs["c"])
    store.put(store.layout.archive(other.id), recs["old"])
    store.put(store.layout.global_archive, recs["gold"])
    store.close()
    return {"here": here, "other": other, **recs}


def learnings_of(doc: dict) -> set:
    everything = doc["global"] + [r for p in doc["projects"].values() for r in p["learnings"]] + doc["archived"]
    return {(r["key"], r["type"], r["category"], r["context"], r["error"], r["fix"], r["status"], r["frequency"],
             tuple(sorted(r["projects"]))) for r in everything}


def ready(learn) -> None:
    """Create the store first, so stderr holds only the line under test."""
    Store(learn.home, warn_stderr=False).close()


def export_doc(learn, *args) -> dict:
    return json.loads(learn("export", "-o", "-", *args, check=0).stdout)


# ---------------------------------------------------------------- export


def test_export_report_and_default_file(learn, seeded):
    proc = learn("export", check=0)
    name = f"self-learning-export-{time.strftime('%Y%m%d')}.json"
    assert proc.stdout.startswith("Exporting all learnings...\n\n  Global learnings: 1 entry\n  Project learnings:\n")
    assert "    web-api: 2 entries\n    ml-pipeline: 1 entry\n" in proc.stdout
    assert f"  Exported to {name}\n" in proc.stdout
    assert "  Total entries: 6 (including 2 archived)\n" in proc.stdout
    assert "  Format: Self-Learning Agent v1.0.0 portable JSON\n" in proc.stdout
    path = learn.cwd / name
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    size = path.stat().st_size
    assert f"  File size: {size / 1024:.0f} KB\n" in proc.stdout
    doc = json.loads(path.read_text())
    assert doc["format"] == "self-learning-agent" and doc["version"] == "1.0.0"
    assert [r["id"] for r in doc["global"]] == [seeded["g"]["id"]]
    assert set(doc["projects"]) == {seeded["here"].id, seeded["other"].id}
    other = doc["projects"][seeded["other"].id]
    assert other["name"] == "ml-pipeline" and other["remote"] == "git@github.com:acme/ml-pipeline.git"
    assert {r["id"]: r["archived_from"] for r in doc["archived"]} == {seeded["old"]["id"]: seeded["other"].id,
                                                                      seeded["gold"]["id"]: "global"}


def test_export_to_stdout_and_json_report(learn, seeded, tmp_path):
    doc = export_doc(learn)
    assert len(learnings_of(doc)) == 6
    report = learn.json("export", "-o", tmp_path / "out.json")
    assert report["total"] == 6 and report["archived"] == 2 and report["global"] == 1
    assert report["bytes"] == (tmp_path / "out.json").stat().st_size
    assert report["projects"] == {seeded["here"].id: 2, seeded["other"].id: 1}


def test_export_into_a_folder_and_errors(learn, seeded, tmp_path):
    learn("export", "-o", tmp_path, check=0)
    assert (tmp_path / f"self-learning-export-{time.strftime('%Y%m%d')}.json").exists()
    proc = learn("export", "-o", tmp_path / "missing" / "x.json", check=1)
    assert proc.stderr.startswith("learn: error: cannot write ") and proc.stderr.count("\n") == 1
    proc = learn("export", "-o", "-", "--json", check=2)
    assert "Traceback" not in proc.stderr


def test_export_redacts_secrets_again(learn):
    here = identify(learn.cwd)
    store = Store(learn.home, warn_stderr=False)
    store.register_project(here)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    store.put(
        store.layout.learnings(here.id),
        make_record(context=f"push with {token}", fix="use the credential helper", projects=[here.id]),
    )
    store.close()
    text = learn("export", "-o", "-", check=0).stdout
    assert token not in text and "[REDACTED:" in text


# ---------------------------------------------------------------- round trip and merging


def test_round_trip_into_an_empty_home(learn, seeded, tmp_path):
    first = export_doc(learn)
    path = tmp_path / "team.json"
    path.write_text(json.dumps(first))
    fresh = dict(learn.env, SELF_LEARNING_HOME=str(tmp_path / "fresh"))
    proc = learn("import", path, "--trust", env=fresh, check=0)  # one's own store, moved: trusted
    assert "  Source: 6 entries (Self-Learning Agent v1.0.0 format)\n" in proc.stdout
    assert "    New learnings added: 6\n" in proc.stdout
    assert "  Import complete: 6 entries processed, 6 new.\n" in proc.stdout
    second = json.loads(learn("export", "-o", "-", env=fresh, check=0).stdout)
    assert learnings_of(second) == learnings_of(first)
    assert {p: v["name"] for p, v in second["projects"].items()} == {p: v["name"] for p, v in first["projects"].items()}
    again = json.loads(learn("import", path, "--json", env=fresh, check=0).stdout)
    assert again["new"] == 0 and again["duplicates"] == 6 and again["merged"] == 0  # importing twice adds nothing
    imported = second["projects"][seeded["here"].id]["learnings"][0]
    assert imported["source"] == "import:team.json"


def test_merge_semantics(learn, seeded, tmp_path):
    here = seeded["here"].id
    entries = [
        dict(seeded["a"]),  # same id: duplicate
        make_record(key="txt:b", type="preference", context="Use pnpm", fix="pnpm install", frequency=3),  # same text
        make_record(key="err:a", error="No module named 'jose'", fix="pip install 'python-jose[cryptography]'",
                    frequency=2),  # same key, refined fix: merged
        make_record(type="preference", key="txt:yarn", context="Use yarn", fix="use yarn, not pnpm"),  # conflict
        make_record(key="err:new", error="Permission denied: ./deploy.sh", fix="chmod +x deploy.sh"),  # new
        {"type": "error", "fix": 42, "context": "bad"},  # skipped
        "not a record",  # skipped
    ]
    doc = {"format": "self-learning-agent", "version": "1.0.0",
           "projects": {here: {"name": "web-api", "root": "/somewhere/web-api", "learnings": entries}}}
    path = tmp_path / "team-learnings.json"
    path.write_text(json.dumps(doc))
    proc = learn("import", path, "--trust", check=0)  # merge semantics of a trusted file
    out = proc.stdout
    assert out.startswith("Importing from team-learnings.json...\n\n  Source: 7 entries")
    assert "    New learnings added: 1\n    Merged with existing: 1 (frequency updated)\n" in out
    assert "    Duplicates skipped: 2\n    Conflicts detected: 1\n    Skipped (incompatible): 2\n" in out
    assert "projects[" in out and "field 'fix' must be text, got int" in out and "not an object (str)" in out
    assert "  Conflicts (require resolution):\n    1. \"Use yarn" in out and 'vs existing "Use pnpm' in out
    assert "  Run `learn promote` to resolve conflicts.\n" in out
    assert "  Import complete: 2 entries processed, 1 new.\n" in out
    store = Store(learn.home, warn_stderr=False)
    recs = store.records(store.layout.learnings(here))
    merged = recs[seeded["a"]["id"]]
    assert merged["frequency"] == 3 and merged["fix"] == "pip install 'python-jose[cryptography]'"
    assert recs[seeded["b"]["id"]]["status"] == "conflicted" and recs[seeded["b"]["id"]]["frequency"] == 2
    yarn = next(r for r in recs.values() if r["key"] == "txt:yarn")
    assert yarn["status"] == "conflicted" and yarn["conflict_with"] == [seeded["b"]["id"]]
    assert yarn["source"] == "import:team-learnings.json"
    store.close()
    again = json.loads(learn("import", path, "--json", "--trust", check=0).stdout)
    assert again["merged"] == 0 and again["new"] == 0  # the merged entry is remembered (merged_from)


def test_near_duplicate_is_merged(learn, seeded, tmp_path):
    here = seeded["here"].id
    error = "ModuleNotFoundError: No module named 'jose' while running pytest on the auth module"
    store = Store(learn.home, warn_stderr=False)
    existing = make_record(
        key="err:jose-long", error=error, fix="pip install python-jose into the venv", projects=[here]
    )
    store.put(store.layout.learnings(here), existing)
    store.close()
    same_words = make_record(key="err:other", error=error.upper(), fix="pip install python-jose, into the venv!")
    close = make_record(key="err:other2", error=error, fix="pip install python-jose into the venv first", frequency=5)
    doc = {"format": "self-learning-agent", "version": "1.2",
           "projects": {here: {"name": "x", "learnings": [same_words, close]}}}
    (tmp_path / "n.json").write_text(json.dumps(doc))
    report = json.loads(learn("import", tmp_path / "n.json", "--json", "--trust", check=0).stdout)
    assert (report["duplicates"], report["merged"], report["new"]) == (1, 1, 0)
    store = Store(learn.home, warn_stderr=False)
    merged = store.records(store.layout.learnings(here))[existing["id"]]
    assert merged["frequency"] == 6 and merged["fix"] == "pip install python-jose into the venv first"
    assert merged["merged_from"] == [close["id"]]


def test_dry_run_counts_and_writes_nothing(learn, seeded, tmp_path):
    doc = export_doc(learn)
    for p in doc["projects"].values():
        for r in p["learnings"]:
            r["id"] += "x"
            r["fix"] += " (team)"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    files = {p: p.read_bytes() for p in learn.home.rglob("*") if p.suffix in (".json", ".jsonl")}
    dry = json.loads(learn("import", path, "--dry-run", "--json", check=0).stdout)
    assert {p: p.read_bytes() for p in learn.home.rglob("*") if p.suffix in (".json", ".jsonl")} == files
    real = json.loads(learn("import", path, "--json", check=0).stdout)
    for name in ("new", "merged", "duplicates", "conflicts", "skipped"):
        assert dry[name] == real[name], name
    assert real["merged"] == 3 and dry["dry_run"] is True
    assert "Dry run complete" in learn("import", path, "--dry-run", check=0).stdout


# ---------------------------------------------------------------- untrusted input


def test_hostile_project_ids_and_names_never_become_paths(learn, tmp_path):
    entry = make_record(context="x", fix="y")
    doc = {"format": "self-learning-agent", "version": "1.0.0", "projects": {
        "../../etc": {"name": "../../etc", "root": "/tmp/evil", "learnings": [entry]},
        "ABCDEF123456/..": {"name": "a\x1b[31mred\nline", "learnings": [make_record(context="z", fix="w")]}},
        "archived": [dict(make_record(context="q", fix="r"), archived_from="../../../tmp")]}
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(doc))
    report = json.loads(learn("import", path, "--json", check=0).stdout)
    assert report["new"] == 2 and report["skipped"] == 1
    assert "archived_from" in report["skipped_reasons"][0]
    folders = sorted(p.name for p in (learn.home / "projects").iterdir())
    assert len(folders) == 2 and all(len(f) == 12 and set(f) <= set("0123456789abcdef") for f in folders)
    assert not (learn.home.parent / "etc").exists() and not (tmp_path / "tmp").exists()
    names = sorted(json.loads((learn.home / "projects" / f / "project.json").read_text())["name"] for f in folders)
    assert names == ["../../etc", "a[31mred line"]


def test_secrets_in_an_import_are_redacted(learn, tmp_path):
    here = identify(learn.cwd).id
    key = "sk-ant-api03-" + "x1Y2z3" * 12
    doc = {"format": "self-learning-agent", "version": "1.0.0", "projects": {here: {"name": "web-api", "learnings": [
        make_record(context="call the API", error=f"401 with key {key}", fix="export ANTHROPIC_API_KEY=" + key)]}}}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    learn("import", tmp_path / "s.json", check=0)
    stored = (learn.home / "projects" / here / "learnings.jsonl").read_text()
    assert key not in stored and "[REDACTED:" in stored


def test_a_deleted_marker_cannot_delete_existing_learnings(learn, seeded, tmp_path):
    here = seeded["here"].id
    doc = {"format": "self-learning-agent", "version": "1.0.0", "projects": {here: {"name": "web-api", "learnings": [
        {"id": seeded["a"]["id"] + "-x", "deleted": True, "context": "x", "fix": "y"}]}}}
    (tmp_path / "d.json").write_text(json.dumps(doc))
    learn("import", tmp_path / "d.json", check=0)
    store = Store(learn.home, warn_stderr=False)
    recs = store.records(store.layout.learnings(here))
    assert seeded["a"]["id"] in recs and all("deleted" not in r for r in recs.values())


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not JSON ("),
    ("[1, 2]", "is not a learn export: the top level is a JSON array, not an object"),
    ('{"learnings": []}', 'is not a learn export: no "format" field (expected "self-learning-agent")'),
    ('{"format": "other-tool", "version": "1.0.0"}', 'is not a learn export: format "other-tool"'),
    ('{"format": "self-learning-agent", "version": "2.0.0", "global": []}',
     "unsupported export version 2.0.0 (this learn reads 1.x)"),
    ('{"format": "self-learning-agent", "global": []}', "missing or malformed version None (expected 1.x)"),
    ('{"format": "self-learning-agent", "version": "1.0.0"}', 'no "global", "projects" or "archived" section'),
    # Python 3.11 runs out of stack parsing it; 3.13's parser does not, and sees an array
    ("[" * 5000 + "]" * 5000, ("nested too deeply to be an export", "the top level is a JSON array")),
])
def test_files_that_are_not_exports_are_refused_in_one_line(learn, tmp_path, content, message):
    ready(learn)
    path = tmp_path / "in.json"
    path.write_text(content)
    proc = learn("import", path, check=1)
    messages = message if isinstance(message, tuple) else (message,)
    assert proc.stderr.count("\n") == 1 and any(m in proc.stderr for m in messages), proc.stderr
    assert proc.stderr.startswith("learn: error: ") and "Traceback" not in proc.stderr


def test_missing_file_and_size_limit(learn, tmp_path):
    ready(learn)
    proc = learn("import", tmp_path / "nope.json", check=1)
    assert proc.stderr == f"learn: error: {tmp_path / 'nope.json'}: no such file\n"
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(300 * 1024 * 1024)  # sparse: nothing is really written
    proc = learn("import", big, check=1)
    assert proc.stderr == "learn: error: big.json is 300 MB: over the import limit of 256 MB\n"
    proc = learn("import", tmp_path, check=1)
    assert "not a regular file" in proc.stderr


def test_wrong_sections_are_skipped_with_a_warning(learn, tmp_path):
    doc = {"format": "self-learning-agent", "version": "1.0.0", "global": {"not": "a list"},
           "archived": [make_record(context="c", fix="f")]}
    (tmp_path / "w.json").write_text(json.dumps(doc))
    proc = learn("import", tmp_path / "w.json", check=0)
    assert '"global" is a object, not a list (skipped)' in proc.stdout
    assert "  Import complete: 1 entries processed, 1 new.\n" in proc.stdout


def test_an_untrusted_import_says_what_its_entries_can_do(learn, seeded, tmp_path):
    """Without --trust an entry matching a learning changes nothing of it, and new entries
    reach no agent yet: the report says both (it said "frequency updated")."""
    here = identify(learn.cwd).id
    entries = [dict(seeded["a"], id="learn-20260101T000000Z-000001", fix="pip install 'python-jose[cryptography]'"),
               make_record(key="err:new", error="Permission denied: ./deploy.sh", fix="chmod +x deploy.sh")]
    doc = {"format": "self-learning-agent", "version": "1.0.0",
           "projects": {here: {"name": "web-api", "root": "/somewhere/web-api", "learnings": entries}}}
    (tmp_path / "team.json").write_text(json.dumps(doc))
    out = learn("import", tmp_path / "team.json", check=0).stdout
    assert "    Merged with existing: 1 (noted, your learning unchanged)\n" in out
    assert "  Untrusted file: its new learnings reach no agent until your own sessions confirm them" in out
    assert "Untrusted file" not in learn("import", tmp_path / "team.json", "--trust", check=0).stdout


def test_nothing_compatible_is_an_error_after_the_report(learn, tmp_path):
    ready(learn)
    doc = {"format": "self-learning-agent", "version": "1.0.0", "global": [{"type": "nope", "fix": "x"}, 3]}
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    proc = learn("import", tmp_path / "bad.json", check=1)
    assert "Skipped (incompatible): 2" in proc.stdout and "unknown type 'nope'" in proc.stdout
    assert proc.stderr == "learn: error: nothing imported: all 2 entries of bad.json were incompatible\n"


def test_import_of_a_missing_file_says_so_and_creates_no_store(learn, tmp_path):
    """A mistyped name had created the home ("created a new store at …") before failing."""
    proc = learn("import", str(tmp_path / "typo.json"), check=1)
    assert proc.stderr == f"learn: error: {tmp_path / 'typo.json'}: no such file\n"
    assert not learn.home.exists()
    proc = learn("import", str(tmp_path), check=1)
    assert proc.stderr == f"learn: error: {tmp_path}: not a regular file\n" and not learn.home.exists()


def test_import_without_file_is_a_usage_error(learn):
    proc = learn("import", check=2)
    assert "Traceback" not in proc.stderr and "FILE" in proc.stderr
