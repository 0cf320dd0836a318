"""Claude Code hook payloads -> Event (reference/agent-hooks.md §1.5-1.6).

Parsing is lenient: unknown keys are ignored, missing optional ones tolerated, every field is
type-checked because the payload is untrusted input. Failures are what Claude Code reports as
failures (`PostToolUseFailure`); the text of a successful result never turns it into one.
"""

from __future__ import annotations

from learn_cli.capture import events as ev

AGENT = "claude-code"

_KINDS = {
    "PostToolUseFailure": ev.FAILURE,
    "PostToolUse": ev.SUCCESS,
    "UserPromptSubmit": ev.PROMPT,
    "PreToolUse": ev.PRE_TOOL,
    "SessionStart": ev.SESSION_START,
    "SessionEnd": ev.SESSION_END,
    "Stop": ev.STOP,
}

# Caps applied while parsing: anything longer is not needed and is cut before redaction.
MAX_ERROR = 20_000
MAX_OUTPUT = 2_000
MAX_COMMAND = 4_000
MAX_PROMPT = 8_000
MAX_ID = 200


def _text(value, cap: int) -> str:
    if isinstance(value, str):
        return _utf8(value[:cap])
    return ""


def _utf8(text: str) -> str:
    """JSON may carry lone surrogates (`"\\ud800"`), which cannot be written as UTF-8."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _path_of(tool_input: dict) -> str:
    for name in ("file_path", "notebook_path", "path", "pattern", "url"):
        value = tool_input.get(name)
        if isinstance(value, str) and value.strip():
            return _utf8(value[:MAX_COMMAND])
    return ""


def _response_text(response) -> str:
    """The combined output of a successful tool. Shapes seen in Claude Code 2.1.197
    (tests/data/real-payloads): Bash `{stdout, stderr, …}` (stderr merged into stdout), Read
    `{type: "text", file: {content, …}}`, Write `{type: "create", content, …}`, Edit
    `{filePath, oldString, newString, …}` (no output of its own)."""
    if isinstance(response, str):
        return _utf8(response[:MAX_OUTPUT])
    if isinstance(response, dict):
        if isinstance(response.get("filenames"), list):  # Glob, Grep: the paths found, one a line
            return _utf8("\n".join(str(p) for p in response["filenames"][:200])[:MAX_OUTPUT])
        file = response.get("file")
        holders = (response, file) if isinstance(file, dict) else (response,)
        parts = [h.get(k) for h in holders for k in ("stdout", "stderr", "output", "content")]
        return _utf8("\n".join(p for p in parts if isinstance(p, str) and p)[:MAX_OUTPUT])
    return ""


def _error_text(value) -> str:
    if isinstance(value, str):
        return _utf8(_without_cwd_note(value[:MAX_ERROR]))
    if isinstance(value, dict):  # defensive: some versions may nest the message
        for name in ("error", "message", "stderr", "output"):
            if isinstance(value.get(name), str):
                return _utf8(_without_cwd_note(value[name][:MAX_ERROR]))
    return ""


_CWD_NOTE = " Note: your current working directory is "


def _without_cwd_note(error: str) -> str:
    """A failed Read says `File does not exist. Note: your current working directory is /x.`:
    the note is Claude Code's hint to the model, not the error, and must not become advice."""
    at = error.find(_CWD_NOTE)
    if at < 0:
        return error
    end = error.find("\n", at)
    return error[:at] + (error[end:] if end >= 0 else "")


def start_event(payload, kinds: dict, agent: str, tool_of=lambda name: name, **fields) -> tuple[ev.Event, str] | None:
    """The event of a payload shaped like Claude Code's (every adapter whose agent copied that
    shape starts here), with what they all read the same way: hook event, kind, session,
    folder, tool (`tool_of` maps the agent's tool name to ours), its input and source; `fields`
    set the rest or replace those. Returns the event and the tool name as the agent gave it,
    or None when the payload is not one of these."""
    if not isinstance(payload, dict):
        return None
    name = payload.get("hook_event_name")
    if not isinstance(name, str):
        return None
    tool_input = payload.get("tool_input")
    raw_tool = _text(payload.get("tool_name"), 100)
    values = {"hook_event": name[:64], "session_id": _text(payload.get("session_id"), MAX_ID),
              "cwd": _text(payload.get("cwd"), MAX_COMMAND), "tool": tool_of(raw_tool),
              "input": tool_input if isinstance(tool_input, dict) else {},
              "source": _text(payload.get("source"), 40)}
    values.update(fields)
    return ev.Event(kinds.get(name, ev.OTHER), agent, **values), raw_tool


def to_event(payload) -> ev.Event | None:
    """The event of one hook payload, or None when it is not one of Claude Code's."""
    started = start_event(payload, _KINDS, AGENT)
    if started is None:
        return None
    event, _tool = started
    event.tool_use_id = _text(payload.get("tool_use_id"), MAX_ID)
    event.source = event.source or _text(payload.get("reason"), 40)
    event.reason = _text(payload.get("reason"), 40)
    event.is_interrupt = payload.get("is_interrupt") is True
    kind, tool_input = event.kind, event.input
    command = tool_input.get("command")
    if isinstance(command, str):
        event.command = _utf8(command[:MAX_COMMAND])
    if not event.is_shell:
        event.path = _path_of(tool_input)
    if kind == ev.FAILURE:
        event.error = _error_text(payload.get("error"))
        event.exit_code = _exit_code(event.error)
    elif kind == ev.SUCCESS:
        response = payload.get("tool_response")
        if isinstance(response, dict) and response.get("interrupted") is True:
            event.kind = ev.OTHER  # cut short by the user: neither a success nor a failure
        event.output = _response_text(response)
    elif kind == ev.PROMPT:
        event.prompt = _text(payload.get("prompt"), MAX_PROMPT)
        event.prompt_id = _text(payload.get("prompt_id"), MAX_ID)
    return event


