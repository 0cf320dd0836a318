"""Failure text: its exit code, the lines that carry the error, and its category.

Stdlib only and cheap to import (hot path): every regex is compiled on first use.

Failure text is what the agent saw (agent-hooks §1.4/§1.6): for shell tools a first line
`Exit code N` (transcripts: `Error: Exit code N`; older docs: `Command exited with
non-zero status code N`; Codex: `exit N`), then stdout and stderr interleaved, perhaps cut in
the middle (`... [N characters truncated] ...`), perhaps with ANSI colours and with the
transcript viewer's own lines (`… +4 lines (ctrl+o to see all)`).

Categories (SPEC §1.2, §2.4), decided by ordered rules, first match wins:

1. dependency  a missing module, package, program, header, library or image; versions that
               cannot be resolved (`ModuleNotFoundError`, `command not found`, `Cannot find
               module 'x'`, npm E404/ERESOLVE, `No matching distribution`, `cannot load such
               file`, `fatal error: x.h: No such file`, `pull access denied`).
2. permission  `Permission denied`, EACCES/EPERM, `Operation not permitted`, sudo needing a
               password, read-only file systems, 401/403 and rejected credentials.
3. network     DNS, refused/reset connections, connect/read timeouts, TLS, HTTP 5xx and 429.
4. config      missing env vars (`unbound variable`, `KeyError: 'DATABASE_URL'`), missing or
               broken config files, unknown options/arguments/commands, `Missing script:`,
               no makefile/target, `not a git repository`, PEP 668 environments.
5. syntax      the code or data is rejected before it runs: parse errors (`SyntaxError`,
               `unexpected token`, JSON/YAML/TOML decoding) and, by decision, the other
               static rejections too: compiler and type-checker diagnostics (`error TS2322`,
               `error[E0308]`, `file.c:5:5: error:`), link errors, linters and formatters.
6. logic       failed assertions and failed tests (`AssertionError`, `N failed`, `FAILED
               tests/x.py::t`, `expected … received`, `--- FAIL`), and Edit calls whose
               old text is not in the file (the agent's picture of the file was wrong).
7. runtime     everything else: crashes, tracebacks, panics, signals, missing files and
               directories, a port already in use, a command that hung and timed out.

Rules are tried first on the meaningful lines (so a warning deep in a log does not outvote
the error itself), then on the whole text. Deliberate exceptions to the plain order:
- `command not found: A=b` (a sourced file that is not shell) is syntax, not dependency;
- pip's `(from versions: none)` next to a connection failure is network: the index was not
  reachable, the package is not missing;
- a config file (`config.yaml`, `.env`, `*.toml`, …) that a program could not find is config;
  other missing files, and config files that cat/grep/cd… were pointed at, are runtime;
- `Cannot find module './x'` (a relative path) is runtime, `'x'` dependency;
- `Command timed out after 2m 0s` (the agent stopping a hung command) is runtime.

Non-shell tools (the `tool` argument): WebFetch/WebSearch failures are always network (the
remote refused or failed, whatever the status: 403 bot walls, 404s and 5xx alike; the fix is
another URL or source); a Read over the size limit is config (wrong arguments). Otherwise the
text rules apply (an Edit's old text not found → logic, a lint gate's SyntaxError → syntax,
EACCES → permission) and the rest is runtime (a Read of a missing path, Edit before Read,
a file modified since it was read).

When the text of a shell failure decides nothing: exit code 127 → dependency, 126 →
permission, then the program (test runners and `… test` → logic, linters, compilers and
`… build/check/lint` → syntax, installers → dependency, curl/ssh/… → network), else runtime.
"""

from __future__ import annotations

from learn_cli.text import rx
from learn_cli.text.lite import cache, lru_cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "CATEGORIES", "NOT_PROGRAM_WORDS", "parse_exit_code", "strip_ansi", "meaningful_lines",
    "meaningful_line", "suggested_commands", "is_boilerplate", "categorize", "heeds_a_warning",
    "warning_lines", "script_echo",
]

CATEGORIES = ("syntax", "runtime", "config", "network", "permission", "dependency", "logic")

# `X not found` names a missing program unless X is one of these ("File not found").
NOT_PROGRAM_WORDS = frozenset("""
    file files page module target package path directory dir key user resource image command
    object host item entry record route endpoint script project repository repo branch tag table
    container volume network service config model manifest match matches value element class
    method function symbol name version release asset token secret variable document node
""".split())

# Only this much of a huge output is scanned: the head (collection errors, the first
# compiler error) and the tail (summaries, the final exception) carry the error.
_SCAN_HEAD = 8000
_SCAN_TAIL = 8000
_LINE_CAP = 300


def _lazy(pattern: str, flags: int = 0) -> Callable[[], rx.Pattern[str]]:
    """A regular expression compiled when first used: the hook skips the compiles it never needs."""
    return cache(lambda: rx.compile(pattern, flags))

# ---------------------------------------------------------------------------
# Exit code and ANSI


_exit_re = _lazy(
    r"^\s*(?:error:\s*)?(?:exit code|exit status|exit|"
    r"command exited with non-zero status code|process exited with code)\s*:?\s*(-?\d+)\s*$",
    rx.IGNORECASE,
)


_returncode_re = _lazy(r"<returncode>\s*(-?\d+)\s*</returncode>")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def parse_exit_code(error_text: str | None) -> int | None:
    """The exit code a failure text announces on its first line, else None.

    Accepts `Exit code 1`, `Error: Exit code 1`, `Command exited with non-zero status code 1`,
    Codex's `exit 127` and SWE-agent's `<returncode>1</returncode>`.
    """
    if not error_text:
        return None
    head = strip_ansi(error_text[:400])
    match = _exit_re().match(_first_line(head))
    if match is None:
        match = _returncode_re().search(head)
    return int(match.group(1)) if match else None


