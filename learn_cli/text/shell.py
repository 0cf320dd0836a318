"""Shell-command understanding: segments, wrappers, the program that really runs.

Stdlib only and cheap to import (hot path). Everything here is tolerant of the
commands agents actually type and of transcript exports that cut commands short:
nothing raises on unbalanced quotes or odd syntax.
"""

from __future__ import annotations

import os

from learn_cli.text import lite, rx

__all__ = [
    "split_segments",
    "split_segments_ops",
    "tokenize",
    "unwrap",
    "unwrap_tokens",
    "program",
    "canonical_program",
    "normalize_command",
    "keeps_lines",
    "relative_to_root",
    "clean_command",
    "strip_plumbing",
    "Plumbing",
    "SETUP_PROGRAMS",
    "PM_FOLDER_OPTIONS",
    "JS_PACKAGE_MANAGERS",
    "RUN_SCRIPT",
    "script_name",
    "in_container",
    "FILE_PROGRAMS",
    "print_window",
    "windows_alike",
    "OUTPUT_SHAPERS",
    "TRUNCATION",
    "command_programs",
    "timeout_prefixes",
    "drop_timeout",
    "words_to_quote",
    "quote_words",
    "segments_before",
    "shell_word",
]

TRUNCATION = "…"  # transcript exports cut long commands with it

# JavaScript package managers: `X run <script>` (or `X run-script <script>`) runs a script of
# package.json.
JS_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
RUN_SCRIPT = frozenset({"run", "run-script"})

# Interpreters: their first argument is the script that runs, or code given after an inline flag.
INTERPRETERS = frozenset({
    "python", "node", "bash", "sh", "zsh", "ruby", "perl", "php", "deno", "bun", "tsx", "ts-node", "pwsh", "powershell",
    "lua", "rscript", "julia",
})
# Flags after which an interpreter runs code given inline (`python3 -c "…"`, `node -e`, a heredoc).
INLINE_CODE_FLAGS = frozenset({"-c", "-e", "--eval", "-"})
# Options that choose the packages of a workspace a command works on, by program.
PACKAGE_OPTIONS = {
    "cargo": frozenset({"-p", "--package"}),
    "npm": frozenset({"-w", "--workspace"}),
    "pnpm": frozenset({"-F", "--filter"}),
    "turbo": frozenset({"--filter"}),
    "mvn": frozenset({"-pl", "--projects"}),
    "mvnw": frozenset({"-pl", "--projects"}),
}
# Segments that only prepare the shell for the command that follows them.
SETUP_PROGRAMS = frozenset({"cd", "pushd", "popd", "source", ".", "export", "set", "unset", "ulimit", "umask"})

# Wrappers that run their arguments as a command, after their own options.
# Value: options that consume the next token as their argument.
_PLAIN_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({
        "-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-T", "--user", "--group", "--prompt", "--chdir",
    }),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "--class", "--classdata"}),
    "nohup": frozenset(),
    "&": frozenset(),  # PowerShell's call operator runs the command named after it
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "builtin": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "xvfb-run": frozenset({"-s", "-n", "-e", "-f", "--server-args", "--server-num"}),
    "npx": frozenset({"-p", "--package", "-c", "--call"}),
    "bunx": frozenset({"-p", "--package"}),
    "uvx": frozenset({"--from", "--with", "--python", "-p", "--index", "--with-requirements"}),
    "pnpx": frozenset(),
    "xargs": frozenset({
        "-I", "-i", "-n", "-P", "-d", "-L", "-l", "-s", "-E", "-e", "-a",
        "--max-args", "--max-procs", "--delimiter", "--arg-file",
    }),
    "sshpass": frozenset({"-p", "-f", "-d", "-P"}),  # gives ssh its password: `sshpass -p x ssh host`
}

# `<tool> <sub>` pairs that run the rest as a command (e.g. `uv run pytest`).
_RUNNER_OPTS_UV = frozenset({
    "--with", "--with-requirements", "--with-editable", "--python", "-p", "--project", "--directory",
    "--extra", "--group", "--only-group", "--package", "--env-file", "--index", "--default-index",
    "--extra-index-url", "--index-url", "--no-group", "--script", "-w",
})
_SUB_WRAPPERS: dict[tuple[str, str], frozenset[str]] = {
    ("uv", "run"): _RUNNER_OPTS_UV,
    ("uv", "tool"): frozenset(),  # `uv tool run X`: "run" is skipped below as a second step
    ("poetry", "run"): frozenset({"-C", "--directory", "-P", "--project"}),
    ("pipenv", "run"): frozenset(),
    ("pdm", "run"): frozenset({"-p", "--project"}),
    ("rye", "run"): frozenset(),
    ("hatch", "run"): frozenset(),
    ("conda", "run"): frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    ("micromamba", "run"): frozenset({"-n", "--name", "-p", "--prefix"}),
    ("pnpm", "exec"): frozenset({"-C", "--dir", "--filter", "-F"}),
    ("pnpm", "dlx"): frozenset({"--package"}),
    ("yarn", "dlx"): frozenset({"-p", "--package"}),
    ("yarn", "exec"): frozenset(),
    ("npm", "exec"): frozenset({"-p", "--package", "-c", "--call", "-w", "--workspace"}),
    ("bun", "x"): frozenset({"-p", "--package"}),
    ("bundle", "exec"): frozenset(),
    ("dotenv", "run"): frozenset({"-f", "--file"}),
}

# Options of the JS package managers that run them in another folder, as a `cd` would.
PM_FOLDER_OPTIONS = frozenset({"--dir", "-C", "--prefix", "--cwd"})

# rtk (rtk-ai/rtk) runs the command after it and shortens its output for the model; its agent
# hook rewrites `git status` to `rtk git status`, so a user of it sends every command so. Its
# `proxy`, `test`, `err` and `summary` run the command after them too, and `rtk read f` is its `cat f`.
_RTK_RUNNERS = frozenset({"proxy", "test", "err", "summary"})

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# Windows shells asked to run one command line (`cmd //c` is `cmd /c` past Git Bash's path
# conversion, which turns a lone `/c` into `C:/`).
_WINDOWS_SHELL_RUNS = frozenset({("cmd", "/c"), ("cmd", "//c")})  # (by canonical_program: `cmd.exe` too)
_PYTHON_RE_SRC = r"(?:python(?:\d+(?:\.\d+)*)?[tw]?|py|pypy\d*(?:\.\d+)?)"
_ASSIGNMENT_RE_SRC = r"(?:\$[Ee][Nn][Vv]:)?[A-Za-z_][A-Za-z0-9_]*\+?=.*"  # PowerShell's `$env:NODE_OPTIONS='…'` too
# Python options that take a value before `-m` (`python -X importtime -m mod`).
_PYTHON_VALUE_OPTS = frozenset({"-X", "-W", "-Q"})


