"""`learn stats` end to end: an empty store, counts by type and status, top learnings (one per
learning), promotions, archive, capture health from analytics, helped counts, the budget line,
JSON, and errors."""

from __future__ import annotations

import json
import time

from learn_cli.store.api import Store
from learn_cli.store.project import identify
from learn_cli.store.record import make_record


def days_ago(n: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - n * 86400))


def seed(learn) -> dict:
    here = identify(learn.cwd)
    other = identify(learn.project("ml-pipeline"))
    store = Store(learn.home, warn_stderr=False)
    for p in (here, other):
        store.register_project(p)
    jwt = dict(key="txt:jwt", context="JWT: use python-jose[cryptography]",
               fix="pip install 'python-jose[cryptography]'", frequency=10, impact=0.9, last_used=days_ago(0))
    local = make_record(projects=[here.id], helped=5, not_helped=1, **jwt)
    lateral = make_record(projects=[other.id], **jwt)
    promoted = make_record(status="global", projects=[here.id, other.id], promoted_from=[local["id"]], **jwt)
    docker = make_record(type="pattern", category="deployment", context="Docker: always set --platform",
                         fix="docker build --platform linux/amd64", frequency=8, impact=0.9, projects=[here.id],
                         key="txt:docker", last_used=days_ago(0))
    pending = make_record(type="preference", context="Use pnpm, not npm", fix="pnpm install", status="pending",
                          projects=[here.id], key="txt:pnpm")
    archived = make_record(context="Pin Node.js to v16", fix="nvm use 16", status="archived", key="txt:node")
    store.put_many(store.layout.learnings(here.id), [local, docker, pending])
    store.put(store.layout.learnings(other.id), lateral)
    store.put(store.layout.global_patterns, promoted)
    store.put(store.layout.archive(here.id), archived)
    stats = {"schema": 1, "days": {time.strftime("%Y-%m-%d"): {"events": 1204, "failures": 87, "pairs": 23,
                                                                 "suggestions": 31, "helped": 19, "not_helped": 4},
                                    "2001-01-01": {"events": 999}}}
    store.layout.stats.write_text(json.dumps(stats))
    store.close()
    return {"local": local, "docker": docker}


def test_empty_store_is_a_box_of_zeros(learn):
    Store(learn.home, warn_stderr=False).close()  # an empty store: `stats` itself creates none
    (learn.cwd / ".git").mkdir()
    proc = learn("stats", check=0)
    out = proc.stdout
    assert out.startswith("Self-Learning Agent Stats\nTotal learnings: 0 (0 global)\nCategories:\n")
    assert "  errors: 0 (0%)\n" in out and "  workflows: 0 (0%)\n" in out
    assert "Archived (stale): 0\n" in out and "Cross-project promotions: 0\n" in out
    assert "  Repeated-failure rate: n/a (no suggestions yet)\n" in out
    assert "Traceback" not in proc.stderr


def test_counts_top_learnings_and_capture_health(learn):
    seed(learn)
    out = learn("stats", check=0).stdout
    assert "Total learnings: 5 (1 global)\n" in out
    assert "  errors: 3 (60%)\n  patterns: 1 (20%)\n  prefs: 1 (20%)\n  workflows: 0 (0%)\n" in out
    assert "Waiting: 1 pending\n" in out
    top = out.split("Top impact learnings:\n")[1].split("Cross-project")[0].splitlines()
    assert len(top) == 2  # the JWT learning once (three copies), then Docker; pending is not shown
    assert top[0].startswith("  1. JWT: use python-jose[cryptography]") and top[0].endswith("(score 0.90)")
    assert top[1].startswith("  2. Docker: always set --platform") and top[1].endswith("(score 0.72)")
    assert "Cross-project promotions: 1\nArchived (stale): 1\n" in out
    assert "Context budget: " in out and " / 2000 tokens\n" in out
    assert "  Events captured: 1204\n  Failures captured: 87\n  Pairs learned: 23\n  Suggestions shown: 31\n" in out
    assert "  Outcome: 19 helped, 4 did not\n  Repeated-failure rate: 13% (4 of 31)\n" in out
    assert "Most helpful learnings:\n  1. JWT: use python-jose[cryptography]" in out
    assert "(helped 5, did not help 1)" in out


def test_ignored_suggestions_are_repeated_failures_of_their_own(learn):
    """A suggestion ignored (the failed command run again as it was) did not fail, but the same
    failure came right back all the same: the rate counts it, the outcome names it."""
    seed(learn)
    day = {"events": 1204, "failures": 87, "pairs": 23, "suggestions": 31, "helped": 19, "not_helped": 4, "ignored": 2}
    learn.home.joinpath("analytics", "stats.json").write_text(
        json.dumps({"schema": 1, "days": {time.strftime("%Y-%m-%d"): day}}))
    out = learn("stats", check=0).stdout
    assert "  Outcome: 19 helped, 4 did not, 2 ignored\n  Repeated-failure rate: 19% (6 of 31)\n" in out
    capture = learn.json("stats")["capture"]
    assert (capture["ignored"], capture["repeated_failure_rate"]) == (2, 0.194)