# CSI sequences, OSC sequences (titles, hyperlinks), then lone two-byte escapes.
_ansi_re = _lazy(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")


def strip_ansi(text: str | None) -> str:
    """Text without ANSI escape sequences (colours, cursor moves, OSC hyperlinks)."""
    if not text:
        return ""
    if "\x1b" not in text:
        return text
    return _ansi_re().sub("", text)


# ---------------------------------------------------------------------------
# Meaningful lines


# Lines that never carry the error: viewer chrome, truncation marks, progress.
_noise_re = _lazy(
    r"""
      \.\.\.\s*\[\d+\s+characters?\s+truncated\]\s*\.\.\.
    | \(ctrl\+[a-z]\b                                  # transcript viewer chrome
    | ^\s*…\s*\+\d+\s+lines?\b
    | ^\s*\[rerun:\s*\w+\]\s*$
    | ^\s*</?(?:returncode|output|error)>(?:\s*-?\d+\s*</returncode>)?\s*$
    | ^\s*[=\-_*~#+.]{3,}\s*$                           # separators
    | ^\s*[=_\-]{3,}\s*(?:FAILURES|ERRORS|short\ test\ summary\ info|test\ session\ starts|
                          warnings\ summary|PASSES)\s*[=_\-]{3,}\s*$      # pytest section headers
    | ^\s*failures:\s*$                                 # cargo/rspec section headers
    | ^\s*[\^~]+\s*$                                    # caret/tilde markers under code
    | ^\s*[.FEsxX]{2,}\s*(?:\[\s*\d+%\s*\])?\s*$         # pytest/unittest progress
    | \d{1,3}%\s*\|[█▉▊▋▌▍▎▏#\s]*\|                     # tqdm
    | [━█▓░▒]{4,} | \[[=#>\- ]{6,}\]                    # progress bars
    | ^\s*[⠁-⣿]                                        # spinners
    | ^\s*(?:Collecting|Downloading|Using\ cached|Requirement\ already\ satisfied|
             Obtaining|Installing\ collected\ packages|Preparing\ metadata|
             Building\ wheels?\ for|Created\ wheel|Stored\ in\ directory|
             Compiling|Checking|Downloaded|Updating\ crates\.io|Fetching|Resolving|
             Blocking\ waiting\ for|Pulling\ fs\ layer|Waiting|Verifying\ Checksum|
             Download\ complete|Extracting|Pull\ complete|Digest:|
             added\ \d+\ packages?|up\ to\ date|audited\ \d+|found\ 0\ vulnerabilit)\b
    | ^\s*npm\ (?:WARN|notice)\b
    | ^\s*\+\s+(?:CategoryInfo|FullyQualifiedErrorId)\s*:     # PowerShell's error record: the
    | ^\s*At\ (?:line|\S.*?):\d+\ char:\d+\s*$                # message is its first line
    | ^\s*\+\s*~+\s*$
    """,
    rx.VERBOSE | rx.IGNORECASE,
)


# Lines that state the error itself.
_strong_re = _lazy(
    r"""
      (?-i:(?:^|[\s(])(?:[A-Za-z_]\w*\.)*[A-Z]\w*
           (?:Error|Exception|Exit|Interrupt|Fault|Failure|Warning)\b(?:\s*\[\w+\])?(?::|$))
    | ^\S+?:\d+(?::\d+)?:\s                              # file:line[:col]: diagnostics
    | \berror(?:\[[\w-]+\])?\s*[:!]
    | \berror\s+(?:TS|CS)\d+\b
    | ^\s*\d+:\d+\s+error\s
    | ERR! | ^npm\ error\b | ^E\s{2,}\S | ^error(?=[\s:\[!]|$)
    | \bfatal(?:\ error)?: | (?-i:\bFATAL\b) | \bpanic(?:ked)?\b | (?-i:\bFAIL(?:ED|URES?)?\b) | ---\ FAIL | \[FAIL
    | \bfailure/error: | ^not\ ok\ \d+
    | command\ not\ found | :\ not\ found\s*$ | ^[\w.+-]+\ not\ found\s*$ | not\ recognized\ as
    | no\ such\ file\ or\ directory | cannot\ access | permission\ denied | operation\ not\ permitted
    | access\ is\ denied | no\ module\ named | cannot\ find\ module | could\ not\ (?:find|resolve|connect|read|open)
    | unable\ to\ (?:find|resolve|connect|access|locate|open) | unbound\ variable | connection\ refused
    | segmentation\ fault | core\ dumped | ^killed\s*$ | ^aborted\b
    | \b\d+\ (?:failed|failing|failures?|errors?)\b | \btests?\ failed\b
    | timed\ out | \bdenied\b | \brefused\b | syntax\ error | unexpected\ (?:token|argument|eof|end)
    | \bunknown\ (?:option|flag|switch)\b | \bunrecogni[sz]ed\ (?:option|argument)s?\b | \binvalid\ option\b
    | failed\ to\ (?:resolve|load|compile|parse|build|solve)\b
    | \bmissing\ script | no\ targets\ specified | no\ rule\ to\ make | not\ a\ git\ repository
    | ^(?:nothing|no\ changes)\ added\ to\ commit | ^nothing\ to\ commit\b  # git's verdict after its status
    | !\ *\[(?:remote\ )?rejected\]                      # git push: the ref and why
    | (?-i:^CONFLICT\ \() | \bmerge\ conflict\b            # git: a merge stopped, files to resolve
    | [✗✖×✕]\s
    """,
    rx.VERBOSE | rx.IGNORECASE | rx.MULTILINE,
)


# Lines that hint at trouble when nothing states it outright.
_weak_re = _lazy(
    r"error|fail|not found|invalid|cannot|can't|could not|unable|missing|denied|"
    r"refused|exception|expected|abort|does not exist|no such|not allowed|unknown",
    rx.IGNORECASE,
)


# Error-looking lines that only say "something above failed".
_boilerplate_re = _lazy(
    r"""^(?:
      (?:npm\ (?:ERR!|error)\s+)?a\ complete\ log\ of\ this\ run
    | npm\ (?:ERR!|error)\s*(?:$|code\ (?:ELIFECYCLE|1|2|127)\b|errno\b|exit\ status|path\b|command\b|
                               failed\ at\ the|this\ is\ probably|lifecycle|\s+/.*_logs/)
    | g?make(?:\[\d+\])?:\ \*\*\*\ \[.*\]\ error\ \d+
    | error\ command\ failed\ with\ exit\ code
    | (?:\[?ELIFECYCLE\]?\s+)?command\ failed\.?$
    | info\ visit\ https?://
    | for\ more\ information,\ try
    | run\ with\ --(?:stacktrace|info|debug)
    | error:\ process\ completed\ with\ exit\ code
    | error:\ script\ .*\ failed
    )""",
    rx.VERBOSE | rx.IGNORECASE,
)


def is_boilerplate(line: str) -> bool:
    """True for error-looking lines that only say that something above failed."""
    return _boilerplate_re().search(line.strip()) is not None


# Transcript exports prefix the tool result with "Error: "; drop it where another marker follows.
_export_prefix_re = _lazy(r"^Error:\s+(?=(?i:error\b|fatal\b|\(eval\)|Exit code|Compiling\b))")


_decoration_re = _lazy(r"^[=\-_*!~#]{3,}\s*(.*?)\s*[=\-_*!~#]{3,}$")


def _clean(line: str) -> str:
    if "\r" in line:  # a progress line redrawn in place: keep what was shown last
        parts = [p for p in line.split("\r") if p.strip()]
        line = parts[-1] if parts else ""
    line = line.strip().lstrip("│┃╷╵╎┆ ")  # terraform & co. frame every line
    decorated = _decoration_re().match(line)
    if decorated:
        line = decorated.group(1)
    if len(line) > _LINE_CAP:
        line = line[: _LINE_CAP - 1] + "…"
    return line


def _content_lines(error_text: str) -> list[str]:
    """ANSI-free, cleaned, non-blank, non-noise lines; exit-code lines removed."""
    text = _scan_window(strip_ansi(error_text).replace("\r\n", "\n"))
    lines = text.split("\n")
    out: list[str] = []
    noise = _noise_re()
    first = True
    for raw in lines:
        if not raw.strip() or _exit_re().match(raw):  # `Exit code N` says nothing more
            continue
        if first:
            first = False
            raw = _export_prefix_re().sub("", raw.strip())
        if noise.search(raw):
            continue
        line = _clean(raw)
        if line:
            out.append(line)
    return out


def _tiers(lines: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Split lines into strong (state the error), weak (hint at it) and the rest.

    Python traceback frames are skipped; the line that ends a traceback is strong.
    """
    strong: list[str] = []
    weak: list[str] = []
    rest: list[str] = []
    in_traceback = False
    strong_re, weak_re, boiler_re = _strong_re(), _weak_re(), _boilerplate_re()
    for line in lines:
        if line.startswith("Traceback (most recent call last)"):
            in_traceback = True
            continue
        if in_traceback:
            if line.startswith(("File ", "[Previous line repeated")) or _looks_like_frame_code(line):
                continue
            in_traceback = False
            strong.append(line)
            continue
        if boiler_re.search(line):
            rest.append(line)
        elif _info_record_re().search(line) and not strong_re.search(line):
            continue  # a program's log at INFO level says what it did, not what went wrong
        elif strong_re.search(line):
            strong.append(line)
        elif weak_re.search(line):
            weak.append(line)
        else:
            rest.append(line)
    return strong, weak, rest


# A log record below warning level: `2025-08-29T20:51:34Z [INFO] builder: starting`,
# `INFO: Analyzed target`, `level=debug msg=…` (provide-io/flavorpack: two unrelated failures of
# one tool shared their key, its greeting, when the export cut the error that followed it).
_info_record_re = _lazy(r"(?:^|[\s\]|])\[?(?:INFO|DEBUG|TRACE)\]?(?::|\s)|\blevel=(?:info|debug|trace)\b")


def _looks_like_frame_code(line: str) -> bool:
    """Inside a traceback: a source line under `File ...`, not the exception that ends it."""
    return _exception_line_re().match(line) is None


# `KeyError: 'x'`, `requests.exceptions.ConnectionError: …`, `KeyboardInterrupt`
_exception_line_re = _lazy(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?::\s|:?$)")


def _dedupe(lines: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for line in lines:
        if line not in seen:
            seen.add(line)
            out.append(line)
    return out


def meaningful_lines(error_text: str | None, max_lines: int = 6, max_chars: int = 600) -> str:
    """The few lines of a failure text that carry the error, joined by newlines.

    Drops the `Exit code N` line, ANSI escapes, blank lines, progress and viewer noise and
    traceback frames; keeps the lines that state the error (exception lines, `error:`,
    `ERR!`, `fatal:`, `FAILED`, `command not found`, the line that ends a traceback, test
    summaries), else lines that hint at one, else the last lines. With more candidates than
    max_lines, keeps the first max_lines - 1 and the last (first errors + final summary).
    Idempotent: meaningful_lines(meaningful_lines(x)) == meaningful_lines(x).
    """
    if not error_text or max_lines <= 0:
        return ""
    return _meaningful_lines(error_text, max_lines, max_chars)


@lru_cache(maxsize=16)  # capture asks for the same text's lines for category, error field and key
def _meaningful_lines(error_text: str, max_lines: int, max_chars: int) -> str:
    lines = _content_lines(error_text)
    strong, weak, rest = _tiers(lines)
    chosen = _dedupe(strong or weak or rest[-max_lines:])
    if len(chosen) > max_lines:
        chosen = chosen[: max_lines - 1] + chosen[-1:]
    out: list[str] = []
    used = 0
    for line in chosen:
        cost = len(line) + (1 if out else 0)
        if used + cost > max_chars:
            if not out:
                out.append(line[: max(1, max_chars - 1)] + "…")
            break
        out.append(line)
        used += cost
    return "\n".join(out)


# How a shell says that what it was asked to run is not there: bash's `bash: x.sh: No such file
# or directory` (`/bin/bash: line 1: ./x.sh: …`, `x: command not found`), zsh's `zsh:1: no such
# file or directory: ./x.sh` (`zsh: command not found: x`).
_not_run_re = _lazy(
    r"^(?:[\w./-]+:\s*)?(?:line \d+:\s*)?(?P<first>[^\s:]+): (?:no such file or directory|command not found|"
    r"permission denied)\s*$|^(?:[\w./-]+:\d*:?\s*)?(?:no such file or directory|command not found|"
    r"permission denied): (?P<last>\S+)\s*$",
    rx.IGNORECASE | rx.MULTILINE,
)


def failed_behind_a_pipe(command: str | None, output: str | None) -> str:
    """The line saying that the job of `job | tail -20` (grep, head, …) could not run, when the
    output says so: the shell's (its program or script is not there), or the program's own
    that it ran nothing (`_gave_up_res`); else "". Without `pipefail` the exit status is the
    last filter's, so the call "succeeded": the agent saw the error only in the output (a real
    history learned `bash test/run_all_tests.sh` as a fix from one such "success")."""
    if not command or not output or "|" not in command:
        return ""
    head = output[:2000]
    low = head.lower()
    if not any(marker in low for marker in _NOT_RUN_MARKERS):
        return ""
    from learn_cli.text.shell import canonical_program, path_name, strip_plumbing, tokenize

    plumbing = strip_plumbing(command)
    if not plumbing.segments or not ({"filter", "grep"} & plumbing.removed):
        return ""
    words = tokenize(plumbing.segments[-1][0])
    job = {word.removeprefix("./") for word in words if not word.startswith("-")}
    for match in _not_run_re().finditer(head):
        named = (match.group("first") or match.group("last") or "").removeprefix("./")
        if named and named in job:
            return match.group(0).strip()
    gave_up = _gave_up_res().get(canonical_program(path_name(words[0]))) if words else None
    match = gave_up.search(head) if gave_up is not None else None
    return match.group(0).strip() if match else ""


# Words one of the lines below holds: an output with none of them is not asked further.
_NOT_RUN_MARKERS = ("no such file", "not found", "denied", "*** ", "missing script", "could not find")


@cache
def _gave_up_res() -> dict[str, rx.Pattern[str]]:
    """How a program says it ran nothing of the job, by program: make's fatal "*** … Stop." (no
    makefile, no rule for the target), cargo's missing manifest, npm's missing script, Python's
    missing script. (A recipe, a test or a compile that failed is the job's own failure, which
    its output shows: not this.)"""
    shown_as = r"^(?:Error: )?"  # (a transcript shows stderr so: "Error: make: *** … Stop.")
    return {name: rx.compile(shown_as + pattern, rx.MULTILINE) for names, pattern in (
        (("make", "gmake", "mingw32-make"), r"(?:g?make|mingw32-make)(?:\[\d+\])?: \*\*\* .*Stop\.[ \t]*$"),
        (("cargo",), r"error: could not find `Cargo\.toml` in .*$"),
        (("npm",), r"npm (?:ERR!|error) Missing script: .*$"),
        (("python",), r"\S*: can't open file .*\[Errno 2\] No such file or directory[ \t]*$"),
    ) for name in names}


# Programs that search text and say "nothing matched" by exit status 1 alone (`git grep` too).
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "findstr", "pgrep"})


def found_nothing(command: str | None, error: str | None, exit_code: int | None = None) -> bool:
    """A text search that matched nothing: the line ends in `grep`/`rg`/`pgrep` (`ps aux | grep
    vite`, `git grep -n X`), its status is 1 and nothing else was said (`grep -c` prints `0`).
    That is an answer, not a failure: Claude Code itself reports a lone `grep` so as a success
    ("No matches found"); behind a pipe, or from Codex, it came as a failure, and the next
    search, for something else, was taken for its fix."""
    if not command or exit_code not in (None, 1) or len(error or "") > 200:
        return False
    lowered = command.lower()
    if not any(name in lowered for name in _SEARCHERS):
        return False
    said = [line.strip() for line in (error or "").splitlines() if line.strip()]
    statuses = [next(filter(None, match.groups())) for line in said if (match := _status_line_re().fullmatch(line))]
    if set(statuses) != {"1"} and not (statuses == [] and exit_code == 1):
        return False
    if [line for line in said if not _status_line_re().fullmatch(line)] not in ([], ["0"]):
        return False
    return _ends_in_a_search(command)


@cache
def _status_line_re() -> rx.Pattern[str]:
    """A line that only gives the exit status, as each agent or its transcript words it."""
    return rx.compile(r"(?:error: )?exit code:? (\d+)|exited (\d+) in [\d.]+m?s:?|command failed with exit code:? "
                      r"(\d+)\.?|process exited with code (\d+)", rx.I)


def _ends_in_a_search(command: str) -> bool:
    from learn_cli.text.shell import canonical_program, clean_command, split_segments_ops, tokenize, unwrap_tokens

    segments = split_segments_ops(clean_command(command))
    if not segments:
        return False
    tokens = unwrap_tokens(tokenize(segments[-1][0]))
    if not tokens:
        return False
    name = canonical_program(tokens[0])
    return name in _SEARCHERS or name == "git" and tokens[1:2] == ["grep"]


# A line that hands over a command (git's "… set the remote as upstream, use", "To fix, run:").
_HANDS_OVER = ("use", "use:", "run", "run:", "running:", "with:", "try:", "command:", "instead:")


def suggested_commands(error_text: str | None, limit: int = 2) -> list[str]:
    """The commands an error hands over on a line of their own, after a line ending "use" or
    "run:" (`git push --set-upstream origin feat/x`): kept with the error's meaningful lines,
    where they would be dropped as neither stating nor hinting at it, so that a retry can be
    seen to follow the error's advice (capture.lesson.suggested_by)."""
    if not error_text or "\n" not in error_text:
        return []
    found: list[str] = []
    before = ""
    for raw in strip_ansi(error_text).split("\n"):
        line = raw.strip()
        if not line:
            continue
        words = before.lower().split()
        if words and words[-1] in _HANDS_OVER and line[0].isalpha() and len(line) <= 200 and line not in found:
            found.append(line)
            if len(found) == limit:
                break
        before = line
    return found


