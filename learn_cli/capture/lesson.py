"""Is a retry worth remembering? The line between a fix and the next piece of work.

pairing.is_retry says that a success resolves a failure: the agent got past it. That is not
always a lesson. Replayed over real history (issue 10), most "retries" were the agent moving
on: the next test of the module (`cargo test lz77::tests` → `cargo test
lz77::tests::test_get_match`), another fuzz target, another commit message, the same inline
script rewritten. Offered later, such a "fix" is wrong every time.

A lesson changes *how* the same job is done, not *what* it is done on:

- another program for the same job (`make` → `cmake --build build`, `pytest` → `python -m
  pytest`): the switch is the lesson;
- the same program on the same targets with other options or more arguments (`cargo build` →
  `cargo build --features x`, `git push` → `git push -u origin main`, `npm i` → `npm i
  --legacy-peer-deps`);
- a target corrected, not replaced: a typo (`isntall` → `install`), the same file in the right
  folder (`src/app.py` → `app.py`), the same package at another version (`x==1` → `x`);
- steps run first (`pip install x && pytest`, at most MAX_ADDED_STEPS of them), or another
  folder (`cd build && make`).

Not a lesson: a target replaced, narrowed or widened (another test, file, branch, message or
script), which is the ordinary work loop. Stdlib only (hook path).
"""

from __future__ import annotations

