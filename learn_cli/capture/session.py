"""The bounded, on-disk event buffer of one agent session: `sessions/<id>.jsonl` (SPEC §3).

The buffer is a log in the format of learn_cli.store.jsonl: one redacted event per line, and a
later line with the same `id` supersedes an earlier one (that is how a failure is marked as
consumed by its fix, or its suggestion as answered). Only the tail of the file is ever read,
so a capture costs the same on the first and on the thousandth tool call of a session.

Every read-decide-write of pairing happens under the buffer's lock (parallel tool calls of one
session run concurrently). When the log grows past twice `session_max_events` lines it is
rewritten atomically with the newest `session_max_events` events.

A session with learning work left for its end (promotion check, compaction) has a marker file
`sessions/pending/<id>.json`; it disappears only once that work is done, so work that did not fit
in the SessionEnd budget is picked up by a later capture, never lost.
"""

from __future__ import annotations

import os

from learn_cli.store import jsonl
from learn_cli.store.locks import file_lock
from learn_cli.store.paths import make_dir, open_private, session_file_stem
from learn_cli.text import jsonlite  # json without `re`: a SessionEnd reads a buffer (capture.hook._quick_end)

TAIL_BYTES = 256 * 1024  # the newest events always fit; older ones are trimmed away
MAX_EVENT_BYTES = 16 * 1024  # one event line, after its own field caps
DEFERRED = "deferred.json"
# Paths are strings here (given a `Path` or a string): the hook's processes never import pathlib.


class SessionBuffer:
    def __init__(self, sessions_dir, session_id: str, max_events: int = 50):
        self.session_id = session_id
        stem = session_file_stem(session_id)
        self.path = os.path.join(os.fspath(sessions_dir), f"{stem}.jsonl")
        self.todo_path = os.path.join(todo_dir(sessions_dir), f"{stem}.json")
        self.max_events = max(5, int(max_events))
        self._lines = 0
        self._whole = True

    def lock(self):
        return file_lock(self.path)

    # -- reading (caller holds the lock) -------------------------------------------------------
    def events(self) -> list[dict]:
        """Newest events last, each the latest version of its line (caller holds the lock)."""
        try:
            fd = open_private(self.path, os.O_RDONLY)
        except FileNotFoundError:
            self._lines, self._whole = 0, True
            return []
        try:
            size = os.fstat(fd).st_size
            start = max(0, size - TAIL_BYTES)
            data = os.pread(fd, size - start, start)
        finally:
            os.close(fd)
        self._whole = start == 0
        if not self._whole:
            data = data.split(b"\n", 1)[1] if b"\n" in data else b""
        loaded = jsonl.parse_log(self.path, data)
        self._lines = loaded.lines
        return list(loaded.records.values())

    # -- writing (caller holds the lock) -------------------------------------------------------
    def append(self, entries: list[dict]) -> None:
        """Add events (or newer versions of events) and trim the log when it is too long."""
        entries = [e for e in entries if len(jsonl.dumps(e)) <= MAX_EVENT_BYTES]
        if not entries:
            return
        make_dir(os.path.dirname(self.path))
        jsonl.append(self.path, entries)
        self._lines += len(entries)
        if self._lines > 2 * self.max_events or not self._whole:
            self._trim()

    def _trim(self) -> None:
        events = self.events()
        newest = {e["id"] for e in events[-self.max_events:]}
        # Entries that still owe work to the store are kept whatever their age.
        keep = [e for e in events if e["id"] in newest or e.get("todo")]
        jsonl.rewrite(self.path, keep, durable=False)
        self._lines, self._whole = len(keep), True

    # -- end-of-session work ---------------------------------------------------------------
    def add_todo(self, pid: str, keys: list[str] | None = None) -> None:
        """Note that a project of this session has end-of-session work (caller holds the lock):
        the promotion check of the learnings of `keys` (what the session wrote), or with None of
        the whole project."""
        todo = read_todo(self.todo_path)
        if not _add_work(todo, pid, keys):
            return
        todo["sid"] = self.session_id  # the file name is not always the id (see todo_session_id)
        make_dir(os.path.dirname(self.todo_path))
        jsonl.atomic_write(self.todo_path, jsonlite.dumps(todo).encode(), durable=False)


MAX_TODO_KEYS = 100  # keys of one project in a marker; beyond, the whole project is checked


def _add_work(todo: dict, pid: str, keys: list[str] | None) -> bool:
    """Add a project (and the keys it wrote) to a marker's work; False when it held them."""
    scoped = todo["keys"]
    if pid not in todo["pids"]:
        todo["pids"].append(pid)
        if keys is not None:
            scoped[pid] = sorted(set(keys))
        return True
    if pid not in scoped:
        return False  # the whole project already
    if keys is None or len(set(scoped[pid]) | set(keys)) > MAX_TODO_KEYS:
        del scoped[pid]
        return True
    if set(keys) <= set(scoped[pid]):
        return False
    scoped[pid] = sorted(set(scoped[pid]) | set(keys))
    return True


def todo_dir(sessions_dir) -> str:
    return os.path.join(os.fspath(sessions_dir), "pending")


def read_todo(path) -> dict:
    try:
        doc = jsonlite.loads(jsonl.read_bytes(path) or b"{}")
    except (OSError, ValueError):
        doc = {}
    pids = doc.get("pids") if isinstance(doc, dict) else None
    todo = {"pids": [p for p in pids if isinstance(p, str)][:10_000] if isinstance(pids, list) else []}
    keys = doc.get("keys") if isinstance(doc, dict) else None
    # pid -> the keys its work is about; a project not listed here: the whole project (as a
    # marker written before keys were says)
    todo["keys"] = {p: [k for k in ks if isinstance(k, str)][:MAX_TODO_KEYS] for p, ks in keys.items()
                    if p in todo["pids"] and isinstance(ks, list)} if isinstance(keys, dict) else {}
    if isinstance(doc, dict) and isinstance(doc.get("sid"), str):
        todo["sid"] = doc["sid"]
    return todo


def todo_session_id(path) -> str:
    """The session id of a marker: written in it (an id such as `a/b` has a file name of its
    own, not itself), else the file name (markers written before ids were)."""
    return read_todo(path).get("sid") or os.path.splitext(os.path.basename(path))[0]


def deferred_path(sessions_dir) -> str:
    """Projects whose end-of-session work is too big for a hook, for `learn promote`/`prune`."""
    return os.path.join(todo_dir(sessions_dir), DEFERRED)


def pending_todos(sessions_dir, limit: int = 20) -> list[str]:
    """Markers of sessions whose end-of-session work is still to do, oldest first."""
    try:
        entries = [e for e in os.scandir(todo_dir(sessions_dir)) if e.name.endswith(".json") and e.name != DEFERRED]
    except OSError:
        return []
    entries.sort(key=lambda e: _mtime(e))
    return [e.path for e in entries[:limit]]


def _mtime(entry) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0
