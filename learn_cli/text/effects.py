"""What a command does to the world: does it change state, or only read?

Used by pairing (a read-only success is never a retry of a failure that was not read-only;
only mutating successes can be the fix in between) and by the learner. Judged per working
segment, with setup prefixes (`cd DIR &&`) serving the segment they prepare. Stdlib only,
nothing compiled at import time (hot path).
"""

from __future__ import annotations

from learn_cli.text import lite, rx
from learn_cli.text.shell import (
    JS_PACKAGE_MANAGERS,
    RUN_SCRIPT,
    SETUP_PROGRAMS,
    canonical_program,
    clean_command,
    in_container,
    split_segments_ops,
    tokenize,
    unwrap_tokens,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["ids_of_the_moment", "is_mutating", "is_read_only", "only_reads", "overrides_a_safeguard",
           "teaches_nothing", "READ_ONLY_PROGRAMS"]

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
#   compose up`, `systemctl start`, `open -a Docker`, `kill`, `pkill`), builds and migrations
#   (`make`, `cmake`, `cargo build`, `npm run build`, `alembic upgrade`,
#   `python manage.py migrate`, `prisma generate`, `createdb`) and, for any
#   other tool, a mutating verb among its first three words (`install`, `add`,
#   `init`, `create`, `migrate`, `build`, `start`, `set`, `login`, `up`, …), or given as
#   an option (`xcode-select --install`).
#   A line of setup only (`cd backend`, `source .venv/bin/activate`) mutates:
#   the agent's shell keeps that state for the next command.
# - is_read_only: every working segment only reads (ls, cat, grep, find without
#   -delete/-exec, git status/log/diff/show, `--version`, `--help`, …) and nothing
#   is redirected into a file. Read-only commands are never part of a fix.
# - Neither: tests, scripts, servers, network calls (`pytest`, `python app.py`,
#   `curl URL`): they are what gets retried, not a fix.

READ_ONLY_PROGRAMS = frozenset({
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
    "setup-git", "refresh",  # `gh auth setup-git`: git's credentials now come from gh
})
# Verbs that change state only as the last part of a namespaced task (`mix deps.get`; alone,
# `kubectl get` reads).
_TASK_VERBS = frozenset({"get", "precompile"})
# Targets and scripts that check rather than change (`make test`, `npm run lint`).
_CHECK_WORDS = frozenset({"test", "tests", "check", "lint", "run", "show", "list", "status", "help",
                          "version", "dev", "serve", "preview", "typecheck", "-n"})
_FIX_FLAGS = frozenset({"--fix", "--write", "--apply", "--in-place", "--fix-only", "--unsafe-fixes"})
_VERSION_MANAGERS = frozenset({"conda", "mamba", "micromamba", "nvm", "pyenv", "rbenv", "nodenv",
                               "fnm", "volta", "asdf", "mise", "sdk", "rustup"})


@lite.cache
def _python_write_re() -> rx.Pattern[str]:
    # Inline Python (`python -c`, `python - <<EOF`) that writes or moves files.
    return rx.compile(
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


def _git_subcommand_at(tokens: Sequence[str]) -> int:
    """Where git's subcommand stands, past git's own options (`git -C dir -c k=v push`)."""
    i = 1
    while i < len(tokens) and tokens[i].startswith("-"):
        i += 2 if tokens[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    return i


def _git_verdict(tokens: Sequence[str]) -> bool | None:
    """True mutating, False read-only, None unknown."""
    i = _git_subcommand_at(tokens)
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
    inner = in_container(tokens) if tokens[1:2] == ["exec"] else None  # (`compose run` starts one)
    if inner:  # `docker exec app ls /srv`, `kubectl exec pod -- cat f`: what it runs in there
        inner = unwrap_tokens(inner)
        return _segment_verdict(_verdict_form(inner), " ".join(inner)) if inner else None
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
    if name in READ_ONLY_PROGRAMS:
        return False
    if name == "tar":
        return not _tar_lists(tokens)
    if name == "curl":
        return True if _curl_saves(tokens) else None
    if name == "git":
        return _git_verdict(tokens)
    if name in _PACMANS:
        return _pacman_verdict(tokens)
    if _asks_version_or_help(name, tokens):
        return False
    if name in _MUTATING_PROGRAMS:
        if name in ("make", "gmake", "ninja") and args and args[0] in _CHECK_WORDS:
            return None
        return True
    if name == "python" and _python_write_re().search(segment):
        return True
    read_only = _READ_ONLY_SUBCOMMANDS.get(name)
    if read_only is not None and args and args[0] in read_only and not (len(args) > 1 and args[1] in _MUTATING_VERBS):
        return False  # (`poetry env info` reads; `poetry env use python3.11` changes the environment)
    if any(t in _FIX_FLAGS for t in tokens[1:]) or name in ("gofmt", "prettier") and "-w" in tokens:
        return True
    if name in JS_PACKAGE_MANAGERS and args and args[0] in RUN_SCRIPT:
        script = args[1].replace(":", " ").split() if len(args) > 1 else []
        return True if any(w in _MUTATING_VERBS and w not in _CHECK_WORDS for w in script) else None
    if name in ("docker", "podman") and args[:1] == ["run"] or name == "go" and args[:1] == ["get"]:
        return True
    if name == "open" and ("-a" in tokens or "-b" in tokens):
        return True  # macOS: start an application (`open -a Docker` before `docker ps`)
    if any(arg in _MUTATING_VERBS for arg in args):
        return True
    if any(arg.split("-", 1)[0] in _MUTATING_VERBS for arg in args if "-" in arg.strip("-")):
        return True  # a verb with its object (`aws eks update-kubeconfig`, `kubectl config use-context`)
    if args and ("." in args[0] or ":" in args[0]) and args[0].replace(":", ".").rsplit(".", 1)[-1] in (
            _MUTATING_VERBS | _TASK_VERBS):
        return True  # a namespaced task: `mix deps.get`, `mix ecto.migrate`, `rake assets:precompile`
    if any(t.startswith("--") and t[2:] in _MUTATING_VERBS for t in tokens[1:4]):
        return True  # the verb given as an option (`xcode-select --install`, `rustup self --update`)
    if name in _VERSION_MANAGERS and args and args[0] not in ("list", "ls", "info", "current", "which", "show", "env"):
        return True  # `nvm use 20`, `pyenv local 3.11`, `conda activate x`: the active toolchain
    return None


_PACMANS = frozenset({"pacman", "yay", "paru"})


def _pacman_verdict(tokens: Sequence[str]) -> bool:
    """pacman's operation is its first option's letters: `-Q…` and `-F…` query, and so does
    `-S` with `s`, `i`, `l` or `g` (search, info, list, groups) and no refresh or upgrade."""
    operation = next((t for t in tokens[1:] if t.startswith("-") and not t.startswith("--")), "")
    letters = set(operation[2:])
    if operation[1:2] in ("Q", "F") and "y" not in letters:
        return False
    return not (operation[1:2] == "S" and letters & set("silg") and not letters & set("yu"))


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


@lite.lru_cache(maxsize=256)
def _verdicts(command: str) -> tuple[bool | None, ...]:
    """One verdict per working segment; setup prefixes serve the segment after them.

    A line made only of setup (`cd backend`, `source .venv/bin/activate`) is one
    mutating verdict: the agent's shell keeps that state for the next command.
    """
    pairs = []
    for text, _op in split_segments_ops(clean_command(command)):
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


def only_reads(segment: str) -> bool:
    """Does this one segment only read (`ps aux`, `git log`, `cat f`)? Its filters are queries."""
    tokens = unwrap_tokens(tokenize(segment))
    return bool(tokens) and _segment_verdict(_verdict_form(tokens), segment) is False


# Options and variables by which a command gets its way over a safeguard (overrides_a_safeguard):
# checks skipped, certificates and host keys not verified, data a tool would keep destroyed, a
# container's isolation lifted
_SKIPS_CHECKS = frozenset({
    "--no-verify", "--break-system-packages", "--insecure", "--no-check-certificate", "--trusted-host",
    "--insecure-skip-tls-verify", "--accept-data-loss", "--force-reset", "--privileged",
})
_SKIPS_CHECKS_ENV = frozenset({
    "HUSKY=0", "SKIP_HOOKS=1", "PIP_BREAK_SYSTEM_PACKAGES=1", "NODE_TLS_REJECT_UNAUTHORIZED=0",
    "GIT_SSL_NO_VERIFY=1", "GIT_SSL_NO_VERIFY=true", "PYTHONHTTPSVERIFY=0",
})
# settings that, set to false, stop verifying certificates or host keys (`git config
# http.sslVerify false`, `npm config set strict-ssl false`, `ssh -o StrictHostKeyChecking=no`)
_VERIFY_SETTINGS = frozenset({"http.sslverify", "strict-ssl", "sslverify", "stricthostkeychecking", "commit.gpgsign",
                              "tag.gpgsign"})
_FORCE_PUSH = frozenset({"--force", "-f", "--force-with-lease", "--force-if-includes"})
# tasks that drop a database's data (`rails db:reset`, `rake db:drop`, `php artisan
# migrate:fresh`, `mix ecto.reset`)
_DROPS_DATA = frozenset({"db:drop", "db:reset", "db:schema:load", "migrate:fresh", "migrate:reset",
                         "migrate:refresh", "ecto.drop", "ecto.reset"})


@lite.lru_cache(maxsize=64)  # (a success is compared with several failures: its commands are asked again)
def overrides_a_safeguard(command: str) -> bool:
    """Does a step of `command` get its way by overriding a safeguard: rewriting the remote's
    history (`git push --force`, `-f`, `+main`), skipping the checks a commit or an install runs
    (`--no-verify`, `git commit -n`, `HUSKY=0`, `--break-system-packages`), not verifying
    certificates or host keys (`curl -k`, `NODE_TLS_REJECT_UNAUTHORIZED=0`, `git config
    http.sslVerify false`, `ssh -o StrictHostKeyChecking=no`), throwing away work or data (`git
    reset --hard`, `git clean -f`, `git checkout -- .`, `git checkout --theirs`, `git branch -D`
    of a branch not merged, `docker compose down -v`, `prisma migrate reset`), leaving out the
    tests that failed (`pytest -k "not test_x"`, `--deselect`, `cargo test -- --skip x`),
    writing into the system's Python as root (`sudo pip install`), taking what a tool refused as
    breaking (`npm audit fix --force`), or opening files to everyone (`chmod 777`)? Such a
    command may have worked, but what it overrode was someone's decision for this once: never a
    fix to hand to the next agent (the learner makes no lesson of it)."""
    for segment, _op in split_segments_ops(clean_command(command)):
        tokens = tokenize(segment)
        if any(t in _SKIPS_CHECKS_ENV for t in tokens) or any(t.split("=", 1)[0] in _SKIPS_CHECKS for t in tokens):
            return True
        if any(t.startswith("SKIP=") or t[:1] == "-" and _may_skip(t) and _skip_option_re().match(t) for t in tokens):
            return True  # named for it: `-DskipTests`, `--no-gpg-sign`, `--ignore-engines`, pre-commit's `SKIP=`
        if _turns_verification_off([t.lower() for t in tokens]):
            return True
        words = unwrap_tokens(tokens)
        name = canonical_program(words[0]) if words else ""
        if name == "git" and _git_overrides(words):
            return True
        if name == "chmod" and _lets_everyone_write(next((w for w in words[1:] if not w.startswith("-")), "")):
            return True
        if name in ("npm", "pnpm", "yarn") and words[1:3] == ["audit", "fix"] and "--force" in words:
            return True
        if name == "curl" and any(rx.fullmatch(r"-[A-Za-z]*k[A-Za-z]*", w) for w in words[1:]):
            return True
        if _drops_data(name, words) or _skips_tests(name, words):
            return True
        if name == "pip" and "install" in words and any(canonical_program(t) == "sudo" for t in tokens[:2]):
            return True  # root writing into the system's Python (the error itself says `--user`)
    return False


# options by which a test run leaves out tests (`pytest -k "not test_login"`, `cargo test --
# --skip slow`, `pytest --lf`: only what failed last time): the run passes because what failed
# did not run, or ran alone and passed this time
_SKIPS_TESTS = frozenset({"--deselect", "--skip", "-skip", "--testpathignorepatterns", "--exclude", "--lf",
                          "--last-failed"})
_TEST_RUNNERS = frozenset({"pytest", "cargo", "go", "jest", "vitest", "npm", "pnpm", "yarn", "npx", "bun"})


def _skips_tests(name: str, words: Sequence[str]) -> bool:
    if name in ("gradle", "gradlew"):  # `./gradlew build -x test`: the task excluded
        return any(option in ("-x", "--exclude-task") and rx.search(r"test|check|lint", task, rx.I)
                   for option, task in _with_the_next(words))
    if name not in _TEST_RUNNERS or "test" not in words and name not in ("pytest", "jest", "vitest"):
        return False
    for word, following in _with_the_next(words):
        option, _, joined = word.lower().partition("=")
        if option in _SKIPS_TESTS or option == "-k" and (joined or following).lower().startswith("not "):
            return True
    return False


def _may_skip(option: str) -> bool:
    lower = option.lower()  # (a word of the pattern first: compiling it costs every hook that asks)
    return "skip" in lower or "no-" in lower or "ignore" in lower or "disable" in lower


@lite.cache
def _skip_option_re() -> rx.Pattern[str]:
    return rx.compile(r"--?(?:no|skip|ignore|disable)-(?:verify|checks?|tests?|lint|gpg-sign|engines?|platform-reqs?|"
                      r"hooks?)$|-D(?:skip\w*|maven\.test\.skip)(?:=true)?$", rx.I)


def _turns_verification_off(tokens: Sequence[str]) -> bool:
    """`http.sslverify false`, `-c http.sslverify=false`, `-o stricthostkeychecking=no` (lower-cased)."""
    for word, following in _with_the_next(tokens):
        setting, _, value = word.partition("=")
        if setting in _VERIFY_SETTINGS and (value or following) in ("false", "no", "0"):
            return True
    return False


def _drops_data(name: str, words: Sequence[str]) -> bool:
    """Volumes removed with their containers, a database reset or dropped, the repository's
    history deleted: the data is gone."""
    if name in ("docker", "docker-compose", "podman"):
        args = [w for w in words[1:] if w != "compose"]
        verb = next((w for w in args if not w.startswith("-")), "")
        return (verb == "down" and bool({"-v", "--volumes"} & set(args))
                or verb == "volume" and bool({"rm", "prune"} & set(args))
                or verb == "system" and "prune" in args and "--volumes" in args)
    if name == "prisma" and words[1:3] == ["migrate", "reset"] or name == "dropdb":
        return True
    if name in ("supabase", "alembic") and words[1:3] in (["db", "reset"], ["downgrade", "base"]):
        return True
    if name == "rm" and any(w.rstrip("/").rsplit("/", 1)[-1] == ".git" for w in words[1:]):
        return True
    if name == "python" and words[1:3] == ["manage.py", "flush"]:
        return True
    return any(w in _DROPS_DATA for w in words[1:3])


def teaches_nothing(failed_command: str, commands: Sequence[str], error: str) -> bool:
    """Was the failure a merge conflict (resolved by hand), or did the commands that resolved it
    add a secret (adds_a_secret), get their way over a safeguard (one the failed command did
    not override itself), past a refusal the tool handed over with a warning
    (text.failure.heeds_a_warning), or by naming an id of the moment that the failure did not
    name (one it names is read for the next failure's: capture.lesson.step_for_error)? Then it
    worked that once and is no fix to hand on: the learner makes no lesson of it, and the
    lookup and the digest pass over a record made before these rules."""
    from learn_cli.text.failure import heeds_a_warning

    if "CONFLICT (" in error:
        return True  # a merge conflict is resolved by hand, in the files; what ran after it only
        # finished that (`git add a.ts && git stash drop` after `git stash pop`): no fix
    if any(heeds_a_warning(error, c, failed_command) for c in commands):
        return True
    if any(adds_a_secret(failed_command, c) for c in commands):
        return True
    if any(overrides_a_safeguard(c) for c in commands) and not overrides_a_safeguard(failed_command):
        return True
    failure = f"{failed_command}\n{error}"
    return any(found not in failure for c in commands for found in ids_of_the_moment(c))


def adds_a_secret(failed_command: str, command: str) -> bool:
    """Is a secret what `command` adds to the failed one (`STRIPE_API_KEY=sk_live_… python3
    sync.py`, `sshpass -p hunter2 ssh …`)? Stored, it is masked and cannot run; unmasked, it is
    not ours to hand on. A secret both carry (`GH_TOKEN=… gh repo edit`) is not the change.
    A stored fix is masked already: its mark is read, and nothing is redacted again."""
    from learn_cli.text.redact import PLACEHOLDER_PREFIX, redact

    masked = command if PLACEHOLDER_PREFIX in command else redact(command)
    if PLACEHOLDER_PREFIX not in masked:
        return False
    kept = set(failed_command.split()) | set(redact(failed_command).split())
    return any(PLACEHOLDER_PREFIX in word and word not in kept for word in masked.split())


@lite.lru_cache(maxsize=64)
def ids_of_the_moment(command: str) -> tuple[str, ...]:
    """The numbers of processes `command` kills (`kill -9 48213`, `taskkill /PID 4120`) and the
    object ids it names (a container's `3f2a9c1b7d4e`, a commit's `a1b2c3d`): each named one
    thing once; next time it is another or none. (`kill $(lsof -ti:3000)` finds the process
    anew and names no number.)"""
    found: list[str] = []
    for segment, _op in split_segments_ops(clean_command(command)):
        words = unwrap_tokens(tokenize(segment))
        kills = bool(words) and canonical_program(words[0]) in ("kill", "taskkill")
        for word in words[1:]:
            if kills and word.isdigit() or _is_object_id(word.lower()):
                found.append(word)
    return tuple(found)


def _is_object_id(word: str) -> bool:
    """7 to 64 hex digits, with a digit and a letter among them (`3f2a9c1b7d4e`, not `deadbeef`)."""
    return (7 <= len(word) <= 64 and not word.strip("0123456789abcdef") and any(c.isdigit() for c in word)
            and any(c in "abcdef" for c in word))


def _with_the_next(words: Sequence[str]) -> list[tuple[str, str]]:
    """Each word with the one after it ('' after the last): an option and its value."""
    return list(zip(words, [*words[1:], ""], strict=False))


def _takes_one_side(rest: Sequence[str]) -> bool:
    """`git merge -X theirs`, `--strategy-option=ours`, `-s ours`."""
    for option, value in _with_the_next(rest):
        name, _, joined = option.partition("=")
        if name in ("-X", "--strategy-option", "-s", "--strategy") and (joined or value) in ("theirs", "ours"):
            return True
    return False


def _lets_everyone_write(mode: str) -> bool:
    """A chmod mode that gives write to others: `777`, `0666`, `o+w`, `a=rwx`, `go+w`."""
    if mode.isdigit():
        return len(mode) >= 3 and int(mode[-1]) & 2 == 2
    return any(rx.fullmatch(r"[ugoa]*[oa][ugoa]*[+=][rwxXst]*w[rwxXst]*", part) for part in mode.split(","))


def _git_overrides(tokens: Sequence[str]) -> bool:
    i = _git_subcommand_at(tokens)
    sub, rest = (tokens[i].lower(), tokens[i + 1:]) if i < len(tokens) else ("", [])
    options = [t for t in rest if t.startswith("-")]
    if sub == "push":
        return any(t.split("=", 1)[0] in _FORCE_PUSH for t in options) or any(t.startswith("+") for t in rest)
    if sub == "commit":
        return "-n" in options
    if sub == "reset":
        return "--hard" in options
    if sub == "clean":
        return any(t == "--force" or (not t.startswith("--") and "f" in t) for t in options)
    if {"--theirs", "--ours"} & set(options) or _takes_one_side(rest):
        return True  # a conflict settled by discarding one side's changes, whatever they were
    if sub == "checkout":  # `git checkout -- .`: the working tree's changes to those files, discarded
        return "--" in rest
    if sub == "restore":
        return "--staged" not in options
    if sub == "branch":  # deleting a branch git would not delete: its commits were merged nowhere
        return "-D" in options or bool({"-d", "--delete"} & set(options) and {"-f", "--force"} & set(options))
    return False
