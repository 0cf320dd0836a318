"""store.jsonl.exact_dumps: the lines promote and prune write, through orjson once a command
has imported it, must be `json`'s text to the byte (a record file rewritten by an older build
and by this one reads the same, and the index's `data` is compared as text). In process."""

from __future__ import annotations

import json
import random
import sys

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learn_cli.store import jsonl

TEXT = st.text(st.characters(blacklist_categories=()), max_size=30)  # surrogates and controls included
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10**30, max_value=10**30) | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
    max_leaves=25)


def reference(rec) -> str:
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":"))


@pytest.fixture
def exact(monkeypatch):
    monkeypatch.setitem(sys.modules, "orjson", orjson)
    dumps = jsonl.exact_dumps()
    assert dumps is not jsonl.dumps  # the orjson path is the one under test
    return dumps


def test_without_orjson_it_is_dumps(monkeypatch):
    monkeypatch.delitem(sys.modules, "orjson", raising=False)
    assert jsonl.exact_dumps() is jsonl.dumps


def test_floats_of_every_magnitude(exact):
    rng = random.Random(7)
    values = [0.0, -0.0, 1.0, 0.35, 1e-4, 1e-5, 4.5e-5, 6.5e-6, 1e-9, 1e-10, 5e-324, 1e16, 1e22, 1.7976931348623157e308,
              float("nan"), float("inf"), float("-inf")]
    for exponent in range(-330, 309):
        for _ in range(20):
            value = rng.uniform(1, 10) * 10.0 ** exponent
            values += [value, -value, float(f"{value:.3g}")]
    for value in values:
        rec = {"id": "x", "impact": value, "evidence": [{"at": value}]}
        assert exact(rec) == reference(rec), value


def test_integers_texts_and_controls(exact):
    for value in (2**63 - 1, -2**63, 2**64 - 1, 2**64, -2**63 - 1, 10**30, True, None, "e-5", "3e-5 x", "0.0000",
                  "\ud800 lone", "\x00\x08\x0c\x1f\x7f\u2028\u2029 \"\\/ é 東", "null"):
        rec = {"id": "x", "value": value, "list": [value, {"k": value}]}
        assert exact(rec) == reference(rec), value


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=8))
def test_any_record(rec):
    sys.modules.setdefault("orjson", orjson)
    assert jsonl.exact_dumps()(rec) == reference(rec)


def test_bulk_loads_parses_as_json_and_imports_orjson_only_for_many_texts(monkeypatch):
    """A read command parses with the standard library until orjson's import would pay for
    itself (store.jsonl.BULK_SWITCH texts), then with orjson; what orjson refuses (NaN, a lone
    surrogate) is parsed as `json.loads` parses it, and a bad text fails as it does there."""
    monkeypatch.delitem(sys.modules, "orjson", raising=False)
    monkeypatch.setattr(jsonl, "BULK_SWITCH", 3)
    loads = jsonl.bulk_loads()
    texts = ['{"a": 1}', '[1.5, "x"]', '{"n": NaN}', '"\\ud800"', '{"b": [true, null]}', '{"c": 2}']
    seen = []
    for text in texts:
        seen.append(loads(text))
        if len(seen) == 2:
            assert "orjson" not in sys.modules  # two texts: not worth its import
    assert "orjson" in sys.modules
    assert json.dumps(seen) == json.dumps([json.loads(t) for t in texts])
    with pytest.raises(ValueError, match="Expecting"):
        loads("{not json")  # the standard library's words, whichever parser ran first
    monkeypatch.setitem(sys.modules, "orjson", orjson)  # already imported: orjson from the first text
    assert json.dumps(jsonl.bulk_loads()('{"n": NaN, "s": "\\ud800"}')) == '{"n": NaN, "s": "\\ud800"}'
