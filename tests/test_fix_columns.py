"""The index's fix columns (v11): what a failure's lookup reads of a row instead of its record.

Every writer fills them (a hook's pair, `learn add`'s put, an import's rows, a file re-read);
an index of v10 gains them without rewriting its rows, and the lookup reads those rows whole,
answers as before, and stores their columns; a pair asks engine.conflicts only about fixes
that may refine its own (engine.knowledge.may_refine).
"""

from __future__ import annotations

import json
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from learn_cli.engine.conflicts import is_refinement
from learn_cli.engine.knowledge import may_refine, same_learning
from learn_cli.store import index as index_mod
from learn_cli.store.api import Store
from learn_cli.store.project import identify
from learn_cli.store.record import make_record
from tests.test_capture_learner import NOT_FOUND, Agent, _teach, context_of


def _rows(home) -> list[tuple]:
    db = sqlite3.connect(str(home / "global" / "index.db"))
    try:
        return db.execute("SELECT key, data, fix_shape, fix_state FROM learnings").fetchall()
    finally:
        db.close()


def _filled_as_their_data(rows: list[tuple]) -> None:
    """Every row of an error key holds fix_columns of its data; the others hold NULL."""
    for key, data, shape, state in rows:
        expected = index_mod.fix_columns(json.loads(data))
        assert (shape, state) == expected
        assert (state is not None) == key.startswith("err:")


def test_every_writer_fills_the_fix_columns(home, proj, tmp_path):
    api = proj("api")
    _teach(home, api)  # the hooks' writes: a new learning, then a sighting updated in place
    store = Store(home, warn_stderr=False)
    project = identify(api)
    path = store.layout.learnings(project.id)
    store.put(path, make_record(context="keep it", key="err:0123456789abcdef", error="boom",
                                fix="make clean", projects=[project.id]))  # learn add's put
    store.put(path, make_record(context="use pnpm", key="txt:0123456789abcdef", projects=[project.id]))
    store.close()
    rows = _rows(home)
    assert sum(state is not None for _k, _d, _s, state in rows) == 2
    _filled_as_their_data(rows)
    # re-read from the file (a hand edit, a crash between the append and the index)
    db = sqlite3.connect(str(home / "global" / "index.db"))
    db.execute("DELETE FROM files")
    db.commit()
    db.close()
    store = Store(home, warn_stderr=False)
    store.refresh([path])
    store.close()
    _filled_as_their_data(_rows(home))


def test_an_import_fills_the_fix_columns(home, proj, tmp_path, learn):
    _teach(home, proj("api"))
    out = tmp_path / "export.json"
    learn("export", "-o", str(out), check=0)
    other = tmp_path / "other"
    learn("import", str(out), env={"SELF_LEARNING_HOME": str(other)}, check=0)
    rows = _rows(other)
    assert any(state is not None for _k, _d, _s, state in rows)
    _filled_as_their_data(rows)


def test_a_fix_with_an_odd_field_is_read_whole():
    """A value JSON would give back otherwise (a tuple) leaves the columns empty: the lookup
    then reads the record itself."""
    rec = make_record(key="err:0123456789abcdef", error="e", fix="f", evidence=[{"session": ("a",), "event": "x"}])
    assert index_mod.fix_columns(rec) == (None, None)
    assert index_mod.fix_columns(dict(rec, evidence=[{"session": "a", "event": "x"}]))[1] is not None


def _as_v10(home) -> None:
    """The index as version 10 left it: no fix columns."""
    db = sqlite3.connect(str(home / "global" / "index.db"))
    db.execute("ALTER TABLE learnings DROP COLUMN fix_shape")
    db.execute("ALTER TABLE learnings DROP COLUMN fix_state")
    db.execute("UPDATE learnings SET projects='[\"planted\"]' WHERE projects IS NOT NULL")
    db.execute("PRAGMA user_version=10")
    db.commit()
    db.close()


def test_an_index_of_v10_answers_the_same_and_fills_the_rows_it_reads(home, proj):
    api, cli = proj("api"), proj("cli")
    _teach(home, api)
    _teach(home, cli, failed="npm test", fix="npm ci && npm test", output="sh: jest: command not found")
    answer = context_of(Agent(home, proj("web")).fail("pytest tests", NOT_FOUND, 127))
    _as_v10(home)
    store = Store(home, warn_stderr=False)
    store.index  # noqa: B018 - opened: the columns added, no row rewritten
    store.close()
    rows = _rows(home)
    assert all(state is None for _k, _d, _s, state in rows)
    db = sqlite3.connect(str(home / "global" / "index.db"))
    assert {p for (p,) in db.execute("SELECT projects FROM learnings WHERE projects IS NOT NULL")} == {'["planted"]'}
    db.close()  # (v10's projects column was not filled again: every row rewritten, in a hook)
    again = context_of(Agent(home, proj("web2")).fail("pytest tests", NOT_FOUND, 127))
    assert again == answer.replace("web", "web2") or again == answer
    pytest_rows = [r for r in _rows(home) if "pytest" in r[1]]
    assert pytest_rows and all(state is not None for _k, _d, _s, state in pytest_rows)  # stored by the lookup
    assert all(state is None for _k, data, _s, state in _rows(home) if "jest" in data)  # another key: untouched
    _filled_as_their_data([r for r in _rows(home) if r[3] is not None])


def test_an_index_an_older_version_wrote_to_is_derived_again(home, proj):
    """v11 → an older version (its updates in place leave the fix columns as they were) → v11:
    the columns are emptied, to be derived again from the rows' data."""
    _teach(home, proj("api"))
    db = sqlite3.connect(str(home / "global" / "index.db"))
    db.execute("PRAGMA user_version=10")
    db.commit()
    db.close()
    store = Store(home, warn_stderr=False)
    store.index  # noqa: B018
    store.close()
    assert all(state is None for _k, _d, _s, state in _rows(home))


def test_the_lookup_answers_alike_from_the_columns_and_from_the_records(home, proj):
    api, cli = proj("api"), proj("cli")
    _teach(home, api)
    _teach(home, cli, fix="uv run pytest tests")
    web = Agent(home, proj("web"))
    from_columns = context_of(web.fail("pytest tests", NOT_FOUND, 127))
    db = sqlite3.connect(str(home / "global" / "index.db"))
    db.execute("UPDATE learnings SET fix_shape=NULL, fix_state=NULL")
    db.commit()
    db.close()
    from_records = context_of(Agent(home, proj("web")).fail("pytest tests", NOT_FOUND, 127))
    assert from_columns == from_records
    assert "another fix that worked" in from_columns  # both fixes were weighed


_WORDS = st.lists(st.sampled_from(["pip", "install", "x", "--user", "-q", "uv", "add", "never", "use", "run",
                                   "pytest", "python", "-m", "tests"]), min_size=0, max_size=6).map(" ".join)


@settings(max_examples=600, deadline=None)
@given(_WORDS, _WORDS)
def test_may_refine_is_false_only_where_is_refinement_is(fix_a, fix_b):
    if not may_refine(fix_a, fix_b):
        assert not is_refinement(fix_a, fix_b)


def test_same_learning_as_before():
    a = {"key": "k", "fix": "pip install x"}
    assert same_learning(a, {"key": "k", "fix": "pip install --user x"})
    assert not same_learning(a, {"key": "k", "fix": "uv add x"})
    assert not same_learning(a, {"key": "other", "fix": "pip install x"})
    assert not may_refine("Install it with poetry add pytest)", "python -m pytest -q tests/test_api.py")
