"""`learn recall` end to end: the seed's result layout (plain when piped), lateral results,
archived ones with --all, no match, the cross-project time bound, JSON, usage errors, and the
fast path (no typer, no rich) that pipes and --json take."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
import time

import pytest

from learn_cli.commands.recall_fast import global_values, parse
from learn_cli.store.api import Store
from learn_cli.store.project import identify
from learn_cli.store.record import make_record


def days_ago(n: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - n * 86400))


@pytest.fixture
def seeded(learn):
    """The seed's recall example: two global learnings, one here, one in ml-pipeline, one archived."""
    here = identify(learn.cwd)
    other_root = learn.project("ml-pipeline")
    other = identify(other_root)
    store = Store(learn.home, warn_stderr=False)
    for project in (here, other):
        store.register_project(project)
    g1 = make_record(category="config", context="Always set --platform linux/amd64 on Apple Silicon",
                     fix="docker build --platform linux/amd64 -t myapp .", frequency=7, impact=0.95,
                     projects=["p1", "p2", "p3", "p4"], status="global", key="txt:g1")
    g2 = make_record(category="runtime", context="Docker Compose v2 uses 'docker compose' (no hyphen)",
                     fix="Replace 'docker-compose' with 'docker compose'", frequency=4, impact=0.8,
                     projects=["p1", "p2", "p3"], status="global", key="txt:g2")
    local = make_record(category="config", context="Set DOCKER_BUILDKIT=1 for faster multi-stage builds",
                        fix="export DOCKER_BUILDKIT=1 before build commands", frequency=2, impact=0.6,
                        projects=[here.id], project="web-api", key="txt:l1")
    lateral = make_record(category="runtime", context="Docker volume mounts fail silently with wrong paths",
                          fix="Use absolute paths and verify with docker inspect", impact=0.5,
                          projects=[other.id], project="ml-pipeline", key="txt:l2")
    archived = make_record(type="error", category="dependency", context="Pin base image versions in Dockerfile",
                           fix="Use python:3.11-slim instead of python:latest", impact=0.4, status="archived",
                           last_used=days_ago(45), created=days_ago(60), projects=[here.id], key="txt:a1")
    store.put_many(store.layout.global_errors, [g1, g2])
    store.put(store.layout.learnings(here.id), local)
    store.put(store.layout.learnings(other.id), lateral)
    store.put(store.layout.archive(here.id), archived)
    store.close()
    return {"g1": g1, "g2": g2, "local": local, "lateral": lateral, "archived": archived}


def test_results_in_the_seed_layout(learn, seeded):
    proc = learn("recall", "docker", check=0)
    out = proc.stdout
    assert out.startswith('Results for "docker" (4 matches):')
    assert "[1] Score: 0.67 | Global | config\n" in out
    assert '    "Always set --platform linux/amd64 on Apple Silicon"\n' in out
    assert "    Fix: docker build --platform linux/amd64 -t myapp .\n" in out
    assert "    Used: 7 times across 4 projects\n" in out
    assert "| Project: web-api | config" in out and "    Used: 2 times\n" in out
    assert "| Project: ml-pipeline | runtime" in out and "    Used: 1 time\n" in out
    assert f"    ID: {seeded['g1']['id']}" in out
    assert "Pin base image" not in out  # archived: only with --all
    assert "⭐" not in out and "🔍" not in out and "\x1b[" not in out  # piped: plain text
    assert proc.stderr == ""


def test_a_rule_stored_as_its_own_fix_is_said_once(learn):
    """An import (or an older writer) may store a prose rule in both context and fix: the
    result quotes it and shows no "Fix:" line that says it again."""
    store = Store(learn.home, warn_stderr=False)
    here = identify(learn.cwd)
    store.register_project(here)
    rule = "Run the integration tests inside docker compose run --rm tests to match CI"
    store.put(store.layout.learnings(here.id), make_record(category="ci-cd", context=rule, fix=f" {rule}\n",
                                                           projects=[here.id], key="txt:r1"))
    store.close()
    out = learn("recall", "docker", check=0).stdout
    assert f'    "{rule}"\n' in out and "Fix:" not in out


def test_all_includes_archived_with_last_used(learn, seeded):
    out = learn("recall", "docker", "--all", check=0).stdout
    assert "(5 matches)" in out
    assert "| Project: web-api | dependency (archived)" in out
    assert "    Used: 1 time (last used: 45 days ago)" in out


