"""Is this success a retry of that failure? Building blocks for session pairing.

SPEC §2.4. The session-level logic (look back over the last events, consume a
failure with its first fix, collect the fix in between) lives in capture/hook.py;
this module answers the per-pair questions precisely:

- `is_retry(failed, ok)`: same program once wrappers are removed (see
  engine.shell.unwrap), and a normalised edit ratio <= 0.40 or a shared
  substantive token, with the guards listed in its docstring.
- `is_same_command(a, b)`: the same command again (a fix happened in between).
- `paths_related(a, b)`: a path-tool retry with a corrected path.
- `is_mutating(cmd)` / `is_read_only(cmd)`: which successful commands can be the
  fix in between (mutating ones) and which never are (read-only ones). Many
  commands are neither (`pytest`, `python app.py`, `curl URL`).

Stdlib only, cheap to import, nothing compiled at import time.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from learn_cli.engine.shell import (
    SETUP_PROGRAMS,
    canonical_program,
    normalize_command,
    program,
    split_segments_ops,
    strip_output_noise,
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
#   apt/apt-get, yum/dnf: the same system package manager.
_FAMILIES = {
    "npm": "js-pm", "pnpm": "js-pm", "yarn": "js-pm", "bun": "js-pm",
    "pip": "pip",
    "make": "build", "gmake": "build", "ninja": "build",
    "apt": "apt", "apt-get": "apt", "aptitude": "apt", "yum": "dnf", "dnf": "dnf",
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
    """The command without trailing output plumbing and an export's truncation mark.

    Newlines are kept: they separate commands and delimit heredoc bodies.
    """
    text = strip_output_noise((command or "").strip())
    return text[: -len(TRUNCATION)].rstrip() if text.endswith(TRUNCATION) else text


_PLUMBING = frozenset({"2>&1", "1>&2", ">&2", "2>/dev/null", ">/dev/null", "&>/dev/null", "1>/dev/null"})


@functools.lru_cache(maxsize=256)
def _parts(command: str) -> tuple[tuple[str, ...], ...]:
    """Token lists of the working segments of a command (cached: the hook compares
    one success with several failures).

    Leading setup segments (`cd DIR &&`, `source X &&`) are dropped, each segment
    is unwrapped (`uv run pytest` -> `pytest`), `| head`/`| tail` filters and
    stderr plumbing (`2>&1`, `2>/dev/null`) are removed.
    """
    parts: list[tuple[str, ...]] = []
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
        if not parts and name in SETUP_PROGRAMS and op in ("&&", ";", "\n", "&"):
            continue
        parts.append(tuple(_canonical_form(name, tokens)))
    return tuple(parts)


def _canonical_form(name: str, tokens: Sequence[str]) -> list[str]:
    """Spellings of one command made equal: `npm run test` -> `npm test`, `uv pip` -> `pip`."""
    if name in ("npm", "pnpm", "yarn", "bun") and len(tokens) > 2 and tokens[1] in ("run", "run-script"):
        return [tokens[0], *tokens[2:]]
    if name in ("docker", "podman") and len(tokens) > 1 and tokens[1] == "compose":
        return ["docker-compose", *tokens[2:]]
    if name == "yarn" and len(tokens) > 3 and tokens[1] == "workspace":
        return [tokens[0], *tokens[3:]]  # `yarn workspace <name> <cmd>` runs <cmd> there
    if name == "uv" and len(tokens) > 1 and tokens[1] == "pip":
        return tokens[1:]
    return tokens


def _core_text(parts) -> str:
    """One string for edit distance: parts joined, programs canonical."""
    return " ; ".join(" ".join([canonical_program(p[0]), *p[1:]]) for p in parts)


_INTERPRETERS = frozenset({
    "python", "node", "bash", "sh", "zsh", "ruby", "perl", "php", "deno", "bun", "tsx", "ts-node", "pwsh", "powershell",
})


# Options of multi-command tools that take a value before the subcommand.
_GLOBAL_VALUE_OPTIONS = frozenset({
    "-C", "-c", "--dir", "--prefix", "--filter", "-F", "-w", "--workspace", "--git-dir",
    "--work-tree", "--manifest-path", "--directory", "--project", "-f", "--file", "-H",
    "--context", "--namespace", "-n", "--profile", "--region", "--cwd",
})
# Subcommand spellings that mean the same thing.
_VERB_ALIASES = {"i": "install", "add": "install", "rm": "remove", "uninstall": "remove",
                 "un": "remove", "t": "test", "tst": "test", "run-script": "run", "ls": "list"}


def _verb(tokens: Sequence[str]) -> str:
    """The first positional word (a subcommand when the tool has them), or ''.

    For an interpreter running a script it is the script's own first word
    (`python manage.py migrate` -> `migrate`).
    """
    positional = _positional(tokens, 2)
    if positional and canonical_program(tokens[0]) in _INTERPRETERS and _path_like(positional[0]):
        positional = positional[1:]
    return positional[0].lower() if positional else ""


def _positional(tokens: Sequence[str], count: int) -> list[str]:
    """The first `count` arguments that are not options (nor known option values)."""
    found: list[str] = []
    i = 1
    while i < len(tokens) and len(found) < count:
        tok = tokens[i]
        if tok.startswith("-"):
            i += 2 if tok in _GLOBAL_VALUE_OPTIONS else 1
            continue
        found.append(tok)
        i += 1
    return found


def _word_like(verb: str) -> bool:
    """A subcommand-like word (`build`, `db:migrate`), not a path, URL or number."""
    return bool(verb) and not verb[0].isdigit() and all(c.isalnum() or c in "-_:" for c in verb)


def _verbs_compatible(a: Sequence[str], b: Sequence[str]) -> bool:
    """Do two segments of one program do the same kind of thing?

    Only subcommand-like words are compared (paths, URLs, code and numbers are
    left to the edit ratio): `npm run build` vs `npm run lint` and `docker
    compose up` vs `git push` style pairs are not retries, while `build:prod`
    vs `build` (a prefix), `isntall` vs `install` (a typo) and `i` vs
    `install` (an alias) are.
    """
    verb_a, verb_b = _verb(a), _verb(b)
    if not _word_like(verb_a) or not _word_like(verb_b):
        return True
    verb_a, verb_b = _VERB_ALIASES.get(verb_a, verb_a), _VERB_ALIASES.get(verb_b, verb_b)
    if verb_a == verb_b or verb_a.startswith(verb_b) or verb_b.startswith(verb_a):
        return True
    # An option value may have been taken for the verb (`flask --app app run`).
    if verb_a in (w.lower() for w in _positional(b, 2)) or verb_b in (w.lower() for w in _positional(a, 2)):
        return True
    longest = max(len(verb_a), len(verb_b))
    return levenshtein(verb_a, verb_b) <= (1 if longest <= 4 else max(2, longest // 4))


def _identities(tokens: Sequence[str]) -> set[str]:
    """Names under which a segment's program counts as "the same program"."""
    name = canonical_program(tokens[0])
    names = {name, _FAMILIES.get(name, name)}
    args = [t for t in tokens[1:] if not t.startswith("-")]
    script = _script_stem(name, tokens[0], args)
    if script:
        names.add("script:" + script)
    if name == "uv" and args[:1] == ["pip"]:
        names.add("pip")
    elif name == "git" and args[:1] in (["mv"], ["rm"]):
        names.add(args[0])  # `git mv` refused (untracked) -> plain `mv`
    elif name == "cmake" and "--build" in tokens:
        names.add("build")
    elif name in ("npm", "pnpm", "yarn", "bun") and args:
        if args[0] in ("run", "run-script", "exec", "x") and len(args) > 1:
            names.add(canonical_program(args[1]))
        elif name != "npm" and args[0] not in _JS_PM_SUBCOMMANDS:
            names.add(canonical_program(args[0]))  # `yarn prettier` runs prettier
    return names


