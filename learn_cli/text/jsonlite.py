"""JSON through CPython's `_json` alone: the C scanner and encoder that `json.loads` and
`json.dumps` run, without the `json` package, whose modules import `re` (with `enum` and
`functools`: ~0.6x a bare interpreter's start) for the patterns of pure-Python fallbacks that
the C code never uses. For the SessionStart hook (`learn context --hook`), whose kept-digest
answer needs no regular expression at all: its payload, its kept digest, its settings and its
counts.

`loads(text)` is `json.loads(text)` and `dumps(obj, ensure_ascii=, separators=)` is
`json.dumps(obj, ensure_ascii=, separators=)` (no indent, no sort_keys), result for result
(tests/test_jsonlite.py compares them). Whatever the C code cannot decide alone — an invalid
document, whose error message `json` words; bytes in another encoding than UTF-8; no `_json`
(not CPython) — goes to `json` itself.
"""

from __future__ import annotations

try:
    import _json
except ImportError:  # pragma: no cover - not CPython
    _json = None

_WHITESPACE = " \t\n\r"  # json's `[ \t\n\r]*` between values
_scanner: list = []  # the C scanner, made once


class _Decoding:
    """What `_json.make_scanner` reads from a `json.JSONDecoder`: json.loads' defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


def loads(text: str | bytes | bytearray):
    """`json.loads(text)`."""
    if _json is None:
        return _json_module().loads(text)
    if isinstance(text, (bytes, bytearray)):
        if text[:1] in (b"\xef", b"\xfe", b"\xff") or b"\x00" in text[:4]:  # a BOM, UTF-16 or -32: json's detection
            return _json_module().loads(text)
        text = text.decode("utf-8", "surrogatepass")
    elif not isinstance(text, str) or text.startswith("\ufeff"):
        return _json_module().loads(text)  # json's own TypeError or error message
    if not _scanner:
        _scanner.append(_json.make_scanner(_Decoding()))
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scanner[0](text, start)
    except StopIteration:
        return _json_module().loads(text)  # not a JSON value: json says why
    except SystemError:  # an error inside the value (`{"a": "b"` cut short): CPython 3.11's scanner
        return _json_module().loads(text)  # words it with json.decoder's error only once `json` is imported
    if text[end:].strip(_WHITESPACE):
        return _json_module().loads(text)  # extra data after it: json says where
    return value


def dumps(obj, ensure_ascii: bool = True, separators: tuple[str, str] = (", ", ": ")) -> str:
    """`json.dumps(obj, ensure_ascii=ensure_ascii, separators=separators)`."""
    if _json is None:
        return _json_module().dumps(obj, ensure_ascii=ensure_ascii, separators=separators)
    quote = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    if isinstance(obj, str):
        return quote(obj)
    item_separator, key_separator = separators
    encode = _json.make_encoder({}, _not_serializable, quote, None, key_separator, item_separator, False, False, True)
    return "".join(encode(obj, 0))


def _not_serializable(obj):
    raise TypeError(f"Object of type {obj.__class__.__name__} is not JSON serializable")


def _json_module():
    import json

    return json
