"""Dedup keys: what stays the same when the same problem happens again (SPEC §2.2).

Stdlib only and cheap to import (hot path); regexes are compiled on first use.

error_signature(text) is the normalised, human-readable essence of a failure, built from its
meaningful lines (learn_cli.text.failure.meaningful_lines, i.e. from what a learning's
`error` field stores, so a key can be recomputed from a stored record):

- well-known failures get a canonical form whatever the shell or the path:
  `command not found: pytest`, `modulenotfounderror: no module named 'jose'`,
  `cannot find module 'express'` (tsc: `error ts2307: cannot find module 'express'`),
  `no such file or directory: app.py` (`cd: no such …` for cd),
  `permission denied: /var/run/docker.sock`, `npm: package not found: left-padd`,
  `cargo: unknown option --relase`, `python train.py: unknown option --lr`;
- else the last Python-style exception line when it names a subject (`keyerror: 'database_url'`);
- else up to three normalised error lines joined by ` | `.
Normalising removes what varies between occurrences: ANSI, diagnostic locations
(`src/a.ts(3,5):`, `main.c:5:5:`), line/column numbers, absolute paths (a file keeps its
basename, a directory becomes `<path>`; system paths such as /var/run/docker.sock are kept
when they are the subject), home folders and the user's name, temp names (`<tmp>`), hex
addresses and hashes (`<hex>`), e-mail and user@host addresses (`<email>`), timestamps
(`<time>`), durations (`<dur>`), PIDs (`<pid>`), versions (`<ver>`, kept on lines about
version resolution, where they are the point), long numbers (`<n>`); quotes become `'`; lower
case; whitespace collapsed.

error_key(text, command, tool) = `err:` + 16 hex of sha1 of the key material:
- shell failures with a *specific* signature (a canonical form above, or any signature with
  at least two informative words once generic ones such as error/failed/exit/code/killed/
  segmentation fault are set aside): the signature alone. The key is the error, not the
  command (SPEC §2.4): `No module named 'jose'` from two projects is one learning.
- shell failures with a *generic* signature (empty, `exit code 1`, `1 failed, 3 passed`,
  `npm err! code 1`, `segmentation fault`) or one whose path was shaped away: the signature
  plus the program and its subcommand or script (`pytest`, `npm run build`, `python
  train.py`), so unrelated generic failures do not merge while the same one of the same
  command does. In a chain (`a && b && c`) that is the step the error's line names (`failed
  to push` → `git push`), else the first working step.
- non-shell tools (Read, Edit, Write, WebFetch, …; pass the path or URL as `command`): the
  tool's message is boilerplate, so the tool name and the target's last two path components
  (or the URL's host) are always folded in. Two projects' `src/config.ts` still meet; a
  basename alone would merge unrelated files (Headroom's mistake).

text_key(text) = `txt:` + 16 hex of free text lower-cased, apostrophes dropped, split on
anything not a letter or digit, stop words removed, order kept (negations are not stop
words: "never use npm" and "use npm" stay apart).
"""

from __future__ import annotations

import os

from learn_cli.text import rx
from learn_cli.text.lite import cache
from learn_cli.text.sanitize import normalize_path, shorten_paths  # re-exported: one home each

__all__ = [
    "COMMAND_NOT_FOUND",
    "PATH_TAKEN_APART",
    "path_taken_apart",
    "without_listen_host",
    "missing_program",
    "rejects_option",
    "failing_step",
    "error_signature",
    "names_what_is_wrong",
    "error_key",
    "text_key",
    "tokens",
    "shorten_paths",
    "normalize_path",
    "is_generic_signature",
    "is_subject_word",
]

_SIGNATURE_CAP = 300
_SIGNATURE_LINES = 3

# Words that say only that something failed; a signature made of these is generic.
_GENERIC_WORDS = frozenset("""
    error errors err fail failed fails failing failure failures fatal exit exited code codes status
    with process returned return non zero nonzero npm yarn pnpm elifecycle errno
    make gmake stop test tests passed pass in of and the an to for see above below log logs details
    more information info run running script segmentation fault core dumped killed aborted abort
    terminated signal sigsegv sigkill sigabrt sigterm traceback most recent call last warning
    warnings timeout timed out build exception assertionerror assert assertion unknown something
    went wrong occurred unexpected at on is was be by this that it no not true false none null
    total ok done found did exception uncaught unhandled problem problems such file files directory
    directories or
""".split())

_STOP_WORDS = frozenset("""
    a an the to of in on at for with and or is are be by as this that it its please just also
    you your i we our my me so then than there here when while if into from
""".split())

_SHELL_TOOLS = frozenset({
    "", "bash", "shell", "sh", "zsh", "exec", "execcommand", "runshellcommand", "powershell",
    "localshell", "terminal", "runterminalcmd", "command", "mswebashcommand",
})

# Launchers whose first two words name the task (`npm run build`, `pnpm exec vitest`).
_RUNNERS = frozenset({"npm", "yarn", "pnpm", "bun", "deno", "make", "just", "task", "poe", "invoke"})
_RUN_WORDS = frozenset({"run", "exec", "x", "dlx", "workspace"})

# Words that end up before ": No such file or directory" without being the missing path.
_NOT_PATH_WORDS = frozenset({"failed", "error", "fatal", "open", "stat", "lstat", "access", "mkdir", "read", "connect"})

# System locations whose paths are the subject, not noise (`/var/run/docker.sock`).
_SYSTEM_ROOTS = (
    "/usr/", "/var/", "/etc/", "/opt/", "/dev/", "/run/", "/proc/", "/sys/", "/bin/", "/sbin/",
    "/lib/", "/lib64/", "/Library/", "/System/",
)
_TEMP_ROOTS = ("/tmp/", "/private/tmp/", "/var/folders/", "/private/var/folders/", "/var/tmp/", "/dev/shm/")


# What every error key starts with (a text key has another prefix): how the index and a prune
# tell the learnings a failure can find.
ERROR_KEY = "err:"


def _sha16(material: str) -> str:
    from learn_cli.text.hashes import sha1_hex

    return sha1_hex(material.encode("utf-8", "surrogatepass"))[:16]


# ---------------------------------------------------------------------------
# Canonical forms of well-known failures


