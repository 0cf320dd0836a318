"""OpenAI Codex CLI hook payloads -> Event (reference/agent-hooks.md §3.1).

Codex fires one `PostToolUse` for every Bash call, failed or not, and hands the hook the
command's output without its exit code. So a Codex Bash call is a failure only when its output
says so unmistakably (`detect_failure`); everything else counts as a success. The rule is
deliberately conservative: a missed failure costs one learning, a false one teaches a wrong
rule. Known blind spots are listed in docs/agents.md.

Tool names are mapped to Claude Code's (`Bash`, `Edit`) so the same failure through either
agent gets the same error key and merges into one learning. Stdlib only (hot path).
"""

from __future__ import annotations

import functools
import json
import re

from learn_cli.agents import claude as base
from learn_cli.capture import events as ev

AGENT = "codex"

_KINDS = {
    "PostToolUse": ev.SUCCESS,  # a failure is decided from the output below
    "UserPromptSubmit": ev.PROMPT,
    "PreToolUse": ev.PRE_TOOL,
    "SessionStart": ev.SESSION_START,
    "SessionEnd": ev.SESSION_END,
    "Stop": ev.STOP,
}
SHELL_NAMES = frozenset({"bash", "shell", "exec", "exec_command", "local_shell", "shell_command",
                         "unified_exec", "container.exec"})
PATCH_NAMES = frozenset({"apply_patch", "edit", "write"})
MAX_SCAN = 64_000  # characters of output looked at for a failure (its end: errors come last)

# Programs whose output is file content or text they were given: a failure phrase in it is
# data, not their own failure. Only their own diagnostics (`cat: x: No such file…`) count.
DUMP_PROGRAMS = frozenset({
    "cat", "head", "tail", "less", "more", "bat", "batcat", "nl", "sed", "awk", "gawk", "grep", "egrep",
    "fgrep", "rg", "ag", "ack", "jq", "yq", "echo", "printf", "strings", "xxd", "od", "hexdump", "column",
    "sort", "uniq", "cut", "tr", "wc", "diff", "cmp", "find", "ls", "tree", "file", "stat", "type", "tac",
    "zcat", "bzcat", "xzcat", "fold", "fmt", "pr", "expand", "readlink", "realpath", "basename", "dirname",
})
GIT_DUMP = frozenset({"show", "log", "diff", "blame", "grep", "cat-file", "reflog", "shortlog", "ls-files"})
SHELL_PREFIXES = ("bash", "sh", "zsh", "dash", "ksh", "fish")


# ---------------------------------------------------------------------------------------------
# The failure rule


@functools.cache
def _failure_re() -> re.Pattern[str]:
    """Lines that report a failure whatever printed them (one alternative per family)."""
    return re.compile(
        r"""
          \bcommand\ not\ found\b
        | \bis\ not\ recognized\ as\ an\ internal\ or\ external\ command
        | ^(?:\S+:\ )?(?:\d+:\ )?\S+:\ not\ found$
        | ^\S[^\n]*?:\ [^\n]*?No\ such\ file\ or\ directory
        | \[Errno\ \d+\]
        | \bcan't\ open\ file\b
        | ^\S[^\n]*?:\ [^\n]*?(?:[Pp]ermission\ denied|[Oo]peration\ not\ permitted)
        | \bEACCES\b | \bEPERM\b | ^PermissionError:
        | ^npm\ ERR!\  | ^npm\ error\  | \bERR_PNPM_\w+ | ^error\ Command\ failed\b
        | ^(?:error|fatal)(?:\[\w+\])?:\x20
        | ^\S+:\ (?:fatal\ )?error:\x20
        | :\d+(?::\d+)?:\ (?:fatal\ )?error:\x20
        | \berror\ TS\d+:
        | ^E:\x20
        | ^FAILED\b | ^FAIL\b | \btest\ result:\ FAILED\b
        | ^=+\ [^\n]*\b\d+\ (?:failed|errors?)\b[^\n]*=+$
        | \bmake(?:\[\d+\])?:\ \*\*\*
        | \bexit\ status\ [1-9]\d*
        | \bexit(?:ed)?\ with\ (?:exit\ )?(?:code|status)\ [1-9]\d*
        | \bexit\ code:?\ [1-9]\d*
        | \breturned\ non-zero\ exit\ status\ \d+
        | \bnon-zero\ exit\ (?:status|code)\b
        """,
        re.MULTILINE | re.IGNORECASE | re.VERBOSE,
    )


