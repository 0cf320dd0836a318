"""json_patch: a JSON file edited into a new document keeps every byte it did not need to
change; removing what was added gives back the original text exactly."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from learn_cli.agents.json_patch import patch

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)), max_leaves=20)
DOCS = st.dictionaries(st.text(max_size=6), VALUES, max_size=5)
STYLES = st.sampled_from([
    dict(indent=2), dict(indent=4), dict(indent="\t"), dict(separators=(",", ":")),
    dict(indent=3, ensure_ascii=False), dict(separators=(", ", " : ")),
])


def containers(value, path=()):
    """Paths of every dict and list inside `value`."""
    if isinstance(value, (dict, list)):
        yield path
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in items:
            yield from containers(child, (*path, key))


def at(doc, path):
    for key in path:
        doc = doc[key]
    return doc


@settings(max_examples=60, deadline=None)
@given(DOCS, STYLES, st.data())
def test_adding_then_removing_restores_the_text(doc, style, data):
    text = json.dumps(doc, **style) + "\n"
    paths = list(containers(doc))
    where = data.draw(st.sampled_from(paths))
    added = data.draw(VALUES)
    new = json.loads(json.dumps(doc))
    box = at(new, where)
    if isinstance(box, dict):
        key = "learn-" + data.draw(st.text(max_size=4))
        if key in box:
            return
        box[key] = added
    else:
        box.insert(data.draw(st.integers(0, len(box))), added)
    edited = patch(text, new)
    assert json.loads(edited) == new
    assert patch(edited, doc) == text


@settings(max_examples=60, deadline=None)
@given(DOCS, DOCS, STYLES)
def test_any_change_gives_the_new_document(old, new, style):
    assert json.loads(patch(json.dumps(old, **style), new)) == new


def test_untouched_members_keep_their_bytes():
    text = '{\n   "a" : "h\\u00e9",\n   "b": [1,2],\n   "c": {"x": 1}\n}\n'
    edited = patch(text, {"a": "hé", "b": [1, 2], "c": {"x": 1, "y": [True]}})
    assert edited == '{\n   "a" : "h\\u00e9",\n   "b": [1,2],\n   "c": {"x": 1, "y": [true]}\n}\n'