@lite.cache
def _python_re() -> rx.Pattern[str]:
    return rx.compile(_PYTHON_RE_SRC + r"(?:\.exe)?", rx.IGNORECASE)


@lite.cache
def _assignment_re() -> rx.Pattern[str]:
    return rx.compile(_ASSIGNMENT_RE_SRC, rx.DOTALL)


# ---------------------------------------------------------------------------
# Lexing


def split_segments(command: str) -> list[str]:
    """Split a shell line on `&&`, `||`, `;`, `|`, `|&`, `&` and newlines outside quotes.

    Quotes, backslash escapes, `$(...)`, backticks and heredoc bodies are kept
    whole. Unbalanced quotes swallow the rest of the line; never raises.
    Empty segments are dropped; each segment is stripped.
    """
    return [text for text, _op in split_segments_ops(command)]


def split_segments_ops(command: str) -> list[tuple[str, str]]:
    """Like split_segments, each segment paired with the operator that ends it.

    The operator is one of `&&`, `||`, `|`, `|&`, `&`, `;`, a newline, or '' for the
    last segment: `cd a && ls | wc -l` -> [("cd a", "&&"), ("ls", "|"), ("wc -l", "")].
    """
    command = command or ""
    out: list[tuple[str, str]] = []
    buf: list[str] = []
    quote = ""  # current quote char, or "" outside quotes
    depth = 0  # nesting of $( ... ) and ( ... ) outside quotes
    pending: list[str] = []  # heredoc delimiters whose bodies start at the next newline
    i, n = 0, len(command)

    def flush(op: str) -> None:
        text = "".join(buf).strip()
        buf.clear()
        if text:
            out.append((text, op))
        elif out and op:
            # `a && ; b` or leading operator: keep the stronger meaning on the previous one
            out[-1] = (out[-1][0], out[-1][1] or op)

    while i < n:
        ch = command[i]
        if ch == "\\" and quote != "'" and i + 1 < n:
            # a line continued (`&& \⏎  make`) is one line, as the shell reads it
            buf.append(" " if command[i + 1] == "\n" else command[i : i + 2])
            i += 2
            continue
        if quote:
            if ch == quote:
                quote = ""
            buf.append(ch)
            i += 1
            continue
        if ch in "'\"`":
            quote = ch
            buf.append(ch)
            i += 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif depth == 0:
            two = command[i : i + 2]
            if command.startswith("<<<", i):  # here-string, not a heredoc
                buf.append("<<<")
                i += 3
                continue
            if two == "<<":
                delimiter, end = _heredoc_delimiter(command, i + 2)
                if delimiter:
                    pending.append(delimiter)
                buf.append(command[i:end])
                i = end
                continue
            if ch == "\n" and pending:
                end = _heredoc_body_end(command, i, pending)
                buf.append(command[i:end])
                pending.clear()
                i = end
                continue
            if ch == "#" and (not buf or command[i - 1] in " \t"):
                end = command.find("\n", i)  # a comment, to the end of its line (`# check
                i = n if end < 0 else end  # the version⏎python --version`): no word of any step
                continue
            if two in ("&&", "||", "|&"):
                flush(two)
                i += 2
                continue
            if ch == "&" and not "".join(buf).strip() and command[i + 1 : i + 2] in (" ", "\t"):
                buf.append(ch)  # PowerShell's call operator (`& "C:\Program Files\Git\cmd\git.exe"
                i += 1  # init`): a word of the step, which needs it; bash has no `&` to start one
                continue
            if ch == "&" and command[i - 1 : i] not in (">", "<") and command[i + 1 : i + 2] != ">":
                flush("&")  # `server & sleep 2` (but not `2>&1`, `&>file`)
                i += 1
                continue
            if ch == "\n" and _option_follows(command, i + 1):
                buf.append(" ")  # no command starts with an option: an export wrapped the line
                i += 1
                continue
            if ch in "|;\n":
                # `>|` (clobber) and `;;` are rare enough to treat plainly
                flush("\n" if ch == "\n" else ch)
                i += 1
                continue
        buf.append(ch)
        i += 1
    flush("")
    return out


def powershell_chained(command: str) -> str:
    """`a; if ($?) { b }`, Windows PowerShell's `&&` (`b` runs when the step before it worked;
    Codex and Claude Code write it there, rounds 23 and 25), written `a && b` to compare it; a
    command without it as it is."""
    if "$?" not in command:
        return command
    return _powershell_then_re().sub(lambda m: " && " + m.group(1).strip(), command)


@lite.cache
def _powershell_then_re() -> rx.Pattern[str]:
    return rx.compile(r"\s*;\s*if\s*\(\s*\$\?\s*\)\s*\{([^{}]*)\}")


def _option_follows(command: str, start: int) -> bool:
    """Is the next word from `start` on (after spaces and tabs) an option?"""
    while start < len(command) and command[start] in " \t":
        start += 1
    return command[start:start + 1] == "-"


def _heredoc_delimiter(command: str, start: int) -> tuple[str, int]:
    """Delimiter word of a heredoc whose `<<` ends at start, and where the word ends."""
    i, n = start, len(command)
    if i < n and command[i] in "-~":
        i += 1
    while i < n and command[i] in " \t":
        i += 1
    j = i
    while j < n and not command[j].isspace() and command[j] not in ";|&<>()":
        j += 1
    word = command[i:j].replace("'", "").replace('"', "").replace("\\", "")
    return word, j


def _heredoc_body_end(command: str, newline: int, delimiters: list[str]) -> int:
    """Index of the newline that follows the last heredoc body starting after `newline`.

    A body cut short (no terminator line) runs to the end of the text.
    """
    pos = newline + 1
    for delimiter in delimiters:
        while True:
            end = command.find("\n", pos)
            if end < 0:
                return len(command)
            line, pos = command[pos:end], end + 1
            if line.strip() == delimiter:
                break
    return pos - 1