@functools.cache
def _traceback_end_re() -> re.Pattern[str]:
    """The exception line that ends a Python traceback (unindented, after the frames)."""
    return re.compile(r"^Traceback \(most recent call last\):$.*?^[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b",
                      re.MULTILINE | re.DOTALL)


@functools.cache
def _stated_exit_re() -> re.Pattern[str]:
    """The header of Codex's formatted exec output (`Exit code: 1` then `Wall time: …`)."""
    return re.compile(r"\AExit code: (\d+)\r?\nWall time: |\AProcess exited with code (\d+)\r?\n")


@functools.cache
def _exit_phrase_re() -> re.Pattern[str]:
    return re.compile(r"\bexit(?:ed)?(?: with)?(?: exit)? (?:status|code):? (\d+)|non-zero exit status (\d+)",
                      re.IGNORECASE)


@functools.cache
def _diagnostic_re(names: tuple[str, ...]) -> re.Pattern[str]:
    """A line that is the program's own complaint: `cat: x: No such file or directory`."""
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(
        rf"^(?:{alternatives})(?::\d+)?(?:\[\d+\])?: .*?(?:No such file or directory|[Pp]ermission denied|"
        r"[Oo]peration not permitted|command not found|[Ii]s a directory|invalid option|unrecognized option|"
        r"illegal option|unknown option|syntax error|unterminated|parse error|error|not found)",
        re.MULTILINE,
    )


def detect_failure(command: str, output: str) -> tuple[bool, int | None]:
    """(is a failure, exit code when the output names one) for a shell call given only its
    output. Conservative: an output is a failure only when it clearly reports one."""
    from learn_cli.text.failure import strip_ansi

    text = strip_ansi(output or "")
    stated = _stated_exit_re().match(text)  # Codex's own header states the outcome
    if stated is not None:
        code = int(stated.group(1) or stated.group(2))
        return code != 0, code
    text = text[-MAX_SCAN:]
    if not text.strip():
        return False, None
    programs = pipeline_programs(command)
    if programs and _prints_content(programs[-1]):
        names = tuple(sorted({p[0] for p in programs} | set(SHELL_PREFIXES)))
        return _diagnostic_re(names).search(text) is not None, None
    if _failure_re().search(text) is None and _traceback_end_re().search(text) is None:
        return False, None
    phrase = _exit_phrase_re().search(text)
    found = phrase.group(1) or phrase.group(2) if phrase else None
    return True, int(found) if found and int(found) > 0 else None


def pipeline_programs(command: str) -> list[tuple[str, str]]:
    """(program, first argument) of every segment, wrappers removed, in order."""
    from learn_cli.text.shell import canonical_program, split_segments, tokenize, unwrap_tokens

    out = []
    for segment in split_segments(command or "")[:20]:
        tokens = unwrap_tokens(tokenize(segment))
        if tokens:
            out.append((canonical_program(tokens[0]), tokens[1] if len(tokens) > 1 else ""))
    return out


def _prints_content(program: tuple[str, str]) -> bool:
    name, first = program
    return name in DUMP_PROGRAMS or (name == "git" and first in GIT_DUMP)


# ---------------------------------------------------------------------------------------------
# Payload -> Event


