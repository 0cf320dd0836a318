"""`learn show`, `learn forget [--hard]` and `learn restore` end to end."""

from __future__ import annotations

import json

import pytest

from learn_cli.store.api import Store
from learn_cli.store.project import identify
from learn_cli.store.record import make_record


def lines_of(path) -> list[dict]:
    latest: dict = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        latest[rec["id"]] = rec
    return [r for r in latest.values() if not r.get("deleted")]


def error_line(proc) -> str:
    """The error line (a first run also announces the new store on stderr)."""
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("learn: created a new store")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def add(learn, *args, cwd=None) -> str:
    return learn.json("add", *args, cwd=cwd)["id"]


def project_files(learn, cwd=None):
    pid = identify(cwd or learn.cwd).id
    folder = learn.home / "projects" / pid
    return folder / "learnings.jsonl", folder / "archive.jsonl"


# -- show ----------------------------------------------------------------------------------

def test_show_by_id_and_unique_prefix(learn):
    rid = add(learn, "ModuleNotFoundError: No module named 'jose'", "--fix", "pip install python-jose", "--tag", "jwt")
    for ref in (rid, rid[:-2]):
        out = learn("show", ref, check=0).stdout
        lines = out.splitlines()
        assert lines[0] == rid
        assert lines[1].split() == ["Score:", "0.07"]
        assert any(ln.split(":", 1)[0].strip() == "Stored in" and "learnings.jsonl (project)" in ln for ln in lines)
        for label, value in (("Type", "error"), ("Category", "dependency"), ("Status", "active"),
                             ("Error", "ModuleNotFoundError: No module named 'jose'"),
                             ("Fix", "pip install python-jose"),
                             ("Projects", "web-api"), ("Tags", "jwt"), ("Source", "manual")):
            assert any(ln.strip().startswith(f"{label}:") and ln.strip().endswith(value) for ln in lines), label


def test_show_json(learn):
    rid = add(learn, "Use pnpm, not npm")
    doc = learn.json("show", rid)
    assert doc["record"]["id"] == rid and doc["scope"] == "project" and doc["score"] == 0.07
    assert doc["file"].endswith("/learnings.jsonl")


def test_show_unknown_and_ambiguous_ids(learn):
    Store(learn.home, warn_stderr=False).close()
    proc = learn("show", "learn-nope", check=1)
    assert error_line(proc) == "learn: error: no learning with id 'learn-nope' (find ids with `learn recall TOPIC`)"
    add(learn, "first thing learned")
    add(learn, "second thing learned")
    proc = learn("show", "learn-", check=1)
    assert proc.stderr.startswith("learn: error: id 'learn-' is ambiguous: ") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("args", [("forget", "learn-x"), ("restore", "learn-x"), ("resolve", "learn-x", "--keep")])
def test_an_id_with_no_store_says_so_and_creates_none(learn, args):
    """An id names a learning: with no store there is none, and none is made (forget, restore and
    resolve had announced "created a new store at …" and then found nothing)."""
    proc = learn(*args, check=1)
    assert proc.stderr == f"learn: error: no store at {learn.home} (check SELF_LEARNING_HOME; nothing was created)\n"
    assert not learn.home.exists()


def test_show_keeps_unknown_fields_and_escapes_control_characters(learn):
    here = identify(learn.cwd)
    store = Store(learn.home, warn_stderr=False)
    store.register_project(here)
    rec = make_record(context="bell \x07 and \x1b[2J clear", key="txt:x", future_field={"a": 1})
    store.put(store.layout.learnings(here.id), rec)
    store.close()
    out = learn("show", rec["id"], check=0).stdout
    assert "\x07" not in out and "\x1b" not in out and "Future field:" in out and "a=1" in out


# -- forget / restore --------------------------------------------------------------------------

def test_forget_archives_and_restore_brings_it_back(learn):
    rid = add(learn, "Pin base image versions in Dockerfile", "--fix", "python:3.11-slim")
    live, archive = project_files(learn)
    proc = learn("forget", rid, check=0)
    assert proc.stdout.splitlines() == [
        f'Archived {rid} ("Pin base image versions in Dockerfile") to {archive.relative_to(learn.home)}',
        f"  Undo with: learn restore {rid}"]
    assert lines_of(live) == []
    [rec] = lines_of(archive)
    assert rec["id"] == rid and rec["status"] == "archived"
    assert learn.json("recall", "dockerfile")["results"] == []
    assert learn.json("recall", "dockerfile", "--all")["results"][0]["archived"] is True
    assert learn.json("show", rid)["scope"] == "archive"

    proc = learn("forget", rid, check=1)
    assert proc.stderr == f"learn: error: {rid} is already archived (delete it with `learn forget {rid} --hard`)\n"

    low = dict(rec, low_since="2026-01-01T00:00:00Z")  # as prune leaves it
    store = Store(learn.home, warn_stderr=False)
    store.put(archive, low)
    store.close()
    proc = learn("restore", rid, check=0)
    assert (
        proc.stdout.strip()
        == f'Restored {rid} ("Pin base image versions in Dockerfile") to {live.relative_to(learn.home)}'
    )
    [back] = lines_of(live)
    assert back["status"] == "active" and "low_since" not in back and lines_of(archive) == []
    proc = learn("restore", rid, check=1)
    assert proc.stderr == (f"learn: error: {rid} is not archived (it is active in "
                           f"{live.relative_to(learn.home)})\n")


def test_forget_hard_deletes_every_copy(learn):
    rid = add(learn, "Tabs for indentation", "--category", "style")
    learn("forget", rid, check=0)
    proc = learn("forget", rid, "--hard", check=0)
    assert proc.stdout.strip() == f'Deleted {rid} ("Tabs for indentation")'
    live, archive = project_files(learn)
    assert lines_of(live) == [] and lines_of(archive) == []
    assert learn("show", rid, check=1).stderr.startswith("learn: error: no learning with id")
    other = add(learn, "Spaces for indentation", "--category", "style")
    learn("forget", other, "--hard", check=0)
    assert lines_of(live) == []


def test_global_learnings_go_to_the_global_archive_and_back(learn):
    rid = add(learn, "Set a timeout on every HTTP client call", "--global")
    learn("forget", rid, check=0)
    archive = learn.home / "global" / "archive.jsonl"
    assert [r["id"] for r in lines_of(archive)] == [rid]
    assert lines_of(learn.home / "global" / "patterns.jsonl") == []
    learn("restore", rid, check=0)
    [rec] = lines_of(learn.home / "global" / "patterns.jsonl")
    assert rec["id"] == rid and rec["status"] == "global"
    assert lines_of(archive) == []


def test_restore_merges_into_the_same_learning_captured_again(learn):
    args = ("ModuleNotFoundError: No module named 'requests'", "--fix", "pip install requests")
    old = add(learn, *args)
    learn("forget", old, check=0)
    new = add(learn, *args)
    proc = learn("restore", old, check=0)
    assert f"merged into {new}" in proc.stdout
    live, archive = project_files(learn)
    [rec] = lines_of(live)
    assert rec["id"] == new and rec["frequency"] == 2 and rec["status"] == "active"
    assert lines_of(archive) == []


def test_forget_and_restore_unknown_ids(learn):
    learn("add", "a note so that the store exists", check=0)
    for cmd in ("forget", "restore"):
        proc = learn(cmd, "learn-missing", check=1)
        assert (
            error_line(proc) == "learn: error: no learning with id 'learn-missing' (find ids with `learn recall TOPIC`)"
        )
        assert learn(cmd, check=2).returncode == 2
