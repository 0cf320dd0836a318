"""Record files. A `.jsonl` file is a log: a later line with the same `id` supersedes an
earlier one and `{"id": X, "deleted": true}` removes X, so updating one record on the hot path
is one appended line, never a rewrite. `.json` files (global preferences) hold
`{"schema": 1, "learnings": [...]}` and are always rewritten whole (they stay small).

Whole-file rewrites go through a temp file in the same folder, fsync and rename: a crash leaves
the old file or the new one, never a mix. A line that does not parse is skipped and reported
with its file and line number; every other record still loads.
"""

from __future__ import annotations

import os
import sys

from learn_cli.text import jsonlite  # json.loads / dumps without `re` (the SessionStart hook)
from learn_cli.text.lite import namedtuple  # not collections' (text/lite.py)

from .locks import file_lock
from .paths import FILE_MODE, open_private

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms of every hook)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

MAX_LINE = 1 << 20  # a record line over 1 MiB is not ours: skip and report it


# namedtuple, not typing.NamedTuple: importing typing and building its classes cost ~2.5 ms
# of every hook call.
class BadLine(namedtuple("BadLine", "path line reason salvaged", defaults=(False,), module=__name__)):
    """A line that did not load (`salvaged`: the record on it still loaded, invalid UTF-8
    replaced)."""

    __slots__ = ()

    def describe(self) -> str:
        what = "read a damaged line" if self.salvaged else "skipped a corrupt line"
        return f"{self.path}:{self.line}: {what} ({self.reason})"


SALVAGED = "invalid UTF-8, loaded with replacement characters"


# records: id -> record, in first-seen order; bad: list[BadLine]; lines: non-empty lines read;
# superseded: lines that a later line replaced or deleted.
Loaded = namedtuple("Loaded", "records bad lines superseded", module=__name__)


def fold_loads() -> Callable:
    """The parser of a compaction, which reads a log's records only to fold it (ids,
    tombstones) and writes back the lines as read: orjson's, ~2x faster, once a whole-store
    command has imported it (never imported here: the hooks do not load it), the standard
    library's for a line orjson refuses (NaN, a lone surrogate), so the same lines parse. Not
    for records written back: orjson reads an integer beyond 64 bits as a float."""
    fast = sys.modules.get("orjson")
    return jsonlite.loads if fast is None else _tolerant(fast.loads)


def fast_loads() -> Callable:
    """orjson's `loads`, for a whole-store command (promote, prune, import) that parses every
    record: ~2x the standard library's; the standard library's when orjson is missing."""
    try:
        import orjson
    except ImportError:  # pragma: no cover
        return jsonlite.loads
    return orjson.loads


BULK_SWITCH = 5_000  # texts parsed by the standard library before orjson is worth importing


def bulk_loads() -> Callable:
    """The parser of a command that may read a few records or every one (stats, graph, show):
    the standard library's for its first BULK_SWITCH texts, then orjson's. orjson parses a
    record in ~4 µs against ~10, but importing it costs ~90 M instructions (~35 ms: it imports
    uuid, dataclasses, datetime and enum), which only ~6,000 parses repay: on a home of a
    thousand learnings it was 40 % of `learn stats`. A text orjson refuses (NaN, a lone
    surrogate) goes to the standard library, so every text parses as `json.loads` parses it."""
    fast = sys.modules.get("orjson")
    if fast is not None:
        return _tolerant(fast.loads)
    parsed = 0
    current = jsonlite.loads

    def loads(text):
        nonlocal parsed, current
        parsed += 1
        if parsed == BULK_SWITCH:
            import orjson

            current = _tolerant(orjson.loads)
        return current(text)

    return loads


def _tolerant(fast_loads: Callable) -> Callable:
    """orjson's `loads`, and the standard library's for what it refuses."""

    def loads(text):
        try:
            return fast_loads(text)
        except ValueError:
            return jsonlite.loads(text)

    return loads


def dumps(rec: dict) -> str:
    return jsonlite.dumps(rec, ensure_ascii=False, separators=(",", ":"))


