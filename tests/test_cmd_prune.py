"""`learn prune` end to end: the seed's four-step report, archiving, merging duplicates (same key
and near-duplicates), re-scoring, context, compaction, old sessions, --hard, the large-archive
hint, --quiet, --dry-run, --json."""

from __future__ import annotations

import json
import os
import time

import pytest

from learn_cli.store import jsonl
from learn_cli.store.api import Store
from learn_cli.store.project import identify
from learn_cli.store.record import make_record


def days_ago(n: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - n * 86400))


@pytest.fixture
def seeded(learn):
    here = identify(learn.cwd)
    store = Store(learn.home, warn_stderr=False)
    store.register_project(here)
    path = store.layout.learnings(here.id)
    now = days_ago(0)
    recs = {
        "stale": make_record(context="Pin Node.js to v16", fix="nvm use 16", impact=0.1, last_used=days_ago(80),
                             low_since=days_ago(40), projects=[here.id], key="txt:node"),
        "low": make_record(context="Low but recent", fix="x", impact=0.1, last_used=now, projects=[here.id],
                           key="txt:low"),
        "dup1": make_record(error="No module named 'jose'", fix="pip install python-jose", frequency=3, impact=0.8,
                            last_used=now, projects=[here.id], key="err:jose"),
        "dup2": make_record(error="No module named 'jose'", fix="pip install python-jose[cryptography]", frequency=1,
                            impact=0.6, last_used=now, projects=[here.id], key="err:jose"),
        "near1": make_record(context="Docker builds fail on Apple Silicon without an explicit platform",
                             fix="docker build --platform linux/amd64 .", frequency=4, impact=0.9, last_used=now,
                             projects=[here.id], key="txt:d1"),
        "near2": make_record(context="Docker builds fail on Apple Silicon without explicit platform",
                             fix="docker build --platform linux/amd64 .", frequency=1, impact=0.5, last_used=now,
                             projects=[here.id], key="txt:d2"),
        "keep": make_record(context="Set timeout on HTTP calls", fix="timeout=10", frequency=5, impact=0.9,
                            last_used=now, projects=[here.id], key="txt:t"),
    }
    # two lines for one id (a superseded line) and the duplicate key written straight to the log,
    # as two processes storing the same learning at once would leave it
    jsonl.append(path, [dict(recs["keep"], frequency=4)] + list(recs.values()))
    old_archived = make_record(context="Ancient", fix="gone", status="archived", last_used=days_ago(200),
                               projects=[here.id], key="txt:anc")
    recent_archived = make_record(context="Recent archive", fix="kept", status="archived", last_used=days_ago(10),
                                  projects=[here.id], key="txt:rec")
    jsonl.append(store.layout.archive(here.id), [old_archived, recent_archived])
    sessions = store.layout.sessions_dir
    (sessions / "old-session.jsonl").write_text('{"kind": "failure"}\n')
    os.utime(sessions / "old-session.jsonl", (time.time() - 20 * 86400,) * 2)
    (sessions / "new-session.jsonl").write_text('{"kind": "failure"}\n')
    store.close()
    return {"here": here, "old_archived": old_archived, "recent_archived": recent_archived, **recs}


def records(learn, pid, name="learnings"):
    store = Store(learn.home, warn_stderr=False)
    try:
        return store.records(getattr(store.layout, name)(pid))
    finally:
        store.close()


