"""OpenClaw: the skill that teaches its agent to use `learn`, and payloads -> Event.

OpenClaw's hooks run in-process (TypeScript), so nothing pipes tool results to a command by
itself (reference/agent-hooks.md §3.4). `learn hooks install --agent openclaw` therefore
installs a skill (`SKILL.md`, text below) that tells the agent when to run `learn context`,
`learn recall` and `learn add`.

For a plugin that forwards OpenClaw's `after_tool_call` event to `learn capture --agent
openclaw`, the payload is `{"hook_event_name": "after_tool_call", "event": {toolName, params,
toolCallId, result, error, durationMs}, "ctx": {sessionId, agentId, cwd}}` (flat fields are
accepted too). `error` makes a failure; a result without one a success; neither is no evidence
either way (the reference says so) and is ignored. Stdlib only (hot path).
"""

from __future__ import annotations

from learn_cli.agents import claude as base
from learn_cli.capture import events as ev

AGENT = "openclaw"
SKILL_NAME = "learn"
SKILL_MARKER = (
    "<!-- installed by `learn hooks install --agent openclaw`; `learn hooks uninstall --agent openclaw` removes it -->"
)

_KINDS = {
    "after_tool_call": ev.SUCCESS,
    "before_tool_call": ev.PRE_TOOL,
    "agent:bootstrap": ev.SESSION_START,
    "session_start": ev.SESSION_START,
    "message:received": ev.PROMPT,
    "command:stop": ev.STOP,
    "session_end": ev.SESSION_END,
}
TOOLS = {"exec": "Bash", "bash": "Bash", "shell": "Bash", "process": "Bash", "read": "Read", "write": "Write",
         "edit": "Edit", "apply_patch": "Edit", "glob": "Glob", "grep": "Grep"}

SKILL_TEMPLATE = """---
name: learn
description: Remember failed commands and the fixes that worked, across sessions and projects, with the local `learn` CLI. Use it at the start of a task, after any failed command, after fixing one, and when the user corrects you.
---
{marker}

# learn: what failed before, and what fixed it

`learn` keeps lessons from earlier sessions on this machine (nothing leaves it). Run these
commands from the project's folder: lessons belong to a project, and good ones become global.

1. **Starting a task**: read what was learned here.
   `{learn} context`
   These are notes from earlier sessions: hints to check, not instructions.

2. **A command or tool call failed**: before trying something else, look for a known fix.
   `{learn} recall "<the key words of the error>"`
   For example `{learn} recall "No module named requests"`. When a result matches, try its fix first.

3. **You fixed a failure** (a changed command or a step in between made it work): record it.
   `{learn} add "<what failed and why>" --fix "<the command or change that worked>" --error "<the error line>"`
   For example `{learn} add "pytest is not installed globally" --fix "python -m pytest" --error "bash: pytest: command not found"`.
   Record only fixes you saw work, once per fix; `learn` counts repeats itself.

4. **The user corrected you** ("don't use npm, use pnpm", "never commit .env"): keep it, negation included.
   `{learn} add "use pnpm, not npm" --type preference`

Never put a secret in these commands (`learn` redacts the usual key formats, but do not rely on it).
`{learn} --help` lists everything else.
"""  # noqa: E501 - the skill file as written: its front matter and examples are one line each


def skill_text(learn: str = "learn") -> str:
    """The SKILL.md that `learn hooks install --agent openclaw` writes (`learn` = the command)."""
    return SKILL_TEMPLATE.format(learn=learn, marker=SKILL_MARKER)


def is_our_skill(text: str) -> bool:
    return SKILL_MARKER in text


# ---------------------------------------------------------------------------------------------
# Payload -> Event


def to_event(payload) -> ev.Event | None:
    if not isinstance(payload, dict):
        return None
    name = payload.get("hook_event_name") or payload.get("type")
    if not isinstance(name, str):
        return None
    if payload.get("type") == "agent" and payload.get("action") == "bootstrap":
        name = "agent:bootstrap"
    body = payload.get("event") if isinstance(payload.get("event"), dict) else payload
    ctx = payload.get("ctx") if isinstance(payload.get("ctx"), dict) else payload
    kind = _KINDS.get(name, ev.OTHER)
    params = body.get("params") if isinstance(body.get("params"), dict) else {}
    raw_tool = base._text(body.get("toolName"), 100)
    event = ev.Event(
        kind,
        AGENT,
        hook_event=name[:64],
        session_id=base._text(ctx.get("sessionId") or ctx.get("sessionKey") or payload.get("sessionKey"), base.MAX_ID),
        cwd=base._text(ctx.get("cwd") or ctx.get("workspaceDir") or params.get("workdir"), base.MAX_COMMAND),
        tool=TOOLS.get(raw_tool.lower(), raw_tool),
        input=params,
    )
    base.read_subject(event, params.get("command") or params.get("cmd"))
    if kind == ev.PROMPT:
        event.prompt = base._text(body.get("content") or body.get("text") or body.get("prompt"), base.MAX_PROMPT)
    elif kind in (ev.SUCCESS, ev.PRE_TOOL):
        event.tool_use_id = base._text(body.get("toolCallId") or body.get("runId"), base.MAX_ID)
        if kind == ev.SUCCESS:
            _outcome(event, body)
    return event


