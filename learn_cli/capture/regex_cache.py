"""Compiled regular expressions kept on disk for the hook processes, as `.pyc` files keep
compiled modules.

`learn capture` runs on every tool call of the agent, and Python compiles regular expressions
in Python code: the ~50 patterns of classification, keys and redaction took ~8 ms of each
hook process (a quarter of its time), every time, because `re`'s cache dies with the process.
The work that costs is parsing the pattern and generating SRE code; building the pattern
object from that code (`_sre.compile`, in C) costs microseconds. So a hook process serves
`re`'s compilations from a file of generated code (`global/regex-cache`, in the store home),
parses only patterns it has not seen and adds them to the file at exit. The file holds no
pattern text, only a digest of each pattern beside its code: the redactor's patterns name the
markers of secrets (`-----BEGIN`, `github_pat_`), which have no business on disk either.

Safe by construction: the file is keyed by the interpreter's exact version and SRE's magic
number (another Python ignores it); `_sre.compile` validates code before using it; anything
unexpected (no `_sre`, a damaged file, a changed private API) falls back to `re`'s own
compilation. The hook entry points install it and save what they added; `learn recall`'s fast
path (which agents run) reads it and adds its own few patterns to a file the hooks made (never
creating one); the other commands use `re` untouched.

It serves `text.rx` (the hook path's modules compile through it) and, once patched, `re`
itself. A tool event installs it for `text.rx` alone and imports no `re` at all (with `enum`
and `re`'s own modules, ~13 M instructions, a third of a bare interpreter's start) unless a
pattern is missing: parsing one imports `re`, and then `re` is served from the file too.

Each entry is kept marshalled on its own and decoded when its pattern is compiled: a hook
uses a few dozen of the file's entries, and decoding all of them (~240 KB of code lists)
took ~2 ms of every hook call, more than the compilations it saved.
"""

from __future__ import annotations

import marshal
import os
import sys

from learn_cli.text import rx

try:
    import _sre
except ImportError:  # pragma: no cover - not CPython
    _sre = None

FILE_NAME = "regex-cache"
MAX_ENTRIES = 500  # the hooks compile ~50 fixed patterns; a pattern built from data is not kept
_FORMAT = 2  # 2: each entry marshalled on its own (1 held the decoded tuples)
_TAG = f"{_FORMAT}:{sys.implementation.cache_tag}:{sys.hexversion}:{getattr(_sre, 'MAGIC', 0)}"
_UNCACHED_FLAGS = rx.DEBUG | rx.TEMPLATE

_state: dict = {"path": None, "original": None, "entries": {}, "added": False, "compiled": {}}


def install(path: str, patch: bool = True) -> None:
    """Serve this process's regex compilations from the cache file at `path` (a process that
    runs the hooks for several homes, like the tests, switches files): those of `text.rx`,
    and with `patch` those of `re` too (`re` is imported then). The hooks install it without
    `patch`: their modules compile through `text.rx`, and `re` is patched (patch()) only when
    a pattern the cache lacks, or another module, imports it."""
    if _sre is None:
        return
    if _state["path"] != path:
        if _state["path"] is not None:
            save()
        _state.update(path=path, entries=_read(path), added=False)
        rx.source = _serve
    if patch or "re" in sys.modules:  # imported already (an agent's adapter): served from the file too
        _patch()


def install_for_home(home: str | None, patch: bool = True) -> None:
    """install() with the cache file of the store at `home` (store.paths.home_dir's rules);
    nothing when that cannot be: it is only a cache, everything works without it."""
    from learn_cli.store.paths import GLOBAL_DIR, home_dir

    try:
        install(os.path.join(home_dir(home), GLOBAL_DIR, FILE_NAME), patch)
    except Exception:  # noqa: BLE001 - only a cache
        pass


def patch() -> None:
    """`re`'s compilations from the installed cache too (imports `re`): for work beyond the tool
    events, whose modules use `re` itself (end-of-session work, the Store's digest)."""
    if _state["path"] is not None:
        _patch()


