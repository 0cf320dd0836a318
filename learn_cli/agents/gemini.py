"""Gemini CLI hook payloads -> Event (reference/agent-hooks.md §3.2).

`AfterTool` fires for every tool call, failed or not. A call failed when Gemini says so: the
`tool_response.error` field (a failed `read_file`), or, for `run_shell_command`, a non-zero
`Exit Code:` in the result it gives the model. Gemini CLI 0.61 wraps that result in
`<untrusted_context>…</untrusted_context>` with `Output:` / `Exit Code:` / `Process Group PGID:`
lines, and sets no `error` for a failed command (tests/data/real-payloads/gemini-cli-0.61.0);
older versions gave `Command:/Stdout:/Stderr:/Exit Code:` unwrapped. Both are read. The output
text itself never turns a success into a failure.

A shell command runs in the folder its `dir_path` (`directory` in older versions) names, when
inside the hook's `cwd`: the event's `folder` (its project is still the one of `cwd`).

Tool names are mapped to Claude Code's (`run_shell_command` -> `Bash`, `read_file` -> `Read`…)
so the same failure seen through either agent gets the same error key. Stdlib only (hot path).
"""

from __future__ import annotations

import functools
import os
import re

from learn_cli.agents import claude as base
from learn_cli.capture import events as ev

AGENT = "gemini"

_KINDS = {
    "AfterTool": ev.SUCCESS,  # a failure is decided from the response below
    "BeforeTool": ev.PRE_TOOL,
    "BeforeAgent": ev.PROMPT,
    "SessionStart": ev.SESSION_START,
    "SessionEnd": ev.SESSION_END,
}
TOOLS = {
    "run_shell_command": "Bash", "shell": "Bash",
    "read_file": "Read", "read_many_files": "Read",
    "write_file": "Write",
    "replace": "Edit", "edit": "Edit", "smart_edit": "Edit",
    "glob": "Glob",
    "search_file_content": "Grep", "grep": "Grep", "grep_search": "Grep",
    "list_directory": "LS", "ls": "LS",
    "web_fetch": "WebFetch", "google_web_search": "WebSearch",
}
# Fields of run_shell_command's result: only the output ones are the command's own text.
_OUTPUT_FIELDS = ("Stdout", "Stderr", "Output", "Error")
_FIELDS = ("Command", "Directory", "Stdout", "Stderr", "Output", "Error", "Exit Code", "Signal",
           "Background PIDs", "Process Group PGID")
_EMPTY = ("(empty)", "(none)", "")
_WRAPPER = ("<untrusted_context>", "</untrusted_context>")


@functools.cache
def _field_re() -> re.Pattern[str]:
    names = "|".join(re.escape(f) for f in _FIELDS)
    return re.compile(rf"^({names}):[ \t]?", re.MULTILINE)


def shell_fields(text: str) -> dict[str, str]:
    """`Command: …\\nStdout: …\\nExit Code: 1` -> {"Command": …, "Stdout": …, "Exit Code": "1"}.
    Empty when the text is not in that form. An `<untrusted_context>` wrapper is taken off."""
    text = _unwrapped(text)
    matches = list(_field_re().finditer(text))
    if not matches or matches[0].start() != 0:
        return {}
    fields = {}
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        fields.setdefault(match.group(1), text[match.end():end].strip("\n"))
    return fields


def _unwrapped(text: str) -> str:
    """The text inside Gemini's `<untrusted_context>` wrapper (the whole text without one)."""
    stripped = text.strip()
    if stripped.startswith(_WRAPPER[0]) and stripped.endswith(_WRAPPER[1]):
        return stripped[len(_WRAPPER[0]):-len(_WRAPPER[1])].strip("\n")
    return text


def _exit_code(fields: dict[str, str]) -> int | None:
    value = fields.get("Exit Code", "").strip()
    return int(value) if re.fullmatch(r"-?\d+", value) else None


def _shell_output(fields: dict[str, str], raw: str) -> str:
    if not fields:
        return raw
    parts = [fields[f] for f in _OUTPUT_FIELDS if f in fields and fields[f].strip() not in _EMPTY]
    return "\n".join(parts)