@cache
def _not_found_command_res() -> tuple[rx.Pattern[str], ...]:
    flags = rx.IGNORECASE | rx.MULTILINE
    return (
        rx.compile(r"command not found:\s*(['\"]?)(?P<name>[^\s'\"]+)\1", flags),  # zsh, (eval)
        rx.compile(r"(?:^|[:\s])(?P<name>[^\s:'\"]+):\s*command not found", flags),  # bash
        rx.compile(r"^(?:[^\s:]+:\s*)?(?:line\s+)?(?:\d+:\s*)?(?P<name>[^\s:'\"]+):\s*not found\s*$", flags),  # dash
        rx.compile(r"['\"](?P<name>[^'\"]+)['\"] is not recognized as an internal or external command", flags),
        rx.compile(r"the term ['\"](?P<name>[^'\"]+)['\"] is not recognized as the name of a cmdlet", flags),
        rx.compile(r"^which: no (?P<name>\S+) in \(", flags),
        rx.compile(r"^(?P<name>[\w.+-]+) not found\s*$", flags),  # zsh `which x`
        rx.compile(r"^env: ['\"]?(?P<name>[^'\":\s]+)['\"]?: no such file or directory", flags),
        # make could not run a recipe's program (`make: g++: No such file or directory`, Error 127)
        rx.compile(r"^make(?:\[\d+\])?: (?P<name>[^\s:/'\"]+): no such file or directory\s*$", flags),
    )


# Git Bash on Windows reads a bare `C:\xampp\bin\mysql.exe` as escapes and runs `C:xamppbinmysql.exe`:
# "C:xamppbinmysql.exe: command not found", "cd: D:projapi: No such file or directory". A drive
# letter glued to a name without one separator is that shape (`C:/x` and `C:\x` are not).
PATH_TAKEN_APART = "a windows path unquoted: the shell took its backslashes"


@cache
def _taken_apart_re() -> rx.Pattern[str]:
    name = r"[A-Za-z]:[^\s:/\\'\"]+"
    return rx.compile(rf"(?:^|[\s:]){name}: *(?:command not found|no such file or directory)"
                      rf"|command not found: *{name}\s*$", rx.IGNORECASE | rx.MULTILINE)


def path_taken_apart(text: str) -> bool:
    """Does the error show a Windows path the shell took the backslashes of (PATH_TAKEN_APART)?"""
    lower = text.lower()
    return ":" in text and ("not found" in lower or "no such file" in lower) and bool(_taken_apart_re().search(text))


@cache
def _module_res() -> tuple[rx.Pattern[str], rx.Pattern[str]]:
    return (
        rx.compile(r"no module named ['\"]?(?P<name>[\w.]+)['\"]?", rx.IGNORECASE),
        # node's CommonJS `Cannot find module 'x'`, and ESM's `Cannot find package 'x' imported from …`
        rx.compile(r"cannot find (?:module|package) ['\"](?P<name>[^'\"]+)['\"]", rx.IGNORECASE),
    )


@cache
def _missing_file_res() -> tuple[rx.Pattern[str], ...]:
    flags = rx.IGNORECASE | rx.MULTILINE
    return (
        # C/C++ includes: the include name is the point, kept whole
        rx.compile(r"fatal error:\s*(?P<header>[^\s:]+):\s*no such file or directory", flags),
        # python: can't open file '/x/app.py': [Errno 2] …
        rx.compile(r"can't open file ['\"](?P<name>[^'\"]+)['\"]", flags),
        # FileNotFoundError: [Errno 2] No such file or directory: 'data.csv'
        rx.compile(r"no such file or directory:\s*['\"](?P<name>[^'\"]+)['\"]", flags),
        # node: ENOENT: no such file or directory, open '/x/y.json'
        rx.compile(r"no such file or directory,\s*\w+\s+['\"](?P<name>[^'\"]+)['\"]", flags),
        # zsh: (eval):cd:1: no such file or directory: build
        rx.compile(r"no such file or directory:\s*(?P<name>[^\s'\"]+)\s*$", flags),
        # GNU sed's "can't read X: …", head's and tail's "cannot open 'X' for reading: …"
        rx.compile(r"(?:can't read|cannot open)\s+['\"]?(?P<name>[^\s'\":]+)['\"]?(?:\s+for reading)?:\s+"
                   r"no such file or directory", flags),
        # cat: x: No such file…, /bin/bash: line 1: cd: build: No such file…, ls: cannot access 'x': …
        rx.compile(
            r"(?:^|[:\s'\"])(?P<name>[^:'\"\s][^:'\"\n]*?)['\"]?:\s+(?:open:\s+)?no such file or directory", flags
        ),
    )


@cache
def _push_rejected_re() -> rx.Pattern[str]:
    # ` ! [rejected]        main -> main (fetch first)`, `! [remote rejected] … (protected branch hook declined)`
    return rx.compile(r"!\s*\[(?:remote )?rejected\][^(\n]*\((?P<why>[^)\n]{1,60})\)")


@cache
def _permission_res() -> tuple[rx.Pattern[str], ...]:
    flags = rx.IGNORECASE | rx.MULTILINE
    return (
        rx.compile(r"permission denied (?P<how>\([\w,-]+\))", flags),  # ssh: (publickey)
        rx.compile(r"permission denied for (?P<object>\w+ [\w.\"]+)", flags),  # postgres
        rx.compile(r"permission denied:\s*['\"](?P<path>[^'\"]+)['\"]", flags),  # python
        rx.compile(
            r"(?:permission denied|operation not permitted),\s*\w+\s+['\"](?P<path>[^'\"]+)['\"]", flags
        ),  # node
        rx.compile(r"(?:docker daemon socket at\s+|dial unix\s+)(?:unix://)?(?P<path>/[^\s:]+)", flags),
        rx.compile(r"['\"](?P<path>[^'\"]+)['\"]:\s*(?:permission denied|operation not permitted)", flags),
        rx.compile(r"(?:^|[:\s])(?P<path>[^\s:'\"]+):\s*(?:permission denied|operation not permitted)\s*$", flags),
        rx.compile(r"(?:permission denied|operation not permitted):\s*(?P<path>[^\s'\"]+)\s*$", flags),  # zsh
    )


@cache
def _option_re() -> rx.Pattern[str]:
    return rx.compile(
        r"(?:unrecogni[sz]ed arguments?|unknown option|unrecogni[sz]ed option|unknown (?:shorthand )?flag|"
        r"no such option|unexpected argument|unknown argument|invalid option|illegal option)"
        r"[:\s]+(?:--\s+)?[`'\"‘]?(?P<opt>-{0,2}[\w][\w.=/-]*)",
        rx.IGNORECASE,
    )


