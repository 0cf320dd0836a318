"""One exclusive lock per data file, shared by every `learn` process.

`fcntl.flock` on a sidecar `<file>.lock`: released by the kernel when a process dies, so a
kill -9 never leaves a stale lock. `filelock` (same flock underneath) is used only where fcntl
does not exist; it is kept off POSIX because importing it costs ~30 ms, more than the whole
capture budget.
"""

from __future__ import annotations

import errno
import os

from . import deadline
from .paths import NOFOLLOW

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms of every hook)
if TYPE_CHECKING:
    from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

LOCK_MODE = 0o600


def lock_path(path: Path) -> str:
    return os.fspath(path) + ".lock"


class file_lock:
    """`with file_lock(path):` holds the lock of `path` for the duration of the block;
    TimeoutError when it stays busy for `timeout` seconds, or past the hook's deadline
    (store.deadline), whichever is sooner. `before_wait()` is called when the lock is busy,
    before waiting for it (a batch of index writes commits there: nobody waits for a file lock
    inside an open transaction). (A class, not `contextlib.contextmanager`: the hook path does
    not import contextlib.)"""

    __slots__ = ("path", "timeout", "before_wait", "fd", "fallback")

    def __init__(self, path: Path, timeout: float = 10.0, before_wait=None):
        self.path, self.timeout, self.before_wait, self.fd, self.fallback = path, timeout, before_wait, None, None

    def __enter__(self):
        timeout = deadline.remaining(self.timeout)
        if fcntl is None:  # pragma: no cover
            from filelock import FileLock

            if self.before_wait is not None:
                self.before_wait()
            self.fallback = FileLock(str(lock_path(self.path)), timeout=timeout)
            self.fallback.acquire()
            return self
        self.fd = _open_lock(lock_path(self.path))
        if self.fd is None:  # a home we may only read: there is no writer to keep out through it
            return self
        try:
            _acquire(self.fd, timeout, self.before_wait)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> bool:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)  # closing releases the flock
        if self.fallback is not None:  # pragma: no cover
            self.fallback.release()
            self.fallback = None
        return False


def _open_lock(path: Path) -> int | None:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, LOCK_MODE)  # never via a planted symlink
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
    try:
        return os.open(path, os.O_RDONLY | NOFOLLOW)  # flock works on a read-only descriptor too
    except OSError:
        return None


def _acquire(fd: int, timeout: float, before_wait=None) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        if timeout <= 0:
            raise TimeoutError("lock busy and no time left") from None
    if before_wait is not None:
        before_wait()
    if deadline.active() or not _wait_in_kernel(fd, timeout):
        _poll(fd, timeout)


def _wait_in_kernel(fd: int, timeout: float) -> bool:
    """Block in flock until the lock is free, bounded by a SIGALRM timer: for commands, which
    have no deadline of their own. False when this thread cannot use signals (not the main
    thread) or a timer is already armed, so the caller must poll instead.

    A hook never comes here (store.deadline is set): its wait is the poll below, which ends at
    its deadline with a TimeoutError the hook answers by spooling, never with a signal that
    lands wherever the process happens to be.
    """
    import signal

    try:
        if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
            return False  # someone else's timer: ours would replace it
        previous = signal.signal(signal.SIGALRM, _on_lock_timeout)
    except (ValueError, AttributeError, OSError):  # not the main thread, or no SIGALRM
        return False
    try:
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except _LockTimeout:
            raise TimeoutError(f"lock busy for {timeout:g}s") from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
    return True


class _LockTimeout(Exception):
    pass


def _on_lock_timeout(_signum, _frame):
    raise _LockTimeout()


POLL_FIRST_S = 0.0005
POLL_MAX_S = 0.01  # a waiter looks again at least this often: it is not left behind by a convoy


def _poll(fd: int, timeout: float) -> None:
    """LOCK_NB retried with short sleeps until `timeout` (and the hook's deadline) has passed:
    never a sleep in the kernel that only a signal could end. The sleeps are jittered so that
    many waiters do not wake in step."""
    import time

    give_up = time.monotonic() + timeout
    delay = POLL_FIRST_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = min(give_up, deadline.current() or give_up) - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"lock busy for {timeout:g}s") from None
            time.sleep(min(left, delay * (0.5 + int.from_bytes(os.urandom(1), "big") / 255)))
            delay = min(delay * 2, POLL_MAX_S)
