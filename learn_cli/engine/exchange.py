"""`learn export` / `learn import`: the portable JSON format and merging it into a store.

Format (version 1.x):

    {"format": "self-learning-agent", "version": "1.0.0", "exported": "<ISO-8601 UTC>",
     "global": [record, ...],
     "projects": {"<project id>": {"name", "root", "remote", "learnings": [record, ...]}, ...},
     "archived": [record + "archived_from": "global" | "<project id>", ...]}

Every project that has a learning (live or archived) is listed under `projects`, so an
archived entry's `archived_from` always names a listed project (or "global").

Both directions stream, so memory does not grow with the store or the file: export writes a
record at a time from one ordered query per section and per project; import reads the entries
one by one inside each array (`_JsonStream`), and writes each target file once, indexing its
rows from the records in hand (`Index.load_rows`) instead of reading the file back. For a large
file, the redaction checks and the index writes run in worker processes (`_Helpers`).

Import is untrusted input (SPEC §4): a size limit, the parser's nesting limit, the shape of
each section, and every entry through `coerce_record` (types, caps); text is redacted again;
project ids from the file are folder names only when they are 12 lower-case hex digits, else
a safe id is derived from the project's remote/root/name; names like `../../etc` are display
names, never paths. `deleted` and `updated` are dropped from entries (a `deleted` line would
act as a tombstone in the log). Nothing is written unless the whole file reads: new files are
staged in a folder of the home and renamed into place at the end. Unless the user trusts the
file (`trust`), entries arrive pending and change no existing learning (`distrust`).

Merging, per target file (a project's learnings or archive, a global file), in this order:
- **duplicate** (skipped): the entry's id is already in the store, or was merged before (it is
  in a record's `merged_from`), or a record with the same key has the same text (context,
  error and fix, compared after normalising case, spacing and punctuation). So importing a
  file twice adds nothing.
- **conflict**: engine.conflicts finds the entry and a live record of the same scope give
  incompatible advice: the entry is added with status `conflicted`, the record is flagged too.
- **merged** (frequency updated): same key with different text, or a near-duplicate
  (engine.merge.similarity ≥ NEAR_DUPLICATE) of a record of that file: engine.merge.merge
  (frequencies summed, projects unioned, better text); the entry's id joins `merged_from`.
- **new**: everything else; ids are kept (a clash with a different learning gets a new id).
- **skipped**: entries `coerce_record` rejects, with the reason.
The entries of a target are merged together once none can follow: a project's learnings at
the end of its project, the global files at the end of `global`, the archives at the end.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import BinaryIO

from learn_cli.store.record import LIVE_STATUSES, TYPES

FORMAT = "self-learning-agent"
VERSION = "1.0.0"
MAX_IMPORT_BYTES = 256 * 1024 * 1024
NEAR_DUPLICATE = 0.85
MAX_MERGED_FROM = 200
REASONS_KEPT = 20
TEXT_FIELDS = ("context", "error", "fix", "command", "fix_command", "project")
SECTIONS = ("global", "projects", "archived")
_SEP = "\n\x00\n"
_LIVE = LIVE_STATUSES


class ExchangeError(Exception):
    """The file cannot be imported at all; the message says why in one line."""


# ---------------------------------------------------------------- export


@dataclass
class ExportResult:
    global_count: int = 0
    archived_count: int = 0
    project_counts: dict = field(default_factory=dict)  # pid -> live learnings
    names: dict = field(default_factory=dict)  # pid -> the name written for it
    nbytes: int = 0

    @property
    def total(self) -> int:
        return self.global_count + self.archived_count + sum(self.project_counts.values())


# Records in the order the export has always used: by `created` (as Python's str() of it,
# "" when missing or empty), then id, then where the index holds them.
_ORDER = ("CASE json_type(data, '$.created') WHEN 'text' THEN json_extract(data, '$.created') "
          "ELSE export_created(json_type(data, '$.created'), json_extract(data, '$.created')) END, id, rowid")


def write_export(store, out: BinaryIO, loads: Callable, now: str | None = None) -> ExportResult:
    """Write the whole store to `out` as one export document, a record at a time (one ordered
    query per section and per project, one orjson.dumps per record): memory stays flat
    whatever the store's size. The bytes are those of orjson.dumps(document, OPT_INDENT_2)."""
    from learn_cli.store.record import now_iso

    store.refresh(loads=loads)
    store.index.db.create_function("export_created", 2, _created_order, deterministic=True)
    known = store.projects()
    result = ExportResult()
    doc = _IndentedWriter(out)
    doc.write(b"{")
    for n, (name, value) in enumerate((("format", FORMAT), ("version", VERSION), ("exported", now or now_iso()))):
        doc.key(1, name, first=n == 0)
        doc.value(value)
    doc.key(1, "global")
    result.global_count = doc.records(1, _exported(store, "scope = 'global' AND pid = ''", (), loads))
    doc.key(1, "projects")
    pids = [pid for (pid,) in store.index.db.execute(
        "SELECT DISTINCT pid FROM learnings WHERE scope IN ('project', 'archive') AND pid != '' ORDER BY pid")]
    doc.write(b"{" if pids else b"{}")
    for n, pid in enumerate(pids):
        info = known.get(pid) or {}
        result.names[pid] = info.get("name") or pid
        doc.key(2, pid, first=n == 0)
        _write_project(doc, result, pid, info, _exported(store, "scope = 'project' AND pid = ?", (pid,), loads))
    if pids:
        doc.end(1, b"}")
    doc.key(1, "archived")
    result.archived_count = doc.records(1, _exported(store, "scope IN ('archive', 'global-archive')", (), loads,
                                                     archived=True))
    doc.write(b"\n}\n")
    result.nbytes = doc.nbytes
    return result


def _write_project(doc: _IndentedWriter, result: ExportResult, pid: str, info: dict, records: Iterator) -> None:
    doc.write(b"{")
    fields = (("name", result.names[pid]), ("root", info.get("root") or ""),
              ("remote", _redact(info.get("remote")) if info.get("remote") else None))
    for n, (name, value) in enumerate(fields):
        doc.key(3, name, first=n == 0)
        doc.value(value)
    doc.key(3, "learnings")
    result.project_counts[pid] = doc.records(3, records)
    doc.end(2, b"}")


def _exported(store, where: str, args: tuple, loads: Callable, archived: bool = False) -> Iterator[dict]:
    """The records of one section or project as they are exported, in order."""
    rows = store.index.db.execute(f"SELECT scope, pid, data FROM learnings WHERE {where} ORDER BY {_ORDER}", args)
    for scope, pid, data in rows:
        rec = loads(data)
        rec.pop("updated", None)
        if archived:
            rec["archived_from"] = pid if scope == "archive" else "global"
        yield _recheck_secrets(rec)