def _script_stem(name: str, first: str, args: list[str]) -> str:
    """Stem of the script a segment runs, directly or through an interpreter.

    `./stage-label.sh x` and `python3 scripts/stage-label.py x` both run
    "stage-label": one job whose implementation the agent switched.
    """
    target = (args[0] if args else "") if name in _INTERPRETERS else first
    if not _path_like(target):
        return ""
    base = target.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, ext = base.rpartition(".")
    if not dot or not stem or not ext.isalnum() or len(ext) > 4:
        return ""
    return stem.lower()


# ---------------------------------------------------------------------------
# Substantive tokens


# Words of inline code (`python -c`, `node -e`) that say nothing about the job.
CODE_WORDS = frozenset({
    "import", "print", "return", "lambda", "class", "while", "yield", "async", "await", "const",
    "function", "require", "except", "raise", "assert", "global", "finally", "continue", "break",
    "false", "undefined", "console.log", "export", "default", "string", "number", "object",
    "throw", "catch", "sys.exit", "sys.argv", "sys.path", "json.dumps", "json.loads", "json.load",
    "range", "format",
})


@functools.cache
def _word_split_re() -> re.Pattern[str]:
    # Keeps paths, URLs, dotted names and package specs whole; splits code and prose.
    return re.compile(r"[^\w./:@~+-]+")


def _substantive(parts: Sequence[Sequence[str]]) -> set[str]:
    """substantive_tokens() over already parsed parts."""
    programs = {canonical_program(p[0]) for p in parts} | {p[0].lower() for p in parts}
    found: set[str] = set()
    for tokens in parts:
        for token in tokens[1:]:
            if token.startswith("-"):
                continue  # a flag (and `--opt=value` with it)
            for word in _word_split_re().split(token.lower()):
                word = word.strip(".:/")
                if not word or word.startswith("-") or TRUNCATION in word:
                    continue  # an inner flag, or a word cut off by an export
                candidates = [word]
                if "/" in word:
                    candidates.append(word.rsplit("/", 1)[-1])  # a path also counts by its basename
                for cand in candidates:
                    if (len(cand) >= 5 and not cand.isdigit() and cand not in NOISE_WORDS
                            and cand not in CODE_WORDS and cand not in programs):
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
    clean_a, clean_b = normalize_command(_clean(a)), normalize_command(_clean(b))
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


_BACKING_OUT = frozenset({"--abort", "--quit", "--continue", "--skip"})


def is_retry(failed: str, ok: str) -> bool:
    """Is the successful command `ok` a (corrected) retry of the failed command?

    1. The same command again is one (a fix happened in between; is_same_command).
    2. Same job: some working segment of `ok` runs the failed command's main
       program (wrappers removed, see engine.shell.unwrap; `python`≈`python3`,
       `npm`≈`pnpm`≈`yarn`≈`bun`, `pip`≈`uv pip`, `make`≈`cmake --build`,
       `docker compose`≈`docker-compose`, `yarn X`≈`X`, `./x.sh`≈`python x.py`)
       with a compatible subcommand (`build` vs `lint` is another job; typos,
       prefixes and aliases such as `i`/`install` are not). The retry may prefix
       a fix: `pip install x && pytest`, `git fetch o b && git checkout b`.
    3. Not a retry: a read-only `ok` after a failure that was not read-only
       (`git status` after `git commit` is looking around), backing out
       (`git rebase --abort`, `--continue`, `--skip`), or the same command on
       another, unrelated path (`pytest tests/unit` -> `pytest tests/integration`).
    4. Then any of: the failed command's words reappear in order in the retry
       with more added (`cargo build` -> `cargo build --release`); a normalised
       edit ratio <= 0.40 (whole commands, or the main segment against its
       counterpart); a shared substantive token (see substantive_tokens).
    """
    if not failed or not ok or not failed.strip() or not ok.strip():
        return False
    if is_same_command(failed, ok):
        return True
    failed_parts, ok_parts = _parts(failed), _parts(ok)
    if not failed_parts or not ok_parts:
        return False
    main = failed_parts[0]
    wanted = _identities(main)
    matching = [
        tokens for tokens in ok_parts
        if wanted & _identities(tokens) and _verbs_compatible(main, tokens) and not _other_target(main, tokens)
    ]
    if not matching or any(t in _BACKING_OUT for tokens in ok_parts for t in tokens[1:]):
        return False
    if is_read_only(ok) and not is_read_only(failed):
        return False  # looking around after a failure (`git status`, `docker logs`) is not a retry
    main_text = _core_text([main])
    for tokens in matching:
        if len(main) >= 2 and _is_subsequence(main[1:], tokens[1:]):
            return True
        if _close(main_text, _core_text([tokens])):
            return True
    if _close(_core_text(failed_parts), _core_text(ok_parts)):
        return True
    return bool(_substantive(failed_parts) & _substantive(ok_parts))


# Edit distance is quadratic-ish: long scripts and heredocs are compared by their start,
# which names the job (`cat > f <<EOF`, `python - <<PY\nimport x`), keeping a pair under 5 ms.
_RATIO_SPAN = 1000


def _close(a: str, b: str) -> bool:
    return within_ratio(a[:_RATIO_SPAN], b[:_RATIO_SPAN])


def _is_subsequence(needle: Sequence[str], haystack: Sequence[str]) -> bool:
    """Do all words of needle appear in haystack, in order?"""
    rest = iter(haystack)
    return all(any(word == other for other in rest) for word in needle)


def _path_like(token: str) -> bool:
    """Looks like a file or folder (`src/x`, `app.py`), not code, prose or a version."""
    if not token or any(c.isspace() or c in "()'\",;=<>|&$`{}" for c in token):
        return False  # code, a message or an expression, not a path
    if "/" in token or "\\" in token:
        return True
    stem, dot, ext = token.rpartition(".")
    return bool(dot and stem and ext) and any(c.isalpha() for c in ext) and ext.isalnum()


def _other_target(a: Sequence[str], b: Sequence[str]) -> bool:
    """Same command line with exactly one path swapped for an unrelated one."""
    if len(a) != len(b):
        return False
    diffs = [(x, y) for x, y in zip(a[1:], b[1:]) if x != y]
    if len(diffs) != 1:
        return False
    x, y = diffs[0]
    if not (_path_like(x) and _path_like(y)):
        return False
    if same_path(x, y):
        return False
    x_key, y_key = _path_key(x), _path_key(y)
    if x_key.startswith(y_key + "/") or y_key.startswith(x_key + "/") or x_key == y_key:
        return False  # one is inside the other: narrowing or widening the same target
    return not paths_related(x, y)


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


def _same_dir(key_a: str, key_b: str) -> bool:
    """Same folder, allowing a bare name or a relative path against an absolute one."""
    dir_a = key_a.rsplit("/", 1)[0] if "/" in key_a else ""
    dir_b = key_b.rsplit("/", 1)[0] if "/" in key_b else ""
    if dir_a == dir_b or not dir_a or not dir_b:
        return True
    return dir_a.endswith("/" + dir_b) or dir_b.endswith("/" + dir_a)


def paths_related(a: str, b: str) -> bool:
    """Is path `b` a likely correction of path `a` (Read/Edit/Write/Glob/Grep retry)?

    Never for the same path (see same_path). Related when the basenames are the
    same in different directories (`src/app.py` -> `app/app.py`); or, in the same
    directory (a bare name or a relative path matches any), when the stems are
    the same with another extension (`config.yml` -> `config.yaml`) or a likely
    typo of each other with the same extension: both at least 3 characters and
    within an edit distance of max(1, len // 4). The extension is compared
    separately so `ab.py`/`cd.py` (headroom's false positive) is not a typo, and
    `models/user_spec.rb` -> `requests/users_spec.rb` (two changes) is not one.
    """
    if not a or not b or same_path(a, b):
        return False
    key_a, key_b = _path_key(a), _path_key(b)
    base_a, base_b = key_a.rsplit("/", 1)[-1], key_b.rsplit("/", 1)[-1]
    if not base_a or not base_b or base_a in (".", "..") or base_b in (".", ".."):
        return False
    if base_a == base_b:
        return True
    if not _same_dir(key_a, key_b):
        return False  # a typo sits in one place: a new name in another folder is another file
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
    "file", "tree", "printenv", "env", "man", "help", "du", "df", "diff", "cmp", "comm", "date",
    "cal", "whoami", "id", "groups", "uname", "hostname", "uptime", "ps", "pgrep", "lsof", "jq",
    "yq", "uniq", "cut", "tr", "awk", "gawk", "sed", "gsed", "column", "nl", "basename", "dirname",
    "realpath", "readlink", "history", "sha1sum", "sha256sum", "sha512sum", "md5sum", "md5",
    "shasum", "cksum", "xxd", "hexdump", "od", "strings", "test", "[", "[[", "true", "false",
    "sleep", "nproc", "free", "lscpu", "locale", "seq", "expr", "getconf", "ldd", "otool", "nm",
    "objdump", "readelf", "netstat", "ss", "dig", "nslookup", "host", "ping", "zcat", "zgrep",
    "tac", "rev", "paste", "join", "fold", "command", "compgen", "declare", "sw_vers",
    "lsb_release", "where", "tasklist", "get-childitem", "get-content", "select-string",
    "get-command", "get-location", "test-path",
})
# `<program> <first word>` forms that only read.
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
    "cargo": frozenset({"tree", "metadata", "search", "help", "locate-project", "pkgid", "verify-project"}),
    "go": frozenset({"list", "env", "version", "doc", "help", "vet"}),
    "docker": frozenset({
        "ps", "images", "logs", "inspect", "version", "info", "stats", "top", "port", "history", "search",
    }),
    "kubectl": frozenset({
        "get", "describe", "logs", "top", "explain", "version", "api-resources", "cluster-info",
    }),
    "brew": frozenset({
        "list", "ls", "info", "search", "deps", "uses", "outdated", "config", "doctor", "leaves", "desc",
    }),
    "apt": frozenset({"list", "show", "search", "policy", "depends", "rdepends"}),
    "apt-cache": frozenset({"search", "show", "policy", "depends", "rdepends", "madison", "showpkg"}),
    "conda": frozenset({"list", "info", "search"}),
    "uv": frozenset({"tree", "version", "help"}),
    "poetry": frozenset({"show", "check", "env", "about", "search"}),
    "docker-compose": frozenset({"ps", "logs", "config", "images", "top", "ls", "version", "port"}),
    "systemctl": frozenset({"status", "is-active", "is-enabled", "list-units", "show", "cat"}),
    "rustup": frozenset({"show", "which"}),
}
# Git subcommands that only list without a name argument (`git branch` vs `git branch x`).
_GIT_LISTING_FLAGS = frozenset({
    "-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all", "--remotes", "--merged",
    "--no-merged", "--contains", "--get", "--get-all", "--get-regexp", "--show-origin", "-n",
})
_GIT_LISTING_WORDS = {"remote": frozenset({"show", "get-url"}), "stash": frozenset({"list", "show"}),
                      "worktree": frozenset({"list"}), "submodule": frozenset({"status", "summary"})}
_MUTATING_PROGRAMS = frozenset({
    "mkdir", "rmdir", "touch", "cp", "mv", "ln", "rm", "chmod", "chown", "chgrp", "install", "tee",
    "dd", "truncate", "patch", "unzip", "gunzip", "bunzip2", "unxz", "7z", "rsync", "scp", "wget",
    "export", "unset", "source", ".", "alias", "unalias", "eval", "set", "ulimit", "umask",
    "kill", "pkill", "killall", "createdb", "dropdb", "createuser", "initdb", "ssh-keygen",
    "ssh-add", "direnv", "deactivate", "cd", "pushd", "popd", "crontab", "update-alternatives",
    "ldconfig", "setx", "new-item", "set-content", "remove-item", "copy-item", "move-item",
    "set-executionpolicy", "configure", "autoreconf", "meson", "ninja", "make", "gmake", "cmake",
    "bazel", "corepack", "black", "isort", "autopep8", "rustfmt",
})
# Words among a tool's first arguments that mean it changes state (`gcloud components
# install`, `alembic upgrade head`, `docker compose up`, `python manage.py migrate`).
_MUTATING_VERBS = frozenset({
    "install", "i", "add", "remove", "uninstall", "rm", "update", "upgrade", "up", "down", "init",
    "setup", "create", "generate", "migrate", "makemigrations", "sync", "lock", "apply", "enable",
    "disable", "start", "restart", "stop", "set", "use", "activate", "build", "compile", "clean",
    "configure", "login", "logout", "link", "unlink", "pull", "push", "fetch", "deploy",
    "reset", "rebuild", "bootstrap", "prepare", "download", "tidy", "vendor", "seed", "develop",
    "tap", "pin", "default", "venv", "new", "revision", "stamp", "downgrade", "db:migrate",
    "db:setup", "db:create", "db:seed", "db:push", "db:reset", "collectstatic", "ci", "dedupe",
    "prune", "kill", "rmi", "tag", "commit", "save", "delete", "fix", "fmt", "format",
})
# Targets and scripts that check rather than change (`make test`, `npm run lint`).
_CHECK_WORDS = frozenset({"test", "tests", "check", "lint", "run", "show", "list", "status", "help",
                          "version", "dev", "serve", "preview", "typecheck", "-n"})
_FIX_FLAGS = frozenset({"--fix", "--write", "--apply", "--in-place", "--fix-only", "--unsafe-fixes"})
_VERSION_MANAGERS = frozenset({"conda", "mamba", "micromamba", "nvm", "pyenv", "rbenv", "nodenv",
                               "fnm", "volta", "asdf", "mise", "sdk", "rustup"})


@functools.cache
def _python_write_re() -> re.Pattern[str]:
    # Inline Python (`python -c`, `python - <<EOF`) that writes or moves files.
    return re.compile(
        r"""open\([^)]*,\s*(?:mode\s*=\s*)?['"][wax]"""
        r"|\.write_(?:text|bytes)\("
        r"|\bos\.(?:remove|unlink|rename|replace|makedirs|mkdir|rmdir)\("
        r"|\bshutil\.(?:copy\w*|move|rmtree)\("
        r"|\.(?:mkdir|unlink|touch|rename)\("
        r"|\b(?:json|pickle|yaml)\.dump\("
        r"|\.to_(?:csv|parquet|json|excel)\(|savefig\("
    )


def _writes_to_file(segment: str) -> bool:
    """Does the segment redirect output into a file (`>`, `>>`, `&>`, not /dev/*)?

    Only the command line counts: a heredoc body is data (`if a > b:`).
    """
    if ">" not in segment:
        return False
    if "<<" in segment:
        segment = segment.split("\n", 1)[0]
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
        elif ch == ">":
            j = i + 1
            if j < n and segment[j] in ">|":
                j += 1
            if j < n and segment[j] == "&":  # `>&2`, `2>&1`: a descriptor copy
                i = j + 1
                continue
            target = tokenize(segment[j:].split("<<", 1)[0])[:1]
            if target and not target[0].startswith("/dev/"):
                return True
            i = j
            continue
        i += 1
    return False


def _first_args(tokens: Sequence[str], count: int = 3) -> list[str]:
    """The first few words after the program that are neither options nor assignments."""
    args: list[str] = []
    for tok in tokens[1:]:
        if tok.startswith("-") or ("=" in tok and not tok.startswith("db:")):
            continue
        args.append(tok.lower())
        if len(args) == count:
            break
    return args


def _asks_version_or_help(name: str, tokens: Sequence[str]) -> bool:
    """`X --version`, `X -V`, `X --help`, `X help`, `node -v` (not `pytest -v`)."""
    rest = tokens[1:]
    if not rest or len(rest) > 2:
        return False
    flags = {"--version", "-V", "--help", "-h", "-help", "/?"}
    if len(rest) == 1 and rest[0] in ("version", "help"):
        return True
    if len(rest) == 1 and rest[0] == "-v" and name in ("node", "npm", "pnpm", "yarn", "bun", "deno", "nvm"):
        return True
    return rest[-1] in flags or rest[0] in flags


_GIT_MUTATING = frozenset({
    "checkout", "switch", "pull", "fetch", "reset", "restore", "add", "rm", "mv", "commit", "merge",
    "rebase", "cherry-pick", "revert", "init", "clone", "apply", "am", "push", "clean", "lfs",
    "sparse-checkout", "update-index", "gc", "prune", "notes", "bisect", "filter-branch",
    "filter-repo", "update-ref",
})


