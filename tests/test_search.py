"""engine.search: safe FTS5 queries, ranking (all words first, relevance × score, this
project's boost), archived scopes, the cross-project time bound and the broad-topic cut."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learn_cli.engine import search as search_mod
from learn_cli.engine.search import fts_queries, search, topic_terms
from learn_cli.store.record import make_record

HERE = "aaaaaaaaaaaa"
OTHER = "bbbbbbbbbbbb"
_keys = itertools.count()


def put(store, where: str, **fields) -> dict:
    fields.setdefault("key", f"txt:{next(_keys):016x}")
    rec = make_record(**fields)
    if where == "global":
        rec["status"] = "global"
        path = store.layout.global_errors
    elif where == "global-archive":
        rec["status"] = "archived"
        path = store.layout.global_archive
    else:
        pid, _, kind = where.partition(":")
        store.layout.ensure_project(pid)
        path = store.layout.archive(pid) if kind == "archive" else store.layout.learnings(pid)
        if kind == "archive":
            rec["status"] = "archived"
    store.put(path, rec)
    return rec


def ids(result) -> list[str]:
    return [h.record["id"] for h in result.hits]


def test_topic_words_are_split_like_the_index_and_capped():
    assert topic_terms("Docker  build, docker!") == ["docker", "build"]
    assert topic_terms(["--platform", "linux/amd64"]) == ["--platform", "linux", "amd64"]
    assert len(topic_terms(" ".join(f"w{i}" for i in range(50)))) == search_mod.MAX_TERMS
    assert topic_terms("*** () ::") == []


@pytest.mark.parametrize("topic", ['"docker" OR x*', "NEAR(a b)", "col:val", "a AND OR NOT b", ")(", "-x", '""', "^a"])
def test_fts_syntax_in_the_topic_is_inert(store, topic):
    put(store, HERE, context="docker build fails with NEAR and col val")
    terms = topic_terms(topic)
    if not terms:
        return
    and_q, or_q = fts_queries(terms)
    for query in (and_q, or_q):  # every word is quoted: FTS5 accepts it whatever the user typed
        store.index.db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (query,)).fetchone()
    search(store, topic, project_id=HERE)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_any_topic_searches_without_error(tmp_path_factory, topic):
    from learn_cli.store.api import Store

    store = Store(tmp_path_factory.mktemp("h"), warn_stderr=False)
    try:
        put(store, HERE, context="docker compose v2 uses a space")
        result = search(store, topic, project_id=HERE)
        assert all(h.record["context"] for h in result.hits)
    finally:
        store.close()


def test_documents_with_every_word_rank_first_even_with_a_lower_score(store):
    one = put(store, HERE, context="docker volume mounts fail", impact=1.0, frequency=10)
    both = put(store, HERE, context="docker build is slow without buildkit", impact=0.1)
    result = search(store, "docker build", project_id=HERE)
    assert ids(result) == [both["id"], one["id"]]
    assert result.hits[0].all_terms and not result.hits[1].all_terms


def test_score_orders_equally_relevant_learnings(store):
    low = put(store, HERE, context="pytest fixture missing", impact=0.2)
    high = put(store, HERE, context="pytest fixture missing", impact=0.9, frequency=5)
    assert ids(search(store, "pytest", project_id=HERE)) == [high["id"], low["id"]]


def test_unscored_learnings_still_show(store):
    rec = put(store, HERE, context="kubectl apply unknown field", impact=0.0)
    result = search(store, "kubectl", project_id=HERE)
    assert ids(result) == [rec["id"]] and result.hits[0].score == 0.0


def test_this_project_is_boosted_over_other_projects(store):
    other = put(store, OTHER, context="npm ci needs a lockfile")
    mine = put(store, HERE, context="npm ci needs a lockfile")
    result = search(store, "lockfile", project_id=HERE)
    assert ids(result) == [mine["id"], other["id"]]
    assert [h.where for h in result.hits] == ["project", "other"]
    assert search(store, "lockfile", project_id=OTHER).hits[0].record["id"] == other["id"]


def test_global_learnings_are_found_and_marked(store):
    rec = put(store, "global", context="Docker Compose v2 uses docker compose")
    [hit] = search(store, "compose", project_id=HERE).hits
    assert hit.record["id"] == rec["id"] and hit.where == "global" and hit.scope == "global"


def test_archived_learnings_only_with_include_archived(store):
    live = put(store, HERE, context="terraform state lock held")
    old = put(store, f"{HERE}:archive", context="terraform state lock stale")
    gone = put(store, "global-archive", context="terraform provider pinned")
    assert ids(search(store, "terraform", project_id=HERE)) == [live["id"]]
    found = search(store, "terraform", project_id=HERE, include_archived=True)
    assert set(ids(found)) == {live["id"], old["id"], gone["id"]}
    assert {h.scope for h in found.hits} == {"project", "archive", "global-archive"}


def test_prefix_and_flag_spellings_match(store):
    rec = put(store, HERE, context="Always pass --platform linux/amd64 to docker build")
    assert ids(search(store, "dock", project_id=HERE)) == [rec["id"]]
    assert ids(search(store, "platform", project_id=HERE)) == [rec["id"]]
    assert ids(search(store, "--platform", project_id=HERE)) == [rec["id"]]


def test_no_match_and_empty_topic(store):
    put(store, HERE, context="something else entirely")
    assert search(store, "zzzqqq", project_id=HERE).hits == []
    assert search(store, "", project_id=HERE).hits == []
    assert search(store, "anything", project_id=HERE, limit=0).hits == []


def test_limit_and_more(store):
    for i in range(5):
        put(store, HERE, context=f"eslint parsing error case {i}")
    result = search(store, "eslint", project_id=HERE, limit=3)
    assert len(result.hits) == 3 and result.more
    assert not search(store, "eslint", project_id=HERE, limit=5).more


def test_common_words_do_not_drown_the_informative_one(store):
    for i in range(6):
        put(store, OTHER, context=f"error number {i} happened")
    rec = put(store, OTHER, context="error from gunicorn worker")
    result = search(store, "error gunicorn", project_id=HERE)
    assert ids(result)[0] == rec["id"] and result.hits[0].all_terms


def test_time_bound_keeps_local_and_global_and_names_the_rest(store):
    mine = put(store, HERE, context="redis connection refused")
    glob = put(store, "global", context="redis needs a password")
    put(store, OTHER, context="redis port in use")
    put(store, "cccccccccccc", context="redis timeout")
    result = search(store, "redis", project_id=HERE, timeout_s=0)
    assert result.timed_out and result.partial
    assert set(ids(result)) == {mine["id"], glob["id"]}
    assert result.not_searched == [OTHER, "cccccccccccc"]


def test_time_bound_interrupts_a_running_query(store, monkeypatch):
    mine = put(store, HERE, context="cargo linker not found")
    put(store, OTHER, context="cargo linker missing")
    ticks = iter([0.0, 0.0] + [10.0] * 1000)  # started, first check, then always late
    monkeypatch.setattr(search_mod, "PROGRESS_STEPS", 1)
    result = search(store, "cargo", project_id=HERE, timeout_s=5, clock=lambda: next(ticks))
    assert result.timed_out and ids(result) == [mine["id"]] and result.not_searched == [OTHER]


def test_generous_bound_searches_everything(store):
    for pid in (HERE, OTHER, "cccccccccccc"):
        put(store, pid, context="webpack unknown option")
    result = search(store, "webpack", project_id=HERE, timeout_s=5)
    assert not result.partial and len(result.hits) == 3


def test_broad_topic_is_cut_and_says_so(store, monkeypatch):
    monkeypatch.setattr(search_mod, "WINDOW", 3)
    monkeypatch.setattr(search_mod, "MAX_RANKED", 3)
    for i in range(10):
        put(store, OTHER, context=f"gradle build failed {i}")
    mine = put(store, HERE, context="gradle build failed here")
    store.put(store.layout.learnings(HERE), dict(mine))  # an older row of this project, re-written
    result = search(store, "gradle", project_id=HERE, limit=20)
    assert result.not_ranked > 0 and result.partial
    assert mine["id"] in ids(result)  # this project is searched whole even when the topic is cut


def test_windows_cover_every_match(store, monkeypatch):
    monkeypatch.setattr(search_mod, "WINDOW", 2)
    recs = [put(store, p, context="vite config unknown") for p in (OTHER, "cccccccccccc", "dddddddddddd") * 2]
    result = search(store, "vite", project_id=HERE, limit=20)
    assert set(ids(result)) == {r["id"] for r in recs} and not result.partial


def _hits(result) -> list[tuple]:
    return [(h.record, h.scope, h.pid, h.file, h.relevance, h.score, h.rank, h.all_terms, h.where)
            for h in result.hits]


def test_candidates_scored_from_the_index_columns_rank_as_from_their_records(store):
    """_finish scores candidates from the score columns (score_inputs) and decodes only the
    hits it shows; an older index without the columns is read in full. Both give the same
    hits, in the same order, with the same scores, whatever odd fields the records hold."""
    odd = [dict(frequency="7"), dict(frequency=0), dict(impact="high"), dict(impact=2.5), dict(frequency=True),
           dict(last_used="not a time"), dict(last_used="2026-01-01T00:00:00"), dict(last_used=None),
           dict(created="2025-06-01T00:00:00Z", last_used="garbage"), dict(last_used="2026-11-20T10:00:00+02:00"),
           dict(frequency=4, impact=0.8, last_used="2026-11-30T00:00:00Z")]
    store.layout.ensure_project(HERE)
    store.layout.ensure_project(OTHER)
    places = [(store.layout.learnings(HERE), None), (store.layout.learnings(OTHER), None),
              (store.layout.global_errors, "global"), (store.layout.archive(HERE), "archived")]
    for n, extra in enumerate(odd * 3):
        path, status = places[n % len(places)]
        rec = make_record(key=f"txt:{next(_keys):016x}", context=f"docker case {n}", fix=f"docker build --flag-{n}")
        rec.update(extra, **({"status": status} if status else {}))
        store.put(path, rec)
    now = "2026-12-01T00:00:00Z"
    for limit in (1, 5, 200):
        store.index.rebuild("test")  # every row with its score columns
        from_columns = search(store, "docker", project_id=HERE, limit=limit, include_archived=True, now=now)
        assert len(from_columns.hits) == min(limit, len(odd) * 3)
        store.index.db.execute("UPDATE learnings SET score_frequency=NULL, score_impact=NULL, score_used=NULL, "
                               "score_base=NULL")  # as an index older than v8 holds them
        from_records = search(store, "docker", project_id=HERE, limit=limit, include_archived=True, now=now)
        assert _hits(from_columns) == _hits(from_records)
        assert from_columns.more == from_records.more == (limit < len(odd) * 3)