@cache
def _getopt_re() -> rx.Pattern[str]:
    """A C program's getopt complaint: `<prog>: illegal option -- r` (BSD), `<prog>: invalid
    option -- 'w'` (GNU): the program is named, the option is a letter."""
    return rx.compile(r"(?:[\w./-]*/)?(?P<prog>[\w.+-]+): (?:illegal|invalid) option -- '?\w", rx.IGNORECASE)


@cache
def _npm_missing_package_res() -> tuple[rx.Pattern[str], ...]:
    return (
        rx.compile(r"['\"](?P<name>@?[^'\"@\s]+)@[^'\"\s]*['\"] is not in (?:this|the npm) registry", rx.IGNORECASE),
        rx.compile(r"404\s+not found\s*-\s*get\s+https?://registry\.npmjs\.org/(?P<name>\S+?)(?:\s|$)", rx.IGNORECASE),
    )


def _not_program_words() -> frozenset[str]:
    from learn_cli.text.failure import NOT_PROGRAM_WORDS

    return NOT_PROGRAM_WORDS


def _subject_path(raw: str) -> str:
    """The subject of a file error: its basename, or a system path kept whole."""
    path = raw.strip().strip("'\"`").rstrip("/")
    if path.startswith(_SYSTEM_ROOTS) and not path.startswith(_TEMP_ROOTS):
        return path
    cut = max(path.rfind("/"), path.rfind("\\"))
    return path[cut + 1 :] if cut >= 0 else path


def _canonical(text: str, scope: str) -> str | None:
    """The canonical signature of a well-known failure in text, else None.

    scope names what rejected an unknown option (`cargo`, `python train.py`); may be ''.
    """
    lower = text.lower()
    if path_taken_apart(text):
        return PATH_TAKEN_APART  # whichever path, program or folder: the lesson is the quoting
    if "not found" in lower or "not recognized" in lower or "which: no" in lower or "env: " in lower or (
            "make" in lower and "no such file" in lower):
        for pattern in _not_found_command_res():
            for match in pattern.finditer(text):
                name = _subject_path(match.group("name")).lower()
                if name and name not in _not_program_words():
                    return COMMAND_NOT_FOUND + _scrub(name)
    if "module" in lower or "package" in lower:  # (bun's and node's ESM: "Cannot find package 'zod'")
        python_module, node_module = _module_res()
        match = python_module.search(text)
        if match:
            return f"modulenotfounderror: no module named '{match.group('name').lower()}'"
        match = node_module.search(text)
        if match:
            # tsc's TS2307 is not node's runtime error: its fix is often a types package
            line_start = text.rfind("\n", 0, match.start()) + 1
            prefix = "error ts2307: " if "ts2307" in text[line_start : match.start()].lower() else ""
            name = match.group("name")
            if not prefix and (name.startswith(("/", "./", "../")) or rx.match(r"[A-Za-z]:\\", name)):
                # a file by its path, no package to install: whichever file, what is missing is
                # the folder's (`dist/` not built yet, for `npm start` and `node dist/cli.js` alike)
                folder = _subject_path(name.replace("\\", "/").rstrip("/").rsplit("/", 1)[0])
                return f"error: cannot find module '<file>' in {folder.lower()}/"
            return f"{prefix}cannot find module '{_subject_path(name).lower()}'"
    if "registry" in lower:
        for pattern in _npm_missing_package_res():
            match = pattern.search(text)
            if match:
                name = match.group("name").replace("%2f", "/").replace("%2F", "/")
                return f"npm: package not found: {name.lower()}"
    if "no such file or directory" in lower:
        found = _missing_file(text)
        if found:
            return found
    if "permission denied" in lower or "operation not permitted" in lower:
        found = _permission(text)
        if found:
            return found
    if "failed to push" in lower:
        match = _push_rejected_re().search(text)
        if match:  # the reason says which fix: pull first, rebase, or a pull request
            return f"error: failed to push some refs ({' '.join(match.group('why').lower().split())})"
    if any(w in lower for w in _FORMAT_WORDS) and _unformatted_re().search(text):
        return f"{scope or 'formatter'}: {UNFORMATTED}"  # whichever files and lines: the code not formatted
    match = _option_re().search(text)
    if match:
        option = match.group("opt").split("=", 1)[0].lower()
        getopt = _getopt_re().match(text, text.rfind("\n", 0, match.start()) + 1)
        if getopt and getopt.end() >= match.end("opt"):  # `xargs: illegal option -- r`: getopt's
            scope, option = getopt.group("prog").lower(), "-" + option.lstrip("-")  # words, in a pipeline too
        what = "unknown option" if option.startswith("-") else "unexpected argument"
        return f"{scope}: {what} {option}" if scope else f"{what} {option}"
    return None


UNFORMATTED = "files not formatted"  # the signature's end when a formatter's check failed
_FORMAT_WORDS = ("reformat", "code style", "diff in ", "incorrectly sorted", "formatted", "formatting")


@cache
def _unformatted_re() -> rx.Pattern[str]:
    """What a formatter run as a check says when files are not formatted as it would: black's
    and ruff's "would reformat", prettier's "Code style issues found", rustfmt's "Diff in
    src/a.rs at line 3:", isort's "Imports are incorrectly sorted", clang-format's "code should
    be clang-formatted", deno's "not formatted file", biome's "differs from formatting output",
    mix's "--check-formatted"."""
    return rx.compile(r"^would reformat |code style issues found|^diff in \S+(?: at line \d+|:\d+):|imports are "
                      r"incorrectly sorted|code should be clang-formatted|\bnot formatted files?\b|differs from "
                      r"formatting output|failed due to --check-formatted", rx.I | rx.M)


def _missing_file(text: str) -> str | None:
    for pattern in _missing_file_res():
        for match in pattern.finditer(text):
            groups = match.groupdict()
            if groups.get("header"):
                return f"fatal error: {groups['header'].lower()}: no such file or directory"
            name = _cannot_prefix_re().sub("", groups["name"].strip())
            if not name or any(ch.isspace() for ch in name) or name.lower() in _NOT_PATH_WORDS:
                continue  # prose ("cannot open shared object file", "… failed: No such file"), not a path
            line_start = text.rfind("\n", 0, match.start("name")) + 1
            cd = _cd_re().search(text[line_start : match.start("name")]) is not None
            return ("cd: " if cd else "") + "no such file or directory: " + _scrub(_subject_path(name).lower())
    return None


@cache
def _cannot_prefix_re() -> rx.Pattern[str]:
    return rx.compile(r"^(?:cannot access|cannot open|can't open|cannot stat)\s+['\"]?", rx.IGNORECASE)