def test_report_in_the_seed_layout(learn, seeded):
    proc = learn("prune", check=0)
    out = proc.stdout
    assert out.startswith("Pruning knowledge base...\n\n"
                          "  [1/4] Archiving stale learnings (score < 0.3 for 30+ days)...\n"
                          "        Archived: 1 entry\n\n  [2/4] Merging duplicates...\n"
                          "        Merged: 2 pairs -> 2 unified entries\n        Removed: 2 redundant entries\n\n"
                          "  [3/4] Recalculating all scores...\n        Updated: 7 entries\n")
    assert "        Score changes: 4 entries rescored\n" in out  # four low scores start their archive clock
    assert "  [4/4] Compressing context...\n        Before: " in out and "        Saved: " in out
    assert "        Old sessions removed: 1\n" in out
    assert "  Prune complete\n  Entries: 7 -> 4 (-3)\n  Disk saved: " in out
    assert "  Context budget: " in out and " / 2,000 tokens\n" in out
    assert "Hint: 1 archived entry unused for 90+ days" in out and "`learn prune --hard`" in out
    for ch in "🧹✅💡→−":
        assert ch not in out
    pid = seeded["here"].id
    live = records(learn, pid)
    assert set(live) == {seeded[k]["id"] for k in ("low", "dup1", "near1", "keep")}
    assert live[seeded["dup1"]["id"]]["frequency"] == 4
    assert live[seeded["dup1"]["id"]]["fix"] == "pip install python-jose[cryptography]"
    assert live[seeded["dup1"]["id"]]["merged_from"] == [seeded["dup2"]["id"]]
    assert live[seeded["near1"]["id"]]["frequency"] == 5
    assert live[seeded["low"]["id"]]["low_since"]
    assert seeded["stale"]["id"] in records(learn, pid, "archive")
    assert not (learn.home / "sessions" / "old-session.jsonl").exists()
    assert (learn.home / "sessions" / "new-session.jsonl").exists()
    lines = (learn.home / "projects" / pid / "learnings.jsonl").read_text().splitlines()
    assert len(lines) == 4  # compacted: one line per live learning


def test_logs_with_superseded_lines_are_compacted(learn):
    here = identify(learn.cwd)
    store = Store(learn.home, warn_stderr=False)
    store.register_project(here)
    path = store.layout.learnings(here.id)
    recs = [make_record(context=f"Learning {i}", fix=f"fix {i}", frequency=5, impact=0.9, projects=[here.id],
                        key=f"txt:{i}") for i in range(6)]
    store.put_many(path, recs)
    for n in range(3):
        store.update(path, recs[0]["id"], lambda r, n=n: dict(r, frequency=6 + n))
    store.close()
    out = learn("prune", check=0).stdout
    assert "        Logs compacted: 1 file (3 superseded lines)\n" in out
    assert len(path.read_text().splitlines()) == 6
    assert records(learn, here.id)[recs[0]["id"]]["frequency"] == 8


def test_a_file_changed_since_the_last_prune_is_searched_again(learn, seeded):
    pid = seeded["here"].id
    learn("prune", check=0)
    assert (learn.home / "analytics" / "prune.json").exists()
    assert learn.json("prune")["merged"]["groups"] == 0
    store = Store(learn.home, warn_stderr=False)
    twin = make_record(context="Set timeout on HTTP calls!", fix="timeout=10", frequency=1, impact=0.5,
                       projects=[pid], key="txt:t2", last_used=days_ago(0))
    store.put(store.layout.learnings(pid), twin)
    store.close()
    doc = learn.json("prune")
    assert doc["merged"]["items"][0]["ids"] == [twin["id"]] and doc["merged"]["removed"] == 1


def test_hard_deletes_old_archived_entries(learn, seeded):
    doc = learn.json("prune", "--hard")
    assert doc["storage"]["hard_deleted"] == 1 and doc["archive"]["suggest_hard"] is False
    archive = records(learn, seeded["here"].id, "archive")
    assert seeded["old_archived"]["id"] not in archive and seeded["recent_archived"]["id"] in archive
    out = learn("prune", "--hard", check=0).stdout
    assert "Deleted for good (--hard): 0 archived entries unused for 90+ days" in out and "Hint:" not in out


