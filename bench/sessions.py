"""Synthetic session buffers (`sessions/<id>.jsonl`): the last tool events of an agent session.

The line format belongs to capture: the generator builds each line with
learn_cli.capture.learner.tool_entry, so the buffers are exactly what `learn capture` writes.
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


def events(rng, sid: str, cwd: str, pid: str, start: float, count: int) -> list[dict]:
    """`count` events of one session: mostly successes, a failure now and then."""
    from learn_cli.capture.events import FAILURE, SUCCESS, Event

    to_line = _serializer()
    out = []
    at = start
    for _ in range(count):
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
        out.append(to_line(ev, at, pid))
    return out


def _serializer():
    """capture's own entry builder (learner.tool_entry) when it is there, else a stand-in."""
    try:
        from learn_cli.capture.learner import tool_entry
    except ImportError:
        return _generic
    from types import SimpleNamespace

    def to_line(ev, at: float, pid: str) -> dict:
        try:
            return tool_entry(SimpleNamespace(now=_iso(at), project=SimpleNamespace(id=pid)), ev)
        except (AttributeError, TypeError):  # its internals moved on: keep generating
            return _generic(ev, at, pid)

    return to_line


def _generic(ev, at: float, pid: str) -> dict:
    line = {"id": ev.tool_use_id, "at": _iso(at), "kind": ev.kind, "tool": ev.tool, "pid": pid, "cmd": ev.command}
    if ev.error:
        line.update(err=ev.error.split("\n", 1)[-1], code=ev.exit_code)
    else:
        line["mut"] = False
    return line


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