def leading_cd(command: str) -> tuple[str | None, str]:
    """(D, X) for `cd D && X` (or `cd D; X`), else (None, command)."""
    folder, _step, rest = leading_cd_step(command)
    return folder, rest


def leading_cd_step(command: str) -> tuple[str | None, str, str]:
    """(D, the `cd D` step as written, X) for `cd D && X` (or `cd D; X`), else (None, "", command).
    A command rebuilt around the step keeps it as written (`cd "D:/My Work/app"`: its quotes),
    so that it runs in the same folder."""
    parts = split_segments_ops(command or "")
    if len(parts) >= 2 and parts[0][1] in ("&&", ";"):
        first = tokenize(parts[0][0])
        if len(first) == 2 and first[0] == "cd":
            return first[1], " ".join(parts[0][0].split()), command.split(parts[0][1], 1)[1].strip()
    return None, "", command or ""


def dropped_cd(failed: str, fix: str) -> str | None:
    """The folder D when `fix` is `failed = cd D && X` without its `cd D` (X unchanged), else
    None. Agents' shells keep their folder between calls: `cd sub && X` fails once they are
    already in `sub`, and X alone is the fix for any X (it is the `cd` that is wrong)."""
    folder, rest = leading_cd(failed)
    if folder is None or normalize_command(rest) != normalize_command(fix or ""):
        return None  # compared without plumbing: `X 2>&1 | tail` is X
    return folder


def cd_failed(error: str, folder: str) -> bool:
    """Does the error say that `cd folder` itself failed (the folder is not there)?"""
    name = folder.rstrip("/").rsplit("/", 1)[-1]
    return any("cd" in line and name in line and ("no such file" in line.lower() or "can't cd" in line.lower()
                                                   or "not a directory" in line.lower())
               for line in (error or "").splitlines())


def tokenize(segment: str) -> list[str]:
    """POSIX-like word splitting with quotes removed; tolerant (never raises).

    An unbalanced quote extends to the end of the text. Operators are not
    split off words (call on a segment from split_segments).
    """
    return _split_words(segment, None)


def word_spellings(segment: str) -> list[tuple[str, str]]:
    """tokenize's words, each with its spelling in `segment` (`"$HOME/x"` for `$HOME/x`): a
    rewrite that keeps a word keeps how the shell reads it (quoting, expansion, globs)."""
    spellings: list[str] = []
    words = _split_words(segment, spellings)
    return list(zip(words, spellings, strict=True))


def _split_words(segment: str, spellings: list[str] | None) -> list[str]:
    tokens: list[str] = []
    buf: list[str] = []
    in_word = False
    quote = ""
    start = 0
    i, n = 0, len(segment or "")
    while i < n:
        ch = segment[i]
        if quote == "'":
            if ch == "'":
                quote = ""
            else:
                buf.append(ch)
            i += 1
            continue
        if ch in "$`" and segment.startswith(("$(", "`"), i):  # a command substitution is one piece
            end = _substitution_end(segment, i)  # of its word, spaces and quotes inside it and all
            buf.append(segment[i:end])
            if not in_word and not quote:
                in_word, start = True, i
            i = end
            continue
        if quote == '"':
            if ch == "\\" and i + 1 < n and segment[i + 1] in '"\\$`':
                buf.append(segment[i + 1])
                i += 2
                continue
            if ch == '"':
                quote = ""
            else:
                buf.append(ch)
            i += 1
            continue
        if ch == "\\" and not in_word and i + 1 < n and segment[i + 1] in " \t\n":
            i += 2  # a line continuation (`&& \⏎  node x`, or flattened to `&& \ node x` by an
            continue  # export's whitespace): no word of its own
        if ch.isspace():
            if in_word:
                tokens.append("".join(buf))
                buf.clear()
                in_word = False
                if spellings is not None:
                    spellings.append(segment[start:i])
            i += 1
            continue
        if not in_word:
            in_word, start = True, i
        if ch == "\\" and i + 1 < n:
            nxt = segment[i + 1]
            if nxt.isalnum() or nxt in "._-" or nxt in "*?" and "\\" in buf:
                # not an escape worth honouring: keep it (Windows paths such as C:\py\python.exe,
                # and a wildcard after one of their separators: `dir data\jld2\*.jld2`)
                buf.append(ch)
                i += 1
                continue
            if nxt != "\n":  # backslash-newline is a line continuation
                buf.append(nxt)
            i += 2
            continue
        if ch in "'\"":
            quote = ch
        else:
            buf.append(ch)
        i += 1
    if in_word:
        tokens.append("".join(buf))
        if spellings is not None:
            spellings.append(segment[start:])
    return tokens


def _substitution_end(text: str, start: int) -> int:
    """The index just after the command substitution starting at `start` (`$(…)`, nested and
    quoted parentheses counted, or `` `…` ``); the text's end when it is not closed."""
    if text[start] == "`":
        end = text.find("`", start + 1)
        return len(text) if end < 0 else end + 1
    depth, quote, i = 0, "", start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


# ---------------------------------------------------------------------------
# Unwrapping


def path_name(token: str) -> str:
    """The last part of a path, with either separator, a folder's too (`src\\app\\` -> `app`)."""
    token = token.rstrip("/\\")
    cut = max(token.rfind("/"), token.rfind("\\"))
    return token[cut + 1 :] if cut >= 0 else token


def _is_assignment(token: str) -> bool:
    return "=" in token and not token.startswith("-") and _assignment_re().fullmatch(token) is not None


def _skip_options(tokens: list[str], start: int, value_opts: frozenset[str]) -> int:
    """Index of the first non-option token at or after start (`--` ends options)."""
    i = start
    while i < len(tokens):
        tok = tokens[i]
        if tok == "--":
            return i + 1
        if not tok.startswith("-") or tok == "-":
            return i
        if tok in value_opts and "=" not in tok:
            i += 2
        else:
            i += 1
    return i


def _is_python(token: str) -> bool:
    return _python_re().fullmatch(path_name(token)) is not None


def _strip_npx_version(name: str) -> str:
    """`create-vite@latest` -> `create-vite`; `@scope/pkg@1` -> `@scope/pkg`."""
    at = name.rfind("@")
    return name[:at] if at > 0 else name


