"""text.lite: `functools.cache` / `lru_cache` and `collections.namedtuple` for the hook path,
without importing either module (text/lite.py), and `_sqlite3` imported without `functools`
(store.index._import_sqlite)."""

from __future__ import annotations

import collections
import functools
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import learn_cli
from learn_cli.text import lite

Pair = lite._namedtuple("Pair", "left right extra", (None,), __name__)  # its own, not the real one it hands out here
Twin = collections.namedtuple("Twin", "left right extra", defaults=(None,))


def test_a_named_tuple_is_collections_one():
    ours, theirs = Pair(1, right=[2]), Twin(1, right=[2])
    assert ours == theirs and tuple(ours) == (1, [2], None) and isinstance(ours, tuple)
    assert repr(ours) == repr(theirs).replace("Twin", "Pair")
    assert (ours.left, ours.right, ours.extra) == (theirs.left, theirs.right, theirs.extra)
    assert ours._replace(extra=3) == theirs._replace(extra=3) and type(ours._replace(extra=3)) is Pair
    assert ours._asdict() == theirs._asdict() and Pair._fields == Twin._fields
    assert Pair._field_defaults == Twin._field_defaults and Pair.__match_args__ == Twin.__match_args__
    assert Pair._make([1, 2, 3]) == Twin._make([1, 2, 3])
    assert pickle.loads(pickle.dumps(ours)) == ours and type(pickle.loads(pickle.dumps(ours))) is Pair
    for bad in (lambda cls: cls(), lambda cls: cls(1, 2, 3, 4), lambda cls: cls(1, 2, nope=3)):
        with pytest.raises(TypeError):
            bad(Pair)
        with pytest.raises(TypeError):
            bad(Twin)
    with pytest.raises(ValueError):
        ours._replace(nope=1)

    class Named(lite._namedtuple("Named", "a b", (), __name__)):
        __slots__ = ()

        @property
        def both(self):
            return self.a + self.b

    assert Named(1, 2).both == 3 and repr(Named(1, 2)) == "Named(a=1, b=2)"


def test_the_real_ones_where_their_modules_are_imported():
    """Commands and tests import functools and collections anyway: nothing changes there."""
    assert type(lite.lru_cache(maxsize=4)(len)) is type(functools.lru_cache(maxsize=4)(len))
    real = lite.namedtuple("Real", "a b", defaults=(2,), module=__name__)
    assert "_namedtuple" not in real.__new__.__qualname__ and "_namedtuple" in Pair.__new__.__qualname__
    assert real(1) == (1, 2) and real._field_defaults == {"b": 2}


def test_the_caches_answer_as_functools_and_stay_bounded():
    calls = []

    def double(x, scale=2):
        calls.append(x)
        return x * scale

    cached, theirs = lite._memoized(double, None), functools.cache(double)
    for fn in (cached, theirs):
        assert [fn(1), fn(1), fn(2), fn(2, scale=3)] == [2, 2, 4, 6]
    assert len(calls) == 6  # three computed by each
    assert cached.__name__ == "double" and cached.__wrapped__ is double
    assert cached.cache_info() == theirs.cache_info() == (1, 3, None, 3)
    cached.cache_clear()
    assert cached.cache_info() == (0, 0, None, 0)
    bounded = lite._memoized(double, 4)
    for x in range(100):
        assert bounded(x) == 2 * x and bounded(x) == 2 * x
        assert bounded.cache_info().currsize <= 4
    with pytest.raises(TypeError):  # unhashable, as functools says
        cached([1])


def test_the_index_loads_sqlite_without_functools():
    """A process without `functools` (a hook) imports `_sqlite3` with text.lite's `lru_cache`
    for its statement caches, and leaves no stand-in behind; the statements work the same."""
    probe = ("import sys; from learn_cli.store import index; "
             "db = index.sqlite3.connect(':memory:'); db.execute('create table t(a)'); "
             "[db.execute('insert into t values (?)', (i,)) for i in range(300)]; "
             "[db.execute(f'select {i}').fetchone() for i in range(300)]; "
             "print(db.execute('select sum(a) from t').fetchone()[0], 'functools' in sys.modules, "
             "'collections' in sys.modules); import functools; print(functools.lru_cache.__module__)")
    out = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(Path(learn_cli.__file__).parents[1])}).stdout.split()
    assert out == [str(sum(range(300))), "False", "False", "functools"]