@cache
def _cd_re() -> rx.Pattern[str]:
    return rx.compile(r"(?:^|[\s:])cd(?::\d+)?:", rx.IGNORECASE)


def _permission(text: str) -> str | None:
    for pattern in _permission_res():
        match = pattern.search(text)
        if not match:
            continue
        groups = match.groupdict()
        if groups.get("how"):
            return "permission denied " + groups["how"].lower()
        if groups.get("object"):
            return "permission denied for " + groups["object"].lower().replace('"', "'")
        kind = "operation not permitted" if "not permitted" in match.group(0).lower() else "permission denied"
        subject = _scrub(_subject_path(groups["path"]).lower())
        if subject:
            return f"{kind}: {subject}"
    return None


def _scrub(subject: str) -> str:
    """Variable parts of a canonical subject (temp names, hashes, long numbers) replaced."""
    res = _norm_res()
    for name, repl in (("uuid", "<hex>"), ("hex", "<hex>"), ("tmpname", "<tmp>"), ("bignum", "<n>")):
        subject = res[name].sub(repl, subject)
    return subject


# ---------------------------------------------------------------------------
# Line normalisation


@cache
def _norm_res() -> dict[str, rx.Pattern[str]]:
    return {
        "quotes": rx.compile(r"[‘’‚‛“”„‟`´\"]"),
        "pytest_e": rx.compile(r"^E\s+"),
        # `src/a.ts(3,5): `, `main.c:5:5: `, `Makefile:12: ` (a name with a letter, not a clock)
        "location": rx.compile(r"^(?:[^\s:()]*[A-Za-z][^\s:()]*?(?:\(\d+,\d+\)|(?::\d+){1,3})):\s*"),
        "url": rx.compile(
            r"\b([a-z][a-z0-9+.-]*://)(?:[^/\s@'\"]+@)?([^/\s'\"?#]+)([^\s'\"?#]*)(?:[?#][^\s'\"]*)?", rx.I
        ),
        "winpath": rx.compile(r"\b[A-Za-z]:\\(?:[^\s'\"\\:*?<>|]+\\)*[^\s'\"\\:*?<>|]*"),
        "tildepath": rx.compile(r"(?<![\w.])~[\w.-]*/[^\s'\":,;()\[\]<>|]*"),
        "abspath": rx.compile(r"(?<![\w.:/~<>-])/(?!/)[^\s'\":,;()\[\]<>|*?]+"),
        "filepos": rx.compile(r"(\.[A-Za-z]\w{0,9})(?::\d+)+\b"),
        "line_col": rx.compile(r"\b(line|column|col|char|position|pos|offset)\s+\d+", rx.I),
        "uuid": rx.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", rx.I),
        "hex": rx.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", rx.I),
        "iso_time": rx.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}[:_]\d{2}(?:[:_]\d{2}(?:[.,_]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        ),
        "clock": rx.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"),
        "duration": rx.compile(
            r"\b\d+m\s?\d+(?:\.\d+)?s\b|\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?)\b",
            rx.I,
        ),
        "pid": rx.compile(r"\((\w+):\d+\)|\b(pid|process)\s*[=:#]?\s*\d+|\b([a-z][\w.-]*)\[\d+\]", rx.I),
        "version": rx.compile(
            r"(?<![\w.])(?!\d{1,3}(?:\.\d{1,3}){3}\b)v?\d+\.\d+\.\d+(?:[-+.][0-9a-z]+)*\b|(?<![\w.])v\d+\.\d+\b", rx.I
        ),
        "version_line": rx.compile(r"version|satisf|requir|matching|conflict|incompatib|notarget|resolv|peer", rx.I),
        "ipv4": rx.compile(r"\b(?!127\.0\.0\.1\b)\d{1,3}(?:\.\d{1,3}){3}\b"),
        # an address, user@host (`got 'root@box.(none)'`, `git@github.com`): whose, not what failed;
        # the host starts with a letter and has a dot, so `express@4.18.2` and `vite@latest` stay
        "email": rx.compile(r"(?<![\w.@/-])[\w.+-]*[A-Za-z][\w.+-]*@[A-Za-z][\w-]*(?:\.[\w()-]+)+"),
        # tempfile names (`tmpa8x2k_q1`; not `tmp_path`), snapshot names (`snapshot-bash-17-2jwngj.sh`)
        "tmpname": rx.compile(r"\btmp(?=[\w-]*\d)[\w-]{4,}|\b[\w-]*-[a-z0-9]{6,}\.(?:sh|tmp)\b", rx.I),
        "bignum": rx.compile(r"(?<![\w.<])\d{5,}\b"),
        # the branch or ref a git message is about: `the current branch feat/x has no upstream
        # branch` is one error on every branch (the fix, `git push -u origin HEAD`, names none)
        "gitref": rx.compile(
            r"(\b(?:current branch|src refspec|remote ref|invalid reference:|not a valid (?:branch|object|ref)"
            r" name:?|a branch named|your branch is (?:ahead of|behind|up to date with)|your branch and)\s+)"
            r"'?[^\s']+'?", rx.I),
        # a count of things (`found 2 errors (2 fixed, 0 remaining)`, `3 failed, 1 passed`,
        # `ahead of 'origin/main' by 1 commit`): the same failure with another count
        "count": rx.compile(r"(?<![\w.:])\d+ (errors?|warnings?|failed|failures?|failing|passed|passing|fixed|"
                            r"remaining|tests?|files?|problems?|issues?|skipped|deselected|modules?|packages?|"
                            r"vulnerabilit(?:y|ies)|commits?|lines?|changes?|insertions?|deletions?|hooks?)\b", rx.I),
        # zsh's glob that matched nothing (`pip install x[all]`, `find . -name *.py`): the word
        # varies, the lesson (quote it) does not
        "noglob": rx.compile(r"\b(no matches found:\s+)\S+", rx.I),
        # the port a server could not bind (`address already in use :::3000`, docker's `bind for
        # 0.0.0.0:5432 failed: port is already allocated`): freeing it or another port is the
        # lesson, whichever port (a step naming it is read for this one: lesson.step_for_error)
        "inuse": rx.compile(r"(address already in use\s+|bind for\s+|bind on address \(.*?, )(\d{2,5})\b", rx.I),
        # the character a console's codec could not print (Python on Windows, `print("✅ done")`
        # under cp1252): the codec's limit is the failure (and `PYTHONIOENCODING=utf-8` the fix
        # for every character), not which emoji met it
        "codec": rx.compile(r"(codec can't encode characters?\s+)'[^']{1,12}'", rx.I),
        "space": rx.compile(r"\s+"),
    }