def _created_order(kind, value) -> str:
    """str(rec.get("created") or "") for a `created` that is not text (hand edits only)."""
    if kind in ("array", "object"):
        value = json.loads(value)
    elif kind == "true":
        value = True
    return str(value or "")


def _recheck_secrets(rec: dict) -> dict:
    """Defence in depth on the way out, at a fraction of the cost of a full redaction. Every
    way into the store redacts (capture, `learn add`, import), so a stored record holds no
    secret that this redactor finds. Only a record whose text shows the mark of a credential
    (`_may_hold_secret`) is redacted again: that covers the usual ones in records written by
    an older redactor or edited by hand."""
    fields = [rec[f] for f in TEXT_FIELDS if isinstance(rec.get(f), str) and rec[f]]
    tags = rec.get("tags")
    if isinstance(tags, list):
        fields.extend(t for t in tags if isinstance(t, str))
    if fields and _may_hold_secret(_SEP.join(fields)):
        redact_record(rec)
    return rec


# What the common credentials start with or sit beside: a key block, GitHub, GitLab, AWS,
# OpenAI/Anthropic, Slack, Google and JWT tokens, `*_SECRET=` labels. Few and literal on
# purpose: each costs one `in` per record, where the redactor's whole rule set costs ~30 µs.
_SECRET_MARKERS = ("PRIVATE KEY", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_", "glpat-", "AKIA", "ASIA",
                   "sk-", "xox", "AIza", "eyJ", "ecret", "ECRET")


def _may_hold_secret(text: str) -> bool:
    return ("://" in text and "@" in text) or any(m in text for m in _SECRET_MARKERS)


