"""Hostile import files (SPEC §4, §6): a 1 GB file, 10,000-deep nesting, endless streams, wrong
types in every field, ids that collide with existing learnings (and tombstones that try to
delete them), project ids and names like `../../etc`. `learn import` gives clear reasons,
imports the good entries, and writes nothing outside the home."""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

import reliability_kit as kit

EXE = str(Path(sys.executable).with_name("learn"))
MEMORY_LIMIT = 1 << 30  # address space for the import process: reading 1 GB would not fit


def learn_import(home: Path, cwd: Path, path, *extra, limit_memory: bool = False) -> subprocess.CompletedProcess:
    env = kit.learn_env(home, cwd.parent / "userhome")
    (cwd.parent / "userhome").mkdir(exist_ok=True)

    def cap_memory():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run([EXE, "import", str(path), *extra], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120, preexec_fn=cap_memory if limit_memory else None)


def export_of(home: Path, cwd: Path) -> dict:
    env = kit.learn_env(home, cwd.parent / "userhome")
    proc = subprocess.run([EXE, "export", "-o", "-"], capture_output=True, text=True, cwd=cwd, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def all_records(doc: dict) -> list[dict]:
    return doc["global"] + doc["archived"] + [r for p in doc["projects"].values() for r in p["learnings"]]


def refused(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) <= 2 and lines[-1].startswith("learn: error:"), proc.stderr
    assert all(w in lines[-1] for w in words), proc.stderr


@pytest.fixture
def store(tmp_path):
    """A home with 20 learnings in one project; returns (home, cwd, records)."""
    from learn_cli.store.api import Store
    from learn_cli.store.project import identify

    cwd = kit.project_dir(tmp_path / "work", "app")
    (cwd.parent / "userhome").mkdir()
    project = identify(cwd)
    home = tmp_path / "home"
    st = Store(home, warn_stderr=False)
    st.register_project(project)
    rng = random.Random("hostile-import")
    recs = [kit.error_record(rng, project) for _ in range(20)]
    st.put_many(st.layout.learnings(project.id), recs)
    st.close()
    return home, cwd, recs


def test_a_1_gb_file_is_refused_by_its_size_without_reading_it(tmp_path, store):
    home, cwd, _ = store
    big = tmp_path / "huge-export.json"
    with open(big, "wb") as fh:
        fh.truncate(1 << 30)  # sparse: 1 GB on paper, no disk used
    before = kit.tree_bytes(home)
    started = time.monotonic()
    proc = learn_import(home, cwd, big, limit_memory=True)
    took = time.monotonic() - started
    refused(proc, "1024 MB", "limit")
    assert took < 20 and kit.tree_bytes(home) == before
    print(f"\n1 GB import refused in {took:.2f}s")


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "directory"])
def test_endless_or_odd_files_are_refused(tmp_path, store, kind):
    home, cwd, _ = store
    if kind == "fifo":
        path = tmp_path / "pipe.json"
        os.mkfifo(path)
    elif kind == "directory":
        path = tmp_path / "folder.json"
        path.mkdir()
    else:
        path = kind
    before = kit.tree_bytes(home)
    refused(learn_import(home, cwd, path), "not a regular file")
    assert kit.tree_bytes(home) == before


@pytest.mark.parametrize("shape", ["lists", "objects", "inside an entry"])
def test_10000_deep_nesting(tmp_path, store, shape):
    home, cwd, _ = store
    deep = {"lists": "[" * 10_000 + "]" * 10_000, "objects": '{"a":' * 10_000 + "1" + "}" * 10_000}
    if shape == "inside an entry":
        body = ('{"format": "self-learning-agent", "version": "1.0.0", "global": [{"context": "x", "tags": '
                + deep["lists"] + "}]}")
    else:
        body = '{"format": "self-learning-agent", "version": "1.0.0", "global": [' + deep[shape] + "]}"
    path = tmp_path / "deep.json"
    path.write_text(body)
    before = kit.tree_bytes(home)
    refused(learn_import(home, cwd, path), "nested too deeply")
    assert kit.tree_bytes(home) == before


WRONG = [0, -1, 1.5, True, None, [], ["x"], {}, {"a": 1}, "", "x" * 50_000]
FIELDS = ["id", "type", "category", "context", "error", "fix", "project", "projects", "frequency", "impact",
          "created", "last_used", "status", "source", "key", "tool", "command", "fix_command", "exit_code", "env",
          "evidence", "tags", "updated", "deleted", "helped", "not_helped", "conflict_with", "merged_from"]