@cache
def _user_re() -> rx.Pattern[str] | None:
    names = {os.environ.get(var, "") for var in ("USER", "USERNAME", "LOGNAME")}
    names = {n for n in names if len(n) >= 3 and n.lower() not in {"root", "user", "admin", "runner"}}
    if not names:
        return None
    return rx.compile(r"\b(?:" + "|".join(rx.escape(n) for n in sorted(names)) + r")\b", rx.IGNORECASE)


def _replace_path(match: rx.Match[str]) -> str:
    path = match.group(0).rstrip(".")
    tail = match.group(0)[len(path) :]
    if path.startswith(_TEMP_ROOTS) or path in ("/tmp", "/private/tmp"):
        return "<tmp>" + tail
    base = rx.split(r"[\\/]", path.rstrip("/\\"))[-1]
    if "." in base.strip(".") or base.startswith("."):
        return base + tail
    return "<path>" + tail


def _first_group(match) -> str:
    return match.group(1)


def _normalize_line(line: str) -> str:
    res = _norm_res()
    s = res["quotes"].sub("'", line.strip())
    s = res["pytest_e"].sub("", s)
    s = res["iso_time"].sub("<time>", s)
    s = res["clock"].sub("<time>", s)
    s = res["location"].sub("", s)
    s = res["url"].sub(_normalized_url, s)
    s = res["winpath"].sub(_replace_path, s)
    s = res["tildepath"].sub(_replace_path, s)
    s = res["abspath"].sub(_replace_path, s)
    # a function, not the template r"\1": `_sre` hands a template holding a backslash to
    # `re._compile_template`, importing `re` (with `enum`: ~13 M instructions) into the hook
    s = res["filepos"].sub(_first_group, s)
    s = res["line_col"].sub(lambda m: m.group(1) + " <n>", s)
    s = res["uuid"].sub("<hex>", s)
    s = res["hex"].sub("<hex>", s)
    s = res["duration"].sub("<dur>", s)
    s = res["pid"].sub(_replace_pid, s)
    s = res["ipv4"].sub("<ip>", s)
    if not res["version_line"].search(s):
        s = res["version"].sub("<ver>", s)
    s = res["tmpname"].sub("<tmp>", s)
    if "@" in s:
        s = res["email"].sub("<email>", s)
    user = _user_re()
    if user is not None:
        s = user.sub("<user>", s)
    s = res["bignum"].sub("<n>", s)
    lowered = s.lower()  # (the hooks normalise every error line: ask only where these can match)
    if "branch" in lowered or "ref" in lowered or "object name" in lowered:
        s = res["gitref"].sub(_masked_ref, s)
    s = res["count"].sub(_masked_count, s)
    if "no matches" in lowered:
        s = res["noglob"].sub(_masked_glob, s)
    if "codec can't encode" in lowered:
        s = res["codec"].sub(_masked_character, s)
    if says_port_taken(lowered):
        s = res["inuse"].sub(_masked_port, without_listen_host(s))
    s = res["space"].sub(" ", s).strip().lower()
    return s.rstrip(" .:;,")


def _normalized_url(match: rx.Match[str]) -> str:
    """Scheme and host lower-cased, the query dropped, and a number that is a whole part of
    the path masked (`…/pull/12`: a pull request, an issue, a build: another one next time)."""
    path = "/".join("<n>" if part.isdigit() else part for part in match.group(3).split("/"))
    return match.group(1).lower() + match.group(2).lower() + path


def _masked_ref(match: rx.Match[str]) -> str:
    return match.group(1) + "<ref>"


def _masked_count(match: rx.Match[str]) -> str:
    """`2 errors` and `1 error` alike: `<n> error`."""
    noun = match.group(1)
    if noun.lower().endswith("ies"):
        noun = noun[:-3] + "y"
    elif noun.endswith("s"):
        noun = noun[:-1]
    return "<n> " + noun


def _masked_glob(match: rx.Match[str]) -> str:
    return match.group(1) + "<glob>"


def _masked_character(match: rx.Match[str]) -> str:
    return match.group(1) + "<char>"


@cache
def _listen_host_re() -> rx.Pattern[str]:
    return rx.compile(r"(address already in use\s+|bind for\s+)\S*?:(?=\d{2,5}\b)", rx.I)


def says_port_taken(lowered: str) -> bool:
    """Does this error (in lower case) say a server could not listen on its port ("address
    already in use", node's EADDRINUSE, docker's "port is already allocated")?"""
    return "already in use" in lowered or "already allocated" in lowered or "eaddrinuse" in lowered


def without_listen_host(text: str) -> str:
    """The error with the host of the address a server could not listen on left out: `address
    already in use 127.0.0.1:8080` and `:::3000` (node, IPv6) are one failure, port aside."""
    return _listen_host_re().sub(r"\1", text) if "already" in text.lower() else text


def _masked_port(match: rx.Match[str]) -> str:
    return match.group(1) + "<port>"


def _replace_pid(match: rx.Match[str]) -> str:
    if match.group(1):
        return f"({match.group(1)}:<pid>)"
    if match.group(2):
        return f"{match.group(2)} <pid>"
    return f"{match.group(3)}[<pid>]"


@cache
def _warning_re() -> rx.Pattern[str]:
    # `warning: unused …`, `warning[E0599]:`, `WARN …`, `npm WARN`, `zopfli@0.1.0: warning:`,
    # build progress (`Compiling x v0.1.0`, `Finished …`), and a diagnostic's continuation lines
    # (`--> src/a.rs:3:9`, `= note: …`, `| code`, `457 |     code`): what precedes the error, not the error
    return rx.compile(r"^(?:(?:[\w.@/+-]+:\s*)?(?:npm\s+)?(?:warning|warn)\b|(?:Compiling|Checking|Finished|"
                      r"Running|Downloading|Downloaded|Updating|Blocking|Fresh|Locking|Building)\s|-->|="
                      r"\s*(?:note|help)\b|\||\d+\s+\|)", rx.IGNORECASE)


@cache
def _exception_line_re() -> rx.Pattern[str]:
    return rx.compile(r"^(?:E\s+)?(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit)\b(?:\s*\[\w+\])?:\s*\S")


# ---------------------------------------------------------------------------
# Signature and keys