def script_echo(error_text: str | None) -> list[str]:
    """The lines in which a package manager echoed the package.json script it ran, as written:
    npm and pnpm `> app@1.0.0 lint` then `> eslint src --ext js,jsx`; yarn and bun `$ eslint
    src`. [] when there are none. Kept with the error's meaningful lines, where they would be
    dropped, so that a retry can be seen to run the script's line (capture.lesson.ran_the_script)."""
    if not error_text or ("> " not in error_text and "$ " not in error_text):
        return []
    lines = [line.strip() for line in strip_ansi(error_text).split("\n")]
    for line, following in zip(lines, [*lines[1:], ""], strict=True):
        words = line.split()
        if len(words) >= 3 and words[0] == ">" and "@" in words[1] and following.startswith("> "):
            return [line, following] if len(following) <= 300 else []
        if line.startswith("$ ") and len(line) <= 300:
            return [line]
    return []


# What a tool says when it hands over a way past its own refusal and warns against it.
_warning_re = _lazy(
    r"\b(?:despite|if you are sure|destructive|(?:data|changes|work) will be lost|all data|data loss|breaking "
    r"changes?|at your own risk|cannot be undone|irreversibl[ey]|permanently (?:delete|remove))\b",
    rx.IGNORECASE,
)


def _may_warn(error_text: str | None) -> bool:
    """A warning in the text (a word of one looked for first: the hook asks of every failure)."""
    lower = (error_text or "").lower()
    return any(word in lower for word in _WARNING_WORDS) and bool(_warning_re().search(lower))


