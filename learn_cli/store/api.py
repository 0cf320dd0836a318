"""`Store`: the one API through which every part of `learn` reads and writes the store."""

from __future__ import annotations

import os

from learn_cli.text import jsonlite  # json's C half, without `re`: hooks and fast reads import no `json`

from . import jsonl, log
from .locks import file_lock
from .paths import DEFAULT_CONFIG, Layout, home_dir, make_dir, number, setting_in, write_new
from .project import Project
from .record import now_iso, store_file_kind, utf8_safe

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms of every hook)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path

    from .index import Index


def same_path(a, b) -> bool:
    """Do two paths of the home (a `Path` or a string each) name the same file?"""
    return os.path.normpath(a) == os.path.normpath(b)


def _pretty(doc: dict) -> str:
    """A settings or project document as people read it (indented). `json` is imported here
    only: the hooks read and write records with text.jsonlite, and `json` imports `re`."""
    import json

    return json.dumps(doc, indent=2) + "\n"


class StoreError(Exception):
    """A problem a person can act on; commands print it as one line."""


def _db():
    """The sqlite3 module. Imported when the index is first opened (`Store.index`), not with
    this module: a hook that never opens it (a plain success, a prompt) saves ~3 ms. An
    `except _db().Error` clause is evaluated only when an exception is raised, by then the
    index is open and the module imported."""
    from learn_cli.store.index import sqlite3

    return sqlite3