def _patch() -> None:
    if _state["original"] is None:
        import re

        _state["original"] = re._compile
        re._compile = _compile


def uninstall() -> None:
    """Back to `re`'s own compilation (tests; the hooks simply exit)."""
    if _state["original"] is not None:
        sys.modules["re"]._compile = _state["original"]
    rx.source = None
    rx.forget()
    _state.update(path=None, original=None, entries={}, added=False, compiled={})


def __getattr__(name: str):
    """`_parser` and `_compiler`, `re`'s own, imported when a pattern must be parsed."""
    if name in ("_parser", "_compiler"):
        import importlib

        return importlib.import_module(f"re.{name}")
    raise AttributeError(name)


def save(create: bool = True) -> None:
    """Write the cache if this process compiled patterns it did not hold (atomically: the hooks
    of parallel tool calls may save at the same moment; the last one wins, all are valid);
    without `create`, only into a cache file that exists (the hooks made it)."""
    path = _state["path"]
    if not path or not _state["added"] or not (create or os.path.exists(path)):
        return
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")  # what a killed write leaves, doctor and prune clear
    try:
        from learn_cli.store.paths import open_private

        fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)  # never through a planted symlink
        with os.fdopen(fd, "wb") as fh:
            marshal.dump({"tag": _TAG, "entries": _state["entries"]}, fh)
        os.replace(tmp, path)
        _state["added"] = False
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _read(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            data = marshal.loads(fh.read())  # marshal.load(fh) reads through Python: 20x slower
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(data, dict) or data.get("tag") != _TAG or not isinstance(data.get("entries"), dict):
        return {}
    return data["entries"]


def _compile(pattern, flags):
    """re._compile, once patched."""
    flags = int(flags)  # a re.RegexFlag
    if type(pattern) is not str or flags & _UNCACHED_FLAGS:
        return _state["original"](pattern, flags)
    return _serve(pattern, flags) or _state["original"](pattern, flags)


def _serve(pattern: str, flags: int):
    """The pattern object of (pattern, flags) from the cache (parsed and added when missing),
    or None for `re` to compile (and raise its own errors): text.rx's source."""
    if flags & _UNCACHED_FLAGS:
        return None
    key = (pattern, flags)
    compiled = _state["compiled"].get(key)
    if compiled is None:
        try:
            compiled = _build(key)
        except Exception:  # noqa: BLE001 - any surprise: re compiles it (and raises its own errors)
            return None
        _state["compiled"][key] = compiled
    return compiled


def _build(key: tuple[str, int]):
    from learn_cli.text.hashes import sha1_hex

    digest = sha1_hex(f"{key[1]}:{key[0]}".encode("utf-8", "surrogatepass"))
    entry = _state["entries"].get(digest)
    if entry is None:
        from learn_cli.store.deadline import held

        with held():  # may import `re` (a tool event has not): never cut short by the hard stop, which may need it
            entry = _generate(*key)
        if len(_state["entries"]) < MAX_ENTRIES:
            _state["entries"][digest] = marshal.dumps(entry)
            _state["added"] = True
    elif type(entry) is bytes:
        entry = marshal.loads(entry)
    final_flags, code, groups, groupindex, indexgroup = entry
    return _sre.compile(key[0], final_flags, code, groups, groupindex, indexgroup)


def _generate(pattern: str, flags: int) -> tuple:
    """What re._compiler.compile passes to _sre.compile, as marshal can store it."""
    from re import _compiler, _parser

    parsed = _parser.parse(pattern, flags)
    code = _compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    # int(): opcodes are int subclasses, which marshal does not store
    return (int(flags | parsed.state.flags), [int(op) for op in code], int(parsed.state.groups - 1),
            {str(name): int(index) for name, index in groupindex.items()}, tuple(indexgroup))