_WARNING_WORDS = ("despite", "are sure", "destructive", "lost", "data loss", "breaking", "own risk", "undone",
                  "irreversib", "permanently")


def warning_lines(error_text: str | None) -> list[str]:
    """The lines of an error that warn against the way past it they hand over, with the line
    after each (rails puts the variable there): kept with the error's lines, as
    suggested_commands are, so that heeds_a_warning can read them later."""
    if not _may_warn(error_text):
        return []
    lines = [line.strip() for line in strip_ansi(error_text).split("\n") if line.strip()]
    found: list[str] = []
    for at, line in enumerate(lines):
        if _warning_re().search(line):
            found += [x for x in lines[at:at + 2] if x not in found and len(x) <= 300]
    return found


def heeds_a_warning(error_text: str | None, command: str, failed_command: str) -> bool:
    """Does `command` add a word (an option, a variable, a subcommand) that the error hands over
    as the way past its refusal, with a warning (cargo's "to proceed despite this … pass
    `--allow-dirty`", rails' "If you are sure you want to continue, run … with
    DISABLE_DATABASE_ENVIRONMENT_CHECK=1", npm's "`npm audit fix --force` … a breaking
    change"), or one that forces by its name (git's "use --force to delete it", brew's "force
    removal with: brew uninstall --ignore-dependencies")? The tool said what it would cost, or
    that it would not do it unforced: that was a decision for that once, not a fix to hand on."""
    if not error_text or "--" not in error_text and not _may_warn(error_text):
        return False  # (no option handed over that could force, no warning: the common case, cheaply)
    from learn_cli.text.shell import tokenize

    said = set(rx.split(r"[\s'\"`]+", strip_ansi(error_text)))
    before = set(tokenize(failed_command))
    handed = [word for word in tokenize(command) if word not in before and len(word) > 1 and word in said]
    return bool(handed) and (any(_forcing_re().match(word) for word in handed) or _may_warn(error_text))


