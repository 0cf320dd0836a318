"""Synthetic session buffers (`sessions/<id>.jsonl`): the last tool events of an agent session.

The line format belongs to learn_cli.capture.session; when that module can turn an Event into
its stored line, the generator uses it, so the buffers are exactly what capture writes.
"""

from __future__ import annotations

import time

COMMANDS_OK = ["git status", "ls -la", "pytest -q tests/test_models.py", "npm run lint", "cat README.md",
               "pip install -r requirements.txt", "make build", "git diff --stat", "uv sync",
               "pnpm install", "go test ./pkg/...", "ruff check ."]
COMMANDS_FAIL = [("python app.py", "Exit code 1\nModuleNotFoundError: No module named 'requests'"),
                 ("npm test", "Exit code 1\nError: Cannot find module 'express'"),
                 ("pytest -q", "Exit code 127\nbash: pytest: command not found"),
                 ("curl https://api.github.com", "Exit code 6\ncurl: (6) Could not resolve host: api.github.com")]


def events(rng, sid: str, cwd: str, start: float, count: int) -> list[dict]:
    """`count` events of one session: mostly successes, a failure now and then."""
    from learn_cli.capture.events import FAILURE, SUCCESS, Event

    to_line = _serializer()
    out = []
    at = start
    for n in range(count):
        at += rng.uniform(5, 120)
        if rng.random() < 0.15:
            command, error = rng.choice(COMMANDS_FAIL)
            ev = Event(FAILURE, session_id=sid, cwd=cwd, tool="Bash", command=command,
                       tool_use_id=f"toolu_{rng.getrandbits(64):016x}", error=error,
                       exit_code=int(error.split()[2]), input={"command": command})
        else:
            command = rng.choice(COMMANDS_OK)
            ev = Event(SUCCESS, session_id=sid, cwd=cwd, tool="Bash", command=command,
                       tool_use_id=f"toolu_{rng.getrandbits(64):016x}", output="ok\n" * rng.randint(1, 20),
                       input={"command": command})
        out.append(to_line(ev, at))
    return out


def _serializer():
    try:
        from learn_cli.capture import session
    except ImportError:
        session = None
    for name in ("event_line", "to_line", "serialize", "as_line"):
        fn = getattr(session, name, None)
        if callable(fn):
            return lambda ev, at: fn(ev, at=_iso(at)) if _takes_at(fn) else fn(ev)
    return _generic


def _takes_at(fn) -> bool:
    import inspect

    try:
        return "at" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _generic(ev, at: float) -> dict:
    line = {"id": ev.tool_use_id, "at": _iso(at), "kind": ev.kind, "tool": ev.tool, "tool_use_id": ev.tool_use_id,
            "command": ev.command, "cwd": ev.cwd}
    if ev.error:
        line["error"] = ev.error
        line["exit_code"] = ev.exit_code
    if ev.output:
        line["output"] = ev.output[:500]
    return line


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