def _unwrap_once(tokens: list[str]) -> list[str] | None:
    """Remove one layer of wrapper; None when the tokens are not wrapped."""
    if not tokens:
        return None
    head = tokens[0]
    if _is_assignment(head):
        i = 0
        while i < len(tokens) and _is_assignment(tokens[i]):
            i += 1
        return tokens[i:] or _substituted(tokens[i - 1])
    name = path_name(head).lower()
    if name.endswith(".exe"):
        name = name[:-4]
    if name == "command" and any(t in ("-v", "-V") for t in tokens[1:2]):
        return None  # `command -v x` looks x up; it does not run it
    if name in _PLAIN_WRAPPERS:
        i = _skip_options(tokens, 1, _PLAIN_WRAPPERS[name])
        if name == "env":
            while i < len(tokens) and _is_assignment(tokens[i]):
                i += 1
        rest = tokens[i:]
        if rest and name in ("npx", "bunx", "uvx", "pnpx"):
            rest = [_strip_npx_version(rest[0]), *rest[1:]]
        return rest or None
    if name == "timeout":
        i = _skip_options(tokens, 1, frozenset({"-s", "-k", "--signal", "--kill-after"}))
        return tokens[i + 1 :] or None  # skip the duration
    if name in JS_PACKAGE_MANAGERS and len(tokens) > 3 and tokens[1].startswith("-"):
        # where it runs, said before the subcommand: `pnpm --filter @x/api exec tsc`, `pnpm -C web exec vite`
        at = _skip_options(tokens, 1, PACKAGE_OPTIONS.get(name, frozenset()) | PM_FOLDER_OPTIONS)
        if at < len(tokens) and (name, tokens[at]) in _SUB_WRAPPERS:
            tokens = [tokens[0], *tokens[at:]]
    if len(tokens) >= 2 and (name, tokens[1]) in _SUB_WRAPPERS:
        i = _skip_options(tokens, 2, _SUB_WRAPPERS[(name, tokens[1])])
        if name == "uv" and tokens[1] == "tool":
            if i < len(tokens) and tokens[i] == "run":
                i = _skip_options(tokens, i + 1, _PLAIN_WRAPPERS["uvx"])
            else:
                return None  # `uv tool install …` is uv itself
        rest = tokens[i:]
        if rest and tokens[1] in ("dlx", "x"):
            rest = [_strip_npx_version(rest[0]), *rest[1:]]
        return rest or None
    if name == "rtk":
        return _unwrap_rtk(tokens)
    if name in _SHELLS:
        return _unwrap_shell(tokens)
    if len(tokens) >= 3 and (canonical_program(head), tokens[1].lower()) in _WINDOWS_SHELL_RUNS:
        # Git Bash's `cmd //c "taskkill /PID 4120 /F"`; `cmd /c npm install` runs the rest of the line
        return unwrap(tokens[2] if len(tokens) == 3 else " ".join(tokens[2:])) or None
    script = _powershell_script(tokens)
    if script:
        return unwrap(script) or None
    if head.lower() == "if":
        return _cmd_if_exist(tokens)
    if _is_python(head):
        return _unwrap_python_module(tokens)
    return None


def _powershell_script(tokens: list[str]) -> str:
    """The script a `powershell` or `pwsh` line runs: past its switches (`-NoProfile`,
    `-ExecutionPolicy Bypass`), the words of -Command (`-c`); for Windows PowerShell also a
    first word that is no option (`powershell "Get-Process -Id 1 | …"`: pwsh reads that as
    -File's). '' for a file run, or anything else."""
    name = canonical_program(tokens[0])
    if name not in ("powershell", "pwsh"):
        return ""
    i = 1
    while i < len(tokens) and tokens[i].startswith("-"):
        option = tokens[i].lower()
        if option in ("-command", "-c"):
            return " ".join(tokens[i + 1:])
        i += 2 if option in ("-executionpolicy", "-ep") else 1
    rest = tokens[i:]
    if name != "powershell" or len(rest) != 1 or " " not in rest[0] or rest[0].lower().endswith(".ps1"):
        return ""
    return rest[0]


def _cmd_if_exist(tokens: list[str]) -> list[str] | None:
    """The command of cmd's `if [not] exist PATH command` (`(command) else (…)` too), which agents
    send to bash on Windows (a syntax error there), then write as `[ -d PATH ] || command` or
    PowerShell's `New-Item … -Path PATH`; None for any other `if`."""
    at = 2 if tokens[1:2] and tokens[1].lower() == "not" else 1
    if tokens[at:at + 1] == [] or tokens[at].lower() != "exist":
        return None
    rest = tokens[at + 2:]
    if rest and rest[0].startswith("("):  # `(git clone … x) else (echo …)`
        end = next((i for i, token in enumerate(rest) if token.endswith(")")), len(rest) - 1)
        rest = [rest[0][1:], *rest[1:end + 1]]
        rest[-1] = rest[-1].removesuffix(")")
    elif "else" in rest:
        rest = rest[:rest.index("else")]
    return [token for token in rest if token] or None


def _unwrap_rtk(tokens: list[str]) -> list[str] | None:
    i = 1
    while i < len(tokens) and tokens[i].startswith("-"):  # its own flags (`-v`, `-u`) take no value
        i += 1
    rest = tokens[i:]
    if rest and rest[0] in _RTK_RUNNERS:
        rest = rest[1:]
    elif rest and rest[0] == "read":
        rest = ["cat", *rest[1:]]
    return rest or None


def _substituted(assignment: str) -> list[str]:
    """The first step of the command whose output a variable is set to (`KEY=$(cast index
    address $H 9)`: `cast index address $H 9`): a line of only that does its work there."""
    value = assignment.split("=", 1)[1]
    if value.startswith("$(") and value.endswith(")"):
        inner = value[2:-1]
    elif len(value) > 1 and value.startswith("`") and value.endswith("`"):
        inner = value[1:-1]
    else:
        return []
    steps = split_segments(inner)
    return tokenize(steps[0]) if steps else []


def inner_command(command: str) -> str:
    """The command a shell is asked to run when that is the whole line (`bash -lc 'npm ci'`,
    `/bin/zsh -lc "pytest -q"`: how Codex's transcripts show every command), else the line
    itself. The wrapper is how the agent runs commands, not part of any of them."""
    if "-" not in command or "c" not in command:
        return command
    parts = split_segments_ops(command)
    if len(parts) != 1:
        return command
    tokens = tokenize(parts[0][0])
    flags = tokens[1:-1]  # `-lc`, or `-l -c` (`/bin/bash -l -c "cd x; git status"`)
    if (len(tokens) < 3 or path_name(tokens[0]).lower() not in _SHELLS or not tokens[-1].strip()
            or any(f.startswith("--") or not f.startswith("-") or len(f) < 2 for f in flags)
            or not flags[-1].endswith("c")):
        return command
    return tokens[-1].strip()