def _git_verdict(tokens: Sequence[str]) -> bool | None:
    """True mutating, False read-only, None unknown."""
    i = 1
    while i < len(tokens) and tokens[i].startswith("-"):
        i += 2 if tokens[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    if i >= len(tokens):
        return False  # `git --version`, bare `git`
    sub, rest = tokens[i].lower(), tokens[i + 1 :]
    if sub in _READ_ONLY_SUBCOMMANDS["git"]:
        return False
    words = [t for t in rest if not t.startswith("-")]
    if sub in ("branch", "tag"):
        listing = not words or any(t in _GIT_LISTING_FLAGS for t in rest)
        return not listing or any(t in ("-d", "-D", "-m", "-M", "--delete", "--move", "-f") for t in rest)
    if sub == "config":
        return not any(t in _GIT_LISTING_FLAGS for t in rest) and len(words) >= 2
    if sub in _GIT_LISTING_WORDS:
        if not words:
            return sub == "stash"  # a bare `git stash` stashes; `git remote`/`submodule` list
        return words[0] not in _GIT_LISTING_WORDS[sub]
    return True if sub in _GIT_MUTATING else None


def _tar_lists(tokens: Sequence[str]) -> bool:
    """`tar tzf x`, `tar -t …`, `tar --list …`: listing an archive, not extracting or creating."""
    if "--list" in tokens or "-t" in tokens:
        return True
    mode = tokens[1] if len(tokens) > 1 else ""
    return not mode.startswith("--") and "t" in mode.lstrip("-") and not any(c in mode for c in "cxru")


def _curl_saves(tokens: Sequence[str]) -> bool:
    """`curl -o f`, `-O`, `-fsSLO`, `--output f`: a download that leaves a file behind."""
    for tok in tokens[1:]:
        if tok.startswith("--"):
            if tok.split("=", 1)[0] in ("--output", "--remote-name", "--remote-name-all", "--output-dir"):
                return True
        elif tok.startswith("-") and ("o" in tok or "O" in tok):
            return True
    return False


def _segment_verdict(tokens: Sequence[str], segment: str) -> bool | None:
    """True mutating, False read-only, None neither (tests, scripts, servers, network)."""
    if _writes_to_file(segment):
        return True
    name = canonical_program(tokens[0])
    args = _first_args(tokens)
    if name in ("sed", "gsed", "perl", "ruby") and any(
        t.startswith("-i") or t.startswith("--in-place") or t.startswith("-pi") for t in tokens[1:]
    ):
        return True
    if name == "find":
        for flag in ("-exec", "-execdir", "-ok"):
            if flag in tokens:
                inner = tokens[tokens.index(flag) + 1 :]
                return bool(inner) and _segment_verdict(inner, " ".join(inner)) is True
        return "-delete" in tokens
    if name == "sort":
        return any(t == "-o" or t.startswith("--output") for t in tokens)
    if name in _READ_ONLY_PROGRAMS:
        return False
    if name == "tar":
        return not _tar_lists(tokens)
    if name == "curl":
        return True if _curl_saves(tokens) else None
    if name == "git":
        return _git_verdict(tokens)
    if _asks_version_or_help(name, tokens):
        return False
    if name in _MUTATING_PROGRAMS:
        if name in ("make", "gmake", "ninja") and args and args[0] in _CHECK_WORDS:
            return None
        return True
    if name == "python" and _python_write_re().search(segment):
        return True
    read_only = _READ_ONLY_SUBCOMMANDS.get(name)
    if read_only is not None and args and args[0] in read_only:
        return False
    if any(t in _FIX_FLAGS for t in tokens[1:]) or name in ("gofmt", "prettier") and "-w" in tokens:
        return True
    if name in ("npm", "pnpm", "yarn", "bun") and args and args[0] in ("run", "run-script"):
        script = args[1].replace(":", " ").split() if len(args) > 1 else []
        return True if any(w in _MUTATING_VERBS and w not in _CHECK_WORDS for w in script) else None
    if name in ("docker", "podman") and args[:1] == ["run"] or name == "go" and args[:1] == ["get"]:
        return True
    if any(arg in _MUTATING_VERBS for arg in args):
        return True
    if name in _VERSION_MANAGERS and args and args[0] not in ("list", "ls", "info", "current", "which", "show", "env"):
        return True  # `nvm use 20`, `pyenv local 3.11`, `conda activate x`: the active toolchain
    return None


def _verdict_form(tokens: Sequence[str]) -> list[str]:
    """`docker compose logs` judged as `docker-compose logs`; bare `yarn` is `yarn install`."""
    name = canonical_program(tokens[0])
    if name in ("docker", "podman") and len(tokens) > 1 and tokens[1] == "compose":
        return ["docker-compose", *tokens[2:]]
    if name == "yarn" and len(tokens) == 1:
        return ["yarn", "install"]
    return tokens


def _is_setup(tokens: Sequence[str]) -> bool:
    """cd/source/export/set…: a segment that prepares the shell for the next one."""
    return bool(tokens) and canonical_program(tokens[0]) in SETUP_PROGRAMS


@functools.lru_cache(maxsize=256)
def _verdicts(command: str) -> tuple[bool | None, ...]:
    """One verdict per working segment; setup prefixes serve the segment after them.

    A line made only of setup (`cd backend`, `source .venv/bin/activate`) is one
    mutating verdict: the agent's shell keeps that state for the next command.
    """
    pairs = []
    for text, _op in split_segments_ops(_clean(command)):
        tokens = unwrap_tokens(tokenize(text))
        if tokens:
            pairs.append((_verdict_form(tokens), text))
    if not pairs:
        return ()
    if all(_is_setup(tokens) for tokens, _ in pairs):
        return (True,)
    return tuple(_segment_verdict(tokens, text) for tokens, text in pairs if not _is_setup(tokens))


def is_mutating(command: str) -> bool:
    """Does the command change state that later commands see? (Rule above.)"""
    return any(verdict is True for verdict in _verdicts(command or ""))


def is_read_only(command: str) -> bool:
    """Does every working segment only read, with nothing written to a file? (Rule above.)"""
    verdicts = _verdicts(command or "")
    return bool(verdicts) and all(verdict is False for verdict in verdicts)
