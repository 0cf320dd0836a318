"""`learn import`: the file read section by section, each entry checked (`coerce_record`), redacted,
placed in its target file, and the targets merged once no entry can follow."""

from __future__ import annotations

import hashlib
import os
import re
from collections import deque
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

from learn_cli.store.jsonl import fast_loads
from learn_cli.store.record import TYPES, coerce_record
from learn_cli.text.redact import redact

from .common import (
    SECTIONS,
    TEXT_FIELDS,
    _is_pid,
    _key_re,
    _kind,
    _redact,
    _short,
    _text,
    redact_record,
)
from .merging import _Merger
from .report import ImportReport, Incoming
from .staging import _create_projects, _Staging
from .stream import _header_ready, _JsonStream, _open_export, check_format
from .trust import _now, distrust
from .workers import INDEX_CACHE_KB, _Helpers


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


def import_file(store, path: Path, dry_run: bool = False, loads: Callable | None = None,
                trust: bool = False) -> ImportReport:
    """Read, validate and merge an export file into the store, entry by entry. Entries arrive
    untrusted (`distrust`) unless `trust`: the user vouches for the file."""
    loads = loads or fast_loads()
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
        self.queue: list = []  # entries (obj, where, place, texts) and merges (callables) not done yet
        self.checks = _Verdicts()  # which texts redaction changes, each distinct text checked once
        self.jobs: deque = deque()  # (redaction check, the queue it answers, its texts), oldest first
        self.origin = f"import:{_redact(source)}"[:200]  # every entry's `source`
        self.report = ImportReport(source, "", dry_run=dry_run)
        self.warnings = self.report.warnings
        self.projects: dict[str, dict] = {}  # safe pid -> {name, root, remote}
        self.pid_map: dict[str, str] = {}  # project id in the file -> safe pid
        self.receiving: set[str] = set()  # pids that entries went to
        self.placed: Incoming | None = None  # the entry just placed, for the merger once distrusted
        self.lay = _Paths(store.layout)
        store.refresh(loads=loads)
        if not dry_run:
            store.index.use_page_cache(INDEX_CACHE_KB)
        self.merger = _Merger(store, self.report, loads, None if dry_run else _Staging(store), self.now)
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
                self.entry(obj, f"global[{n}]", self._place_global, "")
            self._then(self.merger.close, self.store.layout.global_files())  # nothing more can come for them
            return
        for n, obj in enumerate(stream.items(), 1):
            origin = obj.get("archived_from") if isinstance(obj, dict) else None
            self.entry(obj, f"archived[{n}]", lambda rec, origin=origin, where=f"archived[{n}]":
                       self._place_archived(rec, origin, where), self._archive_of(origin))

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
        place = lambda rec: self._place_project(rec, pid, raw_pid)  # noqa: E731 - one per project
        for n, obj in enumerate(entries, 1):
            self.entry(obj, f"{where}[{n}]", place, pid)

    def entry(self, obj, where: str, place: Callable[[dict], None], pid: str | None = None) -> None:
        """Queue an entry: its texts not met before go to the redaction checks, in batches, and
        the entry is taken in once the answer for it is back (in file order). An entry the
        store already holds (`_known`) is a duplicate at once, unread: `pid`, the project it
        goes to ("" global, None when its place needs the entry read: not known that way)."""
        self.report.entries += 1
        if pid is not None and self._known(obj):
            self.report.duplicates += 1
            self.receiving.add(pid)
            return
        texts = _entry_texts(obj)
        self.queue.append((obj, where, place, texts))
        self.checks.ask(texts)
        if len(self.queue) >= self.helpers.batch:
            self._submit()
            while len(self.jobs) > self.helpers.ahead:
                self._take(*self.jobs.popleft())

    def _known(self, obj) -> bool:
        """Whether the store holds this entry: its id was merged into a learning, or is the id
        of a learning of the entry's key (as written: a well-formed key is kept as it is).
        Either way the merge would call it a duplicate, so it is one before it is checked,
        redacted or coerced: importing a file again reads little more than its text. (An
        entry known so is a duplicate even if it would not pass `coerce_record`: its id says
        the store has it.) The ids and merged ids only grow during an import, so an entry
        known here would be known when its target is merged."""
        if type(obj) is not dict:
            return False
        rid = obj.get("id")
        if type(rid) is not str or not 0 < len(rid) <= 80:
            return False
        merger = self.merger
        if rid in merger.merged_from:
            return rid.isprintable()
        key = merger.ids.get(rid)
        return key is not None and obj.get("key") == key and _key_re().fullmatch(key) is not None and rid.isprintable()

    def _archive_of(self, origin) -> str | None:
        """The project an entry of `archived` goes to, when it is known without reading the
        entry ("" the global archive); None when placing it may skip it or name a project."""
        if origin == "global" or origin is None:
            return ""
        pid = self.pid_map.get(str(origin)) or (origin if _is_pid(origin) else None)
        return pid if pid in self.projects else None

    def _submit(self) -> None:
        asked = self.checks.take_asked()
        self.jobs.append((self.helpers.submit(asked), self.queue, asked))
        self.queue = []

    def _then(self, step: Callable, *args) -> None:
        """Run `step` once every entry queued before it is taken in."""
        if self.queue or self.jobs:
            self.queue.append(lambda: step(*args))
        else:
            step(*args)

    def settle(self) -> None:
        """Take in every entry queued."""
        self._submit()
        while self.jobs:
            self._take(*self.jobs.popleft())

    def _take(self, job, queue: list, asked: list[str]) -> None:
        self.checks.answer(asked, self.helpers.result(job))
        for item in queue:
            if callable(item):
                item()
                continue
            obj, where, place, texts = item
            rec = _accept(obj, where, self.report, self.checks.any_dirty(texts))
            if rec is not None:
                _finish(rec, self.origin)
                place(rec)  # the target follows the file's status; then the status is ours
                distrust(rec, self.now, self.trust)
                if self.placed is not None:  # the merger takes the record as it now is
                    self.merger.add(self.placed)
                    self.placed = None
        self.checks.forget_clean()

    def _add(self, rec: dict, target: Path, scope: str, pid: str) -> None:
        self.receiving.add(pid)
        self.placed = Incoming(rec, target, scope, pid)

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
            self.merger.staging.index()  # the rows of every file staged, before the projects'
            _create_projects(self.store, self.projects, created, self.merger.staging.targets)
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
    skipped. `dirty`: redaction changes a text of the entry (`_entry_texts`). (Its imports
    are the module's: an import statement in a function costs ~5 µs a call, here 100,000.)"""
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


def _entry_texts(obj) -> list[str]:
    """Every text of an entry that can be kept (its string fields and tags), for the redaction
    checks; none of the shapes that hold no secret (`_HOLDS_NO_SECRET`)."""
    if not isinstance(obj, dict):
        return []
    plain = _holds_no_secret()
    strings = [v for k, v in obj.items() if type(v) is str and v and k not in _NOT_KEPT_AS_IS and v not in _TYPES
               and not (k in _SHAPED and plain(v))]
    tags = obj.get("tags")
    if isinstance(tags, list):
        strings.extend(t for t in tags if isinstance(t, str) and t)
    return strings


# Fields whose text is never kept as it comes: replaced (source), or kept only when valid (an
# ISO time, a known status), which no secret is. A `type` is kept only when known (_TYPES).
_NOT_KEPT_AS_IS = frozenset(("source", "status", "created", "last_used"))
_TYPES = frozenset(TYPES)
_SHAPED = frozenset(("id", "key", "updated", "low_since"))  # fields that `_holds_no_secret` may spare


@cache
def _holds_no_secret():
    """Texts of shapes that redaction never changes (tests/test_exchange_stream.py checks it):
    a UTC time as learn writes it, a learning id as `new_id` makes it, a key as text/keys.py
    makes it (`err:` or `txt:` and 16 hex digits: too short a run for the high-entropy rule;
    not any label, `token:<hex>` is redacted). Every entry has three or four, each its own,
    which would cost a redaction call apiece."""
    return re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z"
                      r"|learn-\d{8}T\d{6}Z-[0-9a-f]{6}|(?:err|txt):[0-9a-f]{16}").fullmatch