def to_event(payload) -> ev.Event | None:
    started = base.start_event(payload, _KINDS, AGENT, canonical_tool)
    if started is None:
        return None
    event, raw_tool = started
    kind, tool_input = event.kind, event.input
    if event.is_shell:
        event.command = shell_command(tool_input.get("command"))
    elif event.tool == "Edit" and raw_tool.lower() in PATCH_NAMES:
        event.path = patched_path(tool_input) or base._path_of(tool_input)
    else:
        event.path = base._path_of(tool_input)
    if kind == ev.PROMPT:
        event.prompt = base._text(payload.get("prompt"), base.MAX_PROMPT)
        event.prompt_id = base._text(payload.get("prompt_id") or payload.get("turn_id"), base.MAX_ID)
    elif kind in (ev.SUCCESS, ev.PRE_TOOL):
        event.tool_use_id = base._text(payload.get("tool_use_id"), base.MAX_ID) or _derived_id(payload)
        if kind == ev.SUCCESS:
            _outcome(event, payload.get("tool_response"), payload.get("transcript_path"))
    return event


def _outcome(event: ev.Event, response, transcript=None) -> None:
    """Decide success or failure of a finished tool call from what Codex gave the hook."""
    text, code, flagged = response_parts(response)
    if event.is_shell and code is None:
        code = transcript_exit_code(transcript, event.tool_use_id)
    if event.is_shell:
        failed, said = (code != 0, code) if code is not None else detect_failure(event.command, text)
    else:
        failed, said = flagged, None
        if event.tool == "Edit" and not failed and _patch_failed(text):
            event.kind = ev.OTHER  # a patch that did not apply: neither a fix nor a lesson
            return
    base.finish_call(event, failed, _strip_header(text) if failed else text, said)
    if failed and not event.error.strip() and said is not None:
        event.error = f"Exit code {said}"  # a silent failure (`false`), worded as Claude Code does


TRANSCRIPT_TAIL = 256 * 1024  # bytes of the rollout read back for a call's exit code


def transcript_exit_code(path, call_id: str) -> int | None:
    """The exit code Codex wrote for this call in its rollout file, or None.

    Codex 0.171 gives a hook a shell call's output and never its exit code, but by the time
    `PostToolUse` runs it has written the call's `item_completed` (`CommandExecution`, with
    `exit_code`) to the rollout named by `transcript_path`: the last lines of that file. Only a
    `rollout-*.jsonl` file is read, and only its tail, so this costs one small read."""
    import os

    if not isinstance(path, str) or not call_id or not os.path.basename(path).startswith("rollout-") \
            or not path.endswith(".jsonl"):
        return None
    needle = json.dumps(call_id).encode()
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - TRANSCRIPT_TAIL))
            tail = fh.read(TRANSCRIPT_TAIL)
    except OSError:
        return None
    for line in reversed(tail.split(b"\n")):
        if needle in line and b"exit_code" in line:
            code = _exit_code_of(line, call_id)
            if code is not None:
                return code
    return None


def _exit_code_of(line: bytes, call_id: str) -> int | None:
    """`exit_code` of an `item_completed` CommandExecution (0.171) or `exec_command_end` line."""
    try:
        payload = json.loads(line).get("payload") or {}
    except (ValueError, AttributeError, UnicodeDecodeError):
        return None
    item = payload.get("item") if isinstance(payload.get("item"), dict) else payload
    if call_id not in (item.get("id"), item.get("call_id")):
        return None
    code = item.get("exit_code")
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def response_parts(response) -> tuple[str, int | None, bool]:
    """(output text, exit code if given, flagged as an error) of an untyped tool_response."""
    if isinstance(response, str):
        return response, None, False
    if isinstance(response, list):
        return _join_text(response), None, False
    if not isinstance(response, dict):
        return "", None, False
    meta = response.get("metadata") if isinstance(response.get("metadata"), dict) else {}
    code = None
    for holder in (response, meta):
        for key in ("exit_code", "exitCode", "returncode"):
            value = holder.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                code = value
                break
        if code is not None:
            break
    parts = [response.get(k) for k in ("output", "aggregated_output", "formatted_output", "stdout", "stderr")]
    text = "\n".join(p for p in parts if isinstance(p, str) and p)
    if not text and isinstance(response.get("content"), (list, str)):
        content = response["content"]
        text = content if isinstance(content, str) else _join_text(content)
    flagged = response.get("isError") is True or response.get("is_error") is True or bool(
        isinstance(response.get("error"), str) and response["error"])
    if flagged and isinstance(response.get("error"), str) and response["error"] not in text:
        text = (response["error"] + "\n" + text).strip()
    return text, code, flagged


