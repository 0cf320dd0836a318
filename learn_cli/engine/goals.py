"""Goal families: what a command is for (configure, build, test, install, run, vcs), across programs.

Two commands of the same goal family, in the same ecosystem, on the same target are the same
job, however different their programs: `make` -> `cmake --build build`, `pnpm --dir evals
typecheck` -> `tsc -p evals`, `pip install x` -> `uv add x`, `npm test` -> `npx jest`. The
families and their members come from the commands of the shared corpora (agent-retries,
histories): the builds, test runs, installs and version-control steps agents retry.

A segment's goal is read from its program and first positional word (`cargo test`, `make
check`, `npm run build`); scripts are left out (`./build.sh` is one job of its own, matched
by its name elsewhere). The target is what the job is about: the files, packages or test
selectors it names, and the project folder an option points at (`-p evals`, `--dir evals`,
`-C web`); build output folders (`build`, `.`, `out`, `target`) say where, not what.

Stdlib only (hot path).
"""

from __future__ import annotations

from learn_cli.text.shell import (
    JS_PACKAGE_MANAGERS,
    PACKAGE_OPTIONS,
    RUN_SCRIPT,
    canonical_program,
    path_name,
    script_name,
)

# The goals whose working way is a fact of a project ("This project builds with `X`",
# capture.learner.settled_way), and how the fact says each.
WORKING_GOALS = {"build": "builds", "test": "runs its tests", "run": "runs"}


def project_fact_key(goal: str, project_id: str) -> str:
    """The key of a project's facts of one goal: theirs alone. (Every project's once shared one
    per goal, `shared_fact_key`: promotion took them for one learning seen in many projects,
    `learn graph` for a hub; engine.rekey keys those again.)"""
    from learn_cli.text.keys import text_key

    return text_key(f"working {goal} command {project_id}")


def shared_fact_key(goal: str) -> str:
    """The key every project's facts of a goal had before project_fact_key."""
    from learn_cli.text.keys import text_key

    return text_key(f"working {goal} command")


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["goal", "option_mode", "ecosystem", "targets", "same_job", "other_tests", "other_packages"]

BUILD, TEST, INSTALL, RUN, VCS = "build", "test", "install", "run", "vcs"
CONFIGURE = "configure"  # writes the build files (`cmake -B build`): a step before the build

# Programs whose every use (bar the words below) is one goal.
_PROGRAM_GOALS = {
    "make": BUILD, "gmake": BUILD, "ninja": BUILD, "bazel": BUILD, "tsc": BUILD, "webpack": BUILD,
    "rollup": BUILD, "esbuild": BUILD, "msbuild": BUILD, "xcodebuild": BUILD, "scons": BUILD,
    "pytest": TEST, "py.test": TEST, "tox": TEST, "nox": TEST, "jest": TEST, "vitest": TEST,
    "mocha": TEST, "ava": TEST, "rspec": TEST, "phpunit": TEST, "ctest": TEST, "unittest": TEST,
    "playwright": TEST, "cypress": TEST, "karma": TEST,
    "uvicorn": RUN, "gunicorn": RUN, "hypercorn": RUN, "flask": RUN, "streamlit": RUN,
    "git": VCS, "gh": VCS,
}
# `<program> <verb>` goals for multi-command tools.
_VERB_GOALS = {
    BUILD: frozenset({"build", "compile", "check", "typecheck", "type-check", "tsc", "assemble", "package",
                      "bundle", "b"}),
    TEST: frozenset({"test", "tests", "t", "nextest", "spec", "e2e", "unit", "integration"}),
    INSTALL: frozenset({"install", "i", "add", "ci", "sync", "get", "require"}),
    RUN: frozenset({"run", "start", "dev", "serve", "preview", "exec"}),
}
_MULTI_COMMAND = frozenset({
    "cargo", "go", "npm", "pnpm", "yarn", "bun", "deno", "forge", "nargo", "dotnet", "swift", "zig",
    "mvn", "gradle", "gradlew", "pip", "uv", "poetry", "pdm", "conda", "mamba", "brew", "apt", "apt-get",
    "dnf", "yum", "pacman", "apk", "gem", "bundle", "composer", "mix", "stack", "cabal", "pipx", "cmake",
})
# Programs whose mode is an option, not a subcommand: the option that picks it, and its goal
# ('' for a mode that is no job); with none of them the program configures. `cmake --build
# build` failing and `cmake -B build` working is a step run first, not a rewrite.
_OPTION_MODES = {"cmake": {"--build": BUILD, "--install": INSTALL, "-E": "", "-P": "", "--help": "",
                           "--version": ""}}