class _Verdicts:
    """Which texts redaction changes, each distinct text checked once: a real export repeats
    its texts (one fix in many projects, a team's file imported into many), so most are
    answered before they are asked. Holds about LIMIT clean answers at most (bounded memory)."""

    LIMIT = 10_000

    def __init__(self):
        self.dirty: dict[str, bool | None] = {}  # text -> changed by redaction (None: asked, no answer yet)
        self.changed: set[str] = set()  # the texts answered True (an entry's question in one C call)
        self.asked: list[str] = []  # texts to send with the next check

    def ask(self, texts: list[str]) -> None:
        for text in texts:
            if text not in self.dirty:
                self.dirty[text] = None
                self.asked.append(text)

    def take_asked(self) -> list[str]:
        asked, self.asked = self.asked, []
        return asked

    def answer(self, asked: list[str], dirty: set[int]) -> None:
        for n, text in enumerate(asked):
            self.dirty[text] = n in dirty
        self.changed.update(asked[n] for n in dirty)

    def any_dirty(self, texts: list[str]) -> bool:
        """Every text of an entry was answered before the entry is taken; one not held any
        more was answered clean (`forget_clean`)."""
        return not self.changed.isdisjoint(texts)

    def forget_clean(self) -> None:
        if len(self.dirty) > self.LIMIT:
            self.dirty = {t: v for t, v in self.dirty.items() if v is not False}


def _was_cut(obj: dict, rec: dict) -> bool:
    for name in TEXT_FIELDS:
        value = obj.get(name)
        if isinstance(value, str) and len(value) != len(rec[name]):
            return True
    return False


def _finish(rec: dict, source: str) -> None:
    """After redaction: the source (`import:<file name>`, redacted), and a key (kept when
    well-formed, else computed)."""
    rec["source"] = source
    key = rec.get("key")
    rec.pop("key_from_text", None)  # the text was redacted again here: a baseline at the next prune
    if not (isinstance(key, str) and _key_re().fullmatch(key)):
        from learn_cli.engine.knowledge import give_key

        give_key(rec)


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