# Programs that run a whole command line given as one word, and the options that give it:
# `npx -p node@20 -c 'node -v && yarn build'` (that line with Node 20), `nix-shell --run 'make
# test'`, `bash -c 'cd web && npm test'`.
_LINE_OPTIONS = {"npx": frozenset({"-c", "--call"}), "nix-shell": frozenset({"--run", "--command"})}


def line_run(tokens: list[str] | tuple[str, ...]) -> str:
    """The command line a segment hands to another program to run (`npx -y -p node@20 -c 'node
    -v && yarn build'`, `sudo bash -c 'cd x && make'`, `nix-shell -p gcc --run 'make test'`), or
    ''. unwrap_tokens reads only such a line's main step; comparing the job needs them all."""
    for _ in range(12):  # `sudo env A=1 bash -c '…'`: the plain wrappers before it
        name = path_name(tokens[0]).lower() if tokens else ""
        if not tokens or name in _SHELLS or name in _LINE_OPTIONS or not (
                _is_assignment(tokens[0]) or name in _PLAIN_WRAPPERS):
            break
        tokens = _unwrap_once(list(tokens)) or []
    if not tokens:
        return ""
    name = path_name(tokens[0]).lower()
    if name in _SHELLS:
        at, given = _past_shell_options(tokens)
        return tokens[at].strip() if given and at < len(tokens) else ""
    options = _LINE_OPTIONS.get(name, ())
    at = next((i + 1 for i, token in enumerate(tokens[1:-1], start=1) if token in options), 0)
    return tokens[at].strip() if at else ""


def _past_shell_options(tokens: list[str] | tuple[str, ...]) -> tuple[int, bool]:
    """(where a shell's own options end, whether one of them was `-c`: then a command line is
    given there) for `bash -lc 'cmd'`, `bash -x script.sh args`."""
    i = 1
    while i < len(tokens) and tokens[i].startswith("-") and tokens[i] != "-":
        tok = tokens[i]
        if not tok.startswith("--") and "c" in tok:
            return i + 1, True
        i += 2 if tok in ("-o", "+o", "-O") else 1
    return i, False


def _unwrap_shell(tokens: list[str]) -> list[str] | None:
    """`bash -lc 'cmd'` -> tokens of cmd; `bash [-x] script.sh args` -> `script.sh args`."""
    at, given = _past_shell_options(tokens)
    if given:
        return (unwrap(tokens[at]) or None) if at < len(tokens) else None
    return tokens[at:] or None


def _unwrap_python_module(tokens: list[str]) -> list[str] | None:
    """`python [-opts] -m mod args` -> `mod args`; None for scripts and `-c`."""
    i = 1
    while i < len(tokens):
        tok = tokens[i]
        if tok == "-m" and i + 1 < len(tokens):
            return tokens[i + 1 :]
        if tok.startswith("-m") and len(tok) > 2:  # `-mpytest`
            return [tok[2:], *tokens[i + 1 :]]
        if not tok.startswith("-") or tok.startswith("-c"):
            return None
        i += 2 if tok in _PYTHON_VALUE_OPTS else 1
    return None


def _main_segment(command: str) -> str:
    """The segment that does the work: setup segments joined by `&&`/`;` are skipped.

    `cd app && npm test` -> `npm test`; `source .venv/bin/activate && pytest` ->
    `pytest`; `curl … | jq .` -> `curl …` (the first command of a pipeline).
    A line of setup segments only (`cd src`) is its own main segment.
    """
    parts = split_segments_ops(command)
    if not parts:
        return ""
    for text, op in parts:
        tokens = tokenize(text)
        while tokens and _is_assignment(tokens[0]):
            tokens = tokens[1:]
        name = path_name(tokens[0]).lower() if tokens else ""
        if (not tokens or name in SETUP_PROGRAMS) and op in ("&&", ";", "\n", "&"):
            continue  # `cd x &&`, `source env;`, `A=1 &&`: preparing the real work
        return text
    return parts[-1][0]


def unwrap(command: str) -> list[str]:
    """Tokens of the main segment with every wrapper removed.

    Wrappers: `sudo`/`doas`, `env` and `VAR=val`, `time`, `nice`, `nohup`,
    `timeout N`, `command`/`exec`, `uv run`/`uvx`/`uv tool run`, `poetry run`,
    `pipenv run`, `pdm run`, `npx`, `pnpm exec`/`dlx`, `bunx`/`bun x`,
    `yarn dlx`/`exec`, `npm exec`, `bash -c '…'`, `python -m X` -> `X`;
    the program token itself becomes its basename (`.venv/bin/ruff` -> `ruff`).
    Leading `cd DIR &&`, `source X &&`, `. X &&`, `export …;` segments are skipped.
    """
    return unwrap_tokens(tokenize(_main_segment(command)))


def unwrap_tokens(tokens: list[str]) -> list[str]:
    """unwrap() for one segment that is already tokenized."""
    for _ in range(12):  # wrappers nest (`sudo env A=1 uv run python -m x`); bounded
        inner = _unwrap_once(tokens)
        if inner is None:
            break
        tokens = inner
    if tokens:
        tokens = [path_name(tokens[0]) or tokens[0], *tokens[1:]]
    return tokens


# Programs whose arguments are the paths they act on (`rm x.js`, `chmod +x run.sh`, `cat f`).
FILE_PROGRAMS = frozenset({"mkdir", "rmdir", "touch", "cp", "mv", "ln", "rm", "cat", "ls", "chmod", "chown",
                            "head", "tail", "stat", "du", "file", "readlink", "realpath"})


# Options of `docker exec` / `docker compose exec|run` that take a value.
_EXEC_VALUE_OPTIONS = frozenset({"-u", "--user", "-w", "--workdir", "-e", "--env", "--env-file", "--index",
                                 "--name", "--entrypoint", "-p", "--publish", "-v", "--volume"})


