"""The spool's files (see learn_cli.capture.spool for what goes in and how it is learned).

`<home>/spool/` (0700, files 0600), one set of files per agent session (`<name>` is the
session id made file-name safe), so the sessions' backlogs are replayed in parallel:
  <name>.jsonl              live: hooks append one event per line (one O_APPEND write each,
                            under a shared flock, so a replayer can take the file away whole)
  <name>.<ns>.batch         taken by that session's replayer (renamed from <name>.jsonl under
                            an exclusive flock), replayed in order
  <name>.<ns>.done          that batch's progress: one line per event done, failed or dropped
  <name>.lock               one replayer per session at a time

Every wait here is a non-blocking flock retried until a time limit: never a sleep in the kernel.
"""

from __future__ import annotations

import errno
import os
import sys
import time

from learn_cli.text import jsonlite  # json's C half: a hook imports no `json` (text/jsonlite.py)

from . import deadline
from .paths import NOFOLLOW, make_dir, session_file_stem

TYPE_CHECKING = False  # no pathlib on the hook path (paths.Layout): paths here are strings
if TYPE_CHECKING:
    from pathlib import Path

SPOOL_DIR = "spool"
LIVE, BATCH, DONE, LOCK = ".jsonl", ".batch", ".done", ".lock"
STAMP_CHARS = 21  # "." + 20 digits of time_ns between a session's name and a batch's suffix
SHARE_WAIT_S = 1.0  # an appender's wait for the shared lock (held exclusively only for a rename)
TAKE_WAIT_S = 2.0  # a replayer's wait for appenders to finish their one write
_TRANSIENT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EAGAIN, errno.EINTR}


def is_transient(exc: BaseException) -> bool:
    """A failure that says nothing about the event (time, locks, a busy or full disk): try later.
    (A busy index raises sqlite3.OperationalError, the class of `_sqlite3`, the C module that
    store.index imports and the `sqlite3` package wraps; where it was never imported, this
    process opened no index and nothing here can be one: the hook does not import it for that.)"""
    if isinstance(exc, (TimeoutError, BlockingIOError, InterruptedError)):
        return True
    sqlite3 = sys.modules.get("_sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.OperationalError):
        return True
    return isinstance(exc, OSError) and exc.errno in _TRANSIENT_ERRNOS


class SpoolFiles:
    def __init__(self, home):
        # the kind of path given (a hook's string, a command's Path), for what is handed out
        self.kind = str if isinstance(home, str) else type(home)
        self.dir = self.kind(os.path.join(os.fspath(home), SPOOL_DIR))

    # -- what is there ---------------------------------------------------------------------
    def sessions(self) -> set[str]:
        """Names of the sessions with events in the spool; one listdir (none: no folder)."""
        try:
            names = os.listdir(self.dir)
        except OSError:
            return set()
        return {session_name(n) for n in names if n.endswith((LIVE, BATCH))}

    def batches(self, name: str) -> list[Path]:
        """A session's batches, oldest first (its live file not included)."""
        try:
            found = [n for n in os.listdir(self.dir) if n.endswith(BATCH) and session_name(n) == name]
        except OSError:
            return []
        return [self.kind(os.path.join(self.dir, n)) for n in sorted(found)]

    def waiting(self) -> dict[str, int]:
        """session name -> number of its events not learned yet."""
        out: dict[str, int] = {}
        for name in self.sessions():
            count = len(items(os.path.join(self.dir, f"{name}{LIVE}")))
            for batch in self.batches(name):
                finished = progress(batch).finished
                count += sum(1 for key, _ in items(batch) if key not in finished)
            if count:
                out[name] = count
        return out

    # -- writing ---------------------------------------------------------------------------
    def append(self, session_id: str, item: dict) -> None:
        """One item as one line of the session's live file; OSError when it cannot be written
        whole."""
        line = jsonlite.dumps(item, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")
        data = b"\n" + line + b"\n"  # a line cut short by a full disk never glues onto the next
        make_dir(self.dir)
        path = os.path.join(self.dir, f"{session_file_stem(session_id)}{LIVE}")
        give_up = time.monotonic() + SHARE_WAIT_S
        while True:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | NOFOLLOW, 0o600)
            try:
                _flock(fd, shared=True, until=give_up)
                if _same_file(fd, path):  # not taken away by a replayer while we waited
                    _write_line(fd, data, path)
                    return
            finally:
                os.close(fd)

    # -- replaying -------------------------------------------------------------------------
    def replaying(self, name: str, wait: float = 0.0) -> _Replaying:
        """`with files.replaying(name) as mine:` holds the session's replayer lock (mine is
        True), or finds another replayer at work (False)."""
        return _Replaying(os.path.join(self.dir, f"{name}{LOCK}"), wait)

    def take_live(self, name: str) -> None:
        """Rename the session's live file to a batch once no appender is writing to it (the
        caller holds the session's replayer lock)."""
        path = os.path.join(self.dir, f"{name}{LIVE}")
        try:
            fd = os.open(path, os.O_RDONLY | NOFOLLOW)
        except FileNotFoundError:
            return
        try:
            give_up, delay = time.monotonic() + TAKE_WAIT_S, 0.0005
            while not _rename_when_free(fd, path, os.path.join(self.dir, f"{name}.{time.time_ns():020d}{BATCH}")):
                if time.monotonic() + delay > give_up:
                    return  # appenders kept it busy: the next replay takes it
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
        finally:
            os.close(fd)

    @staticmethod
    def remove(batch: Path) -> None:
        """A batch all of whose events are finished, then its progress notes (the other order
        would replay the batch again if the process died in between). The hook's hard stop
        waits for both; a kill -9 between them leaves notes without a batch: tidy() removes
        them."""
        with deadline.held():
            for path in (batch, done_path(batch)):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass

    def tidy(self) -> None:
        """Remove the progress notes left without their batch, then the replayer locks of
        sessions with nothing left (commands only: a lock removed under a replayer's feet
        would let a second one start)."""
        for n in self._names():
            if n.endswith(DONE) and not os.path.exists(os.path.join(self.dir, n[: -len(DONE)] + BATCH)):
                self._remove_orphan_notes(os.path.join(self.dir, n))
        busy = self.sessions()
        for n in self._names():
            if n.endswith(LOCK) and n[: -len(LOCK)] not in busy:
                _unlink_quietly(os.path.join(self.dir, n))

    def _names(self) -> list[str]:
        try:
            return os.listdir(self.dir)
        except OSError:
            return []

    def _remove_orphan_notes(self, done: str) -> None:
        """Progress notes whose batch is gone (its replayer died between the two unlinks of
        remove()); checked again under the session's replayer lock, never under a replayer."""
        with self.replaying(session_name(os.path.basename(done))) as mine:
            if mine and not os.path.exists(done[: -len(DONE)] + BATCH):
                _unlink_quietly(done)


class _Replaying:
    """SpoolFiles.replaying (a class, not `contextlib.contextmanager`: the hook path does not
    import contextlib)."""

    __slots__ = ("path", "wait", "fd")

    def __init__(self, path: str, wait: float):
        self.path, self.wait, self.fd = path, wait, None

    def __enter__(self) -> bool:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)
        try:
            _flock(self.fd, shared=False, until=time.monotonic() + self.wait)
        except TimeoutError:
            return False
        except BaseException:
            self.__exit__()
            raise
        return True

    def __exit__(self, *exc) -> bool:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)
        return False


