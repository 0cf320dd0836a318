"""learn_cli.text.jsonlite: json.loads and json.dumps through `_json` alone (the SessionStart
hook's JSON, without `re`), result for result and error for error. In process."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learn_cli.text import jsonlite

TEXT = st.text(st.characters(blacklist_categories=()), max_size=30)  # surrogates and controls included
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10**30, max_value=10**30) | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=5),
    max_leaves=25)
SEPARATORS = st.sampled_from([(", ", ": "), (",", ":")])


def same(a, b) -> bool:
    """Equal, NaN included (NaN != NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def outcome(fn, *args, **kw):
    try:
        return ("ok", fn(*args, **kw))
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return (type(exc).__name__, str(exc))


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans(), SEPARATORS)
def test_dumps_writes_what_json_writes(value, ensure_ascii, separators):
    expected = json.dumps(value, ensure_ascii=ensure_ascii, separators=separators)
    assert jsonlite.dumps(value, ensure_ascii=ensure_ascii, separators=separators) == expected
    assert same(jsonlite.loads(expected), json.loads(expected))
    assert same(jsonlite.loads(expected.encode("utf-8", "surrogatepass")), json.loads(expected))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=' \t\n\r{}[]":,0123456789.eE+-truefalsnNIiy\\u\ufeffé', max_size=25))
def test_loads_reads_and_refuses_what_json_does(text):
    got, expected = outcome(jsonlite.loads, text), outcome(json.loads, text)
    assert got[0] == expected[0] and (same(got[1], expected[1]) if got[0] == "ok" else got[1] == expected[1])


@pytest.mark.parametrize("data", [
    b' {"a": [1, 2.5, "\\u00e9"]} \n', "[NaN, Infinity, -Infinity]", b"\xef\xbb\xbf{}", '{"a": 1} x', "",
    "\ufeff{}", '"\\ud800"', "01", '{"a":1,}', '{"a": 1}'.encode("utf-16"), '[1]'.encode("utf-32-le"), b"\xff",
    bytearray(b"[true]"), 12, None,
])
def test_loads_edge_cases_as_json(data):
    got, expected = outcome(jsonlite.loads, data), outcome(json.loads, data)
    assert got[0] == expected[0] and (same(got[1], expected[1]) if got[0] == "ok" else got[1] == expected[1])


def test_dumps_refuses_what_json_refuses():
    for value in ({1j: 1}, [object()], {"a": {1, 2}}):
        assert outcome(jsonlite.dumps, value) == outcome(json.dumps, value)
    loop: list = []
    loop.append(loop)
    assert outcome(jsonlite.dumps, loop) == outcome(json.dumps, loop)


def test_it_imports_neither_json_nor_re():
    probe = ("import sys; from learn_cli.text import jsonlite; "
             "jsonlite.dumps(jsonlite.loads(b'{\"a\": [1, null]}')); print(sorted({'json', 're'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(__import__("pathlib").Path(jsonlite.__file__).parents[2])}).stdout
    assert out.strip() == "[]"


def test_an_invalid_document_is_refused_as_json_refuses_it_before_json_is_imported():
    """CPython 3.11's scanner words an error inside a value (`{"a": "b"` cut short) with
    json.decoder's JSONDecodeError only when `json` is in sys.modules; before, it raised
    SystemError (a hook whose spool held a cut line dropped its own event for it)."""
    texts = [b'{"this is not": "an event"', b'{"a": "b" "c"}', b'[1, 2', b'{"a": tru}', b'"\\x"', b'{"a":']
    probe = ("import sys; from learn_cli.text import jsonlite\n"
             f"for text in {texts!r}:\n"
             "    try:\n"
             "        jsonlite.loads(text)\n"
             "    except ValueError as exc:\n"
             "        print(type(exc).__name__, exc)\n")
    out = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(__import__("pathlib").Path(jsonlite.__file__).parents[2])}).stdout
    expected = []
    for text in texts:
        with pytest.raises(ValueError) as caught:
            json.loads(text)
        expected.append(f"{type(caught.value).__name__} {caught.value}")
    assert out.splitlines() == expected