# Options that get past a refusal by their very name (`--force`, `--ignore-dependencies`,
# `--skip-checks`): handed over by the error that refused, they override it. (Not `--allow-…`:
# deno's `--allow-net` is how a script is given the access it asks for.)
_forcing_re = _lazy(r"--(?:force|ignore|skip)(?:[-=]\S*)?$", rx.IGNORECASE)


def meaningful_line(text) -> str:
    """The one line of a failure text that says what went wrong.

    The same rules as `meaningful_lines` pick the lines that carry the error (no `Exit code
    N`, no traceback frames, no noise; stating lines before hinting ones before the rest); of
    those, the last that names its error after a colon (a traceback and a summary end with
    the error itself), else the first.
    """
    if not isinstance(text, str) or not text.strip():
        return ""
    lines = _content_lines(text)
    if not lines:
        return text.strip().splitlines()[0].strip()
    strong, weak, rest = _tiers(lines)
    chosen = strong or weak or rest
    if not chosen:  # a traceback cut off before its error (frames only): where it was when cut
        return lines[-1]
    said = _npm_message(chosen)
    if said:
        return said
    for line in reversed(chosen):
        if ":" in line and not is_boilerplate(line) and not line.lstrip("= ").startswith(_HINTS):
            return line  # (a compiler's "= note: …" after "error: linker `cc` not found" is its hint)
    return chosen[0]


_HINTS = ("note:", "help:", "hint:")


def _npm_message(lines: list[str]) -> str:
    """npm's own message in a block of its lines: the first after `code EUSAGE` and the like
    ("npm ERR! The `npm ci` command can only install…", `ERESOLVE unable to resolve
    dependency tree`), not the code, nor a `While resolving: web@0.1.0` detail after it."""
    if not lines or not all(line.startswith(("npm ERR!", "npm error", "npm warn", "npm WARN")) for line in lines):
        return ""
    for line in lines:
        words = line.split()
        if line.startswith(("npm ERR!", "npm error")) and len(words) > 3 and words[2] not in _NPM_FIELDS:
            return line
    return ""


_NPM_FIELDS = frozenset({"code", "errno", "syscall", "path", "dest", "command", "cwd", "signal"})


# ---------------------------------------------------------------------------
# Categories

_DEPENDENCY = r"""
      ModuleNotFoundError | No\ module\ named | \bcommand\ not\ found\b
    | ^(?:\S+:\ )?(?:line\ )?(?:\d+:\ )?[\w.+-]+:\ not\ found\s*$
    | ^(?!(?:{not_program})\ )[\w.+-]+\ not\ found\s*$
    | which:\ no\ \S+\ in\ \(
    | is\ not\ recognized\ as\ (?:an\ internal\ or\ external\ command|the\ name\ of\ a\ cmdlet)
    | Cannot\ find\ module\ ['"`](?![./~]|[A-Za-z]:)
    | ERR!\ 404 | npm\ error\ 404 | \bE404\b | \bETARGET\b | No\ matching\ version\ found
    | not\ in\ (?:this|the\ npm)\ registry | ERR_PNPM_(?:FETCH_404|NO_MATCHING_VERSION)
    | could\ not\ find\ a\ version\ that\ satisfies | No\ matching\ distribution\ found
    | ResolutionImpossible | \bERESOLVE\b | conflicting\ peer\ dependency | \bEBADENGINE\b
    | version\ solving\ failed | VersionConflict | dependency\ conflict
    | requires\ a\ different\ python | engine\ "\w+"\ is\ incompatible
    | Failed\ building\ wheel | Could\ not\ build\ wheels
    | no\ matching\ package\ named | failed\ to\ select\ a\ version | use\ of\ undeclared\ crate
    | no\ required\ module\ provides\ package | cannot\ find\ module\ providing | cannot\ find\ package
    | missing\ go\.sum\ entry | is\ not\ in\ (?:std|GOROOT)
    | cannot\ load\ such\ file | Could\ not\ find\ gem | GemNotFound | MissingSpecError
    | ClassNotFoundException | NoClassDefFoundError | Could\ not\ resolve\ dependencies
    | Could\ not\ find\ artifact | package\ [\w.]+\ does\ not\ exist
    | fatal\ error:\ \S+\.(?:h|hh|hpp|hxx):\ No\ such\ file | cannot\ find\ -l\S
    | library\ not\ found\ for\ -l | error\ while\ loading\ shared\ libraries
    | cannot\ open\ shared\ object\ file | DLL\ load\ failed | not\ found\ in\ the\ pkg-config\ search\ path
    | could\ not\ find\ system\ library | Could\ not\ find\ a\ package\ configuration\ file
    | (?-i:Could\ NOT\ find\ \w+) | Unable\ to\ locate\ package | \bis\ not\ installed\b
    | requires\ the\ installation\ of | pull\ access\ denied | manifest\ unknown
    | manifest\ for\ \S+\ not\ found | Couldn't\ find\ package
    | ImportError:\ cannot\ import\ name\ .*site-packages
    | (?:failed|unable)\ to\ resolve\ (?:import|module|dependency)\ ['"`](?![./~]) | can't\ resolve\ ['"`](?![./~])
    | (?:lock\ ?file|package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Cargo\.lock|uv\.lock|Gemfile\.lock)
      [^\n]{0,80}?(?:in\ sync|out\ of\ date|outdated|not\ up\ to\ date|does\ not\ match|needs\ to\ be\ updated)
    | update\ your\ lock\ ?file | from\ lock\ ?file
"""