class _IndentedWriter:
    """Writes a document piece by piece exactly as orjson.dumps(doc, OPT_INDENT_2) would."""

    def __init__(self, out: BinaryIO):
        import orjson

        self.out = out
        self.dumps = orjson.dumps
        self.indent = orjson.OPT_INDENT_2
        self.nbytes = 0

    def write(self, data: bytes) -> None:
        self.out.write(data)
        self.nbytes += len(data)

    def key(self, depth: int, name: str, first: bool = False) -> None:
        self.write((b"\n" if first else b",\n") + b"  " * depth + self.dumps(name) + b": ")

    def value(self, value) -> None:
        self.write(self.dumps(value))

    def end(self, depth: int, bracket: bytes) -> None:
        """Close a non-empty object or array that opened at `depth`."""
        self.write(b"\n" + b"  " * depth + bracket)

    def records(self, depth: int, records: Iterable[dict]) -> int:
        """A list of records as the value at `depth`; returns how many. A record's own lines
        are indented by `pad` (JSON text holds no raw line break but between tokens)."""
        pad = b"\n" + b"  " * (depth + 1)
        count = 0
        for rec in records:
            self.write((b",", b"[")[count == 0] + pad + self._dumps(rec).replace(b"\n", pad))
            count += 1
        if count:
            self.end(depth, b"]")
        else:
            self.write(b"[]")
        return count

    def _dumps(self, rec: dict) -> bytes:
        try:
            return self.dumps(rec, option=self.indent)
        except TypeError:  # orjson.JSONEncodeError: an integer past 64 bits (a hand edit)
            return json.dumps(rec, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------- reading an import


class _JsonStream:
    """A JSON document read a value at a time from a file read in chunks, so that a large
    export is never whole in memory: `members` and `items` walk an object or an array, `value`
    parses one whole value (an entry) with the standard library's C scanner. A value cut by the
    end of a chunk is parsed again once more of the file is read."""

    CHUNK = 1 << 20

    def __init__(self, fh: BinaryIO, name: str, limit: int = MAX_IMPORT_BYTES):
        self.fh = fh
        self.name = name
        self.limit = limit
        self.scan = json.JSONDecoder(parse_constant=_no_constant).scan_once
        self.seek(0)

    # -- position ------------------------------------------------------------------------
    def seek(self, offset: int) -> None:
        self.fh.seek(offset)
        self.fed = offset  # bytes of the file handed to the decoder
        self.text, self.at, self.eof = "", 0, False
        self.decoder = codecs.getincrementaldecoder("utf-8")()

    def offset(self, at: int | None = None) -> int:
        """Where in the file (bytes) the next value, or text[at], starts."""
        if at is None:
            self.peek()
            at = self.at
        return self.fed - len(self.decoder.getstate()[0]) - _utf8_len(self.text[at:])

    def _more(self, least: int = 0) -> bool:
        """Read at least `least` (and at least a chunk) more of the file; False at its end."""
        if self.eof:
            return False
        data = self.fh.read(max(least, self.CHUNK))
        self.fed += len(data)
        if self.fed > self.limit:
            raise ExchangeError(f"{self.name} is over the import limit of {_mb(self.limit)}")
        try:
            self.text = self.text[self.at:] + self.decoder.decode(data, final=not data)
        except UnicodeDecodeError:
            raise ExchangeError(f"{self.name} is not JSON (invalid UTF-8 near byte {self.fed - len(data)})") from None
        self.at = 0
        self.eof = not data
        return True

    # -- structure -------------------------------------------------------------------------
    def peek(self) -> str:
        """The next character that is not blank ('' at the end of the file)."""
        while True:
            self.at = _BLANKS.match(self.text, self.at).end()
            if self.at < len(self.text):
                return self.text[self.at]
            if not self._more():
                return ""

    def take(self, allowed: str, expected: str) -> str:
        char = self.peek()
        if not char or char not in allowed:
            raise self._not_json(f"Expecting {expected}")
        self.at += 1
        return char

    def members(self) -> Iterator[str]:
        """The names of an object's members; the caller reads each value before the next."""
        self.take("{", "an object")
        if self.peek() == "}":
            self.at += 1
            return
        while True:
            if self.peek() != '"':
                raise self._not_json("Expecting property name enclosed in double quotes")
            name = self.value()
            self.take(":", "':' delimiter")
            yield name
            if self.take(",}", "',' delimiter") == "}":
                return

    def items(self) -> Iterator:
        """An array's values, one at a time."""
        self.take("[", "an array")
        if self.peek() == "]":
            self.at += 1
            return
        while True:
            yield self.value()
            if self.take(",]", "',' delimiter") == "]":
                return

    def value(self):
        """The next whole value."""
        self.peek()
        while True:
            try:
                value, end = self.scan(self.text, self.at)
            except StopIteration as stop:  # no value starts at stop.value (a nested one, maybe cut)
                if stop.value >= len(self.text) - _CUT and self._more(len(self.text) - self.at):
                    continue
                raise self._not_json("Expecting value", stop.value) from None
            except RecursionError:
                raise ExchangeError(f"{self.name}: nested too deeply to be an export") from None
            except ValueError as exc:
                if _maybe_cut(exc, len(self.text)) and self._more(len(self.text) - self.at):
                    continue  # the value runs on past what is read: read as much again, retry
                raise self._not_json(getattr(exc, "msg", str(exc)), getattr(exc, "pos", self.at)) from None
            if end >= len(self.text) - _CUT and self._more():
                continue  # a number cut at the end of what is read (`2.` of `2.5`) may go on
            self.at = end
            return value

    def skip(self, depth: int = 3) -> None:
        """Read past the next value without keeping it (entries one by one)."""
        char = self.peek()
        if depth and char == "[":
            for _ in self.items():
                pass
        elif depth and char == "{":
            for _ in self.members():
                self.skip(depth - 1)
        else:
            self.value()

    def document(self):
        """The whole document as one value (only for files that are not exports)."""
        value = self.value()
        self.end()
        return value

    def end(self) -> None:
        if self.peek():
            raise self._not_json("Extra data after the document")

    def _not_json(self, what: str, at: int | None = None) -> ExchangeError:
        where = self.offset(self.at if at is None else at)
        return ExchangeError(f"{self.name} is not JSON ({what.removesuffix(' at')} at byte {where})")


_BLANKS = re.compile(r"[ \t\n\r]*")
_CUT = 16  # a parse error this close to the end of what is read may be a value cut there


def _maybe_cut(exc: ValueError, read: int) -> bool:
    """Whether a parse error may only mean that the value goes on past what is read."""
    msg, pos = getattr(exc, "msg", ""), getattr(exc, "pos", None)
    return pos is not None and (msg.startswith("Unterminated string") or pos >= read - _CUT)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def check_format(doc, name: str) -> str:
    """The export's version, or ExchangeError naming what makes it no export of ours."""
    if not isinstance(doc, dict):
        raise ExchangeError(f"{name} is not a learn export: the top level is a JSON {_kind(doc)}, not an object")
    fmt = doc.get("format")
    if fmt is None:
        raise ExchangeError(f'{name} is not a learn export: no "format" field (expected "{FORMAT}")')
    if fmt != FORMAT:
        raise ExchangeError(f'{name} is not a learn export: format {_short(fmt)} (expected "{FORMAT}")')
    version = doc.get("version")
    if not isinstance(version, str) or not re.fullmatch(r"\d+(\.\d+){0,2}", version):
        raise ExchangeError(f"{name}: missing or malformed version {_short(version)} (expected 1.x)")
    if version.split(".")[0] != VERSION.split(".")[0]:
        raise ExchangeError(f"{name}: unsupported export version {version} (this learn reads 1.x)")
    sections = [k for k in SECTIONS if k in doc]
    if not sections:
        raise ExchangeError(f'{name}: no "global", "projects" or "archived" section')
    return version


def _open_export(path: Path):
    """The export file opened for reading, or ExchangeError (missing, not a file, too big)."""
    name = Path(path).name
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise ExchangeError(f"{path}: no such file") from None
    except OSError as exc:
        raise ExchangeError(f"{path}: {exc.strerror or exc}") from None
    if not os.path.isfile(path):
        raise ExchangeError(f"{path}: not a regular file")
    if size > MAX_IMPORT_BYTES:
        raise ExchangeError(f"{name} is {_mb(size)}: over the import limit of {_mb(MAX_IMPORT_BYTES)}")
    try:
        return open(path, "rb")
    except OSError as exc:
        raise ExchangeError(f"{path}: {exc.strerror or exc}") from None


def _read_export(stream: _JsonStream, imp: _Importer) -> None:
    """Walk the document, handing each section to the importer as soon as it may be read:
    once the header says this is an export of ours, and `archived` after `projects` (its
    entries name projects of the file). A section met earlier is skipped and read again at
    the end (hand-made files only: `learn export` writes them in that order)."""
    name = stream.name
    if stream.peek() != "{":
        check_format(stream.document(), name)  # raises: not an object
    header: dict = {}
    seen, done, later = [], set(), {}
    for key in stream.members():
        if key not in SECTIONS:
            header[key] = stream.value()
        elif key in seen:
            imp.warnings.append(f'"{key}" appears twice (the second one is skipped)')
            stream.skip()
        elif _header_ready(header, key, name) and (key != "archived" or "projects" in done):
            seen.append(key)
            imp.begin(header["version"])
            imp.section(key, stream)
            done.add(key)
        else:
            seen.append(key)
            later[key] = stream.offset()
            stream.skip()
    stream.end()
    imp.begin(check_format({**header, **dict.fromkeys(seen)}, name))
    for key in SECTIONS:
        if key in later:
            stream.seek(later[key])
            imp.section(key, stream)


def _header_ready(header: dict, key: str, name: str) -> bool:
    """True once the format and version read so far are ours (ExchangeError when they are not)."""
    if "format" in header and ("version" in header or header["format"] != FORMAT):
        check_format({**header, key: None}, name)  # raises unless both are right
        return True
    return False


# ---------------------------------------------------------------- placing entries


@dataclass
class Incoming:
    """One entry of the file on its way into the store."""

    rec: dict
    target: Path
    scope: str  # project | archive | global | global-archive
    pid: str


@dataclass
class ImportReport:
    source: str
    version: str
    entries: int = 0  # entries in the file
    new: int = 0
    merged: int = 0
    duplicates: int = 0
    conflicts: int = 0
    skipped: int = 0
    reasons: list = field(default_factory=list)  # first REASONS_KEPT skip reasons
    warnings: list = field(default_factory=list)  # section-level problems
    conflict_pairs: list = field(default_factory=list)  # {incoming, existing, reason, incoming_text, existing_text}
    projects_created: list = field(default_factory=list)
    dry_run: bool = False

    @property
    def processed(self) -> int:
        return self.new + self.merged

    def skip(self, where: str, reason: str) -> None:
        self.skipped += 1
        if len(self.reasons) < REASONS_KEPT:
            self.reasons.append(f"{where}: {reason}")

    def as_json(self) -> dict:
        return {"source": self.source, "version": self.version, "entries": self.entries, "new": self.new,
                "merged": self.merged, "duplicates": self.duplicates, "conflicts": self.conflicts,
                "skipped": self.skipped, "processed": self.processed, "skipped_reasons": self.reasons,
                "warnings": self.warnings, "conflict_pairs": self.conflict_pairs[:100],
                "projects_created": self.projects_created, "dry_run": self.dry_run}


def import_file(store, path: Path, dry_run: bool = False, loads: Callable | None = None,
                trust: bool = False) -> ImportReport:
    """Read, validate and merge an export file into the store, entry by entry. Entries arrive
    untrusted (`distrust`) unless `trust`: the user vouches for the file."""
    loads = loads or _fast_loads()
    path = Path(path)
    with _open_export(path) as fh:
        helpers = _Helpers(store, os.fstat(fh.fileno()).st_size)  # forks first: no thread runs yet
        try:
            importer = _Importer(store, _display_name(path.name) or "import", dry_run, loads, helpers, trust)
            try:
                _read_export(_JsonStream(fh, path.name), importer)
                importer.settle()
                importer.merger.close()
            except BaseException:
                importer.abandon()
                raise
            return importer.finish()
        finally:
            helpers.close()


class _Importer:
    """Takes the sections of an export as they are read: checks each entry, places it in its
    target file, and has the merger merge a target once no more entries can come for it."""

    def __init__(self, store, source: str, dry_run: bool, loads: Callable, helpers: _Helpers,
                 trust: bool = False):
        self.store = store
        self.trust = trust
        self.now = _now()
        self.helpers = helpers
        self.queue: list = []  # entries (obj, where, place) and merges (callables) not done yet
        self.texts: list[str] = []  # the text of each entry in self.queue
        self.jobs: deque = deque()  # (redaction check, the queue it answers), oldest first
        self.origin = f"import:{_redact(source)}"[:200]  # every entry's `source`
        self.report = ImportReport(source, "", dry_run=dry_run)
        self.warnings = self.report.warnings
        self.projects: dict[str, dict] = {}  # safe pid -> {name, root, remote}
        self.pid_map: dict[str, str] = {}  # project id in the file -> safe pid
        self.receiving: set[str] = set()  # pids that entries went to
        self.lay = _Paths(store.layout)
        store.refresh(loads=loads)
        self.merger = _Merger(store, self.report, loads, None if dry_run else _Staging(store, helpers))
        self.merger.trusted = trust

    def begin(self, version: str) -> None:
        self.report.version = self.report.version or version

    def section(self, key: str, stream: _JsonStream) -> None:
        if key == "projects":
            if stream.peek() != "{":
                return self._wrong_section(key, stream.value(), "object")
            for raw_pid in stream.members():
                self.project(raw_pid, stream)
            return
        if stream.peek() != "[":
            return self._wrong_section(key, stream.value(), "list")
        if key == "global":
            for n, obj in enumerate(stream.items(), 1):
                self.entry(obj, f"global[{n}]", self._place_global)
            self._then(self.merger.close, self.store.layout.global_files())  # nothing more can come for them
            return
        for n, obj in enumerate(stream.items(), 1):
            origin = obj.get("archived_from") if isinstance(obj, dict) else None
            self.entry(obj, f"archived[{n}]", lambda rec, origin=origin, where=f"archived[{n}]":
                       self._place_archived(rec, origin, where))

    def _wrong_section(self, name: str, value, kind: str) -> None:
        if value is not None:
            self.warnings.append(f'"{name}" is a {_kind(value)}, not a {kind} (skipped)')

    def project(self, raw_pid: str, stream: _JsonStream) -> None:
        """One project of `projects`. Ours (a 12-hex id) streams; any other is read whole, as
        its safe id depends on fields that may come after its learnings."""
        where = f"projects[{_short(raw_pid)}]"
        if not (_is_pid(raw_pid) and stream.peek() == "{"):
            info = stream.value()
            if not isinstance(info, dict):
                self.warnings.append(f"{where}: not an object (skipped)")
                return
            pid = safe_project_id(raw_pid, info)
            learnings = info.get("learnings", [])
            self._entries(raw_pid, pid, where, learnings if isinstance(learnings, list) else [])
        else:
            pid, info = raw_pid, {}
            for key in stream.members():
                if key == "learnings" and stream.peek() == "[":
                    self._entries(raw_pid, pid, where, stream.items())
                else:
                    info[key] = stream.value()
        self.pid_map[raw_pid] = pid
        self.projects[pid] = _project_info(info, pid)
        if "learnings" in info and not isinstance(info["learnings"], list):
            self.warnings.append(f'{where}: "learnings" is not a list (skipped)')
        self._then(self.merger.close, [self.lay.learnings(pid)])

    def _entries(self, raw_pid: str, pid: str, where: str, entries: Iterable) -> None:
        for n, obj in enumerate(entries, 1):
            self.entry(obj, f"{where}[{n}]", lambda rec: self._place_project(rec, pid, raw_pid))

    def entry(self, obj, where: str, place: Callable[[dict], None]) -> None:
        """Queue an entry: its text goes to the redaction checks, in batches, and the entry is
        taken in once the answer for it is back (in file order)."""
        self.report.entries += 1
        self.queue.append((obj, where, place))
        self.texts.append(_entry_text(obj))
        if len(self.texts) >= self.helpers.batch:
            self.jobs.append((self.helpers.submit(self.texts), self.queue))
            self.queue, self.texts = [], []
            while len(self.jobs) > self.helpers.ahead:
                self._take(*self.jobs.popleft())

    def _then(self, step: Callable, *args) -> None:
        """Run `step` once every entry queued before it is taken in."""
        if self.queue or self.jobs:
            self.queue.append(lambda: step(*args))
        else:
            step(*args)

    def settle(self) -> None:
        """Take in every entry queued."""
        self.jobs.append((self.helpers.submit(self.texts), self.queue))
        self.queue, self.texts = [], []
        while self.jobs:
            self._take(*self.jobs.popleft())

    def _take(self, job, queue: list) -> None:
        dirty = self.helpers.result(job)
        n = 0
        for item in queue:
            if callable(item):
                item()
                continue
            obj, where, place = item
            rec = _accept(obj, where, self.report, n in dirty)
            n += 1
            if rec is not None:
                _finish(rec, self.origin)
                place(rec)  # the target follows the file's status; then the status is ours
                distrust(rec, self.now, self.trust)

    def _add(self, rec: dict, target: Path, scope: str, pid: str) -> None:
        self.receiving.add(pid)
        self.merger.add(Incoming(rec, target, scope, pid))

    def _place_project(self, rec: dict, pid: str, raw_pid: str) -> None:
        _remap_projects(rec, raw_pid, pid)
        if rec["status"] == "archived":
            return self._add(rec, self.lay.archive(pid), "archive", pid)
        if rec["status"] == "global":  # a promoted copy belongs to the global section
            rec["status"] = "active"
        self._add(rec, self.lay.learnings(pid), "project", pid)

    def _place_global(self, rec: dict) -> None:
        if rec["status"] == "archived":
            return self._add(rec, self.lay.global_archive, "global-archive", "")
        if rec["status"] not in ("global", "conflicted"):
            rec["status"] = "global"
        self._add(rec, self.store.global_file(rec), "global", "")

    def _place_archived(self, rec: dict, origin, where: str) -> None:
        rec["status"] = "archived"
        if origin == "global" or origin is None:
            return self._add(rec, self.lay.global_archive, "global-archive", "")
        pid = self.pid_map.get(str(origin)) or (origin if _is_pid(origin) else None)
        if pid is None:
            return self.report.skip(where, f"archived_from {_short(origin)} is not a project of this file")
        self.projects.setdefault(pid, {"name": _display_name(rec.get("project")) or pid, "root": "", "remote": None})
        _remap_projects(rec, str(origin), pid)
        self._add(rec, self.lay.archive(pid), "archive", pid)

    def finish(self) -> ImportReport:
        known = self.store.projects()
        created = sorted(pid for pid in self.projects if pid not in known and pid in self.receiving)
        self.report.projects_created = created
        if not self.report.dry_run:
            self.merger.staging.index(wait=True)  # so that noting the projects waits for no one
            _create_projects(self.store, self.projects, created)
            self.merger.write()
        return self.report

    def abandon(self) -> None:
        if self.merger.staging is not None:
            self.merger.staging.abandon()


class _Paths:
    """The layout's per-project paths, made once per project (not once per entry)."""

    def __init__(self, layout):
        self.layout = layout
        self.global_archive = layout.global_archive
        self.cache: dict[tuple, Path] = {}

    def learnings(self, pid: str) -> Path:
        return self._get("learnings", pid)

    def archive(self, pid: str) -> Path:
        return self._get("archive", pid)

    def _get(self, kind: str, pid: str) -> Path:
        path = self.cache.get((kind, pid))
        if path is None:
            path = self.cache[(kind, pid)] = getattr(self.layout, kind)(pid)
        return path


def _accept(obj, where: str, report: ImportReport, dirty: bool) -> dict | None:
    """coerce_record with redaction, then drop what an import must not carry in; None when
    skipped. `dirty`: redaction changes the entry's text (`_entry_text`)."""
    from learn_cli.store.record import coerce_record
    from learn_cli.text.redact import redact

    # Redact before capping (a cap could cut a private key's marker and leave its body).
    rec, reason = coerce_record(obj, clean=redact if dirty else None)
    if rec is None:
        report.skip(where, reason)
        return None
    if dirty or _was_cut(obj, rec):
        redact_record(rec)  # the capped text and tags once more, field by field
    for name in ("deleted", "updated", "archived_from"):
        rec.pop(name, None)
    tags = rec.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        rec.pop("tags")
    return rec


MAX_TRUSTED_FREQUENCY = 1000
_TIMES = ("created", "last_used", "low_since")


def distrust(rec: dict, now: datetime, trusted: bool = False) -> None:
    """What an import may not claim. Times are never in the future and counters are bounded;
    unless the user trusts the file (`learn import --trust`), a live entry arrives `pending`
    with one sighting, no credits and no evidence from elsewhere: it reaches no agent context
    (session digest, hook answers) and no `learn flush` until a local sighting confirms it
    (engine.knowledge / capture.learner activate it) or the user accepts it (`learn resolve
    ID --keep`)."""
    from learn_cli.store.record import now_iso, parse_iso

    for name in _TIMES:
        when = parse_iso(rec.get(name))
        if when is not None and when > now:
            rec[name] = now_iso(now.timestamp())
    for name, cap in (("frequency", MAX_TRUSTED_FREQUENCY), ("helped", MAX_TRUSTED_FREQUENCY),
                      ("not_helped", MAX_TRUSTED_FREQUENCY)):
        if isinstance(rec.get(name), int) and rec[name] > cap:
            rec[name] = cap
    if trusted:
        return
    if rec.get("status") in ("active", "global", "conflicted"):
        rec["status"] = "pending"
    rec["frequency"] = 1
    for name in ("helped", "not_helped", "evidence", "pre_conflict_status", "conflict_with", "helped_by"):
        rec.pop(name, None)


def is_untrusted_import(rec: dict) -> bool:
    """An imported learning still waiting for a local sighting or the user's word."""
    return rec.get("status") == "pending" and str(rec.get("source") or "").startswith("import:")


def accept_import(store, rid: str, keep: bool) -> dict | None:
    """`learn resolve ID --keep` on an untrusted import: it becomes live (global in a global
    file, active in a project); `--drop`: it is deleted. None when `rid` is not one."""
    found = store.get(rid)
    if found is None or not is_untrusted_import(found[1]):
        return None
    path, rec = found
    if not keep:
        store.remove(path, rec["id"])
        return rec
    status = "global" if path.parent == store.layout.global_dir else "active"
    return store.update(path, rec["id"], lambda cur: dict(cur, status=status))


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _entry_text(obj) -> str:
    """Every text of an entry that can be kept (its string fields and tags), joined for one
    redaction check: the common case, nothing secret, costs one call."""
    if not isinstance(obj, dict):
        return ""
    strings = [v for k, v in obj.items() if isinstance(v, str) and k not in _NOT_KEPT_AS_IS and v not in _TYPES]
    tags = obj.get("tags")
    if isinstance(tags, list):
        strings.extend(t for t in tags if isinstance(t, str))
    return _SEP.join(strings)


# Fields whose text is never kept as it comes: replaced (source), or kept only when valid (an
# ISO time, a known status), which no secret is. A `type` is kept only when known (_TYPES).
_NOT_KEPT_AS_IS = frozenset(("source", "status", "created", "last_used"))
_TYPES = frozenset(TYPES)


def _was_cut(obj: dict, rec: dict) -> bool:
    return any(isinstance(obj.get(f), str) and len(obj[f]) != len(rec[f]) for f in TEXT_FIELDS)


def _finish(rec: dict, source: str) -> None:
    """After redaction: the source (`import:<file name>`, redacted), and a key (kept when
    well-formed, else computed)."""
    rec["source"] = source
    key = rec.get("key")
    if not (isinstance(key, str) and _key_re().fullmatch(key)):
        from learn_cli.engine.knowledge import key_for

        rec["key"] = key_for(rec)


def safe_project_id(raw, info: dict) -> str:
    """The export's id when it is one of ours (12 hex), else a hash of remote/root/name."""
    if _is_pid(raw):
        return raw
    from learn_cli.store.project import normalize_remote

    remote, root = info.get("remote"), info.get("root")
    if isinstance(remote, str) and remote.strip():
        material = normalize_remote(remote)
    elif isinstance(root, str) and root.strip():
        material = root
    else:
        material = f"import-name:{info.get('name') or raw}"
    return hashlib.sha256(str(material).encode("utf-8", "replace")).hexdigest()[:12]


def _project_info(info: dict, pid: str) -> dict:
    root = info.get("root")
    remote = info.get("remote")
    return {"name": _display_name(_redact(info.get("name")) if isinstance(info.get("name"), str) else None) or pid,
            "root": _redact(_text(root, 1000)) if isinstance(root, str) and root.startswith("/") else "",
            "remote": _redact(_text(remote, 500)) if isinstance(remote, str) and remote.strip() else None}


def _display_name(value) -> str:
    """A name to show, never a path to use: one line, no control characters, capped."""
    if not isinstance(value, str):
        return ""
    spaced = "".join(" " if c.isspace() else c for c in value if c.isprintable() or c.isspace())
    return " ".join(spaced.split())[:100]


def _remap_projects(rec: dict, raw_pid: str, pid: str) -> None:
    projects = [pid if p == raw_pid else p for p in rec.get("projects") or []]
    if pid not in projects:
        projects.append(pid)
    rec["projects"] = projects


# ---------------------------------------------------------------- merging


class _Merger:
    """Merges the entries of each target file with what the store holds (see the module's
    docstring). A target with nothing in it yet is written whole as soon as its entries are
    merged (staged, or held in memory by a dry run); the others are written at the end."""

    def __init__(self, store, report: ImportReport, loads: Callable, staging: _Staging | None):
        self.store = store
        self.report = report
        self.loads = loads
        self.staging = staging
        db = store.index.db
        self.ids: dict[str, str] = dict(db.execute("SELECT id, key FROM learnings"))
        self.merged_from: set[str] = set()
        for (ids,) in db.execute("SELECT json_extract(data, '$.merged_from') FROM learnings "
                                 "WHERE data LIKE '%\"merged_from\"%'"):
            self.merged_from.update(_json_list(ids, loads))
        self.batches: dict[Path, list[Incoming]] = {}  # target -> entries not merged yet
        self.new: dict[Path, list[dict]] = {}  # target that had data -> records to append at the end
        self.held: dict[Path, bytes] = {}  # dry run: the lines staging would have written
        self.unwritten: set[str] = set()  # ids of entries added by this import (no patch needed)
        self.patches: dict[Path, dict[str, dict]] = {}  # target -> id -> fields to set

    def add(self, inc: Incoming) -> None:
        self.batches.setdefault(inc.target, []).append(inc)

    def close(self, targets: Iterable[Path] | None = None) -> None:
        """Merge the entries gathered for `targets` (every target when None)."""
        for target in list(self.batches) if targets is None else targets:
            items = self.batches.pop(target, None)
            if items:
                self._merge_batch(target, items)

    def _merge_batch(self, target: Path, items: list[Incoming]) -> None:
        empty = self._is_empty(target)
        self.merge_into(target, items)
        if empty and target in self.new:
            recs = self.new.pop(target)
            self.unwritten.difference_update(r["id"] for r in recs)  # a later entry patches them
            if self.staging is None:
                self.held[target] = b"\n".join(_dumps(r)[0] for r in recs)  # read for a project listed twice
            else:
                self.staging.add(target, recs)

    def _is_empty(self, target: Path) -> bool:
        """A log that holds nothing yet (nor has been given anything by this import)."""
        if target in self.held or self.staging and target in self.staging.targets:
            return False
        if not str(target).endswith(".jsonl") or _has_data(target):
            return False
        return not self.store.index.count("file = ?", (self.store.index.rel(target),))

    def merge_into(self, target: Path, items: list[Incoming]) -> None:
        existing = self._existing(target)
        fresh = []
        for inc in items:
            rid = inc.rec["id"]
            if rid in self.merged_from:
                self.report.duplicates += 1
                continue
            if rid in self.ids:
                if self.ids[rid] == inc.rec["key"]:
                    self.report.duplicates += 1
                    continue
                from learn_cli.store.record import new_id

                inc.rec["id"] = new_id()
            self.ids[inc.rec["id"]] = inc.rec["key"]
            fresh.append(inc.rec)
        if not fresh:
            return
        conflicted = self._conflicts(target, existing, fresh) if existing else set()
        by_key = {}
        for rec in existing.values():
            by_key.setdefault(rec.get("key"), rec)
        added: list[dict] = []
        for rec in fresh:
            if rec["id"] in conflicted:
                added.append(rec)
                continue
            same = by_key.get(rec["key"])
            if same is None:
                by_key[rec["key"]] = rec
                added.append(rec)
                self.unwritten.add(rec["id"])
            elif _same_text(same, rec):
                self.report.duplicates += 1
            else:
                self._merge(target, same, rec)
        if existing and added:
            added = self._near_duplicates(target, existing, added, conflicted)
        self.report.new += sum(1 for r in added if r["id"] not in conflicted)
        if added:
            self.new.setdefault(target, []).extend(added)

    def _existing(self, target: Path) -> dict[str, dict]:
        if self.staging and target in self.staging.targets:
            self.staging.index(wait=True)  # a second batch for a target (a project listed twice)
        rel = self.store.index.rel(target)
        statuses = ("archived",) if target.name == "archive.jsonl" else _LIVE
        marks = ",".join("?" * len(statuses))
        rows = self.store.index.db.execute(f"SELECT data FROM learnings WHERE file = ? AND status IN ({marks})",
                                           (rel, *statuses))
        found = {(rec := self.loads(d))["id"]: rec for (d,) in rows}
        held = (self.loads(line) for line in self.held.get(target, b"").splitlines())
        found.update((r["id"], r) for r in held if r.get("status") in statuses)
        return found

    def _conflicts(self, target: Path, existing: dict[str, dict], fresh: list[dict]) -> set[str]:
        from learn_cli.engine.conflicts import find_conflicts
        from learn_cli.engine.promotion import summary

        incoming = {r["id"]: r for r in fresh}
        flagged: set[str] = set()
        for a, b, reason in find_conflicts([*existing.values(), *fresh]):
            if (a in incoming) == (b in incoming):
                continue  # both old (not ours to judge now) or both from the file
            mine, theirs = (a, b) if a in incoming else (b, a)
            rec, old = incoming[mine], existing[theirs]
            _flag(rec, theirs)
            patch = self.patches.setdefault(target, {}).setdefault(theirs, {})
            _flag(old, mine)
            patch.update(status=old["status"], conflict_with=old["conflict_with"],
                         pre_conflict_status=old["pre_conflict_status"])
            if mine not in flagged:
                self.report.conflicts += 1
                flagged.add(mine)
            self.report.conflict_pairs.append({"incoming": mine, "existing": theirs, "reason": reason,
                                               "incoming_text": summary(rec), "existing_text": summary(old)})
        return flagged

    def _merge(self, target: Path, into: dict, rec: dict) -> None:
        from learn_cli.engine.merge import merge

        # An untrusted entry never changes a learning's text or counters: it is only noted
        # (merged_from), so importing it again is a duplicate.
        merged = merge(into, rec) if self.trusted else dict(into)
        merged["merged_from"] = (list(into.get("merged_from") or []) + [rec["id"]])[-MAX_MERGED_FROM:]
        if into.get("id") in self.unwritten:
            into.clear()
            into.update(merged)  # an entry of this same file: not written yet, just update it
        else:
            changed = {k: v for k, v in merged.items() if into.get(k) != v and k not in ("id", "updated")}
            self.patches.setdefault(target, {}).setdefault(into["id"], {}).update(changed)
            into.update(merged)
        self.merged_from.add(rec["id"])
        self.report.merged += 1

    def _near_duplicates(self, target: Path, existing: dict, added: list[dict], conflicted: set) -> list[dict]:
        from learn_cli.engine.merge import near_duplicates

        candidates = [r for r in added if r["id"] not in conflicted]
        fresh_ids = {r["id"] for r in candidates}
        keep = {r["id"] for r in added}
        for group in near_duplicates([*existing.values(), *candidates], NEAR_DUPLICATE):
            leader = group[0]
            if leader["id"] in fresh_ids:
                continue  # led by an entry of the file: nothing of the store to merge into
            for rec in group[1:]:
                if rec["id"] in fresh_ids and rec["id"] in keep:
                    keep.discard(rec["id"])
                    if _same_text(leader, rec):
                        self.report.duplicates += 1
                        self.merged_from.add(rec["id"])
                    else:
                        self._merge(target, leader, rec)
        return [r for r in added if r["id"] in keep]

    def write(self) -> None:
        self.staging.commit()
        for target, recs in self.new.items():
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.store.put_many(target, recs)
        for target, patches in self.patches.items():
            changes = {rid: _setter(fields) for rid, fields in patches.items()}
            size = self.store.index.count("file = ?", (self.store.index.rel(target),))
            self.store.update_many(target, changes, rewrite=2 * len(changes) >= max(size, 1))


# ---------------------------------------------------------------- writing


class _Staging:
    """The logs an import writes whole, staged in a folder of the home until the whole export
    has been read, then renamed into place: a refused file leaves the store as it was. Their
    index rows are written from the records in hand when they are staged (a rename keeps the
    stat that the index records), INDEX_BATCH records a transaction."""

    INDEX_BATCH = 10_000

    def __init__(self, store, helpers: _Helpers):
        self.store = store
        self.helpers = helpers
        self.folder: Path | None = None
        self.staged: list[tuple[Path, Path]] = []  # (target, staged file)
        self.targets: set[Path] = set()
        self.unindexed: list[tuple[Path, bytes, Path, bool]] = []
        self.waiting = 0  # records in self.unindexed
        self.syncs = _Syncs()

    def add(self, target: Path, recs: list[dict]) -> None:
        if self.folder is None:
            _remove_empty_folders(self.store.home, _STAGING)
            self.folder = self.store.home / f"{_STAGING}{os.urandom(6).hex()}"
            self.folder.mkdir(mode=0o700)
        staged = self.folder / f".{len(self.staged):05d}-{target.name}.tmp"  # `learn doctor` clears old ones
        self.staged.append((target, staged))  # first: removed even if writing it fails (a full disk)
        self.targets.add(target)
        lines, exact = _write_log(staged, recs)
        self.syncs.add(staged)
        self.unindexed.append((target, lines, staged, exact))
        self.waiting += len(recs)
        if self.waiting >= self.INDEX_BATCH:
            self.index()

    def index(self, wait: bool = False) -> None:
        """Have the rows of the files staged since the last time written, in one transaction
        (and with `wait`, every such transaction done)."""
        if self.unindexed:
            self.helpers.index_rows(self.unindexed)
        self.unindexed, self.waiting = [], 0
        if wait:
            self.helpers.wait_index()

    def commit(self) -> None:
        """Rename every staged file onto its target (under the target's lock). A target that
        got data meanwhile (a capture) gets the records appended instead."""
        from learn_cli.store import jsonl
        from learn_cli.store.locks import file_lock

        self.index(wait=True)
        try:
            self.syncs.wait()  # every staged file is on disk before any is renamed
            folders = set()
            for target, staged in self.staged:
                if target.parent not in folders:
                    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                    folders.add(target.parent)
                with file_lock(target):
                    if not _has_data(target):
                        os.replace(staged, target)
                        continue
                self.store.put_many(target, list(jsonl.load(staged).records.values()))
            for folder in folders:  # the renames, on disk
                self.syncs.add(folder)
            self.syncs.wait()
        finally:
            self._remove()

    def abandon(self) -> None:
        """Drop what was staged; the index forgets the rows written for it."""
        try:
            self.helpers.wait_index()
        except Exception as exc:  # noqa: BLE001 - a worker that died: its transaction was not committed
            self.store.note(f"import abandoned while its index rows were written ({exc})")
        self._remove()
        try:
            self.store.refresh([target for target, _ in self.staged])
        except Exception as exc:  # noqa: BLE001 - the index also heals on its next refresh
            self.store.note(f"index not updated ({exc}); it will be rebuilt from the files")

    def _remove(self) -> None:
        if self.folder is None:
            return
        for _target, staged in self.staged:
            try:
                os.unlink(staged)
            except FileNotFoundError:
                pass
        try:
            os.rmdir(self.folder)
        except OSError:
            pass


_STAGING = ".import-"  # staging folders: <home>/.import-<hex>


def _remove_empty_folders(home: Path, prefix: str) -> None:
    """Staging folders of imports that were killed, once `learn doctor` removed their files."""
    for entry in os.scandir(home):
        if entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False):
            try:
                os.rmdir(entry.path)
            except OSError:
                pass  # not empty: an import running now, or files doctor has not removed yet


