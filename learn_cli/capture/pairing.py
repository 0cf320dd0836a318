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

from learn_cli.engine.distance import RETRY_RATIO, edit_ratio, levenshtein, within_ratio
from learn_cli.engine.effects import is_mutating, is_read_only
from learn_cli.engine.shell import (
    SETUP_PROGRAMS,
    TRUNCATION,
    canonical_program,
    clean_command,
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
# Command parts: what a command does, without setup, wrappers and output plumbing


@functools.lru_cache(maxsize=256)
def _parts(command: str) -> tuple[tuple[str, ...], ...]:
    """Token lists of the working segments of a command (cached: the hook compares
    one success with several failures).

    Leading setup segments (`cd DIR &&`, `source X &&`) are dropped, each segment
    is unwrapped (`uv run pytest` -> `pytest`), `| head`/`| tail` filters and
    stderr plumbing (`2>&1`, `2>/dev/null`) are removed.
    """
    parts: list[tuple[str, ...]] = []
    for text, op in split_segments_ops(clean_command(command)):
        tokens = unwrap_tokens(tokenize(text))
        if not tokens:
            continue
        name = canonical_program(tokens[0])
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
    clean_a, clean_b = normalize_command(clean_command(a)), normalize_command(clean_command(b))
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


