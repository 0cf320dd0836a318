"""The moment by which the current hook process must be done (time.monotonic()), or None.

A hook (`learn capture`) sets it once; every wait of the store is then bounded by it: SQLite's
busy timeout (a C-level sleep that SIGALRM cannot interrupt) is the time left, a statement
still running then is stopped by a progress handler (the alarm's handler cannot run inside
it either), and a file lock wait ends there too. Commands never set it and keep their usual, longer waits.
"""

from __future__ import annotations

import contextlib
import time

_at: float | None = None


def set_deadline(at: float | None) -> None:
    global _at
    _at = at


def current() -> float | None:
    return _at


def passed() -> bool:
    """True once the deadline is behind us (SQLite's progress handler: a long statement stops)."""
    return _at is not None and time.monotonic() > _at


class Reached(TimeoutError):
    """The hook's deadline has passed (check()): a TimeoutError, so whoever judges failures
    (store.spool.is_transient) sees a matter of time, and the event goes to the spool."""


def check(what: str = "") -> None:
    """Between two phases of work (CPU, not waits): stop here when the deadline has passed, at a
    point where nothing is half done, instead of letting a starved process run on."""
    if _at is not None and time.monotonic() > _at:
        raise Reached(f"past the hook's deadline{' before ' + what if what else ''}")


def active() -> bool:
    return _at is not None


def remaining(default: float) -> float:
    """Seconds a wait may take: `default`, or less when the hook's deadline is nearer."""
    if _at is None:
        return default
    return max(0.0, min(default, _at - time.monotonic()))


@contextlib.contextmanager
def held():
    """The hook's alarm (SIGALRM) waits until the block is done: for a few writes that must go
    together (a counter and what it counts). The block has no wait of its own."""
    try:
        import signal

        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    except (ImportError, AttributeError, ValueError, OSError):  # no signals here
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