def exact_dumps() -> Callable[[dict], str]:
    """`dumps`, through orjson once a whole-store command has imported it (never imported
    here: the hooks do not load it): ~10x faster (a line of promote's and prune's thousands of
    decisions cost ~50,000 instructions in `json`'s encoder), and the same text to the byte,
    which is checked: orjson refuses an integer beyond 64 bits and a lone surrogate, writes
    NaN and infinities as `null`, and a float under 1e-4 as `0.0000…` or with a one-digit
    exponent (`1e-5`, where `json` writes `1e-05`): a line showing `null`, `0.0000` or such an
    exponent is dumped by `json` again (tests/test_jsonl_dumps.py holds the two equal)."""
    fast = sys.modules.get("orjson")
    if fast is None:
        return dumps
    from learn_cli.text import rx

    fast_dumps, short_exponent = fast.dumps, rx.compile(rb"\de-\d(?!\d)").search

    def exact(rec: dict) -> str:
        try:
            raw = fast_dumps(rec)
        except TypeError:  # orjson.JSONEncodeError: a big integer, a lone surrogate, ...
            return dumps(rec)
        if b"null" in raw or b"0.0000" in raw or (b"e-" in raw and short_exponent(raw)):
            return dumps(rec)
        return raw.decode()

    return exact


