"""engine.promotion: promotion across projects, candidates, archive, conflicts, resolution."""

from __future__ import annotations

import json

import pytest

from learn_cli.engine.promotion import ResolveError, promote_project, resolve_conflict, run_promotion
from learn_cli.store.project import Project
from learn_cli.store.record import make_record

NOW = "2026-03-01T12:00:00Z"
RECENT = "2026-02-28T12:00:00Z"  # recency 1.0 at NOW
OLD = "2025-12-01T12:00:00Z"  # > 10 weeks before NOW: recency 0


def project(store, name: str) -> Project:
    p = Project(id=f"{abs(hash(name)) % 16**12:012x}", name=name, root=f"/work/{name}", remote=None)
    store.register_project(p)
    return p


def learning(store, proj: Project, **fields) -> dict:
    fields.setdefault("last_used", RECENT)
    fields.setdefault("created", RECENT)
    fields.setdefault("projects", [proj.id])
    rec = make_record(project=proj.name, **fields)
    store.put(store.layout.learnings(proj.id), rec)
    return rec


def live(store, path) -> dict:
    return store.records(path)


def test_key_seen_in_three_projects_is_promoted_once(store):
    projects = [project(store, n) for n in ("web-api", "ml-pipeline", "mobile-app")]
    copies = [learning(store, p, key="err:jose", error="No module named 'jose'", fix="pip install python-jose",
                       frequency=1, impact=0.5) for p in projects]
    report = run_promotion(store, now=NOW)
    assert [p["global_id"] for p in report.promoted] and len(report.promoted) == 1
    item = report.promoted[0]
    assert item["projects"] == 3 and not item["merged"]
    globals_ = live(store, store.layout.global_errors)
    (g,) = globals_.values()
    assert g["status"] == "global" and sorted(g["promoted_from"]) == sorted(c["id"] for c in copies)
    assert sorted(g["projects"]) == sorted(p.id for p in projects) and g["frequency"] == 3
    for p, c in zip(projects, copies, strict=True):
        assert live(store, store.layout.learnings(p.id))[c["id"]]["promoted_to"] == g["id"]
    again = run_promotion(store, now=NOW)
    assert again.promoted == [] and len(live(store, store.layout.global_errors)) == 1


def test_high_score_needs_min_projects_else_candidate(store):
    a, b = project(store, "a"), project(store, "b")
    learning(store, a, key="txt:1", context="Set timeout on HTTP calls", fix="timeout=10", frequency=9, impact=0.9)
    learning(store, b, key="txt:1", context="Set timeout on HTTP calls", fix="timeout=10", frequency=1, impact=0.9)
    learning(store, a, key="txt:2", context="Prefer pathlib", fix="use pathlib.Path", frequency=9, impact=0.9)
    report = run_promotion(store, now=NOW)
    assert [p["key"] for p in report.promoted] == ["txt:1"]
    assert [c["key"] for c in report.candidates] == ["txt:2"]
    assert report.candidates[0]["score"] == pytest.approx(0.81)


def test_existing_global_is_folded_not_duplicated(store):
    ps = [project(store, n) for n in ("a", "b", "c")]
    existing = make_record(key="err:k", error="E", fix="do x", status="global", frequency=5, impact=0.4,
                           projects=[ps[0].id], last_used=RECENT)
    store.put(store.layout.global_errors, existing)
    for p in ps:
        learning(store, p, key="err:k", error="E", fix="do x", frequency=1, impact=0.6)
    report = run_promotion(store, now=NOW)
    assert report.promoted[0]["merged"] and report.promoted[0]["global_id"] == existing["id"]
    (g,) = live(store, store.layout.global_errors).values()
    assert g["frequency"] == 5  # max(5, 3): the capture path already counted those sightings
    assert g["impact"] == 0.6 and sorted(g["projects"]) == sorted(p.id for p in ps)