def _signature(error_text: str | None, scope: str) -> tuple[str, bool]:
    """(signature, is it specific?) of a failure text; scope as for _canonical."""
    from learn_cli.text.failure import is_boilerplate, meaningful_lines

    text = meaningful_lines(error_text or "")
    if not text:
        return "", False
    canonical = _canonical(text, scope)
    if canonical:
        return canonical, True
    lines = [line for line in text.splitlines() if not _warning_re().match(line)]
    if not lines:  # only warnings were shown (the error itself cut off): they say nothing of it
        return "", False
    exceptions = [line for line in lines if _exception_line_re().match(line)]
    if exceptions:
        last = _normalize_line(exceptions[-1])
        if not is_generic_signature(last):
            return last, True
    parts: list[str] = []
    for line in lines:
        if is_boilerplate(line):
            continue
        norm = _normalize_line(line)
        if norm and norm not in parts:
            parts.append(norm)
        if len(parts) == _SIGNATURE_LINES:
            break
    if not parts:  # only boilerplate: keep the first line rather than nothing
        parts = [_normalize_line(lines[0])]
    signature = " | ".join(parts)[:_SIGNATURE_CAP].rstrip()
    return signature, not is_generic_signature(signature)


def is_subject_word(word: str) -> bool:
    """A word that may name what a failure is about (`pytest`, `stdio`): neither a word that says
    that one happened nor a stop word. (is_generic_signature counts stop words: its two words are
    the key's rule, kept as keys were made.)"""
    return word not in _GENERIC_WORDS and word not in _STOP_WORDS


def is_generic_signature(signature: str) -> bool:
    """True when a signature says only that something failed (fewer than two informative words)."""
    words = rx.findall(r"[a-z][a-z0-9]+", rx.sub(r"<\w+>", " ", signature.lower()))
    informative = {w for w in words if w not in _GENERIC_WORDS}
    return len(informative) < 2


COMMAND_NOT_FOUND = "command not found: "  # the signature of a program that is not installed


def missing_program(error_text: str | None) -> str:
    """The program an error says is not installed (`zsh:1: command not found: timeout`, `bash:
    sha256sum: command not found`), lower-cased, else "". Its signature is worked out only when
    the text can say so."""
    lower = (error_text or "").lower()
    if "not found" not in lower and "not recognized" not in lower:
        return ""
    signature = error_signature(error_text)
    return signature[len(COMMAND_NOT_FOUND):] if signature.startswith(COMMAND_NOT_FOUND) else ""


def dropped_missing_program(failed: str, fix: str, error: str | None) -> str:
    """The program (canonical) the error says is not installed, when `failed` ran it and `fix`
    no longer does (`head f | jq .` -> `head f`, "jq: command not found"); else ""."""
    if not error or "not" not in error:
        return ""
    from learn_cli.text.shell import canonical_program, command_programs

    missing = missing_program(error)
    name = canonical_program(missing) if missing else ""
    return name if name and name in command_programs(failed) and name not in command_programs(fix) else ""


# Usage errors that reject an option (GNU and BSD tools, find's "primary", Go's cobra): BSD's
# `stat -c %s f` says "illegal option -- c". (Not clap's "unexpected argument": an argument
# too many, capture.lesson's _TOO_MANY.)
_REJECTED_OPTION = ("illegal option", "invalid option", "unknown option", "unrecognized option", "unknown primary",
                    "unknown flag", "unknown shorthand flag", "no such option",
                    "illegal line count", "illegal byte count")  # BSD head/tail: `-n -1` is GNU's


def rejects_option(error_text: str | None) -> bool:
    """Does the error reject an option of the command (`illegal option -- c`)?"""
    lower = (error_text or "").lower()
    return any(words in lower for words in _REJECTED_OPTION)


def error_signature(error_text: str | None, command: str | None = None, tool: str | None = None) -> str:
    """The normalised, human-readable essence of a failure (see the module docstring)."""
    return _signature(error_text, _option_scope(command, tool))[0]


def names_what_is_wrong(error_text: str | None) -> bool:
    """Is the failure's signature specific (a canonical form, such as `command not found: g++`,
    or two informative words), not only that something failed? (The module docstring.) Or does
    it name what it could not find (yarn's `error Command "test" not found.`, pytest's `file or
    directory not found: tests/unit`: `test`, `command`, `tests` are words any failure may use,
    but the quote or the path says which one is missing)?"""
    signature, specific = _signature(error_text, "")
    return specific or bool(_quoted_missing_re().search(signature))


@cache
def _quoted_missing_re() -> rx.Pattern[str]:
    return rx.compile(r"'[^'<>\s]{2,}' (?:not found|is unknown|does not exist|is missing)|(?:unknown|missing|no such) "
                      r"\w+ '[^'<>\s]{2,}'|(?:not found|no such file or directory|does not exist): [^\s<>]{2,}$")


def error_key(error_text: str | None, command: str | None = None, tool: str | None = None) -> str:
    """`err:` + 16 hex: same key ⇔ same learning (rule in the module docstring)."""
    signature, specific = _signature(error_text, _option_scope(command, tool))
    shape = _path_shape(signature)
    if shape.startswith(_DENIED) and command and _is_shell_tool(tool) and _runs_itself(command, shape[len(_DENIED):]):
        return ERROR_KEY + _sha16(_DENIED + "<script>")  # the script is not executable: its fix fits any script
    if signature.startswith("sed: ") and command and _bsd_sed_took_the_file(command, signature):
        return ERROR_KEY + _sha16(_BSD_SED_IN_PLACE)
    masked = False
    if command and _is_shell_tool(tool) and not shape.startswith(_SUBJECT_IS_THE_LESSON):
        shape, before = _targets_masked(shape, command), shape
        masked = shape != before  # then the command's program is folded in, below, without them
    if not _is_shell_tool(tool):
        material = f"{shape}\x1f{_tool_name(tool)}:{_target(command or '')}"
    elif shape.startswith("cd: "):
        material = shape  # the `cd` failed, whatever the command after it
    elif _sourced_file_missing(command, signature):
        material = f"{shape}\x1fsource"  # so did the `source`: `… && pytest`, `… && python app.py`
    elif (specific and shape == signature) or not command:
        material = shape
    else:
        step = _failing_step(command, signature)
        scope = "read" if shape == _MISSING_FILE and _only_shows(step) else _command_scope(step)
        material = f"{shape}\x1f{_targets_masked(scope, command) if masked else scope}"
    return ERROR_KEY + _sha16(material)


_MISSING_FILE = "no such file or directory: <path>"


