"""A small, long-lived launcher: runs one command per request and reports its wall time and
its own peak memory.

Why a separate process: Linux gives a child spawned with vfork (what subprocess and
posix_spawn use) the parent's memory high-water mark as its starting `ru_maxrss`. Spawned
from the runner, which has generated a 100,000-learning home in memory, even `/bin/true`
would "peak" at hundreds of MB. This launcher imports almost nothing, so a child's figure is
its own (anything below ~10 MB, this launcher's size, reads as ~10 MB).

Protocol: one JSON request per line on stdin, {"argv", "env", "cwd", "stdin", "stdout",
"stderr", "timeout"} (stdin/stdout/stderr are file paths), one JSON reply per line on stdout,
{"wall_ms", "cpu_ms", "rss_kb", "code"}.
"""

import json
import os
import signal
import sys
import time


def run(req: dict) -> dict:
    actions = [(os.POSIX_SPAWN_OPEN, 0, req.get("stdin") or os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
               (os.POSIX_SPAWN_OPEN, 2, req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
    argv = req["argv"]
    old_cwd = os.getcwd()
    os.chdir(req["cwd"])  # posix_spawn has no cwd action before Python 3.13
    try:
        started = time.perf_counter()
        pid = os.posix_spawnp(argv[0], argv, req["env"], file_actions=actions)
    finally:
        os.chdir(old_cwd)
    signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))
    signal.setitimer(signal.ITIMER_REAL, float(req.get("timeout") or 300))
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    wall = (time.perf_counter() - started) * 1000
    signal.setitimer(signal.ITIMER_REAL, 0)
    return {"wall_ms": wall, "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000, "rss_kb": usage.ru_maxrss,
            "code": os.waitstatus_to_exitcode(status)}


def main() -> None:
    for line in sys.stdin:
        try:
            reply = run(json.loads(line))
        except (OSError, ValueError, KeyError, TypeError) as exc:  # report, keep serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