def test_stale_learning_is_archived_and_clock_is_kept(store):
    p = project(store, "web-api")
    stale = learning(store, p, context="Pin Node.js to v16", fix="nvm use 16", impact=0.2,
                     last_used=OLD, low_since="2026-01-01T00:00:00Z")
    fresh_low = learning(store, p, context="Low but new", fix="x", impact=0.1)
    healthy = learning(store, p, context="Good", fix="y", impact=0.9, frequency=5, low_since="2026-01-01T00:00:00Z")
    report = run_promotion(store, now=NOW)
    assert [a["id"] for a in report.archived] == [stale["id"]]
    assert report.archived[0]["stale_days"] == 59
    recs = live(store, store.layout.learnings(p.id))
    assert stale["id"] not in recs
    archived = live(store, store.layout.archive(p.id))[stale["id"]]
    assert archived["status"] == "archived" and archived["archived"] == NOW
    assert recs[fresh_low["id"]]["low_since"] == NOW  # the clock starts now
    assert "low_since" not in recs[healthy["id"]]  # and stops when the score is back up
    assert report.low_since_changed == 2


def test_dry_run_writes_nothing(store):
    p = project(store, "web-api")
    learning(store, p, context="Pin Node.js to v16", fix="nvm use 16", impact=0.2, last_used=OLD,
             low_since="2026-01-01T00:00:00Z")
    before = {f: f.read_bytes() for f in store.home.rglob("*.jsonl")}
    report = run_promotion(store, now=NOW, dry_run=True)
    assert len(report.archived) == 1 and report.dry_run
    assert {f: f.read_bytes() for f in store.home.rglob("*.jsonl")} == before


def test_conflicting_preferences_are_flagged_and_not_promoted(store):
    ps = [project(store, n) for n in ("a", "b", "c")]
    jest = learning(store, ps[0], type="preference", category="testing", context="Use Jest for unit tests",
                    fix="use jest", key="txt:jest", projects=[p.id for p in ps], frequency=9, impact=0.9)
    vitest = learning(store, ps[0], type="preference", category="testing", context="Use Vitest for unit tests",
                      fix="use vitest", key="txt:vitest", frequency=9, impact=0.9)
    report = run_promotion(store, now=NOW)
    assert report.promoted == []
    assert len(report.conflicts) == 1 and report.conflicts[0]["new"]
    recs = live(store, store.layout.learnings(ps[0].id))
    assert recs[jest["id"]]["status"] == recs[vitest["id"]]["status"] == "conflicted"
    assert recs[jest["id"]]["conflict_with"] == [vitest["id"]]
    assert recs[jest["id"]]["pre_conflict_status"] == "active"
    again = run_promotion(store, now=NOW)
    assert len(again.conflicts) == 1 and not again.conflicts[0]["new"]


def test_features_derived_by_an_older_version_are_derived_again(store):
    """The index caches each record's conflict features with its decision fields; when the
    rules that read texts change, the version changes, and a promote reads them afresh (a
    cached stance of an older version must not keep a false conflict alive)."""
    from learn_cli.engine import promotion
    from learn_cli.engine.conflicts import record_features

    p = project(store, "a")
    topic = learning(store, p, type="preference", category="testing", key="txt:vault",
                     fix="Never commit .env files; keep secrets in the vault for jest")
    learning(store, p, type="preference", category="testing", key="txt:vitest", fix="Use Vitest for unit tests")
    store.refresh()
    stale = record_features(topic)._replace(stances=(("JS test framework", ("jest",), ()),))  # as v3 read it
    old_derived = promotion.derive_fields(topic).replace(f"[{promotion._DERIVED_VERSION},", "[3,", 1)
    store.index.db.execute("UPDATE learnings SET derived=?, features=? WHERE id=?",
                           (old_derived, json.dumps(stale), topic["id"]))
    assert run_promotion(store, now=NOW).conflicts == []
    (features,) = store.index.db.execute("SELECT features FROM learnings WHERE id=?", (topic["id"],)).fetchone()
    assert json.loads(features)[2] == []


def test_alternative_fixes_of_one_key_are_promoted_on_their_own_evidence(store):
    """Issue 10: two fixes of one error are alternatives, not a conflict; each needs its own
    three projects to become global, and neither blocks the other."""
    ps = [project(store, n) for n in ("a", "b", "c", "d")]
    fixes = ["pip install requests"] * 3 + ["conda install -c conda-forge requests"]
    copies = [
        learning(store, p, key="err:req", error="No module named 'requests'", fix=f)
        for p, f in zip(ps, fixes, strict=True)
    ]
    report = run_promotion(store, now=NOW)
    assert report.conflicts == []
    assert [item["ids"] for item in report.promoted] == [[c["id"] for c in copies[:3]]]
    promoted = list(live(store, store.layout.global_errors).values())
    assert [r["fix"] for r in promoted] == ["pip install requests"]
    conda = live(store, store.layout.learnings(ps[3].id))[copies[3]["id"]]
    assert conda["status"] == "active" and "promoted_to" not in conda