def _exit_code(error: str) -> int | None:
    from learn_cli.text.failure import parse_exit_code

    return parse_exit_code(error)


# ---------------------------------------------------------------------------------------------
# What the adapters of agents that copied Claude Code's shape share


def read_subject(event: ev.Event, command, path_field: str | None = None) -> None:
    """What a tool call worked on: a shell tool's `command`, any other tool's path (Claude
    Code's path fields first, then `path_field`, the agent's own name for it)."""
    if event.is_shell:
        event.command = _text(command, MAX_COMMAND)
        return
    event.path = _path_of(event.input)
    if not event.path and path_field:
        event.path = _text(event.input.get(path_field), MAX_COMMAND)


def finish_call(event: ev.Event, failed: bool, text: str, code: int | None) -> None:
    """A finished tool call: a failure keeps the end of its text (where the error is) and the
    exit code, a success the start of its output."""
    if failed:
        event.kind = ev.FAILURE
        event.error = _utf8(text[-MAX_ERROR:])
        event.exit_code = code
    else:
        event.output = _utf8(text[:MAX_OUTPUT])


def derived_id(agent: str, material: list) -> str:
    """A stable id made from a call itself, for agents that give none: a payload delivered
    twice is still one event."""
    import json

    from learn_cli.text.hashes import sha1_hex

    text = json.dumps(material, sort_keys=True, default=str)[:200_000]
    return f"{agent}-" + sha1_hex(text.encode("utf-8", "replace"))[:20]


def additional_context(event: ev.Event, text: str, after_tool: str) -> dict | None:
    """The `hookSpecificOutput.additionalContext` answer (Codex, Gemini), named after the hook
    event (`after_tool` when the payload named none); nothing before a tool runs."""
    if not text or event.kind == ev.PRE_TOOL:
        return None
    name = event.hook_event or ("SessionStart" if event.kind == ev.SESSION_START else after_tool)
    return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}


# ---------------------------------------------------------------------------------------------
# Installer: `learn hooks install` (reference/agent-hooks.md §1.1, §1.2, §1.10)

TITLE = "Claude Code"
SCOPES = ("user", "project", "local")
SHAPE = "nested"  # learn_cli.agents.hook_tables
# (event, matcher or None, learn sub-command, timeout in seconds or None)
ENTRIES = (
    ("SessionStart", None, "context --hook", 15),  # no matcher: startup, resume, clear, compact
    ("UserPromptSubmit", None, "capture", 10),
    ("PostToolUse", "*", "capture", 10),
    ("PostToolUseFailure", "*", "capture", 10),
    ("Stop", None, "capture", 10),
    # No timeout: a SessionEnd timeout would raise Claude Code's shared 1.5 s exit budget.
    ("SessionEnd", None, "capture", None),
)
# `--guard` only: a hook call before every shell command is worth it only to stop one.
GUARD = (("PreToolUse", "Bash", "capture --guard", 5),)
TRUST = None  # whether a registered hook runs by itself (see `hooks status`); None: it does
NOTE = None


def deny(reason: str) -> dict:
    """The PreToolUse answer that stops the call (`learn capture --guard`, capture.guard)."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def settings_path(scope: str, project_root):
    from learn_cli.agents.install import home_or_project

    name = "settings.local.json" if scope == "local" else "settings.json"
    return home_or_project(scope, project_root, ".claude", name)


# ---------------------------------------------------------------------------------------------
# Doctor: `learn doctor`'s hooks check (read-only)


def doctor_check(project, show=str) -> tuple[str, str, list[str]]:
    """(status, summary, details): whether `learn capture` is registered in Claude Code's
    settings files (user level, then the project's) and would run. `show` words a path."""
    import json
    import os

    from learn_cli.agents.hook_tables import ours_by_event

    registered: dict[str, list[str]] = {}
    where: list[str] = []
    details: list[str] = []
    problems: list[str] = []
    disabled = False
    scopes = SCOPES if project is not None else ("user",)
    for path in [settings_path(scope, project.root if project is not None else None) for scope in scopes]:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            details.append(f"{show(path)}: unreadable ({str(exc)[:60]})")
            continue
        if isinstance(doc, dict) and doc.get("disableAllHooks") is True:
            disabled = True
            details.append(f"{show(path)}: disableAllHooks is true")
        events = ours_by_event(doc.get("hooks") if isinstance(doc, dict) else None)
        if events:
            where.append(show(path))
            details.append(f"{show(path)}: {', '.join(sorted(events))}")
        for event, commands in events.items():
            registered.setdefault(event, []).extend(commands)
    for command in sorted({c for cmds in registered.values() for c in cmds}):
        program = command.split()[0]
        if os.path.isabs(program) and not os.access(program, os.X_OK):
            problems.append(f"{program} (registered in a hook) does not exist or cannot run")
    if problems:
        return "problem", "a registered `learn` cannot run: run `learn hooks install` again", problems + details
    if not registered:
        return "warn", "`learn capture` is not registered with Claude Code: run `learn hooks install`", details
    if disabled:
        return "warn", "registered, but Claude Code's disableAllHooks is on", details
    if "PostToolUseFailure" not in registered:
        summary = "registered, but not for PostToolUseFailure: failures are not captured (run `learn hooks install`)"
        return "warn", summary, details
    return "ok", f"registered in {', '.join(where)}", details
