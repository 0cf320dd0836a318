"""One-line warnings: to stderr (unless silenced) and appended to `<home>/learn.log`."""

from __future__ import annotations

import os
import sys
import time

from .jsonl import mend_tail
from .locks import file_lock
from .paths import open_private

MAX_LOG_BYTES = 1 << 20
TAIL_BYTES = 8192  # the recent lines looked at for a repeated message
REPEAT_AFTER_S = 3600
LOCK_WAIT_S = 0.5  # at most, for the log's lock (less when the hook's deadline is nearer)


def warn(message: str, log_path=None, stderr: bool = True) -> None:
    line = " ".join(str(message).split())[:500]
    if stderr:
        try:
            sys.stderr.write(f"learn: {line}\n")
        except (OSError, ValueError):
            pass
    if log_path is not None:
        append_log(log_path, line)


def append_log(log_path, line: str) -> None:
    """One line, unless the same message was logged in the last hour: a home that stays full or
    read-only must not grow the log by a line per tool call.

    Under the log's lock (as every other file of the home): the repeat check, the rotation and
    the cut of a torn last line (a writer killed mid-line, or a disk that filled up) need to
    know that no other writer is half way through a line. The wait is short and bounded by the
    hook's deadline: a warning line is never worth holding the agent, and the counters, not
    these lines, keep the counts."""
    try:
        with file_lock(log_path, timeout=LOCK_WAIT_S):
            _rotate_if_big(log_path)
            _append_locked(log_path, line.encode("utf-8", "replace"), time.time())
    except OSError:  # TimeoutError included: the line is dropped, never the caller's work
        pass


def _rotate_if_big(log_path) -> None:
    try:
        if os.path.getsize(log_path) > MAX_LOG_BYTES:
            os.replace(log_path, f"{log_path}.1")  # keep the log bounded: one old generation
    except OSError:
        pass


def _append_locked(log_path, message: bytes, now: float) -> None:
    fd = open_private(log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            size, _ = mend_tail(fd, size, log_path, whole=lambda _line: False)  # into learn.log.corrupt
        tail = os.pread(fd, min(size, TAIL_BYTES), max(0, size - TAIL_BYTES)) if size else b""
        if _logged_lately(tail, message, now):
            return
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
        data = f"{stamp} ".encode() + message + b"\n"
        written = os.write(fd, data)
        if written < len(data):
            os.ftruncate(fd, size)  # the disk filled up mid-line: no half line
    finally:
        os.close(fd)


def _logged_lately(tail: bytes, message: bytes, now: float) -> bool:
    import calendar

    for raw in reversed(tail.split(b"\n")):
        stamp, _, logged = raw.partition(b" ")
        if logged != message:
            continue
        try:
            when = calendar.timegm(time.strptime(stamp.decode("ascii"), "%Y-%m-%dT%H:%M:%SZ"))
        except (ValueError, UnicodeDecodeError):
            continue
        return now - when < REPEAT_AFTER_S
    return False