def _text_of(value) -> str:
    """llmContent / returnDisplay: a string, a Part ({text}) or a list of them."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    if isinstance(value, list):
        return "\n".join(_text_of(v) for v in value[:200] if not isinstance(v, list))
    return ""


def _error_of(response: dict) -> str:
    error = response.get("error")
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        for name in ("message", "error", "type"):
            if isinstance(error.get(name), str) and error[name]:
                return error[name]
    return ""


def to_event(payload) -> ev.Event | None:
    started = base.start_event(payload, _KINDS, AGENT, lambda name: TOOLS.get(name, name))
    if started is None:
        return None
    event, _tool = started
    event.source = event.source or base._text(payload.get("reason"), 40)
    kind = event.kind
    base.read_subject(event, event.input.get("command"), "absolute_path")
    if event.is_shell:
        event.folder = _runs_in(event.cwd, event.input.get("dir_path") or event.input.get("directory"))
    if kind == ev.PROMPT:
        event.prompt = base._text(payload.get("prompt"), base.MAX_PROMPT)
    elif kind in (ev.SUCCESS, ev.PRE_TOOL):
        event.tool_use_id = base._text(payload.get("tool_use_id") or payload.get("tool_call_id"), base.MAX_ID) \
            or _derived_id(payload)
        if kind == ev.SUCCESS:
            _outcome(event, payload.get("tool_response"))
    return event


def _runs_in(cwd: str, folder) -> str:
    """The folder a shell command ran in when `run_shell_command` was given one (`dir_path`,
    named `directory` before; relative to the project, or absolute) inside the hook's `cwd`;
    else "". The project stays the one of `cwd`, the session's."""
    if not cwd or not isinstance(folder, str) or not folder.strip() or "\0" in folder:
        return ""
    here = os.path.normpath(cwd)
    path = os.path.normpath(os.path.join(here, folder.strip()))
    return path if path.startswith(os.path.join(here, "")) else ""


def _outcome(event: ev.Event, response) -> None:
    response = response if isinstance(response, dict) else {"llmContent": response}
    content = _text_of(response.get("llmContent")) or _text_of(response.get("returnDisplay"))
    error = _error_of(response)
    code = None
    output = content
    if event.is_shell:
        fields = shell_fields(content)
        code = _exit_code(fields)
        output = _shell_output(fields, content)
    failed = bool(error) or (code is not None and code != 0)
    if failed:
        output = output if not error or error in output else (error + "\n" + output).strip()
        if not output.strip() and code is not None:
            output = f"Exit code {code}"  # a command that failed silently (`false`), as Claude Code says it
    base.finish_call(event, failed, output, code)


def _derived_id(payload: dict) -> str:
    """Gemini gives no tool-call id (the timestamp keeps two runs of one command apart)."""
    return base.derived_id("gemini", [payload.get("session_id"), payload.get("timestamp"), payload.get("tool_name"),
                                      payload.get("tool_input")])


def hook_output(event: ev.Event, text: str) -> dict | None:
    """Gemini reads `hookSpecificOutput.additionalContext` after a tool and at session start."""
    return base.additional_context(event, text, "AfterTool")


# ---------------------------------------------------------------------------------------------
# Installer: `learn hooks install --agent gemini` (reference §3.2): the nested shape in
# `settings.json`, handlers named, timeouts in ms

TITLE = "Gemini CLI"
SCOPES = ("user", "project")
SHAPE = "nested"
ENTRIES = (
    ("SessionStart", None, "context --hook --agent gemini", 15),
    ("BeforeAgent", None, "capture --agent gemini", 10),  # the prompt: corrections
    ("AfterTool", None, "capture --agent gemini", 10),  # failed calls included
    ("SessionEnd", None, "capture --agent gemini", 5),
)
GUARD = (("BeforeTool", "run_shell_command", "capture --agent gemini --guard", 5),)


def deny(reason: str) -> dict:
    """BeforeTool's answer that stops the call."""
    return {"decision": "deny", "reason": reason}


def settings_path(scope: str, project_root):
    from learn_cli.agents.install import home_or_project

    return home_or_project(scope, project_root, ".gemini", "settings.json")


def handler(command: str, timeout: int) -> dict:
    return {"type": "command", "name": "learn", "command": command, "timeout": timeout * 1000}
