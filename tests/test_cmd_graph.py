"""`learn graph` end to end: the seed's category tree, cross-project connections, hub nodes and
totals; JSON; dot and mermaid output that stays valid whatever the labels hold."""

from __future__ import annotations

import json
import re

import pytest

from learn_cli.store.api import Store
from learn_cli.store.project import identify
from learn_cli.store.record import make_record

HOSTILE = 'Quote " back\\slash } { ] [ | ; # <b>x</b> `tick` \x1b[31m\nnewline -->'


@pytest.fixture
def seeded(learn):
    names = ["web-api", "ml-pipeline", "mobile-app"]
    projects = [identify(learn.cwd)] + [identify(learn.project(n)) for n in names[1:]]
    ids = [p.id for p in projects]
    store = Store(learn.home, warn_stderr=False)
    for p in projects:
        store.register_project(p)
    web, ml, mobile = (store.layout.learnings(i) for i in ids)
    docker = dict(key="txt:docker", context="Docker platform flag", fix="--platform linux/amd64")
    store.put_many(web, [make_record(category="config", projects=[ids[0]], frequency=3, **docker),
                         make_record(category="runtime", context="web only", fix="x", projects=[ids[0]], key="txt:w"),
                         make_record(type="pattern", category="workflow", context=HOSTILE, fix=HOSTILE,
                                     projects=[ids[0], ids[1]], key="txt:hostile")])
    store.put_many(ml, [make_record(category="config", projects=[ids[1]], frequency=2, **docker),
                        make_record(type="preference", category="tooling", context="uv", fix="uv run",
                                    projects=[ids[1]], key="txt:uv")])
    store.put_many(mobile, [make_record(category="config", projects=[ids[2]], frequency=2, **docker)])
    store.put(store.layout.global_errors, make_record(category="config", status="global", projects=ids, frequency=7,
                                                      **docker))
    store.put(store.layout.archive(ids[0]), make_record(context="old", fix="y", status="archived", key="txt:old"))
    store.close()
    return ids


def test_text_graph_in_the_seed_layout(learn, seeded):
    out = learn("graph", check=0).stdout
    assert out.startswith("Knowledge graph\n\nCategory tree:\n"
                          "|-- errors (5)\n|   |-- config (4)\n|   `-- runtime (1)\n"
                          "|-- patterns (1)\n|   `-- workflow (1)\n"
                          "`-- preferences (1)\n    `-- tooling (1)\n\n")
    connections = out.split("Cross-project connections:\n")[1].split("\n\n")[0].splitlines()
    assert connections == ["  ml-pipeline <-> web-api: 2 shared learnings",
                           "  ml-pipeline <-> mobile-app: 1 shared learning",
                           "  mobile-app <-> web-api: 1 shared learning"]
    hubs = out.split("Hub nodes (most connected):\n")[1].split("\n\n")[0].splitlines()
    assert hubs[0] == '  1. "Docker platform flag" -> 3 projects, 7 uses'
    assert hubs[1].startswith('  2. "Quote') and hubs[1].endswith("-> 2 projects, 1 use")
    assert "\x1b" not in out
    assert out.endswith("Total: 7 active | 1 archived | 1 global\n")


def test_json_graph(learn, seeded):
    doc = learn.json("graph")
    assert doc["totals"] == {"active": 7, "archived": 1, "global": 1}
    assert doc["tree"][0] == {"type": "errors", "count": 5, "categories": [{"category": "config", "count": 4},
                                                                           {"category": "runtime", "count": 1}]}
    shared = {frozenset((c["a"]["name"], c["b"]["name"])): c["shared"] for c in doc["connections"]}
    assert shared == {frozenset(("web-api", "ml-pipeline")): 2, frozenset(("ml-pipeline", "mobile-app")): 1,
                      frozenset(("web-api", "mobile-app")): 1}
    assert doc["hubs"][0]["projects"] == 3 and doc["hubs"][0]["uses"] == 7 and doc["connected_pairs"] == 3
    assert json.loads(learn("graph", "--format", "json", check=0).stdout) == doc


_DOT_ID = r"n\d+"
_DOT_STRING = r'"(?:[^"\\\n]|\\.)*"'
_DOT_ATTRS = rf"\[(?:\w+=(?:{_DOT_STRING}|[\w.]+)(?:, )?)+\]"
_DOT_LINE = re.compile(rf"^  (?:{_DOT_ID}(?: -- {_DOT_ID})?(?: {_DOT_ATTRS})?|graph {_DOT_ATTRS}|node {_DOT_ATTRS});$")