# Make targets that are not the build itself.
_MAKE_OTHER = {"test": TEST, "tests": TEST, "check": TEST, "install": INSTALL}
_MAKE_NOT_A_JOB = frozenset({"clean", "distclean", "help", "lint", "format", "fmt"})

_ECOSYSTEMS = {
    "python": frozenset({"python", "pip", "uv", "poetry", "pdm", "conda", "mamba", "pipx", "pytest", "py.test",
                         "tox", "nox", "unittest", "uvicorn", "gunicorn", "hypercorn", "flask", "streamlit"}),
    "js": frozenset({"node", "npm", "pnpm", "yarn", "bun", "deno", "tsc", "jest", "vitest", "mocha", "ava",
                     "webpack", "rollup", "esbuild", "playwright", "cypress", "karma", "next", "vite"}),
    "rust": frozenset({"cargo", "rustc"}),
    "go": frozenset({"go"}),
    "system": frozenset({"apt", "apt-get", "brew", "dnf", "yum", "pacman", "apk", "port"}),
    "ruby": frozenset({"gem", "bundle", "rspec", "rake"}),
    "jvm": frozenset({"mvn", "gradle", "gradlew"}),
}
_ECOSYSTEM_OF = {prog: name for name, progs in _ECOSYSTEMS.items() for prog in progs}
# Build drivers that serve any language: one of them fits whatever the project is written in.
_GENERIC_BUILDERS = frozenset({"make", "gmake", "cmake", "ninja", "bazel", "scons"})

# Options whose value names the project or package a job is about: where it runs
# (`--manifest-path src-tauri/Cargo.toml`, `make -C build`, `tsc -p tsconfig.app.json`: part of
# how a project runs its jobs, capture.learner.working_way) and what part of the work it picks
# (`pytest -k slow`, `forge test --match-test x`: what one run was about).
PLACE_OPTIONS = frozenset({"-p", "--project", "--dir", "-C", "--directory", "--cwd", "--prefix", "--manifest-path",
                           "-w", "--workspace"})
SELECTING_OPTIONS = frozenset({"--filter", "-F", "--package", "--match-path", "--match-contract", "--match-test", "-k",
                               "-pl", "--projects"})
_PROJECT_OPTIONS = PLACE_OPTIONS | SELECTING_OPTIONS
# Options that take a value that is not a target (`-o out`, `-j 4`, `--build build`).
_VALUE_OPTIONS = frozenset({"--features", "--profile", "--target", "-o", "-j", "--jobs", "-B", "-S", "--build",
                            "--target-dir", "--config", "-c", "--out-dir", "--outDir", "-D", "-G", "-l", "-r",
                            "--rpc-url", "--fork-url"})
# First words of single-goal tools that pick a mode of the run.
_MODES = frozenset({"run", "test", "watch", "start", "open"})
# Folders that say where a build goes or runs, not what it is about.
_PLACES = frozenset({".", "..", "./", "build", "out", "dist", "target", "_build", "bin", "obj", "release",
                     "debug"})


def _positional(tokens: Sequence[str]) -> list[str]:
    """Arguments that are not options, nor values of known options."""
    found: list[str] = []
    i = 1
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith("-"):
            i += 2 if (tok in _PROJECT_OPTIONS or tok in _VALUE_OPTIONS) and "=" not in tok else 1
            continue
        found.append(tok)
        i += 1
    return found


def goal(tokens: Sequence[str]) -> str:
    """The goal family of one unwrapped segment, or '' (unknown, or not a job)."""
    if not tokens:
        return ""
    name = canonical_program(tokens[0])
    args = _positional(tokens)
    verb = args[0].lower() if args else ""
    if name in ("make", "gmake"):
        if verb in _MAKE_NOT_A_JOB:
            return ""
        return _MAKE_OTHER.get(verb, BUILD)
    if name in _OPTION_MODES:
        return option_mode(tokens)
    if name in _PROGRAM_GOALS:
        return _PROGRAM_GOALS[name]
    if name in ("gcc", "g++", "cc", "c++", "clang", "clang++", "rustc", "javac"):
        return BUILD
    if name in _MULTI_COMMAND:
        if name in JS_PACKAGE_MANAGERS and verb in RUN_SCRIPT and len(args) > 1:
            verb = args[1].lower()
        verb = verb.split(":", 1)[0]  # `build:prod`, `test:unit`
        for family, verbs in _VERB_GOALS.items():
            if verb in verbs:
                return family
        if name in JS_PACKAGE_MANAGERS and verb in _PROGRAM_GOALS and _PROGRAM_GOALS[verb] != VCS:
            return _PROGRAM_GOALS[verb]  # a script named for its tool: `npm run mocha`, `yarn jest`
    return ""