_PERMISSION = r"""
      permission\ denied | \bEACCES\b | \bEPERM\b | operation\ not\ permitted | access\ is\ denied
    | \baccess\ denied\b | PermissionError | not\ in\ the\ sudoers | a\ terminal\ is\ required\ to\ read\ the\ password
    | a\ password\ is\ required | read-only\ file\ system | \bEROFS\b | must\ be\ run\ as\ root
    | are\ you\ root | insufficient\ permission | permission\ to\ \S+\ denied | authentication\ failed
    | authentication\ required | \bunauthori[sz]ed\b | \bnot\ authorized\b | \b403\ Forbidden\b
    | status(?:\ code)?:?\ 40[13]\b | HTTP(?:/[\d.]+)?\ 40[13]\b | HTTP\ Error\ 40[13]\b
    | returned\ error:\ 40[13]\b | Host\ key\ verification\ failed
"""

_NETWORK = r"""
      could\ not\ resolve\ host | getaddrinfo
    | connection\ to\ (?:the\ )?server\ .{0,120}?(?:was\ refused|failed) | \bwas\ refused\b
    | \bENOTFOUND\b | \bEAI_AGAIN\b | name\ or\ service\ not\ known
    | temporary\ failure\ in\ name\ resolution | nodename\ nor\ servname | \bno\ such\ host\b | NameResolutionError
    | connection\ refused | \bECONNREFUSED\b | connection\ reset | \bECONNRESET\b | connection\ aborted
    | \bECONNABORTED\b | connection\ closed\ by | socket\ hang\ up | connection\ timed\ out | \bETIMEDOUT\b
    | \bESOCKETTIMEDOUT\b
    | (?:connect|connection|read|request|socket|handshake|gateway|network|i/o|tls)\ time(?:d\ )?out
    | ReadTimeout | ConnectTimeout | TimeoutError | deadline\ exceeded | timeout\ was\ reached
    | Timeout\ exceeded\ while\ awaiting | network\ is\ unreachable | \bENETUNREACH\b | no\ route\ to\ host
    | \bEHOSTUNREACH\b | failed\ to\ connect | could\ not\ connect | failed\ to\ establish\ a\ new\ connection
    | max\ retries\ exceeded | RemoteDisconnected | ConnectionError | unable\ to\ connect
    | cannot\ connect\ to\ the\ docker\ daemon | network\ (?:error|request|timeout|is\ unreachable)
    | \bfetch\ failed\b | SSLError | SSL:\ | SSL_ERROR | SSL\ certificate\ problem | certificate\ verify\ failed
    | TLS\ handshake | \bx509: | unable\ to\ get\ local\ issuer | self[-\ ]signed\ certificate
    | \b5\d\d\ (?:Internal\ Server\ Error|Bad\ Gateway|Service\ Unavailable|Gateway\ Time-?out)
    | HTTP(?:/[\d.]+)?\ 5\d\d\b | status(?:\ code)?:?\ 5\d\d\b | HTTP\ Error\ 5\d\d | returned\ error:\ 5\d\d
    | \b429\ Too\ Many\ Requests | too\ many\ requests | rate[-\ ]limit(?:ed|\ exceeded)
    | the\ remote\ end\ hung\ up | kex_exchange_identification | curl:\ \((?:5|6|7|28|35|52|56)\)
"""

_CONFIG = r"""
      \bunbound\ variable | environment\ variable | \benv\ var(?:iable)?\b | \bis\ not\ set\b | must\ be\ set\b
    | (?-i:KeyError:\ ['"][A-Z][A-Z0-9_]{2,}['"])
    | unknown\ option | unrecogni[sz]ed\ (?:option|argument|flag)s? | unknown\ argument | unexpected\ argument
    | unknown\ (?:shorthand\ )?flag | invalid\ option | no\ such\ option | illegal\ option | bad\ option
    | unknown\ command | no\ such\ (?:sub)?command | is\ not\ a\ [\w-]+\ command | invalid\ choice
    | the\ following\ arguments\ are\ required | missing\ required\ (?:argument|option|flag|parameter)
    | requires\ an\ argument | requires\ a\ value | invalid\ value\ for
    | missing\ script | no\ targets\ specified\ and\ no\ makefile | no\ rule\ to\ make\ target
    | unknown\ lifecycle\ phase | not\ a\ git\ repository | divergent\ branches | please\ tell\ me\ who\ you\ are
    | has\ no\ upstream\ branch | paths\ are\ ignored\ by\ one\ of\ your
    | externally-managed-environment | does\ not\ contain\ (?:this|the)\ feature
    | ImproperlyConfigured | ConfigError | configuration\ error | invalid\ configuration | misconfigur
    | config(?:uration)?\ file\ .{0,80}?(?:not\ found|missing|does\ not\ exist|invalid|could\ not|cannot|error)
    | (?:no|missing|invalid|cannot\ find|could\ not\ find|couldn't\ find|unable\ to\ (?:find|load|read))
      \ (?:a\ |the\ )?config(?:uration)?(?:\ file)?\b
    | could\ not\ find\ [`'"]?(?:Cargo\.toml|package\.json|pyproject\.toml|go\.mod|tsconfig\.json)
    | go\.mod\ file\ not\ found | failed\ to\ parse\ manifest | CMake\ Error
    | (?:database|role)\ ['"]?[\w.-]+['"]?\ does\ not\ exist
    | no\ valid\ credential | unable\ to\ locate\ credentials | NoCredentialsError | credentials?\ (?:were\ )?not\ found
    | missing\ credentials | not\ logged\ in | author\ identity\ unknown
"""