from learn_cli.text.effects import is_read_only, only_reads
from learn_cli.text.keys import missing_program, rejects_option, says_port_taken
from learn_cli.text.shell import (
    INLINE_CODE_FLAGS,
    INTERPRETERS,
    JS_PACKAGE_MANAGERS,
    OUTPUT_SHAPERS,
    SETUP_PROGRAMS,
    TRUNCATION,
    canonical_program,
    cd_failed,
    dropped_cd,
    leading_cd,
    leading_cd_step,
    path_name,
    program_as_named,
    script_name,
    split_segments_ops,
    strip_plumbing,
    tokenize,
    unwrap_tokens,
    windows_alike,
    word_spellings,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["is_lesson", "edit_did_it", "suggested_by", "suggested_again", "told_to_run", "same_work", "moved_to",
           "option_change", "apply_option_change", "changed_segment", "dropped_cd", "apply_dropped_cd", "cd_failed",
           "program_change", "apply_program_change", "run_first", "added_setup", "apply_added_setup", "missing_job",
           "quoted_words", "script_interpreter", "apply_script_interpreter", "step_for_script", "step_for_error",
           "program_path", "script_run", "repathed", "replaced_target", "apply_replaced_target", "by_analogy"]

_VERSION_MARKS = ("==", ">=", "<=", "~=", "@")
# A lesson adds a few steps at most (`pip install x && pytest`, `git stash && git pull && git
# stash pop`); a retry with more is a piece of work that ends with the job again: its steps
# are about this one occasion (`git checkout --theirs a.ts && git add a.ts && git commit … &&
# git push && git checkout main && git pull` after a conflicted pull, histories).
MAX_ADDED_STEPS = 3


def is_lesson(failed: str, ok: str, error: str = "") -> bool:
    """Does the retry `ok` change how the failed job is done, on the same targets? (Rule above.)
    A target that the error names as missing or unknown (`No matching distribution found for
    jose`) was the mistake: replacing it is the lesson."""
    failed_segments, ok_segments = _working(failed), _working(ok)
    if not failed_segments or not ok_segments:
        return False
    if suggested_by(error, ok) or _offered_by(error, failed_segments, ok_segments):
        return True  # the error said what to run instead, and it worked
    if len(ok_segments) - len(failed_segments) > MAX_ADDED_STEPS:
        return False  # a workflow that ends with the job again (a merge resolved by hand), not a change
    if _too_many_arguments(error):
        wrong = lambda arg: True  # noqa: E731
    elif is_read_only(failed):  # `ls` of a folder that is not there, then of another: looking
        wrong = lambda arg: False  # noqa: E731 (elsewhere; the same name found elsewhere still is a lesson)
    else:
        wrong = _named_as_missing(error)
    pairs = [(c, ok_tokens) for ok_tokens in ok_segments if (c := _counterpart(failed_segments, ok_tokens))]
    if not pairs:
        return True  # no segment runs the failed program: the job moved to another tool
    # `git fetch o b && git checkout b` retries the checkout, not the fetch: same verb first
    same_verb = [(c, t) for c, t in pairs if _first_word(c) == _first_word(t)]
    counterpart, ok_tokens = (same_verb or pairs)[-1]
    if not same_verb and _quotes_command(error, counterpart):
        named = wrong  # "The `npm ci` command can only install with a package-lock.json": the
        wrong = lambda arg: arg == _first_word(counterpart) or named(arg)  # noqa: E731 (subcommand was the mistake)
    if _installs(counterpart):  # `psycopg2` → `psycopg2-binary`: another build of the package
        installed, before = {_unversioned(t).lower() for t in _arguments(ok_tokens)}, wrong  # the error spoke of
        wrong = lambda arg: before(arg) or _variant_of(_unversioned(arg).lower(), installed, error)  # noqa: E731
    if chosen := packages_none_matched(counterpart, error):  # the package chosen was the mistake
        named_too = wrong
        wrong = lambda arg: arg in chosen or named_too(arg)  # noqa: E731
    if says_port_taken((error or "").lower()):  # `python3 -m http.server 8000` refused, 8001 worked
        taken = wrong
        wrong = lambda arg: _port_like(arg) or taken(arg)  # noqa: E731
    if rejects_option(error):  # the option was wrong, and its value goes with it
        values, named = _option_values(counterpart), wrong
        wrong = lambda arg: arg in values or named(arg)  # noqa: E731
    elif unlisted := _options_the_usage_lacks(error, counterpart, ok_tokens):
        values, named = _option_values(unlisted), wrong  # the usage shown is the refusal
        wrong = lambda arg: arg in values or named(arg)  # noqa: E731
    # a word one letter off is a slip only where the error says something was not found:
    # after a test failed in `tests/test_a.py`, `tests/test_b.py` is another file
    slips = not error or any(_says_missing(line) for line in error.lower().splitlines())
    return _same_targets(counterpart, ok_tokens, wrong, typos=slips)


def edit_did_it(failed: str, ok: str, error: str) -> bool:
    """After files were edited, was the edit the fix rather than the retry's option change?
    Yes when the retry only added or dropped options that the error says nothing of: `python
    app.py` failed with a NameError, app.py was edited, `python app.py --port 8000` worked. An
    option the error rejects, names or suggests is the fix whatever was edited."""
    options = option_change(failed, ok)
    if options is None or rejects_option(error) or suggested_by(error, ok):
        return False
    said = (error or "").lower()
    words = {w.lstrip("-").split("=", 1)[0].lower() for w in options[0] + options[1] if w != ANY_VALUE}
    return not any(len(w) >= 3 and w in said for w in words)


def suggested_by(error: str, ok: str) -> bool:
    """Does the error quote `ok` as the command to run (`npm ci` → "update your lock file with
    `npm install`", git's "use git push --set-upstream origin x")? Two words at least, its
    plumbing set aside."""
    from learn_cli.text.shell import normalize_command

    wanted = " ".join(normalize_command(ok).split()).lower()
    if not error or len(wanted.split()) < 2:
        return False
    said = " ".join(error.split()).lower()
    at = said.find(wanted)
    # not a command offered to look ("To see a list of scripts, run: npm run")
    return at >= 0 and not any(word in said[max(0, at - 60):at] for word in _LOOK_WORDS)


def suggested_again(error: str, fix: str) -> str:
    """The command `error` suggests in the shape of `fix`, a command an earlier error suggested:
    the same words but for at most two (git's "use git push --set-upstream origin fix/nav" when
    the lesson was learned on feat/login); "" when it suggests none such."""
    want = fix.split()
    if not error or len(want) < 2:
        return ""
    for line in error.splitlines():
        words = line.split()
        for at in range(len(words) - len(want) + 1):
            window = [word.strip("`'\".,;") for word in words[at:at + len(want)]]
            if window[:2] == want[:2] and sum(a != b for a, b in zip(window, want, strict=True)) <= 2:
                return " ".join(window)
    return ""


def told_to_run(error: str, ok: str, failed: str) -> bool:
    """Does the error spell `ok` out as a command of its own, other than `failed`, for the
    failed command's program: on a line of its own (indented, or after `$ `), in backticks, or
    as a JSON "command" value? Stricter than suggested_by, for pairing, which it decides: a
    command in double quotes in prose is not one (git's status lines, `(use "git push" to
    publish your local commits)`, name every next step there is, not a way past the error);
    nor an install it names for another command (a step before the retry), nor a look."""
    from learn_cli.engine.goals import INSTALL, goal
    from learn_cli.text.effects import is_read_only

    steps, was = _working(ok), _working(failed)
    if not steps or not was or steps == was or steps[0][0] != was[-1][0]:
        return False
    if goal(steps[0]) == INSTALL != goal(was[-1]) or is_read_only(ok) and not is_read_only(failed):
        return False
    program = steps[0][0]
    n = len(steps)
    for text in _commands_in(error, program):
        said = _working(text)
        if said != was and any(said[i:i + n] == steps for i in range(len(said) - n + 1)):
            return True
    return False


_JSON_COMMAND = '"command": "'  # a CLI's hint as JSON (the Vercel CLI's `"next": [{"command": …}]`)


def _commands_in(error: str, program: str) -> list[str]:
    """The commands an error's lines hold that run `program` (told_to_run)."""
    found = []
    for line in error.split("\n"):
        if program not in line:
            continue
        text = line.strip().removeprefix("$ ").removeprefix("> ")
        found.append(text)
        found.extend(span for span in text.split("`")[1::2] if program in span)
        if text.startswith(_JSON_COMMAND):
            found.append(text[len(_JSON_COMMAND):].rstrip(",").rstrip('"'))
    return found


_LOOK_WORDS = ("to see", "list", "show", "details", "more information", "help", "inspect", "debug")


def platform_retry(failed: str, ok: str, error: str) -> bool:
    """Another spelling of the same job where the first does not exist (a Mac's BSD tools, a
    program not installed), however little text the two share:
    - the error rejects an option: the same program with its options and their values changed
      and its targets kept (`date -d '1 day ago' +%F` → `date -v-1d +%F`); or it says the job
      asked for does not exist: the same program asked for another (`make test` → `make check`);
    - the error rejects an option, or says the failed program itself is not installed: another
      program on the very same targets (`sha256sum f` → `shasum -a 256 f`, `readlink -f d` →
      `realpath d`), unless it only looks at them (`ls -l f`)."""
    old, new = _working(failed), _working(ok)
    if len(old) != 1 or len(new) != 1:
        return False
    (was, now), bad_option = (old[0], new[0]), rejects_option(error)
    if canonical_program(was[0]) == canonical_program(now[0]):
        return (bad_option or missing_job(error, was, now)) and is_lesson(failed, ok, error)
    if not (bad_option or _not_installed(error, was[0])) or canonical_program(now[0]) in _LOOKS_AT_FILES:
        return False
    return bool(_arguments(was)) and (_same_targets(was, now) or _code_on_the_same_files(was, now))


def _code_on_the_same_files(failed: Sequence[str], ok: Sequence[str]) -> bool:
    """`jq 'keys' paper.json` (jq not installed), then `python3 -c "import json;
    print(json.load(open('paper.json')).keys())"` (round 22): inline code that names every file
    the failed program was given does its job on them; what it does is the code's to say."""
    if len(ok) < 3 or canonical_program(ok[0]) not in INTERPRETERS or ok[1] not in INLINE_CODE_FLAGS:
        return False
    files = [arg for arg in _arguments(failed) if "." in path_name(arg).strip(".")]
    return bool(files) and all(path_name(arg) in ok[2] for arg in files)


def ran_the_script(failed: str, ok: str, error: str) -> bool:
    """`npm run lint` failed, and its error shows the script's line (npm and pnpm echo `> app@1.0.0
    lint` and then `> eslint src --ext js,jsx`; yarn and bun `$ eslint src`); the retry ran that
    line itself (`npx eslint src --ext js,jsx`, its options and targets all kept): the same job
    without the package manager. The script's line must be the one the error shows, so a
    retry that runs some other tool, or the same tool on less, is not it."""
    old, new = _working(failed), _working(ok)
    if len(old) != 1 or canonical_program(old[0][0]) not in JS_PACKAGE_MANAGERS:
        return False
    line = _script_line(error, script_name(old[0]) or _first_word(old[0]))
    if not line:
        return False
    body = _working(line)
    if len(body) != 1:
        return False
    return any(tokens[0] == body[0][0] and all(word in tokens[1:] for word in body[0][1:]) for tokens in new)


def _script_line(error: str, script: str) -> str:
    """The command line of package.json script `script` as the package manager echoed it, or ''
    (yarn and bun name no script: their line is the one the failed command ran)."""
    from learn_cli.text.failure import script_echo

    echo = script_echo(error)
    if len(echo) == 2 and echo[0].split()[2] == script:
        return echo[1][2:].strip()
    return echo[0][2:].strip() if len(echo) == 1 and script else ""


def missing_job(error: str, was: Sequence[str], now: Sequence[str]) -> bool:
    """Did the error say that the job the failed command asked for does not exist (`make
    test`: "No rule to make target 'test'"; `just lint`: "Justfile does not contain recipe
    `lint`"; `npm run simulation`: 'Missing script: "simulation"'), and the retry asks the same
    program for another one (`make check`, `npm run dev`)?"""
    job, other = script_name(was) or _first_word(was), script_name(now) or _first_word(now)
    if not job or not other or job == other or any(mark in job + other for mark in "/.\\"):
        return False  # a job's name, not a file (another file after a missing one is moving on)
    if other in _LISTING_WORDS and len(_arguments(now)) == 1:
        return False  # `npm run` alone lists the scripts: a look, not another job
    return _named_as_missing(error)(job)


_LISTING_WORDS = frozenset({"run", "run-script", "exec", "help", "list", "ls", "tasks", "targets"})


# Programs that show a file rather than do a job with it: after `sha256sum f` is not found,
# `ls -l f` looks at f, it does not hash it.
_LOOKS_AT_FILES = frozenset({"ls", "ll", "la", "cat", "bat", "less", "more", "head", "tail", "file", "wc", "tree",
                             "which", "whereis", "type", "command", "echo", "printf", "pwd", "test", "["})


def _not_installed(error: str, program: str) -> bool:
    name = canonical_program(program).lower()
    return name in error.lower() and missing_program(error) == name


def _options_the_usage_lacks(error: str, failed: Sequence[str], ok: Sequence[str]) -> list[str]:
    """When the error is the program's usage (`usage: ccompiler [--print-ast] … <source.c>`),
    the options the retry dropped that the usage does not list, each with the word after it (as
    `_option_values` reads them): the usage shown was the refusal of those. [] otherwise."""
    lower = (error or "").lower()
    name = path_name(failed[0]).lower()
    if f"usage: {name}" not in lower:
        return []
    unlisted = []
    for option, value in zip(failed[1:], [*failed[2:], ""], strict=False):  # (the last has no value;
        # a program run bare, `./build/ccompiler` printing its usage, has no options at all)
        flag = option.split("=", 1)[0].lower()
        if option.startswith("-") and option not in ok and flag not in lower:
            unlisted += [option, value]
    return [failed[0], *unlisted]


def packages_none_matched(tokens: Sequence[str], error: str) -> set[str]:
    """The packages of a workspace the segment chose (`pnpm --filter @app/api lint`), when the
    error says nothing matched ("No projects matched the filters", round 21); else none."""
    from learn_cli.engine.goals import chosen_packages

    chosen = chosen_packages(tokens)
    if not chosen or not any(_says_missing(line) for line in (error or "").lower().splitlines()):
        return set()
    return chosen


def _option_values(tokens: Sequence[str]) -> set[str]:
    """The words right after an option (`-c %s`, `-printf '%p'`): its value, when it takes one."""
    return {value for option, value in zip(tokens[1:], tokens[2:], strict=False)
            if option.startswith("-") and "=" not in option and not value.startswith("-")}


_MISSING_WORDS = ("not found", "no matching", "unknown", "no such", "did not match", "does not match",
                  "does not exist", "invalid", "not recognized", "cannot find", "could not find", "no module",
                  "missing script", "unrecognized", "not a ", "is not in", "unexpected", "too many", "extra argument",
                  "could not import", "cannot import", "failed to import", "no rule to make", "does not contain",
                  "unable to access", "cannot access", "can't open", "cannot open", "does not have",
                  "could not be found", "cannot be found", "can't be found")

# "No session found for task ID '008'", "no tests found for 'x'": nothing of that name was found;
# "No projects matched the filters" (pnpm, round 18): nothing answers to the name given
_NONE_FOUND = r"\bno\b[^.\n]{1,40}?\b(?:found|matched)\b"


def _says_missing(line: str) -> bool:
    """Does this error line (in lower case) say that something it names is missing or unknown?"""
    if any(words in line for words in _MISSING_WORDS):
        return True
    if "found" not in line and "matched" not in line or "no" not in line:
        return False
    from learn_cli.text import rx

    return rx.search(_NONE_FOUND, line) is not None


# Usage errors that say a command got an argument too many (clap, argparse, click): the line
# names where the parser stopped (`unexpected argument '9' found`), not always the word to drop
# (`cast index address uint256 $H 9` → `… address $H 9`), so any argument dropped is the fix.
# Only these parsers' phrases: the shell's `[: too many arguments` from a script under test is
# a bug of the script, not of how it was called.
_TOO_MANY = ("unexpected argument", "too many positional", "extra argument", "unrecognized arguments")


def _too_many_arguments(error: str) -> bool:
    text = (error or "").lower()
    return any(words in text for words in _TOO_MANY)


def _named_as_missing(error: str):
    """A test: is this argument named by an error line that says it is missing or unknown?
    Whole, or one part of it that the line quotes (`could not import module "main"` names
    `main:app`; `"src"` names `src/index.ts`)."""
    lines = [line for line in (error or "").lower().splitlines() if _says_missing(line)]
    quoted = {q for line in lines for q in _quoted(line) if len(q) >= 3}

    def named(arg: str) -> bool:
        word = _unversioned(arg).lower()
        if len(word) >= 3 and any(word in line for line in lines):
            return True
        return bool(quoted) and any(part in quoted for part in _parts_of(word))
    return named


def _installs(tokens: Sequence[str]) -> bool:
    from learn_cli.engine.goals import INSTALL, goal

    return goal(tokens) == INSTALL


def _variant_of(package: str, others: set[str], error: str) -> bool:
    """Is another package named here a build or packaging of `package`: its name with a part
    added after a separator (`psycopg2-binary`, `python-jose`, `opencv-python-headless`; not
    `vitest` for `vite`), after an error that was not the network's (then the next package
    installed is the next package: `react-dom` after `react` could not be fetched)?"""
    if len(package) < 3:
        return False
    if not any(o.startswith(package + sep) or o.endswith(sep + package) for o in others for sep in "-_."):
        return False
    from learn_cli.text.failure import categorize

    return categorize(error) != "network"


def _port_like(arg: str) -> bool:
    """`8000`, `0.0.0.0:8000`, `localhost:3000`: a port, alone or after its host."""
    port = arg.rpartition(":")[2]
    return port.isdigit() and 2 <= len(port) <= 5


def _offered_by(error: str, failed_segments, ok_segments) -> bool:
    """The one word the retry put in place of one of the failed command's is a word the error
    quotes as the way: alembic's "Multiple head revisions are present for given argument
    'head'; please specify … or 'heads' for all heads", then `alembic upgrade heads`."""
    if not error or len(failed_segments) != 1 or len(ok_segments) != 1:
        return False
    was, now = failed_segments[0], ok_segments[0]
    if len(was) != len(now) or was[0] != now[0]:
        return False
    changed = [(a, b) for a, b in zip(was, now, strict=True) if a != b]
    if len(changed) != 1 or changed[0][1].startswith("-"):
        return False
    old, new = changed[0]
    quoted = {word for line in error.splitlines() for word in _quoted(line)}
    if new not in quoted or old not in quoted:
        return False  # (the error speaks of both: the one given, and the one to give)
    said = error.lower()
    for mark in ("'", '"', "`"):
        at = said.find(f"{mark}{new.lower()}{mark}")
        while at >= 0:
            if any(phrase in said[max(0, at - 24):at] for phrase in _OFFERING):
                return True
            at = said.find(f"{mark}{new.lower()}{mark}", at + 1)
    return False


# Words before a quoted value that offer it as the way ("… or 'heads' for all heads", "did you
# mean 'install'?", "use 'main'").
_OFFERING = (" or ", "did you mean", "use ", "try ", "instead", "perhaps", "one of", "choose from", "valid ",
             "possible ", "expected ", "similar ")


def _quotes_command(error: str, tokens: Sequence[str]) -> bool:
    """Does the error quote the program and its subcommand as what went wrong (`npm ci`)?"""
    verb = _first_word(tokens)
    if not verb or not error:
        return False
    said = f"{canonical_program(tokens[0])} {verb}".lower()
    return any(said in (q.lower() for q in _quoted(line)) for line in error.splitlines())


def _quoted(line: str) -> list[str]:
    """The words a line quotes ("x", 'x', `x`)."""
    found = []
    for mark in ('"', "'", "`"):
        pieces = line.split(mark)
        found.extend(pieces[1:-1:2])
    return found


def _parts_of(word: str) -> list[str]:
    """`app.main:app` -> app.main, app, main; `src/index.ts` -> src, index.ts, index."""
    parts = []
    for piece in word.replace(":", "/").split("/"):
        parts.append(piece)
        parts.extend(piece.split("."))
    return [p for p in parts if p]


def working_steps(command: str) -> list[list[str]]:
    """The words of each step of `command` that does work, its `cd` and setup steps too
    (_working): what a change to the command must leave as the fix had it."""
    return _working(command, setup=True)


def _working(command: str, unwrapped: bool = True, setup: bool = False) -> list[list[str]]:
    """Token lists of the segments that do the work: no plumbing (text.shell.strip_plumbing:
    `2>&1`, `timeout N`, `| tail`, `&& echo OK` are no arguments), no setup (`cd X`) unless
    `setup`, no output filters; wrappers taken off (`sudo`, `xargs -r`) unless not `unwrapped`."""
    segments, previous_op = [], ""
    for text, op in strip_plumbing(command or "").segments:
        tokens = unwrap_tokens(tokenize(text)) if unwrapped else tokenize(text)
        piped, previous_op = previous_op in ("|", "|&"), op
        if not tokens:
            continue
        name = canonical_program(tokens[0])
        if (name in SETUP_PROGRAMS and not setup) or (piped and name in OUTPUT_SHAPERS) or name == "echo":
            continue
        if name == "npm" and tokens[1:2] and tokens[1] in _SCRIPT_SHORTHANDS:
            tokens = [tokens[0], "run", *tokens[1:]]  # `npm start` runs the script `start`: `npm run start`
        segments.append([name, *tokens[1:]])
    return segments


# The scripts a JavaScript package manager runs without `run` (`npm start`, `pnpm test`): one
# script as any other, so that `npm run dev` (no such script) → `npm start` replaced the script.
# (yarn, pnpm and bun run any script or installed binary so: `yarn jest` is no script of that name.)
_SCRIPT_SHORTHANDS = frozenset({"start", "test", "stop", "restart"})


def _counterpart(failed_segments: list[list[str]], ok_tokens: Sequence[str]) -> list[str] | None:
    """The failed segment that `ok_tokens` retries: same program, and the same subcommand when
    the program has one; the last such segment (a chain fails at its end)."""
    same_program = [seg for seg in failed_segments if seg[0] == ok_tokens[0]]
    same_verb = [seg for seg in same_program if _first_word(seg) == _first_word(ok_tokens)]
    found = same_verb or same_program
    return found[-1] if found else None


def _first_word(tokens: Sequence[str]) -> str:
    return next((t for t in tokens[1:] if t and not t.startswith("-")), "")  # ('' is an option's value)


def _same_targets(failed: Sequence[str], ok: Sequence[str], wrong=lambda arg: False, typos: bool = True) -> bool:
    """Every argument of the failed segment is still there in the retry, or corrected (a typo,
    a path, a version, or one the error named as wrong). Without `typos`, a word two edits
    away is another target (`test_a.py`, `test_c.py`)."""
    failed_args, ok_args = _arguments(failed), _arguments(ok)
    cut = bool(ok_args) and ok_args[-1].endswith(TRUNCATION)  # an export cut the retry short
    unmatched = list(ok_args)
    for arg in failed_args:
        match = next((other for other in unmatched if _same_target(arg, other, typos)), None)
        if match is None:
            if wrong(arg) or cut and not unmatched or _another_spelling(arg, ok_args):
                continue  # (after the cut, the retry's words are unknown)
            return False
        unmatched.remove(match)
    return True


def _another_spelling(arg: str, kept: Sequence[str]) -> bool:
    """`origin/feat/x` beside `feat/x`: the same branch or file by a longer name (`git checkout
    -b feat/x origin/feat/x` refused, the branch exists, then `git checkout feat/x`)."""
    return "/" in arg and any(len(word) >= 3 and arg.endswith("/" + word) for word in kept)


def _arguments(tokens: Sequence[str]) -> list[str]:
    """Words that are not options; an option's value counts (a message or a test name is a target)."""
    return [t for t in tokens[1:] if not t.startswith("-") and t != "--"]


def _same_target(a: str, b: str, typos: bool = True) -> bool:
    if a == b or windows_alike(a, b):
        return True  # (`sed -n '1,240p' f` then `sed -n '1,220p' d/f`: the lines shown are no target)
    if _cut_from(a, b) or _cut_from(b, a):
        return True  # an export cut one of them (`"import numpy…`): what is left is the same
    a_base, b_base = _unversioned(a), _unversioned(b)
    if a_base == b_base:
        return True  # `requests==2.0` → `requests`, `pkg@1` → `pkg`
    if "/" in a or "/" in b:
        if _file_name(a) == _file_name(b):
            return True  # the same file or folder, found elsewhere
    elif "\\" in a + b and _path_word(a) and _path_word(b) and path_name(a) == path_name(b):
        return True  # and on Windows (`.\\manifest.json`, `.\\webapp\\manifest.json`)
    return typos and _typo(a_base, b_base)  # (`vite@5` is not two letters off `vitest`)


def _cut_from(whole: str, cut: str) -> bool:
    """`cut` is `whole` cut short by an export's `…` (a few characters prove nothing)."""
    return cut.endswith(TRUNCATION) and len(cut) > 8 and whole.startswith(cut[:-len(TRUNCATION)])


def _unversioned(word: str) -> str:
    for mark in _VERSION_MARKS:
        head, found, version = word[1:].partition(mark)  # `@scope/pkg`: the leading @ is the name's
        if found and not (mark == "@" and any(c in version for c in ":/")):
            return word[0] + head  # (`git@github.com:acme/x.git` is an address, no version of `git`)
    return word


def _typo(a: str, b: str) -> bool:
    """A misspelling of the same word: at most 2 edits, and at most half of the word."""
    from learn_cli.capture.pairing import levenshtein

    longest = max(len(a), len(b))
    if longest < 4 or abs(len(a) - len(b)) > 2:
        return False
    if abs(len(a) - len(b)) == 2 and (a.startswith(b) or b.startswith(a)):
        return False  # a word grown at its end is another name (`vite`, `vitest`), not a slip
    if [c for c in a if not c.isdigit()] == [c for c in b if not c.isdigit()]:
        return False  # only a number differs: another file, month or version (`2025_11` → `2025_09`)
    distance = levenshtein(a, b)
    return distance <= 2 and distance * 2 <= longest  # `biuld` → `build` is 2 edits of 5


def same_work(a: str, b: str) -> bool:
    """Do two commands do the same job on the same targets? A learned rewrite of one command
    (`X` → `Y`) applies to another failure only when that failure runs X's job (issue 10:
    a generic error such as "test failed" from another test must not get this test's fix)."""
    segments_a, segments_b = _working(a), _working(b)
    if not segments_a or not segments_b:
        return " ".join(a.split()) == " ".join(b.split())
    if _other_scripts(a, b):
        return False
    for tokens in segments_b:
        counterpart = _counterpart(segments_a, tokens)
        # two commands, both run as meant: a word an edit or two away is another target
        if counterpart is not None and _same_targets(counterpart, tokens, typos=False) and _same_targets(
                tokens, counterpart, typos=False):
            return True
    return False


def _other_scripts(a: str, b: str) -> bool:
    """Do both run a script by its path, and two paths (`./run_tests.sh`, `bash
    test/run_tests.sh`, `./test/invalid/run_tests.sh`)? Then they are two scripts, whatever
    their names; a fix that ran another runner for one is no fix for the other (a real history
    has a `run_tests.sh` per test suite)."""
    from posixpath import normpath

    first, second = _script_run_by_path(a), _script_run_by_path(b)
    return bool(first and second) and normpath(first) != normpath(second)


def _script_run_by_path(command: str) -> str:
    """The path a command runs its script by (`./x.sh`, `bash test/x.sh`, `python3 tools/a.py`),
    or "" for a program found on PATH or a script named without a folder."""
    segments = strip_plumbing(command or "").segments
    tokens = tokenize(segments[-1][0]) if segments else []
    if len(tokens) > 1 and canonical_program(tokens[0]) in _SCRIPT_RUNNERS:
        tokens = tokens[1:]
    word = tokens[0] if tokens else ""
    return word if "/" in word and not word.startswith(("-", "$")) else ""


def by_analogy(before: str, now: str, fix: str) -> str | None:
    """`fix` (what worked after `before` failed) for `now`, the same command on other targets:
    the arguments that differ (at most two, word for word, not a program nor an option)
    replaced in the fix as well (`pip install -r requirements.txt` → `pip install -r
    dev.txt`; `cd build && rm -f CMakeCache.txt` → `cd build-arm && …`). None when the two
    commands do not line up, or the fix does not name every one of those arguments."""
    old, new = tokenize(" ".join(before.split())), tokenize(" ".join(now.split()))
    if len(old) != len(new) or old == new:
        return None
    differ = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    programs = {0} | {i + 1 for i, word in enumerate(old) if word in ("&&", "||", "|") or word.endswith(";")}
    if len(differ) > 2 or any(i in programs or old[i].startswith("-") or new[i].startswith("-") for i in differ):
        return None
    swaps = [(old[i], new[i]) for i in differ]
    if any(old.count(a) != 1 for a, _b in swaps):
        return None  # (`psql -U app -d app`: which of them the fix kept is anyone's guess)
    if any(_word_at(fix, a) < 0 for a, _b in swaps):
        return None  # (`grep -P 'a\\d+' f` → `grep -E 'a[0-9]+' f`: the fix has its own pattern,
        # and the next command's file alone in it would mix the two)
    changed = fix
    for a, b in swaps:
        changed = _replace_words(changed, a, b)
    return changed


def _replace_words(text: str, word: str, by: str) -> str:
    """`text` with `word`, where it stands whole (_word_at), replaced by `by`, left to right."""
    out, rest = [], text
    while (at := _word_at(rest, word)) >= 0:
        out.append(rest[:at] + by)
        rest = rest[at + len(word):]
    return "".join(out) + rest


def moved_to(failed: str, ok: str) -> str | None:
    """The folder of `ok = cd D && <failed>`: the same command worked from D ("run it from
    there"), or None. `failed` must not already start in D."""
    folder, rest = leading_cd(ok)
    was_in, failed_rest = leading_cd(failed)
    if folder is None or folder == was_in or " ".join(rest.split()) != " ".join(failed_rest.split()):
        return None  # (`cd build && make` again after `cmake -B build` made `build`: no move)
    return folder


# What an error says when the path it was given is not there (from the folder the command ran in).
_NOT_THERE = ("no such file", "not found", "did not match any", "does not exist", "could not open", "can't open",
              "cannot open", "cannot find")


def repathed(failed: str, ok: str, error: str) -> list[tuple[str, str]] | None:
    """[(path as it failed, path as it worked)] when `ok` is `failed` with only paths changed,
    each to another path to a file of the same name, and the error names one of them as not
    there: `./build.sh` → `/home/me/proj/build.sh`, `git add docs/p/a.md` → `git add a.md`. The
    command ran in another folder than its paths were written for (agents' shells keep the
    folder of their last `cd`). A shell put before a script (`bash /proj/build.sh`) changes
    nothing else. None otherwise; the caller works out where the paths lead."""
    low = (error or "").lower()
    if not any(phrase in low for phrase in _NOT_THERE):
        return None
    old, new = strip_plumbing(failed).segments, strip_plumbing(ok).segments
    if len(old) != len(new) or [op for _s, op in old] != [op for _s, op in new]:
        return None
    pairs: list[tuple[str, str]] = []
    for (old_text, _op), (new_text, _op2) in zip(old, new, strict=True):
        a, b = tokenize(old_text), tokenize(new_text)
        if len(b) == len(a) + 1 and b[0] in _SCRIPT_RUNNERS and a and "/" in a[0]:
            b = b[1:]  # `./build.sh` → `bash /proj/build.sh`: the shell is how it was run, not a change
        if len(a) != len(b) or not a or a[0] == "cd":
            return None
        for x, y in zip(a, b, strict=True):
            if x == y:
                continue
            if _file_name(x) != _file_name(y) or not _path_word(x) or not _path_word(y):
                return None
            pairs.append((x, y))
    names = {_file_name(x).lower() for x, _y in pairs}
    return pairs if pairs and any(name in low for name in names) else None


def _file_name(path: str) -> str:
    """The last part of a path, a folder's too (`src/app/` -> `app`)."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def _path_word(token: str) -> bool:
    return bool(token) and not token.startswith("-") and ("/" in token or "." in token.strip(".")) and not any(
        c in token for c in "$`'\"=(){}|&;<>*?")


def apply_dropped_cd(command: str, folder: str) -> str | None:
    """`command` without its leading `cd folder`, or None when it does not start with that."""
    found, rest = leading_cd(command)
    return rest or None if found == folder else None


def option_change(failed: str, fix: str) -> tuple[list[str], list[str]] | None:
    """(added, dropped) words when `fix` is `failed` with options added or dropped and nothing
    else changed (the same program, verb and targets): `git pull origin main` → `git pull
    origin main --no-rebase` is (["--no-rebase"], []). Such a lesson holds for any target of
    the same command (`git pull origin dev`). The same change made to every step it changed
    is one change: `cmake -S . -B build -q && cmake --build build -q` → both without `-q` is
    (["-q"] dropped). None otherwise."""
    pairs = changed_segments(failed, fix)
    if not pairs or _program_renamed(failed, fix):
        return None
    changes = [_segment_option_change(old, new) for old, new in pairs]
    return changes[0] if all(change is not None and change == changes[0] for change in changes) else None


def _program_renamed(failed: str, fix: str) -> bool:
    """Does a step of `fix` name its program otherwise than the same step of `failed` (`python3.11
    --version` -> `py -3.11 --version`, `python -m pytest` -> `python3 -m pytest -q`)? The
    options changed are then not the whole change (segments compare by canonical program)."""
    old, new = _raw_steps(failed), _raw_steps(fix)
    return len(old) == len(new) and any(program_as_named(a[0]) != program_as_named(b[0]) for a, b in
                                        zip(old, new, strict=True))


def _segment_option_change(old_tokens: list[str], new_tokens: list[str]) -> tuple[list[str], list[str]] | None:
    """option_change of one segment, `old_tokens` → `new_tokens` (the same program)."""
    from learn_cli.engine.goals import targets

    old, new = [old_tokens], [new_tokens]
    given = _dropped_values(new[0], old[0])  # values of the options added (`--test-dir build`)
    if _first_word(old[0]) != _first_word([t for t in new[0] if t not in given]):
        return None
    values = _dropped_values(old[0], new[0])
    kept_old = [t for t in old[0] if t not in values and not (t.startswith("-") and t not in new[0])]
    kept_new = [t for t in new[0] if t not in given and not (t.startswith("-") and t not in old[0])]
    if targets(kept_old) != targets(kept_new):  # (without the options changed: `xargs -r` took no value)
        return None
    added = [t for t in new[0][1:] if t not in old[0][1:]]
    dropped = [ANY_VALUE if t in values else t for t in old[0][1:] if t not in new[0][1:]]
    first = (added[:1] or dropped[:1])[0] if added or dropped else None
    if first is None or not (first.startswith("-") or _value_of_kept_option(first, old[0], new[0])):
        return None  # the first word changed must be an option, or a value given to one kept
    if not all(t.startswith("-") for t in added + dropped if t in added[:1] + dropped[:1] and t != first):
        return None  # the first word changed must be an option; its value may follow it
    return added, dropped


def changed_segment(failed: str, fix: str, setup: bool = False) -> tuple[list[str], list[str]] | None:
    """(old, new) tokens of the one working segment (or setup step, if `setup`) `fix` changed,
    running the same program, when every other segment is the same, or None. Segments are
    compared without their wrappers, then with them when only a wrapper's options changed
    (`git ls-files -d | xargs -r git rm` → `… | xargs git rm`: the `xargs -r git rm` segment)."""
    pairs = changed_segments(failed, fix, setup)
    return pairs[0] if len(pairs) == 1 else None


def changed_segments(failed: str, fix: str, setup: bool = False) -> list[tuple[list[str], list[str]]]:
    """(old, new) tokens of every working segment `fix` changed, each running the program it
    ran, when the commands have as many segments (changed_segment's rule, for one or more)."""
    for unwrapped in (True, False):
        old, new = _working(failed, unwrapped, setup), _working(fix, unwrapped, setup)
        if not old or len(old) != len(new):
            return []
        differ = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
        if differ:
            if any(old[i][0] != new[i][0] for i in differ):
                return []
            return [(old[i], new[i]) for i in differ]
    return []


def _value_of_kept_option(word: str, old: Sequence[str], new: Sequence[str]) -> bool:
    """Is `word`, added, the value of an option both commands have, right after it (BSD's `sed
    -i ''`: the in-place option wants its backup suffix, empty)?"""
    at = new.index(word) if word in new else 0
    return at > 1 and new[at - 1].startswith("-") and new[at - 1] in old


# In an option_change's dropped words: the value of the option before it, whatever it is
# (`npx eslint src --ext .ts` → `npx eslint src`: drop `--ext` and its value, `.ts,.tsx` too).
ANY_VALUE = "<value>"


def _dropped_values(old: Sequence[str], new: Sequence[str]) -> set[str]:
    """The words of `old` that follow an option dropped in `new` and went with it (the other
    way round: the values of the options `new` added)."""
    return {value for option, value in zip(old[1:], old[2:], strict=False)
            if option.startswith("-") and "=" not in option and not value.startswith("-")
            and option not in new and value not in new}


def _runs(tokens: Sequence[str], head: Sequence[str]) -> bool:
    """Does the segment run the command `head` names (its program, and its verb if it has one)?"""
    return bool(tokens) and canonical_program(tokens[0]) == canonical_program(head[0]) and (
        len(head) < 2 or head[1].startswith("-") or head[1] in tokens[1:2])


def apply_option_change(command: str, added: list[str], dropped: list[str], after: str = "",
                        head: Sequence[str] = ()) -> str | None:
    """`command` with the options of an option_change applied, or None when it does not fit
    (another program or verb, several steps, or the options are already there). The added
    options go right after the word `after` when the command has it, else at the end. Options
    added past a `--` (`npm test -- --run`) go past the command's own `--` when it has one
    (`npm test -- --run src/b.test.ts`)."""
    segments = _working(command)
    named = [t for t in dropped if t != ANY_VALUE]
    alone = len(segments) == 1
    if not alone and head:  # a pipeline or chain: the segments that run the changed command
        segments = ([seg for seg in segments if _runs(seg, head)]  # (or the wrapper: `xargs -r`)
                    or [seg for seg in _working(command, unwrapped=False) if _runs(seg, head)])
    if len(segments) == 1 and added[:1] == ["--"] and "--" in segments[0]:
        added, after = added[1:], "--"  # the script's options join the ones it is given already

    def fits(tokens: Sequence[str]) -> bool:
        return not any(t in tokens for t in added) and all(t in tokens for t in named)

    if len(segments) > 1 and not added:  # an option dropped from each step that has it (`-q`
        segments = [seg for seg in segments if fits(seg)]  # from both cmake steps); a step without
        if segments:  # it stays as it is
            return _rewritten(command, lambda words: _runs(unwrap_tokens(words), head) or _runs(words, head),
                              lambda words: _without(words, dropped), every=True)
    if len(segments) != 1 or not fits(segments[0]):
        return None
    return _rewritten(command, lambda words: alone or _runs(unwrap_tokens(words), head) or _runs(words, head),
                      lambda words: _changed(words, added, dropped, after))


def _rewritten(command: str, pick, rewrite, setup: bool = False, every: bool = False) -> str | None:
    """`command` with the first working segment (or setup step, if `setup`) that `pick`
    accepts rewritten word by word (`rewrite`), or `every` one it accepts, its other segments
    and operators as they were; None when none is picked."""
    out, done = [], False
    for text, op in split_segments_ops(" ".join(command.split())):
        spelled = word_spellings(text)
        words = [word for word, _ in spelled]
        if (every or not done) and words and (setup or canonical_program(words[0]) not in SETUP_PROGRAMS) \
                and pick(words):
            text, done = " ".join(_respelled(rewrite(words), spelled)), True
        out.append(text + (f" {op} " if op and op != "\n" else "; " if op else ""))
    return "".join(out).strip() if done else None


def _respelled(words: list[str], spelled: list[tuple[str, str]]) -> list[str]:
    """`words` for the shell: a word the command had keeps its own spelling there (`"$HOME/x"`,
    `*.js` stay expanded and globbed, not quoted into literals); a new word is quoted as needed."""
    kept: dict[str, list[str]] = {}
    for word, spelling in reversed(spelled):
        kept.setdefault(word, []).append(spelling)
    return [kept[word].pop() if kept.get(word) else _shell_word(word) for word in words]


def _inserted(words: list[str], added: list[str], after: str) -> list[str]:
    """`added` after the word `after`, else at the end of the program's own words: before a
    `--`, past which the words are the script's (`npm run dev --workspace=web -- --port 3001`)."""
    at = words.index(after) + 1 if after in words else words.index("--") if "--" in words else len(words)
    return words[:at] + added + words[at:]


def _changed(words: list[str], added: list[str], dropped: list[str], after: str) -> list[str]:
    """`words` with `dropped` taken out and `added` put in (_inserted). An option given another
    value (`--zone=a` dropped, `--zone=b` added) takes the old one's place: the command stays
    as the agent wrote it, but for the value."""
    words, rest = list(words), []
    for option in added:
        name = option.split("=", 1)[0] + "=" if option.startswith("-") and "=" in option else ""
        at = next((i for i, word in enumerate(words) if name and word.startswith(name) and word in dropped), -1)
        if at >= 0:
            words[at] = option
        else:
            rest.append(option)
    return _inserted(_without(words, dropped), rest, after)


def _without(words: list[str], dropped: list[str]) -> list[str]:
    """`words` without the dropped ones; an option followed by ANY_VALUE loses its value too."""
    with_value = {option for option, value in zip(dropped, dropped[1:], strict=False) if value == ANY_VALUE}
    kept, skip = [], False
    for word in words:
        if skip and not word.startswith("-"):
            skip = False
            continue
        skip = word in with_value
        if word not in dropped:
            kept.append(word)
    return kept


_MAX_PROGRAM_WORDS = 3  # `python` → `uv run python`, `pytest` → `python -m pytest`


def replaced_target(failed: str, fix: str, error: str) -> tuple[str, str, str, str] | None:
    """(program, old, new, before) when `fix` is `failed` with one argument replaced, the one its
    error names as missing or unknown (`uvicorn main:app --reload` → `uvicorn app.main:app
    --reload` after `Could not import module "main"`; `source venv/bin/activate && pytest` →
    `source .venv/…`), `before` the word in front of it (`-U` in `psql -U app -d app`): the
    lesson holds for the program's next command naming it (`uvicorn main:app --port 8001`,
    `source venv/bin/activate && python app.py`). None otherwise."""
    pair = changed_segment(failed, fix, setup=True)
    if pair is None or len(pair[0]) != len(pair[1]):
        return None
    changed = [at for at, (a, b) in enumerate(zip(pair[0], pair[1], strict=True))
               if at and a != b and not windows_alike(a, b)]  # (how much is shown)
    if len(changed) != 1 or pair[0][changed[0]].startswith("-"):
        return None
    at = changed[0]
    old, new = pair[0][at], pair[1][at]
    return (pair[0][0], old, new, pair[0][at - 1]) if _named_as_missing(error)(old) else None


def apply_replaced_target(command: str, program: str, old: str, new: str, before: str = "") -> str | None:
    """`command` with the argument `old` replaced by `new` in the step running `program` with it;
    where it is named more than once (`psql -U app -d app` after `role "app" does not exist`),
    only where it follows `before`, as in the lesson (the database keeps its name). A file that
    a look could not find, found elsewhere, is where any look finds it: `sed -n '1,240p'
    AGENTS.md` then `sed … ralph/AGENTS.md` answers `cat AGENTS.md` too."""
    from learn_cli.capture.pairing import path_like

    looked_for = path_like(old) and only_reads(f"{program} {old}")  # (a file, not `main:app`)

    def runs_it(words: Sequence[str]) -> bool:
        return words[0] == program or looked_for and only_reads(" ".join(words))

    if not any(runs_it(words) and old in words[1:] for words in _working(command, setup=True)):
        return None

    def replaced(words: list[str]) -> list[str]:
        places = [at for at, word in enumerate(words) if at > 0 and word == old]
        if len(places) > 1:
            places = [at for at in places if words[at - 1] == before]
        return [new if at in places else word for at, word in enumerate(words)]

    return _rewritten(command, lambda words: old in words[1:] and runs_it(unwrap_tokens(words)), replaced,
                      setup=program in SETUP_PROGRAMS)


def program_change(failed: str, fix: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(old, new) program words when `fix` is `failed` run by another program with the very same
    arguments (`python x.py` → `python3 x.py`, `pytest -q` → `python -m pytest -q`,
    `docker-compose up` → `docker compose up`, `sha256sum f` → `shasum -a 256 f`). Such a
    lesson holds for any use of the old program that fails the same way. None otherwise."""
    old, new = _raw_steps(failed), _raw_steps(fix)
    if len(old) != 1 or len(new) != 1:
        return None
    a, b = old[0], new[0]
    for cut_a in range(1, min(_MAX_PROGRAM_WORDS, len(a)) + 1):
        rest = a[cut_a:]
        cut_b = len(b) - len(rest)
        if 1 <= cut_b <= _MAX_PROGRAM_WORDS and tuple(b[cut_b:]) == tuple(rest) and a[:cut_a] != b[:cut_b]:
            if not _program_words(a[:cut_a]) or not _program_words(b[:cut_b]) or b[0] in ("cd", "echo"):
                return None
            return tuple(a[:cut_a]), tuple(b[:cut_b])
    return None


def _program_words(words: Sequence[str]) -> bool:
    """Words that name a program, not its arguments: one word, `python -m pytest`, `uv run X`,
    `docker compose`, `npx X`; run as root or with variables set (`sudo docker`,
    `PYTHONPATH=. python`), which is how a permission or an import path is fixed."""
    words = _without_run_prefix(words)
    if not words or words[0].startswith("-") or "=" in words[0]:
        return False
    if len(words) == 1 or _options_only(words[1:]):
        return True  # a program, or one with its own options (`shasum -a 256`, `readlink -f`)
    if words[1] == "-m":
        return len(words) == 3
    return (words[1] in ("run", "exec", "compose", "x", "dlx") or words[0] in ("npx", "bunx", "pipx", "uvx")
            or tuple(words[:2]) == ("uv", "pip"))  # `pip install x` → `uv pip install x` (externally managed)


def _options_only(words: Sequence[str]) -> bool:
    """Options and their short values only (`-a 256`, `-f`), or a toolchain chosen (`cargo
    +nightly`): how a program is called, not what on."""
    return words[0].startswith(("-", "+")) and all(
        word.startswith("-") or (before.startswith("-") and word.isdigit()) for before, word in zip(
            words, words[1:], strict=False))


def _without_run_prefix(words: Sequence[str]) -> Sequence[str]:
    """The words after leading `NAME=value` assignments and `sudo`."""
    start = 0
    while start < len(words) and (words[start] == "sudo" or _is_assignment(words[start])):
        start += 1
    return words[start:]


def run_prefix(old: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
    """The words a change of program words only put before the same program (`sudo`,
    `PYTHONPATH=.`), or (): such a lesson holds for whichever program meets the error (a dpkg
    lock refused to `apt-get` and to `apt` alike)."""
    cut = len(new) - len(old)
    if cut <= 0 or tuple(new[cut:]) != tuple(old):
        return ()
    prefix = tuple(new[:cut])
    return prefix if all(word == "sudo" or _is_assignment(word) for word in prefix) else ()


def apply_run_prefix(command: str, prefix: Sequence[str]) -> str | None:
    """`prefix command` (after its leading `cd`) when its one working step lacks the prefix."""
    steps = _raw_steps(command)
    if len(steps) != 1 or tuple(steps[0][:len(prefix)]) == tuple(prefix):
        return None
    folder, cd_step, rest = leading_cd_step(command)
    head = " ".join(prefix)
    return f"{cd_step} && {head} {rest}" if folder is not None else f"{head} {command.strip()}"


def _is_assignment(word: str) -> bool:
    name, equals, _value = word.partition("=")
    return bool(equals) and name.isidentifier()


def _raw_steps(command: str) -> list[list[str]]:
    """The command's working segments as written (no unwrapping: `uv run` is part of the change)."""
    from learn_cli.text.shell import normalize_command

    steps = []
    for text, _op in split_segments_ops(normalize_command(command or "")):
        words = tokenize(text)
        if words and canonical_program(words[0]) not in SETUP_PROGRAMS:
            steps.append(words)
    return steps


def script_run(command: str) -> str:
    """The package.json script a one-step command runs (`npm run dev`: `dev`; `pnpm start`:
    `start`), else "" (also after a `cd`: another folder's package.json, as for program_path)."""
    steps = _raw_steps(command)
    if len(steps) != 1 or leading_cd(command)[0] is not None:
        return ""
    if canonical_program(steps[0][0]) not in JS_PACKAGE_MANAGERS:
        return ""
    words = steps[0]
    return script_name(words) or (words[1] if len(words) > 1 and words[1] in _SCRIPT_SHORTHANDS else "")


def program_path(command: str) -> str:
    """The program a one-step command runs by its path, as written (`.venv/bin/pip install x`:
    `.venv/bin/pip`; `JAVA_HOME=… ./gradlew build`: `./gradlew`), else "": a chain's later steps
    may run what an earlier one makes, and `cd D && …` runs from elsewhere."""
    steps = _raw_steps(command)
    if len(steps) != 1 or leading_cd(command)[0] is not None:
        return ""
    words = [word for word in steps[0] if not word.partition("=")[0].isidentifier() or "=" not in word]
    program = words[0] if words else ""
    return program if "/" in program and not program.startswith(("$", "`", "~")) else ""


def apply_program_change(command: str, old: Sequence[str], new: Sequence[str]) -> str | None:
    """`command` with its program words `old` replaced by `new`, or None when its one working
    step does not start with `old`."""
    steps = _raw_steps(command)
    if len(steps) != 1 or tuple(steps[0][:len(old)]) != tuple(old):
        return None
    head, out, done = " ".join(old), [], False
    for text, op in split_segments_ops(" ".join(command.split())):
        text = text.strip()
        if not done and (text == head or text.startswith(head + " ")):
            text, done = " ".join(new) + text[len(head):], True  # the rest exactly as written
        out.append(text + (f" {op} " if op and op != "\n" else "; " if op else ""))
    return "".join(out).strip() if done else None


def failed_timeout(failed: str, fix: str, error: str) -> bool:
    """Does the error say that `failed`'s `timeout N` is not installed (`timeout 60 npm test`
    on a Mac without coreutils: `command not found: timeout`), and `fix` run without it?
    Compared without their plumbing the two are the same command, which is no lesson; here
    the plumbing was what failed, and doing without it is the lesson."""
    from learn_cli.text.shell import command_programs, timeout_prefixes

    prefixes = timeout_prefixes(failed) if "timeout" in failed else []
    name = missing_program(error) if prefixes else ""
    return bool(name) and name == canonical_program(prefixes[0].split()[0]) and name not in command_programs(fix)


def dropped_timeout(failed: str, fix: str) -> bool:
    """Is `fix` the failed command without its `timeout N` prefix, the rest unchanged? (The
    fix as stored: normalised, so `gtimeout 60 X` after `timeout` was not found is stored as
    X, which works on any machine.) Such a lesson holds for any command run so."""
    from learn_cli.text.shell import normalize_command, timeout_prefixes

    return bool(timeout_prefixes(failed)) and not timeout_prefixes(fix) and (
        normalize_command(failed) == normalize_command(fix))


def quoted_words(failed: str, fix: str) -> bool:
    """Is `fix` the failed command with the words the shell took apart quoted, nothing else
    changed (`pip install fastapi[all]` → `pip install "fastapi[all]"` after zsh's `no matches
    found`; `C:\\xampp\\bin\\mysql.exe -u root` → `"C:\\xampp\\bin\\mysql.exe" -u root` after Git
    Bash's `C:xamppbinmysql.exe: command not found`)? Such a lesson holds for any command with
    such a word that fails so."""
    from learn_cli.text.shell import normalize_command, words_to_quote

    return bool(words_to_quote(failed)) and not words_to_quote(fix) and (
        tokenize(normalize_command(failed)) == tokenize(normalize_command(fix)))


# Interpreters a script that is not executable can be run with instead (`bash deploy.sh`).
_SCRIPT_RUNNERS = frozenset({"bash", "sh", "zsh", "python", "python3", "node", "ruby", "perl"})


def script_interpreter(failed: str, fix: str) -> tuple[str, str] | None:
    """(interpreter, the script's extension) when `fix` runs the script that `failed` ran by
    its path through an interpreter, nothing else changed (`./scripts/deploy.sh --prod` →
    `bash scripts/deploy.sh --prod` after `permission denied`); else None. Such a lesson holds
    for any script of that kind run so."""
    old, new = _one_step(failed), _one_step(fix)
    if not old or len(new) < 2 or "/" not in old[0] or new[0] not in _SCRIPT_RUNNERS:
        return None
    if _script_path(old[0]) != _script_path(new[1]) or old[1:] != new[2:]:
        return None
    return new[0], _extension(old[0])


def apply_script_interpreter(command: str, interpreter: str, extension: str) -> str | None:
    """`command` with its script, run by its path, run by `interpreter` instead; None when it
    runs no script of that extension by its path, or in several steps."""
    words = _one_step(command)
    if not words or "/" not in words[0] or _extension(words[0]) != extension:
        return None
    head, found, tail = command.partition(words[0])
    return f"{head}{interpreter} {words[0]}{tail}" if found else None


def step_for_script(step: str, failed: str, command: str) -> str | None:
    """A step learned for a script run by its path, for the script `command` runs: `chmod +x
    build.sh`, run first after `./build.sh` was refused, is `chmod +x scripts/deploy.sh` for
    `./scripts/deploy.sh prod` (its key is every script's). None when the step names no script
    `failed` ran, or `command` runs no other script by its path."""
    old, new = _one_step(failed), _one_step(command)
    if not old or not new or "/" not in old[0] or "/" not in new[0]:
        return None
    was, now = _script_path(old[0]), _script_path(new[0])
    if was == now:
        return None
    return _rewritten(step, lambda words: was in map(_script_path, words[1:]),
                      lambda words: [now if _script_path(word) == was else word for word in words])


def step_for_error(step: str, was: str, now: str) -> str | None:
    """A step learned on the error `was`, for the same error `now` about another subject:
    `docker rm -f db` after the container name "/db" was in use is `docker rm -f cache` when
    "/cache" is. The two errors' words are compared in order (same key: they differ only where
    masked); a differing word the step names becomes this error's. The step as it was when it
    names none; None when it names a word of `was` that `now` does not have and the two cannot
    be lined up (it is about something else here)."""
    from learn_cli.text import rx
    from learn_cli.text.failure import meaningful_lines
    from learn_cli.text.keys import without_listen_host

    def words(text: str) -> list[str]:  # (the host a server could not listen on is no subject)
        return rx.findall(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*", without_listen_host(meaningful_lines(text)))

    old = words(was)
    in_step = [word for word in dict.fromkeys(old) if len(word) > 1 and _word_at(step, word) >= 0]
    new = words(now) if in_step else []  # (most steps name nothing of their error: `npm install`)
    named = [word for word in in_step if word not in new]
    if not named:
        return step
    if len(old) != len(new):
        return None
    swaps = {a: b for a, b in zip(old, new, strict=True) if a != b}
    if any(word not in swaps for word in named) or len(set(swaps.values())) != len(swaps):
        return None
    for word in named:
        step = _replace_words(step, word, swaps[word])
    return step


def _word_at(text: str, word: str) -> int:
    """Where `word` stands in `text` as a whole word (not inside `dbx` or `a.db`), else -1 (and
    for "", an empty argument such as `-m ""`, which stands nowhere: replacing it would never end)."""
    at = text.find(word) if word else -1
    while at >= 0:
        before, after = text[at - 1:at], text[at + len(word):at + len(word) + 1]
        joined_before = bool(before) and (before.isalnum() or before in "_.-")
        joined_after = bool(after) and (after.isalnum() or after in "_-")
        if not joined_before and not joined_after:
            return at
        at = text.find(word, at + 1)
    return -1


def _one_step(command: str) -> list[str]:
    """The words of a command's one working step as written (_raw_steps), else []."""
    steps = _raw_steps(command)
    return steps[0] if len(steps) == 1 else []


def _script_path(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name.strip(".") else ""


def run_first(failed: str, ok: str) -> list[str]:
    """The steps `ok` runs before the failed command unchanged (`git stash && git checkout
    main` after `git checkout main`; both normalised): they are the lesson, a step to run first,
    which holds for the next command failing so. A `cd` or an environment setup first is
    another lesson (moved_to, added_setup); [] otherwise."""
    from learn_cli.text.shell import program

    folder, cd_step, rest = leading_cd_step(failed)
    if folder is not None and leading_cd(ok)[0] == folder:  # both in one folder: `cd web && npm
        # install && npm run build` after `cd web && npm run build`; the steps run there too
        first = run_first(rest, leading_cd(ok)[1])
        return [f"{cd_step} && " + " && ".join(first)] if first else []
    before = _steps_before(ok, failed) if failed else None
    if before is None:
        return []
    first = [step for step in before.split(" && ") if step.strip()]
    if not first or any(program(step) in SETUP_PROGRAMS for step in first):
        return []
    return first


def _steps_before(ok: str, failed: str) -> str | None:
    """What `ok` runs before ` && ` and then `failed`, or None. Two long commands may have been
    cut (capture keeps MAX_COMMAND characters, an export cuts with `…`): the retry's steps first
    push its cut earlier in the failed command, so the two match where both still are (round 25:
    a commit of a 1,300-character message, retried after `git config user.email …`)."""
    if ok.endswith(" && " + failed):
        return ok[: -len(failed) - 4]
    if not failed.endswith(TRUNCATION) or not ok.endswith(TRUNCATION):
        return None
    start = ok.find(" && ")
    while start >= 0:
        shorter, longer = sorted((ok[start + 4: -len(TRUNCATION)], failed[: -len(TRUNCATION)]), key=len)
        if len(shorter) >= _CUT_MATCH and longer.startswith(shorter):
            return ok[:start]
        start = ok.find(" && ", start + 4)
    return None


_CUT_MATCH = 40  # characters two cut commands must share to be one (a few prove nothing)


def added_setup(failed: str, fix: str) -> tuple[str, str] | None:
    """(setup, program) when `fix` is `setup && failed` with a setup step that is not a `cd`
    (`source .venv/bin/activate && python x.py`, `export NODE_OPTIONS=… && npm test`): the
    environment the program needs, which holds for any use of that program failing the same
    way. `cd D &&` is another lesson (moved_to). None otherwise."""
    from learn_cli.text.shell import normalize_command

    parts = split_segments_ops(normalize_command(fix or ""))
    if len(parts) < 2 or parts[0][1] not in ("&&", ";"):
        return None
    setup = tokenize(parts[0][0])
    if not setup or setup[0] not in SETUP_PROGRAMS or setup[0] in ("cd", "pushd", "popd"):
        return None
    rest = normalize_command(fix).split(parts[0][1], 1)[1].strip()
    work = _raw_steps(failed)
    if not work or normalize_command(rest) != normalize_command(leading_cd(failed)[1]):
        return None
    return " ".join(setup), work[0][0]


def with_setup(command: str, setup: str) -> str:
    """`setup && command`, after the command's leading `cd` (the lesson of pairing's
    added_environment, applied to the command that failed)."""
    steps = _raw_steps(command)
    return (apply_added_setup(command, setup, steps[0][0]) if steps else None) or command


def apply_added_setup(command: str, setup: str, program: str) -> str | None:
    """`setup && command` when the command's one working step runs `program` without that setup."""
    steps = _raw_steps(command)
    if len(steps) != 1 or steps[0][0] != program or setup in command:
        return None
    folder, cd_step, rest = leading_cd_step(command)
    return f"{cd_step} && {setup} && {rest}" if folder is not None else f"{setup} && {command.strip()}"


def _shell_word(word: str) -> str:
    from learn_cli.text.shell import shell_word

    if _is_redirection(word):
        return word  # `2>&1`, `>/dev/null`, `&>log`: the shell's, not an argument to quote
    return shell_word(word)


def _is_redirection(word: str) -> bool:
    """A redirection word the tokenizer kept whole, where no quoted argument looks like it: a
    file descriptor's (`2>&1`, `2>/dev/null`, `1>>log`), `&>file`, or into /dev/null. (A bare
    `>` may have been a quoted `'>'`: unquoting it could truncate a file; it stays quoted.)"""
    if any(c.isspace() or c in "'\"`$;|" for c in word):
        return False
    head = word.lstrip("0123456789")
    return (head != word and head[:1] in ("<", ">")) or word.startswith(("&>", ">/dev/null", ">>/dev/null"))