def test_recall_checks_the_archives_only_with_all(learn, seeded):
    """Without --all no archived record is shown, so no archive is checked for changes (half
    the files of a home); a live file edited by hand, or a project folder removed, still
    counts at once, and --all reads the archive edited by hand."""
    here = identify(learn.cwd)
    edited = dict(seeded["archived"], id="learn-20260101T000000Z-abcdef", context="Pin the docker digest",
                  fix="Pin the base image by its sha256 digest")
    with open(learn.home / "projects" / here.id / "archive.jsonl", "a") as fh:
        fh.write(json.dumps(edited) + "\n")
    db = learn.home / "global" / "index.db"

    def indexed_archive_size():
        import sqlite3

        with sqlite3.connect(db) as con:
            return con.execute("SELECT size FROM files WHERE path = ?", (f"projects/{here.id}/archive.jsonl",)
                               ).fetchone()[0]

    before = indexed_archive_size()
    assert "(4 matches)" in learn("recall", "docker", check=0).stdout
    assert indexed_archive_size() == before  # not re-read
    assert "(6 matches)" in learn("recall", "docker", "--all", check=0).stdout
    assert indexed_archive_size() > before
    shutil.rmtree(learn.home / "projects" / identify(learn.project("ml-pipeline")).id)
    assert "ml-pipeline" not in learn("recall", "docker", check=0).stdout


def test_lateral_results_and_this_projects_boost(learn, seeded):
    doc = learn.json("recall", "volume")
    assert [(r["where"], r["project"]) for r in doc["results"]] == [("other", "ml-pipeline")]
    same = {k: v for k, v in seeded["lateral"].items() if k not in ("id", "projects", "project")}
    learn("add", same["context"], "--fix", same["fix"], "--impact", "0.5", check=0)
    doc = learn.json("recall", "volume", "mounts")  # this project's copy first, the other's folded into it
    assert [r["where"] for r in doc["results"]] == ["project"]
    assert [(a["id"], a["project"]) for a in doc["results"][0]["also"]] == [(seeded["lateral"]["id"], "ml-pipeline")]
    learn("add", "Mounts of a named volume survive `docker compose down`", "--fix", "Use a named volume", check=0)
    doc = learn.json("recall", "volume", "mounts")  # another fix: another result
    assert [r["where"] for r in doc["results"]] == ["project", "project"]


def test_copies_of_one_lesson_fill_one_place(learn):
    """One fix learned in many projects (or for many commands) is one result, with the others
    named on its "Same fix" line; --limit counts lessons, and the next lesson still shows."""
    store = Store(learn.home, warn_stderr=False)
    fix = "npm config set prefix ~/.npm-global"
    store.register_project(identify(learn.cwd))
    for n in range(12):
        project = identify(learn.project(f"app-{n:02d}"))
        store.register_project(project)
        store.put(store.layout.learnings(project.id), make_record(
            type="error", category="permission", command=f"npm install -g tool{n}", fix=fix, fix_kind="between",
            context=f"`npm install -g tool{n}` fails (permission): run `{fix}` first.", frequency=12 - n,
            error="npm ERR! Error: EACCES: permission denied", projects=[project.id], key=f"err:{n}"))
    nvm = make_record(category="permission", context="npm global installs need a prefix",
                      fix="Use nvm so global installs go to your home", key="txt:nvm")
    store.put(store.layout.global_errors, nvm)
    store.close()
    out = learn("recall", "npm", "--limit", "2", check=0).stdout
    assert out.count("\n[") == 2 and "More matches" not in out
    assert "    Same fix: 11 more learnings (app-01, app-02, app-03, app-04 and 7 more)\n" in out
    assert "Use nvm" in out
    assert "    Error: npm ERR! Error: EACCES: permission denied\n" in out and "Fix: run" not in out
    doc = learn.json("recall", "npm", "--limit", "1")
    assert doc["count"] == 1 and doc["more"] is True and len(doc["results"][0]["also"]) == 11


