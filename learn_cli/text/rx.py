"""`re`'s names for the hook path, without importing `re` when the patterns are known.

`import re` brings `enum`, `re._parser`, `re._compiler` and their kin: ~13 M instructions,
a third of a bare interpreter's start, on every tool call of the agent, although a hook
compiles nothing: its patterns come from the regex cache (capture.regex_cache), code that
`_sre.compile` (C) turns into pattern objects. The modules of the hook path (text/, the
capture's pairing and corrections, store.record) spell their regexes `rx.compile`,
`rx.search`, `rx.IGNORECASE`, ... as they would with `re`: the same pattern objects, the same
matches. Where a source is set (capture.regex_cache.install), compilations go to it;
otherwise, and for whatever it cannot serve, to `re` itself, imported then. The flags are
plain ints (`re.IGNORECASE == 2`).
"""

from __future__ import annotations

# re.RegexFlag's values (Lib/re/_constants.py: SRE_FLAG_*), as plain ints
TEMPLATE = T = 1
IGNORECASE = I = 2  # noqa: E741 - re's name
LOCALE = L = 4
MULTILINE = M = 8
DOTALL = S = 16
UNICODE = U = 32
VERBOSE = X = 64
DEBUG = 128
ASCII = A = 256

# (pattern, flags) -> pattern object, or None: set by capture.regex_cache.install
source = None
_compiled: dict = {}


def compile(pattern, flags=0):
    if type(pattern) is not str:
        return _re().compile(pattern, flags)
    key = (pattern, int(flags))
    compiled = _compiled.get(key)
    if compiled is None:
        compiled = (source and source(*key)) or _re().compile(*key)
        _compiled[key] = compiled
    return compiled


def search(pattern, string, flags=0):
    return compile(pattern, flags).search(string)


def match(pattern, string, flags=0):
    return compile(pattern, flags).match(string)


def fullmatch(pattern, string, flags=0):
    return compile(pattern, flags).fullmatch(string)


def sub(pattern, repl, string, count=0, flags=0):
    return compile(pattern, flags).sub(repl, string, count)


def subn(pattern, repl, string, count=0, flags=0):
    return compile(pattern, flags).subn(repl, string, count)


def split(pattern, string, maxsplit=0, flags=0):
    return compile(pattern, flags).split(string, maxsplit)


def findall(pattern, string, flags=0):
    return compile(pattern, flags).findall(string)


def finditer(pattern, string, flags=0):
    return compile(pattern, flags).finditer(string)


# re.escape's table (Lib/re/__init__.py), kept here so that escaping imports nothing
_SPECIAL_CHARS = {i: "\\" + chr(i) for i in b"()[]{}?*+-|^$\\.&~# \t\n\r\v\f"}


def escape(pattern):
    if isinstance(pattern, str):
        return pattern.translate(_SPECIAL_CHARS)
    return str(pattern, "latin1").translate(_SPECIAL_CHARS).encode("latin1")


def forget() -> None:
    """Drop the compiled patterns (tests that switch the source)."""
    _compiled.clear()


def _re():
    import re

    return re


def __getattr__(name: str):
    """`re`'s other names (Pattern, Match, error, ...), from `re` itself."""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_re(), name)
