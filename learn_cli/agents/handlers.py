"""Is this hook handler ours? The one answer, for every agent's settings file.

A handler is ours when it runs `learn`'s hook entry point — `capture` or `context --hook` —
however it names `learn`:
- the absolute path `install` registers (`/home/you/.local/bin/learn capture`, quoted when the
  path has spaces, `learn.exe` on Windows), or plain `learn` found on PATH (project scope);
- `<python> -S <…>/learn_cli/hook_entry.py capture`, what `install` registers in user and local
  scope (the hook entry script, without `site`), and `<python> -m learn_cli capture`, what older
  installs registered when no `learn` script existed (any interpreter options first);
- the plugin's shim `hooks/learn-hook.sh` (`capture` or `context --hook` in the command or in
  Claude Code's exec form `args`; without arguments it runs `capture`);
- any of those behind `sh -c '…'` / `bash -c '…'`, after `VAR=value`, `env` or `exec`, or
  joined by `&&`, `||`, `;` to other commands;
- with learn's global options first (`learn --home DIR capture`).
Other tools' hooks are not ours, even when their name or arguments contain "learn"
(`learn-more capture`, `echo learn capture`, `npx prettier --write`), and neither is a handler
whose type is not "command".

`install` replaces ours and keeps the rest, `uninstall` removes exactly ours, `hooks status`
and `learn doctor` report ours: all through `is_ours`.
"""

from __future__ import annotations

import re
import shlex

LEARN_PROGRAMS = frozenset({"learn", "learn.exe", "learn-hook.sh"})
SHIM = "learn-hook.sh"  # without arguments it runs `learn capture`
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
PREFIXES = frozenset({"env", "exec", "command", "nice", "nohup"})
GLOBAL_OPTIONS = ("--home", "--project")
HOOK_ENTRY_PATH = ("learn_cli", "hook_entry.py")  # agents.install.hook_command
PYTHON_VALUE_OPTIONS = frozenset({"-X", "-W", "--check-hash-based-pycs"})
_OPERATOR_CHARS = "&|;\n"
_OPERATORS = frozenset(_OPERATOR_CHARS)


def is_ours(handler) -> bool:
    """Whether a hook handler (a settings file's JSON object) runs learn's hook entry point."""
    command = handler_command(handler)
    return bool(command) and runs_learn(command)


def handler_command(handler) -> str:
    """The command line a handler runs (its `command` and exec-form `args`), "" when it runs none."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return ""
    command = handler.get("command")
    if not isinstance(command, str):
        return ""
    args = handler.get("args")
    if isinstance(args, list) and args:
        return " ".join([command] + [shlex.quote(str(a)) for a in args])
    return command


def runs_learn(command: str, depth: int = 0) -> bool:
    """Whether a shell command line runs `learn capture` or `learn context --hook`."""
    segment: list[str] = []
    for word in _words(command) + [";"]:
        if word and set(word) <= _OPERATORS:
            if _invokes_learn(segment, depth):
                return True
            segment = []
        else:
            segment.append(word)
    return False


def _words(text: str) -> list[str]:
    """Shell words, quotes removed, backslashes kept (Windows paths); `&&`, `|`, `;` apart."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lexer.whitespace_split = True
    lexer.escape = ""
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: plain words
        return text.split()


def _program(word: str) -> str:
    return re.split(r"[\\/]", word)[-1].lower()


def _invokes_learn(words: list[str], depth: int) -> bool:
    i = 0
    while i < len(words) and (_is_assignment(words[i]) or _program(words[i]) in PREFIXES):
        i += 1
    if i >= len(words):
        return False
    program, rest = _program(words[i]), words[i + 1:]
    if program in SHELLS:
        script = next((rest[j + 1] for j, w in enumerate(rest[:-1]) if w.startswith("-") and w.endswith("c")), None)
        return depth < 2 and script is not None and runs_learn(script, depth + 1)
    if program.startswith("python"):
        rest = _after_python_entry(rest)
        if rest is None:
            return False
    elif program not in LEARN_PROGRAMS:
        return False
    elif program == SHIM and not rest:
        return True
    rest = _without_globals(rest)
    return rest[:1] == ["capture"] or (rest[:1] == ["context"] and "--hook" in rest)


def _after_python_entry(words: list[str]) -> list[str] | None:
    """An interpreter's arguments after its options and learn's entry point (`-m learn_cli`, or
    the hook entry script `…/learn_cli/hook_entry.py`); None when it runs something else."""
    i = 0
    while i < len(words) and words[i].startswith("-") and words[i] not in ("-m", "-c"):
        i += 2 if words[i] in PYTHON_VALUE_OPTIONS else 1
    if words[i:i + 2] == ["-m", "learn_cli"]:
        return words[i + 2:]
    if i < len(words) and re.split(r"[\\/]", words[i])[-2:] == list(HOOK_ENTRY_PATH):
        return words[i + 1:]
    return None


def _is_assignment(word: str) -> bool:
    name, eq, _value = word.partition("=")
    return bool(eq) and name.isidentifier()


def _without_globals(words: list[str]) -> list[str]:
    i = 0
    while i < len(words):
        if words[i] in GLOBAL_OPTIONS:
            i += 2
        elif words[i].split("=", 1)[0] in GLOBAL_OPTIONS and "=" in words[i]:
            i += 1
        else:
            break
    return words[i:]