def test_json_document(learn, seeded):
    doc = learn.json("recall", "compose")
    assert doc["query"] == "compose" and doc["terms"] == ["compose"] and doc["count"] == 1
    assert doc["partial"] is False and doc["not_searched"] == [] and doc["not_ranked"] == 0
    [hit] = doc["results"]
    assert hit["id"] == seeded["g2"]["id"] and hit["scope"] == "global" and hit["where"] == "global"
    assert hit["score"] == 0.32 and hit["project"] is None and hit["archived"] is False
    assert hit["record"]["fix"] == "Replace 'docker-compose' with 'docker compose'"


def test_no_match_is_a_clear_line_and_exit_0(learn, seeded):
    proc = learn("recall", "kubernetes", check=0)
    assert proc.stdout.strip() == ('No learnings match "kubernetes" (try other words, or --all to include '
                                   'archived learnings).')
    doc = learn.json("recall", "kubernetes")
    assert doc["results"] == [] and doc["count"] == 0


def test_limit(learn, seeded):
    out = learn("recall", "docker", "--limit", "1", check=0).stdout
    assert "(1 match)" in out and "[2]" not in out and "More matches: raise --limit" in out


def test_time_bound_gives_partial_results_and_names_projects(learn, seeded):
    config = json.loads((learn.home / "config.json").read_text())
    (learn.home / "config.json").write_text(json.dumps(dict(config, search_timeout_s=0)))
    proc = learn("recall", "docker", check=0)
    assert "Project: ml-pipeline" not in proc.stdout  # not reached
    assert "Project: web-api" in proc.stdout and "Global" in proc.stdout  # always searched
    assert ("note: Cross-project search stopped at its time bound: 1 project not searched: ml-pipeline. "
            "Narrow the topic to search them all.") in proc.stdout
    doc = learn.json("recall", "docker")
    assert doc["partial"] and doc["timed_out"]
    assert [p["name"] for p in doc["not_searched"]] == ["ml-pipeline"]


def test_fts_syntax_in_the_topic_is_harmless(learn, seeded):
    for topic in ('"docker" OR', "NEAR(docker", "docker*", "col:docker", "docker AND NOT x"):
        proc = learn("recall", topic, check=0)
        assert "Traceback" not in proc.stderr and proc.stderr == ""


@pytest.mark.parametrize("args", [["recall"], ["recall", "!!!", "::"], ["recall", "x", "--limit", "0"]])
def test_usage_errors(learn, args):
    proc = learn(*args, check=2)
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip()


def test_topic_without_words_is_one_line(learn):
    proc = learn("recall", "!!!", check=2)
    assert proc.stderr.strip().splitlines()[-1] == "learn: error: the topic has no words to search for"