def test_dry_run_writes_nothing_and_reports_the_same(learn, seeded):
    files = {p: p.read_bytes() for p in learn.home.rglob("*") if p.suffix in (".json", ".jsonl")}
    dry = learn.json("prune", "--dry-run")
    assert {p: p.read_bytes() for p in learn.home.rglob("*") if p.suffix in (".json", ".jsonl")} == files
    assert dry["dry_run"] is True and dry["entries"] == {"before": 7, "after": 4}
    real = learn.json("prune")
    for part in ("archived", "merged"):
        assert (
            dry[part]["count" if part == "archived" else "groups"]
            == real[part]["count" if part == "archived" else "groups"]
        )
    assert dry["storage"]["sessions_removed"] == real["storage"]["sessions_removed"] == 1
    assert "Dry run complete (nothing written)" in learn("prune", "--dry-run", check=0).stdout


def test_json_schema(learn, seeded):
    doc = learn.json("prune")
    assert set(doc) == {"dry_run", "hard", "entries", "archived", "merged", "rekeyed", "scores", "context", "storage",
                        "archive"}
    assert doc["merged"]["removed"] == 2 and doc["scores"]["updated"] == 7
    assert doc["storage"]["disk_before"] - doc["storage"]["disk_after"] == doc["storage"]["disk_saved"]
    assert doc["archive"]["entries"] == 3 and doc["archive"]["older_than_hard_delete_days"] == 1
    assert doc["context"]["budget"] == 2000 and doc["context"]["after_tokens"] <= 2000
    again = learn.json("prune")
    assert again["merged"]["removed"] == 0 and again["archived"]["count"] == 0  # nothing left to do


def test_quiet_prints_nothing_and_exits_zero(learn, seeded):
    proc = learn("prune", "--quiet", check=0)
    assert proc.stdout == "" and proc.stderr == ""
    assert len(records(learn, seeded["here"].id)) == 4


def test_empty_store(learn):
    Store(learn.home, warn_stderr=False).close()
    proc = learn("prune", check=0)
    assert "  Entries: 0 -> 0 (±0)\n" in proc.stdout and proc.stderr == ""


def test_conflicted_learnings_are_not_merged(learn):
    here = identify(learn.cwd)
    store = Store(learn.home, warn_stderr=False)
    store.register_project(here)
    a = make_record(context="Use Jest", fix="use jest", key="txt:j", status="conflicted", projects=[here.id])
    b = dict(make_record(context="Use Jest", fix="use jest", key="txt:j", projects=[here.id]))
    store.put_many(store.layout.learnings(here.id), [a, b])
    store.close()
    learn("prune", check=0)
    assert set(records(learn, here.id)) == {a["id"], b["id"]}


def test_session_age_follows_the_config(learn, seeded):
    config = learn.home / "config.json"
    config.write_text(json.dumps(dict(json.loads(config.read_text()), session_max_age_days=30)))
    assert learn.json("prune")["storage"]["sessions_removed"] == 0


def test_prune_on_a_read_only_home_is_one_line(learn, seeded):
    if os.geteuid() == 0:
        pytest.skip("root ignores file modes")
    pid = seeded["here"].id
    folder = learn.home / "projects" / pid
    os.chmod(folder, 0o500)
    try:
        proc = learn("prune", check=1)
    finally:
        os.chmod(folder, 0o700)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_a_dry_run_does_not_predict_the_digest_it_cannot_know(learn, seeded):
    out = learn("prune", "--dry-run", check=0).stdout
    step = out.split("[4/4] Compressing context...")[1].split("Storage:")[0]
    assert "Now: " in step and "measured again by a real prune" in step
    assert "After:" not in step and "Saved:" not in step


def test_compression_that_saves_nothing_says_why(learn, seeded):
    """On a few short learnings the digest (headings, "`X` fails: use `Y` instead") is longer
    than their stored text: the report says so instead of "already compact"."""
    doc = json.loads(learn("prune", "--json").stdout)["context"]
    before, after = doc["before_tokens"], doc["after_tokens"]
    assert 0 < before < after  # the seeded home is such a case
    out = learn("prune", check=0).stdout
    assert f"Saved: 0 tokens (the digest's headings and wording add {after - before:,})" in out