def _join_text(items: list) -> str:
    out = []
    for item in items[:200]:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append(item["text"])
    return "\n".join(out)


@functools.cache
def _header_re() -> re.Pattern[str]:
    return re.compile(r"\A(?:(?:Exit code|Wall time|Process exited with code|Chunk ID|Original token count)"
                      r"[^\n]*\n)+(?:Output:\n)?", re.IGNORECASE)


def _strip_header(text: str) -> str:
    """Codex's own `Exit code: 1 / Wall time: … / Output:` lines are not the error."""
    return (
        _header_re().sub("", text, count=1)
        if text[:20].lower().startswith(("exit", "wall", "process", "chunk"))
        else text
    )


def _patch_failed(text: str) -> bool:
    head = text[:300].lower()
    return any(p in head for p in ("verification failed", "failed to apply", "patch rejected", "invalid patch"))


def shell_command(value) -> str:
    """The command line: a string, or an argv list (`["bash", "-lc", "…"]` gives the script)."""
    if isinstance(value, str):
        return base._utf8(value[: base.MAX_COMMAND])
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if len(value) >= 3 and value[0].rsplit("/", 1)[-1] in SHELL_PREFIXES and value[1] in ("-c", "-lc", "-l -c"):
            return base._utf8(value[2][: base.MAX_COMMAND])
        import shlex

        return base._utf8(shlex.join(value)[: base.MAX_COMMAND])
    return ""


def patched_path(tool_input: dict) -> str:
    """The first file an apply_patch edits (`*** Update File: src/app.py`)."""
    patch = tool_input.get("command") or tool_input.get("patch") or tool_input.get("input")
    if isinstance(patch, list):
        patch = "\n".join(p for p in patch if isinstance(p, str))
    if not isinstance(patch, str):
        return ""
    match = re.search(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", patch[:20_000], re.MULTILINE)
    return base._utf8(match.group(1).strip()[: base.MAX_COMMAND]) if match else ""


def canonical_tool(name: str) -> str:
    lowered = name.lower()
    if lowered in SHELL_NAMES:
        return "Bash"
    if lowered in PATCH_NAMES:
        return "Edit"
    return name


def _derived_id(payload: dict) -> str:
    """When Codex gives no tool-call id."""
    parts = [payload.get(k) for k in ("session_id", "turn_id", "tool_name")]
    return base.derived_id("codex", [parts, payload.get("tool_input"), payload.get("tool_response")])


def hook_output(event: ev.Event, text: str) -> dict | None:
    """Codex reads `hookSpecificOutput.additionalContext` (plain stdout is ignored after tools;
    PreToolUse context is not documented for Codex)."""
    return base.additional_context(event, text, "PostToolUse")


# ---------------------------------------------------------------------------------------------
# Installer: `learn hooks install --agent codex` (reference §3.1): Claude Code's nested shape
# in `.codex/hooks.json`

TITLE = "Codex CLI"
SCOPES = ("user", "project")
SHAPE = "nested"
ENTRIES = (
    ("SessionStart", None, "context --hook --agent codex", 15),
    ("UserPromptSubmit", None, "capture --agent codex", 10),
    ("PostToolUse", None, "capture --agent codex", 10),  # failed Bash calls included
    ("Stop", None, "capture --agent codex", 10),
)
GUARD = (("PreToolUse", "Bash", "capture --agent codex --guard", 5),)
deny = base.deny  # Claude Code's PreToolUse answer
NOTE = ("Codex runs new or changed hooks only once you trust them: open Codex and review them in /hooks "
        "(`codex exec` runs untrusted hooks only with --dangerously-bypass-hook-trust, and says nothing).")
TRUST = "Codex runs them only once trusted in /hooks (learn cannot see whether you did)"


def settings_path(scope: str, project_root):
    from learn_cli.agents.install import home_or_project

    return home_or_project(scope, project_root, ".codex", "hooks.json")