def option_mode(tokens: Sequence[str]) -> str | None:
    """The goal of a program whose mode is an option (`cmake --build` builds, `cmake -B build`
    configures); None for any other program."""
    modes = _OPTION_MODES.get(canonical_program(tokens[0])) if tokens else None
    if modes is None:
        return None
    return next((modes[tok] for tok in tokens[1:] if tok in modes), CONFIGURE)


# A system package manager installs a language's packages under these names (Debian's
# `python3-pandas`, Alpine's `py3-pandas`, `node-semver`, `ruby-rack`): such an install is that
# language's (`pip install pandas` refused, then `apt-get install python3-pandas`).
_SYSTEM_PACKAGE_PREFIXES = (("python3-", "python"), ("python-", "python"), ("py3-", "python"), ("node-", "js"),
                            ("ruby-", "ruby"))


def ecosystem(tokens: Sequence[str]) -> str:
    """The language world a segment lives in: '' for a generic build driver, the program's
    own name for a tool of no known family (`nargo` is its own world); a system install of one
    language's packages only (`apt-get install python3-pandas`) lives in that language's."""
    if not tokens:
        return ""
    name = canonical_program(tokens[0])
    found = "" if name in _GENERIC_BUILDERS else _ECOSYSTEM_OF.get(name, name)
    if found == "system" and goal(tokens) == INSTALL:
        packages = _positional(tokens)[1:]
        worlds = {next((world for prefix, world in _SYSTEM_PACKAGE_PREFIXES if package.startswith(prefix)), "")
                  for package in packages}
        if len(worlds) == 1 and "" not in worlds:
            return worlds.pop()
    return found


def targets(tokens: Sequence[str]) -> frozenset[str]:
    """What a job is about: named files, packages, selectors and project folders, compared
    by their last path part, lower-cased (`src/app.py` and `/abs/src/app.py` are one)."""
    if not tokens:
        return frozenset()
    name = canonical_program(tokens[0])
    args = _positional(tokens)
    if args and name in _PROGRAM_GOALS and args[0].lower() in _MODES:
        args = args[1:]  # `vitest run`, `playwright test`, `cypress run`: a mode, not a target
    if args and (name in _MULTI_COMMAND or name in ("make", "gmake")):
        args = args[1:] if goal(tokens) not in (BUILD, CONFIGURE) or name not in ("make", "gmake", "cmake") else args
        if script_name(tokens):
            args = args[1:]
    found = _option_values(tokens, _PROJECT_OPTIONS)
    found.update(args)
    keys = set()
    install, system = goal(tokens) == INSTALL, _ECOSYSTEM_OF.get(name) == "system"
    for item in found:
        if install:
            item = _package_name(item)
            if system:  # `python3-yaml` is the package `yaml` (`pyyaml` to pip)
                item = next((item[len(prefix):] for prefix, _ in _SYSTEM_PACKAGE_PREFIXES if item.startswith(prefix)),
                            item)
        key = path_name(item).lower()
        if key and key not in _PLACES and not key.startswith("$"):
            keys.add(key)
    return frozenset(keys)


def _package_name(spec: str) -> str:
    """`jose==3.3` -> `jose`, `python-jose[cryptography]` -> `python-jose`, `vite@5` -> `vite`
    (a scoped `@types/node@20` keeps its scope)."""
    for i, ch in enumerate(spec):
        if ch in "=<>!~[;" or ch == "@" and i > 0:
            return spec[:i]
    return spec


def same_job(a: Sequence[str], b: Sequence[str]) -> bool:
    """Do two unwrapped segments do one job (same goal family, ecosystem and target)?

    Ecosystems match when equal, or when the first (failed) side is a generic build driver
    (`make` finding no makefile, then `cargo build`; `make test` with no such rule, then `npm
    test`: the driver only names the job); not the other way round: a project's own tool
    failing is not retried by a generic driver. Targets match when both name none, or when they share one; a
    package name also matches one that contains it (`jose` / `python-jose`). A failed side that named
    targets is retried by one that names none: the project's own job (`tsc --noEmit … server.ts` ->
    `npm run typecheck`, round 21), not the other way round (a part of the job is not the job).
    """
    family = goal(a)
    if not family or family == VCS or family != goal(b):
        return False
    ta, tb = targets(a), targets(b)
    if ecosystem(a) != ecosystem(b) and canonical_program(a[0]) not in _GENERIC_BUILDERS:
        # `cargo build` vs `npm run build` in one monorepo are two jobs; but a package asked of
        # another installer by its very name is the same want (`brew install supabase/tap/supabase`
        # failing, then `npm install -g supabase`; not `pip install pandas`, then `pandas-tools`)
        return family == INSTALL and bool(ta & tb)
    if family == TEST:  # `pytest -q`, `python -m unittest discover -s tests`: the whole suite both
        ta, tb = ta - _WHOLE_SUITE, tb - _WHOLE_SUITE
    if not ta and not tb:
        return True
    if not ta or not tb:
        return not tb  # widened to the project's own job; narrowed to a part, it is not done
    return _same_targets(ta, tb)


