"""One-line warnings: to stderr (unless silenced) and appended to `<home>/learn.log`."""

from __future__ import annotations

import os
import sys
import time

MAX_LOG_BYTES = 1 << 20


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
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        if os.path.getsize(log_path) > MAX_LOG_BYTES:
            os.replace(log_path, f"{log_path}.1")  # keep the log bounded: one old generation
    except OSError:
        pass
    try:
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, f"{stamp} {line}\n".encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass
