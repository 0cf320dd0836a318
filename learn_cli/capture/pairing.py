"""Is this success a retry of that failure? Building blocks for session pairing.

SPEC §2.4. The session-level logic (look back over the last events, consume a
failure with its first fix, collect the fix in between) lives in capture/hook.py;
this module answers the per-pair questions precisely:

- `is_retry(failed, ok)`: same program once wrappers are removed (see
  engine.shell.unwrap), and a normalised edit ratio <= 0.40 or a shared
  substantive token.
- `is_same_command(a, b)`: the same command again (a fix happened in between).
- `paths_related(a, b)`: a path-tool retry with a corrected path.
- `is_mutating(cmd)` / `is_read_only(cmd)`: which successful commands can be the
  fix in between (mutating ones) and which never are (read-only ones). Many
  commands are neither (`pytest`, `python app.py`, `curl URL`).

Stdlib only, cheap to import, nothing compiled at import time.
"""

from __future__ import annotations

from learn_cli.engine.shell import (
    canonical_program,
    normalize_command,
    program,
    split_segments_ops,
    tokenize,
    unwrap_tokens,
)

__all__ = [
    "program",
    "edit_ratio",
    "within_ratio",
    "levenshtein",
    "substantive_tokens",
    "is_same_command",
    "is_retry",
    "paths_related",
    "same_path",
    "mentions_path",
    "is_read_only",
    "is_mutating",
    "RETRY_RATIO",
]

RETRY_RATIO = 0.40  # SPEC §2.4: normalised edit distance of a retry
TRUNCATION = "…"  # transcript exports cut long commands with it

# Tokens that never make two commands "about the same thing" (SPEC §2.4 list).
NOISE_WORDS = frozenset({"head", "tail", "cat", "grep", "awk", "sed", "sort", "uniq", "wc", "xargs", "find"})

# Programs that are interchangeable front ends for the same job. Each maps to a
# family name; two commands are "the same program" when their families meet.
#   npm/pnpm/yarn/bun: `npm install` failing then `pnpm install` working is the
#     classic "this repo uses pnpm" lesson (headroom missed it, §5 item 5).
#   pip/`uv pip`/pip3: the same installer interface ("externally managed" -> uv pip).
#   make/`cmake --build`/ninja: driving the same build.
_FAMILIES = {
    "npm": "js-pm", "pnpm": "js-pm", "yarn": "js-pm", "bun": "js-pm",
    "pip": "pip", "pipx": "pip",
    "make": "build", "gmake": "build", "ninja": "build",
}
# Subcommands that are the package manager itself; any other first word of
# `yarn X`/`pnpm X`/`bun X` runs a script or a binary named X (`yarn prettier`).
_JS_PM_SUBCOMMANDS = frozenset({
    "add", "audit", "bin", "build", "cache", "ci", "config", "create", "dedupe", "dlx", "exec",
    "explain", "global", "help", "i", "import", "info", "init", "install", "link", "list", "login",
    "logout", "ls", "outdated", "pack", "patch", "prune", "publish", "rebuild", "remove", "rm",
    "run", "run-script", "search", "set", "start", "test", "uninstall", "unlink", "up", "update",
    "upgrade", "version", "view", "why", "workspace", "workspaces", "x", "node", "store", "env",
})


# ---------------------------------------------------------------------------
# Edit distance


def levenshtein(a: str, b: str) -> int:
    """Levenshtein distance, bit-parallel (Myers/Hyyrö): one big-int step per char."""
    if a == b:
        return 0
    # Common prefix and suffix cost nothing and are the bulk of a retry.
    start = 0
    limit = min(len(a), len(b))
    while start < limit and a[start] == b[start]:
        start += 1
    a, b = a[start:], b[start:]
    end = 0
    limit = min(len(a), len(b))
    while end < limit and a[-1 - end] == b[-1 - end]:
        end += 1
    if end:
        a, b = a[:-end], b[:-end]
    if len(a) < len(b):
        a, b = b, a
    m = len(b)
    if m == 0:
        return len(a)
    peq: dict[str, int] = {}
    for i, ch in enumerate(b):
        peq[ch] = peq.get(ch, 0) | (1 << i)
    full = (1 << m) - 1
    top = 1 << (m - 1)
    pv, mv, score = full, 0, m
    for ch in a:
        eq = peq.get(ch, 0)
        xv = eq | mv
        xh = ((((eq & pv) + pv) & full) ^ pv) | eq
        ph = mv | (~(xh | pv) & full)
        mh = pv & xh
        if ph & top:
            score += 1
        elif mh & top:
            score -= 1
        ph = ((ph << 1) | 1) & full
        mh = (mh << 1) & full
        pv = mh | (~(xv | ph) & full)
        mv = ph & xv
    return score


def edit_ratio(a: str, b: str) -> float:
    """Levenshtein distance divided by the longer length (0.0 identical, 1.0 disjoint)."""
    longest = max(len(a), len(b))
    return levenshtein(a, b) / longest if longest else 0.0


def within_ratio(a: str, b: str, limit: float = RETRY_RATIO) -> bool:
    """edit_ratio(a, b) <= limit, with a free exit when the lengths alone exceed it."""
    longest = max(len(a), len(b))
    if not longest:
        return True
    if abs(len(a) - len(b)) > limit * longest:
        return False
    return levenshtein(a, b) <= limit * longest


# ---------------------------------------------------------------------------
# Command parts: what a command does, without setup, wrappers and output plumbing


def _clean(command: str) -> str:
    """Whitespace-normalised text with an export's truncation mark removed."""
    text = normalize_command(command or "")
    return text.rstrip(TRUNCATION).rstrip() if text.endswith(TRUNCATION) else text


_PLUMBING = frozenset({"2>&1", "1>&2", ">&2", "2>/dev/null", ">/dev/null", "&>/dev/null", "1>/dev/null"})


def _parts(command: str) -> list[list[str]]:
    """Token lists of the working segments of a command.

    Leading setup segments (`cd DIR &&`, `source X &&`) are dropped, each segment
    is unwrapped (`uv run pytest` -> `pytest`), `| head`/`| tail` filters and
    stderr plumbing (`2>&1`, `2>/dev/null`) are removed.
    """
    parts: list[list[str]] = []
    previous_op = ""
    for text, op in split_segments_ops(_clean(command)):
        tokens = [t for t in unwrap_tokens(tokenize(text)) if t not in _PLUMBING]
        piped = previous_op in ("|", "|&")
        previous_op = op
        if not tokens:
            continue
        name = canonical_program(tokens[0])
        if piped and name in ("head", "tail"):
            continue
        if not parts and name in _SETUP and op in ("&&", ";", "\n"):
            continue
        parts.append(tokens)
    return parts


_SETUP = frozenset({"cd", "pushd", "popd", "source", ".", "export", "set", "unset", "ulimit", "umask"})


def _core_text(parts: list[list[str]]) -> str:
    """One string for edit distance: parts joined, programs canonical."""
    return " ; ".join(" ".join([canonical_program(p[0]), *p[1:]]) for p in parts)


def _identities(tokens: list[str]) -> set[str]:
    """Names under which a segment's program counts as "the same program"."""
    name = canonical_program(tokens[0])
    names = {name, _FAMILIES.get(name, name)}
    args = [t for t in tokens[1:] if not t.startswith("-")]
    if name == "uv" and args[:1] == ["pip"]:
        names.add("pip")
    elif name == "cmake" and "--build" in tokens:
        names.add("build")
    elif name in ("npm", "pnpm", "yarn", "bun") and args:
        if args[0] in ("run", "run-script", "exec", "x") and len(args) > 1:
            names.add(canonical_program(args[1]))
        elif name != "npm" and args[0] not in _JS_PM_SUBCOMMANDS:
            names.add(canonical_program(args[0]))  # `yarn prettier` runs prettier
    return names


# ---------------------------------------------------------------------------
# Substantive tokens


_STRIP_CHARS = "\"'`()[]{},;:!?<>=|&*"


def _words(tokens: list[str]) -> list[str]:
    """Words of a token list; quoted code or messages are split on whitespace."""
    words: list[str] = []
    for token in tokens:
        words.extend(token.split() if any(c.isspace() for c in token) else (token,))
    return words


def _substantive(parts: list[list[str]]) -> set[str]:
    programs = {canonical_program(p[0]) for p in parts} | {p[0].lower() for p in parts}
    found: set[str] = set()
    for tokens in parts:
        for word in _words(tokens[1:]):
            if TRUNCATION in word:
                continue  # cut off by the export: not the real word
            word = word.strip(_STRIP_CHARS).lower()
            if word.startswith("-") or "=" in word and word.split("=", 1)[0].startswith("-"):
                continue
            candidates = [word]
            if "/" in word or "\\" in word:
                base = word.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
                candidates.append(base)
            for cand in candidates:
                if len(cand) >= 5 and not cand.isdigit() and cand not in NOISE_WORDS and cand not in programs:
                    found.add(cand)
    return found


def substantive_tokens(command: str) -> set[str]:
    """Words that identify what a command works on (SPEC §2.4).

    At least 5 characters, not a flag, not the program, not a noise word
    (`head tail cat grep awk sed sort uniq wc xargs find`), lower-case, quotes
    stripped; quoted strings are split into words; a path also contributes its
    basename (`/abs/tests/x_test.py` and `tests/x_test.py` share `x_test.py`).
    Setup segments (`cd DIR &&`) do not count: every command of a session
    shares them.
    """
    return _substantive(_parts(command))


# ---------------------------------------------------------------------------
# Retry decisions


def is_same_command(a: str, b: str) -> bool:
    """The same command, allowing for whitespace, wrappers, setup prefixes and `…` cuts.

    `python3 app.py` ≡ `python app.py` ≡ `cd /proj && uv run python app.py`;
    stderr plumbing and `| head` filters do not count. When an export cut one
    of them with `…`, the cut text must be a prefix of the other.
    """
    if not a or not b:
        return False
    clean_a, clean_b = _clean(a), _clean(b)
    if not clean_a or not clean_b:
        return False
    if clean_a == clean_b:
        return True
    core_a, core_b = _core_text(_parts(a)), _core_text(_parts(b))
    if not core_a or not core_b:
        return False
    if core_a == core_b:
        return True
    cut_a, cut_b = a.rstrip().endswith(TRUNCATION), b.rstrip().endswith(TRUNCATION)
    if cut_a and core_b.startswith(core_a) or cut_b and core_a.startswith(core_b):
        return min(len(core_a), len(core_b)) >= 8  # a few characters prove nothing
    return False


def is_retry(failed: str, ok: str) -> bool:
    """Is the successful command `ok` a (corrected) retry of the failed command?

    1. The same command again counts (a fix happened in between).
    2. Same program: the failed command's main program (wrappers removed, see
       engine.shell.unwrap; `python`≈`python3`; `npm`≈`pnpm`≈`yarn`≈`bun`;
       `pip`≈`uv pip`; `make`≈`cmake --build`; `yarn X`≈`X`) must be the
       program of one working segment of `ok` (the retry may prefix a fix:
       `pip install x && pytest`, `git fetch o b && git checkout b`).
    3. And either the normalised, unwrapped commands are within an edit ratio of
       0.40, or they share a substantive token (see substantive_tokens).
    """
    if not failed or not ok or not failed.strip() or not ok.strip():
        return False
    if is_same_command(failed, ok):
        return True
    failed_parts, ok_parts = _parts(failed), _parts(ok)
    if not failed_parts or not ok_parts:
        return False
    wanted = _identities(failed_parts[0])
    if not any(wanted & _identities(tokens) for tokens in ok_parts):
        return False
    if within_ratio(_core_text(failed_parts), _core_text(ok_parts)):
        return True
    return bool(_substantive(failed_parts) & _substantive(ok_parts))


# ---------------------------------------------------------------------------
# Paths


def _path_key(path: str) -> str:
    """Comparable form of a path: forward slashes, no `./`, no trailing slash."""
    text = (path or "").strip().replace("\\", "/")
    while "/./" in text:
        text = text.replace("/./", "/")
    while text.startswith("./"):
        text = text[2:]
    while "//" in text:
        text = text.replace("//", "/")
    return text.rstrip("/") if len(text) > 1 else text


def _split_name(path: str) -> tuple[str, str]:
    """(stem, extension) of a path's basename; dotfiles keep their name as stem."""
    base = path.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    if dot <= 0:
        return base, ""
    return base[:dot], base[dot:]


def same_path(a: str, b: str) -> bool:
    """The same path once `./`, doubled and trailing slashes are ignored.

    A relative path equals an absolute one that ends with it
    (`src/app.py` ≡ `/home/u/proj/src/app.py`): agents mix both for one file.
    """
    key_a, key_b = _path_key(a), _path_key(b)
    if not key_a or not key_b:
        return False
    if key_a == key_b:
        return True
    if key_a.startswith("/") != key_b.startswith("/"):
        rel, absolute = (key_b, key_a) if key_a.startswith("/") else (key_a, key_b)
        return not rel.startswith("../") and not rel.startswith("~") and absolute.endswith("/" + rel)
    return False


def paths_related(a: str, b: str) -> bool:
    """Is path `b` a likely correction of path `a` (Read/Edit/Write/Glob/Grep retry)?

    Never for the same path (see same_path). Related when the basenames are the
    same in different directories, or the stems are the same with a different
    extension (`config.yml` -> `config.yaml`), or the stems are a likely typo of
    each other with the same extension: both at least 3 characters and within
    an edit distance of max(1, len // 4). The extension is compared separately so
    `ab.py`/`cd.py` (headroom's false positive) is not a typo.
    """
    if not a or not b or same_path(a, b):
        return False
    key_a, key_b = _path_key(a), _path_key(b)
    base_a, base_b = key_a.rsplit("/", 1)[-1], key_b.rsplit("/", 1)[-1]
    if not base_a or not base_b or base_a in (".", "..") or base_b in (".", ".."):
        return False
    if base_a == base_b:
        return True
    (stem_a, ext_a), (stem_b, ext_b) = _split_name(key_a), _split_name(key_b)
    if stem_a.lower() == stem_b.lower():
        return True  # other extension (`.yml`/`.yaml`) or other case (`readme.md`)
    if ext_a.lower() != ext_b.lower() or min(len(stem_a), len(stem_b)) < 3:
        return False
    allowed = max(1, max(len(stem_a), len(stem_b)) // 4)
    if abs(len(stem_a) - len(stem_b)) > allowed:
        return False
    return levenshtein(stem_a.lower(), stem_b.lower()) <= allowed


def mentions_path(text: str, path: str) -> bool:
    """Does a command or search pattern name the basename of path?

    Lets the session logic credit a discovery (`find . -name app.py`, `ls src/`)
    made after a failed Read of a wrong path.
    """
    base = _path_key(path).rsplit("/", 1)[-1]
    return bool(base) and base not in (".", "..") and base in (text or "")


# ---------------------------------------------------------------------------
# Read-only and mutating commands
#
# Rule: a command is judged by its working segments (setup prefixes such as
# `cd DIR &&` belong to the segment they prepare).
# - is_mutating: some segment changes state that later commands see: files
#   (`>`/`>>` redirection to a real file, `tee`, `cp`, `mv`, `rm`, `mkdir`,
#   `touch`, `chmod`, `ln`, `sed -i`, `patch`, scripts that write files),
#   installed software (pip/uv/npm/pnpm/yarn/bun/cargo/go/apt/brew/gem/poetry/
#   conda/… installs and removals), the environment (`export`, `source`, `.`,
#   `unset`, `alias`, `eval`, `conda activate`, `nvm use`), the repository (git
#   checkout/switch/pull/fetch/stash/reset/restore/add/rm/mv/commit/merge/
#   rebase/config/init/clone/…), services and processes (`docker build/pull/run/
#   compose up`, `systemctl start`, `kill`, `pkill`), builds and migrations
#   (`make`, `cmake`, `cargo build`, `npm run build`, `alembic upgrade`,
#   `python manage.py migrate`, `prisma generate`, `createdb`) and, for any
#   other tool, a mutating verb among its first three words (`install`, `add`,
#   `init`, `create`, `migrate`, `build`, `start`, `set`, `login`, `up`, …).
#   A line of setup only (`cd backend`, `source .venv/bin/activate`) mutates:
#   the agent's shell keeps that state for the next command.
# - is_read_only: every working segment only reads (ls, cat, grep, find without
#   -delete/-exec, git status/log/diff/show, `--version`, `--help`, …) and nothing
#   is redirected into a file. Read-only commands are never part of a fix.
# - Neither: tests, scripts, servers, network calls (`pytest`, `python app.py`,
#   `curl URL`): they are what gets retried, not a fix.

_READ_ONLY_PROGRAMS = frozenset({
    "ls", "ll", "la", "dir", "cat", "bat", "less", "more", "head", "tail", "grep", "egrep", "fgrep",
    "rg", "ag", "ack", "fd", "pwd", "echo", "printf", "which", "whereis", "type", "wc", "stat",
    "file", "tree", "printenv", "man", "help", "info", "du", "df", "diff", "cmp", "comm", "date",
    "cal", "whoami", "id", "groups", "uname", "hostname", "uptime", "ps", "pgrep", "lsof", "jq",
    "yq", "sort", "uniq", "cut", "tr", "awk", "gawk", "column", "nl", "basename", "dirname",
    "realpath", "readlink", "history", "sha1sum", "sha256sum", "sha512sum", "md5sum", "md5",
    "shasum", "cksum", "xxd", "hexdump", "od", "strings", "test", "[", "[[", "true", "false",
    "sleep", "wait", "nproc", "free", "lscpu", "locale", "tput", "seq", "expr", "getconf", "ldd",
    "otool", "nm", "objdump", "readelf", "netstat", "ss", "dig", "nslookup", "host", "ping",
    "zcat", "zgrep", "look", "fold", "fmt", "rev", "tac", "paste", "join", "split-never",
    "command", "hash", "compgen", "declare", "sw_vers", "system_profiler", "lsb_release",
    "env", "tasklist", "where", "get-childitem", "get-content", "select-string",
})
_READ_ONLY_SUBCOMMANDS = {
    "git": frozenset({"status", "log", "diff", "show", "blame", "ls-files", "ls-tree", "ls-remote",
                      "rev-parse", "rev-list", "describe", "shortlog", "reflog", "grep", "cat-file",
                      "name-rev", "merge-base", "whatchanged", "count-objects", "check-ignore",
                      "show-ref", "for-each-ref", "var", "help", "version", "cherry"}),
    "pip": frozenset({"list", "show", "freeze", "check", "help", "search", "index", "inspect"}),
    "npm": frozenset({"ls", "list", "ll", "la", "view", "v", "info", "show", "outdated", "help",
                      "search", "explain", "why", "root", "prefix", "bin", "fund", "doctor", "query"}),
    "pnpm": frozenset({"ls", "list", "outdated", "why", "root", "bin", "view", "info", "help"}),
    "yarn": frozenset({"list", "info", "why", "outdated", "help", "bin", "licenses"}),
    "bun": frozenset({"pm"}),
    "cargo": frozenset({"tree", "metadata", "search", "help", "locate-project", "pkgid", "read-manifest", "verify-project"}),
    "go": frozenset({"list", "env", "version", "doc", "help", "vet"}),
    "docker": frozenset({"ps", "images", "logs", "inspect", "version", "info", "stats", "top", "port", "history", "search", "diff"}),
    "kubectl": frozenset({"get", "describe", "logs", "top", "explain", "version", "api-resources", "cluster-info"}),
    "brew": frozenset({"list", "ls", "info", "search", "deps", "uses", "outdated", "config", "doctor", "--prefix", "leaves", "desc", "home"}),
    "apt": frozenset({"list", "show", "search", "policy", "depends", "rdepends"}),
    "apt-cache": frozenset({"search", "show", "policy", "depends", "rdepends", "madison", "showpkg"}),
    "dpkg": frozenset({"-l", "-L", "-s", "-S", "--list", "--listfiles", "--status", "--search"}),
    "conda": frozenset({"list", "info", "search"}),
    "uv": frozenset({"tree", "version", "help"}),
    "poetry": frozenset({"show", "check", "version", "env", "config", "about", "search"}),
    "systemctl": frozenset({"status", "is-active", "is-enabled", "list-units", "show", "cat"}),
    "gh": frozenset({"status"}),
    "rustup": frozenset({"show", "which"}),
    "launchctl": frozenset({"list", "print"}),
    "node": frozenset(),
}
# `git <sub>` listing forms that turn mutating with a name argument.
_GIT_LISTING = {"branch": frozenset({"-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all", "--remotes", "--merged", "--no-merged", "--contains"}),
                "tag": frozenset({"-l", "--list", "-n"}),
                "remote": frozenset({"-v", "show", "get-url", "--verbose"}),
                "stash": frozenset({"list", "show"}),
                "config": frozenset({"--get", "--list", "-l", "--get-all", "--get-regexp", "--show-origin"}),
                "worktree": frozenset({"list"}),
                "submodule": frozenset({"status", "summary"})}
_GIT_MUTATING = frozenset({
    "checkout", "switch", "pull", "fetch", "stash", "reset", "restore", "add", "rm", "mv", "commit",
    "merge", "rebase", "cherry-pick", "revert", "config", "init", "clone", "apply", "am", "push",
    "clean", "submodule", "branch", "tag", "remote", "worktree", "lfs", "sparse-checkout", "update-index",
    "gc", "prune", "notes", "bisect", "switch", "filter-branch", "filter-repo", "update-ref",
})
_MUTATING_PROGRAMS = frozenset({
    "mkdir", "rmdir", "touch", "cp", "mv", "ln", "rm", "chmod", "chown", "chgrp", "install", "tee",
    "dd", "truncate", "patch", "unzip", "gunzip", "bunzip2", "unxz", "7z", "rsync", "scp", "wget",
    "export", "unset", "source", ".", "alias", "unalias", "eval", "set", "ulimit", "umask",
    "kill", "pkill", "killall", "createdb", "dropdb", "createuser", "initdb", "ssh-keygen",
    "ssh-add", "direnv", "deactivate", "activate", "pushd", "popd", "cd", "mkfifo", "mktemp",
    "crontab", "update-alternatives", "ldconfig", "chsh", "setx", "new-item", "set-content",
    "remove-item", "copy-item", "move-item", "set-executionpolicy", "configure", "autoreconf",
    "meson", "ninja", "make", "gmake", "cmake", "bazel", "corepack", "dpkg-reconfigure",
})
_MUTATING_VERBS = frozenset({
    "install", "i", "add", "remove", "uninstall", "rm", "update", "upgrade", "up", "down", "init",
    "setup", "create", "generate", "migrate", "makemigrations", "sync", "lock", "apply", "enable",
    "disable", "start", "restart", "stop", "set", "use", "activate", "build", "compile", "clean",
    "configure", "login", "logout", "auth", "link", "unlink", "pull", "push", "fetch", "deploy",
    "reset", "rebuild", "bootstrap", "prepare", "download", "tidy", "vendor", "seed", "develop",
    "import", "load", "tap", "pin", "global", "local", "default", "venv", "new", "run-migrations",
    "revision", "stamp", "downgrade", "upgradedb", "db:migrate", "db:setup", "db:create", "db:seed",
    "db:push", "collectstatic", "ci", "dedupe", "prune", "rebase", "kill", "rmi", "tag", "commit",
    "switch", "mount", "unmount", "format", "fix", "write", "save", "put", "patch", "delete",
    "unzip", "extract", "x", "dlx",
})
# Verbs that are read-only even though the word alone looks otherwise (`pip index`).
_TEST_LIKE = frozenset({"test", "check", "lint", "run", "show", "list", "status", "help", "version"})


def _real_redirects(segment: str) -> bool:
    """Does the segment write output into a file (`>`, `>>`, `&>`), not /dev/*?"""
    if ">" not in segment:
        return False
    quote = ""
    i, n = 0, len(segment)
    while i < n:
        ch = segment[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"':
                i += 1
        elif ch in "'\"`":
            quote = ch
        elif ch == "\\":
            i += 1
        elif ch == "<" and segment.startswith("<<", i):
            return _redirects_before_heredoc(segment, i)
        elif ch == ">":
            j = i + 1
            if j < n and segment[j] in ">|":
                j += 1
            if j < n and segment[j] == "&":  # `>&2`, `2>&1`: descriptor copy
                i = j + 1
                continue
            while j < n and segment[j] in " \t":
                j += 1
            target = tokenize(segment[j:])[:1]
            if target and not target[0].startswith("/dev/"):
                return True
            i = j
            continue
        i += 1
    return False


def _redirects_before_heredoc(segment: str, at: int) -> bool:
    """Redirection on the heredoc's command line (`cat > f <<EOF`, `cat <<EOF > f`)."""
    line_end = segment.find("\n", at)
    line = segment[: line_end if line_end >= 0 else len(segment)]
    return _real_redirects(line[:at] + line[at:].replace("<<", "  ", 1).split("<<")[0]) if ">" in line else False


def _first_args(tokens: list[str], count: int = 3) -> list[str]:
    """The first few non-option words after the program, lower-cased."""
    args: list[str] = []
    for tok in tokens[1:]:
        if tok.startswith("-") or "=" in tok and not tok.startswith("db:"):
            continue
        args.append(tok.lower())
        if len(args) == count:
            break
    return args


def _asks_version_or_help(tokens: list[str]) -> bool:
    return any(t in ("--version", "-V", "--help", "-h", "version", "-v") for t in tokens[1:3]) and len(tokens) <= 3


def _git_subcommand(tokens: list[str]) -> tuple[str, list[str]]:
    """`git -C dir --no-pager log -3` -> ("log", ["-3"])."""
    i = 1
    while i < len(tokens) and tokens[i].startswith("-"):
        i += 2 if tokens[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    return (tokens[i].lower(), tokens[i + 1 :]) if i < len(tokens) else ("", [])


def _git_mutates(tokens: list[str]) -> bool | None:
    """True mutating, False read-only, None for unknown git subcommands."""
    sub, rest = _git_subcommand(tokens)
    if not sub or sub in _READ_ONLY_SUBCOMMANDS["git"]:
        return False
    if sub in _GIT_LISTING:
        listing = _GIT_LISTING[sub]
        words = [t for t in rest if not t.startswith("-")]
        if sub == "config":
            return not any(t in listing for t in rest) and len(words) >= 2
        if sub == "stash":
            return not (words and words[0] in listing)
        if not rest or any(t in listing for t in rest) and (sub != "remote" or words[:1] in ([], ["show"], ["get-url"])):
            return False
        return sub in ("branch", "tag", "remote", "worktree", "submodule")
    if sub in _GIT_MUTATING:
        return True
    return None


def _python_writes(tokens: list[str], segment: str) -> bool:
    """`python -c`/heredoc code that writes files (`open(p, 'w')`, `.write_text(`)."""
    code = segment if "<<" in segment else " ".join(tokens)
    return ".write(" in code or "write_text(" in code or "write_bytes(" in code or "os.remove(" in code \
        or "shutil." in code or "os.makedirs(" in code or ".mkdir(" in code or "os.rename(" in code


def _segment_mutates(tokens: list[str], segment: str) -> bool | None:
    """True mutating, False read-only, None neither (tests, scripts, servers)."""
    if _real_redirects(segment):
        return True
    name = canonical_program(tokens[0])
    if name.endswith(".exe"):
        name = name[:-4]
    args = _first_args(tokens)
    if name in ("sed", "gsed", "perl", "ruby") and any(t == "-i" or t.startswith("-i") or t.startswith("--in-place") or t.startswith("-pi") for t in tokens[1:]):
        return True
    if name == "find":
        if "-delete" in tokens:
            return True
        for flag in ("-exec", "-execdir", "-ok"):
            if flag in tokens:
                inner = tokens[tokens.index(flag) + 1 :]
                return bool(inner) and _segment_mutates(inner, " ".join(inner)) is True
        return False
    if name == "sort" and any(t == "-o" or t.startswith("--output") for t in tokens):
        return True
    if name in _READ_ONLY_PROGRAMS:
        return False
    if name in ("tar",):
        return not (args and ("t" in args[0] and not args[0].startswith("-") or "--list" in tokens)) and not any(
            t.startswith("-") and not t.startswith("--") and "t" in t for t in tokens[1:2])
    if name in ("curl", "http", "https"):
        return any(t in ("-o", "-O", "--output", "--remote-name", "-OL", "-LO", "-sLO", "-sSLO", "-fsSLO") or t.startswith("--output=") for t in tokens)
    if name == "git":
        return _git_mutates(tokens)
    if name in _MUTATING_PROGRAMS:
        if name in ("make", "gmake") and args and args[0] in _TEST_LIKE | {"help", "-n"}:
            return None
        return True
    if _asks_version_or_help(tokens):
        return False
    if name == "python" and _python_writes(tokens, segment):
        return True
    read_only = _READ_ONLY_SUBCOMMANDS.get(_FAMILIES.get(name, name) if name in ("pnpm", "yarn") else name)
    if read_only is not None and args and args[0] in read_only:
        return False
    if args and args[0] in ("run", "run-script") and name in ("npm", "pnpm", "yarn", "bun"):
        return any(word in _MUTATING_VERBS - _TEST_LIKE for word in args[1].replace(":", " ").split()) if len(args) > 1 else None
    if any(arg in _MUTATING_VERBS for arg in args):
        return True
    if name in ("conda", "mamba", "micromamba", "nvm", "pyenv", "rbenv", "nodenv", "fnm", "volta", "asdf", "mise", "sdk") and args:
        return True  # version managers: anything but listing changes the active toolchain
    return None


def _judge(command: str) -> list[bool | None]:
    """Verdict of each segment of a command (see _segment_mutates)."""
    segments = split_segments_ops(_clean(command))
    verdicts: list[bool | None] = []
    all_setup = all(_is_setup(text) for text, _ in segments)
    for index, (text, op) in enumerate(segments):
        tokens = unwrap_tokens(tokenize(text))
        if not tokens:
            continue
        if _is_setup(text) and not all_setup:
            # `cd DIR && X`: the cd serves X; `source env && X`/`export A=1; X` still set state
            name = canonical_program(tokens[0])
            verdicts.append(None if name in ("cd", "pushd", "popd") else True)
            continue
        verdicts.append(_segment_mutates(tokens, text))
    return verdicts


def _is_setup(segment: str) -> bool:
    tokens = tokenize(segment)
    while tokens and "=" in tokens[0] and not tokens[0].startswith("-"):
        tokens = tokens[1:]
    return bool(tokens) and canonical_program(tokens[0]) in _SETUP


def is_mutating(command: str) -> bool:
    """Does the command change state that later commands see? (See the rule above.)"""
    if not command or not command.strip():
        return False
    return any(v is True for v in _judge(command))


def is_read_only(command: str) -> bool:
    """Does the command only read (every segment read-only, no file redirection)?"""
    if not command or not command.strip():
        return False
    verdicts = _judge(command)
    return bool(verdicts) and all(v is False or v is None and False for v in verdicts) and any(v is False for v in verdicts)
