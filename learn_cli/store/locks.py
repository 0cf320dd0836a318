"""One exclusive lock per data file, shared by every `learn` process.

`fcntl.flock` on a sidecar `<file>.lock`: released by the kernel when a process dies, so a
kill -9 never leaves a stale lock. `filelock` (same flock underneath) is used only where fcntl
does not exist; it is kept off POSIX because importing it costs ~30 ms, more than the whole
capture budget.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

LOCK_MODE = 0o600


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = 10.0):
    """Hold the lock of `path` for the duration of the block."""
    if fcntl is None:  # pragma: no cover
        from filelock import FileLock

        with FileLock(str(lock_path(path)), timeout=timeout):
            yield
        return
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, LOCK_MODE)
    try:
        _acquire(fd, timeout)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _acquire(fd: int, timeout: float) -> None:
    import os as _os
    if _os.environ.get("LEARN_BLOCKING_LOCK"):
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    import time

    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"lock busy: {fd}") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