def test_wrong_types_in_every_field(tmp_path, store):
    """Every field given every wrong type, beside good entries: the good ones are imported,
    each bad one is skipped with a reason that names the field, the store stays well-formed."""
    home, cwd, _ = store
    good = [{"id": f"learn-20260101T000000Z-{n:06x}", "type": "pattern", "context": f"good lesson {n}: use blarp {n}",
             "fix": f"blarp --fix {n}"} for n in range(10)]
    bad = []
    for field in FIELDS:
        for value in WRONG:
            entry = {"type": "error", "context": f"entry with a wrong {field}", "fix": "f"}
            entry[field] = value
            bad.append(entry)
    doc = {"format": "self-learning-agent", "version": "1.0.0", "global": good + bad,
           "projects": {"0123456789ab": {"name": 42, "root": ["x"], "remote": {"a": 1}, "learnings": bad[:40]},
                        "fedcba987654": "not an object", "aaaaaaaaaaaa": {"learnings": "not a list"}},
           "archived": [dict(b, archived_from=v) for b, v in zip(bad[:11], WRONG, strict=True)]}
    path = tmp_path / "typed.json"
    path.write_text(json.dumps(doc))
    proc = learn_import(home, cwd, path, "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    report = json.loads(proc.stdout)
    assert report["skipped"] > 0 and report["skipped_reasons"]
    assert all(":" in reason for reason in report["skipped_reasons"])  # where, then why
    assert any("must be text" in r for r in report["skipped_reasons"]), report["skipped_reasons"]
    assert report["warnings"], report  # the malformed project sections are named
    kit.every_file_parses(home)
    records = all_records(export_of(home, cwd))
    texts = {r.get("context") for r in records}
    assert {g["context"] for g in good} <= texts  # partial import: every good entry is in
    for rec in records:  # what came in is well-formed
        assert isinstance(rec["id"], str) and isinstance(rec.get("context", ""), str)
        assert isinstance(rec.get("frequency", 1), int) and 0 <= rec.get("impact", 0.5) <= 1
        assert len(json.dumps(rec)) < 64_000
        assert rec.get("deleted") is None
    print(f"\nwrong types: {len(bad)} bad entries ({len(FIELDS)} fields x {len(WRONG)} values), "
          f"{report['new']} new, {report['skipped']} skipped")


def test_ids_that_collide_with_existing_learnings(tmp_path, store):
    """Same ids, other learnings; tombstones for existing ids; same ids, same learnings."""
    home, cwd, recs = store
    from learn_cli.store.project import identify

    pid = identify(cwd).id
    path = home / "projects" / pid / "learnings.jsonl"
    before = {r["id"]: kit.normalized(r) for r in recs}
    other = [{"id": r["id"], "type": "pattern", "context": f"a different lesson about quorx {n}", "fix": f"quorx {n}"}
             for n, r in enumerate(recs[:8])]
    tombstones = [{"id": r["id"], "deleted": True, "context": "delete me", "fix": "x"} for r in recs[8:14]]
    same = [dict(r) for r in recs[14:]]
    doc = {"format": "self-learning-agent", "version": "1.0.0", "global": other[:4],
           "projects": {pid: {"name": "app", "learnings": other[4:] + tombstones + same}}}
    (tmp_path / "clash.json").write_text(json.dumps(doc))
    proc = learn_import(home, cwd, tmp_path / "clash.json", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    from learn_cli.store import jsonl

    now = jsonl.load(path).records
    for rid, content in before.items():  # every existing learning is still there, unchanged
        assert rid in now, f"{rid} deleted by an import"
        assert json.loads(kit.normalized(now[rid]))["error"] == json.loads(content)["error"]
    records = all_records(export_of(home, cwd))
    for n in range(8):  # the different learnings came in, under new ids
        found = [r for r in records if r.get("context") == f"a different lesson about quorx {n}"]
        assert len(found) == 1 and found[0]["id"] not in before, (n, found)
    assert report["duplicates"] >= len(same)


HOSTILE_PROJECTS = ["../../etc", "../../../../../../tmp/escape", "/etc", "..", ".", "~root", "C:\\Windows",
                    "a/b/c", "\x00nul", "x" * 5000, "0123456789ab/../../..", "projects", ""]


def test_project_ids_and_names_cannot_write_outside_the_home(tmp_path, store):
    home, cwd, _ = store
    sentinel = tmp_path / "outside"
    sentinel.mkdir()
    (sentinel / "keep.txt").write_text("keep")
    projects = {}
    for n, name in enumerate(HOSTILE_PROJECTS):
        projects[name] = {"name": name, "root": f"/{name}", "remote": f"../../{name}",
                          "learnings": [{"id": f"learn-20260101T000000Z-{n:06x}", "type": "pattern",
                                         "context": f"lesson from project {n}", "fix": f"frob {n}",
                                         "projects": [name, "../../etc"], "project": name}]}
    doc = {"format": "self-learning-agent", "version": "1.0.0", "projects": projects,
           "archived": [{"context": "archived one", "fix": "x", "archived_from": "../../etc"}]}
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / ".." / "escape.json"
    path.write_text(json.dumps(doc))
    outside_before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if home not in p.parents and p != home}
    proc = learn_import(home, cwd, path, "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    outside_after = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if home not in p.parents and p != home}
    assert outside_after == outside_before  # nothing created or touched outside the home
    assert not (tmp_path.parent / "escape").exists() and not Path("/tmp/escape").exists()
    for entry in (home / "projects").iterdir():
        assert len(entry.name) == 12 and all(c in "0123456789abcdef" for c in entry.name), entry.name
        assert entry.is_dir() and not entry.is_symlink()
    records = all_records(export_of(home, cwd))
    assert sum(r.get("context", "").startswith("lesson from project") for r in records) == len(HOSTILE_PROJECTS)
    kit.every_file_parses(home)