_SYNTAX = r"""
      SyntaxError | IndentationError | TabError | \bsyntax\ error | invalid\ syntax | ParseError
    | \bparse\ error | parsing\ error | failed\ to\ parse | unexpected\ token | unexpected\ EOF
    | unexpected\ end\ of\ (?:file|input|json) | \bunterminated\b | unexpected\ indent
    | unindent\ does\ not\ match | \bunmatched\ ['"`(\[{]? | was\ never\ closed
    | expected\ ['"`‘][^'"`’\s]{1,3}['"`’] | ['"`‘][^'"`’\s]{1,3}['"`’]\ expected
    | expected\ (?:expression|identifier|one\ of|an\ indented\ block|declaration|statement|type\b)
    | JSONDecodeError | Expecting\ (?:value|property\ name|',' delimiter) | in\ JSON\ at\ position
    | is\ not\ valid\ JSON | invalid\ JSON | ScannerError | ParserError | mapping\ values\ are\ not\ allowed
    | could\ not\ find\ expected | TOMLDecodeError | invalid\ TOML | YAMLException | \byaml:\ line\ \d+
    | \berror\ TS\d+ | \berror\[E\d+\] | ^\s*\S+:\d+:\d+:\ (?:fatal\ )?error\b | ^\S+\.go:\d+:\d+:\x20
    | ^\S+\.java:\d+:\ error | \(\d+,\d+\):\ error | \berror\ CS\d+ | ^e:\ \S+\.kts?:
    | ^\s*\S+:\d+:\d+:\ [A-Z]{1,3}\d{3,4}\b | ^\s*\d+:\d+\s+error\s | \bE999\b
    | undefined\ reference\ to | duplicate\ symbol | linker\ command\ failed | could\ not\ compile
    | compilation\ (?:failed|error|terminated) | code\ style\ issues | would\ reformat
    | \d+\ problems?\ \(\d+\ errors? | ^Found\ \d+\ errors?\b
"""

_LOGIC = r"""
      AssertionError | AssertionFailedError | assertion\ failed | assertion\ `.*`\ failed | \bassert\ .+\ ==
    | expect\(received\) | ^\s*Expected:?\ .*\n\s*(?:Received|Actual|got|but\ was):?\x20
    | \bexpected\ .{1,80}\ (?:to\ (?:equal|be|have|contain|match)|but\ (?:got|was|received))
    | \b\d+\ failed\b | \b\d+\ failing\b | \b\d+\ examples?,\ \d+\ failures? | \btests?\ failed\b
    | (?-i:FAILED)\ \S+::\S+ | suite\ result:\ FAILED | test\ result:\ FAILED | (?-i:FAILED)\ \((?:failures|errors)=
    | ---\ FAIL: | ^(?-i:FAIL)\s+\S+ | ^not\ ok\ \d+ | \[FAIL\b | failing\ tests: | failure/error:
    | string\ to\ replace\ not\ found | old_string\ not\ found | found\ \d+\ matches\ of\ the\ string
    | no\ changes\ to\ make | failed\ to\ find\ expected\ lines
"""

_RUNTIME = r"""
      Traceback\ \(most\ recent\ call\ last\) | \bpanic(?:ked)?\b | segmentation\ fault | \bSIGSEGV\b
    | core\ dumped | ^killed\s*$ | ^aborted\b | out\ of\ memory | OOMKilled | no\ such\ file\ or\ directory
    | \bENOENT\b | FileNotFoundError | does\ not\ exist | cannot\ access | command\ timed\ out
    | \b(?:file|directory|path|folder)\ (?:or\ directory\ )?not\ found\b | unable\ to\ access\ (?:jarfile|file)
    | cannot\ find\ module | no\ matches\ found | did\ not\ match\ any | address\ already\ in\ use
    | \bunhandled\b | \buncaught\b | (?-i:\b[A-Z]\w*(?:Error|Exception)\b)
"""


_RULE_SOURCES = (
    ("dependency", _DEPENDENCY),
    ("permission", _PERMISSION),
    ("network", _NETWORK),
    ("config", _CONFIG),
    ("syntax", _SYNTAX),
    ("logic", _LOGIC),
    ("runtime", _RUNTIME),
)


@cache
def _rule(name: str) -> rx.Pattern[str]:
    """The compiled rule of one category; compiled when first reached (they cost ~1 ms each)."""
    source = dict(_RULE_SOURCES)[name]
    if name == "dependency":
        source = source.replace("{not_program}", "|".join(sorted(NOT_PROGRAM_WORDS)))
    return rx.compile(source, rx.VERBOSE | rx.IGNORECASE | rx.MULTILINE)


# `.env:19: command not found: NAME=value` / `bash: NAME=value: command not found`
_assignment_not_found_re = _lazy(
    r"command not found:\s*[\w.-]+=|(?:^|:\s)[\w.-]+=\S*: command not found", rx.IGNORECASE | rx.MULTILINE
)


_index_unreachable_re = _lazy(r"\(from versions: none\)", rx.IGNORECASE)


@cache
def _missing_config_file_re() -> rx.Pattern[str]:
    """A program that could not find its config file (`config.yaml`, `.env`, `app.toml`, …)."""
    name = (
        r"(?:\.env(?:\.[\w-]+)?|[\w.-]*\.(?:ini|cfg|conf|toml|ya?ml)|[\w.-]*config(?:\.[\w-]+)+|"
        r"settings\.\w+|\.\w+rc)"
    )
    missing = r"(?:no such file or directory|ENOENT|not found|does not exist|cannot find|could not find)"
    return rx.compile(
        rf"^(?P<line>.*?(?:(?:^|[\s'\"/:]){name}['\"]?:?\s+(?:open:\s+)?{missing}"
        rf"|{missing}[:,]?\s+(?:open\s+|stat\s+)?['\"]?(?:[^\s'\"]*/)?{name}['\"]?(?:\s|$)))",
        rx.IGNORECASE | rx.MULTILINE,
    )


# When these report the missing file, the agent looked in the wrong place: runtime.
_INSPECTORS = (
    "cat:", "grep:", "rg:", "head:", "tail:", "less:", "more:", "wc:", "ls:", "sed:", "awk:", "file:",
    "stat:", "jq:", "cd:", "cp:", "mv:", "rm:", "diff:", "find:", "source:", "open:",
)


def _missing_config_file(text: str) -> bool:
    for match in _missing_config_file_re().finditer(text):
        reporter = match.group("line").split("line 1: ")[-1].lstrip()
        if not reporter.lower().startswith(_INSPECTORS):
            return True
    return False


def _broken_package_import(text: str, whole: str) -> bool:
    """An ImportError raised from an installed package (site-packages): a dependency problem."""
    return "ImportError" in text and ("site-packages" in whole or "dist-packages" in whole)