def _same_targets(ta: frozenset[str], tb: frozenset[str]) -> bool:
    """Do two sets of targets share one (a name also matches one that contains it)?"""
    return bool(ta & tb) or any(x in y or y in x for x in ta for y in tb if min(len(x), len(y)) >= 4)


def other_tests(a: Sequence[str], b: Sequence[str]) -> bool:
    """Two runs of one test runner on different tests (`cargo test test_basic` ->
    `cargo test test_simple`, `pytest -k login` -> `pytest -k logout`): another job.

    Only selectors count (test names, `-k` expressions); paths are left to the path
    rules, which allow a corrected typo. A selector that contains the other narrows or
    widens the same run (`lz77::tests` -> `lz77::tests::test_get_match`).
    """
    if goal(a) != TEST or goal(b) != TEST:
        return False
    sel_a = {t for t in targets(a) if _selector(t)}
    sel_b = {t for t in targets(b) if _selector(t)}
    if not sel_a or not sel_b:
        return False
    return not any(x == y or x in y or y in x for x in sel_a for y in sel_b)


def narrowed(a: Sequence[str], b: Sequence[str]) -> bool:
    """The same test runner run again on part of what it ran: `pytest -q` -> `pytest -q
    tests/test_x.py`, `cargo test` -> `cargo test parser::`, `npm test` -> `npm test --
    src/app.test.ts` (`go test ./...` names everything)."""
    if goal(a) != TEST or goal(b) != TEST or canonical_program(a[0]) != canonical_program(b[0]):
        return False
    return not targets(a) - _EVERYTHING and bool(targets(b) - _EVERYTHING)


_EVERYTHING = frozenset({"...", ".", "./..."})
# What names a project's whole test suite rather than a part of it (unittest's `discover`).
_WHOLE_SUITE = _EVERYTHING | {"tests", "test", "spec", "discover"}

# A package name corrected, not replaced: at most this share of it edited (`landro-deamon`).
_NAME_TYPO_RATIO = 0.2


def other_packages(a: Sequence[str], b: Sequence[str]) -> bool:
    """Two runs of one program on different packages of a workspace (`cargo check -p
    landro-daemon` -> `cargo check -p landro-sync -p landro-cas`): another job, as other_tests
    is for tests. A name corrected (`-p landro-deamon` -> `-p landro-daemon`, `--filter web` ->
    `--filter @app/web`), or one package kept among others, is the same job."""
    from learn_cli.engine.distance import within_ratio

    name = canonical_program(a[0]) if a else ""
    if not b or name != canonical_program(b[0]) or name not in PACKAGE_OPTIONS:
        return False
    chosen_a = {value.lower() for value in chosen_packages(a)}
    chosen_b = {value.lower() for value in chosen_packages(b)}
    if not chosen_a or not chosen_b:
        return False
    return not any(x in y or y in x or within_ratio(x, y, _NAME_TYPO_RATIO) for x in chosen_a for y in chosen_b)


def chosen_packages(tokens: Sequence[str]) -> set[str]:
    """The packages of a workspace a segment chooses (`-p core`, `--filter=@app/web`)."""
    options = PACKAGE_OPTIONS.get(canonical_program(tokens[0]) if tokens else "")
    return _option_values(tokens, options) if options else set()


def without_packages(tokens: Sequence[str]) -> list[str]:
    """`tokens` without the options that choose packages of a workspace, and their values
    (`pnpm --filter web lint` -> `pnpm lint`): the job, on whichever package."""
    options = PACKAGE_OPTIONS.get(canonical_program(tokens[0]) if tokens else "", frozenset())
    kept: list[str] = []
    skip = False
    for tok in tokens:
        if skip:
            skip = False
        elif tok in options:
            skip = True
        elif not (tok.startswith("--") and tok.split("=", 1)[0] in options):
            kept.append(tok)
    return kept


def _option_values(tokens: Sequence[str], options: frozenset[str]) -> set[str]:
    """The values `tokens` give to `options` (`-p core`, `--package=core`)."""
    found = set()
    for i, tok in enumerate(tokens[1:], 1):
        if tok in options and i + 1 < len(tokens):
            found.add(tokens[i + 1])
        elif tok.startswith("--") and "=" in tok and tok.split("=", 1)[0] in options:
            found.add(tok.split("=", 1)[1])
    return found


def _selector(target: str) -> bool:
    stem, dot, ext = target.rpartition(".")
    return not (dot and stem and ext.isalnum() and any(c.isalpha() for c in ext))
