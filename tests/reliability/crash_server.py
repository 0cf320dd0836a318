"""A fork server for the crash tests: imports everything `learn` needs once, then forks one
child per request, so the child starts its real work (prune, promote, import, compaction)
at once and a kill -9 at a random moment lands inside the work rather than inside Python's
start-up.

Protocol, one JSON object per line. In: {"home", "cwd", "argv"} runs
`learn_cli.__main__.main(argv)` (the installed `learn` executable's entry point);
{"home", "cwd", "compact": path} runs Store(home).compact(path). With "kill_in_big_write": seconds, the child
is killed that long after an append (O_APPEND) of over 1 MiB begins (SIGALRM left to its default action,
which ends the process as SIGKILL does: no handler runs, the write stops part way), whatever
the machine's load (the torn-lines test; the write itself is the real one). Out: {"pid"} as soon as the
child exists, then {"status", "elapsed"} when it is gone (killed or finished).
"""

from __future__ import annotations

import json
import os
import sys
import time

import orjson  # noqa: F401 - imported here so the children do not pay for it

import learn_cli.__main__ as entry
import learn_cli.cli  # noqa: F401
from learn_cli.commands import _common, export, import_, promote, prune  # noqa: F401
from learn_cli.engine import digest, exchange, merge, promotion  # noqa: F401
from learn_cli.engine import prune as prune_engine  # noqa: F401
from learn_cli.render import exchange as render_exchange  # noqa: F401
from learn_cli.render import promote as render_promote  # noqa: F401
from learn_cli.render import prune as render_prune  # noqa: F401
from learn_cli.store.api import Store


def child(request: dict) -> int:
    os.environ["SELF_LEARNING_HOME"] = request["home"]
    os.environ["NO_COLOR"] = "1"
    os.chdir(request["cwd"])
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(quiet, fd)
    if "kill_in_big_write" in request:
        _kill_in_big_write(request["kill_in_big_write"])
    if "compact" in request:
        Store(request["home"], warn_stderr=False).compact(request["compact"])
        return 0
    return entry.main(request["argv"])


def _kill_in_big_write(after: float, over: int = 1 << 20) -> None:
    """The alarm is timed from inside the child: a parent woken to send SIGKILL comes too late
    on a loaded machine (the ~1 ms write is over before it is scheduled)."""
    import fcntl
    import signal
    import types

    from learn_cli.store import jsonl

    real = os

    def write(fd, data):
        if len(data) > over and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND:
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.setitimer(signal.ITIMER_REAL, after)
        return real.write(fd, data)

    jsonl.os = types.SimpleNamespace(**{k: getattr(real, k) for k in dir(real) if not k.startswith("__")})
    jsonl.os.write = write


def _save_traceback(path) -> None:
    if path:
        import traceback

        with open(path, "a") as fh:
            fh.write(traceback.format_exc())


def serve() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                code = child(request)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:  # noqa: BLE001 - report as a failed run, with the traceback
                code = 99
                _save_traceback(request.get("errlog"))
            os._exit(code if isinstance(code, int) else 0)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": status, "elapsed": time.monotonic() - started}), flush=True)


if __name__ == "__main__":
    serve()
