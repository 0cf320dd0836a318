"""SQL lives in store/ (the index's named queries), and the score formula is defined once.

An `execute(...)` whose statement names SQL (SELECT, INSERT, …) outside learn_cli/store/ is a
query that knows the index's schema: it belongs in `store.index.Index` under a name.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from learn_cli.store import index as index_mod
from learn_cli.store import score as score_mod

PACKAGE = Path(__file__).resolve().parent.parent / "learn_cli"
SQL = re.compile(r"\b(?:SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|PRAGMA|WITH)\b")
CALL = re.compile(r"\.execute(?:many|script)?\(")

def sql_calls(root: Path) -> dict[str, int]:
    """module (relative to the package) -> how many execute() calls with SQL it holds."""
    found: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "store/index.py":
            continue
        text = path.read_text(encoding="utf-8")
        for match in CALL.finditer(text):
            window = text[match.end(): match.end() + 1200]
            if SQL.search(window.split("\n\n", 1)[0]):
                found[rel] = found.get(rel, 0) + 1
    return found


def test_sql_only_in_the_index_module():
    assert sql_calls(PACKAGE) == {}


def test_the_check_sees_a_planted_query(tmp_path):
    (tmp_path / "engine").mkdir()
    (tmp_path / "store").mkdir()
    (tmp_path / "engine" / "stats.py").write_text(
        'def f(db):\n    return db.execute(\n        "SELECT count(*) FROM learnings").fetchone()\n')
    (tmp_path / "store" / "index.py").write_text('def g(db):\n    db.execute("SELECT 1")\n')
    (tmp_path / "store" / "api.py").write_text('def g(db):\n    db.execute("SELECT 2")\n')
    (tmp_path / "engine" / "other.py").write_text('def h(x):\n    return x.execute(plan)\n')
    assert sql_calls(tmp_path) == {"engine/stats.py": 1, "store/api.py": 1}


NOW = datetime(2026, 11, 29, 17, 55, tzinfo=UTC)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("frequency, impact, age_days", [
    (1, 0.5, 0), (3, 0.8, 6), (3, 0.8, 7), (10, 1.0, 20), (25, 0.9, 40), (2, 0.3, 69), (4, 0.6, 70), (7, 0.0, 1),
])
def test_the_generated_sql_is_the_python_score(frequency, impact, age_days):
    used = _stamp(NOW - timedelta(days=age_days, minutes=1))
    expression = index_mod.score_sql(":f", ":i", ":u", ":now")
    db = sqlite3.connect(":memory:")
    (value,) = db.execute(
        f"SELECT {expression}", {"f": frequency, "i": impact, "u": used, "now": _stamp(NOW)}
    ).fetchone()
    rec = {"frequency": frequency, "impact": impact, "last_used": used}
    assert value == pytest.approx(score_mod.score(rec, NOW), abs=1e-6)


def test_the_index_orders_by_the_score(tmp_path):
    """The digest's pool and the stats' bound come from the same formula as score()."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE learnings(data TEXT)")
    recs = [{"frequency": f, "impact": i, "last_used": _stamp(datetime.now(UTC) - timedelta(days=d))}
            for f, i, d in ((1, 0.5, 0), (9, 0.9, 1), (4, 0.7, 30), (12, 0.2, 3), (6, 1.0, 80))]
    db.executemany("INSERT INTO learnings VALUES (?)", [(json.dumps(r),) for r in recs])
    order = index_mod._approx_score()
    got = [json.loads(d) for (d,) in db.execute(f"SELECT data FROM learnings ORDER BY {order} DESC")]
    assert got == sorted(recs, key=lambda r: -score_mod.score(r))


def test_the_best_learnings_from_the_score_columns_are_the_pythons(store):
    """`stats`' top learnings from the v8 score columns, and from `data` where an older index
    left them empty, are those of score() over the records, whatever their fields hold."""
    from learn_cli.engine.stats import TOP, _scores_and_helped
    from learn_cli.store.record import make_record

    now = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    odd = [(3, 0.9, "2026-11-19T12:00:00Z"), ("7", "0.8", "2026-11-18T08:00:00+02:00"), (True, False, None),
           (10, 1, "2026-11-01T00:00:00.250000"), (2.5, None, "not a time"), (None, 0.95, " 2026-11-19T00:00:00Z"),
           (12, 0.7, "2026-09-01T00:00:00Z"), (9, 0.75, "2026-11-13T12:00:01Z")]
    recs = []
    for n, (frequency, impact, used) in enumerate(odd):
        rec = make_record(context=f"rule {n}", key=f"txt:{n}", status="active")
        rec.update(frequency=frequency, impact=impact, last_used=used, created="2026-10-30T00:00:00Z")
        recs.append({k: v for k, v in rec.items() if v is not None})
    store.put_many(store.layout.global_errors, recs)
    best = sorted(recs, key=lambda r: (-score_mod.score(r, now), r["key"]))[:TOP]
    want = [(r["id"], round(score_mod.score(r, now), 2)) for r in best]
    top, _helped = _scores_and_helped(store.index, now, json.loads)
    assert [(t["id"], t["score"]) for t in top] == want
    store.index.db.execute("UPDATE learnings SET score_frequency = NULL, score_impact = NULL, score_used = NULL, "
                           "score_base = NULL")  # an index older than v8
    assert not store.index.scores_filled()
    top, _helped = _scores_and_helped(store.index, now, json.loads)
    assert [(t["id"], t["score"]) for t in top] == want
