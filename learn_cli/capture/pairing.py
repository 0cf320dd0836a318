"""Is this success a retry of that failure? Building blocks for session pairing.

SPEC §2.4. The session-level logic (look back over the last events, consume a
failure with its first fix, collect the fix in between) lives in capture/learner.py;
this module answers the per-pair questions precisely:

- `is_retry(failed, ok)`: the same job again or corrected (rules in its docstring;
  see docs/design-notes.md, "Retry pairing, revised").
- `is_diagnostic(failed, ok)`: the same job rerun to look at it, never a retry.
- `is_same_command(a, b)`: the same command again (a fix happened in between).
- `paths_related(a, b)`, `same_path`, `mentions_path`: path-tool retries.
- `found_by_search(failed_path, search_input, search_output)`: the path a search
  found after a failed Read.

The command analysis it stands on lives in engine/: shell (segments, wrappers,
plumbing), effects (`is_mutating` / `is_read_only`, re-exported here), goals
(goal families), distance (edit distance, re-exported here).

Stdlib only, cheap to import, nothing compiled at import time.
"""

from __future__ import annotations

from learn_cli.engine.distance import RETRY_RATIO, edit_ratio, levenshtein, within_ratio
from learn_cli.engine.goals import RUN, TEST, goal, option_mode, other_packages, other_tests, same_job, targets
from learn_cli.text import lite, rx
from learn_cli.text.effects import is_mutating, is_read_only
from learn_cli.text.shell import (
    FILE_PROGRAMS,
    INLINE_CODE_FLAGS,
    INTERPRETERS,
    JS_PACKAGE_MANAGERS,
    OUTPUT_SHAPERS,
    PM_FOLDER_OPTIONS,
    RUN_SCRIPT,
    SETUP_PROGRAMS,
    TRUNCATION,
    canonical_program,
    clean_command,
    in_container,
    line_run,
    normalize_command,
    path_name,
    powershell_chained,
    program,
    script_name,
    shell_word,
    split_segments_ops,
    strip_plumbing,
    tokenize,
    unwrap,
    unwrap_tokens,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "program",
    "edit_ratio",
    "within_ratio",
    "levenshtein",
    "substantive_tokens",
    "is_same_command",
    "is_retry",
    "added_environment",
    "is_diagnostic",
    "only_looked",
    "path_like",
    "found_by_search",
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
#   apt/apt-get, yum/dnf: the same system package manager.
#   mvnw/gradlew: the project's pinned copy of mvn/gradle (`mvn: command not found` -> `./mvnw`).
#   rg/ag/grep/Select-String/findstr: one search, by whichever tool is installed (`rg: command not
#     found` -> `grep -r`; in PowerShell, `Select-String`).
_FAMILIES = {
    "npm": "js-pm", "pnpm": "js-pm", "yarn": "js-pm", "bun": "js-pm",
    "pip": "pip",
    "apt": "apt", "apt-get": "apt", "aptitude": "apt", "yum": "dnf", "dnf": "dnf",
    "mvn": "mvn", "mvnw": "mvn", "gradle": "gradle", "gradlew": "gradle",
    "rg": "search", "ag": "search", "grep": "search", "select-string": "search", "sls": "search",
    "findstr": "search",
    "mkdir": "mkdir", "md": "mkdir", "new-item": "mkdir",  # PowerShell's `mkdir -p a b` fails
    "rm": "remove", "remove-item": "remove", "ri": "remove", "del": "remove", "erase": "remove",  # and `rm -rf`
    "tree": "list", "ls": "list", "eza": "list", "exa": "list", "lsd": "list", "dir": "list",  # `tree` missing
    "get-childitem": "list", "gci": "list",  # PowerShell's `ls -la`
    "mv": "move", "move": "move", "move-item": "move",  # cmd's `move` in Git Bash: command not found
    "cp": "copy", "copy": "copy", "copy-item": "copy",
    "cat": "show", "type": "show", "get-content": "show", "gc": "show",  # cmd's `type` in Git Bash (round 18)
    "venv": "venv", "virtualenv": "venv",  # `python3 -m venv` without ensurepip (Debian), then virtualenv
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


@lite.lru_cache(maxsize=256)
def _parts(command: str) -> tuple[tuple[str, ...], ...]:
    """Token lists of the working segments of a command (cached: the hook compares
    one success with several failures).

    Leading setup segments (`cd DIR &&`, `source X &&`) are dropped, each segment
    is unwrapped (`uv run pytest` -> `pytest`), `| head`/`| tail` filters and
    stderr plumbing (`2>&1`, `2>/dev/null`) are removed.
    """
    parts: list[tuple[str, ...]] = []
    for text, op in split_segments_ops(clean_command(powershell_chained(command))):
        raw = tokenize(text)
        line = line_run(raw) if len(raw) > 2 else ""
        if line:  # `npx -p node@20 -c 'node -v && yarn build'`: the steps of that line
            parts.extend(_parts(line))
            continue
        tokens = unwrap_tokens(raw)
        if not tokens:
            continue
        name = canonical_program(tokens[0])
        if not parts and name in SETUP_PROGRAMS and op in ("&&", ";", "\n", "&"):
            continue
        if name in _PAUSES:
            continue  # `sleep 1` waits for another step: `pkill -f vite; sleep 1` and `vite & sleep 3`
            # share no job
        parts.append(tuple(_canonical_form(name, tokens)))
    return tuple(parts)


# Segments that only wait for another one; they do no job of their own.
_PAUSES = frozenset({"sleep"})


def _canonical_form(name: str, tokens: Sequence[str]) -> list[str]:
    """Spellings of one command made equal: `npm run test` -> `npm test`, `npm ci` -> `npm install`,
    `uv pip` -> `pip`."""
    if script_name(tokens):
        return [tokens[0], *tokens[2:]]
    if name in JS_PACKAGE_MANAGERS and len(tokens) > 1 and tokens[1] in _VERB_ALIASES:
        return [tokens[0], _VERB_ALIASES[tokens[1]], *tokens[2:]]  # `npm ci`, `npm i` -> `npm install`
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


# Options of multi-command tools that take a value before the subcommand.
_GLOBAL_VALUE_OPTIONS = frozenset({
    "-C", "-c", "--dir", "--prefix", "--filter", "-F", "-w", "--workspace", "--git-dir",
    "--work-tree", "--manifest-path", "--directory", "--project", "-f", "--file", "-H",
    "--context", "--namespace", "-n", "--profile", "--region", "--cwd", "--token", "-pl", "--projects",
})  # (`-pl`: maven's modules, `mvn -pl api clean package`)
# Subcommand spellings that mean the same thing.
_VERB_ALIASES = {"i": "install", "add": "install", "ci": "install", "rm": "remove", "uninstall": "remove",
                 "un": "remove", "t": "test", "tst": "test", "run-script": "run", "ls": "list",
                 "switch": "checkout"}


def _verb(tokens: Sequence[str]) -> str:
    """The first positional word (a subcommand when the tool has them), or ''.

    For an interpreter running a script it is the script's own first word
    (`python manage.py migrate` -> `migrate`).
    """
    positional = _positional(tokens, 2)
    if positional and canonical_program(tokens[0]) in INTERPRETERS and path_like(positional[0]):
        positional = positional[1:]
    return positional[0].lower() if positional else ""


def _positional(tokens: Sequence[str], count: int, value_options: frozenset = _GLOBAL_VALUE_OPTIONS) -> list[str]:
    """The first `count` arguments that are not options (nor the values of `value_options`)."""
    found: list[str] = []
    i = 1
    while i < len(tokens) and len(found) < count:
        tok = tokens[i]
        if tok.startswith("-"):
            i += 2 if tok in value_options and not (tok == "-w" and canonical_program(tokens[0]) == "pnpm") else 1
            continue  # (pnpm's `-w` is its workspace root, a flag: npm's names a workspace)
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
    if option_mode(a) != option_mode(b):
        return False  # `cmake -B build` configures, `cmake --build build` builds
    verb_a, verb_b = _verb(a), _verb(b)
    if not _word_like(verb_a) or not _word_like(verb_b):
        return True
    verb_a, verb_b = _VERB_ALIASES.get(verb_a, verb_a), _VERB_ALIASES.get(verb_b, verb_b)
    if verb_a == verb_b:
        return _discards(a) == _discards(b)
    if verb_a.startswith(verb_b) or verb_b.startswith(verb_a):
        return True
    # An option value may have been taken for the verb (`flask --app app run`).
    if verb_a in (w.lower() for w in _positional(b, 2)) or verb_b in (w.lower() for w in _positional(a, 2)):
        return True
    longest = max(len(verb_a), len(verb_b))
    return levenshtein(verb_a, verb_b) <= (1 if longest <= 4 else max(2, longest // 4))


# Actions that throw away what a group subcommand keeps (`git stash drop`, `git worktree prune`).
_DISCARDING = frozenset({"drop", "clear", "clean", "remove", "rm", "delete", "prune", "destroy", "purge"})


def _discards(tokens: Sequence[str]) -> bool:
    """Is the word after the subcommand an action that throws away (`git stash drop`)? Dropping
    the stash that `git stash pop` could not apply cleanly is no retry of the pop (round 21);
    `git worktree prune` after `git worktree remove` failed throws away as the remove would."""
    words = _positional(tokens, 2)
    return len(words) == 2 and words[1].lower() in _DISCARDING


def _identities(tokens: Sequence[str]) -> set[str]:
    """Names under which a segment's program counts as "the same program"."""
    name = canonical_program(tokens[0])
    names = {name, _FAMILIES.get(name, name)}
    args = [t for t in tokens[1:] if not t.startswith("-")]
    script = _script_stem(name, tokens[0], args)
    if script:
        names.add("script:" + script)
    if name == "uv" and args[:1] in (["pip"], ["venv"]):
        names.add(args[0])  # `uv pip install` is pip's job, `uv venv` venv's
    elif name in ("rg", "grep") and "--files" in tokens:
        # `rg --files` lists files (rg missing on Windows, then `Get-ChildItem -Recurse -File`);
        # by their names it finds them, as `find -name` does: `rtk grep --files -g AGENTS.md`
        # (GNU grep has no --files), then `find … -name AGENTS.md` (round 35)
        names.update(("list", "find-files"))
    elif name == "find" and "-name" in tokens:
        names.add("find-files")  # (not "list": `find -name x` after `ls x` failed is looking for it)
    elif name == "git" and args[:1] in (["mv"], ["rm"]):
        names.add(args[0])  # `git mv` refused (untracked) -> plain `mv`
    elif name in JS_PACKAGE_MANAGERS and args:
        if (args[0] in RUN_SCRIPT or args[0] in ("exec", "x")) and len(args) > 1:
            names.add(canonical_program(args[1]))
        elif name != "npm" and args[0] not in _JS_PM_SUBCOMMANDS:
            names.add(canonical_program(args[0]))  # `yarn prettier` runs prettier
    return names


def _script_stem(name: str, first: str, args: list[str]) -> str:
    """Stem of the script a segment runs, directly or through an interpreter.

    `./stage-label.sh x` and `python3 scripts/stage-label.py x` both run
    "stage-label": one job whose implementation the agent switched.
    """
    target = (args[0] if args else "") if name in INTERPRETERS else first
    if name not in INTERPRETERS and target.replace("-", "_").isidentifier() and len(target) >= 4:
        return target.lower()  # a bare name (uv's "Failed to spawn: `weather`", then `python weather.py`)
    if name not in INTERPRETERS and _dotted_module(target):
        return target.rsplit(".", 1)[-1].lower()  # `python -m app.main` runs app/main.py
    if not path_like(target):
        return ""
    base = path_name(target)
    stem, dot, ext = base.rpartition(".")
    if not dot or not stem or not ext.isalnum() or len(ext) > 4:
        return ""
    return stem.lower()


def _script_run_otherwise(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """One script with the same arguments, run another way: `python3 app/main.py` ("attempted
    relative import with no known parent package"), then `python3 -m app.main`; `./stage.sh x`,
    then `python3 stage.py x`. How it is run is the change."""
    if not _script_identity(failed) or _script_identity(failed) != _script_identity(ok):
        return False
    module = next((t[0] for t in (failed, ok) if _dotted_module(t[0])), "")
    if module and not any(_path_key(t[1]).rsplit(".", 1)[0].endswith(module.replace(".", "/"))
                          for t in (failed, ok) if len(t) > 1):
        return False  # `python3 -m app.main` is app/main.py, not tools/main.py
    return _script_arguments(failed) == _script_arguments(ok)


def _script_identity(tokens: Sequence[str]) -> str:
    return next((name for name in _identities(tokens) if name.startswith("script:")), "")


def _script_arguments(tokens: Sequence[str]) -> list[str]:
    """The words after the script (an interpreter's own options and the script itself left out)."""
    words = list(tokens[1:])
    if canonical_program(tokens[0]) in INTERPRETERS:
        while words and words[0].startswith("-"):
            words.pop(0)
        words = words[1:]
    return words


# What a program run by its file name ends with; any other dotted name a command starts with is
# a module that `python -m` ran (unwrapped to it: `python3 -m app.main` -> `app.main`).
_FILE_SUFFIXES = frozenset({"py", "sh", "bash", "zsh", "js", "mjs", "cjs", "ts", "rb", "pl", "php", "ps1", "bat",
                            "cmd", "exe", "jar", "bin", "out", "app", "x86_64", "appimage"})


def _dotted_module(name: str) -> bool:
    """`app.main`, `http.server`: a package's module, not a file (`build.sh`) nor a path."""
    words = name.split(".")
    return (len(words) >= 2 and all(w.isidentifier() for w in words)
            and words[-1].lower() not in _FILE_SUFFIXES)


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


@lite.cache
def _word_split_re() -> rx.Pattern[str]:
    # Keeps paths, URLs, dotted names and package specs whole; splits code and prose.
    return rx.compile(r"[^\w./:@~+-]+")


# Tools whose first word is a subcommand (`npm install`, `git commit`, `cargo build`).
_SUBCOMMAND_TOOLS = frozenset({
    "git", "gh", "npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "pip", "uv", "poetry", "pdm", "conda",
    "docker", "docker-compose", "podman", "kubectl", "helm", "brew", "apt", "apt-get", "dnf", "yum", "gem",
    "bundle", "forge", "nargo", "dotnet", "mvn", "gradle", "gcloud", "aws", "az", "terraform", "systemctl",
})


def _substantive(parts: Sequence[Sequence[str]]) -> set[str]:
    """substantive_tokens() over already parsed parts."""
    programs = {canonical_program(p[0]) for p in parts} | {p[0].lower() for p in parts}
    found: set[str] = set()
    for tokens in parts:
        verb = _verb(tokens) if canonical_program(tokens[0]) in _SUBCOMMAND_TOOLS else ""
        for token in tokens[1:]:
            if token.startswith("-") or token == verb:
                continue  # a flag (and `--opt=value` with it), or the subcommand: it says what
                # kind of thing is done (compared by _verbs_compatible), not what it is done to
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

    Both are compared without plumbing (text.shell.strip_plumbing: `2>&1 | tail`,
    `&& echo OK`, `timeout N`, …), so copies of one fix that differ only there are one.

    1. Never a retry: a diagnostic (is_diagnostic: the same job rerun to look at it,
       or with its exit status hidden), backing out (`git rebase --abort`,
       `--continue`, `--skip`), or a read-only `ok` after a failure that was not
       read-only (`git status` after `git commit` is looking around).
    2. The same command again is one (a fix happened in between; is_same_command).
    3. Same job: some working segment of `ok` runs the program of a working
       segment of the failed line (its main one, or a later step of a chain: the
       step that failed is often not the first), wrappers removed (see
       text.shell.unwrap; `python`≈`python3`, `npm`≈`pnpm`≈`yarn`≈`bun`,
       `pip`≈`uv pip`, `docker compose`≈`docker-compose`, `yarn X`≈`X`,
       `mvn`≈`./mvnw`, `rg`≈`grep`, `npm ci`≈`npm install`,
       `./x.sh`≈`python x.py`) with a compatible subcommand (`build` vs `lint` is
       another job; typos, prefixes and aliases such as `i`/`install` are not),
       and not the same command on another, unrelated path (`pytest tests/unit`
       -> `pytest tests/integration`). The retry may prefix a fix: `pip install x
       && pytest`, `git fetch o b && git checkout b`. Then any of: the failed
       segment's words reappear in order with more added (`cargo build` ->
       `cargo build --release`); a normalised edit ratio <= 0.40 (whole commands,
       or the segment against its counterpart); a shared substantive token (main
       segment only, see substantive_tokens).
    4. Or another program for one goal family, ecosystem and target
       (engine.goals.same_job): `make` -> `cmake --build build`, `pnpm --dir
       evals typecheck` -> `tsc -p evals`, `npm test` -> `npx jest`; or the same
       program on a target both name (`pip install jose` -> `pip install
       'python-jose[cryptography]'`). Test runs
       of the same runner on other tests, or of one program on other packages of a
       workspace, are another job (engine.goals.other_tests, other_packages).
    5. Or inline code that starts by importing, run again (other code) after an environment
       setup the failed line lacked (added_environment: `source .venv/bin/activate &&`).
    """
    if not failed or not ok or not failed.strip() or not ok.strip():
        return False
    in_folder = _folder_as_cd(failed), _folder_as_cd(ok)
    if in_folder != (failed, ok) and _same_folders(*in_folder) and is_retry(*in_folder):
        return True  # `pnpm --dir api lint` (pnpm not installed), then `cd api && npm run lint`
    remote = _on_one_host(failed), _on_one_host(ok)
    if remote[0] and remote[1] and remote[0][0] == remote[1][0]:
        # `ssh h 'ls data/'` then `ssh h 'mkdir -p data && npm run db:migrate'`: on one host the
        # command run there is the job (another host may be the correction: the rules below);
        # the same command run there again, with more or not, after a login or connection
        # that failed (`sshpass -p … ssh h "echo ok; whoami"`), is the ssh line corrected
        there, again = remote[0][1], remote[1][1]
        return _runs_all_of(there, again) and not is_diagnostic(there, again) or is_retry(there, again)
    failed_parts, ok_parts = _parts(failed), _parts(ok)
    backing_out = {t for tokens in ok_parts for t in tokens[1:] if t in _BACKING_OUT}
    if backing_out - {t for tokens in failed_parts for t in tokens[1:]}:
        return False  # (`git rebase --continue` that failed, run again once the files were added, is a retry)
    if _looks_at(failed, ok, failed_parts, ok_parts):
        return False
    if is_same_command(failed, ok):
        return True
    if not failed_parts or not ok_parts:
        return False
    failed_reads = is_read_only(failed)
    if is_read_only(ok) and not failed_reads:
        return False  # looking around after a failure (`git status`, `docker logs`) is not a retry
    if failed_reads and _writes_what_was_read(failed_parts, ok_parts):
        return False
    return (_retry_rules(failed_parts, ok_parts) or bool(added_environment(failed, ok))
            or _shares_a_cut_word(failed, ok, failed_parts, ok_parts) or _written_then_run(failed_parts, ok_parts)
            or _same_job_in_a_container(failed_parts, ok_parts) or _one_port_freed(failed, ok))


def _writes_what_was_read(failed_parts, ok_parts) -> bool:
    """`cat .env` (no such file), then `cat > .env << 'EOF' …`: a look that failed, then the file
    it looked for written (round 35). The file was created, not read again: no retry."""
    read = {word for tokens in failed_parts for word in tokens[1:] if not word.startswith("-")}
    return any(tokens[i] in (">", ">>") and tokens[i + 1] in read
               for tokens in ok_parts for i in range(len(tokens) - 1))


def _one_port_freed(failed: str, ok: str) -> bool:
    """`fuser -k 11501/tcp` (fuser not installed), then `lsof -ti:11501 | xargs kill -9` (or
    `kill $(lsof -t -i :11501)`, `npx kill-port 11501`): the same port freed another way
    (round 33)."""
    return bool(_ports_freed(failed) & _ports_freed(ok))


def _ports_freed(line: str) -> frozenset[str]:
    """The ports a line kills the listeners of: `fuser -k P/tcp`, `lsof … :P` fed to `kill`,
    `kill-port P`."""
    if "kill" not in line and "fuser" not in line:
        return frozenset()  # (most lines)
    ports: set[str] = set()
    for match in _port_tool_re().finditer(line):
        tool, words = match.group(1), match.group(2).split()
        if tool == "lsof" and "kill" in line:
            ports.update(port for word in words for part in word.split(":")[1:] for port in part.split(","))
        elif tool == "fuser" and "-k" in words:
            ports.update(word.split("/")[0] for word in words if word.endswith(("/tcp", "/udp")))
        elif tool == "kill-port":
            ports.update(words)
    return frozenset(port for port in ports if port.isdigit())


@lite.cache
def _port_tool_re() -> rx.Pattern[str]:
    return rx.compile(r"\b(lsof|fuser|kill-port)\b([^|;&)]*)")




def _folder_as_cd(command: str) -> str:
    """`pnpm --dir api lint` as `cd api && pnpm lint` (npm's `--prefix`, yarn's `--cwd`), for a
    line that is that command alone; any other line as it is."""
    if not any(option in command for option in PM_FOLDER_OPTIONS):
        return command  # (most lines: asked of every candidate pair on the hook path)
    segments = split_segments_ops(clean_command(command))
    if len(segments) != 1:
        return command
    tokens = tokenize(segments[0][0])
    if len(tokens) < 3 or canonical_program(tokens[0]) not in JS_PACKAGE_MANAGERS:
        return command
    option, eq, value = tokens[1].partition("=")
    if option not in PM_FOLDER_OPTIONS:
        return command
    folder, rest = (value, tokens[2:]) if eq else (tokens[2], tokens[3:])
    return f"cd {shell_word(folder)} && " + " ".join([tokens[0], *(shell_word(t) for t in rest)])


def _same_folders(a: str, b: str) -> bool:
    """The `cd` steps of two lines go to one folder (or one of them has none)."""
    folders = [[step.split(None, 1)[-1].strip("'\"").rstrip("/").rsplit("/", 1)[-1]
                for step in _setup_and_folders(line) if step.startswith("cd ")] for line in (a, b)]
    return not folders[0] or not folders[1] or folders[0] == folders[1]


def _runs_all_of(first: str, then: str) -> bool:
    """Does `then` run every step of `first`, as written (`echo ok` -> `echo ok; whoami`)?"""
    steps = {" ".join(text.split()) for text, _op in split_segments_ops(then)}
    return all(" ".join(text.split()) in steps for text, _op in split_segments_ops(first))


# Options of ssh that take a value (the others are flags: `-t`, `-q`, `-A`, `-4`).
_SSH_VALUE_OPTIONS = frozenset("-b -B -c -D -E -e -F -I -i -J -L -l -m -O -o -p -P -Q -R -S -W -w".split())


def _on_one_host(command: str) -> tuple[str, str] | None:
    """(host, the command run there) of a line that is one remote shell with its command: `ssh
    [options] host command`, `fly ssh console -a app -C command`, `gcloud compute ssh vm
    --command command`; else None."""
    if "ssh" not in command:
        return None
    segments = split_segments_ops(clean_command(command))
    if len(segments) != 1:
        return None
    tokens = unwrap_tokens(tokenize(segments[0][0]))
    name = canonical_program(tokens[0]) if tokens else ""
    if name in _REMOTE_VERBS:
        return _by_command_option(tokens)
    if name != "ssh":
        return None
    i = 1
    while i < len(tokens) and tokens[i].startswith("-"):
        i += 2 if tokens[i] in _SSH_VALUE_OPTIONS else 1
    if i + 1 >= len(tokens) or tokens[i + 1].startswith("<"):
        return None  # a login, or a script on its standard input (`ssh h << 'EOF'`)
    return tokens[i].rsplit("@", 1)[-1].lower(), " ".join(tokens[i + 1:])


# Remote shells told their host (app, vm) and their command by options.
_REMOTE_VERBS = {"fly": ("ssh", "console"), "flyctl": ("ssh", "console"), "gcloud": ("compute", "ssh")}
_REMOTE_PLACE_OPTIONS = ("-a", "--app", "--zone", "--project")
_REMOTE_COMMAND_OPTIONS = ("-C", "--command")


def _by_command_option(tokens: list[str]) -> tuple[str, str] | None:
    """(host, command) of `fly ssh console … -C command` or `gcloud compute ssh vm … --command
    command` (`--command=command` too); None for a login without a command."""
    if tuple(tokens[1:3]) != _REMOTE_VERBS[canonical_program(tokens[0])]:
        return None
    place, run, i = [], "", 3
    while i < len(tokens):
        option, _, value = tokens[i].partition("=")
        taken = value or (tokens[i + 1] if i + 1 < len(tokens) else "")
        if option in _REMOTE_COMMAND_OPTIONS:
            run = taken
        elif option in _REMOTE_PLACE_OPTIONS:
            place.append(taken)
        elif not tokens[i].startswith("-"):
            place.append(tokens[i])  # gcloud's vm
        takes_value = option in _REMOTE_COMMAND_OPTIONS + _REMOTE_PLACE_OPTIONS and not value
        i += 2 if takes_value else 1
    return (" ".join(place).lower(), run) if run.strip() else None


def _written_then_run(failed_parts, ok_parts) -> bool:
    """`cat > /tmp/shot.js <<'EOF' …` (an export cut the line before `node /tmp/shot.js`; the
    error came from that run), then `node /tmp/shot.js` alone: the file written was the job."""
    first = failed_parts[0]
    name = canonical_program(first[0])
    if name == "cat" and ">" in first[:-1]:
        written = first[first.index(">") + 1]
    elif name == "tee":
        written = next((t for t in first[1:] if path_like(t)), "")
    else:
        return False
    return bool(written) and any(same_path(written, word) for tokens in ok_parts
                                 if canonical_program(tokens[0]) not in ("cat", "tee") for word in tokens[1:])


def _same_job_in_a_container(failed_parts, ok_parts) -> bool:
    """`docker compose exec web node scripts/fill.mjs` failed (no such file in the container),
    `node --env-file=.env scripts/fill.mjs` worked here (or the other way round): the command
    run in the container is the job."""
    for segment in failed_parts:
        for tokens in ok_parts:
            inner_failed, inner_ok = in_container(segment), in_container(tokens)
            if (inner_failed is None) == (inner_ok is None):
                continue  # neither, or both in a container: the other rules compare them
            inner_failed, inner_ok = inner_failed or segment, inner_ok or tokens
            if same_program(inner_failed, inner_ok) and _substantive([inner_failed]) & _substantive([inner_ok]):
                return True
    return False


def _shares_a_cut_word(failed: str, ok: str, failed_parts, ok_parts) -> bool:
    """Rule 3's shared substantive token, when an export cut it in one command
    (`--constructor-args 0x85e0162a345ebfcbeb8…`): the other holds the word whole."""
    for cut, other in ((failed, ok_parts), (ok, failed_parts)):
        if not cut.rstrip().endswith(TRUNCATION):
            continue
        word = cut.rstrip()[: -len(TRUNCATION)].split()[-1:] or [""]
        stem = word[0].strip("'\"`.:/").lower()
        if len(stem) >= 10 and any(same_program(failed_parts[0], tokens) for tokens in ok_parts):
            if any(whole.startswith(stem) and whole != stem for whole in _substantive(other)):
                return True
    return False


def _retry_rules(failed_parts, ok_parts) -> bool:
    """Rules 3 and 4 of is_retry (its guards already applied)."""
    for index, segment in enumerate(failed_parts):
        matching = [tokens for tokens in ok_parts if same_program(segment, tokens)]
        text = _core_text([segment])
        for tokens in matching:
            if len(segment) >= 2 and _is_subsequence(segment[1:], tokens[1:]) or _options_added(segment, tokens) \
                    or _options_dropped(segment, tokens) or _script_run_otherwise(segment, tokens):
                return True
            if _close(text, _core_text([tokens])):
                return True
        if any(_one_job(segment, tokens) or _program_swapped(segment, tokens) or _tree_by_find(segment, tokens)
               or _same_files_other_code(segment, tokens) or _asked_of_python(segment, tokens)
               or _kin_on_nothing_named(segment, tokens) for tokens in ok_parts):
            return True
        if index == 0 and matching:
            if _close(_core_text(failed_parts), _core_text(ok_parts)):
                return True
            if _substantive(failed_parts) & _substantive(ok_parts):
                return True
    return False


def added_environment(failed: str, ok: str) -> str:
    """Rule 5 of is_retry: the setup steps `ok` added ("source .venv/bin/activate"), when
    inline code that starts by importing failed and the next inline code of that interpreter
    ran after them (`python3 -c "from datasets import …"` -> `source .venv/bin/activate &&
    python -c "from app.schemas import …"`); else "". The agent checks one more thing with each
    snippet, so the code differs; the environment it imports from is the retry and the lesson.
    (Code that starts with work, `p = open(…)`, is left to rules 3 and 4.)"""
    def inline(parts, importing: bool = False) -> set[str]:
        return {canonical_program(p[0]) for p in parts
                if len(p) > 2 and p[1] in INLINE_CODE_FLAGS and canonical_program(p[0]) in INTERPRETERS
                and (not importing or _imports_first(p[2]))}

    if not inline(_parts(failed)[:1], importing=True) & inline(_parts(ok)):
        return ""
    before = _setup_steps(failed)
    return " && ".join(step for step in _setup_steps(ok) if step not in before)


def _imports_first(code: str) -> bool:
    words = code.split(None, 1)
    return bool(words) and (words[0] in ("import", "from") or words[0].startswith(("require(", "const")))


def _setup_steps(command: str) -> list[str]:
    """The leading setup steps of a command that change its environment (not a `cd`)."""
    found = []
    for text, _op in split_segments_ops(clean_command(command)):
        tokens = tokenize(text)
        if not tokens or tokens[0] not in SETUP_PROGRAMS:
            break
        if tokens[0] not in ("cd", "pushd", "popd"):
            found.append(" ".join(tokens))
    return found


def _one_job(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """Rule 4: engine.goals.same_job, between two programs; for one program only when both
    name a target they share (`pip install jose` -> `pip install python-jose`), or when both
    are a package manager's scripts that start the app (`start` in one project, `dev` in the
    next: npm's "Missing script: start", then `npm run dev`): the same program with nothing
    named (`jest` -> `jest --clearCache`) is left to the edit rules. Test scripts too (`npm
    test -- --grep X`, nyc not installed, then `npm run mocha`; round 26), but not two variants of
    one (`test:unit`, then `test:e2e`: another suite)."""
    if not same_job(failed, ok):
        return False
    if not _identities(failed) & _identities(ok) or targets(failed) and targets(ok):
        return True
    if canonical_program(failed[0]) not in JS_PACKAGE_MANAGERS or _other_target(failed, ok):
        return False  # (`yarn test --testPathPattern=Footer.test.tsx`, then the Newsletter test's)
    scripts = _verb(failed).partition(":"), _verb(ok).partition(":")
    return goal(failed) == RUN or goal(failed) == TEST and not (
        scripts[0][0] == scripts[1][0] and scripts[0][2] and scripts[1][2] and scripts[0][2] != scripts[1][2])


def _program_swapped(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """Another program given the same long arguments (`clj -M -e "(require 'app.core …)"` not
    found, then `bb -e "(require 'app.core …)"`): the program was the thing changed. Not after
    a look (`wc -l src/state.rs`, then `find src -name state.rs`: looking another way), nor
    for a program that acts on the file (`node t.js` not found, then `rm t.js`: dealt with, not
    run another way; round 15)."""
    if _identities(failed) & _identities(ok) or canonical_program(ok[0]) in FILE_PROGRAMS:
        return False
    words_failed, words_ok = " ".join(failed[1:]), " ".join(ok[1:])
    return (min(len(words_failed), len(words_ok)) >= 16
            and within_ratio(words_failed[:_RATIO_SPAN], words_ok[:_RATIO_SPAN], 0.2)
            and not is_read_only(" ".join(failed)))


def _same_files_other_code(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """Another interpreter's inline code given the very files the first one's was (`ruby -rjson
    -e '…' a.json b.json`, ruby not installed, then `node -e '…' a.json b.json`; round 27): the
    code is written again in another language, for one job on those files."""
    files = [_code_files(tokens) for tokens in (failed, ok)]
    return canonical_program(failed[0]) != canonical_program(ok[0]) and bool(files[0]) and files[0] == files[1]


def _kin_on_nothing_named(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """Two programs of one family, neither given anything but options (`tree`, not installed,
    then `ls -R`; PowerShell's `ls -la`, "A parameter cannot be found that matches parameter
    name 'la'", then `Get-ChildItem -Force`; round 34): both do the family's job where they
    run. Given words (`tree -L 2`, `ls src`), the other rules compare those."""
    if canonical_program(failed[0]) == canonical_program(ok[0]) or not _identities(failed) & _identities(ok):
        return False
    return all(word.startswith("-") for word in [*failed[1:], *ok[1:]])


def _asked_of_python(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """The failed command's question put to Python itself, in inline code that names what it
    asked about:
    - `pip show pyannote.audio` (a venv made by uv has no pip: "No module named pip"), then
      `python -c "import torchaudio; print(torchaudio.__version__)"` or `…get_distribution(
      'pyannote.audio')…`: the installed package (round 32);
    - `sqlite3 autopack.db "SELECT …"` (no sqlite3 program on Windows), then `python -c "import
      sqlite3; conn = sqlite3.connect('autopack.db') …"`: the program's own module, given the
      same file (round 36)."""
    if canonical_program(ok[0]) != "python" or not set(ok[1:]) & INLINE_CODE_FLAGS:
        return False
    program, code = canonical_program(failed[0]), ok[-1]
    if program == "pip":
        packages = [word for word in failed[2:] if not word.startswith("-")] if list(failed[1:2]) == ["show"] else []
        return any(_names(code, name) for package in packages for name in {package, package.replace("-", "_")})
    files = [word for word in failed[1:] if not word.startswith("-") and "." in path_name(word).strip(".")]
    imported = _names(code, "import " + program) or _names(code, "from " + program)
    return program.isidentifier() and imported and any(_names(code, file) for file in files)


def _names(code: str, name: str) -> bool:
    """Does the code hold `name` as a whole name (`torchaudio` in `import torchaudio`, not in
    `torchaudio_ext` nor `x.torchaudio`)? (No regex: a pattern made here would bring `re` onto
    the hook path.)"""
    start = code.find(name)
    while start >= 0:
        before, after = code[start - 1:start], code[start + len(name):start + len(name) + 1]
        if not (before.isalnum() or before and before in "_.") and not (after.isalnum() or after and after in "_-"):
            return True
        start = code.find(name, start + 1)
    return False


def _code_files(tokens: Sequence[str]) -> list[str]:
    """The files an interpreter's inline code is given (the words after the code), or []."""
    if canonical_program(tokens[0]) not in INTERPRETERS:
        return []
    flag = next((i for i, token in enumerate(tokens[1:], start=1) if token in INLINE_CODE_FLAGS), 0)
    files = list(tokens[flag + 2:]) if flag else []
    return files if files and all("." in path_name(word).strip(".") for word in files) else []


def _tree_by_find(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """`tree src -I '__pycache__'` (tree not installed), then `find src -type f | sort`: the same
    folder listed by `find` (round 20, two sources), or a folder in it (`tree -L 3 app`, then
    `find app/src -name "*.js"`, round 37). cmd's switches (`tree /F`, sent to bash on Windows)
    name no folder. Only after `tree`: a `find` after another look is a search elsewhere."""
    if canonical_program(failed[0]) != "tree" or canonical_program(ok[0]) != "find":
        return False
    switches = [word for word in failed if len(word) == 2 and word[0] == "/" and word[1].isalpha()]
    listed = _first_folder([word for word in failed if word not in switches], _TREE_VALUE_OPTIONS)
    found = _first_folder(ok, frozenset())
    return found == listed or found.startswith(listed.rstrip("/") + "/")


# Options of `tree` that take a value (`-L 3`, `-I 'node_modules|build'`), not the folder.
_TREE_VALUE_OPTIONS = frozenset({"-L", "-I", "-P", "-o", "-H", "-T", "--filelimit", "--charset", "--sort"})


def _first_folder(tokens: Sequence[str], value_options: frozenset) -> str:
    """The first folder a `tree`/`find` line names (`.` when none), without its trailing `/`."""
    return (_positional(tokens, 1, value_options) or ["."])[0].rstrip("/") or "/"


def same_program(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """Same program (or front end) doing a compatible subcommand, not on another target."""
    return (bool(_identities(failed) & _identities(ok)) and _verbs_compatible(failed, ok)
            and not _other_target(failed, ok) and not other_tests(failed, ok) and not other_packages(failed, ok))


# ---------------------------------------------------------------------------
# Diagnostics: the same job rerun to look at it, not to fix it

# Flags that make a command say more about what it does, not do something else.
_DIAGNOSTIC_FLAGS = frozenset({
    "-v", "-vv", "-vvv", "-vvvv", "--verbose", "--debug", "--trace", "--help", "-h", "--version", "-V",
    "--dry-run", "--collect-only", "--co", "--explain", "--backtrace", "--full-trace", "--showlocals",
    "--nocapture", "--no-capture", "--show-output", "-rA", "--print",
})  # not `-s`, `-d`, `-l`: silent, detached, link for as many tools as they mean "show more"
_DIAGNOSTIC_FLAG_PREFIXES = ("--print-", "--dump-", "--show", "--emit=", "--emit-", "--verbose=", "--debug=", "--tb=",
                             "--log-level", "--log_level", "--trace-", "--dry-run=", "--list")
# Flags that say less or plainer: beside a looking aid (`pytest --co -q`) they change nothing
# either; alone, dropped after the program refused them (`cmake … -q`), they are the lesson.
_QUIET_FLAGS = frozenset({"-q", "-qq", "--quiet", "--no-color"})
_DIAGNOSTIC_ENV_WORDS = ("DEBUG", "VERBOSE", "BACKTRACE", "TRACE", "RUST_LOG", "LOG_LEVEL", "LOGLEVEL")
_COMPILERS = frozenset({"gcc", "g++", "cc", "c++", "clang", "clang++", "tcc", "icc", "rustc", "javac", "tsc"})
_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".rs", ".java", ".ts", ".m", ".s", ".asm")


def is_diagnostic(failed: str, ok: str) -> bool:
    """Is `ok` the failed job rerun to look at it rather than to fix it?

    After a failure agents rerun the same thing with a looking aid that the failed
    command did not have: its exit status hidden (`; echo $?`, `|| true`, `|| echo
    failed`: the line then "succeeds" whatever happened), its output piped
    through `grep` (the status is grep's), diagnostic flags added and nothing
    else changed (`-v`, `--verbose`, `--debug`, `--help`, `--print-ast`,
    `--collect-only`, `--tb=long`, `RUST_BACKTRACE=1 …`), its help asked for
    (`cast index --help`), the same job in a check-only mode (`tsc --noEmit`,
    `--dry-run`, `black --check`), or the same source compiled by another compiler
    (comparing, not fixing), or the job run with the agent's changes stashed and put back
    (`git stash && pytest; git stash pop`: did it fail before the changes?). A success of
    any of these proves nothing about the fix, so is_retry says no.
    """
    if not failed or not ok or not failed.strip() or not ok.strip():
        return False
    return _looks_at(failed, ok, _parts(failed), _parts(ok))


def only_looked(looking: str, plain: str) -> bool:
    """Was `looking` the command `plain` with a looking aid (is_diagnostic's: `| grep`,
    `; echo $?`, `RUST_BACKTRACE=1`, `-v`) and nothing else changed? Then `plain` working
    after `looking` failed is the same job again, not a fix. Stricter than is_diagnostic,
    which takes any retry with an aid as looking: `cd test && run.sh | grep X` failed (no
    folder `test`), `run.sh | tail` worked: the `cd` dropped is the fix, not the aid."""
    if not looking.strip() or not plain.strip():
        return False
    if is_mutating(plain) and not is_mutating(looking):
        return False  # `prettier --write .` after `prettier --check .`: the files changed, a fix
    return _looks_at(plain, looking, _parts(plain), _parts(looking), same_only=True)


def _looks_at(failed: str, ok: str, failed_parts, ok_parts, same_only: bool = False) -> bool:
    if not failed_parts or not ok_parts:
        return False
    f_plumbing, o_plumbing = strip_plumbing(failed), strip_plumbing(ok)
    f_removed, o_removed = f_plumbing.removed, o_plumbing.removed
    aid = any(kind in o_removed and kind not in f_removed for kind in ("hides_status", "grep"))
    if f_plumbing.greps and o_plumbing.greps and f_plumbing.greps != o_plumbing.greps and _only_the_look(failed, ok):
        return True  # the same job through another grep (`cargo check | grep -E '^error'` found
        # nothing, `cargo check | grep -B2 InodeAttr` did): another look, nothing else changed
    if aid or _diagnostic_env(ok) and not _diagnostic_env(failed) or _traces(ok) and not _traces(failed):
        if same_only:
            return _only_the_look(failed, ok)
        return is_same_command(failed, ok) or _retry_rules(failed_parts, ok_parts)
    if _ran_without_the_work(ok_parts, failed_parts) and not _ran_without_the_work(failed_parts, failed_parts):
        return True
    if _consumer_dropped(failed, ok) or _parent_looked_at(failed_parts, ok_parts):
        return True
    if _check_only(ok_parts) - _check_only(failed_parts) and not _names_a_check(failed_parts):
        return _retry_rules(failed_parts, ok_parts)  # the job checked, not done: `tsc --noEmit`
    main = failed_parts[0]
    asked_help = any(_asks_help(tokens) for tokens in failed_parts)  # (`cargo test && cargo run -- --help`, again)
    for tokens in ok_parts:
        if canonical_program(tokens[0]) == canonical_program(main[0]) and (
                _only_diagnostic_flags_added(main, tokens) or _asks_help(tokens) and not asked_help):
            return True
        if _other_compiler_same_source(main, tokens) and not _runs_what_it_built(main, tokens, ok_parts):
            return True
    return False


def _only_the_look(failed: str, ok: str) -> bool:
    """The same command but for how its output is looked at: is_same_command sets `cd X &&`
    aside, and here a folder changed is a change."""
    return is_same_command(failed, ok) and _setup_and_folders(failed) == _setup_and_folders(ok)


def _traces(command: str) -> bool:
    """A shell run with its trace on (`sh -x start.sh`, `bash -x`, `set -x`): only ever to look."""
    return _trace_re().search(command) is not None


@lite.cache
def _trace_re() -> rx.Pattern[str]:
    return rx.compile(r"(?:^|[\s;&|(\"'])(?:(?:ba|z|da|k)?sh\s+-[a-z]*x[a-z]*\s|set\s+(?:-[a-z]*x|-o\s+xtrace))")


def _consumer_dropped(failed: str, ok: str) -> bool:
    """`redis-cli GET k | python -c "json.loads(…)"` failed in the parser; `redis-cli --raw GET
    k | head -50` shows what the parser was given: the producer alone, to look at its output."""
    failed_segments, ok_segments = strip_plumbing(failed).segments, strip_plumbing(ok).segments
    if len(ok_segments) >= len(failed_segments) or is_mutating(ok):
        return False
    producer = len(ok_segments) - 1
    if failed_segments[producer][1] not in ("|", "|&"):
        return False  # what the retry ends at was not piped into anything in the failed line
    consumer = unwrap_tokens(tokenize(failed_segments[producer + 1][0]))
    if not consumer or consumer[0].endswith(TRUNCATION) or canonical_program(consumer[0]) in OUTPUT_SHAPERS:
        return False  # a filter (`| gr…`, its name cut by an export), not a consumer that failed on its input
    if consumer[0] in ok:
        return False  # still there, inside a wrapper (`powershell -command "a | Stop-Process"`)
    failed_tokens = unwrap_tokens(tokenize(failed_segments[producer][0]))
    ok_tokens = unwrap_tokens(tokenize(ok_segments[producer][0]))
    return bool(failed_tokens and ok_tokens) and same_program(failed_tokens, ok_tokens)


def _parent_looked_at(failed_parts, ok_parts) -> bool:
    """`ls -la /data/projects/ntm/` (no such folder), then `ls -la /data/projects/` (or `… |
    grep -i ntm`): a look one folder up, not the look corrected (a path corrected is no parent:
    the other rules judge it). Any look of a failed chain (`ls A/ && ls A/it_4/`, then `ls`
    of A's parent), whatever flags show it (`ls -F A/x/`, then `ls -la A/`)."""
    look = ok_parts[0]
    if any(canonical_program(tokens[0]) not in OUTPUT_SHAPERS for tokens in ok_parts[1:]):
        return False
    look_words = _words_not_flags(look)
    for tokens in failed_parts:
        words = _words_not_flags(tokens)  # how it is shown may change too (`ls -F A/x/`, `ls -la A/`)
        if len(words) != len(look_words) or tokens[0] != look[0] or not is_read_only(" ".join(tokens)):
            continue
        changed = [(a, b) for a, b in zip(words, look_words, strict=True) if a != b]
        if len(changed) == 1:
            deeper, parent = (word.rstrip("/") for word in changed[0])
            if parent and deeper.startswith(parent + "/"):
                return True
    return False


def _words_not_flags(tokens: Sequence[str]) -> list[str]:
    return [token for token in tokens if not token.startswith("-")]


def _ran_without_the_work(parts, failed_parts) -> bool:
    """`git stash && pytest; git stash pop`: a program other than git ran on the tree without
    the agent's changes, which were then put back. It asks whether the failure came with the
    changes; it fixes nothing. The same with the `git stash pop` left to the next command
    (`git stash && cmake --build build | head -5`, then `git stash pop`): the failed job run
    with the work stashed; were the changes left stashed, the "fix" would be throwing the work
    away. (`git stash && git pull && git stash pop` made room for a git step, and `git stash &&
    git checkout main && npm install` for the checkout that failed: those are fixes.)"""
    job = {canonical_program(tokens[0]) for tokens in failed_parts} - {"git"}
    stashed, ran = False, set()  # (the programs other than git run since the stash)
    for tokens in parts:
        if tokens[0] != "git":
            if stashed:
                ran.add(canonical_program(tokens[0]))
            continue
        if len(tokens) < 2 or tokens[1] != "stash":
            continue
        verb = tokens[2] if len(tokens) > 2 else "push"
        if verb in ("push", "save") or verb.startswith("-"):
            stashed, ran = True, set()
        elif verb in ("pop", "apply") and stashed:
            if ran:
                return True  # put back after another program ran without it
            stashed = False
    return stashed and bool(ran & job)  # left stashed: the failed job itself ran without the work


def _setup_and_folders(command: str) -> list[str]:
    """The `cd X`, `source …` steps of a command line, as written (_setup_steps sets `cd` aside)."""
    return [" ".join(text.split()) for text, _op in strip_plumbing(command).segments
            if text.split()[:1] and text.split()[0] in SETUP_PROGRAMS]


# Flags that make a job only check what it would do (no output, no change): after `npm run
# build` failed, `npx tsc --noEmit` passing says the types are fine, not that it built.
_CHECK_ONLY_FLAGS = frozenset({"--noemit", "--no-emit", "--dry-run", "--check", "--check-only", "--diff"})


def _names_a_check(parts) -> bool:
    """Is the failed job a check by its name (`npm run typecheck`, `make check`, `pnpm lint`)?
    Then a check-only run (`tsc --noEmit`) is the job done, not looked at."""
    return any(word in t.lower() for tokens in parts for t in tokens[1:3] for word in ("check", "lint"))


def _check_only(parts) -> set[str]:
    """The check-only flags of a command, by name (`--dry-run=client` is `--dry-run`)."""
    return {name for tokens in parts for t in tokens[1:] if (name := t.lower().split("=", 1)[0]) in _CHECK_ONLY_FLAGS}


def is_diagnostic_flag(token: str) -> bool:
    """`-v`, `--nocapture`, `--print-ast`…: a flag that makes a command say more, not do otherwise."""
    return token in _DIAGNOSTIC_FLAGS or token.startswith(_DIAGNOSTIC_FLAG_PREFIXES)


_is_diagnostic_flag = is_diagnostic_flag


def _only_diagnostic_flags_added(failed: Sequence[str], ok: Sequence[str]) -> bool:
    added = [t for t in ok[1:] if t not in failed[1:] and t != "--"]  # (`npm test -- --listTests`)
    dropped = [t for t in failed[1:] if t not in ok[1:] and not _is_diagnostic_flag(t)]
    looking = [t for t in added if _is_diagnostic_flag(t)]
    return bool(looking) and not dropped and all(t in looking or t in _QUIET_FLAGS for t in added)


def _asks_help(tokens: Sequence[str]) -> bool:
    """`cast index --help`, `cargo build -h`: reading the manual of the failed command."""
    return "--help" in tokens[1:] or tokens[-1:] == ["-h"] or tokens[-1:] == ("-h",)


def _diagnostic_env(command: str) -> bool:
    """`RUST_BACKTRACE=1 cargo test`, `DEBUG=* npm test`: an assignment that asks for detail."""
    for text, _op in split_segments_ops(clean_command(command)):
        for token in tokenize(text):
            name, eq, _value = token.partition("=")
            if not eq or not name.replace("_", "").isalnum() or not name.isupper():
                break
            if any(word in name for word in _DIAGNOSTIC_ENV_WORDS):
                return True
    return False


def _other_compiler_same_source(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """`./build/mycc t.c` (or `gcc t.c`) failing, then `clang t.c`: comparing compilers."""
    name_f, name_o = canonical_program(failed[0]), canonical_program(ok[0])
    if name_o not in _COMPILERS or name_f == name_o:
        return False
    sources_f = {_path_key(t).rsplit("/", 1)[-1] for t in failed[1:] if t.endswith(_SOURCE_SUFFIXES)}
    sources_o = {_path_key(t).rsplit("/", 1)[-1] for t in ok[1:] if t.endswith(_SOURCE_SUFFIXES)}
    return bool(sources_f & sources_o)


def _runs_what_it_built(failed: Sequence[str], compile_step: Sequence[str], parts) -> bool:
    """Was the failed segment an interpreter running the source (`ts-node reproduce.ts`), and
    does a later step run what `compile_step` built from it (`tsc reproduce.ts && node
    reproduce.js`)? Then the compiler is no second opinion on the source but the first half of
    running it, the same job in two steps (round 36). After a compiler of its own (`./build/cc
    t.c`), `gcc t.c -o t && ./t` shows what the program should do: a look."""
    if canonical_program(failed[0]) not in INTERPRETERS:
        return False
    built = {_stem(t) for t in compile_step[1:] if t.endswith(_SOURCE_SUFFIXES)}
    if "-o" in compile_step[:-1]:
        built.add(_stem(compile_step[compile_step.index("-o") + 1]))
    parts = list(parts)
    for tokens in parts[parts.index(compile_step) + 1:]:  # (compile_step is one of parts)
        name = canonical_program(tokens[0])
        run = tokens[1] if name in INTERPRETERS and len(tokens) > 1 else tokens[0]
        if _stem(run) in built:
            return True
    return False


def _stem(path: str) -> str:
    return path_name(path).rsplit(".", 1)[0]


# Edit distance is quadratic-ish: long scripts and heredocs are compared by their start,
# which names the job (`cat > f <<EOF`, `python - <<PY\nimport x`), keeping a pair under 5 ms.
_RATIO_SPAN = 1000


def _close(a: str, b: str) -> bool:
    return within_ratio(a[:_RATIO_SPAN], b[:_RATIO_SPAN])


def _options_added(bare: Sequence[str], tokens: Sequence[str]) -> bool:
    """Is `tokens` the bare program `bare` with options added that each take a value, and
    nothing else: `ctest` -> `ctest --test-dir build`, `make` -> `make -j4`? A flag alone is an
    action or a look (`jest --clearCache`, `--verbose`), and a word that is not an option's
    value names a target (`pytest` -> `pytest tests/a.py` narrows the run)."""
    if len(bare) != 1 or len(tokens) < 2:
        return False
    i = 1
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("-") or tok in ("-", "--"):
            return False
        if "=" in tok or len(tok) > 2 and not tok.startswith("--"):
            i += 1  # `--config=x`, `-j4`: the value is attached
        elif i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
            i += 2  # `--test-dir build`
        else:
            return False
    return True


def _options_dropped(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """Is `ok` the failed command with options taken out, each with its value, and nothing else
    changed: `gh pr view 48 --json state,mergeable` -> `gh pr view 48`? An option the program
    refused, or one that broke the run, dropped: long values defeat the edit ratio. As for
    options added (_options_added), a flag alone is an action or a look: `cargo fmt` after
    `cargo fmt --check` showed a diff is a step that changes the files, not the check again."""
    if len(ok) < 2 or len(failed) <= len(ok) or failed[0] != ok[0]:
        return False
    i = j = 0
    while i < len(failed):
        if j < len(ok) and failed[i] == ok[j]:
            i, j = i + 1, j + 1
            continue
        word = failed[i]
        if not word.startswith("-") or word in ("-", "--"):
            return False  # a target dropped: another job
        i += 1
        if "=" in word or len(word) > 2 and not word.startswith("--"):
            continue  # `--config=x`, `-j4`: the value is attached
        if i >= len(failed) or failed[i].startswith("-") or j < len(ok) and failed[i] == ok[j]:
            return False  # a flag alone
        i += 1  # its value (`--json state,mergeable`)
    return j == len(ok)


def _is_subsequence(needle: Sequence[str], haystack: Sequence[str]) -> bool:
    """Do all words of needle appear in haystack, in order?"""
    rest = iter(haystack)
    return all(any(word == other for other in rest) for word in needle)


def path_like(token: str) -> bool:
    """Looks like a file or folder (`src/x`, `app.py`), not code, prose or a version."""
    if not token or any(c.isspace() or c in "()'\",;=<>|&$`{}" for c in token):
        return False  # code, a message or an expression, not a path
    if "/" in token or "\\" in token:
        return True
    stem, dot, ext = token.rpartition(".")
    return bool(dot and stem and ext) and any(c.isalpha() for c in ext) and ext.isalnum()


def _other_target(a: Sequence[str], b: Sequence[str]) -> bool:
    """Same command line with exactly one path swapped for an unrelated one (a looking aid
    added or dropped, `-vvv`, is no difference: round 24's `forge test --match-path` of another
    test file)."""
    a, b = [t for t in a if not is_diagnostic_flag(t)], [t for t in b if not is_diagnostic_flag(t)]
    if len(a) != len(b):
        return False
    diffs = [(x, y) for x, y in zip(a[1:], b[1:], strict=True) if x != y]
    if len(diffs) != 1:
        return False
    x, y = diffs[0]
    option_x, equals, value_x = x.partition("=")
    if equals and x.startswith("-") and y.startswith(option_x + "="):
        x, y = value_x, y[len(option_x) + 1:]  # `--testPathPattern=Footer.test.tsx`: the path it is given
    if not (path_like(x) and path_like(y)):
        return False
    if same_path(x, y) or _other_port(x, y):
        return False
    x_key, y_key = _path_key(x), _path_key(y)
    if x_key.startswith(y_key + "/") or y_key.startswith(x_key + "/") or x_key == y_key:
        return False  # one is inside the other: narrowing or widening the same target
    return not paths_related(x, y)


def _other_port(a: str, b: str) -> bool:
    """One URL but for its port (`http://localhost:5173` -> `http://localhost:3000`: the dev
    server was on another one): the same target, corrected."""
    def without_port(url: str) -> tuple[str, str]:
        scheme, sep, rest = url.partition("://")
        host, slash, path = rest.partition("/")
        name, colon, port = host.rpartition(":")
        if not sep:
            return "", ""
        return f"{scheme}://{name if colon and port.isdigit() else host}/{path}", port if colon else ""

    (url_a, port_a), (url_b, port_b) = without_port(a), without_port(b)
    return bool(url_a) and url_a == url_b and port_a != port_b


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
    if _folder_index(key_a, key_b) or _folder_index(key_b, key_a):
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


def _folder_index(module: str, index: str) -> bool:
    """`src/config/index.ts` is what `src/config.ts` names when the module is a folder (and
    `pkg/__init__.py` for `pkg.py`, `net/mod.rs` for `net.rs`)."""
    folder, _, base = index.rpartition("/")
    stem, dot, ext = module.rpartition(".")
    return bool(dot) and base in (f"index.{ext}", f"__init__.{ext}", f"mod.{ext}") and folder == stem


def mentions_path(text: str, path: str) -> bool:
    """Does a command or search pattern name the basename of path?

    Lets the session logic credit a discovery (`find . -name app.py`, `ls src/`)
    made after a failed Read of a wrong path.
    """
    base = _path_key(path).rsplit("/", 1)[-1]
    return bool(base) and base not in (".", "..") and base in (text or "")


def found_by_search(failed_path: str, search_input, search_output) -> str | None:
    """The path a search found for a failed Read (or Edit) of `failed_path`, or None.

    After "file not found" agents look for the file (Glob `**/app.py`, Grep, `find
    . -name app.py`, `ls src/`) and then use what they found: the lesson is "use
    path X". `search_input` is the search's tool input (a Glob/Grep dict, or the
    Bash command that searched), `search_output` what it returned: a Glob/Grep
    response dict (`filenames`, or `content` lines `path:line:text`), a list of
    paths, or text with one path per line (`find`, `ls`, `Found 2 files` lists).

    A found path counts when it has the failed path's file name, or is a likely
    correction of it (paths_related: `confg.py` -> `config.py`); the failed path
    itself never does (but `/abs/proj/src/x.py` does for a failed `src/x.py`: the
    Read looked from another folder). Of several, the one sharing the longest tail of folders
    with the failed path wins; a tie is no answer (the search did not decide).
    A bare `ls DIR` lists names without their folder: they are joined to DIR.
    """
    if not failed_path or search_output is None:
        return None
    folder = _listed_folder(search_input)
    found = [_path_key(p) for p in _output_paths(search_output, folder)]
    wanted = _path_key(failed_path)
    base = wanted.rsplit("/", 1)[-1]
    # Not same_path: the search found it elsewhere than the failed (relative) Read looked.
    candidates = {p for p in found if p and p != wanted
                  and (p.rsplit("/", 1)[-1] == base or paths_related(wanted, p))}
    if not candidates:
        return None
    ranked = sorted(candidates, key=lambda p: (_shared_tail(wanted, p), p.rsplit("/", 1)[-1] == base), reverse=True)
    if len(ranked) > 1 and _shared_tail(wanted, ranked[0]) == _shared_tail(wanted, ranked[1]) and (
            (ranked[0].rsplit("/", 1)[-1] == base) == (ranked[1].rsplit("/", 1)[-1] == base)):
        return None
    return ranked[0]


def _listed_folder(search_input) -> str:
    """The folder a bare `ls DIR` lists (its output names files without DIR), else ''."""
    command = search_input if isinstance(search_input, str) else ""
    if isinstance(search_input, dict):
        command = str(search_input.get("command") or "")
    tokens = unwrap(command) if command else []
    if tokens and canonical_program(tokens[0]) == "ls":
        args = [t for t in tokens[1:] if not t.startswith("-")]
        return args[0] if len(args) == 1 else ""
    return ""


def _output_paths(output, folder: str) -> list[str]:
    if isinstance(output, dict):
        names = output.get("filenames")
        if isinstance(names, list):
            return [n for n in names if isinstance(n, str)]
        output = output.get("content") or output.get("stdout") or output.get("output") or ""
    if isinstance(output, (list, tuple)):
        return [n for n in output if isinstance(n, str)]
    paths = []
    for raw in str(output).splitlines():
        line = raw.strip()
        fields = line.split()
        if not line or line.startswith(("Found ", "total ")):
            continue
        if len(fields) >= 9 and fields[0][:1] in "-dl" and not fields[0][1:10].strip("rwxsStT-@+."):
            line = line.split(None, 8)[-1]  # an `ls -l` row: the name is the last column
        elif ":" in line and not (len(line) > 2 and line[1] == ":" and line[2] in "\\/"):
            line = line.split(":", 1)[0]  # grep/rg `path:line:text` (not a drive letter)
        elif " " in line:
            continue  # prose, not a path
        if folder and "/" not in line:
            line = folder.rstrip("/") + "/" + line
        paths.append(line)
    return paths


def _shared_tail(a: str, b: str) -> int:
    """How many trailing path parts two paths share."""
    parts_a, parts_b = a.split("/"), b.split("/")
    count = 0
    while count < min(len(parts_a), len(parts_b)) and parts_a[-1 - count] == parts_b[-1 - count]:
        count += 1
    return count