def utf8(text: str) -> bytes:
    """Text as UTF-8, whatever it holds: a lone surrogate (from argv bytes that were not UTF-8,
    or a JSON "\\ud800" escape) becomes U+FFFD instead of failing the write."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return no_surrogates(text).encode("utf-8")


def no_surrogates(text: str) -> str:
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def load(path: Path, loads: Callable = jsonlite.loads) -> Loaded:
    """Read a record file; a missing file is an empty one."""
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return Loaded({}, [], 0, 0)
    if str(path).endswith(".json"):
        return _load_doc(path, data, loads)
    return parse_log(str(path), data, loads)


def parse_log(name: str, data: bytes, loads: Callable = jsonlite.loads, raw_lines: dict | None = None) -> Loaded:
    """The records of a log's bytes. With `raw_lines`, a dict, it also gets each live record's
    line as it is in the file (those that parsed cleanly): a rewrite that leaves a record as it
    was writes that line again instead of dumping the record (`lines_of`)."""
    records: dict = {}
    bad: list = []
    lines = superseded = 0
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        lines += 1
        rec, problem = _parse_line(raw, loads)
        if problem:
            bad.append(BadLine(name, lineno, problem, rec is not None))
        if rec is None:
            continue
        rid = rec["id"]
        if rid in records:
            superseded += 1
        if rec.get("deleted") is True:
            if records.pop(rid, None) is not None:
                superseded += 1
            if raw_lines is not None:
                raw_lines.pop(rid, None)
            continue
        records[rid] = rec
        if raw_lines is not None:
            if problem:
                raw_lines.pop(rid, None)
            else:
                raw_lines[rid] = raw
    return Loaded(records, bad, lines, superseded)


def lines_of(records: dict, raw_lines: dict, texts: dict | None = None) -> bytes:
    """A log's body holding `records` (id -> record): each record's compact JSON from `texts`
    (id -> the text already dumped for it), else its line as read (`raw_lines`, from parse_log),
    else dumped now. Reusing the lines read spares a json.dumps of every record a compaction or
    a rewrite did not change (most of their cost)."""
    texts = texts or {}
    out = []
    for rid, rec in records.items():
        text = texts.get(rid)
        if text is not None:
            out.append(utf8(text))
        else:
            raw = raw_lines.get(rid)
            out.append(raw.rstrip(b"\r") if raw is not None else utf8(dumps(rec)))
    return b"".join(line + b"\n" for line in out)


def _parse_line(raw: bytes, loads: Callable) -> tuple[dict | None, str | None]:
    """(the record on a line or None, what is wrong with the line or None)."""
    if len(raw) > MAX_LINE:
        return None, f"line longer than {MAX_LINE} bytes"
    problem = None
    try:
        rec = loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        rec = _salvage(raw, loads)
        if rec is None:
            return None, f"not JSON ({(str(exc).splitlines() or [''])[0][:60]})"
        problem = SALVAGED
    if not isinstance(rec, dict):
        return None, "not a JSON object"
    if not isinstance(rec.get("id"), str) or not rec["id"]:
        return None, "record without an id"
    return rec, problem


def _salvage(raw: bytes, loads: Callable):
    """A record whose only fault is a few bytes that are not UTF-8 (a disk error, a hand edit
    in another encoding): everything else of it is still readable, so it still loads."""
    try:
        raw.decode("utf-8")
        return None  # valid text: the fault is in the JSON itself
    except UnicodeDecodeError:
        pass
    try:
        return loads(raw.decode("utf-8", "replace"))
    except (ValueError, UnicodeDecodeError):
        return None


def _load_doc(path: Path, data: bytes, loads: Callable) -> Loaded:
    if not data.strip():
        return Loaded({}, [], 0, 0)
    try:
        doc = loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        found = _salvage_doc(data)
        reason = f"not JSON ({str(exc)[:60]}); {len(found)} complete records before the damage still load"
        return Loaded(found, [BadLine(str(path), 1, reason)], 1, 0)
    items = doc.get("learnings") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        return Loaded({}, [BadLine(str(path), 1, "no 'learnings' list")], 1, 0)
    records: dict = {}
    bad = []
    for n, rec in enumerate(items, 1):
        if isinstance(rec, dict) and isinstance(rec.get("id"), str) and rec["id"]:
            records[rec["id"]] = rec
        else:
            bad.append(BadLine(str(path), n, f"entry {n} is not a record"))
    return Loaded(records, bad, len(items), 0)


def _salvage_doc(data: bytes) -> dict:
    """The records of a damaged `{"learnings": [...]}` document that are still whole: read one
    by one from the start of the list up to the first damage (a cut file, a bad byte)."""
    text = data.decode("utf-8", "replace")
    start = text.find("[", max(text.find('"learnings"'), 0))
    import json

    decoder = json.JSONDecoder()
    records: dict = {}
    at = start + 1 if start >= 0 else len(text)
    while at < len(text):
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
        try:
            item, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            break
        if not isinstance(item, dict):
            break
        if isinstance(item.get("id"), str) and item["id"]:
            records[item["id"]] = item
    return records


def set_aside(path: Path, data: bytes) -> None:
    """Keep bytes that a rewrite is about to drop in `<file>.corrupt` (appended, synced)."""
    if not data:
        return
    fd = open_private(os.fspath(path) + ".corrupt", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        _write_all(fd, data if data.endswith(b"\n") else data + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def append(path: Path, records: Iterable[dict], texts: list[str] | None = None) -> None:
    """Append records (or tombstones) to a log. The caller holds the file's lock.

    Whole lines in one write, all or nothing: when the write fails or falls short (a full
    disk, a file size limit, the hook's deadline) the file is cut back to where it was, so no
    half line is left behind. A half line that a killed writer left at the end is cut off first
    (kept in `<file>.corrupt`), so it never ends up inside the file. `texts`: the records'
    compact JSON when the caller has dumped them already (it gives the same text to the index)."""
    payload = utf8("".join(t + "\n" for t in (texts if texts is not None else map(dumps, records))))
    if not payload:
        return
    fd = open_private(path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            size, glue = mend_tail(fd, size, path, _whole_record)
            payload = glue + payload
        try:
            _write_all(fd, payload)  # one write; the rest of a short one meets the real error (EFBIG, ENOSPC)
        except OSError as exc:
            _truncate_quietly(fd, size)
            raise _named(exc, path) from None
        except BaseException:
            _truncate_quietly(fd, size)
            raise
    finally:
        os.close(fd)


TAIL_CHUNK = 1 << 16


def mend_tail(fd: int, size: int, path, whole: Callable[[bytes], bool]) -> tuple[int, bytes]:
    """The last line of a log has no newline: a writer was killed while appending it. A line
    that `whole` accepts only lacks its newline (returned as the glue to write first); any other
    is set aside in `<file>.corrupt` and cut off. The caller holds the file's lock (so the
    writer of that line is gone). Returns (the file's size now, glue)."""
    start = size
    while start > 0:  # back to the newline before the last line
        at = max(0, start - TAIL_CHUNK)
        chunk = os.pread(fd, start - at, at)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            start = at + cut + 1
            break
        start = at
    tail = os.pread(fd, size - start, start)
    if whole(tail):
        return size, b"\n"
    set_aside(path, tail)
    os.ftruncate(fd, start)
    return start, b""


def _whole_record(line: bytes) -> bool:
    rec, problem = _parse_line(line, jsonlite.loads)
    return rec is not None and not problem


def _named(exc: OSError, path) -> OSError:
    """The error with the file it is about (os.write does not say), for a one-line message."""
    if exc.filename:
        return exc
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def _truncate_quietly(fd: int, size: int) -> None:
    try:
        os.ftruncate(fd, size)
    except OSError:
        pass  # the reader skips a cut last line; nothing more can be done here


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def tombstone(rid: str) -> dict:
    return {"id": rid, "deleted": True}


def rewrite(path: Path, records: Iterable[dict], durable: bool = True) -> None:
    """Replace the file's content atomically (temp file, fsync, rename, fsync folder)."""
    if str(path).endswith(".json"):
        import json

        body = json.dumps({"schema": 1, "learnings": list(records)}, ensure_ascii=False, indent=1) + "\n"
    else:
        body = "".join(dumps(r) + "\n" for r in records)
    atomic_write(path, utf8(body), durable)


def read_bytes(path) -> bytes:
    """A file's bytes (Path.read_bytes without pathlib: the store takes paths as strings too)."""
    with open(path, "rb") as fh:
        return fh.read()


def atomic_write(path: Path, data: bytes, durable: bool = True, mode: int = FILE_MODE,
                 sync_folder: bool = True) -> None:
    """Replace a file's content: a temp file beside it, written, fsynced (`durable`), renamed
    onto it, and the folder fsynced (`durable` and `sync_folder`: without it a crash may undo
    the rename, leaving the old content, never a mix or an empty file)."""
    path = os.fspath(path)
    fd, tmp = _temp_beside(path)
    try:
        os.fchmod(fd, mode)
        _write_all(fd, data)
        if durable:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
        if durable and sync_folder:
            _fsync_dir(os.path.dirname(path) or ".")
    except BaseException as exc:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _named(exc, path) from None
        raise


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new private temp file in the target's folder (tempfile.mkstemp without importing
    tempfile, which costs ~2 ms on every hook call)."""
    while True:
        folder, name = os.path.split(path)
        tmp = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return open_private(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL), tmp
        except FileExistsError:
            continue


def _fsync_dir(folder: Path) -> None:
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def compact(path: Path, loads: Callable = jsonlite.loads) -> tuple[int, int]:
    """Fold a log to one line per live record. Returns (lines before, lines after).

    Lines that do not parse are kept verbatim, so compaction never drops data a person may
    still want to repair by hand. They go first: a damaged line whose record still loaded
    must stay older than that record's later versions, or it would win on the next read.
    """
    with file_lock(path):
        return compact_locked(path, loads)


def compact_locked(path: Path, loads: Callable = jsonlite.loads) -> tuple[int, int]:
    """compact() for a caller that holds the file's lock."""
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return 0, 0
    raw: dict = {}
    loaded = parse_log(str(path), data, loads, raw)
    if not loaded.superseded:
        return loaded.lines, loaded.lines
    raw_lines = data.split(b"\n")
    kept_bad = b"".join(raw_lines[b.line - 1] + b"\n" for b in loaded.bad)
    # The folder is not fsynced: a crash that undoes the rename leaves the log as it was, the
    # same records (prune compacts hundreds of logs: one fsync each instead of two).
    atomic_write(path, kept_bad + lines_of(loaded.records, raw), sync_folder=False)
    return loaded.lines, len(loaded.records) + len(loaded.bad)
