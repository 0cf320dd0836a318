"""The moment by which the current hook process must be done (time.monotonic()), or None.

A hook (`learn capture`) sets it once; every wait of the store is then bounded by it: SQLite's
busy timeout (a C-level sleep that SIGALRM cannot interrupt) is the time left, a statement
still running then is stopped by a progress handler (the alarm's handler cannot run inside
it either), and a file lock wait ends there too. Commands never set it and keep their usual, longer waits.
"""

from __future__ import annotations

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


def signals():
    """The functions and constants of `signal` (`signal`, `setitimer`, `pthread_sigmask`,
    `SIGALRM`, …) from `_signal`, the built-in module under it, which every interpreter has
    loaded already: importing `signal` itself builds its enums (~3.6 M instructions, a tenth
    of a bare interpreter's start), and the hook only needs these few."""
    try:
        import _signal

        return _signal
    except ImportError:  # pragma: no cover - another Python implementation
        import signal

        return signal


class held:
    """The hook's alarm (SIGALRM) waits until the block is done: for a few writes that must go
    together (a counter and what it counts). The block has no wait of its own.
    (A class, not `contextlib.contextmanager`: the hook path does not import contextlib.)"""

    __slots__ = ("previous",)

    def __enter__(self):
        self.previous = None
        try:
            sig = signals()
            self.previous = sig.pthread_sigmask(sig.SIG_BLOCK, {sig.SIGALRM})
        except (AttributeError, ValueError, OSError):  # no signals here
            pass
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            sig = signals()
            sig.pthread_sigmask(sig.SIG_SETMASK, self.previous)
        return False