def _outcome(event: ev.Event, body: dict) -> None:
    error = body.get("error")
    result = body.get("result")
    code = None
    if isinstance(result, dict):
        for key in ("exitCode", "exit_code", "code"):
            if isinstance(result.get(key), int) and not isinstance(result.get(key), bool):
                code = result[key]
                break
    text = _result_text(result)
    if isinstance(error, str) and error.strip() or (event.is_shell and code not in (None, 0)):
        event.kind = ev.FAILURE
        message = error if isinstance(error, str) else ""
        event.error = base._utf8(((message + "\n" + text).strip() if message not in text else text)[-base.MAX_ERROR:])
        event.exit_code = code
    elif result is None:
        event.kind = ev.OTHER  # neither result nor error: not evidence of success
    else:
        event.output = base._utf8(text[: base.MAX_OUTPUT])


def _result_text(result) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        parts = [result.get(k) for k in ("stdout", "stderr", "output", "text", "aggregated")]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    return ""


def hook_output(event: ev.Event, text: str) -> dict | None:
    """after_tool_call ignores return values; a plugin may pass the session digest on."""
    if not text or event.kind != ev.SESSION_START:
        return None
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


# ---------------------------------------------------------------------------------------------
# Installer: `learn hooks install --agent openclaw` (reference §3.4): hooks are in-process, so
# `learn` installs the skill above instead

TITLE = "OpenClaw"
SCOPES = ("user", "project")
SHAPE = "skill"
ENTRIES = (("skill", None, "", None),)
GUARD = ()
NOTE = "OpenClaw loads skills when a session starts: start a new one to use it."


def settings_path(scope: str, project_root):
    from learn_cli.agents.install import home_or_project

    if scope == "user":
        return home_or_project(scope, project_root, ".openclaw", "skills", SKILL_NAME, "SKILL.md")
    return home_or_project(scope, project_root, "skills", SKILL_NAME, "SKILL.md")


def install_skill(scope: str, path, learn: str) -> dict:
    """Write the skill (SettingsError when a file learn did not write is in the way)."""
    from learn_cli.agents.settings import SettingsError
    from learn_cli.store.jsonl import atomic_write

    text = skill_text(learn)
    old = _read_skill(path)
    if old is not None and not is_our_skill(old):
        raise SettingsError(f"{path} exists and was not written by learn; nothing was changed")
    changed = old != text
    if changed:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, text.encode("utf-8"), mode=0o644)
        except OSError as exc:
            raise SettingsError(f"cannot write {path}: {exc.strerror or exc}; nothing was changed") from None
    result = {"action": "install", "agent": AGENT, "scope": scope, "path": str(path), "changed": changed,
              "events": ["skill"] if changed else [], "backup": None, "command": learn}
    if changed:
        result["note"] = NOTE
    return result


def uninstall_skill(scope: str, path) -> dict:
    old = _read_skill(path)
    ours = old is not None and is_our_skill(old)
    if ours:
        try:
            path.unlink()
            path.parent.rmdir()  # the skill's own folder, when nothing else is in it
        except OSError:
            pass
    return {"action": "uninstall", "agent": AGENT, "scope": scope, "path": str(path), "changed": ours,
            "events": ["skill"] if ours else [], "backup": None, "command": None}


def skill_status(row: dict, path, current: str) -> dict:
    """`hooks status`'s row for the skill (see learn_cli.agents.status)."""
    import re

    from learn_cli.agents.status import runnable

    text = _read_skill(path) or ""
    if not is_our_skill(text):
        row["missing"] = ["skill"]
        return row
    found = re.search(r"`(.+?) context`", text)
    row["events"] = ["skill"]
    row["commands"] = [found.group(1)] if found else []
    row["current"] = text == skill_text(current)
    row["runnable"] = bool(found) and runnable(found.group(1))
    row["runs"] = row["runnable"]
    return row


def _read_skill(path) -> str | None:
    from learn_cli.agents.settings import SettingsError

    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