def in_container(tokens: list[str] | tuple[str, ...]) -> list[str] | None:
    """The command a `docker exec`, `docker compose exec|run` or `kubectl exec … --` line runs."""
    name, verb = canonical_program(tokens[0]), tuple(tokens[1:2])
    if name == "kubectl" and verb == ("exec",) and "--" in tokens:
        return list(tokens[tokens.index("--") + 1:]) or None
    docker_exec = name in ("docker", "podman") and verb == ("exec",)
    if not (docker_exec or name == "docker-compose" and verb in (("exec",), ("run",))):
        return None
    i = 2
    while i < len(tokens) and tokens[i].startswith("-"):
        i += 2 if tokens[i] in _EXEC_VALUE_OPTIONS else 1
    return list(tokens[i + 1:]) or None  # past the container (or service)


@lite.lru_cache(maxsize=1024)
def program_as_named(name: str) -> str:
    """Lower-cased basename, `.exe` dropped (and a Windows shim's `.cmd`/`.bat`: `npm.cmd`,
    `gradlew.bat`): the program as the command names it, version and all (`python3.11`, `py`).
    A leading `!` is Claude Code's shell-mode prefix typed into the command (`!pwd`: "command
    not found: !pwd"); the program meant is the one after it."""
    base = path_name(name[1:] if name[:1] == "!" and name[1:2].isalnum() else name).lower()
    return base[:-4] if base.endswith((".exe", ".cmd", ".bat")) else base


def canonical_program(name: str) -> str:
    """program_as_named with versions folded: python3.11 -> python, pip3 -> pip (and the
    Windows launcher `py` is python)."""
    base = program_as_named(name)
    if _python_re().fullmatch(base):
        return "python"
    if base.startswith("pip") and base[3:].replace(".", "").isdigit():
        return "pip"
    return base


def script_name(tokens) -> str:
    """The package.json script that `npm run build` (pnpm, yarn, bun; `run-script`) runs, or ''."""
    if len(tokens) > 2 and tokens[1] in RUN_SCRIPT and canonical_program(tokens[0]) in JS_PACKAGE_MANAGERS:
        return tokens[2]
    return ""


def program(command: str) -> str:
    """The canonical program that the command runs once wrappers are removed.

    `sudo -E env X=1 .venv/bin/python3 -m pytest -q` -> `pytest`;
    `cd web && npx tsc` -> `tsc`; `python3 app.py` -> `python`. '' when empty.
    """
    tokens = unwrap(command)
    return canonical_program(tokens[0]) if tokens else ""


# ---------------------------------------------------------------------------
# Plumbing: what an agent adds around a command to watch it, not to change what it does
#
# One definition, used for the command a learning stores (normalize_command), for every
# comparison of two commands (pairing) and for judging what a command does (effects):
# - redirections of output to /dev/null or to another descriptor (`2>&1`, `>/dev/null`,
#   `&>/dev/null`), anywhere on a segment's command line (never inside a heredoc body);
# - `timeout N` (and `gtimeout`) in front of a segment, and the `) timeout: 1m 0s` that
#   Claude Code's export prints after a command run with a timeout;
# - filters at the end of a pipeline: `| head`, `| tail`, `| less`, `| more`, a bare `| cat`,
#   and `| grep …` when what it filters is a job (a build, a test run); after a command that
#   only lists (`ps aux | grep node`, `git log | grep x`) the grep is the question itself;
# - status chatter: `echo`/`printf`/`true`/`:` segments that are not piped and write no
#   file (`&& echo OK`, `; echo "exit: $?"`, `|| true`, `echo "=== build ===" &&`); a segment
#   that runs a command substitution (`echo "$(cast call …)"`) is work and stays;
# - with the project root known: absolute paths under it written relative, and a leading
#   `cd ROOT &&` dropped (a `cd` into a subfolder is part of the command: `cd backend &&`).
# `Plumbing.removed` names what was taken away; `hides_status` means a chatter segment came
# after the work through `;` or `||`, so the line "succeeds" whatever the work did.


# segments: ((text, operator that ends it), …) with the plumbing removed; removed: a frozenset
# of redirect timeout filter grep chatter hides_status cd_root; greps: the grep stages taken off
# the pipelines' ends, as written (`grep -E '^error'`). (collections, not typing: the hook path
# does not import typing.)
Plumbing = lite.namedtuple("Plumbing", ["segments", "removed", "greps"], module=__name__)


_GREPS = frozenset({"grep", "egrep", "fgrep", "rg"})
# Programs that, piped into, only shape another step's output: never the work of a command.
OUTPUT_SHAPERS = frozenset({"head", "tail", "less", "more", "cat", "wc", "sort", "uniq", "tee", "jq", "awk",
                            "sed", "cut", "tr", "column"}) | _GREPS
_CHATTER = frozenset({"echo", "printf", "true", ":"})
_PIPES = ("|", "|&")
_JOINS = {"&&": " && ", "||": " || ", "|": " | ", "|&": " |& ", ";": "; ", "&": " & ", "": ""}


@lite.cache
def _redirect_re() -> rx.Pattern[str]:
    return rx.compile(r"(?<!\S)(?:\d?>&\d|&>>?\s*/dev/null|\d?>>?\s*/dev/null)(?=\s|$)")


@lite.cache
def _export_note_re() -> rx.Pattern[str]:
    # Claude Code's export prints a Bash call's timeout after the command: `npm test) timeout: 1m 0s`,
    # or where it wrapped the line (`&& \ timeout: 3m 0s node x.js`); `timeout` has no colon.
    return rx.compile(r"\)\s+timeout:\s+[\dhms ]+$"
                      r"|(?:\\\s+)?(?<!\S)timeout:\s+\d+[hms](?:\s+\d+(?:\.\d+)?[hms])?(?=\s)")


@lite.cache
def _timeout_re() -> rx.Pattern[str]:
    return rx.compile(
        r"^g?timeout\s+(?:(?:-[sk]|--signal|--kill-after)\s+\S+\s+|-\S+\s+)*\d+(?:\.\d+)?[smhd]?\s+(?=\S)"
    )


@lite.lru_cache(maxsize=512)
def strip_plumbing(command: str, root: str | None = None, keep_timeout: bool = False) -> Plumbing:
    """The working segments of a command, without the plumbing listed above (`keep_timeout`:
    but with its `timeout N` prefixes, when they are what a lesson is about)."""
    removed: set[str] = set()
    text = relative_to_root(_export_note_re().sub("", (command or "").strip()), root)
    segments = [[seg, op] for seg, op in (_strip_segment(s, o, removed, keep_timeout)
                                          for s, o in split_segments_ops(text))]
    segments = [s for s in segments if s[0]]
    greps: list[str] = []
    segments = _drop_filters(segments, removed, greps)
    segments = _drop_chatter(segments, removed)
    if len(segments) > 1 and segments[0][1] in ("&&", ";", "\n") and tokenize(segments[0][0]) in (
        ["cd", "."], ["cd", "./"],
    ):  # `cd ROOT &&` once ROOT is written `.`, and a stored `cd . &&`: a no-op
        segments = segments[1:]
        removed.add("cd_root")
    return Plumbing(tuple((seg, op) for seg, op in segments), frozenset(removed), tuple(greps))