class Store:
    def __init__(self, home=None, *, create: bool = True, warn_stderr: bool = True, plain: bool = False):
        """The store at `home` (paths.resolve_home's rules). With `plain`, every path it gives
        out is a string (paths.Layout: the hook's processes never import pathlib)."""
        self.layout = Layout(home_dir(home), plain=plain)
        self.home = self.layout.home
        self.warn_stderr = warn_stderr
        self.first_run = False
        self._index: Index | None = None
        self._config: dict | None = None
        if create:
            try:
                self.first_run = self.layout.ensure()
            except OSError as exc:
                raise StoreError(f"cannot create the store at {self.home}: {exc.strerror or exc}") from exc
        elif not os.path.exists(self.home):
            raise StoreError(f"no store at {self.home}")

    # -- warnings --------------------------------------------------------------------------
    def warn(self, message: str) -> None:
        log.warn(message, self.layout.log if self.writable() else None, self.warn_stderr)

    def note(self, message: str) -> None:
        """For the log only: the index is derived data that heals by itself, so its troubles
        are no reason to print a line in front of a command's answer (doctor reports them)."""
        log.warn(message, self.layout.log if self.writable() else None, stderr=False)

    def writable(self) -> bool:
        return os.access(self.home, os.W_OK)

    # -- config ----------------------------------------------------------------------------
    def config(self) -> dict:
        if self._config is None:
            cfg = dict(DEFAULT_CONFIG)
            doc = self._read_json(self.layout.config)
            if doc is not None:
                cfg.update({k: v for k, v in doc.items() if k in DEFAULT_CONFIG or k not in cfg})
            self._config = cfg
        return self._config

    def save_config(self, cfg: dict) -> None:
        jsonl.atomic_write(self.layout.config, _pretty(cfg).encode())
        self._config = None

    def overrides(self, pid: str) -> dict:
        return self._read_json(self.layout.overrides(pid)) or {}

    def save_overrides(self, pid: str, doc: dict) -> None:
        make_dir(self.layout.project_dir(pid))
        jsonl.atomic_write(self.layout.overrides(pid), _pretty(doc).encode())

    def setting(self, name: str, pid: str | None = None):
        """A setting with the project's override applied (paths.setting_in)."""
        return setting_in(name, self.overrides(pid) if pid else {}, self.config())

    def number(self, name: str, pid: str | None = None):
        """A numeric setting as it is used (`paths.number`: its type, or its default)."""
        return number(self.setting(name, pid), name)

    def _read_json(self, path: Path) -> dict | None:
        try:
            doc = jsonlite.loads(jsonl.read_bytes(path) or b"{}")
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self.warn(f"{path}: unreadable ({exc}); using defaults")
            return None
        return doc if isinstance(doc, dict) else None

    # -- projects --------------------------------------------------------------------------
    def register_project(self, project: Project, logs: list | None = None) -> None:
        """Create the project's folder and project.json the first time it is seen, and its
        logs (`logs`: only these, empty; an import puts the others in place whole)."""
        pj = self.layout.project_json(project.id)
        if os.path.exists(pj):
            return
        self.layout.ensure_project(project.id, logs)
        doc = dict(project.as_json(), created=now_iso())
        write_new(pj, _pretty(doc))
        try:
            self.index.note_project(project.id, project.name, project.root, project.remote)
        except _db().Error:
            pass

    def labels(self, pids) -> dict[str, str]:
        """The label of each of these projects, as projects() says it, from the index's rows of
        them and of the projects sharing their names (recall shows ten hits of 1,000 projects);
        projects() whole when the index lacks one of them."""
        wanted = sorted({p for p in pids if p})
        if not wanted:
            return {}
        named = self.index.names_shared_with(wanted)
        if not set(wanted) <= named.keys():
            return {pid: info["label"] for pid, info in self.projects().items() if pid in wanted}
        live = {pid: name for pid, name in named.items() if os.path.isdir(self.layout.project_dir(pid))}
        labels = _labels(live)
        return {pid: labels[pid] for pid in wanted if pid in labels}

    def projects(self) -> dict[str, dict]:
        """pid -> {id, name, root, remote, label}; label disambiguates shared basenames."""
        known = self.index.project_names()
        try:
            pids = [e.name for e in os.scandir(self.layout.projects_dir) if e.is_dir()]
        except FileNotFoundError:
            pids = []
        for pid in pids:
            if pid not in known:
                doc = self._read_json(self.layout.project_json(pid)) or {}
                known[pid] = {"id": pid, "name": str(doc.get("name") or pid), "root": doc.get("root"),
                              "remote": doc.get("remote")}
                try:
                    self.index.note_project(pid, known[pid]["name"], known[pid]["root"] or "", known[pid]["remote"])
                except _db().Error:
                    pass
        live = set(pids)
        known = {p: v for p, v in known.items() if p in live}
        for pid, label in _labels({pid: info["name"] for pid, info in known.items()}).items():
            known[pid]["label"] = label
        return known

    # -- files -----------------------------------------------------------------------------
    def global_file(self, rec: dict) -> Path:
        return {"errors": self.layout.global_errors, "patterns": self.layout.global_patterns,
                "preferences": self.layout.global_preferences}[store_file_kind(rec)]

    def data_files(self) -> list[str]:
        return self.index.all_files()

    # -- the index -------------------------------------------------------------------------
    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = self._open_index()
        return self._index

    def _open_index(self) -> Index:
        from .index import Index

        try:
            return Index(self.layout, on_event=self.note)
        except (_db().Error, OSError) as exc:
            return self._memory_index(exc)

    def _memory_index(self, exc: Exception) -> Index:
        """A read-only or full home: answer from an index in memory, built from the files."""
        self.note(f"index unavailable ({exc}); reading the files directly")
        from .index import MemoryIndex

        mem = Layout(self.home, plain=self.layout.kind is str)
        mem.index_db = mem.kind(":memory:")
        return MemoryIndex(mem, on_event=self.note)

    def refresh(self, paths: Iterable[Path] | None = None, loads: Callable = jsonlite.loads, progress=None,
                archives: bool = True) -> list:
        """Bring the index up to date (all files, or just `paths`; `archives=False`: every
        file but the archives, for a reader that shows no archived record). Returns bad lines."""
        try:
            bad = self._refresh(paths, loads, progress, archives)
        except _db().DatabaseError as exc:
            from .index import cannot_write, is_busy

            if is_busy(exc):
                raise
            if not cannot_write(exc):
                self.index.rebuild(str(exc))  # damaged: rebuilt from the files
                bad = []
            else:  # the disk is full or read-only: rebuilding would only lose the index
                self._index.close()
                self._index = self._memory_index(exc)
                bad = self._refresh(paths, loads, progress, archives)
        for b in bad:
            self.warn(b.describe())
        return bad

    def _refresh(self, paths, loads: Callable, progress, archives: bool = True) -> list:
        if paths is None:
            return self.index.refresh_all(loads, progress, archives)
        return self.index.refresh(paths, loads)

    # -- reading ---------------------------------------------------------------------------
    def records(self, path: Path, loads: Callable = jsonlite.loads) -> dict:
        return jsonl.load(path, loads).records

    def iter_index(self, scope: str, status: str | None = None, pid: str | None = None,
                   loads: Callable = jsonlite.loads) -> Iterator:
        """(file, scope, pid, record) for every indexed record of a scope (and status, project)."""
        for f, s, p, d in self.index.rows_in_scope(scope, status, pid):
            yield f, s, p, loads(d)

    def get(self, rid: str) -> tuple[Path, dict] | None:
        """The newest copy of a record by id (or unique id prefix)."""
        rows = self.index.by_id(rid) or self.index.by_id_prefix(rid)
        if not rows:
            return None
        ids = {r[3]["id"] for r in rows}
        if len(ids) > 1:
            raise StoreError(f"id {rid!r} is ambiguous: {', '.join(sorted(ids)[:5])}")
        f, _, _, rec = max(rows, key=lambda r: r[3].get("updated") or "")
        return self.path_of(f), rec

    def path_of(self, rel: str) -> Path | str:
        return self.layout.path(rel)

    # -- writing ---------------------------------------------------------------------------
    def put(self, path: Path, rec: dict) -> dict:
        self.put_many(path, [rec])
        return rec

    def put_many(self, path: Path, recs: list[dict]) -> None:
        """Insert or supersede records in one file (one appended line each)."""
        if not recs:
            return
        if str(path).endswith(".json"):
            return self._put_doc(path, self._stamped(recs, now_iso()))
        with self._lock(path):
            recs = self._append_locked(path, recs, now_iso())
            self._index_write(path, recs)

    @staticmethod
    def _stamped(recs: list[dict], stamp: str) -> list[dict]:
        for rec in recs:
            rec["updated"] = stamp
        return [utf8_safe(r) for r in recs]

    def _append_locked(self, path: Path, recs: list[dict], stamp: str) -> list[dict]:
        """Append records to a log whose lock the caller holds (the index brought in step
        first, not told yet); returns them as written."""
        recs = self._stamped(recs, stamp)
        self._sync_locked(path)
        jsonl.append(path, recs)
        return recs

    def update(self, path: Path, rid: str, change: Callable[[dict], dict | None]) -> dict | None:
        """Read-modify-write one record under the file lock; `change` returns the new record."""
        with self._lock(path):
            self._sync_locked(path)
            current = next((r for f, _, _, r in self.index.by_id(rid) if same_path(self.path_of(f), path)), None)
            if current is None:
                return None
            new = change(dict(current))
            if new is None:
                return None
            new["updated"] = now_iso()
            new = utf8_safe(new)
            if str(path).endswith(".json"):
                self._rewrite_doc_locked(path, lambda recs: recs.update({rid: new}))
            else:
                jsonl.append(path, [new])
                self._index_write(path, [new])
            return new

    def remove(self, path: Path, rid: str) -> None:
        if str(path).endswith(".json"):
            with self._lock(path):
                self._rewrite_doc_locked(path, lambda recs: recs.pop(rid, None))
            return
        with self._lock(path):
            self._sync_locked(path)
            jsonl.append(path, [jsonl.tombstone(rid)])
            self._index_write(path, [jsonl.tombstone(rid)])

    def move(self, rec: dict, src: Path, dst: Path) -> None:
        """Write to the destination first, then delete from the source: a crash in between
        leaves two copies (the newer `updated` wins on read), never none."""
        self.put(dst, rec)
        self.remove(src, rec["id"])

    def replace_file(self, path: Path, recs: Iterable[dict]) -> None:
        """Atomically replace a whole file (prune, promote, import, compaction)."""
        recs = list(recs)
        with self._lock(path):
            jsonl.rewrite(path, recs)
            self._reindex_locked(path)

    def update_many(self, path: Path, changes: dict[str, Callable[[dict], dict | None]],
                    remove: Iterable[str] = (), rewrite: bool = False, moves: list[dict] | None = None,
                    archive: Path | None = None) -> list[dict]:
        """Store.update for many records of one file under one lock (promote, prune, import).

        Each `changes[id]` gets the record as it is *now* (so a capture that appended a newer
        copy meanwhile is not overwritten with a stale one) and returns the new record, or None
        to leave it; ids in `remove` are deleted. Appends one line per change, or with
        `rewrite` replaces the whole file atomically (folding superseded lines) unless it holds
        corrupt lines, which a rewrite would drop. Returns the records written.

        `moves` (promote's and prune's archiving): whole records appended to the log `archive`
        first, whose ids are in `remove` (a crash in between leaves two copies, never none).
        Both locks are held, the archive's taken first; once both files are written, each
        record's index row moves from this file to the archive in place (Index.record_moves),
        instead of a row deleted, its text taken out of the full-text index and put back."""
        remove = set(remove)
        stamp = now_iso()
        if not moves:  # (no contextlib.ExitStack: a SessionEnd hook comes here, and imports no contextlib)
            with self._lock(path):
                return self._update_locked(path, changes, remove, rewrite, stamp, None)
        with self._lock(archive):
            for rec in moves:
                rec["updated"] = stamp
            recs, texts = _safe_lines(moves)  # dumped once, for the archive and the index
            self._sync_locked(archive)
            jsonl.append(archive, recs, texts)
            with self._lock(path):
                return self._update_locked(path, changes, remove, rewrite, stamp, (archive, recs, texts))

    def _update_locked(self, path: Path, changes: dict, remove: set, rewrite: bool, stamp: str,
                       moved: tuple[Path, list[dict], list[str]] | None) -> list[dict]:
        """update_many's work once the locks are held; `moved`: (archive, records appended to
        it, their lines), indexed before this file (their rows are still this file's until then)."""
        in_step = self._sync_locked(path)
        doc = str(path).endswith(".json")
        raw: dict = {}  # a log's lines as read: a rewrite writes the unchanged ones again as they are
        loaded = self._load_doc_for_rewrite(path) if doc else self._load_log(path, raw) if rewrite else None
        if loaded is not None and loaded.bad and not doc:
            loaded = None  # a rewrite would drop the corrupt lines: append instead
        if loaded is not None:
            current = present = loaded.records
        else:  # only the records to change are read whole; of those to remove, whether they are here
            current = self._current(path, set(changes))
            present = current.keys() | self._present(path, remove.difference(current))
        written = []
        for rid, change in changes.items():
            if rid in current and rid not in remove:
                new = change(dict(current[rid]))
                if new is not None:
                    new["updated"] = stamp
                    written.append(new)
        written, texts = _safe_lines(written)  # dumped once, for the file and the index (its `data`)
        # What the rows of the records patched hold now (the index is in step): their columns that
        # only the fields a patch left alone decide are kept (Index._patched_row).
        before = {r["id"]: current[r["id"]] for r in written} if in_step and not doc else None
        current.update((r["id"], r) for r in written)
        gone = [rid for rid in remove if rid in present]
        if not written and not gone:
            self._index_moves(moved, path)
            return []
        lines = written + [jsonl.tombstone(rid) for rid in gone]
        texts += [jsonl.dumps(r) for r in lines[len(written):]]
        if loaded is not None:
            for rid in gone:
                del current[rid]
            if doc:
                jsonl.rewrite(path, current.values())
            else:
                dumped = {r["id"]: t for r, t in zip(written, texts[:len(written)], strict=True)}
                jsonl.atomic_write(path, jsonl.lines_of(current, raw, dumped))
            self._index_moves(moved, path)
            if doc or not in_step:
                # A document's rows are read again whole: new rowids, at the end, which is the
                # order the next promote meets them in (conflict partners are paired first met).
                self._reindex_locked(path)
            else:
                self._index_rewrite(path, lines, len(current), texts, before)
        else:
            jsonl.append(path, lines, texts)
            self._index_moves(moved, path)
            self._index_write(path, lines, texts, before)
        return written

    @staticmethod
    def _load_log(path: Path, raw: dict) -> jsonl.Loaded:
        """jsonl.load of a log, its live records' lines as read kept in `raw` (parse_log)."""
        try:
            data = jsonl.read_bytes(path)
        except FileNotFoundError:
            return jsonl.Loaded({}, [], 0, 0)
        return jsonl.parse_log(str(path), data, jsonlite.loads, raw)

    def _index_moves(self, moved: tuple[Path, list[dict], list[str]] | None, source: Path) -> None:
        if moved is None:
            return
        archive, recs, texts = moved
        try:
            self.index.record_moves(archive, recs, source, texts)
        except _db().DatabaseError as exc:
            self._index_failed(exc)

    def _current(self, path: Path, ids: set[str]) -> dict[str, dict]:
        """The indexed copies of `ids` in one file (the caller has synced the index)."""
        rel, ids, out = self.index.rel(path), sorted(ids), {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            out.update((rid, jsonlite.loads(data)) for rid, data in self.index.data_by_id_in_file(rel, chunk))
        return out

    def _present(self, path: Path, ids: set[str]) -> set[str]:
        """Which of `ids` the index holds in one file (the caller has synced the index): a
        record to remove is not read (promote's archiving removes thousands)."""
        rel, ids, out = self.index.rel(path), sorted(ids), set()
        for start in range(0, len(ids), 500):
            out.update(self.index.ids_in_file(rel, ids[start:start + 500]))
        return out

    def compact(self, path: Path) -> tuple[int, int]:
        """Fold a log to one line per live record (lines before, after); the index follows
        under the same lock (its rows do not change, only the file's stat)."""
        with self._lock(path):
            in_step = self._sync_locked(path)
            before, after = jsonl.compact_locked(path, jsonl.fold_loads())
            if before != after:
                if in_step:
                    self._index_rewrite(path, [], after)
                else:
                    self._reindex_locked(path)
        return before, after

    def remove_stale_temps(self, older_than_s: float = 3600.0) -> list[Path]:
        """Delete the temp files of whole-file rewrites that a killed process left behind
        (`.<name>.<hex>.tmp`, never read by a loader). Only old ones: a young one may belong
        to a rewrite in progress. Returns the files removed (for doctor and prune to report)."""
        import time
        from pathlib import Path

        cutoff = time.time() - older_than_s
        removed = []
        for folder, _dirs, files in os.walk(self.home):
            for name in files:
                if not (name.startswith(".") and name.endswith(".tmp")):
                    continue
                path = Path(folder) / name
                try:
                    if path.stat().st_mtime <= cutoff:
                        path.unlink()
                        removed.append(path)
                except OSError:
                    continue
        return removed

    def batched(self):
        """A context in which many files' index writes share transactions (Index.batch):
        promote's and prune's writes of their decisions."""
        return self.index.batch()

    # -- internals -------------------------------------------------------------------------
    def _lock(self, path: Path):
        """The file lock of `path`; in a batch of index writes (`batched`), the batch's open
        transaction is committed before waiting for a busy lock."""
        return file_lock(path, before_wait=self._index.commit_batch if self._index is not None else None)

    def _sync_locked(self, path: Path) -> bool:
        """Bring the index in step with `path` (caller holds its lock); False when it failed."""
        try:
            if not self.index.expect_stat(path):
                bad = self.index._reindex_locked(path)
                for b in bad:
                    self.warn(b.describe())
            return True
        except _db().DatabaseError as exc:
            self._index_failed(exc)
            return False

    def _index_rewrite(self, path: Path, changed: list[dict], lines: int, texts: list[str] | None = None,
                       before: dict[str, dict] | None = None) -> None:
        try:
            self.index.record_rewrite(path, changed, lines, texts, before)
        except _db().DatabaseError as exc:
            self._index_failed(exc)

    def _index_write(self, path: Path, recs: list[dict], texts: list[str] | None = None,
                     before: dict[str, dict] | None = None) -> None:
        try:
            self.index.record_write(path, recs, len(recs), texts, before)
        except _db().DatabaseError as exc:
            self._index_failed(exc)

    def _reindex_locked(self, path: Path) -> None:
        try:
            self.index._reindex_locked(path)
        except _db().DatabaseError as exc:
            self._index_failed(exc)

    def _index_failed(self, exc: Exception) -> None:
        # The data file is already safe; the index heals from file stats on the next read.
        self.note(f"index not updated ({exc}); it will be rebuilt from the files")

    def _put_doc(self, path: Path, recs: list[dict]) -> None:
        with self._lock(path):
            self._rewrite_doc_locked(path, lambda cur: cur.update({r["id"]: r for r in recs}))

    def _rewrite_doc_locked(self, path: Path, change: Callable[[dict], object]) -> None:
        loaded = self._load_doc_for_rewrite(path)
        change(loaded.records)
        jsonl.rewrite(path, loaded.records.values())
        self._reindex_locked(path)

    def _load_doc_for_rewrite(self, path: Path) -> jsonl.Loaded:
        """A `.json` document about to be rewritten; when it is damaged, its bytes are kept in
        `<file>.corrupt` first (the records still readable are rewritten, nothing is lost)."""
        loaded = jsonl.load(path)
        if loaded.bad:
            jsonl.set_aside(path, jsonl.read_bytes(path))
            self.warn(f"{path}: damaged; kept a copy in {os.path.basename(path)}.corrupt and rewrote the "
                      f"{len(loaded.records)} learnings still readable")
        return loaded

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None


def _safe_lines(recs: list[dict]) -> tuple[list[dict], list[str]]:
    """The records as they can be written (utf8_safe) and their compact JSON lines: one
    json.dumps each, where utf8_safe and then the writer each dumped them."""
    out, texts = [], []
    dumps = jsonl.exact_dumps()
    for rec in recs:
        text = dumps(rec)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: scrubbed (utf8_safe), dumped again
            rec = utf8_safe(rec)
            text = jsonl.dumps(rec)
        out.append(rec)
        texts.append(text)
    return out, texts


def _labels(names: dict[str, str]) -> dict[str, str]:
    """pid -> label of live projects by name: the name, or "name (pid)" where two share it."""
    count: dict[str, int] = {}
    for name in names.values():
        count[name] = count.get(name, 0) + 1
    return {pid: name if count[name] == 1 else f"{name} ({pid})" for pid, name in names.items()}