def test_captured_text_cannot_drive_the_terminal(learn):
    store = Store(learn.home, warn_stderr=False)
    here = identify(learn.cwd)
    store.register_project(here)
    store.put(store.layout.learnings(here.id), make_record(
        context="evil \x1b[31mred\x1b]0;title\x07 [bold]markup[/bold] token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        key="txt:evil", projects=[here.id]))
    store.close()
    out = learn("recall", "evil", check=0).stdout
    assert "\x1b" not in out and "\x07" not in out
    assert "[bold]markup[/bold]" in out and "ghp_" not in out and "[REDACTED:" in out


# -- the fast path: piped output and --json without typer or rich ------------------------------

TYPER_ONLY = "import sys\nfrom learn_cli.cli import run\nsys.exit(run(sys.argv[1:]))"
HEAVY_PROBE = """import sys
from learn_cli.__main__ import main
code = main(sys.argv[1:])
heavy = sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'click', 'rich', 'pydantic', 'orjson'})
sys.stderr.write(f"heavy: {' '.join(heavy)}\\n")
sys.exit(code)
"""


def python(learn, code: str, *args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], check=False, capture_output=True, text=True,
                          cwd=str(learn.cwd), env=dict(learn.env, **(env or {})), timeout=60)


def outcome(proc) -> tuple:
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("args", [
    ["recall", "docker"], ["recall", "docker", "--all"], ["recall", "docker", "-n", "1"],
    ["recall", "--limit=2", "docker", "compose"], ["recall", "kubernetes"], ["recall", "docker", "--json"],
    ["recall", "compose", "--json", "--all", "--limit", "1"], ["--project", "{other}", "recall", "volume"],
    ["--home={home}", "recall", "docker", "--json"],
    # errors: the fast path's own (same guard) and typer's (it declines these)
    ["recall", "!!!"], ["--project", "{missing}", "recall", "docker"], ["recall", "docker", "--limit", "0"],
    ["recall", "docker", "--bogus"], ["recall"], ["recall", "--help"], ["recall", "docker", "-h"],
    ["recall", "docker", "-n5"]])
def test_fast_path_prints_what_typer_prints(learn, seeded, args):
    args = [a.format(home=learn.home, other=learn.tmp / "work" / "ml-pipeline", missing=learn.tmp / "nope")
            for a in args]
    assert outcome(learn(*args)) == outcome(learn.typer(*args))


@pytest.mark.parametrize("args", [
    ["stats"], ["stats", "--json"], ["graph"], ["graph", "--json"], ["graph", "-f", "dot"],
    ["graph", "--format=mermaid"], ["graph", "--format", "json"], ["show", "{local}"],
    ["show", "{g1_prefix}", "--json"], ["--project", "{other}", "stats"],
    # errors: the fast path's own (same guard) and typer's (it declines these)
    ["show", "learn-nope"], ["show"], ["show", "a", "b"], ["graph", "-f", "png"], ["stats", "--bogus"],
    ["graph", "--help"], ["--home", "{missing}", "stats"]])
def test_read_commands_fast_path_prints_what_typer_prints(learn, seeded, args):
    """`stats`, `show` and `graph` piped or with --json skip typer (commands/read_fast.py)."""
    values = {"local": seeded["local"]["id"], "g1_prefix": seeded["g1"]["id"][:-2],
              "other": learn.tmp / "work" / "ml-pipeline", "missing": learn.tmp / "nope"}
    args = [a.format(**values) for a in args]
    assert outcome(learn(*args)) == outcome(learn.typer(*args))


def test_read_commands_skip_typer_and_rich_when_piped(learn, seeded):
    for args in (["stats"], ["graph", "--json"], ["show", seeded["local"]["id"]]):
        proc = python(learn, HEAVY_PROBE, *args)
        assert proc.returncode == 0 and proc.stdout, proc.stderr
        assert "typer" not in proc.stderr.splitlines()[-1] and "click" not in proc.stderr.splitlines()[-1]


def test_fast_path_reports_a_corrupt_line_as_typer_does(learn, seeded):
    with open(learn.home / "global" / "errors.jsonl", "a") as fh:
        fh.write('{"id": "learn-x", "context": docker}\n')
    twin = learn.tmp / "twin"
    shutil.copytree(learn.home, twin)
    fast = learn("recall", "docker")
    slow = learn.typer("recall", "docker", env={"SELF_LEARNING_HOME": str(twin)})
    assert "errors.jsonl:" in fast.stderr and "not JSON" in fast.stderr
    assert outcome(fast) == outcome(slow)[:2] + (slow.stderr.replace(str(twin), str(learn.home)),)


def test_closed_stdout_is_typers_one_line_error(learn, seeded):
    def closed_stdout(*argv):
        return subprocess.run(argv, check=False, stderr=subprocess.PIPE, text=True, cwd=str(learn.cwd),
                              env=dict(learn.env, TMPDIR=str(learn.tmp)), preexec_fn=lambda: os.close(1),
                              timeout=60)
    fast = closed_stdout(learn.exe, "recall", "docker")
    slow = closed_stdout(sys.executable, "-c", TYPER_ONLY, "recall", "docker")
    assert fast.returncode == slow.returncode == 1
    assert fast.stderr.split(" (details")[0] == slow.stderr.split(" (details")[0]
    assert fast.stderr.startswith("learn: error: internal error") and "Traceback" not in fast.stderr


def test_fast_path_imports_neither_typer_nor_rich(learn, seeded):
    learn("recall", "docker", check=0)  # the first run indexes files never seen
    plain = python(learn, HEAVY_PROBE, "recall", "docker")
    assert plain.returncode == 0 and "Results for" in plain.stdout
    assert plain.stderr.splitlines()[-1] == "heavy: "
    as_json = python(learn, HEAVY_PROBE, "recall", "docker", "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["count"] == 4
    assert as_json.stderr.splitlines()[-1] == "heavy: "  # a report: the standard library writes it
    declined = python(learn, HEAVY_PROBE, "recall", "docker", "--help")
    assert "typer" in declined.stderr.splitlines()[-1]  # the probe sees typer when it is used


CACHE_PROBE = """import sys
from learn_cli.__main__ import main
from learn_cli.capture import regex_cache
code = main(sys.argv[1:])
sys.stderr.write(f"cache: {regex_cache._state['path']} {len(regex_cache._state['compiled'])}\\n")
sys.exit(code)
"""


def test_fast_path_serves_its_regexes_from_the_hooks_cache_and_adds_its_own(learn, seeded):
    """Agents run `learn recall` through their shell: its patterns come compiled from the file
    the hooks keep (capture.regex_cache); it adds the few the hooks never compile (never
    creating the file), so the next recall imports no `re`."""
    learn("recall", "docker", check=0)
    cache = learn.home / "global" / "regex-cache"
    assert not cache.exists()
    learn.proc("capture", input=json.dumps({"session_id": "s1", "hook_event_name": "PostToolUse", "cwd": str(learn.cwd),
                                            "tool_name": "Bash", "tool_input": {"command": "ls"},
                                            "tool_response": {"stdout": "", "stderr": ""}}), check=0)
    assert cache.is_file()
    before = (cache.stat().st_mtime_ns, cache.read_bytes())
    proc = python(learn, CACHE_PROBE, "recall", "docker")
    assert proc.returncode == 0 and "Results for" in proc.stdout, proc.stderr
    path, compiled = proc.stderr.splitlines()[-1].split()[1:]
    assert path == str(cache) and int(compiled) > 0
    assert cache.read_bytes() != before[1]  # recall's own patterns added
    again = python(learn, STARTUP_PROBE.replace("{'pathlib', 'json'}", "{'re', 'enum', 'functools'}"),
                   "recall", "docker")
    assert again.returncode == 0 and again.stderr.splitlines()[-1] == "heavy: ", again.stderr


STARTUP_PROBE = HEAVY_PROBE.replace("{'typer', 'click', 'rich', 'pydantic', 'orjson'}", "{'pathlib', 'json'}")


def test_fast_path_imports_neither_pathlib_nor_the_json_package(learn, seeded):
    """What recall's fixed cost is made of: `pathlib` (with urllib.parse and ipaddress) and
    the `json` package cost ~0.6x a bare interpreter's start; the store's paths are strings
    there and records decode with text.jsonlite (json's own C scanner)."""
    learn("recall", "docker", check=0)  # the first run indexes files never seen
    for args in (["recall", "docker"], ["recall", "docker", "-n", "2"]):
        proc = python(learn, STARTUP_PROBE, *args)
        assert proc.returncode == 0 and "Results for" in proc.stdout, proc.stderr
        assert proc.stderr.splitlines()[-1] == "heavy: "


def test_a_terminal_gets_the_rich_layout(learn, seeded):
    primary, secondary = pty.openpty()
    try:
        proc = subprocess.run([learn.exe, "recall", "docker"], check=False, stdout=secondary,
                              stderr=subprocess.PIPE, cwd=str(learn.cwd), env=learn.env, timeout=60)
    finally:
        os.close(secondary)
    out = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal's other side is closed: all read
            break
        if not chunk:
            break
        out += chunk
    os.close(primary)
    assert proc.returncode == 0
    assert '🔍 Searching knowledge base for "docker"...' in out.decode()


def test_fast_path_parses_only_the_plain_forms():
    assert parse(["docker", "compose", "-n", "3", "--all"]) == {
        "topic": ["docker", "compose"], "limit": 3, "include_archived": True, "as_json": False}
    assert parse(["--json", "--limit=1000", "x", "--limit", "7"]) == {
        "topic": ["x"], "limit": 7, "include_archived": False, "as_json": True}
    for declined in ([], ["--json"], ["--help"], ["x", "-h"], ["x", "--bogus"], ["x", "--limit"], ["x", "-n", "0"],
                     ["x", "-n", "1001"], ["x", "-n", "+5"], ["x", "-n", "٣"], ["x", "-n5"], ["--", "x"],
                     ["x", "--all=1"], ["-", "x"]):
        assert parse(declined) is None, declined
    assert global_values(["--home", "/h", "--project=/p", "--home=/h2"]) == ("/h2", "/p")
    assert global_values([]) == (None, None)
