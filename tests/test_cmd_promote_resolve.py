"""`learn promote` and `learn resolve` end to end: the seed's promotion report, --dry-run,
--json, conflicts listed with the resolve hint, interactive resolution on a terminal, and
every error path of resolve."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time

import pytest

from learn_cli.store.api import Store
from learn_cli.store.project import identify
from learn_cli.store.record import make_record


def days_ago(n: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - n * 86400))


@pytest.fixture
def seeded(learn):
    """The seed's example: three projects, two learnings to promote, one candidate, one stale,
    and a Jest/Vitest conflict."""
    projects = [identify(learn.cwd)] + [identify(learn.project(n)) for n in ("ml-pipeline", "mobile-app")]
    store = Store(learn.home, warn_stderr=False)
    for p in projects:
        store.register_project(p)
    now = days_ago(0)
    made = {"frozen": [], "timeout": []}
    for p in projects:
        made["frozen"].append(make_record(type="workflow", category="ci-cd", key="txt:frozen",
                                          context="Use --frozen-lockfile with npm ci in CI",
                                          fix="npm ci --frozen-lockfile", frequency=3, impact=0.9, projects=[p.id],
                                          last_used=now))
    for p in projects[:2]:
        made["timeout"].append(make_record(category="network", key="txt:timeout",
                                           context="Set timeout on all HTTP client calls",
                                           fix="requests.get(url, timeout=10)", frequency=5, impact=0.75,
                                           projects=[p.id], last_used=now))
    made["candidate"] = make_record(type="pattern", category="coding", key="txt:pathlib",
                                    context="Prefer pathlib over os.path in Python", fix="use pathlib.Path",
                                    frequency=5, impact=0.9, projects=[projects[0].id, projects[1].id], last_used=now)
    made["stale"] = make_record(category="dependency", key="txt:node16", context="Pin Node.js to v16", fix="nvm use 16",
                                impact=0.12, projects=[projects[2].id], last_used=days_ago(80),
                                low_since=days_ago(45))
    made["jest"] = make_record(type="preference", category="testing", key="txt:jest", context="Use Jest for unit tests",
                               fix="use jest", projects=[projects[1].id], last_used=now)
    made["vitest"] = make_record(type="preference", category="testing", key="txt:vitest",
                                 context="Use Vitest for unit tests", fix="use vitest", projects=[projects[1].id],
                                 last_used=now)
    store.put_many(store.layout.learnings(projects[0].id), [made["frozen"][0], made["timeout"][0], made["candidate"]])
    store.put_many(
        store.layout.learnings(projects[1].id), [made["frozen"][1], made["timeout"][1], made["jest"], made["vitest"]]
    )
    store.put_many(store.layout.learnings(projects[2].id), [made["frozen"][2], made["stale"]])
    store.close()
    made["projects"] = projects
    return made


def snapshot(home) -> dict:
    return {p: p.read_bytes() for p in home.rglob("*") if p.suffix in (".json", ".jsonl")}


def test_promotion_report_in_the_seed_layout(learn, seeded):
    proc = learn("promote", check=0)
    out = proc.stdout
    assert out.startswith("Running promotion check across all projects...\n")
    assert "  Scanning: web-api (3 learnings)\n" in out
    assert "  Scanning: ml-pipeline (4 learnings)\n" in out and "  Scanning: mobile-app (2 learnings)\n" in out
    promoted = out.split("Promoted to global (score > 0.7, or seen in 3+ projects):\n")[1].split("  Candidates")[0]
    assert (
        '    - "Use --frozen-lockfile with npm ci in CI: npm ci --frozen-lockfile" (score: 0.81, seen in 3 projects)'
        in promoted
    )  # 3 copies × frequency 3 = 9 → 0.9 × 0.9
    assert '"Set timeout on all HTTP client calls: requests.get(url, timeout=10)" (score: 0.75, seen in 2 projects)' \
        in promoted
    candidates = out.split("Candidates (score 0.3-0.7, or too few projects):\n")[1].split("  Archived")[0]
    assert (
        candidates
        == '    - "Prefer pathlib over os.path in Python: use pathlib.Path" (score: 0.45, seen in 2 projects)\n\n'
    )
    archived = out.split("Archived (score < 0.3 for 30+ days):\n")[1].split("\n\n")[0]
    assert '"Pin Node.js to v16: nvm use 16" (score: 0.00, stale 45 days)' in archived
    conflicts = out.split("Conflicts (neither is promoted until resolved):\n")[1]
    assert seeded["jest"]["id"] in conflicts and seeded["vitest"]["id"] in conflicts
    assert "JS test framework: jest vs vitest" in conflicts
    assert "  Summary: 2 promoted, 1 candidate, 1 archived, 1 conflict\n" in out
    assert "Resolve with `learn resolve ID --keep` (or `--drop`)" in out
    for ch in "✅💡🗄📊🔄":
        assert ch not in out  # piped: no emoji
    store = Store(learn.home, warn_stderr=False)
    globals_ = list(store.records(store.layout.global_patterns).values())
    assert sorted(g["key"] for g in globals_) == ["txt:frozen"]
    assert [g["key"] for g in store.records(store.layout.global_errors).values()] == ["txt:timeout"]
    stale_pid = seeded["projects"][2].id
    assert seeded["stale"]["id"] in store.records(store.layout.archive(stale_pid))


def test_candidate_score_is_listed(learn, seeded):
    doc = learn.json("promote")
    assert [c["key"] for c in doc["candidates"]] == ["txt:pathlib"]
    assert doc["candidates"][0]["score"] == pytest.approx(0.45) and doc["candidates"][0]["projects"] == 2
    assert doc["counts"]["promoted"] == 2 and doc["counts"]["archived"] == 1 and doc["counts"]["conflicts"] == 1
    assert doc["counts"]["new_conflicts"] == 1 and doc["dry_run"] is False
    assert set(doc) == {"now", "dry_run", "counts", "scanned", "promoted", "candidates", "archived", "conflicts"}
    again = learn.json("promote")
    assert again["counts"]["promoted"] == 0 and again["counts"]["new_conflicts"] == 0


def test_dry_run_writes_nothing_and_reports_the_same(learn, seeded):
    before = snapshot(learn.home)
    dry = learn.json("promote", "--dry-run")
    assert snapshot(learn.home) == before
    real = learn.json("promote")
    for name in ("promoted", "candidates", "archived", "conflicts"):
        assert dry["counts"][name] == real["counts"][name]
    assert "dry run: nothing written" in learn("promote", "--dry-run", check=0).stdout


def test_many_projects_give_one_scanning_line(learn):
    store = Store(learn.home, warn_stderr=False)
    for n in range(15):
        p = identify(learn.project(f"p{n:02d}"))
        store.register_project(p)
        store.put(store.layout.learnings(p.id), make_record(context=f"c{n}", fix="f", projects=[p.id]))
    store.close()
    out = learn("promote", check=0).stdout
    assert "  Scanned: 15 projects (15 learnings)\n" in out and "Scanning:" not in out


def test_resolve_keep_and_drop(learn, seeded):
    learn("promote", check=0)
    jest, vitest = seeded["jest"]["id"], seeded["vitest"]["id"]
    proc = learn("resolve", jest, "--keep", check=0)
    assert f"Kept {jest}" in proc.stdout and f"Archived {vitest}" in proc.stdout
    assert f"`learn restore {vitest}` brings it back" in proc.stdout
    store = Store(learn.home, warn_stderr=False)
    pid = seeded["projects"][1].id
    assert store.records(store.layout.learnings(pid))[jest]["status"] == "active"
    assert store.records(store.layout.archive(pid))[vitest]["status"] == "archived"
    store.close()
    proc = learn("resolve", jest, "--keep", check=1)
    assert proc.stderr == f"learn: error: {jest} is not in conflict (status active)\n"


def test_resolve_drop_json(learn, seeded):
    learn("promote", check=0)
    jest, vitest = seeded["jest"]["id"], seeded["vitest"]["id"]
    assert learn.json("resolve", jest, "--drop") == {"kept": [vitest], "archived": [jest]}


@pytest.mark.parametrize("args, code, message", [
    (["learn-nope", "--keep"], 1, "learn: error: no learning with id learn-nope\n"),
    (["learn-x"], 2, "learn: error: say which: `learn resolve ID --keep` or `learn resolve ID --drop`\n"),
    (["learn-x", "--keep", "--drop"], 2,
     "learn: error: say which: `learn resolve ID --keep` or `learn resolve ID --drop`\n"),
])
def test_resolve_errors_are_one_line(learn, args, code, message):
    learn("add", "a note so that the store exists", check=0)
    proc = learn("resolve", *args, check=code)
    assert proc.stderr.endswith(message) and "Traceback" not in proc.stderr


def test_resolve_without_id_is_a_usage_error(learn):
    proc = learn("resolve", check=2)
    assert "Traceback" not in proc.stderr and "ID" in proc.stderr


def run_on_terminal(learn, args: list[str], answers: list[str], timeout: float = 30) -> str:
    """Run `learn` with stdin/stdout on a pseudo-terminal; answer each prompt in turn."""
    master, slave = pty.openpty()
    env = dict(learn.env)
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([learn.exe, *args], stdin=slave, stdout=slave, stderr=slave, cwd=str(learn.cwd),
                            env=env, close_fds=True)
    os.close(slave)
    out = b""
    pending = list(answers)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if pending and out.count(b"Keep which?") > len(answers) - len(pending):
                os.write(master, pending.pop(0).encode() + b"\r")
        elif proc.poll() is not None:
            break
    proc.wait(timeout=10)
    os.close(master)
    assert proc.returncode == 0, out.decode(errors="replace")
    return out.decode(errors="replace")


def test_interactive_resolution_on_a_terminal(learn, seeded):
    out = run_on_terminal(learn, ["promote"], ["2"])
    assert "📊 Promotion Results:" in out and "✅ Promoted to global" in out
    assert "Conflict 1 of 1: JS test framework: jest vs vitest" in out
    assert f"Kept {seeded['vitest']['id']}" in out
    store = Store(learn.home, warn_stderr=False)
    pid = seeded["projects"][1].id
    assert store.records(store.layout.learnings(pid))[seeded["vitest"]["id"]]["status"] == "active"
    assert seeded["jest"]["id"] in store.records(store.layout.archive(pid))


def test_interactive_skip_leaves_the_conflict(learn, seeded):
    out = run_on_terminal(learn, ["promote"], ["s"])
    assert "Skipped." in out
    store = Store(learn.home, warn_stderr=False)
    pid = seeded["projects"][1].id
    assert store.records(store.layout.learnings(pid))[seeded["jest"]["id"]]["status"] == "conflicted"


def test_promote_json_is_valid_with_an_empty_store(learn):
    doc = json.loads(learn("promote", "--json", check=0).stdout)
    assert doc["counts"]["scanned"] == 0 and doc["promoted"] == []