def _write_log(path: Path, recs: list[dict]) -> tuple[bytes, bool]:
    """Write a new log holding `recs` (stamped `updated`). Returns its bytes, and whether a line
    needs the standard library to be read back exactly (see `_dumps`)."""
    from learn_cli.store import jsonl
    from learn_cli.store.paths import FILE_MODE
    from learn_cli.store.record import now_iso

    stamp = now_iso()
    lines, exact = [], False
    for rec in recs:
        rec["updated"] = stamp
        line, standard = _dumps(rec)
        lines.append(line)
        exact = exact or standard
    lines.append(b"")
    data = b"\n".join(lines)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        jsonl._write_all(fd, data)
    finally:
        os.close(fd)
    return data, exact


class _Syncs:
    """fsync of many files and folders at once, in a few threads: the journal commits that
    many waiting together need cost little more than one. Done in one go when needed: syncs
    spread over the import would force a journal commit at every step of its file writes."""

    THREADS = 16

    def __init__(self):
        self.paths: list[Path] = []

    def add(self, path: Path) -> None:
        self.paths.append(path)

    def wait(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        paths, self.paths = self.paths, []
        if paths:
            with ThreadPoolExecutor(min(self.THREADS, len(paths)), thread_name_prefix="fsync") as pool:
                list(pool.map(_fsync, paths))


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _dumps(rec: dict) -> tuple[bytes, bool]:
    """A record as one line of JSON, and whether the standard library wrote it (orjson cannot
    write a lone surrogate, repaired here, or an integer past 64 bits, which it would also
    read back as a float)."""
    import orjson

    try:
        return orjson.dumps(rec), False
    except TypeError:  # orjson.JSONEncodeError
        from learn_cli.store.jsonl import dumps, utf8
        from learn_cli.store.record import utf8_safe

        return utf8(dumps(utf8_safe(rec))), True


def _has_data(path: Path) -> bool:
    try:
        return os.stat(path).st_size > 0
    except FileNotFoundError:
        return False


def _flag(rec: dict, other: str) -> None:
    if rec.get("status") != "conflicted":
        rec["pre_conflict_status"] = rec.get("status") or "active"
        rec["status"] = "conflicted"
    rec.setdefault("pre_conflict_status", "active")
    partners = list(rec.get("conflict_with") or [])
    if other not in partners:
        partners.append(other)
    rec["conflict_with"] = partners


def _setter(fields: dict) -> Callable[[dict], dict]:
    def apply(rec: dict) -> dict:
        rec.update(fields)
        return rec

    return apply


def _create_projects(store, projects: dict[str, dict], pids: list[str]) -> None:
    from learn_cli.store.project import Project

    for pid in pids:
        info = projects[pid]
        store.register_project(Project(id=pid, name=info["name"], root=info["root"], remote=info["remote"]))


# ---------------------------------------------------------------- work in other processes


class _Helpers:
    """Worker processes that take work off the main process of a large import: `submit` and
    `result` tell which entries have text that redaction changes (the largest part of an
    import's work, ~30 µs an entry), answered in order; `index_rows` writes the index rows of
    staged files (SQLite's part), one job at a time: one writer, transactions in order. The
    main process reads, merges and writes on meanwhile. A small file, or a system without
    fork, does it all in-process.

    Every worker is forked at once, here, before the import starts any thread: a fork copies
    no other thread, so a lock that one of them held would stay held in the child."""

    PARALLEL_BYTES = 4 << 20  # below this, forking costs more than it saves
    batch = 400  # entries a redaction job
    ahead = 8  # redaction jobs out at once (bounds the entries held in memory)

    def __init__(self, store, file_bytes: int):
        self.store = store
        self.pool = None
        self.index_job = None
        workers = min(os.cpu_count() or 1, 4)
        if file_bytes < self.PARALLEL_BYTES or workers < 2 or not hasattr(os, "fork"):
            return
        try:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(workers, multiprocessing.get_context("fork"), initializer=_quiet_worker)
            self.pool.submit(int).result()  # forks them all now
        except (OSError, ImportError, ValueError):  # no fork, no /dev/shm...: all in-process
            self.close()

    def submit(self, texts: list[str]):
        return self.pool.submit(dirty_texts, texts) if self.pool and texts else dirty_texts(texts)

    def result(self, job) -> set[int]:
        return set(job if isinstance(job, list) else job.result())

    def index_rows(self, files: list[tuple[Path, bytes, Path, bool]]) -> None:
        """Index.load_rows for staged files: (target, its lines, staged file, whether to parse
        the lines with the standard library: a record orjson cannot write exactly)."""
        self.wait_index()
        if self.pool is None or str(self.store.index.path) == ":memory:":
            return self._noted(_load_rows(self.store.index, files))
        self.index_job = self.pool.submit(index_in_worker, str(self.store.home), files)

    def wait_index(self) -> None:
        """The index job done (before the index is read back, or the import ends)."""
        job, self.index_job = self.index_job, None
        if job is not None:
            self._noted(job.result())

    def _noted(self, problem: str | None) -> None:
        if problem:
            self.store.note(problem)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


def _quiet_worker() -> None:
    """A worker leaves Ctrl-C to the main process (which stops it), yields the CPU to it (the
    main process feeds the workers), and ends when it ends, even killed (kill -9 leaves the
    workers waiting on a queue that they themselves hold open)."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(5)
    threading.Thread(target=_end_with, args=(os.getppid(),), daemon=True).start()


def _end_with(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def index_in_worker(home: str, files: list) -> str | None:
    """In a worker: `_load_rows` on a connection of its own."""
    from learn_cli.store.index import Index
    from learn_cli.store.paths import Layout

    index = Index(Layout(Path(home)))
    try:
        return _load_rows(index, files)
    finally:
        index.close()


def _load_rows(index, files: list[tuple[Path, bytes, Path, bool]]) -> str | None:
    """index.load_rows from the lines of staged files; what went wrong, if anything."""
    import sqlite3

    import orjson

    def records(lines: bytes, exact: bool) -> list[dict]:
        return [(json.loads if exact else orjson.loads)(line) for line in lines.splitlines()]

    try:
        index.load_rows([(target, records(lines, exact), staged) for target, lines, staged, exact in files])
    except sqlite3.DatabaseError as exc:  # the files are the truth: the index heals from their stats
        return f"index not updated ({exc}); it will be rebuilt from the files"
    return None


def dirty_texts(texts: list[str]) -> list[int]:
    """The positions of the texts that redaction changes."""
    from learn_cli.text.redact import redact

    return [n for n, text in enumerate(texts) if text and redact(text) != text]


# ---------------------------------------------------------------- helpers


def redact_record(rec: dict) -> dict:
    """Redact the record's free text in place: one pass over all of it joined (the common
    case, nothing secret, costs one call); field by field only when something was found."""
    from learn_cli.text.redact import redact

    fields = [f for f in TEXT_FIELDS if isinstance(rec.get(f), str) and rec[f]]
    tags = rec.get("tags") if isinstance(rec.get("tags"), list) else []
    joined = _SEP.join([*(rec[f] for f in fields), *(t for t in tags if isinstance(t, str))])
    if not joined or redact(joined) == joined:
        return rec
    for f in fields:
        rec[f] = redact(rec[f])
    if tags:
        rec["tags"] = [redact(t) if isinstance(t, str) else t for t in tags]
    return rec


def _same_text(a: dict, b: dict) -> bool:
    from learn_cli.engine.merge import normalize_text

    return all(normalize_text(a.get(f) or "") == normalize_text(b.get(f) or "") for f in ("context", "error", "fix"))


def _redact(text):
    from learn_cli.text.redact import redact

    return redact(text) if isinstance(text, str) else text


@cache
def _key_re():
    return re.compile(r"[a-z]{2,8}:[0-9a-zA-Z:._-]{1,100}")


def _is_pid(value) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{12}", value) is not None


def _json_list(text, loads) -> list:
    try:
        value = loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _text(value, limit: int) -> str:
    return "".join(c for c in str(value) if c.isprintable())[:limit]


def _short(value, limit: int = 40) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{_text(value, limit)}"'
    return text if len(text) <= limit + 2 else text[:limit] + "…"


def _kind(value) -> str:
    return {dict: "object", list: "array", str: "string", int: "number", float: "number",
            bool: "boolean", type(None): "null"}.get(type(value), type(value).__name__)


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB"


def _fast_loads() -> Callable:
    try:
        import orjson
    except ImportError:  # pragma: no cover
        return json.loads
    return orjson.loads
