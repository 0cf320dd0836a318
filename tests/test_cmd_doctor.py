"""`learn doctor`: each check, its repair, the exit code, and a read-only home."""

from __future__ import annotations

import json
import os
import stat
import time

import pytest

from learn_cli.commands import doctor
from learn_cli.commands._common import State
from learn_cli.doctor import files as doctor_files
from learn_cli.store.project import identify


def checks_of(learn, *args, code=None) -> dict:
    proc = learn("doctor", "--json", *args)
    if code is not None:
        assert proc.returncode == code, (proc.stdout, proc.stderr)
    doc = json.loads(proc.stdout)
    return {c["name"]: c for c in doc["checks"]} | {"_doc": doc}


def test_a_fresh_store_is_healthy(learn):
    learn("add", "Use pnpm, not npm", check=0)
    checks = checks_of(learn, code=0)
    assert checks["_doc"]["healthy"] is True and checks["_doc"]["home"] == str(learn.home)
    for name in ("layout", "permissions", "data", "index", "logs", "archive"):
        assert checks[name]["status"] == "ok", checks[name]
    assert checks["hooks"]["status"] == "warn"  # nothing registered in this test's ~/.claude
    assert "learn hooks install" in checks["hooks"]["summary"]


def test_no_store_yet_is_created(learn):
    checks = checks_of(learn, code=0)
    assert checks["layout"]["status"] == "repaired" and "created one" in checks["layout"]["summary"]
    assert (learn.home / "global" / "errors.jsonl").exists()


def test_plain_report(learn):
    learn("add", "x", check=0)
    out = learn("doctor", check=0).stdout
    lines = out.splitlines()
    assert lines[0] == f"learn doctor: {learn.home}"
    assert any(ln.split()[:3] == ["ok", "layout", "folders"] for ln in lines)
    assert lines[-1].startswith("Result: healthy")
    assert "✅" not in out


def test_corrupt_lines_are_moved_aside_never_dropped(learn):
    rid = learn.json("add", "keep me")["id"]
    path = learn.home / "projects" / identify(learn.cwd).id / "learnings.jsonl"
    with open(path, "ab") as fh:
        fh.write(b'{"broken": \n\xff\xfe junk\n')
    learn("add", "keep me too", check=0)
    checks = checks_of(learn, code=0)
    data = checks["data"]
    assert data["status"] == "repaired"
    rel = path.relative_to(learn.home)
    assert [d.split(":")[:2] for d in data["details"]] == [[str(rel), "2"], [str(rel), "3"]]
    corrupt = path.with_name("learnings.jsonl.corrupt").read_bytes()
    assert corrupt == b'{"broken": \n\xff\xfe junk\n'
    assert stat.S_IMODE(os.stat(path.with_name("learnings.jsonl.corrupt")).st_mode) == 0o600
    texts = [json.loads(line)["context"] for line in path.read_text().splitlines()]
    assert texts == ["keep me", "keep me too"]
    assert learn.json("show", rid)["record"]["context"] == "keep me"
    assert checks_of(learn, code=0)["data"]["status"] == "ok"


def test_unreadable_settings_are_set_aside_and_defaults_written(learn):
    learn("add", "x", check=0)
    (learn.home / "config.json").write_text("{not json")
    checks = checks_of(learn, code=0)
    assert checks["data"]["status"] == "repaired"
    assert (learn.home / "config.json.corrupt").read_text() == "{not json"
    assert json.loads((learn.home / "config.json").read_text())["budget"] == 2000


def test_corrupt_preferences_document(learn):
    prefs = learn.home / "global" / "preferences.json"
    learn("add", "x", check=0)
    prefs.write_text("[[[")
    checks = checks_of(learn, code=0)
    assert checks["data"]["status"] == "repaired"
    assert (learn.home / "global" / "preferences.json.corrupt").read_text() == "[[["
    assert json.loads(prefs.read_text()) == {"schema": 1, "learnings": []}


def test_modes_are_repaired(learn):
    learn("add", "x", check=0)
    path = learn.home / "projects" / identify(learn.cwd).id / "learnings.jsonl"
    os.chmod(path, 0o644)
    os.chmod(learn.home / "global", 0o755)
    checks = checks_of(learn, code=0)
    assert checks["permissions"]["status"] == "repaired"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(learn.home / "global").st_mode) == 0o700


def test_damaged_index_is_rebuilt(learn):
    rid = learn.json("add", "findable after rebuild")["id"]
    (learn.home / "global" / "index.db").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (learn.home / "global" / f"index.db{suffix}").unlink(missing_ok=True)
    checks = checks_of(learn, code=0)
    assert checks["index"]["status"] == "repaired"
    assert learn.json("recall", "findable")["results"][0]["id"] == rid


def test_files_changed_by_hand_are_reindexed(learn):
    learn("add", "first", check=0)
    path = learn.home / "projects" / identify(learn.cwd).id / "learnings.jsonl"
    rec = json.loads(path.read_text().splitlines()[0])
    with open(path, "a") as fh:
        fh.write(json.dumps(dict(rec, id="learn-20260101T000000Z-abcdef", context="hand written")) + "\n")
    checks = checks_of(learn, code=0)
    assert checks["index"]["status"] == "repaired" and checks["index"]["details"] == [str(path.relative_to(learn.home))]