def test_dot_is_valid_and_escapes_labels(learn, seeded):
    out = learn("graph", "--format", "dot", check=0).stdout
    lines = out.splitlines()
    assert lines[0] == "graph knowledge {" and lines[-1] == "}"
    for line in lines[1:-1]:
        assert _DOT_LINE.match(line), line
    assert '\\"' in out and "\\\\slash" in out and "\x1b" not in out
    edges = [line for line in lines if " -- " in line and "label=\"" in line and "penwidth" in line]
    assert len(edges) == 3


_MERMAID_LABEL = r'"[^"\n]*"'
_MERMAID_LINE = re.compile(
    rf'^  (?:n\d+(?:\[{_MERMAID_LABEL}\]|\(\[{_MERMAID_LABEL}\]\)|>{_MERMAID_LABEL}\]|\{{\{{{_MERMAID_LABEL}\}}\}})'
    rf'|n\d+ (?:-->|-\.-) n\d+|n\d+ ---\|"\d+ shared"\| n\d+)$')


def test_mermaid_is_valid_and_escapes_labels(learn, seeded):
    out = learn("graph", "--format", "mermaid", check=0).stdout
    lines = out.splitlines()
    assert lines[0] == "graph LR"
    for line in lines[1:]:
        assert _MERMAID_LINE.match(line), line
    for bad in ("<b>", "`", "\x1b", "-->\""):
        assert bad not in out.replace(" --> ", " ")
    assert "#96;tick#96;" in out and "#35;" in out  # backticks and hashes become entity codes


def test_empty_store(learn):
    Store(learn.home, warn_stderr=False).close()
    out = learn("graph", check=0).stdout
    assert "  (no learnings yet)" in out and "Total: 0 active | 0 archived | 0 global" in out
    for fmt in ("dot", "mermaid", "json"):
        assert learn("graph", "--format", fmt, check=0).stdout


def test_wide_learnings_are_hubs_not_pairs(learn):
    store = Store(learn.home, warn_stderr=False)
    pids = [f"{i:012x}" for i in range(60)]
    for pid in pids[:3]:
        store.layout.ensure_project(pid)
    store.put(store.layout.global_errors, make_record(context="everywhere", fix="x", status="global", projects=pids,
                                                      key="txt:wide"))
    store.close()
    doc = learn.json("graph")
    assert doc["wide_keys"] == 1 and doc["connections"] == [] and doc["hubs"][0]["projects"] == 60
    assert "seen in more than 50 projects: counted as hubs, not pairs" in learn("graph", check=0).stdout


def test_bad_format_is_a_usage_error(learn):
    proc = learn("graph", "--format", "svg", check=2)
    assert "Traceback" not in proc.stderr and "svg" in proc.stderr


def test_projects_of_every_key_are_read_from_an_index_not_the_rows(learn, seeded):
    """`graph`'s scan of the live learnings that may be shared reads (key, pid, projects) from
    the partial index on the expression, never the wide rows (a query worded unlike the index
    would), and so does its list of the keys on more than one row."""
    from learn_cli.engine.graph import _keys

    store = Store(learn.home, warn_stderr=False)
    plans = []
    real = store.index.db

    class Spy:
        def execute(self, sql, *args):
            plans.extend(row[3] for row in real.execute("EXPLAIN QUERY PLAN " + sql, *args))
            return real.execute(sql, *args)

    store.index.db = Spy()
    try:
        projects_of = _keys(store.index, json.loads)
    finally:
        store.index.db = real
        store.close()
    scans = [plan for plan in plans if plan.startswith("SCAN")]
    assert scans == ["SCAN learnings USING INDEX learnings_key_projects"] * 2, plans
    assert projects_of["txt:docker"] >= {identify(learn.cwd).id}


def test_a_hub_shows_its_global_copy_and_the_most_frequent_of_several(learn):
    """Index.best_live_with_key: a key's one global copy without ranking the others (however
    frequent a project copy), and of two global copies the more frequent, as the ranking did."""
    pid = identify(learn.cwd).id
    store = Store(learn.home, warn_stderr=False)
    try:
        store.register_project(identify(learn.cwd))
        store.put(store.layout.learnings(pid), make_record(context="project copy", fix="a", key="txt:one",
                                                           projects=[pid], frequency=50))
        store.put(store.layout.global_errors, make_record(context="global copy", fix="a", key="txt:one",
                                                          status="global", projects=[pid], frequency=2))
        for context, frequency in (("rare global", 3), ("frequent global", 9)):
            store.put(store.layout.global_errors, make_record(context=context, fix="b", key="txt:two",
                                                              status="global", projects=[pid], frequency=frequency))
        store.refresh()
        one, two = (json.loads(store.index.best_live_with_key(key)[1])["context"] for key in ("txt:one", "txt:two"))
    finally:
        store.close()
    assert (one, two) == ("global copy", "frequent global")
