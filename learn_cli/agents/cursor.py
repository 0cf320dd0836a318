"""Cursor hook payloads -> Event (reference/agent-hooks.md §3.3).

- `postToolUseFailure`: a failure (`error_message`); a `permission_denied` one is not a
  learning, a user interrupt is dropped by the dispatcher.
- `postToolUse`: a success, unless the shell result it carries (`tool_output`, a JSON string
  such as `{"exitCode":1,"stdout":…}`) has a non-zero `exitCode`. Whether Cursor routes a
  non-zero exit here or to postToolUseFailure is UNVERIFIED, so both are read; they carry the
  same `tool_use_id`, so one call is never counted twice.
- `afterShellExecution` (no exit code): only for Cursor versions without postToolUse. Newer
  Cursor fires it beside postToolUse for the same command, so a payload with the fields that
  came with the tool events (`sandbox`, `duration`) is ignored; the older form is read with
  the conservative output rule of the Codex adapter.
- `sessionStart` / `sessionEnd` / `stop`: context and end-of-session work.

Context goes back as top-level `additional_context` (postToolUse, sessionStart); Cursor
reads no output of postToolUseFailure. Stdlib only (hot path).
"""

from __future__ import annotations

import json

from learn_cli.agents import claude as base
from learn_cli.capture import events as ev

AGENT = "cursor"

_KINDS = {
    "postToolUse": ev.SUCCESS,
    "postToolUseFailure": ev.FAILURE,
    "afterShellExecution": ev.SUCCESS,
    "preToolUse": ev.PRE_TOOL,
    "beforeSubmitPrompt": ev.PROMPT,
    "sessionStart": ev.SESSION_START,
    "sessionEnd": ev.SESSION_END,
    "stop": ev.STOP,
}
TOOLS = {
    "shell": "Bash", "terminal": "Bash", "run_terminal_cmd": "Bash",
    "read": "Read", "readfile": "Read", "read_file": "Read",
    "write": "Write", "write_file": "Write",
    "strreplace": "Edit", "edit": "Edit", "multiedit": "Edit", "search_replace": "Edit", "edit_file": "Edit",
    "grep": "Grep", "glob": "Glob", "glob_file_search": "Glob",
    "ls": "LS", "list_dir": "LS", "delete": "Delete", "delete_file": "Delete",
}
MODERN_SHELL_FIELDS = ("sandbox", "duration")
MAX_TOOL_OUTPUT = 1_000_000  # characters of a tool_output JSON string worth parsing


def to_event(payload) -> ev.Event | None:
    if not isinstance(payload, dict):  # read below before start_event checks it
        return None
    started = base.start_event(
        payload, _KINDS, AGENT, lambda name: TOOLS.get(name.lower(), name),
        session_id=base._text(payload.get("conversation_id") or payload.get("session_id"), base.MAX_ID),
        cwd=_cwd(payload), is_interrupt=payload.get("is_interrupt") is True)
    if started is None:
        return None
    event, _tool = started
    kind = event.kind
    if event.hook_event == "afterShellExecution":
        return _shell_execution(event, payload)
    base.read_subject(event, event.input.get("command"), "target_file")
    if kind == ev.PROMPT:
        event.prompt = base._text(payload.get("prompt"), base.MAX_PROMPT)
        event.prompt_id = base._text(payload.get("generation_id"), base.MAX_ID)
        return event
    if kind not in (ev.SUCCESS, ev.FAILURE, ev.PRE_TOOL):
        return event
    event.tool_use_id = base._text(payload.get("tool_use_id"), base.MAX_ID) or _derived_id(payload)
    if kind == ev.FAILURE:
        if payload.get("failure_type") == "permission_denied":
            event.kind = ev.OTHER  # a refusal, not something that went wrong
        event.error = base._error_text(payload.get("error_message") or payload.get("error"))
        if event.is_shell:
            event.exit_code = base._exit_code(event.error)
    elif kind == ev.SUCCESS:
        _tool_output(event, payload.get("tool_output"))
    return event


def _tool_output(event: ev.Event, raw) -> None:
    """postToolUse: `tool_output` is a JSON string; a shell result with exitCode ≠ 0 failed."""
    doc = raw
    if isinstance(raw, str) and raw[:1] in "{[" and len(raw) <= MAX_TOOL_OUTPUT:
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = raw
    if isinstance(doc, str):
        event.output = base._utf8(doc[: base.MAX_OUTPUT])
        return
    if not isinstance(doc, dict):
        return
    parts = [doc.get(k) for k in ("stdout", "stderr", "output", "content")]
    text = "\n".join(p for p in parts if isinstance(p, str) and p)
    code = doc.get("exitCode", doc.get("exit_code"))
    failed = event.is_shell and isinstance(code, int) and not isinstance(code, bool) and code != 0
    base.finish_call(event, failed, text, code if failed else None)


def _shell_execution(event: ev.Event, payload: dict) -> ev.Event:
    if any(field in payload for field in MODERN_SHELL_FIELDS):
        event.kind = ev.OTHER  # postToolUse reports this command, with its exit code
        return event
    from learn_cli.agents.codex import detect_failure

    event.tool = "Bash"
    event.command = base._text(payload.get("command"), base.MAX_COMMAND)
    output = payload.get("output") if isinstance(payload.get("output"), str) else ""
    event.tool_use_id = _derived_id(payload)
    failed, code = detect_failure(event.command, output)
    base.finish_call(event, failed, output, code)
    return event


def _cwd(payload: dict) -> str:
    cwd = base._text(payload.get("cwd"), base.MAX_COMMAND)
    if cwd:
        return cwd
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return base._utf8(roots[0][: base.MAX_COMMAND])
    import os

    return base._utf8(os.environ.get("CURSOR_PROJECT_DIR", "")[: base.MAX_COMMAND])


def _derived_id(payload: dict) -> str:
    """When Cursor gives no tool-call id (afterShellExecution)."""
    fields = ("conversation_id", "generation_id", "hook_event_name", "tool_name", "command", "output")
    return base.derived_id("cursor", [payload.get(k) for k in fields] + [payload.get("tool_input")])


def hook_output(event: ev.Event, text: str) -> dict | None:
    """Cursor reads top-level `additional_context` from postToolUse and sessionStart only."""
    if not text:
        return None
    if event.kind == ev.SESSION_START or event.hook_event == "postToolUse":
        return {"additional_context": text}
    return None


# ---------------------------------------------------------------------------------------------
# Installer: `learn hooks install --agent cursor` (reference §3.3):
# `{"version": 1, "hooks": {event: [{command, timeout}]}}`, flat

TITLE = "Cursor"
SCOPES = ("user", "project")
SHAPE = "flat"
ENTRIES = (
    ("sessionStart", None, "context --hook --agent cursor", 15),
    ("postToolUse", None, "capture --agent cursor", 10),
    ("postToolUseFailure", None, "capture --agent cursor", 10),
    ("afterShellExecution", None, "capture --agent cursor", 10),  # Cursor without postToolUse
    ("sessionEnd", None, "capture --agent cursor", 5),
)
GUARD = ()  # no guard: not verified on a real Cursor


def settings_path(scope: str, project_root):
    from learn_cli.agents.install import home_or_project

    return home_or_project(scope, project_root, ".cursor", "hooks.json")


def handler(command: str, timeout: int) -> dict:
    return {"command": command, "timeout": timeout}