def _match_rules(text: str, whole: str) -> str | None:
    """First category whose rule matches text; whole is the full failure text, for context."""
    if not text:
        return None
    if "not found" in text and _assignment_not_found_re().search(text):
        return "syntax"
    from learn_cli.text.keys import path_taken_apart

    if path_taken_apart(text):
        return "syntax"  # a Windows path, unquoted: its backslashes were taken as escapes
    for name, _source in _RULE_SOURCES:
        if name == "config" and _missing_config_file(text):
            return "config"
        if name == "dependency" and _broken_package_import(text, whole):
            return "dependency"
        if _rule(name).search(text):
            unreachable_index = _index_unreachable_re().search(text) and _rule("network").search(whole)
            return "network" if name == "dependency" and unreachable_index else name
    return None


# ---------------------------------------------------------------------------
# Tool and command hints

_FETCH_TOOLS = frozenset({"webfetch", "fetch", "websearch", "googlewebsearch", "webfetchtool"})
_EDIT_TOOLS = frozenset({
    "edit", "multiedit", "write", "notebookedit", "update", "replace", "editfile", "writefile",
    "applypatch", "strreplaceeditor", "strreplacebasededittool", "create", "patch",
})
_READ_TOOLS = frozenset({
    "read", "readfile", "readmanyfiles", "view", "ls", "glob", "grep", "listdirectory",
    "searchfiletext", "search", "find", "notebookread",
})


def _tool_kind(tool: str | None) -> str | None:
    """'fetch' | 'edit' | 'read' for known non-shell tools; None for shells and unknown tools.

    Tolerates display forms such as `Update (Edit)` or `edit (SWE-agent editor)`.
    """
    words = (tool or "").split()
    if not words:
        return None
    name = "".join(ch for ch in words[0].lower() if ch.isalnum())
    if name in _FETCH_TOOLS:
        return "fetch"
    if name in _EDIT_TOOLS:
        return "edit"
    if name in _READ_TOOLS:
        return "read"
    return None


_read_tool_limit_re = _lazy(r"exceeds maximum allowed|too large|too many lines|exceeds .*limit", rx.IGNORECASE)


_TEST_RUNNERS = frozenset({
    "pytest", "py.test", "jest", "vitest", "mocha", "ava", "tap", "rspec", "phpunit", "tox", "nox",
    "karma", "jasmine", "playwright", "cypress", "ctest", "nosetests", "unittest", "behave", "bats",
})
_TEST_SUBCOMMANDS = frozenset({"test", "tests"})
_STATIC_CHECKERS = frozenset({
    "eslint", "tsc", "vue-tsc", "mypy", "pyright", "ruff", "flake8", "pylint", "black", "isort",
    "prettier", "rubocop", "golangci-lint", "shellcheck", "biome", "stylelint", "clippy-driver",
    "gcc", "g++", "clang", "clang++", "cc", "c++", "javac", "rustc", "kotlinc", "swiftc",
})
_BUILD_SUBCOMMANDS = frozenset({
    "build", "compile", "check", "lint", "typecheck", "type-check", "tsc", "vet", "clippy", "fmt",
})
_INSTALL_SUBCOMMANDS = frozenset({"install", "i", "add", "ci", "sync", "get", "update", "upgrade", "download"})
_INSTALLERS = frozenset({
    "pip", "pipx", "npm", "yarn", "pnpm", "bun", "cargo", "go", "poetry", "uv", "bundle", "gem",
    "apt", "apt-get", "brew", "conda", "mamba", "composer", "dnf", "yum", "apk", "pacman",
})
_NETWORK_PROGRAMS = frozenset({
    "curl", "wget", "ssh", "scp", "sftp", "ping", "nc", "netcat", "dig", "nslookup", "telnet", "http", "https",
})


_testish_re = _lazy(r"(?:^|[_\-./:])(?:tests?|spec|e2e)(?:[_\-.:]|$)", rx.IGNORECASE)


def _command_hint(command: str, code: int | None = None) -> str | None:
    """Category implied by what the command runs, for failures whose text says nothing.

    code is the exit code when known: pytest's 4 (usage error) is config, 5 (no tests
    collected) runtime; only its 1 means that tests failed.
    """
    from learn_cli.text.shell import program, unwrap

    command = " ".join(command.split())  # exports wrap long commands onto several lines
    prog = program(command)
    if not prog:
        return None
    words = [t.lower() for t in unwrap(command)[1:] if not t.startswith("-")][:3]
    if prog in ("npm", "yarn", "pnpm", "bun") and words[:1] == ["run"]:
        words = words[1:]  # `npm run test:unit` is about test:unit
    first = words[0] if words else ""
    if prog == "pytest" and code in (4, 5):
        return "config" if code == 4 else "runtime"
    testish = _testish_re()
    if prog in _TEST_RUNNERS or first in _TEST_SUBCOMMANDS or testish.search(prog) or testish.search(first):
        return "logic"
    if prog in _STATIC_CHECKERS or first in _BUILD_SUBCOMMANDS:
        return "syntax"
    if prog in _INSTALLERS and first in _INSTALL_SUBCOMMANDS:
        return "dependency"
    if prog in _NETWORK_PROGRAMS:
        return "network"
    return None


# ---------------------------------------------------------------------------


def _scan_window(text: str) -> str:
    if len(text) <= _SCAN_HEAD + _SCAN_TAIL:
        return text
    return text[:_SCAN_HEAD] + "\n" + text[-_SCAN_TAIL:]


def categorize(error_text: str | None, command: str | None = None, tool: str | None = None) -> str:
    """One of CATEGORIES for a failure, by the ordered rules in the module docstring.

    command is the shell command for shell tools (used only when the text decides nothing);
    tool is the agent's tool name (Bash, Read, Edit, WebFetch, …), None for shell.
    """
    text = _scan_window(strip_ansi(error_text or ""))
    kind = _tool_kind(tool)
    if kind == "fetch":
        return "network"
    if kind == "read" and _read_tool_limit_re().search(text):
        return "config"
    focus = meaningful_lines(text, max_lines=8, max_chars=2000)
    for body in (focus, text):
        hit = _match_rules(body, text)
        if hit:
            return hit
    if kind:
        return "runtime"
    code = parse_exit_code(text)
    if code == 127:
        return "dependency"
    if code == 126:
        return "permission"
    if command:
        hint = _command_hint(command, code)
        if hint:
            return hint
    return "runtime"