def _only_shows(step: str) -> bool:
    """Does this step only look (`cat f`, `nl -ba f | sed -n 1,50p`, `cd api && head f`; not
    `sed -i`, `rm`)? Whichever look finds a file missing, where it is is the lesson: Codex reads
    with `sed -n '1,240p' f`, then `cat f`."""
    from learn_cli.text.effects import only_reads
    from learn_cli.text.shell import SETUP_PROGRAMS, split_segments, tokenize

    for segment in split_segments(step):
        words = tokenize(segment)
        if words and words[0] not in SETUP_PROGRAMS:
            return only_reads(segment)
    return False


def _targets_masked(signature: str, command: str) -> str:
    """The signature with the files the command itself names masked as `<target>`: `unknown
    file extension '.ts' for seed.ts` from `npx ts-node scripts/seed.ts` is the failure of
    `migrate.ts` too, and `permission denied: /usr/local/lib/node_modules/typescript` from
    `npm install -g typescript` that of any package. A file (a word with a folder or an
    extension, or any argument of a file program: `mkdir dist`) is masked where the error
    names it; another argument only as a folder of a path. The module, package or program an
    error names as missing stays (_SUBJECT_IS_THE_LESSON)."""
    from learn_cli.text.shell import tokenize

    paths: set[str] | None = None  # (worked out only for a bare word the error names)
    for word in dict.fromkeys(tokenize(_first_line(command))[1:]):
        name = word.lower().rstrip("/").rsplit("/", 1)[-1]
        if len(name) < 3 or word.startswith("-") or name not in signature:
            continue
        if "/" in word or "." in name.strip("."):
            signature = rx.sub(rf"(?<![\w.-]){rx.escape(name)}(?![\w-])", "<target>", signature)
            continue
        paths = _path_arguments(_first_line(command)) if paths is None else paths
        if word in paths:  # quoted whole, it is the path the error is about: the shape's `'<path>'`
            signature = signature.replace(f"'{word.lower()}'", "'<path>'")
            signature = rx.sub(rf"(?<![\w.-]){rx.escape(name)}(?![\w-])", "<target>", signature)
        else:
            signature = rx.sub(rf"(?<=/){rx.escape(name)}(?=$|[/'\s])", "<target>", signature)
    return signature


# Programs whose every argument (past options and a mode) is a path: `mkdir dist` names a
# folder as surely as `mkdir dist/` does, so the error's quote of it is a target.


def _path_arguments(line: str) -> set[str]:
    """The words of `line` that its file programs (FILE_PROGRAMS) take as paths."""
    from learn_cli.text.shell import FILE_PROGRAMS, canonical_program, split_segments_ops, tokenize, unwrap_tokens

    paths: set[str] = set()
    for segment, _op in split_segments_ops(line):
        words = unwrap_tokens(tokenize(segment))
        if words and canonical_program(words[0]) in FILE_PROGRAMS:
            paths.update(w for w in words[1:] if not w.startswith("-"))
    return paths


def _first_line(command: str) -> str:
    return command.split("\n", 1)[0]


_DENIED = "permission denied: "
# macOS's BSD sed reads `sed -i 's/a/b/' f` as the backup suffix 's/a/b/' and the script `f`:
# its error quotes the file (`sed: 1: "src/app.ts": command a expects \ followed by text`,
# `undefined label`, `invalid command code`: the message depends on the file's name). One
# failure, whatever the file: `sed -i ''` is the fix.
_BSD_SED_IN_PLACE = "sed: -i took the script for its backup suffix and the file for the script"


def _bsd_sed_took_the_file(command: str, signature: str) -> bool:
    from learn_cli.text.shell import tokenize

    match = rx.match(r"sed: \d+: '([^']+)': ", signature)
    words = [w.lower() for w in tokenize(command)]
    if not match or "-i" not in words[:-2]:
        return False
    at = words.index("-i")  # no suffix given: the script was taken for one, and a file for the script
    return bool(words[at + 1]) and any(_names_file(word, match.group(1)) for word in words[at + 2:])


def _names_file(word: str, name: str) -> bool:
    """`word` is the file `name` or a glob the shell expanded to it (`*.md` for `readme.md`)."""
    if word == name:
        return True
    if not any(c in word for c in "*?["):
        return False
    from fnmatch import fnmatchcase

    return fnmatchcase(name, word) or fnmatchcase(name.rsplit("/", 1)[-1], word.rsplit("/", 1)[-1])


def _sourced_file_missing(command: str | None, signature: str) -> bool:
    """Is the missing file of `signature` the one a `source` step reads (`source
    venv/bin/activate && pytest`: "venv/bin/activate: No such file or directory")?"""
    if not command or "no such file" not in signature or ("source " not in command and ". " not in command):
        return False
    from learn_cli.text.shell import split_segments_ops, tokenize

    for segment, _op in split_segments_ops(command):
        words = tokenize(segment)
        if len(words) >= 2 and words[0] in ("source", "."):
            name = words[1].rstrip("/").rsplit("/", 1)[-1].lower()
            if name and name in signature.replace("/", " ").replace(":", " ").split():
                return True  # (a whole word of it: not `activate` in `activated`)
    return False


def _runs_itself(command: str, subject: str) -> bool:
    """Is `subject` (a file's name) the program the command runs by its path (`./deploy.sh`)?"""
    from learn_cli.text.shell import SETUP_PROGRAMS, split_segments_ops, tokenize

    for segment, _op in split_segments_ops(command):
        words = tokenize(segment)
        if words and words[0] not in SETUP_PROGRAMS:
            return "/" in words[0] and words[0].rsplit("/", 1)[-1].lower() == subject
    return False


def failing_step(command: str | None, error_text: str | None) -> str:
    """The step of a shell command that its error is about (`_failing_step`), for pairing and
    for "the same failure again": `git add a && git commit -m x && git push` rejected is a
    `git push` that failed."""
    if not command:
        return command or ""
    return _failing_step(command, _signature(error_text, _option_scope(command, "Bash"))[0])


@cache
def _git_step_re() -> rx.Pattern[str]:
    """The git subcommand that git's own error names as the step that failed ("failed to push
    some refs", "pulling is not possible"). A chain of git steps stops at the one that failed;
    when an export cut the chain before that step, the error still names it."""
    steps = "push|pull|fetch|commit|merge|rebase|checkout|switch|clone|stash|tag|reset|restore|revert|apply"
    return rx.compile(rf"\b(?:failed to|cannot|could not|unable to) ({steps})\b|\b({steps})(?:t?ing)? is not possible")