def test_a_promoted_fix_and_its_negation_conflict(store):
    ps = [project(store, n) for n in ("a", "b", "c", "d")]
    fixes = ["use pnpm install"] * 3 + ["never use pnpm install"]
    copies = [
        learning(store, p, key="err:pm", error="lockfile mismatch", fix=f) for p, f in zip(ps, fixes, strict=True)
    ]
    run_promotion(store, now=NOW)
    report = run_promotion(store, now=NOW)
    assert report.conflicts
    assert live(store, store.layout.learnings(ps[3].id))[copies[3]["id"]]["status"] == "conflicted"
    assert [r["status"] for r in live(store, store.layout.global_errors).values()] == ["conflicted"]


def test_resolve_keep_archives_the_other_and_drop_releases_it(store):
    p = project(store, "a")
    jest = learning(store, p, type="preference", context="Use Jest for unit tests", fix="use jest", key="txt:j")
    vitest = learning(store, p, type="preference", context="Use Vitest for unit tests", fix="use vitest", key="txt:v")
    run_promotion(store, now=NOW)
    result = resolve_conflict(store, jest["id"], keep=True, now=NOW)
    assert [r["id"] for r in result.kept] == [jest["id"]] and [r["id"] for r in result.archived] == [vitest["id"]]
    recs = live(store, store.layout.learnings(p.id))
    assert recs[jest["id"]]["status"] == "active" and "conflict_with" not in recs[jest["id"]]
    assert vitest["id"] not in recs
    assert live(store, store.layout.archive(p.id))[vitest["id"]]["status"] == "archived"
    with pytest.raises(ResolveError, match="not in conflict"):
        resolve_conflict(store, jest["id"], keep=True)
    # the archived one does not come back as a conflict on the next run
    assert run_promotion(store, now=NOW).conflicts == []


def test_resolve_drop(store):
    p = project(store, "a")
    tabs = learning(store, p, type="preference", context="Tabs for indentation", fix="indent with tabs", key="txt:t")
    spaces = learning(store, p, type="preference", context="Spaces for indentation", fix="indent with spaces",
                      key="txt:s")
    run_promotion(store, now=NOW)
    result = resolve_conflict(store, tabs["id"], keep=False, now=NOW)
    assert [r["id"] for r in result.archived] == [tabs["id"]] and [r["id"] for r in result.kept] == [spaces["id"]]
    assert live(store, store.layout.learnings(p.id))[spaces["id"]]["status"] == "active"
    with pytest.raises(ResolveError, match="no learning"):
        resolve_conflict(store, "learn-nope", keep=True)


def test_orphaned_conflict_is_released(store):
    p = project(store, "a")
    jest = learning(store, p, type="preference", context="Use Jest", fix="use jest", key="txt:j")
    vitest = learning(store, p, type="preference", context="Use Vitest", fix="use vitest", key="txt:v")
    run_promotion(store, now=NOW)
    store.remove(store.layout.learnings(p.id), vitest["id"])
    report = run_promotion(store, now=NOW)
    assert report.released == 1
    assert live(store, store.layout.learnings(p.id))[jest["id"]]["status"] == "active"


def test_patches_apply_to_the_record_as_it_is_at_write_time(store, monkeypatch):
    """A capture that bumps a record while promotion runs is not overwritten."""
    import learn_cli.engine.promotion as promotion

    p = project(store, "a")
    rec = learning(store, p, context="Low", fix="x", impact=0.1)
    real = promotion.write_entries

    def capture_meanwhile(st, entries, *args, **kw):
        st.update(st.layout.learnings(p.id), rec["id"], lambda r: dict(r, frequency=7))
        return real(st, entries, *args, **kw)

    monkeypatch.setattr(promotion, "write_entries", capture_meanwhile)
    run_promotion(store, now=NOW)
    got = live(store, store.layout.learnings(p.id))[rec["id"]]
    assert got["frequency"] == 7 and got["low_since"] == NOW


