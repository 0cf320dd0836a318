"""The agent-neutral event every adapter produces (ARCHITECTURE "Capture contracts").

A plain class with __slots__ rather than a dataclass: `dataclasses` pulls `inspect` in, which
costs more import time than the whole event handling on the capture path.
"""

from __future__ import annotations

FAILURE = "failure"
SUCCESS = "success"
PROMPT = "prompt"
PRE_TOOL = "pre_tool"
SESSION_START = "session_start"
SESSION_END = "session_end"
STOP = "stop"
OTHER = "other"
KINDS = (FAILURE, SUCCESS, PROMPT, PRE_TOOL, SESSION_START, SESSION_END, STOP, OTHER)

# Tools whose retry is judged by their path argument (SPEC §2.4).
PATH_TOOLS = frozenset({"Read", "Edit", "MultiEdit", "Write", "Glob", "Grep", "NotebookEdit", "NotebookRead"})
SHELL_TOOLS = frozenset({"Bash", "PowerShell"})


class Event:
    """One thing the agent did or reported, with every field a plain str/int/bool/dict."""

    __slots__ = ("agent", "kind", "session_id", "cwd", "tool", "tool_use_id", "command", "path", "input",
                 "output", "error", "exit_code", "prompt", "prompt_id", "is_interrupt", "source", "reason",
                 "hook_event", "folder")

    def __init__(self, kind: str, agent: str = "claude-code", **fields):
        self.kind = kind if kind in KINDS else OTHER
        self.agent = agent
        self.session_id = ""
        self.cwd = ""
        self.tool = ""
        self.tool_use_id = ""
        self.command = ""
        self.path = ""
        self.input: dict = {}
        self.output = ""
        self.error = ""
        self.exit_code: int | None = None
        self.prompt = ""
        self.prompt_id = ""
        self.is_interrupt = False
        self.source = ""
        self.reason = ""
        self.hook_event = ""
        self.folder = ""  # where a shell command ran, when the agent says (not `cwd`): Gemini's `dir_path`
        for name, value in fields.items():
            setattr(self, name, value)

    @property
    def is_shell(self) -> bool:
        return self.tool in SHELL_TOOLS

    @property
    def is_path_tool(self) -> bool:
        return self.tool in PATH_TOOLS

    @property
    def is_tool_result(self) -> bool:
        return self.kind in (FAILURE, SUCCESS)

    def subject(self) -> str:
        """What the tool call was about: the command of a shell tool, else the path."""
        return self.command if self.is_shell else self.path

    def __repr__(self) -> str:  # for test failure messages
        shown = {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) not in ("", None, {}, False)}
        return f"Event({shown})"


def as_observed(event: Event | None) -> Event | None:
    """The event as what happened: a shell call reported as a success whose output says its
    job could not run behind a pipe (`./x.sh | tail -5`: "No such file or directory", the
    status `tail`'s) is a failure, with that line as its error. Nothing pairs a fix with it,
    and a known fix answers it (on the agent's own hook: `hook_event` stays as it was).
    A search reported as a failure that only found nothing (text.failure.found_nothing: `grep`
    with status 1 and no word) is a success, as Claude Code reports a lone `grep`."""
    if event is None or event.tool not in SHELL_TOOLS:
        return event
    if event.kind == FAILURE:
        from learn_cli.text.failure import found_nothing

        if found_nothing(event.command, event.error, event.exit_code):
            event.kind, event.error, event.output = SUCCESS, "", ""
        return event
    if event.kind != SUCCESS or "|" not in event.command:
        return event
    from learn_cli.text.failure import failed_behind_a_pipe

    line = failed_behind_a_pipe(event.command, event.output)
    if line:
        event.kind, event.error, event.output = FAILURE, line, ""
    return event
