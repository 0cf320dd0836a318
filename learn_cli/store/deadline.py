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


_holding = 0  # depth of held() blocks running now
_missed = False  # an alarm came while one ran: it is raised again when the last one ends


class held:
    """The hook's alarm (SIGALRM) waits until the block is done: for a few writes that must go
    together (a counter and what it counts). The block has no wait of its own.

    Blocking the signal is not enough: an alarm the kernel delivered just before the block began
    has only been noted by the C handler, and Python runs its handler at the next bytecode,
    inside the block. The handler asks `must_wait()` first; the alarm it puts off is raised
    again as the block ends. (Without this, 1 event in ~1,500 was lost when 256 hooks ran at
    once: a hard stop ran inside the spooling of the event it was there to spool.)
    (A class, not `contextlib.contextmanager`: the hook path does not import contextlib.)"""

    __slots__ = ("previous",)

    def __enter__(self):
        global _holding
        _holding += 1
        self.previous = None
        try:
            sig = signals()
            self.previous = sig.pthread_sigmask(sig.SIG_BLOCK, {sig.SIGALRM})
        except (AttributeError, ValueError, OSError):  # no signals here
            pass
        return self

    def __exit__(self, *exc):
        global _holding, _missed
        if self.previous is not None:
            sig = signals()
            sig.pthread_sigmask(sig.SIG_SETMASK, self.previous)
        _holding -= 1
        if _holding == 0 and _missed:
            _missed = False
            sig = signals()
            if callable(sig.getsignal(sig.SIGALRM)):  # still our handler (never the default: it kills)
                sig.raise_signal(sig.SIGALRM)  # the alarm put off: its handler runs now
        return False


def must_wait() -> bool:
    """For the alarm's handler: True (and the alarm noted, to be raised again when the block
    ends) while a held() block runs."""
    global _missed
    if _holding:
        _missed = True
        return True
    return False