def _failing_step(command: str, signature: str) -> str:
    """The step of a chain that the error is about, when its line names that step's
    subcommand and no other's: `git add a && git commit -m x && git push` failing with
    "failed to push some refs" is a `git push` failure, the same as a plain `git push`
    failing so (a chain stops at the step that failed; it is rarely the first). A git chain
    whose error names a git step it does not show (the export cut it: `git add a && git
    commit -m "long…`) failed at that step: `git push`. Otherwise the command itself (its
    first working step gives the scope)."""
    from learn_cli.text.shell import SETUP_PROGRAMS, split_segments_ops

    steps, piped = [], False
    for text, op in split_segments_ops(" ".join(command.split())):
        words = text.split()
        if words and not piped and words[0] not in SETUP_PROGRAMS:
            steps.append(text)
        piped = op in ("|", "|&")
    named = set(rx.findall(r"[a-z][a-z0-9_-]+", signature))
    scopes = [_command_scope(step).split(" ") for step in steps]
    hits = {i for i, scope in enumerate(scopes) if len(scope) == 2 and scope[1] in named}
    if not hits and scopes and all(scope[0] == "git" for scope in scopes):
        unseen = {a or b for a, b in _git_step_re().findall(signature)} - {scope[-1] for scope in scopes}
        return f"git {unseen.pop()}" if len(unseen) == 1 else command
    if len(steps) < 2 or len({" ".join(scopes[i]) for i in hits}) != 1:
        return command
    return steps[min(hits)]


def _path_shape(signature: str) -> str:
    """The signature with the path it is about replaced by `<path>` (issue 10, cause 5).

    `pathspec 'docs/a.md' did not match` and `no such file or directory: b.ts` are one error
    whatever the path: the key is the error's shape, and the program and subcommand that met
    it (folded in by error_key) keep `grep` apart from `git add`. A missing C header stays
    whole: the header is the lesson (install its package).
    """
    if not signature or signature.startswith(_SUBJECT_IS_THE_LESSON):
        return signature
    res = _shape_res()
    shaped = res[0].sub(lambda m: m.group(1) + "<path>", signature)
    return res[1].sub(_masked_path, shaped)


def _masked_path(match: rx.Match[str]) -> str:
    """A quoted path masked, but a project's manifest: that is the tool's constant, not a
    target that varies (`could not find 'cargo.toml' in '<path>' or any parent directory`)."""
    from learn_cli.text.projectfiles import MANIFESTS

    return match.group(0) if match.group(0).strip("'") in MANIFESTS else "'<path>'"


# Canonical forms whose subject is the lesson: the module, package, program or header to install.
_SUBJECT_IS_THE_LESSON = ("fatal error: ", "modulenotfounderror: ", "cannot find module ", "error ts2307: ",
                          "npm: package not found: ", COMMAND_NOT_FOUND)


@cache
def _shape_res() -> tuple[rx.Pattern[str], rx.Pattern[str]]:
    return (
        rx.compile(r"((?:^|cd: )no such file or directory: |file or directory not found: )\S+$"),  # (pytest's)
        # a quoted path: a slash inside, or a name with an extension (not a version or a module)
        rx.compile(r"'(?=[^']*(?:/|\.[a-z][a-z0-9]{0,5}'))[^'\s]+'"),
    )


def _option_scope(command: str | None, tool: str | None) -> str:
    """What an unknown option was given to: the program, or interpreter and script."""
    if not command or not _is_shell_tool(tool):
        return ""
    from learn_cli.text.shell import INTERPRETERS

    scope = _command_scope(command)
    return scope if scope.split(" ", 1)[0] in INTERPRETERS else scope.split(" ", 1)[0]


def _tool_name(tool: str | None) -> str:
    words = (tool or "").split()
    return "".join(ch for ch in words[0].lower() if ch.isalnum()) if words else ""


def _is_shell_tool(tool: str | None) -> bool:
    return _tool_name(tool) in _SHELL_TOOLS


def _command_scope(command: str) -> str:
    """The program plus what it was asked to do: `npm run build`, `git push`, `python train.py`."""
    from learn_cli.text.shell import FILE_PROGRAMS, INLINE_CODE_FLAGS, INTERPRETERS, program, unwrap

    command = " ".join(command.split())  # exports wrap long commands over lines
    prog = program(command)
    args = unwrap(command)[1:]
    if prog in INTERPRETERS:
        for arg in args:
            if arg in INLINE_CODE_FLAGS:
                return f"{prog} {arg}"
            if not arg.startswith("-"):
                return f"{prog} {_subject_path(arg).lower()}"
        return prog
    words = [a.lower() for a in args if not a.startswith("-")][:2]
    if not words or not rx.fullmatch(r"[a-z][\w:.-]*", words[0]) or "/" in words[0] or prog in FILE_PROGRAMS:
        return prog  # (a file program's word is a path: what it was asked to do is its name)
    if prog in _RUNNERS and words[0] in _RUN_WORDS and len(words) > 1:
        return f"{prog} {words[0]} {words[1]}"
    return f"{prog} {words[0]}"


def _target(target: str) -> str:
    """A path tool's target reduced to what is stable across machines: last two parts, or host."""
    target = target.strip()
    url = _norm_res()["url"].match(target)
    if url:
        return url.group(2).lower()
    parts = [p for p in rx.split(r"[\\/]+", target) if p not in ("", ".")]
    return "/".join(parts[-2:]).lower()


def text_key(text: str | None) -> str:
    """`txt:` + 16 hex of free text normalised so trivially re-worded duplicates match."""
    words = rx.findall(r"[^\W_]+", (text or "").lower().replace("'", "").replace("’", ""))
    kept = [w for w in words if w not in _STOP_WORDS]
    return "txt:" + _sha16(" ".join(kept or words))


@cache
def _token_re() -> rx.Pattern[str]:
    return rx.compile(r"[^\W_]+(?:[-_][^\W_]+)*")


def tokens(text: str | None) -> list[str]:
    """Lower-case word tokens (≥ 2 characters) for search and similarity.

    Splits on anything but letters, digits and inner `-`/`_`: `python-jose` and `snake_case`
    stay whole, `--platform` gives `platform`, `linux/amd64` gives `linux`, `amd64`.
    """
    return [t for t in _token_re().findall((text or "").lower()) if len(t) >= 2]


# ---------------------------------------------------------------------------
# Paths (`shorten_paths` and `normalize_path`, re-exported here, live in text/sanitize.py)
