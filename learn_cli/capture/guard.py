"""The guard (`learn hooks install --guard`): stop a known-bad shell command before it runs.

Registered on the agent's pre-tool event for shell commands only when the user asks for it
(`learn capture --guard`). Before a command that failed before in this project or globally,
whose learning is active and whose fix has helped at least once, the guard denies the call
once per session and gives the fix as the reason, so the failing run never happens and the
model reads the fix in place of the tool's result. The same learning is not used to deny again
in that session: the model may have a reason to run the command, and a second try runs.

Why not a heads-up in context instead (what `learn` did before): Claude Code hands a
PreToolUse hook's context to the model only with the tool's result, in the same message as the
failure note, so the model read the same fix twice, after the failure, and every shell call
waited for the hook. A deny answers before the run and only when there is something to stop.

Answers per agent: its module's `deny(reason)` (learn_cli.agents; Claude Code, Codex and
Gemini CLI have one, verified with Claude Code 2.1.197, Codex 0.171.0, Gemini CLI 0.61.0). An
agent without `deny`: no guard.
Stdlib only (hot path).
"""

from __future__ import annotations

import json
import os
import re

from learn_cli.capture import events as ev
from learn_cli.capture import learner, offers
from learn_cli.store import jsonl
from learn_cli.store.index import sqlite3
from learn_cli.store.locks import file_lock


def check(cap, event: ev.Event) -> dict | None:
    """The agent's deny answer for this pre-tool event, or None to let it run."""
    if not event.is_shell or not event.command.strip() or not hasattr(_agent(event.agent), "deny"):
        return None
    rec = known_bad(cap, event.command)
    if rec is None or not _first_time(cap, rec["id"]):
        return None
    cap.count("guarded")
    return deny(event.agent, reason(cap, rec, event.command))


def known_bad(cap, command: str) -> dict | None:
    """The active learning (this project's or global) that says this very command fails, with
    a fix to run instead that has helped before."""
    from learn_cli.text.redact import redact
    from learn_cli.text.shell import inner_command

    normalized = learner._normalize(inner_command(learner._capped(redact(command))), cap.project.root)  # as stored
    words = re.findall(r"[^\W_]+", normalized)[:12]
    if not words:
        return None
    store = cap.store
    learner._fresh(store, cap.learnings_path, store.layout.global_errors)
    try:
        rows = store.index.live_errors_matching('"' + " ".join(words) + '"', cap.project.id)
    except sqlite3.Error:
        return None
    for data in rows:
        rec = json.loads(data)
        # Only a command that is wrong in itself: a "fix in between" (install first) was
        # about the environment then, which has likely changed since.
        if rec.get("fix_kind", "retry") != "retry" or not rec.get("fix_command"):
            continue
        if learner._int(rec.get("helped")) < 1:
            continue  # a fix never seen to help is not worth stopping the agent for
        if learner._normalize(rec.get("command") or "", None) == normalized:
            return rec
    return None


def reason(cap, rec: dict, raw: str = "") -> str:
    return (offers.describe_fix(cap, rec, raw=raw) + "\nlearn: the command was stopped before it ran; "
            "run the fix instead (running the same command again in this session is not stopped).")


def deny(agent: str, text: str) -> dict:
    """The agent's answer that stops the tool call, `text` the reason the model reads."""
    return _agent(agent).deny(text)


def _agent(name: str):
    from learn_cli import agents

    return agents.module(name)


def _first_time(cap, rec_id: str) -> bool:
    """True the first time a learning stops a command in this session (then remembered in
    `sessions/<id>.guard.jsonl`, which `learn prune` removes with the session's buffer)."""
    path = cap.buffer.path[: -len(".jsonl")] + ".guard.jsonl"
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with file_lock(path):
        if os.path.exists(path) and rec_id in jsonl.load(path).records:
            return False
        jsonl.append(path, [{"id": rec_id, "at": cap.now}])
    return True