def test_promote_project_considers_one_project_and_same_keys_elsewhere(store):
    ps = [project(store, n) for n in ("a", "b", "c")]
    for pr in ps:
        learning(store, pr, key="err:k", error="E", fix="do x")
    other_stale = learning(store, ps[1], context="stale elsewhere", fix="x", impact=0.1, last_used=OLD,
                           low_since="2026-01-01T00:00:00Z")
    report = promote_project(store, ps[0].id, now=NOW)
    assert len(report.promoted) == 1 and report.promoted[0]["projects"] == 3
    assert report.scanned == {ps[0].id: 1} and report.archived == []
    assert other_stale["id"] in live(store, store.layout.learnings(ps[1].id))
    gid = report.promoted[0]["global_id"]

    def link(pr):
        (c,) = [r for r in live(store, store.layout.learnings(pr.id)).values() if r.get("key") == "err:k"]
        return c.get("promoted_to")

    assert [link(pr) for pr in ps] == [gid, None, None]  # only this project's file is written
    again = promote_project(store, ps[1].id, now=NOW)  # the next project's session end links its copy
    assert again.promoted[0]["global_id"] == gid and again.promoted[0]["merged"]
    assert [link(pr) for pr in ps] == [gid, gid, None]
    (g,) = live(store, store.layout.global_errors).values()
    assert g["frequency"] == 3 and len(g["projects"]) == 3  # folded, not counted twice


def test_a_new_project_of_a_global_learning_is_folded_into_it(store):
    ps = [project(store, n) for n in ("a", "b", "c", "d")]
    for pr in ps[:3]:
        learning(store, pr, key="err:k", error="E", fix="do x")
    first = run_promotion(store, now=NOW)
    late = learning(store, ps[3], key="err:k", error="E", fix="do x", impact=0.1)
    report = run_promotion(store, now=NOW)
    assert [(p["merged"], p["projects"], p["ids"]) for p in report.promoted] == [(True, 4, [late["id"]])]
    assert live(store, store.layout.learnings(ps[3].id))[late["id"]]["promoted_to"] == first.promoted[0]["global_id"]
    assert run_promotion(store, now=NOW).promoted == []
    (g,) = live(store, store.layout.global_errors).values()
    assert ps[3].id in g["projects"]


def test_index_stays_consistent_after_a_run(store):
    ps = [project(store, n) for n in ("a", "b", "c")]
    for pr in ps:
        learning(store, pr, key="err:k", error="ZebraError", fix="do x")
    run_promotion(store, now=NOW)
    db = store.index.db
    db.execute("INSERT INTO fts(fts, rank) VALUES('integrity-check', 1)")
    hits = db.execute("SELECT l.scope FROM fts JOIN learnings l ON l.rowid = fts.rowid WHERE fts MATCH 'zebraerror'")
    assert sorted(s for (s,) in hits) == ["global", "project", "project", "project"]
    store.refresh()
    assert json.loads(db.execute("SELECT data FROM learnings WHERE scope='global'").fetchone()[0])["status"] == "global"


def write_store(store, projects: int, per_project: int, shared_keys: int = 50) -> None:
    """A store written straight to its files (as a year of captures would leave it), then indexed."""
    import random

    rng = random.Random(7)
    for p in range(projects):
        proj = project(store, f"proj-{p}")
        lines = []
        for i in range(per_project):
            shared = rng.random() < 0.3
            key = f"err:shared{rng.randrange(shared_keys)}" if shared else f"txt:p{p}-{i}"
            lines.append(make_record(key=key, context=f"context {key} about docker build {i % 7}",
                                     fix=f"fix for {key}", frequency=rng.randint(1, 6), impact=round(rng.random(), 2),
                                     projects=[proj.id], last_used=RECENT if rng.random() < 0.7 else OLD,
                                     low_since="2026-01-01T00:00:00Z" if rng.random() < 0.2 else None))
        with open(store.layout.learnings(proj.id), "a") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in lines)
    store.refresh()


