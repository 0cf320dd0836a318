"""Staging: new files written in `<home>/.import-<hex>/`, renamed into place at the end (nothing is
written unless the whole file reads), their index rows made from the records staged."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .common import _dumps, _has_data

# ---------------------------------------------------------------- writing


class _Staging:
    """The logs an import writes whole, staged in a folder of the home until the whole export
    has been read, then renamed into place: a refused file leaves the store as it was. Their
    index rows are made here from the records just written and their lines (no worker reads
    the files back and parses them again), recorded with the staged file's stat (a rename
    keeps it), INDEX_BATCH rows a transaction: hooks write between them. The rows' derived
    columns are left NULL, as a hook's write leaves them: the next promote or prune derives
    them (conflict features cost ~35 µs a record, most of an import's index work)."""

    INDEX_BATCH = 5_000

    def __init__(self, store):
        self.store = store
        self.folder: Path | None = None
        self.staged: list[tuple[Path, Path]] = []  # (target, staged file)
        self.targets: set[Path] = set()
        self.unindexed: list[tuple] = []  # Index.file_rows of the files staged since the last transaction
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
        rows, texts = _write_log(staged, recs)
        self.syncs.add(staged)
        self.unindexed.append(self.store.index.file_rows(target, rows, staged, texts))  # the records are let go
        self.waiting += len(recs)
        if self.waiting >= self.INDEX_BATCH:
            self.index()

    def index(self) -> None:
        """Write the rows of the files staged since the last time, in one transaction."""
        if self.unindexed:
            files, self.unindexed, self.waiting = self.unindexed, [], 0
            try:
                self.store.index.load_file_rows(files)
            except _db_error() as exc:  # the files are the truth: the index heals from their stats
                self.store.note(f"index not updated ({exc}); it will be rebuilt from the files")

    def commit(self) -> None:
        """Put every staged file in place of its target. A target that does not exist is the
        staged file linked there (`os.link` creates no file if the target appeared meanwhile:
        no lock is needed, and no lock file is made: creating files costs this file system
        more than writing them); an empty one is replaced under the target's lock; one that
        got data meanwhile (a capture) gets the records appended instead."""
        from learn_cli.store import jsonl
        from learn_cli.store.locks import file_lock

        self.index()
        try:
            self.syncs.wait()  # every staged file is on disk before any is renamed
            folders = set()
            for target, staged in self.staged:
                if target.parent not in folders:
                    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                    folders.add(target.parent)
                if _linked(staged, target):
                    continue
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
        self.unindexed = []
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


def _linked(staged: Path, target: Path) -> bool:
    """The staged file in place of a target that does not exist (False when it does)."""
    try:
        os.link(staged, target)
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: renamed under the lock, as before
        return False
    os.unlink(staged)
    return True


def _db_error():
    from learn_cli.store.index import sqlite3

    return sqlite3.DatabaseError


_STAGING = ".import-"  # staging folders: <home>/.import-<hex>


def _remove_empty_folders(home: Path, prefix: str) -> None:
    """Staging folders of imports that were killed, once `learn doctor` removed their files."""
    for entry in os.scandir(home):
        if entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False):
            try:
                os.rmdir(entry.path)
            except OSError:
                pass  # not empty: an import running now, or files doctor has not removed yet


def _write_log(path: Path, recs: list[dict]) -> tuple[list[dict], list[str]]:
    """Write a new log holding `recs` (stamped `updated`). Returns the records as a reader of
    the file gets them (a line the standard library wrote, see `_dumps`, read back: its text
    was repaired) and their lines as text (their index rows' `data`)."""
    from learn_cli.store import jsonl
    from learn_cli.store.paths import FILE_MODE
    from learn_cli.store.record import now_iso

    stamp = now_iso()
    rows, texts = [], []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        lines, held = [], 0
        for rec in recs:  # written ~1 MB at a time
            rec["updated"] = stamp
            line, standard = _dumps(rec)
            lines.append(line)
            held += len(line)
            text = line.decode("utf-8")
            texts.append(text)
            rows.append(json.loads(text) if standard else rec)
            if held >= _WRITE_BYTES:
                jsonl._write_all(fd, b"\n".join(lines) + b"\n")
                lines, held = [], 0
        if lines:
            jsonl._write_all(fd, b"\n".join(lines) + b"\n")
    finally:
        os.close(fd)
    return rows, texts


_WRITE_BYTES = 1 << 20


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


def _create_projects(store, projects: dict[str, dict], pids: list[str], staged: set[Path]) -> None:
    """Register the projects the import created, their index rows in shared transactions (a
    commit each cost ~1 ms: 1,000 projects in the realistic 100,000 file). A log about to be
    put in place from `staged` is not created empty first (`commit` links it there)."""
    from learn_cli.store.project import Project

    with store.index.batch():
        for pid in pids:
            info = projects[pid]
            logs = [path for path in (store.layout.learnings(pid), store.layout.archive(pid)) if path not in staged]
            store.register_project(Project(id=pid, name=info["name"], root=info["root"], remote=info["remote"]),
                                   logs=logs)
