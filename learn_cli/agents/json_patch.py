"""Edit a JSON file's text the way a person would: change only what changed.

`patch(text, new)` returns `text` turned into the document `new` by splicing: members and
elements that did not change keep their bytes (spacing, key order, escapes, line endings);
new ones are written in the style of their neighbours (the same separator and indentation,
inline or one per line). Removing what was added gives back the original text, byte for byte,
so `learn hooks install` then `uninstall` leaves a hand-written settings file as it was.
"""

from __future__ import annotations

import difflib
import json
import re

_WS = re.compile(r"[ \t\r\n]*")
_BLANKS = re.compile(r"[ \t]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_LITERALS = {"true": True, "false": False, "null": None}


class Node:
    """A value of the text: its span, its Python value, and its children's nodes."""

    __slots__ = ("start", "end", "value", "items", "keys")

    def __init__(self, start: int, end: int, value, items=(), keys=()):
        self.start, self.end, self.value = start, end, value
        self.items = list(items)  # element nodes (array) or member nodes (object, key to value)
        self.keys = list(keys)  # object only: (key, key_start) per member


def parse(text: str) -> Node:
    node, pos = _value(text, _skip(text, 0))
    if _skip(text, pos) != len(text):
        raise ValueError("extra data after the JSON value")
    return node


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()


def _value(text: str, pos: int) -> tuple[Node, int]:
    char = text[pos:pos + 1]
    if char == "{":
        return _container(text, pos, "}", member=True)
    if char == "[":
        return _container(text, pos, "]", member=False)
    match = _STRING.match(text, pos) if char == '"' else _NUMBER.match(text, pos)
    if match:
        return Node(pos, match.end(), json.loads(match.group())), match.end()
    for word, value in _LITERALS.items():
        if text.startswith(word, pos):
            return Node(pos, pos + len(word), value), pos + len(word)
    raise ValueError(f"unexpected character at offset {pos}")


def _container(text: str, start: int, close: str, member: bool) -> tuple[Node, int]:
    items, keys = [], []
    pos = _skip(text, start + 1)
    while text[pos:pos + 1] != close:
        if items:
            if text[pos:pos + 1] != ",":
                raise ValueError(f"expected ',' at offset {pos}")
            pos = _skip(text, pos + 1)
        if member:
            key_node, pos = _value(text, pos)
            pos = _skip(text, pos)
            if text[pos:pos + 1] != ":":
                raise ValueError(f"expected ':' at offset {pos}")
            keys.append((key_node.value, key_node.start))
            pos = _skip(text, pos + 1)
        node, pos = _value(text, pos)
        items.append(node)
        pos = _skip(text, pos)
    if member:
        value = {k: n.value for (k, _s), n in zip(keys, items, strict=True)}
    else:
        value = [n.value for n in items]
    return Node(start, pos + 1, value, items, keys), pos + 1


# ---------------------------------------------------------------------------------------------
# Patching


def patch(text: str, new) -> str:
    """`text` (a JSON document) edited into `new`, touching only what differs."""
    root = parse(text)
    edits: list[tuple[int, int, str]] = []
    style = _Style(text)
    _diff(text, root, new, edits, style)
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


class _Style:
    """How the file indents (its first indented line; two spaces by default) and ends lines."""

    def __init__(self, text: str):
        match = re.search(r"\n([ \t]+)\S", text)
        self.unit = match.group(1) if match else "  "
        if not self.unit.startswith("\t"):
            self.unit = " " * min(len(self.unit), 8)
        self.newline = "\r\n" if "\r\n" in text else "\n"

    def dump(self, value, indent: str, inline: bool) -> str:
        if inline:
            return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        lines = json.dumps(value, ensure_ascii=False, indent=self.unit).split("\n")
        return (self.newline + indent).join(lines)


def _diff(text: str, node: Node, new, edits: list, style: _Style) -> None:
    old = node.value
    if old == new and type(old) is type(new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        return _diff_object(text, node, new, edits, style)
    if isinstance(old, list) and isinstance(new, list):
        return _diff_array(text, node, new, edits, style)
    indent = _line_indent(text, node.start)
    edits.append((node.start, node.end, style.dump(new, indent, inline=False)))


def _diff_object(text: str, node: Node, new: dict, edits: list, style: _Style) -> None:
    spans = [(key_start, child.end) for (_k, key_start), child in zip(node.keys, node.items, strict=True)]
    kept = [i for i, (key, _s) in enumerate(node.keys) if key in new]
    for i in kept:
        _diff(text, node.items[i], new[node.keys[i][0]], edits, style)
    gone = [i for i in range(len(node.items)) if i not in kept]
    old_keys = {key for key, _s in node.keys}
    added = [(key, value) for key, value in new.items() if key not in old_keys]
    _splice_items(text, node, spans, gone, added, edits, style, member=True)


def _diff_array(text: str, node: Node, new: list, edits: list, style: _Style) -> None:
    spans = [(child.start, child.end) for child in node.items]
    old_keys = [json.dumps(v, sort_keys=True) for v in node.value]
    new_keys = [json.dumps(v, sort_keys=True) for v in new]
    matcher = difflib.SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:  # changed in place: edit inside each
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                _diff(text, node.items[i], new[j], edits, style)
            continue
        _replace_run(text, node, spans, i1, i2, new[j1:j2], edits, style)


def _replace_run(text, node, spans, i1, i2, values, edits, style) -> None:
    """Elements i1..i2 of an array become `values` (either side may be empty)."""
    if i1 == i2:  # a pure insertion before element i1 (or at the end)
        return _insert(text, node, spans, i1, list(values), edits, style, member=False)
    if not values:
        return _splice_items(text, node, spans, list(range(i1, i2)), [], edits, style, member=False)
    sep, indent, inline = _layout(text, node, spans, style)
    body = ("," + sep).join(style.dump(v, indent, inline) for v in values)
    edits.append((spans[i1][0], spans[i2 - 1][1], body))


def _splice_items(text, node, spans, gone: list[int], added: list, edits, style, member: bool) -> None:
    """Remove the items at indexes `gone` (with their commas), append `added` at the end."""
    remaining = len(spans) - len(gone)
    if not remaining and not added and gone:
        edits.append((node.start + 1, node.end - 1, ""))  # `[ ... ]` -> `[]`
        return
    for run_start, run_end in _runs(gone):
        if run_end < len(spans):  # the item after the run takes the run's place
            edits.append((spans[run_start][0], spans[run_end][0], ""))
        elif run_start > 0:  # a run at the end: drop from the end of the item before it
            edits.append((spans[run_start - 1][1], spans[run_end - 1][1], ""))
        else:  # everything goes and new items come: they replace it
            edits.append((spans[0][0], spans[-1][1], _items_text(text, node, spans, added, style, member)))
            return
    if added:
        _insert(text, node, spans, len(spans), added, edits, style, member)


def _runs(indexes: list[int]):
    run: list[int] = []
    for i in sorted(indexes):
        if run and i != run[-1] + 1:
            yield run[0], run[-1] + 1
            run = []
        run.append(i)
    if run:
        yield run[0], run[-1] + 1


def _insert(text, node, spans, at: int, values: list, edits, style, member: bool) -> None:
    if not spans:  # an empty container: open it up in the file's style
        indent = _line_indent(text, node.start)
        inner = indent + style.unit
        items = ("," + style.newline + inner).join(_item(v, inner, False, style, member) for v in values)
        edits.append((node.start + 1, node.end - 1, style.newline + inner + items + style.newline + indent))
        return
    sep, indent, inline = _layout(text, node, spans, style)
    body = ("," + sep).join(_item(v, indent, inline, style, member) for v in values)
    if at < len(spans):
        edits.append((spans[at][0], spans[at][0], body + "," + sep))
    else:
        edits.append((spans[-1][1], spans[-1][1], "," + sep + body))


def _items_text(text, node, spans, values, style, member: bool) -> str:
    sep, indent, inline = _layout(text, node, spans, style)
    return ("," + sep).join(_item(v, indent, inline, style, member) for v in values)


def _item(value, indent: str, inline: bool, style: _Style, member: bool) -> str:
    if member:
        key, value = value
        return json.dumps(key, ensure_ascii=False) + ": " + style.dump(value, indent, inline)
    return style.dump(value, indent, inline)


def _layout(text: str, node: Node, spans, style: _Style) -> tuple[str, str, bool]:
    """(separator after a comma, indentation of an item, whether items share one line)."""
    if len(spans) >= 2:
        between = text[spans[0][1]:spans[1][0]]
        sep = between[between.index(",") + 1:]
    else:
        sep = text[node.start + 1:spans[0][0]]
    inline = "\n" not in sep
    indent = sep.rsplit("\n", 1)[-1] if not inline else _line_indent(text, node.start)
    if inline and not sep and len(spans) < 2:
        sep = " "  # one item written tight: nothing to copy, so the usual space
    return sep, indent, inline


def _line_indent(text: str, pos: int) -> str:
    """The leading blanks of the line that holds `pos`."""
    line_start = text.rfind("\n", 0, pos) + 1
    return _BLANKS.match(text, line_start, pos).group()