def keeps_lines(command: str) -> bool:
    """Does a step of `command` hold lines of its own (inline code, a heredoc's body)? Its
    one-line form (normalize_command) joins them, and cannot be run."""
    return "\n" in command and any("\n" in segment for segment, _op in split_segments_ops(command))


def relative_to_root(text: str, root: str | None) -> str:
    """Absolute paths under root written relative (`root/x` -> `x`, `root` -> `.`)."""
    base = (root or "").rstrip("/\\")
    if not base:
        return text
    forms = [base]
    home = os.environ.get("HOME", "").rstrip("/")
    if home and base.startswith(home + "/"):
        forms.append("~" + base[len(home):])  # agents write `~/code/proj/x` for the same file
    for form in forms:
        if form in text:
            text = text.replace(form + "/", "").replace(form + "\\", "")
            text = rx.sub(rx.escape(form) + r"(?=$|[\s'\"`;|&)])", ".", text)
    return text


def _strip_segment(segment: str, op: str, removed: set[str], keep_timeout: bool = False) -> tuple[str, str]:
    """One segment without descriptor plumbing and a `timeout N` prefix."""
    line, newline, body = segment.partition("\n") if "<<" in segment else (segment, "", "")
    if ">" in line:
        stripped = _redirect_re().sub("", line)
        if stripped != line:
            removed.add("redirect")
            line = " ".join(stripped.split()) if not newline else stripped.strip()
    if "timeout" in line[:9] and not keep_timeout:
        stripped = _timeout_re().sub("", line)
        if stripped != line:
            removed.add("timeout")
            line = stripped
    return (line.strip() + newline + body).strip() if newline else line.strip(), op


def _stage_program(segment: str) -> tuple[str, list[str]]:
    tokens = unwrap_tokens(tokenize(segment))
    return (canonical_program(tokens[0]) if tokens else ""), tokens


def _drop_filters(segments: list[list[str]], removed: set[str], greps: list[str]) -> list[list[str]]:
    """Filters at the end of each pipeline, last first (`job | grep x | head -5` -> `job`);
    the grep stages taken off are added to `greps`, as written (whitespace folded)."""
    out: list[list[str]] = []
    for seg, op in segments:
        out.append([seg, op])
        if op in _PIPES:
            continue
        while len(out) >= 2 and out[-2][1] in _PIPES:
            start = len(out) - 2
            while start > 0 and out[start - 1][1] in _PIPES:
                start -= 1
            kind = _filter_kind(out[-1][0], out[start][0])
            if not kind:
                break
            removed.add(kind)
            stage, end_op = out.pop()
            out[-1][1] = end_op
            if kind == "grep":
                greps.append(" ".join(stage.split()))
    return out


def _filter_kind(stage: str, producer: str) -> str:
    """'filter' or 'grep' when a pipeline's last stage only trims what it shows, else ''."""
    name, tokens = _stage_program(stage)
    args = [t for t in tokens[1:] if not t.startswith("-")]
    if name in ("head", "tail") and not any(t in ("-f", "-F", "--follow") for t in tokens):
        return "filter" if all(a.lstrip("+").isdigit() for a in args) else ""
    if name in ("less", "more") or name == "cat" and not args:
        return "filter"
    if name in ("select-object", "select") and len(tokens) == 3 and tokens[1].lower() in ("-first", "-last"):
        return "filter" if tokens[2].isdigit() else ""  # PowerShell's head and tail
    if name in _GREPS:
        from learn_cli.text.effects import only_reads

        return "" if only_reads(producer) else "grep"
    return ""


def _drop_chatter(segments: list[list[str]], removed: set[str]) -> list[list[str]]:
    """`echo`/`true` segments that neither feed a pipe nor write a file (see above).

    The segment before a dropped one takes its operator: `a || echo x && b` -> `a && b`.
    """
    keep = [not _is_chatter(segments, i) for i in range(len(segments))]
    if not any(keep):
        return segments  # `echo hello` is the command itself
    last_work = max(i for i, k in enumerate(keep) if k)
    out: list[list[str]] = []
    for i, (seg, op) in enumerate(segments):
        if keep[i]:
            out.append([seg, op])
            continue
        removed.add("chatter")
        if i > last_work and segments[i - 1][1] in (";", "||", "\n", "&"):
            removed.add("hides_status")
        if out:
            out[-1][1] = op
    return out


def _is_chatter(segments: list[list[str]], i: int) -> bool:
    seg, op = segments[i]
    if op in _PIPES or i and segments[i - 1][1] in _PIPES:
        return False
    if ">" in seg or "$(" in seg or "`" in seg or "<" in seg:
        return False
    name, _tokens = _stage_program(seg)
    return name in _CHATTER


def _join(segments, newline: str) -> str:
    return "".join(seg + (newline if op == "\n" else _JOINS.get(op, " ")) for seg, op in segments).strip()


def segments_before(command: str, at: int) -> str:
    """The command's first `at` segments, joined as they were (`cd app && npm ls --json` of
    `cd app && npm ls --json | jq .`, at 2)."""
    parts = split_segments_ops(command)[:at]
    return _join([*parts[:-1], (parts[-1][0], "")], "\n") if parts else ""


def clean_command(command: str) -> str:
    """The working segments as one command line (newlines kept: heredocs), without plumbing
    and without an export's trailing `…` cut mark. What pairing and effects analyse."""
    text = _join(strip_plumbing(command).segments, "\n")
    return text[: -len(TRUNCATION)].rstrip() if text.endswith(TRUNCATION) else text


def normalize_command(command: str, root: str | None = None, keep_timeout: bool = False) -> str:
    """Canonical text of a command for learnings, dedup keys and comparisons.

    The plumbing above removed (with root: paths relative, `cd ROOT &&` dropped), segments
    joined by their operators (a newline becomes `; `), whitespace collapsed. `keep_timeout`
    keeps `timeout N` prefixes: a failed command stored for a lesson about them.
    """
    return " ".join(_join(strip_plumbing(command, root, keep_timeout).segments, "; ").split())