def test_bloated_logs_are_compacted(learn):
    rid = learn.json("add", "updated many times")["id"]
    path = learn.home / "projects" / identify(learn.cwd).id / "learnings.jsonl"
    rec = json.loads(path.read_text().splitlines()[0])
    with open(path, "a") as fh:
        for n in range(40):
            fh.write(json.dumps(dict(rec, frequency=n + 2)) + "\n")
    checks = checks_of(learn, code=0)
    assert checks["logs"]["status"] == "repaired"
    assert len(path.read_text().splitlines()) == 1
    assert learn.json("show", rid)["record"]["frequency"] == 41


def test_hook_registration_is_read(learn):
    learn("add", "x", check=0)
    settings = learn.tmp / "userhome" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    exe = learn.exe
    settings.write_text(json.dumps({"hooks": {
        "PostToolUseFailure": [{"hooks": [{"type": "command", "command": f"{exe} capture"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": exe, "args": ["context", "--hook"]}]}],
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "/usr/bin/lint.sh"}]}],
    }}))
    hooks = checks_of(learn, code=0)["hooks"]
    assert hooks["status"] == "ok" and "~/.claude/settings.json" in hooks["summary"]
    assert hooks["details"] == ["~/.claude/settings.json: PostToolUseFailure, SessionStart"]

    local = learn.cwd / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"hooks": {"PostToolUse": [{"hooks": [{"command": "/gone/bin/learn capture"}]}]}}))
    checks = checks_of(learn, code=1)
    assert checks["hooks"]["status"] == "problem" and checks["_doc"]["healthy"] is False
    assert "/gone/bin/learn (registered in a hook) does not exist or cannot run" in checks["hooks"]["details"]
    proc = learn("doctor", check=1)
    assert proc.stdout.splitlines()[-1].startswith("Result: problems remain")


def test_hooks_without_the_failure_event_are_a_warning(learn):
    settings = learn.tmp / "userhome" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [{"hooks": [{"command": "learn capture"}]}]}}))
    hooks = checks_of(learn, code=0)["hooks"]
    assert hooks["status"] == "warn" and "PostToolUseFailure" in hooks["summary"]


def test_capture_health_from_stats_and_log(learn):
    learn("add", "x", check=0)
    today = time.strftime("%Y-%m-%d", time.gmtime())
    (learn.home / "analytics" / "stats.json").write_text(json.dumps(
        {"schema": 1, "days": {today: {"events": 12, "failures": 3, "pairs": 1}, "2001-01-01": {"events": 99}}}))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (learn.home / "learn.log").write_text(f"2001-01-01T00:00:00Z ancient warning\n{stamp} capture failed: disk full\n")
    capture = checks_of(learn, code=0)["capture"]
    assert capture["summary"].startswith("12 events captured in the last 7 days, 1 warning in")
    assert "failures: 3" in capture["details"] and "pairs: 1" in capture["details"]
    assert f"last capture: on {today}" in capture["details"]
    assert "latest warning: capture failed: disk full" in capture["details"]


def test_large_archive_suggests_prune_hard(store, monkeypatch):
    from learn_cli.store.record import make_record

    store.layout.ensure_project("abcdefabcdef")
    old = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 120 * 86400))
    store.put_many(
        store.layout.archive("abcdefabcdef"),
        [make_record(context=f"old {i}", status="archived", last_used=old, key=f"txt:{i}") for i in range(5)],
    )
    monkeypatch.setattr(doctor_files, "ARCHIVE_WARN_ENTRIES", 3)
    check = doctor_files.archive(store)
    assert check.status == "warn" and check.summary.startswith("large archive: 5 archived learnings,")
    assert check.details == ["5 are older than 90 days: `learn prune --hard` deletes them for good"]


def test_read_only_home_is_reported_not_crashed(tmp_path, monkeypatch):
    from learn_cli.store.api import Store

    home = tmp_path / "home"
    Store(home, warn_stderr=False).close()
    target = home / "global" / "errors.jsonl"
    target.write_bytes(b"{broken\n")
    os.chmod(target, 0o644)
    monkeypatch.setattr(Store, "writable", lambda self: False)
    checks, _ = doctor.run_checks(State(home=str(home), project_path=str(tmp_path)))
    by_name = {c.name: c for c in checks}
    assert by_name["layout"].status == "problem" and "read-only" in by_name["layout"].summary
    assert by_name["permissions"].status == "problem"
    assert by_name["data"].status == "problem" and target.read_bytes() == b"{broken\n"
    assert not target.with_name("errors.jsonl.corrupt").exists()


def test_uncreatable_home_is_one_problem(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    checks, _ = doctor.run_checks(State(home=str(blocker / "home"), project_path=str(tmp_path)))
    assert [c.status for c in checks] == ["problem"] and "cannot create the store" in checks[0].summary


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_read_only_home_end_to_end(learn):
    learn("add", "x", check=0)
    os.chmod(learn.home, 0o500)
    try:
        proc = learn("doctor", check=1)
        assert "read-only" in proc.stdout and "Traceback" not in proc.stderr
    finally:
        os.chmod(learn.home, 0o700)


def test_doctor_removes_temp_files_left_by_a_killed_rewrite(learn):
    import os
    import time

    learn("add", "a note worth keeping", "--fix", "keep it", check=0)
    stale = learn.home / "global" / ".errors.jsonl.abc123.tmp"
    stale.write_text("half a rewrite")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    fresh = learn.home / "global" / ".patterns.jsonl.def456.tmp"
    fresh.write_text("a rewrite in progress")
    proc = learn("doctor")
    assert proc.returncode == 0, proc.stderr
    assert not stale.exists() and fresh.exists()
    assert "temp file" in proc.stdout