def test_a_few_thousand_learnings_stay_fast_and_consistent(store, tmp_path):
    """No quadratic surprises: every whole-store operation on 4,000 learnings in 40 projects."""
    import time

    from learn_cli.engine.exchange import import_file, write_export
    from learn_cli.engine.graph import build_graph
    from learn_cli.engine.prune import run_prune
    from learn_cli.engine.stats import gather
    from learn_cli.store.api import Store

    write_store(store, projects=40, per_project=100)
    started = time.monotonic()
    report = run_promotion(store, now=NOW)
    assert report.promoted and report.counts()["scanned"] == 4000
    assert len(live(store, store.layout.global_errors)) == len(report.promoted)
    assert run_promotion(store, now=NOW).promoted == []
    pruned = run_prune(store, None, now=NOW)
    assert pruned.entries_after <= pruned.entries_before
    graph = build_graph(store)
    assert graph.connections and graph.totals["active"] == pruned.entries_after
    assert gather(store, now=NOW)["total"] == graph.totals["active"]
    path = tmp_path / "export.json"
    with open(path, "wb") as out:
        exported = write_export(store, out, json.loads)
    fresh = Store(tmp_path / "fresh", warn_stderr=False)
    imported = import_file(fresh, path)
    assert imported.new + imported.merged + imported.duplicates == exported.total
    fresh.close()
    assert time.monotonic() - started < 60  # seconds; a quadratic step would take minutes


def test_a_group_with_no_active_copy_and_no_global_one_is_not_viewed(store, monkeypatch):
    """Only an active learning is promoted or listed (scoring.lifecycle): copies that are all
    pending (most of a real store) are passed over before their group's view is built, and an
    active copy beside them is still judged."""
    from learn_cli.engine import promotion

    projects = [project(store, n) for n in ("a", "b", "c")]
    for p in projects[:2]:
        learning(store, p, key="err:wait", error="E1", fix="retry", frequency=9, impact=0.9, status="pending")
    learning(store, projects[0], key="txt:t", context="Set timeout on HTTP calls", fix="timeout=10",
             frequency=9, impact=0.9)
    learning(store, projects[1], key="txt:t", context="Set timeout on HTTP calls", fix="timeout=10",
             frequency=9, impact=0.9, status="pending")
    viewed = []
    real = promotion.group_view
    monkeypatch.setattr(promotion, "group_view", lambda copies: viewed.append([e.rec["key"] for e in copies])
                        or real(copies))
    report = run_promotion(store, now=NOW)
    assert [c["key"] for c in report.promoted + report.candidates] == ["txt:t"]
    assert all(keys[0] == "txt:t" for keys in viewed) and viewed


def test_a_reversed_pair_is_reported_with_its_texts(store):
    """A whole-store promote's conflict groups hold the digests of directions, and read the
    texts of the few met both ways from the records: the reason is find_conflicts's."""
    from learn_cli.engine.conflicts import find_conflicts

    p = project(store, "web")
    a = learning(store, p, key="err:a", command="npm test", fix_command="pnpm test", fix="pnpm test")
    b = learning(store, p, key="err:b", command="pnpm test", fix_command="npm test", fix="npm test")
    report = run_promotion(store, now=NOW)
    ((_, _, reason),) = find_conflicts([a, b])
    assert [(c["a"], c["b"], c["reason"]) for c in report.conflicts] == [(a["id"], b["id"], reason)]
    assert "npm test" in reason


def test_prune_gives_an_unchanged_record_back_the_decision_fields_it_was_loaded_with(store, monkeypatch):
    """Prune reads each file's records whole to search duplicates, then slims them back
    (`slim`): a record it did not change takes back the decision fields it was loaded with
    instead of computing them again (the digest of its fix: ~5 % of a first prune at 100,000);
    a changed one is derived again from its patched record."""
    from learn_cli.engine import promotion
    from learn_cli.engine.promotion import DERIVE, WHOLE_STORE, ensure_full, load_entries, slim

    p = project(store, "a")
    kept = learning(store, p, key="err:a", error="E1", fix="retry")
    changed = learning(store, p, key="err:b", error="E2", fix="pip install x")
    store.index.derive = DERIVE
    entries = load_entries(store, WHOLE_STORE, json.loads)
    loaded = {e.rec["id"]: e.rec for e in entries}
    ensure_full(store, entries, json.loads, keep=True)
    by_id = {e.rec["id"]: e for e in entries}
    by_id[changed["id"]].set("frequency", 7)
    digests = []
    real = promotion.advice_of
    monkeypatch.setattr(promotion, "advice_of", lambda rec: digests.append(rec["id"]) or real(rec))
    slim(entries)
    assert by_id[kept["id"]].rec is loaded[kept["id"]] and not by_id[kept["id"]].full
    assert digests == [changed["id"]]
    assert by_id[changed["id"]].rec == promotion.decision_fields(dict(changed, frequency=7))