# ---------------------------------------------------------------------------
# Plumbing that failed: `timeout 60 npm test` where `timeout` is not installed (macOS without
# coreutils). Compared without plumbing, the retry that does without it is the same command;
# the error naming the plumbing's program says it was not (capture.lesson.failed_timeout).


def command_programs(command: str) -> frozenset[str]:
    """The programs a command line names first in its segments, plumbing and wrappers
    included (`timeout 60 npm test | tail` runs `timeout` and `tail`)."""
    return frozenset(canonical_program(words[0]) for seg, _op in split_segments_ops(command or "")
                     for words in [tokenize(seg)] if words)


def timeout_prefixes(command: str) -> list[str]:
    """The `timeout N` (`gtimeout -s KILL 30`) prefixes of a command's segments, as written."""
    found = []
    for seg, _op in split_segments_ops(command or ""):
        match = _timeout_re().match(seg.strip()) if "timeout" in seg[:12] else None
        if match:
            found.append(match.group(0).strip())
    return found


def drop_timeout(command: str) -> str | None:
    """`command` without its segments' `timeout N` prefixes; None when it has none."""
    out, changed = [], False
    for seg, op in split_segments_ops(command or ""):
        text = seg.strip()
        match = _timeout_re().match(text) if "timeout" in text[:12] else None
        if match:
            text, changed = text[match.end():], True
        out.append((text, op))
    return _join(out, "\n") if changed else None


def pipes(command: str) -> int:
    """How many of the command's steps feed their output to the next (`a | b | c`: 2)."""
    return sum(op in _PIPES for _seg, op in split_segments_ops(command))


def drop_piped(command: str, name: str) -> str | None:
    """`command` without the steps its output is piped into that run program `name` (canonical):
    `curl -s URL | jq .` -> `curl -s URL` when jq is not installed; None when it pipes into none."""
    segments = split_segments_ops(command or "")
    kept: list[tuple[str, str]] = []
    for seg, op in segments:
        if kept and kept[-1][1] in _PIPES and canonical_program(program(seg)) == name:
            kept[-1] = (kept[-1][0], op)  # the step before now ends where the dropped one did
            continue
        kept.append((seg.strip(), op))
    return _join(kept, "\n") if len(kept) < len(segments) else None


# Words a shell takes apart when they are left unquoted; quoting them is the fix. zsh stops a
# command whose unquoted glob matches nothing (`zsh: no matches found: fastapi[all]`; bash
# passes the word on as it is); bash (Git Bash, on Windows) reads a Windows path's backslashes
# as escapes (`C:\xampp\bin\mysql.exe` runs as `C:xamppbinmysql.exe`: command not found).
_GLOB_CHARS = frozenset("*?[")
_NOT_GLOBS = frozenset({"[", "[[", "]", "]]", "?"})
_QUOTING = frozenset("'\"\\$`{")  # a word quoted, escaped or expanded is not left to the glob


def _needs_quotes(word: str) -> bool:
    if len(word) > 3 and word[1:3] == ":\\" and word[0].isalpha():  # `C:\tools\x.exe`
        return "\\\\" not in word and not (_QUOTING - {"\\"}) & set(word)  # (`C:\\x` is escaped)
    return bool(_GLOB_CHARS & set(word)) and word not in _NOT_GLOBS and not _QUOTING & set(word)


def _bare_spans(command: str) -> list[tuple[int, int]]:
    """(start, end) of the words written without any quoting or expansion that the shell would
    take apart: a glob (`fastapi[all]`, `*.py`, `--include=*.ts`; not `[ -f x ]`'s brackets), a
    Windows path."""
    spans, start = [], None
    for index, char in enumerate((command or "") + " "):
        if char in " \t\n;|&()<>":
            if start is not None:
                if _needs_quotes(command[start:index]):
                    spans.append((start, index))
                start = None
        elif start is None:
            start = index
    return spans


def words_to_quote(command: str) -> list[str]:
    """The unquoted words of a command that the shell would take apart (_bare_spans)."""
    return [command[a:b] for a, b in _bare_spans(command)]


def print_window(word: str) -> bool:
    """A sed address that prints lines (`1,240p`, `40p`, `100,$p`): how much of a file to show,
    the way Codex reads files."""
    return len(word) > 1 and word.endswith("p") and word[:-1].replace(",", "", 1).replace("$", "").isdigit()


def windows_alike(a: str, b: str) -> bool:
    """Two words that only say how much of a file a look shows (`1,240p`, `1,220p`): one target."""
    return print_window(a) and print_window(b)


def shell_word(word: str) -> str:
    """`word` as the shell reads it back: single-quoted when it holds a space or a character
    the shell treats specially (a folder `/Users/me/My Project`); an option's value alone."""
    if word and all(c.isalnum() or c in "-_./=:@+,%" for c in word):
        return word
    import shlex

    name, equals, value = word.partition("=")
    if word.startswith("-") and equals and shell_word(name) == name:
        return f"{name}={shlex.quote(value)}"  # `--command='ls -la'`, as it is written
    return shlex.quote(word)


def semicolon_separated(command: str) -> str | None:
    """`command` with its steps joined by `;` where they were joined by `&&` (Windows
    PowerShell 5: "The token '&&' is not a valid statement separator in this version"), or
    None when it has no `&&`."""
    parts = split_segments_ops(command)
    if not any(op == "&&" for _text, op in parts):
        return None
    return _join([(text, ";" if op == "&&" else op) for text, op in parts], "\n")


def semicolons_for_ands(failed: str, fix: str) -> bool:
    """Is `fix` the failed command with its `&&` turned into `;`, nothing else changed (`npm
    run build && npm test` → `npm run build; npm test` in Windows PowerShell 5, which has no
    `&&`)? Such a lesson holds for any chain that fails so."""
    made = semicolon_separated(failed)
    return made is not None and " ".join(made.split()) == " ".join(fix.split())


def quote_words(command: str) -> str | None:
    """`command` with its words_to_quote single-quoted (`pip install 'fastapi[all]'`), or None
    when it has none."""
    spans = _bare_spans(command)
    if not spans:
        return None
    out, last = [], 0
    for start, end in spans:
        out += [command[last:start], "'", command[start:end], "'"]
        last = end
    return "".join(out) + command[last:]