def test_json_document(learn):
    ids = seed(learn)
    doc = learn.json("stats")
    assert doc["total"] == 5 and doc["global"] == 1 and doc["archived"] == 1 and doc["promoted"] == 1
    assert doc["types"] == {"error": 3, "pattern": 1, "preference": 1, "workflow": 0}
    assert doc["statuses"] == {"active": 3, "global": 1, "pending": 1}
    assert [t["score"] for t in doc["top"]] == [0.9, 0.72] and doc["top"][1]["id"] == ids["docker"]["id"]
    assert doc["capture"] == {"days": 7, "events": 1204, "failures": 87, "pairs": 23, "suggestions": 31,
                              "helped": 19, "not_helped": 4, "ignored": 0, "repeated_failure_rate": 0.129,
                              "deferred": 0, "replayed": 0, "dropped": 0, "spooled": 0}
    assert doc["helpful"]["helped"] == 5 and doc["helpful"]["top"][0]["id"] == ids["local"]["id"]
    assert doc["context"]["budget"] == 2000 and 0 < doc["context"]["tokens"] <= 2000
    assert {"category": "deployment", "count": 1, "type": "pattern"} in doc["categories"]


def test_budget_follows_the_config(learn):
    seed(learn)
    config = learn.home / "config.json"
    config.write_text(json.dumps(dict(json.loads(config.read_text()), budget=500)))
    assert learn.json("stats")["context"]["budget"] == 500


def test_stats_of_a_home_that_is_a_file_is_one_line(learn, tmp_path):
    bogus = tmp_path / "not-a-folder"
    bogus.write_text("x")
    proc = learn("--home", bogus, "stats", check=1)
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("learn: error: ")
    assert "Traceback" not in proc.stderr


def test_unknown_option_is_a_usage_error(learn):
    proc = learn("stats", "--bogus", check=2)
    assert "Traceback" not in proc.stderr and "--bogus" in proc.stderr


def test_on_a_terminal_stats_and_graph_draw_the_seed_box_and_tree(learn):
    from conftest import run_with_terminal

    seed(learn)
    env = {k: v for k, v in learn.env.items() if k != "NO_COLOR"}
    shown, _err, code = run_with_terminal([learn.exe, "stats"], dict(env, TERM="xterm-256color"), cwd=learn.cwd)
    assert code == 0
    assert "╔" in shown and "Total Learnings:" in shown and "JWT: use python-jose" in shown
    shown, _err, code = run_with_terminal([learn.exe, "graph"], dict(env, TERM="xterm-256color"), cwd=learn.cwd)
    assert code == 0 and "Knowledge Graph" in shown and ("├── " in shown or "└── " in shown)


def test_piped_read_commands_import_no_heavy_module(learn):
    """Piped or with --json, stats, graph and show write their lines without rich (~25 ms of
    import), orjson (~90 M instructions: it imports uuid, dataclasses, datetime and enum; on a
    small home the standard library parses for less), dataclasses (`inspect`) and pathlib:
    issue 14's 150 ms for these commands at 1,000 learnings."""
    import subprocess
    import sys

    records = seed(learn)
    heavy = ("rich", "typer", "orjson", "dataclasses", "pathlib")
    probe = ("import sys\nfrom learn_cli.__main__ import main\ncode = main(sys.argv[1:])\n"
             f"print('loaded:', *sorted({{m.split('.')[0] for m in sys.modules}} & {set(heavy)!r}), file=sys.stderr)\n"
             "sys.exit(code)\n")
    for argv, shown in ((["stats"], "Total"), (["graph"], "Total"), (["stats", "--json"], '"total"'),
                        (["graph", "--json"], '"tree"'), (["show", records["docker"]["id"]], "Docker"),
                        (["show", records["docker"]["id"], "--json"], '"record"')):
        proc = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                              cwd=learn.cwd, env=learn.env, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.splitlines()[-1] == "loaded:", (argv, proc.stderr)
        assert shown in proc.stdout, (argv, proc.stdout)


def test_the_box_wraps_a_learnings_line_rather_than_cut_its_fix():
    """A rule ends with its fix: the box's rows (47 wide) used to cut it at the edge, leaving
    "`npm instal…` fails: use `npm install…` instead." (issue 10, cause 6). Now its line wraps
    over up to four rows, each within the box; piped, it is one line."""
    from learn_cli.render.stats import WIDTH, _rows

    text = "`npm install firecrawl-api` fails (dependency): use `npm install @mendable/firecrawl-js` instead."
    rows = _rows(text, " 1. ", " (score 0.67)", box=True)
    assert 2 <= len(rows) <= 4 and all(len(row) <= WIDTH for row in rows)
    assert "@mendable/firecrawl-js" in " ".join(rows) and rows[-1].endswith("(score 0.67)")
    assert rows[1].startswith("    ")  # under the first row's text
    assert _rows(text, "  1. ", " (score 0.67)", box=False) == [f"  1. {text} (score 0.67)"]
    long = _rows("x " * 200, " 1. ", " (score 0.67)", box=True)
    assert len(long) == 4 and long[-1].endswith("…")
