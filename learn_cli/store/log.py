"""One-line warnings: to stderr (unless silenced) and appended to `<home>/learn.log`."""

from __future__ import annotations

import os
import sys
import time

from .paths import open_private

MAX_LOG_BYTES = 1 << 20
TAIL_BYTES = 8192  # the recent lines looked at for a repeated message
REPEAT_AFTER_S = 3600


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
    read-only must not grow the log by a line per tool call."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    try:
        if os.path.getsize(log_path) > MAX_LOG_BYTES:
            os.replace(log_path, f"{log_path}.1")  # keep the log bounded: one old generation
    except OSError:
        pass
    try:
        fd = open_private(log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        try:
            size = os.fstat(fd).st_size
            tail = os.pread(fd, min(size, TAIL_BYTES), max(0, size - TAIL_BYTES)) if size else b""
            message = line.encode("utf-8", "replace")
            if _logged_lately(tail, message, now):
                return
            data = f"{stamp} ".encode() + message + b"\n"
            if tail and not tail.endswith(b"\n"):
                data = b"\n" + data  # a full disk cut the last line short: never glue onto it
            written = os.write(fd, data)
            if written < len(data) and os.fstat(fd).st_size == size + written:
                os.ftruncate(fd, size)  # the disk filled up mid-line: no half line (if still ours)
        finally:
            os.close(fd)
    except OSError:
        pass


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