def _unlink_quietly(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def session_name(file_name: str) -> str:
    """The session part of a spool file's name."""
    for suffix in (LIVE, LOCK):
        if file_name.endswith(suffix):
            return file_name[: -len(suffix)]
    return file_name[: -(STAMP_CHARS + len(BATCH))]  # .batch and .done share the length


class Progress:
    def __init__(self):
        self.finished: set[str] = set()  # done or dropped
        self.tries: dict[str, int] = {}


def done_path(batch: Path | str) -> str:
    return os.path.splitext(os.fspath(batch))[0] + DONE


def items(batch: Path) -> list[tuple[str, dict | None]]:
    """(key, item) per line, in order; item None for a line that does not parse (its key is
    its line number, so it is counted once)."""
    try:
        with open(batch, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return []
    out = []
    for n, raw in enumerate(data.split(b"\n")):
        if not raw.strip():
            continue
        try:
            item = jsonlite.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            item = None
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]:
            out.append((item["id"][:64], item))
        else:
            out.append((f"line:{n}", None))
    return out


def progress(batch: Path) -> Progress:
    state = Progress()
    try:
        with open(done_path(batch), "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return state
    for raw in data.split(b"\n"):
        try:
            note = jsonlite.loads(raw) if raw.strip() else None
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(note, dict) or not isinstance(note.get("id"), str):
            continue
        if note.get("state") in ("done", "dropped"):
            state.finished.add(note["id"])
        elif note.get("state") == "failed":
            state.tries[note["id"]] = state.tries.get(note["id"], 0) + 1
    return state


def note(batch: Path, key: str, state: str, why: str = "") -> None:
    doc = {"id": key, "state": state}
    if why:
        doc["why"] = why
    fd = os.open(done_path(batch), os.O_WRONLY | os.O_APPEND | os.O_CREAT | NOFOLLOW, 0o600)
    try:
        os.write(fd, b"\n" + jsonlite.dumps(doc).encode() + b"\n")
    finally:
        os.close(fd)


def _write_line(fd: int, data: bytes, path: Path) -> None:
    """One O_APPEND write of a whole line; when the disk cuts it short (EFBIG, ENOSPC), the
    half line is taken back if nobody appended after it (checked under the exclusive lock)."""
    import fcntl

    try:
        written = os.write(fd, data)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    if written == len(data):
        return
    end = os.lseek(fd, 0, os.SEEK_CUR)  # O_APPEND: just past our bytes
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_size == end:
            os.ftruncate(fd, end - written)
    except OSError:
        pass  # another appender is at work: the replayer counts the cut line as dropped
    raise OSError(errno.ENOSPC, "the spool line was cut short", str(path))


def _rename_when_free(fd: int, path: str, batch: str) -> bool:
    """Take the live file's exclusive lock if no appender holds it, rename the file, let go;
    False when it is busy. The hook's hard stop waits for the whole of it: it spools its own
    event by appending to this very file, and would otherwise wait for a lock its process holds
    (a flock is per open file) until it gave up, and the event was lost."""
    import fcntl

    with deadline.held():
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        try:
            if _same_file(fd, path):
                os.rename(path, batch)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def _flock(fd: int, shared: bool, until: float) -> None:
    """flock without ever sleeping in the kernel: retried until `until`, then TimeoutError."""
    import fcntl

    mode = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
    delay = 0.0005
    while True:
        try:
            fcntl.flock(fd, mode)
            return
        except BlockingIOError:
            if time.monotonic() + delay > until:
                raise TimeoutError("spool busy") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
