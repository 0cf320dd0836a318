"""Issue 10: learning that holds up on real agent history.

Each test is one cause found by replaying real sessions: alternatives are not conflicts,
evidence adds up across projects, a fix that failed is not offered again until it works, the
agent moving on is not a lesson, "run it from the project root" is, keys follow the error's
shape, and every place that shows a learning words it by the kind of fix. Through the hook
handler in process (tests/test_capture_e2e.py covers the installed executable)."""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import test_capture_learner
from learn_cli.capture.lesson import is_lesson, moved_to, same_work
from learn_cli.engine.context import summarize
from learn_cli.text.keys import error_key, error_signature
from test_capture_learner import NOT_FOUND, Agent, context_of, learnings

_teach = functools.partial(test_capture_learner._teach, sessions=1)  # one session unless told


def _each_session(home, cwd, pairs, error: str, code: int) -> None:
    """One session per (failed, fix): the failure, then the fix that worked."""
    for failed, fix in pairs:
        s = Agent(home, cwd)
        s.fail(failed, error, code)
        s.ok(fix)


def test_a_fix_seen_once_in_each_of_two_projects_is_offered_in_a_third(home, proj):
    a, b, c = proj("api"), proj("cli"), proj("web")
    _teach(home, a)
    assert Agent(home, b).fail("pytest tests", NOT_FOUND, 127) is None  # one sighting: not yet
    _teach(home, b)
    text = context_of(Agent(home, c).fail("pytest tests", NOT_FOUND, 127))
    assert text.startswith("learn: known fix (seen 2× in 2 projects")
    assert "`python -m pytest tests` instead of `pytest tests`" in text


def test_two_fixes_of_one_failure_are_alternatives_both_offered(home, proj):
    a, b = proj("api"), proj("cli")
    _teach(home, a, fix="python -m pytest tests", sessions=2)
    _teach(home, a, fix="uv run pytest tests", sessions=2)
    assert {r["status"] for r in learnings(home, a)} == {"active"}  # neither is "conflicted"
    text = context_of(Agent(home, b).fail("pytest tests", NOT_FOUND, 127))
    assert "python -m pytest tests" in text.splitlines()[0]
    assert "another fix that worked" in text and "uv run pytest tests" in text


def test_a_fix_that_failed_after_being_offered_waits_until_it_works_again(home, proj):
    a, b = proj("api"), proj("cli")
    _teach(home, a, sessions=2)
    s = Agent(home, b)
    assert s.fail("pytest tests", NOT_FOUND, 127) is not None
    s.fail("python -m pytest tests", NOT_FOUND, 127)  # the offered fix failed here
    assert Agent(home, b).fail("pytest tests", NOT_FOUND, 127) is None  # a new session: not again
    _teach(home, a)  # it works again somewhere
    assert Agent(home, b).fail("pytest tests", NOT_FOUND, 127) is not None


def test_run_it_from_the_project_root_is_learned_and_applied_to_the_new_command(home, proj):
    a = proj("api")
    (a / ".git").mkdir()  # a repository: its subfolders are the same project
    sub = a / "web"
    sub.mkdir()
    error = ("warning: could not open directory 'web/docs/': No such file or directory\n"
             "fatal: pathspec 'docs/{}' did not match any files")
    answers = []
    for name in ("a.md", "b.md"):
        s = Agent(home, sub)
        answers.append(s.fail(f"git add docs/{name}", error.format(name), 128))
        s.ok(f"cd {a} && git add docs/{name}")
    # the same command, unchanged, from another folder: nothing is a guess, once is enough
    assert answers[0] is None and f"`cd {a} && git add docs/b.md`" in context_of(answers[1])
    [rec] = learnings(home, a)
    assert rec["fix_kind"] == "cwd" and rec["fix_command"] == "cd ." and rec["status"] == "active"
    assert rec["context"].endswith("run it from the project's root folder.")  # not "from `.`"
    text = context_of(Agent(home, sub).fail("git add docs/c.md", error.format("c.md"), 128))
    assert text.splitlines()[0].endswith(f"`cd {a} && git add docs/c.md` instead of `git add docs/c.md`.")
    # then in the words the digest and recall use (session 47)
    assert text.splitlines()[1] == "learn: the change: run it from the project's root folder."
    # From the root itself the lesson does not apply.
    assert Agent(home, a).fail("git add docs/c.md", error.format("c.md"), 128) is None


def test_a_script_run_by_its_path_from_the_root_teaches_run_it_from_the_root(home, proj):
    # claudec99 (corpus case-103): the shell was left in `test/`, `./build.sh` was not there,
    # `bash <root>/build.sh` worked. The path was the fix, not the shell: "use `bash build.sh`"
    # fails the same way from `test/`.
    a = proj("cc")
    (a / ".git").mkdir()
    sub = a / "test"
    sub.mkdir()
    error = "Exit code 127\n/bin/bash: line 1: ./build.sh: No such file or directory"
    s = Agent(home, sub)
    s.fail("./build.sh --mode=self-host 2>&1", error, 127)
    s.ok(f"bash {a}/build.sh --mode=self-host 2>&1")
    [rec] = learnings(home, a)
    assert rec["fix_kind"] == "cwd" and rec["fix_command"] == "cd ."
    assert rec["context"].endswith("run it from the project's root folder.")
    s = Agent(home, sub)
    s.fail("./build.sh --mode=self-host 2>&1", error, 127)
    s.ok(f"{a}/build.sh --mode=self-host")
    text = context_of(Agent(home, sub).fail("./build.sh --mode=bootstrap", error, 127))
    assert f"`cd {a} && ./build.sh --mode=bootstrap` instead of `./build.sh --mode=bootstrap`" in text


def test_a_path_written_from_the_root_and_fixed_from_the_subfolder_is_the_same_lesson(home, proj):
    # codex: `git add docs/p/T.md` failed in docs/p, `git add T.md` worked there.
    a = proj("codex")
    (a / ".git").mkdir()
    sub = a / "docs" / "p"
    sub.mkdir(parents=True)
    error = ("warning: could not open directory 'docs/p/docs/p/': No such file or directory\n"
             "fatal: pathspec 'docs/p/T.md' did not match any files")
    s = Agent(home, sub)
    s.fail('git add docs/p/T.md && git commit -m "docs: t"', error, 128)
    s.ok('git add T.md && git commit -m "docs: t"')
    [rec] = learnings(home, a)
    assert rec["fix_kind"] == "cwd" and rec["fix_command"] == "cd ."


@pytest.mark.parametrize("failed, ok, error", [
    ("python app.py", "python src/app.py", "can't open file 'app.py': No such file or directory"),  # the file is
    # elsewhere, from the root down: another path, not another folder
    ("./build.sh", "bash build.sh", "./build.sh: Permission denied"),  # not a path that was not there
    ("cat a/x.txt", "cat b/x.txt", "cat: a/x.txt: No such file or directory"),  # another file of the same name
])
def test_a_path_changed_otherwise_is_no_folder_lesson(home, proj, failed, ok, error):
    a = proj("api")
    (a / ".git").mkdir()
    sub = a / "web"
    sub.mkdir()
    s = Agent(home, sub)
    s.fail(failed, error, 1)
    s.ok(ok)
    assert all(rec.get("fix_kind") != "cwd" for rec in learnings(home, a))


@pytest.mark.parametrize("command, output, line", [
    ("bash test/run_all_tests.sh 2>&1 | tail -20", "bash: test/run_all_tests.sh: No such file or directory",
     "bash: test/run_all_tests.sh: No such file or directory"),
    ("./test/run_all_tests.sh 2>&1 | tail -50", "/bin/bash: line 1: ./test/run_all_tests.sh: No such file or directory",
     "/bin/bash: line 1: ./test/run_all_tests.sh: No such file or directory"),
    ("pytets -q | head -5", "zsh: command not found: pytets", "zsh: command not found: pytets"),
    ("ls | grep -c x", "ls: x: No such file or directory", ""),  # not the job's own name
    ("bash run.sh | tail -5", "cat: data.csv: No such file or directory\nok", ""),  # the script ran: its own
    # error is its output (its status is what `tail` hid, and nothing says which)
    ("bash test/run_all_tests.sh", "bash: test/run_all_tests.sh: No such file or directory", ""),  # no pipe:
    # the status is the job's own, and a success is one
    ("bash run.sh | tee log.txt", "", ""),
    # make gave up itself ("*** … Stop.": it ran nothing); sflicker/claudec99 ran `make 2>&1 |
    # tail -5` at the root 23 times, where only cmake's build folders have a makefile
    ("make 2>&1 | tail -5", "make: *** No targets specified and no makefile found.  Stop.",
     "make: *** No targets specified and no makefile found.  Stop."),
    ("make -C build -s 2>&1 | tail -3", "make[1]: *** No rule to make target 'x'.  Stop.\nmake: *** [all] Error 2",
     "make[1]: *** No rule to make target 'x'.  Stop."),
    ("make 2>&1 | tail -5", "Error: make: *** No targets specified and no makefile found.  Stop.",  # as a
     "Error: make: *** No targets specified and no makefile found.  Stop."),  # transcript shows stderr
    ("make 2>&1 | tail -5", "gcc -c a.c\nmake: *** [Makefile:3: a.o] Error 1", ""),  # a recipe failed: the code
    ("cat build.log | tail", "make: *** No targets specified and no makefile found.  Stop.", ""),  # not the job's
    # the program's own word that it ran nothing: cargo without a manifest (Sticky-Finger/VIDSUM),
    # npm without the script (leegmoore/codex), Python without the script (sflicker/claudec99)
    ("cargo check 2>&1 | tail -10", "error: could not find `Cargo.toml` in `/w/app` or any parent directory",
     "error: could not find `Cargo.toml` in `/w/app` or any parent directory"),
    ("npm test 2>&1 | tail -20", 'npm error Missing script: "test"\nnpm error', 'npm error Missing script: "test"'),
    ("python3 test/run_tests.py 2>&1 | tail -5",
     "/usr/bin/python3: can't open file '/w/test/run_tests.py': [Errno 2] No such file or directory",
     "/usr/bin/python3: can't open file '/w/test/run_tests.py': [Errno 2] No such file or directory"),
    ("python3 run.py | tail", "FileNotFoundError: [Errno 2] No such file or directory: 'data.csv'", ""),  # it ran
    ("cargo test 2>&1 | tail", "error: could not compile `app` (lib test) due to 2 previous errors", ""),
])
def test_a_job_that_could_not_run_behind_a_pipe_is_seen(command, output, line):
    from learn_cli.text.failure import failed_behind_a_pipe

    assert failed_behind_a_pipe(command, output) == line


@pytest.mark.parametrize(("command", "error", "code", "nothing"), [
    ('grep -n "old phrase" README.md', "Exit code 1", None, True),  # Codex: a failure with no word
    ('grep -n "old phrase" README.md', "exited 1 in 4589ms:", None, True),  # as its transcripts show it
    ("ps aux | grep vite | grep -v grep", "Error: Exit code 1", 1, True),
    ("grep -c TODO src/app.py", "Exit code 1\n0", None, True),
    ("git grep -n parse_args", "Exit code 1", 1, True),
    ("rg -n 'AKIA[0-9A-Z]{16}' .", "", 1, True),
    ("grep x missing.txt", "Exit code 2\ngrep: missing.txt: No such file or directory", 2, False),
    ("grep x f", "Exit code 2", None, False),  # 2 is grep's error, not "no match"
    ("npm test", "Exit code 1", None, False),
    ("cargo build && grep x f", "Exit code 1\nerror: could not compile `app`", None, False),
])
def test_a_search_that_found_nothing_is_told_apart(command, error, code, nothing):
    from learn_cli.text.failure import found_nothing

    assert found_nothing(command, error, code) is nothing


@pytest.mark.parametrize(("nothing", "then"), [
    ("ps aux | grep vite | grep -v grep", "ps aux | grep node | grep -v grep"),  # no vite running: an answer
    ('grep -c "TODO" src/app.py', 'grep -n "TODO" src/app.py'),  # `0`, status 1
    ('grep -n "old phrase" README.md', 'grep -n "new phrase" README.md'),  # round 12 (Codex)
])
def test_a_search_that_found_nothing_teaches_nothing(home, proj, nothing, then):
    """A search that matched nothing exits 1 with nothing said: the answer the agent asked for
    (round 12: the old phrase was gone), not a failure. As Claude Code reports a lone grep ("No
    matches found"), it is a success: nothing is paired with it (before, the next search, for
    another process or the lines themselves, was learned as its fix), and its next run gets no
    "known fix"."""
    a = proj("docs")
    for _ in range(2):
        s = Agent(home, a)
        s.fail(nothing, "", 1)
        s.ok(then, "12: found")
    assert learnings(home, a) == []
    assert Agent(home, a).fail(nothing, "", 1) is None


@pytest.mark.parametrize(("whole", "part", "error"), [
    ("uv run pytest -q", "uv run pytest -q tests/test_usage_tracker.py",  # round 12
     "FAILED tests/test_delivery_scenarios.py::test_delivery_method\n3 failed, 20 passed in 1.20s"),
    ("cargo test", "cargo test parser::", "test result: FAILED. 31 passed; 1 failed; 0 ignored"),
    ("npm test", "npm test -- src/app.test.ts", "Tests:       2 failed, 10 passed, 12 total"),
])
def test_part_of_a_failing_test_run_passing_is_no_fix(home, proj, whole, part, error):
    """The suite failed on its tests; the agent then ran only part of it (its own file, the
    module it works on), which passed. That fixed nothing: offered later, "use `pytest -q
    tests/test_usage_tracker.py` instead" would hide the failures. The rerun of the whole
    suite, once the code is fixed, is the same command again: no lesson either."""
    a = proj("app")
    for _ in range(2):
        s = Agent(home, a)
        s.fail(whole, error, 1)
        s.ok(part, "all passed")
    assert learnings(home, a) == []
    assert Agent(home, a).fail(whole, error, 1) is None


def test_a_scoped_package_name_corrected_travels_to_a_third_project(home, proj):
    """round 12: `npm install firecrawl-api` is not in the registry; `npm install
    @mendable/firecrawl-js` is the SDK. The new name holds a `/`, and was taken for a file the
    fix needs (as `backend/requirements.txt` is): not being one in the third project, the fix
    was never offered there. A scope's package is no file."""
    error = "npm error 404  'firecrawl-api@*' is not in this registry.\nnpm error 404"
    text = _answer_in_a_third(home, proj, "npm install firecrawl-api", "npm install @mendable/firecrawl-js", error)
    assert "`npm install @mendable/firecrawl-js` instead of `npm install firecrawl-api`" in text


def _answer_in_a_third(home, proj, failed: str, fix: str, error: str) -> str:
    """`failed` fixed by `fix` once in each of two projects; the answer to it in a third."""
    for name in ("api", "cli"):
        s = Agent(home, proj(name))
        s.fail(failed, error, 1)
        s.ok(fix, "done")
    return context_of(Agent(home, proj("web")).fail(failed, error, 1))


def test_a_file_read_at_another_path_is_the_lesson_whatever_lines_each_read_showed(home, proj):
    """Codex reads files with `sed -n '1,240p' AGENTS.md`: "can't read AGENTS.md", then `sed
    -n '1,220p' ralph/AGENTS.md` (round 14). The lines shown are no target: the file's path is
    the lesson, and the next read gets it with its own window, whichever program reads."""
    a = proj("app")
    (a / "ralph").mkdir()
    error = "sed: can't read AGENTS.md: No such file or directory"
    s = Agent(home, a)
    s.fail("sed -n '1,240p' AGENTS.md", error, 2)
    s.ok("sed -n '1,220p' ralph/AGENTS.md", "# Agents")
    text = context_of(Agent(home, a).fail("sed -n '1,80p' AGENTS.md", error, 2))
    assert "`sed -n '1,80p' ralph/AGENTS.md` instead of" in text, text
    text = context_of(Agent(home, a).fail("sed -n '1,240p' AGENTS.md", error, 2))
    assert "`sed -n '1,220p' ralph/AGENTS.md` instead of" in text, text  # the same read: what worked
    text = context_of(Agent(home, a).fail("cat AGENTS.md", "cat: AGENTS.md: No such file or directory", 1))
    assert "`cat ralph/AGENTS.md` instead of" in text, text  # any look finds it there
    assert Agent(home, a).fail("rm AGENTS.md", "rm: AGENTS.md: No such file or directory", 1) is None
    b = proj("other")  # another file is still another target
    s = Agent(home, b)
    s.fail("sed -n '1,40p' notes.md", "sed: can't read notes.md: No such file or directory", 2)
    s.ok("sed -n '1,40p' README.md", "# Readme")
    assert learnings(home, b) == []


def test_npm_blocked_by_powershells_execution_policy_travels_as_npm_cmd(home, proj):
    """round 15: PowerShell will not run npm.ps1 ("running scripts is disabled on this system");
    `npm.cmd install` worked. Learned in two projects, the change answers another npm command in
    a third, in its words; the answer names the error by its message."""
    blocked = ("npm : File C:\\Program Files\\nodejs\\npm.ps1 cannot be loaded because running scripts is "
               "disabled on this system. For more information, see about_Execution_Policies at "
               "https:/go.microsoft.com/fwlink/?LinkID=135170.\nAt line:1 char:1\n+ npm install\n+ ~~~\n"
               "    + CategoryInfo          : SecurityError: (:) [], PSSecurityException\n"
               "    + FullyQualifiedErrorId : UnauthorizedAccess")
    _answer_in_a_third(home, proj, "npm install", "npm.cmd install", blocked)
    again = blocked.replace("npm install", "npm run build")
    text = context_of(Agent(home, proj("site")).fail("npm run build", again, 1))
    assert "`npm.cmd run build` instead of `npm run build`" in text and "npm.ps1 cannot be loaded" in text, text


def test_steps_run_before_the_last_step_of_a_chain_alone_are_steps_to_run_first(home, proj):
    """round 15: `git add -A && git commit -m …` failed "Please tell me who you are"; `git config
    user.email … && git config user.name … && git commit -m …` worked: the add had worked and was
    not run again. The config steps are the lesson, for the next commit failing so, not "`git
    add -A` → `git config …`". An earlier step the error names is the one that failed."""
    who = ("Author identity unknown\n\n*** Please tell me who you are.\n\nRun\n\n  git config --global "
           "user.email \"you@example.com\"\n\nfatal: unable to auto-detect email address (got 'root@x.(none)')")
    a = proj("app")
    s = Agent(home, a)
    s.fail('git add -A && git commit -m "feat: scaffold"', who, 128)
    s.ok('git config user.email "me@x.org" && git config user.name "me" && git commit -m "feat: scaffold"')
    text = context_of(Agent(home, a).fail('git commit -m "fix: typo"', who, 128))
    assert 'run `git config user.email "me@x.org" && git config user.name "me"` first' in text, text
    b = proj("other")
    lock = "npm error The `npm ci` command can only install with an existing package-lock.json"
    s = Agent(home, b)
    s.fail("npm ci && npm test", lock, 1)
    s.ok("npm install && npm test", "ok")
    assert [r.get("fix_kind") for r in learnings(home, b)] != ["between"]


def test_a_looking_aid_the_program_refused_dropped_is_the_fix(home, proj):
    """round 13: `mix test t.exs:462 -v` failed: "-v : Unknown option" (mix test has no `-v`);
    `mix test t.exs:462` worked. Dropping a looking aid is otherwise no lesson (the run it
    helped look at was fixed in between); here the program refused it and never ran."""
    a = proj("app")
    error = '** (Mix) Could not invoke task "test": 1 error found!\n-v : Unknown option'
    s = Agent(home, a)
    s.fail("mix test test/primitives_test.exs:462 -v", error, 1)
    s.ok("mix test test/primitives_test.exs:462", "12 tests, 0 failures")
    text = context_of(Agent(home, a).fail("mix test test/primitives_test.exs:462 -v", error, 1))
    assert "drop `-v`" in text
    b = proj("other")  # a look that was not refused stays no lesson
    s = Agent(home, b)
    s.fail("cargo test parser -v", "test result: FAILED. 3 passed; 1 failed", 101)
    s.ok("cargo test parser", "test result: ok. 4 passed")
    assert learnings(home, b) == []


def test_a_word_the_error_offers_in_place_of_the_one_given_is_the_lesson(home, proj):
    """alembic: "Multiple head revisions are present for given argument 'head'; please specify
    … or 'heads' for all heads"; `alembic upgrade heads` worked. One word replaced by the one
    the error offers is the lesson, in a third project too (a probe of common failures found
    it unlearned: `head` → `heads` read as another target). An error that only names two files
    offers neither."""
    error = ("ERROR [alembic.util.messaging] Multiple head revisions are present for given argument 'head'; "
             "please specify a specific target revision, '<branchname>@head' to narrow to a specific head, "
             "or 'heads' for all heads")
    text = _answer_in_a_third(home, proj, "alembic upgrade head", "alembic upgrade heads", error)
    assert "`alembic upgrade heads` instead of `alembic upgrade head`" in text
    two_files = "FAILED 'tests/test_a.py', see 'tests/test_b.py'"
    assert not is_lesson("pytest tests/test_a.py", "pytest tests/test_b.py", two_files)


def test_a_port_replaced_after_address_in_use_is_the_lesson(home, proj):
    """`python3 -m http.server 8000`: "Address already in use"; `… 8001` worked. The port was
    what the error was about, so the other port is the lesson, as a port added is (`manage.py
    runserver 8001`); it was read as another target (a probe of common failures)."""
    text = _answer_in_a_third(home, proj, "python3 -m http.server 8000", "python3 -m http.server 8001",
                              "OSError: [Errno 98] Address already in use")
    assert "`python3 -m http.server 8001` instead of `python3 -m http.server 8000`" in text
    assert not is_lesson("python3 -m http.server 8000", "python3 -m http.server 8001", "ConnectionRefusedError")


_NO_AND_AND = ("At line:1 char:15\n+ npm run build && npm test\n+               ~~\nThe token '&&' is not a valid "
               "statement separator in this version.\n    + CategoryInfo          : ParserError: (:) [], "
               "ParentContainsErrorRecordException\n    + FullyQualifiedErrorId : InvalidEndOfLine")


def test_steps_joined_by_semicolons_in_windows_powershell_travel_to_any_chain(home, proj):
    """Windows PowerShell 5 has no `&&` ("The token '&&' is not a valid statement separator in
    this version"): `npm run build; npm test` worked. The lesson is the separator, so it answers
    another chain that fails so, in another project (a probe of PowerShell failures; Codex runs
    PowerShell on Windows, a third of round 11's Codex cases)."""
    text = _answer_in_a_third(home, proj, "npm run build && npm test", "npm run build; npm test", _NO_AND_AND)
    assert "`npm run build; npm test` instead of `npm run build && npm test`" in text
    other = context_of(Agent(home, proj("web")).fail("npm ci && npm run lint", _NO_AND_AND, 1))
    assert "`npm ci; npm run lint` instead of `npm ci && npm run lint`" in other
    assert "join the steps with `;`, not `&&`" in other


_CD_TEST_ERROR = "/bin/bash: line 1: cd: test: No such file or directory"
_NOT_THERE = "bash: test/run_all_tests.sh: No such file or directory"


def _in_test_already(home, project, failed: str, *calls: tuple[str, str]) -> dict | None:
    """A session whose shell is in `test/` already: `failed` (`cd test && …`) fails, then the
    (command, output) calls "succeed"; the hook's answer to the last."""
    s = Agent(home, project)
    s.fail(failed, _CD_TEST_ERROR, 1)
    return [s.ok(command, output) for command, output in calls][-1]


def test_a_success_whose_pipe_hid_the_failure_is_a_failure_and_no_fix(home, proj):
    # claudec99: `cd test` failed (the shell was already there); `bash test/run_all_tests.sh |
    # tail -20` printed "No such file or directory" and exited 0 (tail's status).
    a = proj("cc")
    failed = "cd test && bash run_all_tests.sh 2>&1 | tail -5"
    hidden = ("bash test/run_all_tests.sh | tail -20", _NOT_THERE)
    for _ in range(2):
        _in_test_already(home, a, failed, hidden, ("bash run_all_tests.sh 2>&1 | tail -20", "Results: 106 passed"))
    fixes = {rec["fix_command"] for rec in learnings(home, a)}
    assert "bash test/run_all_tests.sh" not in fixes and "bash run_all_tests.sh" in fixes
    # the hidden failure, known now, is answered on the hook Claude Code sent: PostToolUse
    answer = _in_test_already(home, a, failed, hidden)
    assert answer["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "`bash run_all_tests.sh" in context_of(answer)


def test_make_that_gave_up_behind_a_pipe_is_a_failure_answered_and_no_fact(home, proj):
    """sflicker/claudec99 builds with cmake into build folders; `make 2>&1 | tail -5` at the root
    printed "make: *** No targets specified and no makefile found.  Stop." and exited 0 (tail's
    status), 23 times. Taken as a success it became the fact "This project builds with `make`";
    it is a failure, answered with the way the project builds."""
    stopped = "make: *** No targets specified and no makefile found.  Stop."
    a = proj("c99")
    for _ in range(2):
        s = Agent(home, a)
        s.fail("make", stopped, 2)
        s.ok("cmake --build cmake-build-debug 2>&1 | tail -3", "[100%] Built target ccompiler")
    s = Agent(home, a)
    answer = s.ok("make 2>&1 | tail -5", stopped)
    assert answer["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "`cmake --build cmake-build-debug` instead of `make`" in context_of(answer)
    s.ok("cmake --build cmake-build-debug 2>&1 | tail -3", "[100%] Built target ccompiler")
    assert not [rec for rec in learnings(home, a) if rec.get("fix_command") == "make" or rec.get("fix") == "make"]


def test_a_success_filtered_to_nothing_resolves_nothing(home, proj):
    # the same history, one call earlier: `bash test/run_all_tests.sh 2>&1 | grep -E "^Results" |
    # head -30` printed nothing and "worked" (head's status); it had been learned as the fix.
    a = proj("cc")
    grepped = 'cd test && bash run_all_tests.sh 2>&1 | grep -E "^(Results|FAIL|====)" | head -20'
    for _ in range(2):
        _in_test_already(home, a, grepped, ('bash test/run_all_tests.sh 2>&1 | grep -E "^(Results|FAIL)" | head', ""))
    assert learnings(home, a) == []
    _in_test_already(home, a, "cd test && bash run_all_tests.sh | tail -5", ("bash run_all_tests.sh | tail -3", "ok"))
    assert {rec["fix_command"] for rec in learnings(home, a)} == {"bash run_all_tests.sh"}


def test_a_retry_that_gets_past_the_error_to_another_teaches_its_change(home, proj):
    # claudec99, tune part: the change got past the missing header; the compiler then needed
    # `extern`, which took the rest of the session (no success came to pair with).
    a = proj("cc")
    s = Agent(home, a)
    s.fail("./build/ccompiler --sysroot=. test/valid/t.c", "error: include file not found: <stdio.h>", 1)
    s.fail("./build/ccompiler -I test/include test/valid/t.c", "error: undeclared variable 'stdout'", 1)
    [rec] = learnings(home, a)
    assert rec["fix_command"] == "./build/ccompiler -I test/include test/valid/t.c"
    assert rec["error"].startswith("error: include file not found")
    # one missing module installed, the next one missing: the install got past the first
    s = Agent(home, a)
    s.fail("python app.py", "ModuleNotFoundError: No module named 'flask'", 1)
    s.fail("pip install flask && python app.py", "ModuleNotFoundError: No module named 'sqlalchemy'", 1)
    assert any(r["fix_command"] == "pip install flask" and r["fix_kind"] == "between" for r in learnings(home, a))


@pytest.mark.parametrize("second, error, edited", [
    ("./build/ccompiler -I test/include test/valid/t.c", "error: undeclared variable 'stdout'", True),  # an
    # edit in between may be what changed the error
    ("./build/ccompiler -I test/include test/valid/t.c", "error: include file not found: <stdio.h>", False),  # the
    # same error again: no step past it
    ("./build/ccompiler --include-dir test/include test/valid/t.c", "error: unknown option --include-dir", False),
    ("./build/ccompiler -I test/include test/valid/extern.c", "error: undeclared variable 'x'", False),  # another
    # file: the next piece of work
])
def test_a_failure_after_a_failure_is_no_progress_otherwise(home, proj, second, error, edited):
    a = proj("cc")
    s = Agent(home, a)
    s.fail("./build/ccompiler --sysroot=. test/valid/t.c", "error: include file not found: <stdio.h>", 1)
    if edited:
        s.edit_ok(str(a / "src" / "lexer.c"))
    s.fail(second, error, 1)
    assert learnings(home, a) == []


def test_moving_on_to_the_next_test_is_not_a_lesson(home, proj):
    a = proj("api")
    for _ in range(2):
        s = Agent(home, a)
        s.fail("cargo test lz77::tests", "test result: FAILED. 3 passed; 1 failed", 101)
        s.ok("cargo test lz77::tests::test_get_match -- --nocapture")
    assert learnings(home, a) == []


@pytest.mark.parametrize("failed, ok, error, lesson", [
    ("make", "cmake --build build", "", True),  # another tool for the same job
    ("cargo build", "cargo build --features c-fallback", "", True),  # an option added
    ("git push", "git push -u origin main", "fatal: no upstream branch", True),  # arguments added
    ("npm run biuld", "npm run build", 'Missing script: "biuld"', True),  # a typo
    ("python src/app.py", "python app.py", "can't open file 'src/app.py'", True),  # the same file elsewhere
    ("pip install jose==3.3", "pip install python-jose", "No matching distribution found for jose==3.3", True),
    ("pip install x && pytest", "pytest -q", "", True),
    # plumbing is no argument: `2>&1` dropped with the interpreter changed (corpora case-084)
    ('python3 -c "import numpy" 2>&1', '/opt/py3.9/bin/python3.9 -c "import numpy"', "No module named 'numpy'", True),
    # an export cut the retry's snippet: what is left of it is the same code
    ('python3 -c "import numpy, matplotlib; print(numpy.__version__)"', 'venv/bin/python -c "import numpy, matp…',
     "No module named 'numpy'", True),
    ('python3 -c "import numpy"', 'venv/bin/python -c "import pan…', "No module named 'numpy'", False),
    # an argument too many, dropped (corpora case-048): the parser names where it stopped
    ("cast index address uint256 $H 9", "cast index address $H 9",
     "error: unexpected argument '9' found\n\nUsage: cast index [OPTIONS] <KEY_TYPE> <KEY> <SLOT_NUMBER>", True),
    ("bash check.sh a b", "bash check.sh a", "check.sh: line 3: [: too many arguments", False),  # the script's bug
    ("cast index address uint256 $H 9", "cast index address $H 9", "Error: rpc timeout", False),
    ("cargo test lz77::tests", "cargo test lz77::tests::test_get_match", "", False),  # narrowed
    ("cargo fuzz run fuzz_symbols", "cargo fuzz run fuzz_tree", "", False),  # another target
    ('git commit -m "a"', 'git commit -m "b"', "nothing added to commit", False),  # another message
    ("pytest tests/unit", "pytest tests/integration", "", False),
    # "No <thing> found for <the argument>" names it as the mistake (harvest round 8, a CLI's task id)
    ("minsky session get --task 008", 'minsky session get --task "#008"', "No session found for task ID '008'.", True),
    ("minsky session get --task 008", "minsky session get --task 009", "Error: session 008 has no commits", False),
    # "No projects matched the filters": the filter named nothing (round 18); its spelling was the mistake
    ("pnpm --filter @cyrus/edge-worker build", "pnpm --filter cyrus-edge-worker build",
     'No projects matched the filters in "/Users/me/cyrus"', True),
    ("pnpm --filter @acme/api build", "pnpm --filter @acme/web build", "ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL", False),
    ("git pull origin main", "git stash && git pull origin main && git stash pop", "", True),  # steps first
    # a conflicted pull resolved by hand, ending with another pull: that occasion's work, not a lesson
    ("git pull origin main --no-rebase", "git checkout --theirs a.ts && git add a.ts && git commit -m m && "
     "git push && git checkout main && git pull origin main", "", False),
])
def test_a_lesson_changes_how_not_what(failed, ok, error, lesson):
    assert is_lesson(failed, ok, error) is lesson


def test_same_work_and_moved_to():
    assert same_work("cd x && cargo test a -- --nocapture", "cargo test a")
    assert not same_work("cargo test a", "cargo test b")
    assert moved_to("git add docs/a.md", "cd . && git add docs/a.md") == "."
    assert moved_to("cd web && git add a", "cd . && git add a") == "."
    assert moved_to("git add docs/a.md", "cd . && git add docs/b.md") is None
    # scripts run by two paths are two scripts, whatever their names (claudec99 has a
    # `run_tests.sh` per suite); by one path, with other options or runners, the same one
    assert not same_work("bash test/run_tests.sh", "./test/invalid/run_tests.sh")
    assert not same_work("bash test/run_tests.sh", "./run_tests.sh")
    assert same_work("bash test/run_tests.sh 2>&1 | tail -5", "./test/run_tests.sh")
    assert same_work("./build.sh --mode=self-host", "sh build.sh --mode=self-host")
    assert same_work("python app.py", "python3 app.py")


def test_another_suites_runner_is_no_fix_for_this_suites(home, proj):
    a = proj("cc")
    missing = "bash: {}: No such file or directory"
    for _ in range(2):  # `test/run_tests.sh` is not there; the valid suite's runner is
        s = Agent(home, a)
        s.fail("bash test/run_tests.sh 2>&1 | tail -5", missing.format("test/run_tests.sh"), 127)
        s.ok("bash test/valid/run_tests.sh 2>&1 | tail -5", "Results: 9 passed")
    again = Agent(home, a).fail("bash test/run_tests.sh", missing.format("test/run_tests.sh"), 127)
    assert "`bash test/valid/run_tests.sh`" in context_of(again)  # the same failure: what worked then
    other = Agent(home, a).fail("./test/invalid/run_tests.sh", missing.format("./test/invalid/run_tests.sh"), 127)
    assert other is None or "valid/run_tests.sh" not in context_of(other)


def test_keys_follow_the_errors_shape_not_its_path():
    pathspec = "error: pathspec '{}' did not match any file(s) known to git"
    assert error_key(pathspec.format("a/b.py"), "git checkout a/b.py", "Bash") == \
        error_key(pathspec.format("c/d.ts"), "git checkout c/d.ts", "Bash")
    missing = "grep: {}: No such file or directory"
    assert error_key(missing.format("src/a.ts"), "grep -c TODO src/a.ts", "Bash") == \
        error_key(missing.format("lib/b.ts"), "grep -c TODO lib/b.ts", "Bash")
    # … but the program that met it still counts (any look is one: session 44), and a module's
    # name is the lesson
    assert error_key(missing.format("src/a.ts"), "grep x src/a.ts", "Bash") != \
        error_key("cp: src/a.ts: No such file or directory", "cp src/a.ts b/", "Bash")
    assert error_key(missing.format("src/a.ts"), "grep x src/a.ts", "Bash") == \
        error_key("cat: src/a.ts: No such file or directory", "cat src/a.ts", "Bash")
    assert error_key("No module named 'jose'", "python app.py", "Bash") != \
        error_key("No module named 'yaml'", "python app.py", "Bash")


def test_keys_skip_the_warnings_before_the_error():
    warnings = "warning: unused variable `x`\n  --> src/main.rs:3:9\n   Compiling foo v0.1.0\n"
    one = error_key(warnings + "error[E0425]: cannot find value `y` in this scope", "cargo build", "Bash")
    other = error_key(warnings + "error[E0308]: mismatched types", "cargo build", "Bash")
    assert one != other
    # only warnings shown (the error was cut off): keyed on the command, not on a warning
    only = error_key(warnings, "cargo build", "Bash")
    assert only != error_key(warnings, "cargo test", "Bash")
    # rustc's snippet lines (`457 |     distance: u16,`) are the warning's, not an error
    snippet = ("   Compiling zopfli v0.1.0 (/p/zopfli-rs)\nwarning: unused variable: `distance`\n"
               "   --> src/lz77.rs:457:5\n    |\n457 |     distance: u16,\n    |     ^^^^^^^^ help: prefix it\n")
    assert error_signature(snippet, "cargo test", "Bash") == ""


@pytest.mark.parametrize("kind, fix, words", [
    ("retry", "python -m pytest tests", "use `python -m pytest tests` instead."),
    ("between", "npm install express", "run `npm install express` first."),
    ("edit", "edit .env && edit config.py", "edit `.env, config.py` first."),
    ("cwd", "cd web", "run it from `web`."),
])
def test_every_place_words_a_fix_by_its_kind(kind, fix, words):
    rec = {"type": "error", "command": "npm test", "fix": fix, "fix_command": fix, "fix_kind": kind,
           "category": "dependency", "error": "Error: Cannot find module 'express'"}
    assert summarize(rec).endswith(words)
    # shortening never removes the fix
    long = dict(rec, command="npm test -- " + "--flag " * 40)
    assert words.split("`")[1] in summarize(long, width=90)


# command, the command that worked (`fix_command`), the fix in prose, and how it is said
UNKINDED = {
    # the failed command run again is not the fix: the prose says what changed
    "pytest again": ("pytest -q", "pytest -q", "The route moved under /api/v2; update the test client base URL",
                     "`pytest -q` fails (logic): The route moved under /api/v2; update the test client base URL"),
    # a change of state for another job is a step to run first
    "chmod first": ("bash run.sh", "chmod +x run.sh", "Make the script executable", "run `chmod +x run.sh` first."),
    "pull first": ("git push", "git pull --rebase", "", "run `git pull --rebase` first."),
    "install first": ("python app.py", "pip install requests", "", "run `pip install requests` first."),
    # the same job done another way is the corrected command
    "pip3": ("pip install requests", "pip3 install requests", "", "use `pip3 install requests` instead."),
    "snapshots": ("npm test", "npm test -- -u", "Update the snapshots", "use `npm test -- -u` instead."),
    "cmake": ("make", "cmake --build build", "", "use `cmake --build build` instead."),
    "dockerfile": ("docker build -t api .", "docker build -f docker/Dockerfile -t api .", "",
                   "use `docker build -f docker/Dockerfile -t api .` instead."),
}


@pytest.mark.parametrize("case", UNKINDED)
def test_a_record_without_a_kind_is_worded_from_its_commands(case):
    """Records added by hand, imported or written by an older version carry no `fix_kind`:
    `learn stats` said "`pytest -q` fails (logic): use `pytest -q` instead." of an import."""
    from learn_cli.engine.wording import action

    command, fix_command, prose, words = UNKINDED[case]
    rec = {"type": "error", "command": command, "fix": prose, "fix_command": fix_command, "category": "logic",
           "error": "FAILED tests/test_billing.py::test_billing"}
    assert summarize(rec).endswith(words)
    assert action(rec) in words


def test_a_learning_is_said_the_same_way_everywhere(home, proj):
    from learn_cli.engine.promotion import title
    from learn_cli.engine.wording import action

    a, b = proj("api"), proj("cli")
    missing = "Error: Cannot find module 'express'\nRequire stack:\n- /srv/app/index.js"
    for _ in range(2):
        s = Agent(home, a)
        s.fail("npm test", missing)
        s.ok("npm install express")
        s.ok("npm test")
    [rec] = learnings(home, a)
    assert rec["fix_kind"] == "between" and rec["status"] == "active"
    said = "run `npm install express` first"
    assert said in context_of(Agent(home, b).fail("npm test", missing))  # the hook's answer
    assert summarize(rec).endswith(said + ".")  # the session digest and CLAUDE.md (flush)
    assert rec["context"].endswith(said + ".")  # the record itself
    assert action(rec) == said  # recall's and show's "Fix:" line
    assert title(rec, 60).endswith("`npm install express` first.")  # stats and graph, shortened


def test_a_cd_that_failed_because_the_shell_was_there_is_said_as_such_everywhere(home, proj):
    """provide-io/flavorpack, sflicker/claudec99: `cd helpers/taster && ./taster.pspf --help`
    failed at its `cd` (the shell was in helpers/taster already), the same without the `cd`
    worked. The digest said "use `./taster.pspf --help` instead." at the start of 8 of 16
    sessions, which start at the project's root, where that fails and the `cd` is needed. The
    rule is where the shell is: every place says "drop `cd helpers/taster` when the shell is in
    it", and the hook's first line still shows the command that works here."""
    from learn_cli.engine.promotion import title
    from learn_cli.engine.wording import action

    a = proj("flavor")
    missing = "(eval):cd:1: no such file or directory: helpers/taster"
    for _ in range(2):
        s = Agent(home, a)
        s.fail("cd helpers/taster && ./taster.pspf --help 2>&1 | head", missing)
        s.ok("./taster.pspf --help 2>&1 | head", "usage: taster")
    [rec] = learnings(home, a)
    said = "drop `cd helpers/taster` when the shell is in it"
    text = context_of(Agent(home, a).fail("cd helpers/taster && ./taster.pspf run", missing))
    assert text.splitlines()[0].endswith("`./taster.pspf run` instead of `cd helpers/taster && ./taster.pspf run`.")
    assert f"learn: the change: {said}." in text
    assert summarize(rec).endswith(f": {said}.")  # the session digest and CLAUDE.md (flush)
    assert rec["context"].endswith(f": {said}.")  # the record itself
    assert action(rec) == said  # recall's and show's "Fix:" line
    assert title(rec, 80).endswith(f"{said}.")  # stats and graph, shortened
    # a `cd` that worked, and the job after it failed, fixed from the root: a corrected command
    b = proj("c99")
    s = Agent(home, b)
    s.fail("cd build && make", "make: *** No targets specified and no makefile found.  Stop.")
    s.ok("make", "built")
    [other] = learnings(home, b)
    assert summarize(other).endswith(": use `make` instead.")


def test_prune_and_promote_keep_both_alternatives(home, proj):
    from learn_cli.engine.promotion import run_promotion
    from learn_cli.engine.prune import run_prune
    from learn_cli.store.api import Store

    a = proj("api")
    _teach(home, a, fix="python -m pytest tests", sessions=2)
    _teach(home, a, fix="uv run pytest tests", sessions=2)
    store = Store(home, warn_stderr=False)
    assert run_promotion(store).conflicts == []
    run_prune(store)
    fixes = sorted(r["fix_command"] for r in learnings(home, a) if r["status"] == "active")
    assert fixes == ["python -m pytest tests", "uv run pytest tests"]


def test_the_command_a_project_settled_on_is_learned_from_success(home, proj):
    from learn_cli.engine.digest import session_digest
    from learn_cli.store.api import Store
    from learn_cli.store.project import identify

    a = proj("zopfli")
    # the agent moves on, another way, each session
    _each_session(home, a, [(f"cargo test {t}", f"cargo test --features c-fallback {t}::test_one -- --nocapture")
                            for t in ("lz77::tests", "deflate::tests")],
                  "error[E0433]: failed to resolve: use of undeclared crate", 101)
    assert [r for r in learnings(home, a) if r["type"] == "error"] == []  # moving on is no lesson
    [rec] = [r for r in learnings(home, a) if r["type"] == "workflow"]
    assert rec["status"] == "active" and "tests with `cargo test --features c-fallback" in rec["context"]
    digest = session_digest(Store(home, warn_stderr=False), identify(a)).text
    assert "runs its tests with `cargo test --features c-fallback" in digest


def test_the_way_a_project_settled_on_later_in_the_session_is_learned(home, proj):
    """rjpower/zopfli: the tests failed to build, the agent edited code and ran them
    again another way several calls later. Before, only the success right after the
    failure counted, and nine real sessions left the digest empty."""
    from learn_cli.engine.digest import session_digest
    from learn_cli.store.api import Store
    from learn_cli.store.project import identify

    a = proj("zopfli")
    undeclared = "error[E0433]: failed to resolve: use of undeclared crate"
    for target in ("lz77::tests", "deflate::tests"):
        s = Agent(home, a)
        s.fail(f"cd {a}/zopfli-rs && cargo test {target}", undeclared, 101)
        s.edit_ok(str(a / "zopfli-rs" / "src" / "lib.rs"))
        s.ok("git status --short")
        s.ok(f"cd {a}/zopfli-rs && cargo test --features c-fallback {target} -- --nocapture 2>&1 | tail -5")
        s.ok(f"cd {a}/zopfli-rs && cargo test --features c-fallback")  # the same way again: said once a session
    [rec] = [r for r in learnings(home, a) if r["type"] == "workflow"]
    assert rec["status"] == "active" and len(rec["evidence"]) == 2
    digest = session_digest(Store(home, warn_stderr=False), identify(a)).text
    assert "- This project runs its tests with `cd zopfli-rs && cargo test --features c-fallback` (seen 2×)" in digest


def test_a_projects_way_is_never_made_global(home, proj):
    """Every project's "This project builds with …" has one key per goal, and promotion grouped
    copies by key: with all the replayed histories in one store (bench/one_store.py), claudec99's
    `gcc -E …` became a global fact "seen 14×", shown at every project's session start. A
    project's own fact stays in its project; one an older version made global is archived."""
    from learn_cli.engine.digest import session_digest
    from learn_cli.engine.promotion import run_promotion
    from learn_cli.store.api import Store
    from learn_cli.store.project import identify

    undeclared = "error[E0433]: failed to resolve: use of undeclared crate"
    ways = {"web": "cargo build --features a", "api": "cargo build --features b", "cli": "cargo build --features c"}
    for name, way in ways.items():
        for _ in range(2):
            s = Agent(home, proj(name))
            s.fail("cargo build", undeclared, 101)
            s.edit_ok(str(proj(name) / "src" / "lib.rs"))
            s.ok("git status --short")
            s.ok(f"{way} 2>&1 | tail -3", "Finished `dev` profile")
    store = Store(home, warn_stderr=False)
    run_promotion(store)
    facts = [r for name in ways for r in learnings(home, proj(name)) if r["type"] == "workflow"]
    assert {r["status"] for r in facts} == {"active"} and len(facts) == 3
    in_global = [json.loads(line) for path in (home / "global").glob("*.jsonl")
                 for line in path.read_text().splitlines() if line.strip()]
    assert not [rec for rec in in_global if rec.get("type") == "workflow"]
    web = session_digest(Store(home, warn_stderr=False), identify(proj("web"))).text
    assert "builds with `cargo build --features a`" in web and "--features b" not in web
    # a global copy left by an older version goes to the archive
    stray = dict(facts[1], id="learn-20260101T000000Z-abcdef", status="global", projects=[])
    path = store.global_file(stray)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(stray) + "\n")
    report = run_promotion(Store(home, warn_stderr=False))
    assert [item["id"] for item in report.archived] == [stray["id"]]
    web = session_digest(Store(home, warn_stderr=False), identify(proj("web"))).text
    assert "--features b" not in web


def test_each_projects_facts_have_a_key_of_their_own(home, proj):
    """All projects' facts of a goal shared one key, so `learn graph` showed "This project builds
    with `cd src-tauri && cargo check`" as a hub of 7 projects (bench/one_store.py's home). A
    project's facts are keyed as its own; those stored under the shared key are keyed again by
    the next prune."""
    from learn_cli.engine.goals import project_fact_key, shared_fact_key
    from learn_cli.engine.graph import build_graph
    from learn_cli.engine.prune import run_prune
    from learn_cli.store.api import Store
    from learn_cli.store.project import identify

    undeclared = "error[E0433]: failed to resolve: use of undeclared crate"
    for name in ("web", "api"):
        for _ in range(2):
            s = Agent(home, proj(name))
            s.fail("cargo build", undeclared, 101)
            s.edit_ok(str(proj(name) / "src" / "lib.rs"))
            s.ok(f"cargo build --features {name} 2>&1 | tail -3", "Finished `dev` profile")
    web, api = identify(proj("web")), identify(proj("api"))
    [fact] = [r for r in learnings(home, proj("web")) if r["type"] == "workflow"]
    assert fact["key"] == project_fact_key("build", web.id) != project_fact_key("build", api.id)
    store = Store(home, warn_stderr=False)
    assert not build_graph(store).hubs
    # as an older version stored them: one key for every project's facts of a goal
    for pid in (web.id, api.id):
        path = store.layout.learnings(pid)
        [old] = [r for r in learnings(home, proj("web" if pid == web.id else "api")) if r["type"] == "workflow"]
        store.update(path, old["id"], lambda cur: dict(cur, key=shared_fact_key("build")))
    store.close()
    store = Store(home, warn_stderr=False)
    assert build_graph(store).hubs  # the two facts look like one learning of two projects
    run_prune(store)
    store.close()
    [fact] = [r for r in learnings(home, proj("web")) if r["type"] == "workflow"]
    assert fact["key"] == project_fact_key("build", web.id)
    assert not build_graph(Store(home, warn_stderr=False)).hubs


def test_a_way_grepped_to_nothing_is_no_sighting_of_it(home, proj):
    """`cargo build --features a 2>&1 | grep error` printing nothing "worked" (grep found no
    error, or cargo did not run): it shows nothing of the job, so it is no sighting of the way
    the project builds, as it resolves no failure; the same run showing its output is one."""
    undeclared = "error[E0433]: failed to resolve: use of undeclared crate"
    a = proj("crate")
    for shown in ("", "Finished `dev` profile"):
        s = Agent(home, a)
        s.fail("cargo build", undeclared, 101)
        s.edit_ok(str(a / "src" / "lib.rs"))
        s.ok("cargo build --features a 2>&1 | grep -E '^error'" if not shown else "cargo build --features a", shown)
        facts = [r for r in learnings(home, a) if r["type"] == "workflow"]
        assert [len(r["evidence"]) for r in facts] == ([] if not shown else [1])


def test_the_same_way_failing_and_then_working_is_no_fact(home, proj):
    a = proj("api")
    for _ in range(2):
        s = Agent(home, a)
        s.fail("cargo test", "error[E0425]: cannot find value `x` in this scope", 101)
        s.edit_ok(str(a / "src" / "lib.rs"))
        s.ok("cargo test 2>&1 | tail -3")  # the code was fixed, not the way it runs
    assert [r for r in learnings(home, a) if r["type"] == "workflow"] == []


@pytest.mark.parametrize("command, cwd, way", [
    ("cargo check 2>&1 | head -50", "src-tauri", "cd src-tauri && cargo check"),  # the folder it ran in
    ("cd zopfli-rs && cargo test lz77::tests", "zopfli-rs", "cd zopfli-rs && cargo test"),  # its cd says where
    ("cargo check --manifest-path src-tauri/Cargo.toml", ".", "cargo check --manifest-path src-tauri/Cargo.toml"),
    ("source .venv/bin/activate && pytest tests/test_api.py -k slow -v", ".", "source .venv/bin/activate && pytest"),
    ("forge test --match-test testDeposit -vvv", ".", "forge test"),
    ("make -C build -j4", ".", "make -C build -j4"),
    ("cargo test", "<abs>/elsewhere", ""),  # outside the project: not how it runs
])
def test_the_way_a_job_ran(command, cwd, way):
    from learn_cli.capture.learner import working_way

    assert working_way({"cmd": command, "cwd": cwd}, "/src/app") == way


def test_an_option_change_applies_to_another_target_and_says_the_change(home, proj):
    a = proj("api")
    rejected = ("hint: You have divergent branches and need to specify how to reconcile them.\n"
                "fatal: Need to specify how to reconcile divergent branches.")
    _each_session(home, a, [(f"git pull origin {b}", f"git pull origin {b} --no-rebase") for b in ("main", "dev")],
                  rejected, 128)
    lines = context_of(Agent(home, a).fail("git pull origin release", rejected, 128)).splitlines()
    assert lines[0].endswith("`git pull origin release --no-rebase` instead of `git pull origin release`.")
    assert lines[1] == "learn: the change: add `--no-rebase`."


def test_a_failed_read_then_a_glob_that_finds_the_file_is_a_path_lesson(home, proj):
    a = proj("api")
    found = str(a / "src" / "settings" / "config.py")
    for _ in range(2):
        s = Agent(home, a)
        s.read_fail(str(a / "config.py"))
        s.send(s._tool("PostToolUse", "Glob", {"pattern": "**/config.py"},
                       tool_response={"filenames": [found], "durationMs": 3, "numFiles": 1, "truncated": False}))
    [rec] = learnings(home, a)
    assert rec["fix_kind"] == "path" and rec["fix_command"] == "src/settings/config.py"
    assert rec["status"] == "active"
    text = context_of(Agent(home, a).read_fail(str(a / "config.py")))
    assert "use `src/settings/config.py` instead" in text


def test_cd_to_the_root_from_the_root_is_no_lesson(home, proj):
    a = proj("api")
    (a / ".git").mkdir()
    for _ in range(2):
        s = Agent(home, a)
        s.fail("make", "make: *** No rule to make target 'all'.  Stop.", 2)
        s.ok(f"cd {a} && make")
    assert learnings(home, a) == []


def test_a_cd_into_the_folder_the_shell_is_already_in_is_dropped_from_any_command(home, proj):
    """Agents' shells keep their folder: `cd web && X` fails once they are in `web`. The
    lesson is "drop the cd", for any X; the error names the cd, so once is enough."""
    a = proj("api")
    sub = a / "web"
    sub.mkdir()
    error = "(eval):cd:1: no such file or directory: web"
    s = Agent(home, sub)
    assert s.fail("cd web && npm test 2>&1 | tail -30", error, 1) is None
    s.ok("npm test 2>&1 | tail -30")
    text = context_of(Agent(home, sub).fail("cd web && grep -n TODO src/app.ts", error, 1))
    assert text.splitlines()[0].endswith("`grep -n TODO src/app.ts` instead of `cd web && grep -n TODO src/app.ts`.")
    # Another folder that is not there: the lesson was about `web`, it says nothing.
    assert Agent(home, sub).fail("cd api && npm test", error.replace("web", "api"), 1) is None
    # A cd that did not fail is no such lesson: the command itself was the problem.
    s = Agent(home, a)
    s.fail("cd web && npm run lint", "npm error Missing script: \"lint\"", 1)
    s.ok("npm run lint")
    assert Agent(home, a).fail("cd web && npm run build", "npm error Missing script: \"build\"", 1) is None


def test_a_failed_cd_dropped_is_its_lesson_when_the_job_then_meets_another_error(home, proj):
    """provide-io/flavorpack: `cd tests/taster && ./dist/taster.psp env` failed at its `cd` (the
    shell was there), the line without the `cd` met "permission denied", and `chmod +x` then
    made it work. The chmod is the second error's lesson; the first one's is "drop the cd".
    Before, both errors learned the chmod, and every `cd` into a missing folder was answered
    with it."""
    root = proj("pack")
    (root / ".git").mkdir()
    sub = root / "tests" / "taster"
    sub.mkdir(parents=True)
    job = "FLAVOR_SKIP_KEY_VERIFICATION=1 ./dist/taster.psp env"
    s = Agent(home, sub)
    s.fail(f"cd tests/taster && {job}", "(eval):cd:1: no such file or directory: tests/taster", 1)
    s.fail(job, "(eval):1: permission denied: ./dist/taster.psp", 126)
    s.ok(f"chmod +x dist/taster.psp && {job}")
    lessons = {r["error"].split(":")[1]: (r["fix_kind"], r["fix_command"]) for r in learnings(home, root)}
    assert lessons == {"cd": ("retry", job), "1": ("between", "chmod +x dist/taster.psp")}
    # another folder missing: not this lesson, and no chmod (it was offered here before)
    assert Agent(home, sub).fail("cd helpers/taster && ./taster.pspf --help",
                                 "(eval):cd:1: no such file or directory: helpers/taster", 1) is None


def test_run_it_from_a_folder_learned_at_a_failed_cd_fits_only_that_cd(home, proj):
    """The key of "(eval):cd:1: no such file or directory: web" masks the folder (it is the
    error's shape), so `cd api && go test` failing met the lesson of `web`, which lives in
    `frontend/web`, and was told to run from there (provide-io/flavorpack had it, on its
    replay's folders)."""
    root = proj("mono")
    (root / ".git").mkdir()
    (root / "frontend" / "web").mkdir(parents=True)
    for _ in range(2):
        s = Agent(home, root)
        s.fail("cd web && npm test", "(eval):cd:1: no such file or directory: web", 1)
        s.ok("cd frontend/web && npm test")
    text = context_of(Agent(home, root).fail("cd web && npm run lint", "(eval):cd:1: no such file or directory: web"))
    assert "the change: run it from `frontend/web`" in text
    assert Agent(home, root).fail("cd api && go test ./...", "(eval):cd:1: no such file or directory: api") is None


def test_another_program_for_the_same_arguments_travels_to_other_commands(home, proj):
    """`python a.py` → `python3 a.py`, then `python b.py` → `python3 b.py`: one fix (the
    program), whatever the script; offered for the next script in the project's words."""
    a = proj("api")
    missing = "zsh:1: command not found: python"
    _each_session(home, a, [(f"python {x} --check", f"python3 {x} --check") for x in ("a.py", "tools/b.py")],
                  missing, 127)
    lines = context_of(Agent(home, a).fail("python -c 'import app' 2>&1 | head", missing, 127)).splitlines()
    # the second script followed the first one's change, offered for it: that helped
    assert lines[0].startswith("learn: known fix (seen 2× in this project, helped 1×)")
    assert lines[0].endswith("`python3 -c 'import app'` instead of `python -c 'import app' 2>&1 | head`.")
    assert lines[1] == "learn: the change: `python` → `python3`."
    # Arguments that changed too are not a change of program: `node a.js` -> `node b.js` is other work.
    s = Agent(home, a)
    s.fail("node a.js", "Error: Cannot find module 'x'", 1)
    s.ok("node b.js")
    assert Agent(home, a).fail("node c.js", "Error: Cannot find module 'x'", 1) is None


def test_a_timeout_that_is_not_installed_is_dropped_for_every_command(home, proj):
    """`timeout 60 npm test` on a Mac without coreutils: `command not found: timeout`, then
    `npm test` worked. Without their plumbing the two are the same command (no lesson), but
    the error names the plumbing: doing without it is the lesson, for any command run so; in
    this project at once, elsewhere once seen in two projects."""
    a, b, c = proj("api"), proj("cli"), proj("web")
    missing = "(eval):1: command not found: timeout"
    s = Agent(home, a)
    s.fail("timeout 60 npm test", missing, 127)
    s.ok("npm test 2>&1 | tail -20")
    [rec] = learnings(home, a)
    assert (rec["command"], rec["fix"]) == ("timeout 60 npm test", "npm test")
    lines = context_of(Agent(home, a).fail("cd web && timeout 30 pytest -q 2>&1 | tail -5", missing, 127)).splitlines()
    assert lines[0] == ("learn: known fix (seen once in this project): `cd web && pytest -q 2>&1 | tail -5` "
                        "instead of `cd web && timeout 30 pytest -q 2>&1 | tail -5`.")
    assert lines[1] == "learn: the change: drop `timeout 30`."
    s = Agent(home, b)
    assert s.fail("timeout 120 cargo test", missing, 127) is None  # one sighting elsewhere: not yet
    s.ok("gtimeout 120 cargo test")  # coreutils' name: stored as the timeout dropped, as in api
    [rec] = learnings(home, b)
    assert (rec["command"], rec["fix"]) == ("timeout 120 cargo test", "cargo test")
    lines = context_of(Agent(home, c).fail("timeout 10 make check", missing, 127)).splitlines()
    assert lines[0].startswith("learn: known fix (seen 2× in 2 projects: ") and "api" in lines[0] and "cli" in lines[0]
    assert lines[0].endswith("): `make check` instead of `timeout 10 make check`.")
    # A timeout that ran and a test that failed: the same command again after a fix is no lesson.
    s = Agent(home, c)
    s.fail("timeout 60 npm run lint", "src/a.ts:3:1 error  'x' is defined but never used", 1)
    s.ok("npm run lint")
    assert not [r for r in learnings(home, c) if "lint" in r.get("command", "")]


@pytest.mark.parametrize(("failed", "error", "fix"), [
    ("stat -c %s dist/app.js", "stat: illegal option -- c\nusage: stat [-FLnq] [-f format | -l | -r | -s | -x]",
     "stat -f %z dist/app.js"),
    ("date -d '1 day ago' +%F", "date: illegal option -- d\nusage: date [-jnRu] [-r seconds|file]", "date -v-1d +%F"),
    ("find src -name '*.py' -printf '%p\\n'", "find: -printf: unknown primary or operator",
     "find src -name '*.py' -print"),
    ("readlink -f build/out", "readlink: illegal option -- f\nusage: readlink [-fn] [file ...]", "realpath build/out"),
    ("sha256sum dist/app.tar.gz", "zsh:1: command not found: sha256sum", "shasum -a 256 dist/app.tar.gz"),
    ("xdg-open report.html", "(eval):1: command not found: xdg-open", "open report.html"),
])
def test_another_spelling_where_the_first_does_not_exist_is_a_lesson(home, proj, failed, error, fix):
    """GNU options and programs on a Mac: the error rejects an option, and the retry changes it
    and its value (`-c %s` → `-f %z`), or says the program is not installed, and another one
    does the job on the same targets; answered the next time."""
    assert _first_answer(home, proj("api"), failed, fix, error, failed).endswith(f"`{fix}` instead of `{failed}`.")


def _after_a_step(home, project, failed: str, step: str, error: str, again: str, again_error: str = "",
                  code: int = 1) -> str:
    """The hook's answer for `again` (failing with `again_error`, else `error`), once `failed`
    failed so and worked after `step`."""
    s = Agent(home, project)
    s.fail(failed, error, code)
    s.ok(step)
    s.ok(failed)
    return context_of(Agent(home, project).fail(again, again_error or error, code))


def _first_answer(home, project, failed: str, fix: str, error: str, again: str) -> str:
    """The hook's first line for `again` failing with `error`, once `fix` worked after `failed`."""
    s = Agent(home, project)
    s.fail(failed, error, 1)
    s.ok(fix)
    return context_of(Agent(home, project).fail(again, error, 1)).splitlines()[0]


@pytest.mark.parametrize(("failed", "error", "fix", "other", "change"), [
    ("sha256sum dist/app.tar.gz", "zsh:1: command not found: sha256sum", "shasum -a 256 dist/app.tar.gz",
     "sha256sum build/x.zip", "`sha256sum` → `shasum -a 256`"),
    ("readlink -f build/out", "readlink: illegal option -- f", "realpath build/out", "readlink -f src",
     "`readlink -f` → `realpath`"),
])
def test_another_program_with_its_own_options_travels_to_other_targets(home, proj, failed, error, fix, other,
                                                                      change):
    """The other spelling is a program change even with its own options (`shasum -a 256`) or
    without the old one's (`readlink -f`): the next file gets it, in the project's words."""
    from learn_cli.capture.lesson import program_change

    assert program_change(failed, fix) is not None
    assert program_change("npm test", "npx jest") is None  # a job's words are not options
    a = proj("api")
    s = Agent(home, a)
    s.fail(failed, error, 1)
    s.ok(fix)
    lines = context_of(Agent(home, a).fail(other, error, 1)).splitlines()
    assert lines[0].endswith(f"instead of `{other}`.") and lines[1] == f"learn: the change: {change}."


def test_after_a_rejected_option_or_program_another_target_or_a_look_is_no_lesson(home, proj):
    a = proj("api")
    error = "stat: illegal option -- c\nusage: stat [-FLnq] [-f format | -l | -r | -s | -x]"
    for follow in ("stat -f %z dist/other.js", "ls -la dist"):
        s = Agent(home, a)
        s.fail("stat -c %s dist/app.js", error, 1)
        s.ok(follow)
    for follow in ("ls -l dist/app.tar.gz", "shasum -a 256 dist/other.tar.gz"):  # a look, another file
        s = Agent(home, a)
        s.fail("sha256sum dist/app.tar.gz", "zsh:1: command not found: sha256sum", 127)
        s.ok(follow)
    s = Agent(home, a)
    s.fail("git commit --amendd -m 'x'", "error: unknown option `amendd'\nusage: git commit [<options>]", 129)
    s.ok("git status")
    assert not [r for r in learnings(home, a) if r.get("fix")]


def test_a_setup_step_the_program_needs_travels_to_its_other_commands(home, proj):
    """The venv that must be active (issue 10, cause 7): `source .venv/bin/activate` run first
    fixed `python a.py` and `python b.py`; `python -m app` failing the same way gets it too."""
    a = proj("api")
    missing = (
        "Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'requests'"
    )
    _each_session(home, a, [(f"python {x}", f"source .venv/bin/activate && python {x}") for x in ("a.py", "b.py")],
                  missing, 1)
    text = context_of(Agent(home, a).fail("cd api && python -m app", missing, 1))
    assert "`cd api && source .venv/bin/activate && python -m app` instead of `cd api && python -m app`" in text
    # Another program failing the same way is not this lesson.
    assert Agent(home, a).fail("node app.js", missing, 1) is None


def test_a_glob_zsh_found_no_match_for_is_quoted_in_any_command(home, proj):
    """zsh stops `pip install fastapi[all]` (`no matches found: fastapi[all]`); quoted, it
    worked. The key is the error's shape, not the word, and the lesson travels: the next
    command with a bare glob that fails so gets its words quoted."""
    a = proj("api")
    _teach(home, a, "pip install fastapi[all]", 'pip install "fastapi[all]"', "zsh: no matches found: fastapi[all]")
    lines = context_of(Agent(home, a).fail("find src -name *.py | head", "zsh: no matches found: *.py", 1)).splitlines()
    assert lines[0].endswith("`find src -name '*.py' | head` instead of `find src -name *.py | head`.")
    assert lines[1] == "learn: the change: quote `*.py`."
    # A command with nothing to quote gets nothing from it.
    assert Agent(home, a).fail("pip install 'x[y]' z", "zsh: no matches found: z", 1) is None


def test_a_windows_path_git_bash_took_apart_is_quoted_in_any_command(home, proj):
    """Round 11 (r11-d-031, r11-d-033): in Git Bash `C:\\xampp\\mysql\\bin\\mysql.exe` runs as
    `C:xamppmysqlbinmysql.exe` (command not found); quoted, it worked. Another program or a
    `cd` into another folder that fails so gets its Windows path quoted; a command with nothing
    to quote gets nothing."""
    a = proj("api")
    _teach(home, a, 'C:\\xampp\\mysql\\bin\\mysql.exe -u root app -e "SELECT 1"',
           '"C:\\xampp\\mysql\\bin\\mysql.exe" -u root app -e "SELECT 1"',
           "/usr/bin/bash: line 1: C:xamppmysqlbinmysql.exe: command not found")
    error = "/usr/bin/bash: line 1: cd: C:cursorlingorabackend: No such file or directory"
    lines = context_of(Agent(home, a).fail("cd C:\\cursor\\lingora\\backend && python serve.py", error, 1)).splitlines()
    assert lines[0].endswith("`cd 'C:\\cursor\\lingora\\backend' && python serve.py` instead of "
                             "`cd C:\\cursor\\lingora\\backend && python serve.py`.")
    assert lines[1] == "learn: the change: quote `C:\\cursor\\lingora\\backend`."
    assert Agent(home, a).fail('cd "C:\\x y" && ls', error, 1) is None


@pytest.mark.parametrize("error", [
    # the error names the command to run instead
    ("npm ERR! code EUSAGE\nnpm ERR! `npm ci` can only install packages when your package.json and "
     "package-lock.json are in sync. Please update your lock file with `npm install` before continuing."),
    # the error quotes the subcommand as the problem: the other one is the lesson
    ("npm ERR! code EUSAGE\nnpm ERR! The `npm ci` command can only install with an existing "
     "package-lock.json or\nnpm ERR! npm-shrinkwrap.json with lockfileVersion >= 1."),
])
def test_the_command_an_error_names_is_a_lesson(home, proj, error):
    """`npm ci` fails, `npm install` works: a job's word changed (not an option, not a target),
    yet the error named the command to run or the one that was wrong. A mere alias (`npm i`
    for `npm install`) after an error that names neither is no lesson."""
    a = proj("web")
    _teach(home, a, "npm ci", "npm install 2>&1 | tail -3", error)
    assert context_of(Agent(home, a).fail("npm ci", error, 1)).splitlines()[0].endswith(
        "`npm install` instead of `npm ci`.")
    assert not is_lesson("npm i", "npm install", "npm ERR! network timeout")


def test_a_branch_name_does_not_split_a_git_error(home, proj):
    """`git push` on a branch without upstream says the branch's name; the next branch's push
    is the same failure, and the fix names no branch."""
    a = proj("api")

    def no_upstream(branch):
        return (f"fatal: The current branch {branch} has no upstream branch.\nTo push the current branch and set "
                f"the remote as upstream, use\n\n    git push --set-upstream origin {branch}\n")
    assert error_key(no_upstream("feat/x"), "git push", "Bash") == error_key(no_upstream("fix-2"), "git push", "Bash")
    _teach(home, a, "git push", "git push -u origin HEAD", no_upstream("feat/x"))
    assert "`git push -u origin HEAD`" in context_of(Agent(home, a).fail("git push", no_upstream("fix-2"), 128))


def test_git_commit_keys_on_its_verdict_not_the_status_before_it(home, proj):
    """`nothing added to commit but untracked files present` ends a status listing that
    changes every time (the branch, the files): the verdict is the error."""
    a = proj("api")

    def nothing_added(files):
        listed = "".join(f"\t{f}\n" for f in files)
        return ("On branch main\nUntracked files:\n  (use \"git add <file>...\" to include in what will be "
                f"committed)\n{listed}\nnothing added to commit but untracked files present (use \"git add\" to track)")
    _teach(home, a, 'git commit -m "wip"', 'git add -A && git commit -m "wip"', nothing_added(["src/a.ts"]))
    text = context_of(Agent(home, a).fail('git commit -m "fix tests"', nothing_added(["src/b.ts", "README.md"]), 1))
    assert "run `git add -A` first" in text


_ESLINT_EXT = ("Invalid option '--ext' - perhaps you meant '-c'?\nYou're using eslint.config.js, some command line "
               "flags are no longer available.")
_DENO_NET = ('error: Uncaught (in promise) PermissionDenied: Requires net access to "api.x.com:443", run again '
             'with the --allow-net flag')
_TS_NODE = 'TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".ts" for /Users/dev/app/scripts/{}.ts'
_NIGHTLY = "error[E0554]: `#![feature]` may not be used on the stable release channel\n --> src/lib.rs:1:1"
_EXTERNALLY_MANAGED = ("error: externally-managed-environment\n\n× This environment is externally managed\n"
                       "╰─> To install Python packages system-wide, try brew install xyz")


_NO_MODULE_MAIN = 'ERROR:    Error loading ASGI app. Could not import module "main".'
_XARGS_R = "xargs: illegal option -- r\nusage: xargs [-0opt] [-E eofstr] [-I replstr [-R replacements]]"


@pytest.mark.parametrize(("failed", "fix", "error", "other", "rewrite"), [
    # ESLint 9 rejects `--ext`: the option is dropped with its value, whatever the value
    ("npx eslint src --ext .ts", "npx eslint src", _ESLINT_EXT, "npx eslint lib --ext .ts,.tsx", "npx eslint lib"),
    # an externally managed Python: `uv pip` for `pip`, for the next package too
    ("pip install httpx", "uv pip install httpx", _EXTERNALLY_MANAGED, "pip install rich", "uv pip install rich"),
    # an option the fix put after the subcommand goes there again: after the script, deno
    # would hand it to the script
    ("deno run main.ts", "deno run --allow-net main.ts", _DENO_NET, "deno run x.ts", "deno run --allow-net x.ts"),
    # the error names the command's own file, another one next time: the key masks it
    ("npx ts-node scripts/seed.ts", "npx tsx scripts/seed.ts", _TS_NODE.format("seed"), "npx ts-node scripts/gen.ts",
     "npx tsx scripts/gen.ts"),
    # a toolchain chosen is how the program is called (rustup's `+nightly`)
    ("cargo build", "cargo +nightly build", _NIGHTLY, "cargo test --lib", "cargo +nightly test --lib"),
    # a tool run by a runner (`uvx`, like `npx`) for its next use
    ("black .", "uvx black .", "bash: black: command not found", "black src tests", "uvx black src tests"),
    # the file the error cannot access, found elsewhere, for the next command naming it
    ("java -jar app.jar", "java -jar target/app.jar", "Error: Unable to access jarfile app.jar",
     "java -jar app.jar --server.port=9090", "java -jar target/app.jar --server.port=9090"),
    # an argument the error names as missing, replaced in the program's next command naming it
    ("uvicorn main:app --reload", "uvicorn app.main:app --reload", _NO_MODULE_MAIN, "uvicorn main:app --port 8001",
     "uvicorn app.main:app --port 8001"),
    # macOS's xargs has no `-r`: getopt names the program that refused it, wherever it stands,
    # and the one segment changed carries the change to the next pipeline through xargs
    ("git ls-files -d | xargs -r git rm", "git ls-files -d | xargs git rm", _XARGS_R,
     "find . -name '*.orig' | xargs -r rm", "find . -name '*.orig' | xargs rm"),
])
def test_a_lesson_travels_to_the_next_command_of_its_kind(home, proj, failed, fix, error, other, rewrite):
    a = proj("web")
    _teach(home, a, failed, fix, error)
    lines = context_of(Agent(home, a).fail(other, error.replace("seed", "gen"), 2)).splitlines()
    assert lines[0].endswith(f"`{rewrite}` instead of `{other}`.")


def test_starting_an_application_first_is_a_step_to_run_first(home, proj):
    """`open -a Docker` starts the daemon that `docker ps` could not reach: a step to run
    first, for the next docker command that cannot connect."""
    a = proj("api")
    error = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
    s = Agent(home, a)
    s.fail("docker ps", error, 1)
    s.ok("open -a Docker")
    s.ok("docker ps", "CONTAINER ID")
    assert "run `open -a Docker` first" in context_of(Agent(home, a).fail("docker compose up -d", error, 1))


def test_another_job_where_the_one_asked_for_does_not_exist_is_a_lesson(home, proj):
    """`make test`: "No rule to make target 'test'", then `make check` worked: the job the
    error named as missing was the mistake (like npm's missing script)."""
    a = proj("lib")
    error = "make: *** No rule to make target 'test'.  Stop."
    _teach(home, a, "make test", "make check", error)
    assert context_of(Agent(home, a).fail("make test", error, 2)).splitlines()[0].endswith(
        "`make check` instead of `make test`.")
    s = Agent(home, a)  # after another error, another target is the agent moving on
    s.fail("make lint", "src/a.c:3:1: error: expected ';'", 2)
    s.ok("make format")
    s = Agent(home, a)  # and listing the scripts that exist is a look, even where the error says to
    listing = 'npm error Missing script: "test"\nnpm error To see a list of scripts, run:\nnpm error   npm run'
    s.fail("npm test", listing, 1)
    s.ok("npm run", "Scripts available in lib via `npm run-script`:\n  test:unit")
    s.ok("npm run test:unit")
    assert [(r["command"], r["fix"]) for r in learnings(home, a)] == [("make test", "make check"),
                                                                      ("npm test", "npm run test:unit")]


def test_a_script_that_is_not_executable_is_run_by_its_interpreter_whichever_script(home, proj):
    """`./scripts/deploy.sh`: permission denied, `bash scripts/deploy.sh` worked. Every script
    run by its path fails so until it is made executable: one key, and the next `.sh` gets
    the interpreter (a `.py` does not)."""
    a = proj("ops")
    _teach(home, a, "./scripts/deploy.sh", "bash scripts/deploy.sh", "zsh: permission denied: ./scripts/deploy.sh")
    text = context_of(Agent(home, a).fail("cd ops && ./scripts/migrate.sh --dry-run",
                                          "zsh: permission denied: ./scripts/migrate.sh", 126))
    assert "`cd ops && bash ./scripts/migrate.sh --dry-run` instead of `cd ops && ./scripts/migrate.sh" in text
    assert Agent(home, a).fail("./tools/gen.py", "zsh: permission denied: ./tools/gen.py", 126) is None


def test_a_manifest_named_in_the_error_is_no_path_to_mask(home, proj):
    """`could not find Cargo.toml in <path> or any parent directory` is one error for every
    cargo command: "run it from `engine`", learned on `cargo build`, answers `cargo test`."""
    a = proj("game")
    error = "error: could not find `Cargo.toml` in `/Users/dev/game` or any parent directory"
    assert error_key(error, "cargo build", "Bash") == error_key(error, "cargo test", "Bash")
    assert error_key("fatal: pathspec 'a/b.md' did not match", "git add a/b.md", "Bash") == error_key(
        "fatal: pathspec 'c.md' did not match", "git add c.md", "Bash")  # a file named is still a path
    _teach(home, a, "cargo build", "cd engine && cargo build", error)
    assert "engine && cargo test` instead of `cargo test`" in context_of(Agent(home, a).fail("cargo test", error, 101))


def test_a_count_in_the_error_does_not_split_its_key(home, proj):
    """A pre-commit hook that fixed files stops the commit with a count that changes every
    time (`Found 2 errors (2 fixed, 0 remaining)`, then `Found 1 error …`): adding the fixed
    files first is the lesson for the next commit."""
    a = proj("api")

    def modified(count):
        noun = "error" if count == 1 else "errors"
        return ("ruff....................................................Failed\n- hook id: ruff\n"
                f"- files were modified by this hook\n\nFound {count} {noun} ({count} fixed, 0 remaining).")
    assert error_key(modified(2), "git commit -m x", "Bash") == error_key(modified(1), "git commit -m y", "Bash")
    _teach(home, a, 'git commit -m "feat: x"', 'git add -A && git commit -m "feat: x"', modified(2))
    assert "run `git add -A` first" in context_of(Agent(home, a).fail('git commit -m "fix: y"', modified(1), 1))


def test_a_missing_package_is_one_failure_for_commonjs_and_esm(home, proj):
    """ESM says `Cannot find package 'express' imported from <the importing file>`: the package
    is the subject, not the file, and CommonJS's `Cannot find module 'express'` is the same
    failure. `npm install` run first answers the next script."""
    a = proj("api")
    esm = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'express' imported from /Users/dev/api/{}"
    assert error_key(esm.format("index.js"), "node index.js", "Bash") == error_key(
        "Error: Cannot find module 'express'\nRequire stack:\n- /x/app.js", "node app.js", "Bash")
    s = Agent(home, a)
    s.fail("node index.js", esm.format("index.js"), 1)
    s.ok("npm install")
    s.ok("node index.js", "listening")
    text = context_of(Agent(home, a).fail("node scripts/seed.js", esm.format("scripts/seed.js"), 1))
    assert "run `npm install` first" in text


def test_bsd_sed_in_place_gets_its_empty_suffix_for_any_file(home, proj):
    """macOS's sed reads `sed -i 's/a/b/' f` as the suffix 's/a/b/' and the script `f`; its
    message depends on the file's name (`command a expects …`, `undefined label …`). One key
    for all of them, and the fix `sed -i ''` travels to the next file."""
    a = proj("web")
    _teach(home, a, "sed -i 's/foo/bar/' src/app.ts", "sed -i '' 's/foo/bar/' src/app.ts",
           'sed: 1: "src/app.ts": command a expects \\ followed by text')
    lines = context_of(Agent(home, a).fail("sed -i 's/x/y/g' lib/util.js",
                                           "sed: 1: \"lib/util.js\": undefined label 'ib/util.js'", 1)).splitlines()
    assert lines[0].endswith("`sed -i '' 's/x/y/g' lib/util.js` instead of `sed -i 's/x/y/g' lib/util.js`.")
    # a script error with the suffix given is another failure
    assert error_key('sed: 1: "s/a/b": unterminated substitute in regular expression', "sed -i '' 's/a/b' f.txt",
                     "Bash") != error_key('sed: 1: "f.txt": invalid command code f', "sed -i 's/a/b/' f.txt", "Bash")


def test_a_test_path_pytest_cannot_find_is_run_from_the_folder_that_has_it(home, proj):
    """`python3 -m pytest tests/ -q` from the root: "file or directory not found: tests/";
    from `backend` it works. pytest's message is a path error like any other: the next test
    file gets "run it from backend"."""
    a = proj("app")
    _teach(home, a, "python3 -m pytest tests/ -q", "cd backend && python3 -m pytest tests/ -q",
           "ERROR: file or directory not found: tests/\n\nno tests ran in 0.01s")
    text = context_of(Agent(home, a).fail("python3 -m pytest tests/test_api.py -q",
                                          "ERROR: file or directory not found: tests/test_api.py", 4))
    assert "backend && python3 -m pytest tests/test_api.py -q` instead of" in text


def test_another_file_an_edit_away_is_not_the_same_work():
    """A fix learned for `pytest tests/test_a.py` is no answer for `pytest tests/test_c.py`:
    two commands run as meant name two files, though a typo is an edit away."""
    assert not same_work("pytest tests/test_a.py", "pytest tests/test_c.py")
    assert same_work("python3 s.py --all", "python3 s.py")
    assert is_lesson("pip install reqeusts", "pip install requests")  # a retry's typo is still corrected


def test_the_files_and_numbers_a_command_names_do_not_split_its_key():
    """What varies with the command (its own files, a package's folder) or with the occasion
    (a pull request's number) is masked; a module or program named as missing stays."""
    eacces = "npm ERR! Error: EACCES: permission denied, mkdir '/usr/local/lib/node_modules/{}'"
    assert error_key(eacces.format("typescript"), "npm install -g typescript", "Bash") == error_key(
        eacces.format("pnpm"), "npm install -g pnpm", "Bash")
    exists = 'a pull request for branch "{}" into branch "main" already exists:\nhttps://github.com/a/b/pull/{}'
    assert error_key(exists.format("feat/a", 12), "gh pr create", "Bash") == error_key(
        exists.format("fix/b", 14), "gh pr create", "Bash")
    missing = "ModuleNotFoundError: No module named '{}'"
    assert error_key(missing.format("requests"), "python requests.py", "Bash") != error_key(
        missing.format("httpx"), "python httpx.py", "Bash")


def test_configuring_then_the_same_build_is_a_step_to_run_first(home, proj):
    """`cmake --build build`: "could not load cache"; `cmake -B build` configured, then the same
    build worked. Configuring is not a rewrite of the build (cmake's mode is an option:
    engine.goals.option_mode): the lesson is to run it first, for the next target too; and
    `cd build && make` again after the configure made `build` is no "run it from build"."""
    a = proj("engine")
    s = Agent(home, a)
    s.fail("cmake --build build", "Error: could not load cache", 1)
    s.ok("cmake -B build")
    s.ok("cmake --build build")
    s = Agent(home, a)
    s.fail("cd build && make", "bash: cd: build: No such file or directory", 1)
    s.ok("cmake -S . -B build")
    s.ok("cd build && make")
    assert [(r["fix"], r["fix_kind"]) for r in learnings(home, a)] == [("cmake -B build", "between"),
                                                                     ("cmake -S . -B build", "between")]
    text = context_of(Agent(home, a).fail("cmake --build build --target tests", "Error: could not load cache", 1))
    assert text.splitlines()[0].endswith("run `cmake -B build` first, then retry `cmake --build build --target tests`.")
    text = context_of(Agent(home, a).fail("cd build && make -j8", "bash: cd: build: No such file or directory", 1))
    assert "run `cmake -S . -B build` first" in text  # the folder `cd` could not enter is named: one sighting


def test_a_bare_program_given_options_with_values_is_a_retry_that_travels(home, proj):
    """`ctest` found no test configuration; `ctest --test-dir build` worked: options added to
    a bare program (each with its value) are a retry, and the change goes to `ctest -R x`.
    A flag alone is an action or a look (`jest --clearCache`), not a retry."""
    a = proj("engine")
    error = ("*********************************\nNo test configuration file found!\n*********************************\n"
             "Usage\n\n  ctest [options]")  # as ctest prints it
    s = Agent(home, a)
    s.fail("ctest", error, 8)
    s.ok("ctest --test-dir build")
    text = context_of(Agent(home, a).fail("ctest -R parser", error, 8))
    assert text.splitlines()[0].endswith("`ctest --test-dir build -R parser` instead of `ctest -R parser`.")
    assert pairing_is_retry("make", "make -j4") and pairing_is_retry("make", "make -C build --jobs 4")
    assert not pairing_is_retry("jest", "jest --clearCache") and not pairing_is_retry("pytest", "pytest tests/a.py")


def test_options_changed_after_an_edit_fixed_the_code_are_no_lesson(home, proj):
    """`python app.py`: NameError; app.py edited; `python app.py --port 8000` worked. The edit
    fixed it, not the port the error says nothing of. An option the error names stays the
    lesson, edit or not (`npm install --legacy-peer-deps` after ERESOLVE)."""
    a = proj("api")
    s = Agent(home, a)
    s.fail("python app.py", "Traceback (most recent call last):\n  File \"app.py\", line 3\nNameError: name 'main' "
                            "is not defined", 1)
    s.edit_ok(str(a / "app.py"))
    s.ok("python app.py --port 8000")
    assert learnings(home, a) == []
    s = Agent(home, a)
    s.fail("npm install", "npm error code ERESOLVE\nnpm error Fix the upstream dependency conflict, or retry this "
                          "command with --force or --legacy-peer-deps", 1)
    s.edit_ok(str(a / "package.json"))
    s.ok("npm install --legacy-peer-deps")
    assert [r["fix"] for r in learnings(home, a)] == ["npm install --legacy-peer-deps"]


def pairing_is_retry(failed: str, ok: str) -> bool:
    from learn_cli.capture.pairing import is_retry

    return is_retry(failed, ok)


_IDENTITY = ("Author identity unknown\n\n*** Please tell me who you are.\n\nRun\n\n  git config --global user.email "
             "\"you@example.com\"\n\nfatal: unable to auto-detect email address (got 'root@{host}.(none)')")


def test_an_address_in_the_error_does_not_split_its_key(home, proj):
    """git's "unable to auto-detect email address (got 'root@box.(none)')" names the machine:
    the key masks user@host addresses (`<email>`), so `git config user.email` run first answers
    the next commit on another machine; a package at a version (`express@4.18.2`) is no address."""
    a = proj("site")
    s = Agent(home, a)
    s.fail("git commit -m 'init'", _IDENTITY.format(host="abc"), 128)
    s.ok("git config user.email dev@example.com")
    s.ok("git commit -m 'init'")
    text = context_of(Agent(home, a).fail("git commit -am 'typo'", _IDENTITY.format(host="ci-runner"), 128))
    assert "run `git config user.email dev@example.com` first" in text
    assert error_signature("npm error notarget No matching version found for express@4.18.99") == (
        "npm error notarget no matching version found for express@4.18.99")


_ESM = ("(node:1234) Warning: To load an ES module, set \"type\": \"module\" in the package.json or use the .mjs "
        "extension.\n/w/{script}:1\nimport express from 'express';\n^^^^^^\n\n"
        "SyntaxError: Cannot use import statement outside a module")


def test_a_project_file_edited_before_the_same_command_worked_is_a_lesson_for_any_command(home, proj):
    """`node index.js`: "Cannot use import statement outside a module"; package.json edited;
    the same command worked. Only the project's settings changed, so the edit is the lesson
    whatever the error's category, and it answers the next script meeting the error. With
    code edited too, which edit fixed it is a guess: no lesson."""
    a = proj("web")
    s = Agent(home, a)
    s.fail("node index.js", _ESM.format(script="index.js"), 1)
    s.edit_ok(str(a / "package.json"))
    s.ok("node index.js")
    text = context_of(Agent(home, a).fail("node scripts/seed.js", _ESM.format(script="scripts/seed.js"), 1))
    assert text.splitlines()[0].endswith("edit `package.json` first (it fixed this before), then retry.")
    s = Agent(home, a)
    s.fail("npm test", "FAILED tests/test_a.py::test_add - assert 3 == 4", 1)
    s.edit_ok(str(a / "pyproject.toml"))
    s.edit_ok(str(a / "src" / "a.py"))
    s.ok("npm test")
    assert [r["fix"] for r in learnings(home, a)] == ["edit package.json"]


_NO_UPSTREAM = ("fatal: The current branch {0} has no upstream branch.\nTo push the current branch and set the remote "
                "as upstream, use\n\n    git push --set-upstream origin {0}\n")


def test_a_command_the_error_suggested_is_read_again_from_the_next_error(home, proj):
    """`git push` on a branch with no upstream; git suggests `git push --set-upstream origin
    feat/login`, which worked. The next branch gets the command its own error suggests (the
    suggestion is kept with the error's lines: text.failure.suggested_commands), not the
    branch of the lesson."""
    a = proj("site")
    _teach(home, a, "git push", "git push --set-upstream origin feat/login", _NO_UPSTREAM.format("feat/login"))
    text = context_of(Agent(home, a).fail("git push", _NO_UPSTREAM.format("fix/nav"), 128))
    assert text.splitlines()[0].endswith("`git push --set-upstream origin fix/nav` instead of `git push`.")
    assert "feat/login" not in text.splitlines()[0]  # (the error it fixed before may name it)


def test_a_replaced_argument_goes_only_to_a_command_naming_it():
    from learn_cli.capture.lesson import apply_replaced_target

    assert apply_replaced_target("uvicorn server:app", "uvicorn", "main:app", "app.main:app") is None



def test_one_success_is_the_lesson_of_each_earlier_attempt_it_retries(home, proj):
    """`pytest`: command not found; `python -m pytest`: no module named pytest; `uv run
    pytest` worked: both failures have their lesson. A failure the agent then edited code
    for was fixed by the edit (the next run failed otherwise), so the success is not its
    lesson."""
    a = proj("api")
    s = Agent(home, a)
    s.fail("pytest", NOT_FOUND, 127)
    s.fail("python -m pytest", "/usr/bin/python: No module named pytest", 1)
    s.ok("uv run pytest")
    assert sorted((r["command"], r["fix"]) for r in learnings(home, a)) == [
        ("pytest", "uv run pytest"), ("python -m pytest", "uv run pytest")]
    text = context_of(Agent(home, a).fail("pytest tests/a.py", NOT_FOUND, 127))
    assert "`uv run pytest tests/a.py` instead of" in text
    b = proj("tool")
    s = Agent(home, b)
    glob = "gcc -I../src/zopfli t.c ../src/zopfli/*.c -o t && ./t"  # (real history, rjpower-zopfli)
    s.fail(glob, "t.c:30:5: error: call to undeclared function 'ZopfliInitHash'", 1)
    s.edit_ok(str(b / "t.c"))
    s.fail(glob, "clang: error: linker command failed with exit code 1 (use -v to see invocation)", 1)
    s.ok("gcc -I../src/zopfli t.c ../src/zopfli/blocksplitter.c ../src/zopfli/cache.c -o t && ./t")
    assert [r["error"].splitlines()[0] for r in learnings(home, b)] == [
        "clang: error: linker command failed with exit code 1 (use -v to see invocation)"]


def test_a_step_run_first_in_the_folder_of_the_command_runs_there(home, proj):
    """`cd frontend && npm run build`: vite not found; `cd frontend && npm install && npm run
    build` worked: the step to run first is `npm install` in `frontend`, for the next command
    there that meets the error."""
    a = proj("web")
    error = "> web@0.1.0 build\n> vite build\n\nsh: 1: vite: not found"
    _teach(home, a, "cd frontend && npm run build", "cd frontend && npm install && npm run build", error)
    text = context_of(Agent(home, a).fail("cd frontend && npm run dev", error.replace("build", "dev"), 127))
    assert text.splitlines()[0].endswith(
        "run `cd frontend && npm install` first, then retry `cd frontend && npm run dev`.")


def test_a_change_followed_as_offered_for_another_command_is_credited(home, proj):
    """`git pull --rebase origin dev` offered (the change learned on `… main`) and run: the
    learning it came from helped, and the new command is a sighting that worked as offered."""
    a = proj("site")
    error = "fatal: Need to specify how to reconcile divergent branches."
    _teach(home, a, "git pull origin main", "git pull --rebase origin main", error)
    s = Agent(home, a)
    assert s.fail("git pull origin dev", error, 128) is not None
    s.ok("git pull --rebase origin dev")
    found = {r["fix"]: (r.get("helped"), r["status"]) for r in learnings(home, a)}
    assert found == {"git pull --rebase origin main": (1, "pending"), "git pull --rebase origin dev": (0, "active")}


def test_a_command_run_through_a_shell_wrapper_is_learned_and_answered_as_itself(home, proj):
    """Codex's transcripts show every command as `/bin/zsh -lc '…'`: the wrapper is how the
    agent runs commands, so the lesson is in plain words and answers either form."""
    a = proj("api")
    missing = "bash: python: command not found"
    _teach(home, a, "/bin/zsh -lc 'python manage.py migrate'", "/bin/zsh -lc 'python3 manage.py migrate'", missing)
    assert [(r["command"], r["fix"]) for r in learnings(home, a)] == [("python manage.py migrate",
                                                                      "python3 manage.py migrate")]
    text = context_of(Agent(home, a).fail("bash -lc 'python manage.py runserver'", missing, 127))
    assert text.splitlines()[0].endswith("`python3 manage.py runserver` instead of `python manage.py runserver`.")


def test_getopts_complaint_names_the_program_that_refused_the_option():
    assert error_signature("grep: invalid option -- P\nusage: grep [-abc]", "cat f | grep -P x", "Bash") == (
        "grep: unknown option -p")



def test_an_option_the_program_refuses_answers_its_next_use_with_the_pair_that_worked(home, proj):
    """macOS's grep has no `-P`: `grep -oE …` worked. The next `grep -P` cannot be rewritten (a
    PCRE pattern is not an ERE one) but meets the same refusal: the pair that worked is shown
    as it was, for the agent to follow; another option refused is another failure."""
    a = proj("ops")
    refused = "grep: invalid option -- {0}\nusage: grep [-abcdDEFGHhIiJLlMmnOopqRSsUVvwXxZz] [-A num]"
    _teach(home, a, "grep -oP '(?<=version: )\\S+' chart.yaml", "grep -oE 'version: [^ ]+' chart.yaml",
           refused.format("P"))
    text = context_of(Agent(home, a).fail("grep -P '\\d{3}' log.txt", refused.format("P"), 2))
    assert text.splitlines()[0].endswith(
        "`grep -oE 'version: [^ ]+' chart.yaml` instead of `grep -oP '(?<=version: )\\S+' chart.yaml`.")
    assert Agent(home, a).fail("grep -z x log.txt", refused.format("z"), 2) is None


def test_a_file_one_letter_off_is_a_slip_only_where_the_error_found_nothing(home, proj):
    """`tests/test_a.py` failed an assertion, `tests/test_b.py` passed: another file, not a
    typo corrected (one letter apart). After "file or directory not found" it is the slip."""
    assert not is_lesson("pytest tests/test_a.py", "pytest tests/test_b.py",
                         "FAILED tests/test_a.py::test_x - assert 1")
    assert is_lesson("pytest tests/tset_api.py", "pytest tests/test_api.py",
                     "ERROR: file or directory not found: tests/tset_api.py")


def test_a_push_the_error_asks_for_is_a_step_to_run_first(home, proj):
    """`gh pr create`: "you must first push the current branch to a remote"; `git push -u
    origin HEAD`, then the same command worked. A git push is bookkeeping for any other
    program, except where the error asks for it."""
    a = proj("site")
    error = "aborted: you must first push the current branch to a remote, or use the --head flag"
    s = Agent(home, a)
    s.fail("gh pr create --fill", error, 1)
    s.ok("git push -u origin HEAD")
    s.ok("gh pr create --fill")
    text = context_of(Agent(home, a).fail("gh pr create --title 'Fix nav' --body x", error, 1))
    assert "run `git push -u origin HEAD` first" in text



def test_a_rewrite_keeps_the_rest_of_the_line_as_the_shell_reads_it():
    """A change applied to one segment leaves the others, their operators and the
    redirections as they were (`2>&1` is not an argument to quote); a bare `>` stays quoted,
    since it may have been a quoted `'>'`."""
    from learn_cli.capture.lesson import apply_option_change, apply_replaced_target

    assert apply_replaced_target("cd api && uvicorn main:app 2>&1 | tail -5", "uvicorn", "main:app",
                                 "app.main:app") == "cd api && uvicorn app.main:app 2>&1 | tail -5"
    assert apply_option_change("git stash && git pull origin dev 2>/dev/null", ["--rebase"], [], "pull",
                               ("git", "pull")) == "git stash && git pull --rebase origin dev 2>/dev/null"
    assert apply_option_change("grep '>' notes.md", ["-n"], [], "grep", ("grep",)) == "grep -n '>' notes.md"


def test_an_option_given_another_value_keeps_its_place_and_spelling(home, proj):
    """`--command='… FROM services;'` failed ("no such table"), `--command='… FROM tasks;'`
    worked (round 14): the answer is the command as the agent writes it, the option where it
    stood and its value quoted alone, not `--quiet '--command=…'`."""
    from learn_cli.capture.lesson import apply_option_change
    from learn_cli.text.shell import shell_word

    assert shell_word("--command=ls -la") == "--command='ls -la'"
    assert shell_word("-o=a b") == "-o='a b'" and shell_word("a=b c") == "'a=b c'"
    assert apply_option_change("gcloud compute ssh vm --zone=a --quiet", ["--zone=b"], ["--zone=a"], "",
                               ("gcloud", "compute")) == "gcloud compute ssh vm --zone=b --quiet"
    failed = "gcloud compute ssh vm --zone=us-east1-b --command='sqlite3 /srv/r.db \"SELECT 1 FROM services;\"' --quiet"
    fix = failed.replace("services;", "tasks;")
    text = _answer_in_a_third(home, proj, failed, fix, "Error: in prepare, no such table: services (1)")
    assert f"`{fix}` instead of" in text, text


def test_a_rewrite_keeps_each_word_as_the_agent_spelled_it(home, proj):
    """macOS sed wants a suffix after `-i`: `sed -i '' …` worked. The next `sed -i` gets the
    same change with its own words as written: `"$OLD"` still expands and `*.md` still globs
    (quoted by the rewrite, both would become literals and the command would do nothing)."""
    a = proj("docs")
    s = Agent(home, a)
    s.fail("sed -i 's/foo/bar/g' src/app.js", 'sed: 1: "src/app.js": invalid command code s', 1)
    s.ok("sed -i '' 's/foo/bar/g' src/app.js")
    again = 'sed -i "s/$OLD/new/" *.md'  # the error names the file the glob expanded to
    text = context_of(Agent(home, a).fail(again, 'sed: 1: "README.md": invalid command code R', 1))
    assert text.splitlines()[0].endswith(f"""`sed -i '' "s/$OLD/new/" *.md` instead of `{again}`.""")


_WORDS = st.text(alphabet=st.sampled_from(list("ab -'\"|&;>2\nx=:/.")), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_WORDS, _WORDS, _WORDS)
def test_the_changes_read_from_commands_never_raise(failed, fix, error):
    """Whatever the text, the lesson's readers and the rewrites answer (a hook must not stop
    on a command it cannot parse)."""
    from learn_cli.capture.lesson import (
        apply_option_change,
        apply_replaced_target,
        changed_segment,
        edit_did_it,
        replaced_target,
        run_first,
        suggested_again,
    )

    changed_segment(failed, fix)
    edit_did_it(failed, fix, error)
    replaced_target(failed, fix, error)
    run_first(failed, fix)
    assert isinstance(suggested_again(error, fix), str)
    apply_replaced_target(failed, "a", "b", "x")
    apply_option_change(failed, ["-x"], ["-a"], "a", ("a", "-a"))
    assert isinstance(is_lesson(failed, fix, error), bool)


_SHELL_WORDS = st.lists(st.sampled_from([
    "./x.sh", "bash", "test/x.sh", "/w/p/x.sh", "|", "tail", "-5", "grep", "-E", "'a b'", "&&", "cd", "..", "-lc",
    "No such file or directory", "command not found:", "x.sh:", "'flask'", "<stdio.h>", "usage:", "\n", "--json",
    "a,b", "=", "error:", "2>&1", "'", '"', "`", "-", "--",
]), max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_SHELL_WORDS, _SHELL_WORDS, _SHELL_WORDS)
def test_this_sessions_readers_never_raise(failed, then, text):
    """A hidden failure read from an output, a path rewritten, progress, options dropped, a
    shell's inner command: whatever the text, an answer and no exception (hook path)."""
    from learn_cli.capture.learner import _moved_past, _same_program_or_file
    from learn_cli.capture.lesson import repathed
    from learn_cli.capture.pairing import is_retry
    from learn_cli.text.failure import failed_behind_a_pipe
    from learn_cli.text.shell import inner_command

    assert isinstance(failed_behind_a_pipe(failed, text), str)
    assert repathed(failed, then, text) is None or isinstance(repathed(failed, then, text), list)
    assert isinstance(_moved_past(text, then), bool)
    assert isinstance(_same_program_or_file(failed, then), bool)
    assert isinstance(is_retry(failed, then), bool) and isinstance(same_work(failed, then), bool)
    assert isinstance(inner_command(failed), str)


def test_a_count_bsd_head_refuses_answers_its_next_use(home, proj):
    """macOS's head has no negative counts ("illegal line count -- -1"); `sed '$d' f` worked.
    The refusal is an option's, so the pair answers the next `head -n -1`, on its own file (the
    earlier pair was shown as it was, naming the earlier file)."""
    a = proj("ops")
    error = "head: illegal line count -- -1"
    _teach(home, a, "head -n -1 out.txt", "sed '$d' out.txt", error)
    text = context_of(Agent(home, a).fail("head -n -1 list.csv", error, 1))
    assert "`sed '$d' list.csv` instead of `head -n -1 list.csv`" in text



@pytest.mark.parametrize(("command", "overrides"), [
    ("git push --force origin main", True),
    ("git push -f", True),
    ("git push --force-with-lease=main origin main", True),
    ("git push origin +main", True),
    ("git add -A && git commit --no-verify -m 'feat: x'", True),
    ("git commit -n -m x", True),
    ("HUSKY=0 git commit -m x", True),
    ("git reset --hard origin/main && git pull", True),
    ("git clean -fd", True),
    ("git checkout -- .", True),
    ("git restore src/app.ts", True),
    ("pip install --break-system-packages requests", True),
    ("git push -u origin HEAD", False),
    ("git commit -m 'fix: -n and --force in a message'", False),
    ("git restore --staged src/app.ts", False),
    ("git reset --soft HEAD~1", False),
    ("git checkout main", False),
    ("npm install --force", False),
    ("rm -rf node_modules && npm install", False),
    ("git branch -D feat/old", True),
    ("git branch --delete --force feat/old", True),
    ("git branch -d feat/old", False),
    ("npm audit fix --force", True),
    ("npm audit fix", False),
    ("chmod -R 777 .", True),
    ("chmod 0666 .env", True),
    ("chmod -R a+w storage", True),
    ("chmod o=rwx logs", True),
    ("chmod +x build.sh", False),
    ("chmod 755 bin/run", False),
    ("chmod go-w -R .", False),
    ("chmod 644 123", False),  # (the mode is the first word: 123 is a file)
    ("curl -sSk https://api.internal/health", True),
    ("curl --insecure https://x", True),
    ("curl -sSL https://x", False),
    ("NODE_TLS_REJECT_UNAUTHORIZED=0 node sync.js", True),
    ("git config --global http.sslVerify false", True),
    ("git -c http.sslVerify=false clone https://git.internal/a.git", True),
    ("npm config set strict-ssl false", True),
    ("pip install --trusted-host pypi.org requests", True),
    ("ssh -o StrictHostKeyChecking=no deploy@10.0.0.5 uptime", True),
    ("ssh -o StrictHostKeyChecking=accept-new deploy@10.0.0.5 uptime", False),
    ("docker compose down -v", True),
    ("docker compose down", False),
    ("docker volume prune -f", True),
    ("docker system prune -af", False),
    ("npx prisma migrate reset --force", True),
    ("npx prisma db push --accept-data-loss", True),
    ("npx prisma migrate dev", False),
    ("bin/rails db:reset", True),
    ("python manage.py flush --no-input", True),
    ("python manage.py migrate", False),
    ("make flush", False),
    ("git checkout --theirs . && git add -A", True),
    ("git merge -X theirs main", True),
    ("git merge main", False),
    ("git", False),
    ('pytest tests/ -k "not test_login"', True),
    ("pytest -k login", False),
    ("pytest tests/ --deselect tests/test_api.py::test_login", True),
    ("cargo test -- --skip slow_roundtrip", True),
    ("go test ./... -skip TestLogin", True),
    ("pytest tests/ --lf", True),
    ("pytest tests/ --ff", False),
    ("sudo pip install requests", True),
    ("sudo python3 -m pip install requests", True),
    ("pip install --user requests", False),
    ("sudo apt-get install -y jq", False),
    ("rm -rf .git && git init", True),
    ("rm -rf .github/workflows/old.yml", False),
    ("alembic downgrade base", True),
    ("alembic downgrade -1", False),
    ("php artisan migrate:fresh --seed", True),
    ("npx supabase db reset", True),
    ("mix ecto.reset", True),
    ("docker run --rm --privileged emu:latest", True),
    ("mvn package -DskipTests", True),
    ("mvn install -Dmaven.test.skip=true", True),
    ("./gradlew build -x test", True),
    ("./gradlew build -x javadoc", False),
    ("git commit --no-gpg-sign -m x", True),
    ("git -c commit.gpgsign=false commit -m x", True),
    ("SKIP=flake8 git commit -m x", True),
    ("yarn install --ignore-engines", True),
    ("npm ci --ignore-scripts", False),
    ("cargo build --no-default-features", False),
])
def test_what_overrides_a_safeguard(command, overrides):
    from learn_cli.text.effects import overrides_a_safeguard

    assert overrides_a_safeguard(command) is overrides


_WARNED = [
    ("cargo publish", "cargo publish --allow-dirty",
     "error: 2 files in the working directory contain changes that were not yet committed into git:\n\nsrc/lib.rs\n\n"
     "to proceed despite this and include the uncommitted changes, pass the `--allow-dirty` flag"),
    ("bin/rails db:migrate:status RAILS_ENV=production",
     "DISABLE_DATABASE_ENVIRONMENT_CHECK=1 bin/rails db:migrate:status RAILS_ENV=production",
     "ActiveRecord::ProtectedEnvironmentError: You are attempting to run a destructive action against your "
     "'production' database.\nIf you are sure you want to continue, run the same command with the environment "
     "variable:\nDISABLE_DATABASE_ENVIRONMENT_CHECK=1"),
]


@pytest.mark.parametrize(("failed", "fix", "error"), [
    ("git push origin main", "git push --force origin main",
     " ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to 'github.com:o/r.git'"),
    ("git commit -m 'feat: x'", "git commit --no-verify -m 'feat: x'",
     "husky - pre-commit hook exited with code 1 (error)\n✖ eslint --fix found some errors."),
    ("git branch -d feat/old", "git branch -D feat/old",
     "error: The branch 'feat/old' is not fully merged.\nIf you are sure you want to delete it, run 'git branch -D "
     "feat/old'."),
    ("npm audit fix", "npm audit fix --force",
     "fix available via `npm audit fix --force`\nWill install next@14.2.3, which is a breaking change"),
    ("pytest tests/", 'pytest tests/ -k "not test_login"',
     "FAILED tests/test_api.py::test_login - AssertionError: assert 401 == 200\n1 failed, 40 passed in 2.84s"),
    ("curl -sS https://api.internal/health", "curl -sSk https://api.internal/health",
     "curl: (60) SSL certificate problem: unable to get local issuer certificate"),
    *_WARNED,
    ("git worktree remove ../wt-feature", "git worktree remove --force ../wt-feature",
     "fatal: '../wt-feature' contains modified or untracked files, use --force to delete it"),
    ("brew uninstall openssl@3", "brew uninstall --ignore-dependencies openssl@3",
     "Error: Refusing to uninstall /usr/local/Cellar/openssl@3/3.2.1\nbecause it is required by curl.\n"
     "You can override this and force removal with:\n  brew uninstall --ignore-dependencies openssl@3"),
])
def test_a_fix_that_overrode_a_safeguard_is_never_handed_on(home, proj, failed, fix, error):
    """It worked: a force push over the remote's new commits, a commit past the hook that
    failed. Whoever did it decided so for that once; offered to the next agent, it would
    overwrite a colleague's work or commit what the checks reject. Resolved, no lesson."""
    a = proj("app")
    s = Agent(home, a)
    s.fail(failed, error, 1)
    s.ok(fix)
    assert not [r for r in learnings(home, a) if r.get("fix")]
    assert Agent(home, a).fail(failed, error, 1) is None


def test_a_step_naming_the_refused_script_names_the_next_one(home, proj):
    """`./build.sh`: permission denied; `chmod +x build.sh`, then it ran. Every script run by
    its path meets that error alike (one key); for `./scripts/deploy.sh` the step is its own
    `chmod +x`, not build.sh's again."""
    a = proj("ops")
    s = Agent(home, a)
    s.fail("./build.sh", "bash: ./build.sh: Permission denied", 126)
    s.ok("chmod +x build.sh")
    s.ok("./build.sh")
    refused = "bash: ./scripts/deploy.sh: Permission denied"
    text = context_of(Agent(home, a).fail("./scripts/deploy.sh prod", refused, 126))
    assert text.splitlines()[0].endswith(
        "run `chmod +x scripts/deploy.sh` first, then retry `./scripts/deploy.sh prod`.")
    text = context_of(Agent(home, a).fail("./build.sh --release", "bash: ./build.sh: Permission denied", 126))
    assert "run `chmod +x build.sh` first" in text


def test_a_setup_step_that_read_a_missing_file_is_the_step_that_failed(home, proj):
    """`source venv/bin/activate && pytest`: no such file; the venv was `.venv`. The `source`
    failed, whatever ran after it (one key for `… && python app.py` too), and its argument,
    replaced, is the lesson for the next command that sources it."""
    from learn_cli.capture.lesson import replaced_target

    missing = "bash: venv/bin/activate: No such file or directory"
    assert replaced_target("source venv/bin/activate && pytest", "source .venv/bin/activate && pytest",
                           missing) == ("source", "venv/bin/activate", ".venv/bin/activate", "source")
    assert error_key(missing, "source venv/bin/activate && pytest") == error_key(missing, ". venv/bin/activate; make")
    assert error_key(missing, "source venv/bin/activate && pytest") != error_key(missing, "cat venv/bin/activate")
    a = proj("api")
    s = Agent(home, a)
    s.fail("source venv/bin/activate && pytest", missing, 1)
    s.ok("source .venv/bin/activate && pytest")
    text = context_of(Agent(home, a).fail("source venv/bin/activate && python app.py", missing, 1))
    assert text.splitlines()[0].endswith(
        "`source .venv/bin/activate && python app.py` instead of `source venv/bin/activate && python app.py`.")


@pytest.mark.parametrize(("failed", "fix", "error", "again", "answer"), [
    # `JAVA_HOME=$(/usr/libexec/java_home -v 17)` sets a variable from a command's output: split
    # at its spaces, `-v` was taken for the program and the retry for another job. A prefix change.
    ("./gradlew test", "JAVA_HOME=$(/usr/libexec/java_home -v 17) ./gradlew test",
     "BUG! exception in phase 'semantic analysis' in source unit '_BuildScript_' Unsupported class file major "
     "version 65",
     "./gradlew build -x test", "JAVA_HOME=$(/usr/libexec/java_home -v 17) ./gradlew build -x test"),
    # cargo: "does not have the feature": one letter off after an error that says the name is
    # unknown is a slip corrected, for the next cargo command naming it
    ("cargo test --features c-fallbak", "cargo test --features c-fallback",
     "error: Package `zopfli v0.1.0 (/w)` does not have the feature `c-fallbak`",
     "cargo build --release --features c-fallbak", "cargo build --release --features c-fallback"),
])
def test_a_change_read_through_the_lines_shell_words(home, proj, failed, fix, error, again, answer):
    assert _first_answer(home, proj("app"), failed, fix, error, again).endswith(f"`{answer}` instead of `{again}`.")


def test_steps_run_first_then_a_changed_command_travel_together(home, proj):
    """`pip install -e .`: the package needs Python 3.11; `uv venv --python 3.11`, then `uv pip
    install -e .` worked. The lesson is both, the step and the program change, for the next
    install that fails so (`pip install -e '.[dev]'`), not the first one's words again."""
    from learn_cli.capture.offers import _change_of_lesson

    error = "ERROR: Package 'app' requires a different Python: 3.10.12 not in '>=3.11'"
    assert _change_of_lesson("pip install -e .", "uv venv --python 3.11 && uv pip install -e .", error) == (
        "then", ("uv venv --python 3.11",), ("program", ("pip",), ("uv", "pip")))
    s = Agent(home, proj("app"))
    s.fail("pip install -e .", error, 1)
    s.ok("uv venv --python 3.11")
    s.ok("uv pip install -e .")
    text = context_of(Agent(home, proj("app")).fail("pip install -e '.[dev]'", error, 1))
    assert text.splitlines()[0].endswith(
        "`uv venv --python 3.11 && uv pip install -e '.[dev]'` instead of `pip install -e '.[dev]'`.")


@pytest.mark.parametrize(("failed", "fix", "error", "needs"), [
    ("pip install flask", ".venv/bin/pip install flask", "error: externally-managed-environment", ".venv/bin/pip"),
    ("npm test", "cd frontend && npm test", 'npm ERR! Missing script: "test"', "frontend/package.json"),
    ("pip install -r requirements.txt", "pip install -r backend/requirements.txt",
     "ERROR: Could not open requirements file: [Errno 2] No such file or directory: 'requirements.txt'",
     "backend/requirements.txt"),
])
def test_a_fix_from_other_projects_needs_its_paths_here(home, proj, failed, fix, error, needs):
    """Learned in two projects that have a `.venv`, a `frontend` folder, a `backend/…` file:
    a third project without it gets no fix that runs it, goes there or names it (it could
    only fail: `cd …/frontend: no such file`); one that has it gets the fix."""
    for name in ("api", "cli"):
        project = proj(name)
        (project / needs).parent.mkdir(parents=True, exist_ok=True)
        (project / needs).write_text("")
        _each_session(home, project, [(failed, fix)], error, 1)
    assert Agent(home, proj("web")).fail(failed, error, 1) is None
    other = proj("docs")
    (other / needs).parent.mkdir(parents=True, exist_ok=True)
    (other / needs).write_text("")
    assert Agent(home, other).fail(failed, error, 1) is not None


@pytest.mark.parametrize(("failed", "step", "error", "again", "again_error"), [
    # make could not run the compiler: a program not installed, whatever the target (`g++` is
    # no word, and the signature was taken for a generic one: one sighting was not enough)
    ("make", "sudo apt-get install -y build-essential",
     "make: g++: No such file or directory\nmake: *** [Makefile:12: build/main.o] Error 127",
     "make test", "make: g++: No such file or directory\nmake: *** [Makefile:30: build/test.o] Error 127"),
    # `gh auth setup-git` changes where git's credentials come from: a step, not a look
    ("git push", "gh auth setup-git",
     "remote: Permission to acme/web.git denied to octocat.\nfatal: unable to access "
     "'https://github.com/acme/web.git/': The requested URL returned error: 403",
     "git push -u origin feat/login", None),
])
def test_a_step_run_first_answers_the_next_command_failing_so(home, proj, failed, step, error, again, again_error):
    text = _after_a_step(home, proj("app"), failed, step, error, again, again_error, 2)
    assert text.splitlines()[0].endswith(f"run `{step}` first, then retry `{again}`.")


def test_options_added_go_before_the_scripts_own_words():
    """`npm run dev --workspace=web` worked: for `npm run dev -- --port 3001` the option goes
    before `--` (after it, npm hands it to the script, which knows no workspace)."""
    from learn_cli.capture.lesson import apply_option_change

    assert apply_option_change("npm run dev -- --port 3001", ["--workspace=web"], [], "", ("npm", "run")) == (
        "npm run dev --workspace=web -- --port 3001")


def test_a_step_naming_the_errors_subject_names_this_errors_subject(home, proj):
    """The container name "/db" was in use: `docker rm -f db`, then the run worked. The next
    conflict is over "/cache" (the same key: the name is masked). Offering `docker rm -f db`
    would remove a container that has nothing to do with it; the step names `cache`."""
    from learn_cli.capture.lesson import step_for_error

    conflict = ('Error response from daemon: Conflict. The container name "/{0}" is already in use by container '
                '"{1}". You have to remove (or rename) that container to be able to reuse that name.')
    was = conflict.format("db", "3f1c2a9be0d4c1f5a8e7b6d5c4b3a291")
    now = conflict.format("cache", "9ab77e0d4c1f5a8e7b6d5c4b3a29180f")
    assert step_for_error("docker rm -f db", was, now) == "docker rm -f cache"
    assert step_for_error("docker compose down", was, now) == "docker compose down"  # names no subject
    assert step_for_error("docker rm -f db", was, "Error: the container db-old is gone") is None  # no line-up
    text = _after_a_step(home, proj("svc"), "docker run --name db -d postgres", "docker rm -f db", was,
                         "docker run --name cache -d redis", now, 125)
    assert "run `docker rm -f cache` first" in text and "rm -f db" not in text


def test_an_option_the_error_quotes_dropped_is_a_retry(home, proj):
    """yarn: "Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`";
    `yarn install` worked. Dropping the option is no edit the distance rules see (the command
    got shorter by half); the error quoting it says it was the problem."""
    error = "error Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`."
    again = "yarn install --frozen-lockfile --prefer-offline"
    answer = _first_answer(home, proj("web"), "yarn install --frozen-lockfile", "yarn install", error, again)
    assert answer.endswith(f"`yarn install --prefer-offline` instead of `{again}`.")


def test_a_verb_joined_to_its_object_changes_state(home, proj):
    """`aws eks update-kubeconfig --name prod` before kubectl worked: a step to run first (it
    was taken for a look, `update-kubeconfig` being no verb of the list)."""
    from learn_cli.text.effects import is_mutating

    assert is_mutating("kubectl config use-context prod") and not is_mutating("kubectl get pods")
    unauthorized = "error: You must be logged in to the server (Unauthorized)"
    text = _after_a_step(home, proj("ops"), "kubectl apply -f k8s/", "aws eks update-kubeconfig --name prod",
                         unauthorized, "kubectl rollout status deploy/api")
    assert "run `aws eks update-kubeconfig --name prod` first" in text


def test_a_port_in_use_is_one_failure_and_its_step_frees_this_port():
    """EADDRINUSE on :::3000 and on :::8080 is one failure (the port is masked, like docker's
    "port is already allocated"); `kill $(lsof -ti:3000)` is offered as this port's."""
    from learn_cli.capture.lesson import step_for_error

    in_use = "Error: listen EADDRINUSE: address already in use :::{0}\n    at Server.setupListenHandle (node:net:1817)"
    assert error_key(in_use.format(3000), "npm run dev") == error_key(in_use.format(8080), "npm run dev")
    allocated = "Error response from daemon: Bind for 0.0.0.0:{0} failed: port is already allocated"
    up = "docker compose up"
    assert error_key(allocated.format(5432), up) == error_key(allocated.format(5433), up)
    kill = "kill $(lsof -ti:{0})"
    assert step_for_error(kill.format(3000), in_use.format(3000), in_use.format(8080)) == kill.format(8080)
    # whichever host it could not listen on: node's IPv6 `:::3000`, `127.0.0.1:8080`, `[::1]:80`
    on_host = "Error: listen EADDRINUSE: address already in use {0}\n    at Server.setupListenHandle (node:net:1817)"
    node = "node server.js"
    assert error_key(on_host.format("127.0.0.1:8080"), node) == error_key(in_use.format(3000), node)
    assert error_key(on_host.format("[::1]:80"), node) == error_key(in_use.format(3000), node)
    assert step_for_error(kill.format(3000), in_use.format(3000), on_host.format("127.0.0.1:8080")) == kill.format(8080)


def test_a_step_that_opened_files_to_everyone_is_never_handed_on(home, proj):
    """`./deploy.sh` was refused; `chmod -R 777 .` made it run. It also made every file of
    the project writable by anyone on the machine: not a step to offer for the next script."""
    a = proj("ops")
    s = Agent(home, a)
    s.fail("./deploy.sh", "bash: ./deploy.sh: Permission denied", 126)
    s.ok("chmod -R 777 .")
    s.ok("./deploy.sh")
    assert not [r for r in learnings(home, a) if r.get("fix")]
    assert Agent(home, a).fail("./build.sh", "bash: ./build.sh: Permission denied", 126) is None


def test_a_process_killed_by_its_number_is_no_lesson(home, proj):
    """The port was taken; `lsof -ti:3000` said 48213, `kill -9 48213` freed it. Next time
    48213 is another process or none: `kill -9 48213` must never be offered; nor `docker stop
    3f2a9c1b7d4e`, a container `docker ps` showed (an id the error names is read for the next
    error's: test_a_step_naming_the_errors_subject_names_this_errors_subject)."""
    from learn_cli.text.effects import ids_of_the_moment

    assert ids_of_the_moment("kill -9 48213") == ("48213",) and ids_of_the_moment("taskkill /PID 4120 /F") == ("4120",)
    assert ids_of_the_moment("docker stop 3f2a9c1b7d4e") == ("3f2a9c1b7d4e",)
    assert not ids_of_the_moment("kill $(lsof -ti:3000)") and not ids_of_the_moment("kill %1")
    assert not ids_of_the_moment("docker rm -f db") and not ids_of_the_moment("make build")
    in_use = "Error: listen EADDRINUSE: address already in use :::3000"
    a = proj("web")
    s = Agent(home, a)
    s.fail("npm run dev", in_use, 1)
    s.ok("lsof -ti:3000", "48213")
    s.ok("kill -9 48213")
    s.ok("npm run dev")
    allocated = "Error response from daemon: Bind for 0.0.0.0:8080 failed: port is already allocated"
    s.fail("docker compose up -d", allocated, 1)
    s.ok("docker ps", "3f2a9c1b7d4e  nginx  0.0.0.0:8080->80/tcp")
    s.ok("docker stop 3f2a9c1b7d4e")
    s.ok("docker compose up -d")
    assert not [r for r in learnings(home, a) if r.get("fix")]
    assert Agent(home, a).fail("npm run dev", in_use, 1) is None
    assert Agent(home, a).fail("docker compose up -d", allocated, 1) is None


def test_a_job_run_with_the_work_stashed_is_a_look_not_a_fix(home, proj):
    """`git stash && pytest …; git stash pop` asks whether the test failed before the agent's
    changes; it fixes nothing (the changes are back). `git stash && git pull && git stash pop`
    made room for a git step: that one is a fix."""
    from learn_cli.capture.pairing import is_diagnostic, is_retry

    failed = "pytest tests/test_api.py"
    assert is_diagnostic(failed, "git stash && pytest tests/test_api.py; git stash pop")
    assert not is_retry(failed, "git stash && pytest tests/test_api.py; git stash pop")
    assert not is_diagnostic("git pull", "git stash && git pull && git stash pop")
    error = "FAILED tests/test_api.py::test_login - AssertionError: assert 401 == 200\n1 failed, 12 passed in 0.84s"
    a = proj("api")
    s = Agent(home, a)
    s.fail(failed, error, 1)
    s.ok("git stash && pytest tests/test_api.py; git stash pop")
    assert not [r for r in learnings(home, a) if r.get("fix")]


def test_a_build_run_with_the_work_stashed_and_popped_next_is_a_look_not_a_fix(home, proj):
    """sflicker/claudec99: the build failed on -Werror=switch; `git stash && cmake --build build
    2>&1 | head -5` asked whether it failed before the agent's edits, and `git stash pop` came as
    the next command. Learned, the lesson would be "git stash, then build": the work thrown
    away. A stash left in place before a job that is not git's is never the fix."""
    from learn_cli.capture.pairing import is_diagnostic, is_retry

    failed = "cmake -S . -B build 2>&1 | tail -5 && cmake --build build 2>&1"
    looked = "git stash && cmake --build build 2>&1 | head -5"
    assert is_diagnostic(failed, looked) and not is_retry(failed, looked)
    assert not is_diagnostic("git checkout main", "git stash && git checkout main")
    assert not is_diagnostic("git checkout main", "git stash && git checkout main && npm install")  # not the job
    error = ("[  9%] Building C object CMakeFiles/ccompiler.dir/src/compiler.c.o\n"
             "src/compiler.c:22:5: error: enumeration value 'TOKEN_BOOL' not handled in switch [-Werror=switch]")
    a = proj("c99")
    s = Agent(home, a)
    s.fail(failed, error, 2)
    s.ok(looked)
    s.ok("git stash pop 2>&1")
    assert not [r for r in learnings(home, a) if r.get("fix")]


@pytest.mark.parametrize(("failed", "error", "fix", "again", "again_error", "offered"), [
    ("mkdir build && cd build && cmake ..", "mkdir: cannot create directory ‘build’: File exists",
     "mkdir -p build && cd build && cmake ..", "mkdir dist", "mkdir: cannot create directory ‘dist’: File exists",
     "mkdir -p dist"),
    ("cp assets dist/", "cp: -r not specified; omitting directory 'assets'", "cp -r assets dist/",
     "cp config build/", "cp: -r not specified; omitting directory 'config'", "cp -r config build/"),
    ("ln -s releases/v2 current", "ln: failed to create symbolic link 'current': File exists",
     "ln -sfn releases/v2 current", "ln -s /opt/node/bin/node bin/node",
     "ln: failed to create symbolic link 'bin/node': File exists", "ln -sfn /opt/node/bin/node bin/node"),
])
def test_a_file_programs_bare_word_is_a_path_the_error_is_about(home, proj, failed, error, fix, again, again_error,
                                                                offered):
    """`mkdir dist` names a folder as surely as `mkdir dist/`: "cannot create directory 'dist':
    File exists" is the failure of `mkdir build` too, and its option (`-p`, `-r`, `-sfn`)
    travels. (A bare word of another program stays in the key: `git checkout main`'s
    "pathspec 'main'" is not `feat/x`'s.)"""
    assert error_key(error, failed) == error_key(again_error, again)
    main = "error: pathspec 'main' did not match any file(s) known to git"
    assert error_key(main, "git checkout main") != error_key(main.replace("main", "dev"), "git checkout dev")
    a = proj("app")
    s = Agent(home, a)
    s.fail(failed, error, 1)
    s.ok(fix)
    text = context_of(Agent(home, a).fail(again, again_error, 1))
    assert text.splitlines()[0].endswith(f"`{offered}` instead of `{again}`.")


def test_an_option_dropped_from_every_step_is_one_change_that_travels(home, proj):
    """sflicker/claudec99 (stages 17 to 82): `cmake -S . -B build -q && cmake --build build -q`
    failed ("Unknown argument -q"); the same without `-q` in both steps worked. Later `cmake
    --build build -q && ./test/run_all_tests.sh` failed so: the lesson is "drop `-q`", offered
    as that command without it, not as the configure-and-build pair it was learned from."""
    from learn_cli.capture.lesson import option_change

    assert option_change("cmake -S . -B build -q && cmake --build build -q",
                         "cmake -S . -B build && cmake --build build") == ([], ["-q"])
    assert option_change("git pull a && git push", "git pull --rebase a && git push --force") is None
    a = proj("c99")
    s = Agent(home, a)
    s.fail("cmake -S . -B build -q && cmake --build build -q",
           "CMake Error: Unknown argument -q\nCMake Error: Run 'cmake --help' for all supported options.", 1)
    s.ok("cmake -S . -B build && cmake --build build")
    again = "cmake --build build -q && ./test/run_all_tests.sh 2>&1 | tail -20"
    text = context_of(Agent(home, a).fail(again, "Unknown argument -q\nUsage: cmake --build <dir> [options]", 1))
    assert text.splitlines()[0].endswith(f"`cmake --build build && ./test/run_all_tests.sh` instead of `{again}`.")
    assert "drop `-q`" in text
    # the same chain again, its own flags and plumbing aside: the chain as it worked
    same = "cmake -S . -B build -q && cmake --build build -j8 2>&1 | tail -5"
    text = context_of(Agent(home, a).fail(same, "CMake Error: Unknown argument -q", 1))
    assert "`cmake -S . -B build && cmake --build build` instead of" in text.splitlines()[0]


@pytest.mark.parametrize(("command", "error"), [
    ("black --check .", "would reformat /w/src/{0}.py\n\nOh no! 💥 💔 💥\n1 file would be reformatted."),
    ("npx prettier --check .", "Checking formatting...\n[warn] src/{0}.ts\n[warn] Code style issues found in the "
                               "above file. Run Prettier with --write to fix."),
    ("cargo fmt --check", "Diff in /w/src/{0}.rs at line 3:\n fn main() {{\n-    x ;\n+    x;\n }}"),
    ("isort --check-only .", "ERROR: /w/src/{0}.py Imports are incorrectly sorted and/or formatted."),
])
def test_a_formatters_check_is_one_failure_whatever_the_files(command, error):
    """A formatter run as a check fails for one reason: files are not formatted as it would.
    Which files and which lines is not the failure; the key is the same for any."""
    assert error_key(error.format("app"), command) == error_key(error.format("models"), command)
    assert error_signature(error.format("app"), command).endswith("files not formatted")


def test_the_formatter_run_before_its_check_is_offered_for_the_next_check(home, proj):
    """`cargo fmt --check` showed a diff in main.rs; `cargo fmt`, then the check passed. The
    next check shows another file's diff: `cargo fmt` first."""
    diff = "Diff in /w/src/{0} at line {1}:\n fn main() {{\n-    x ;\n+    x;\n }}"
    text = _after_a_step(home, proj("rs"), "cargo fmt --check", "cargo fmt", diff.format("main.rs", 3),
                         "cargo fmt --check", diff.format("lib.rs", 40))
    assert "run `cargo fmt` first" in text


def test_writing_what_a_check_found_is_a_fix_not_the_check_dropped(home, proj):
    """`prettier --check .` failed; `prettier --write .` worked. Dropping a check flag is
    usually the same job without the look (`tsc` after `tsc --noEmit`), but `--write`
    changed the files: that is the lesson."""
    from learn_cli.capture.pairing import only_looked

    assert only_looked("RUST_BACKTRACE=1 cargo test", "cargo test")
    assert not only_looked("npx prettier --check .", "npx prettier --write .")
    warn = "[warn] src/{0}.ts\n[warn] Code style issues found in the above file. Run Prettier with --write to fix."
    a = proj("web")
    s = Agent(home, a)
    s.fail("npx prettier --check .", warn.format("app"), 1)
    s.ok("npx prettier --write .")
    text = context_of(Agent(home, a).fail("npx prettier --check src", warn.format("util"), 1))
    assert text.splitlines()[0].endswith("`npx prettier --write src` instead of `npx prettier --check src`.")


def test_options_added_past_dash_dash_join_the_commands_own(home, proj):
    """vitest waited for file changes until the timeout; `npm test -- --run` worked. For
    `npm test -- src/b.test.ts` the option joins the words already past `--`."""
    from learn_cli.capture.lesson import apply_option_change

    assert apply_option_change("npm test -- src/b.test.ts", ["--", "--run"], [], "", ("npm", "test")) == (
        "npm test -- --run src/b.test.ts")
    assert apply_option_change("npm test", ["--", "--run"], [], "", ("npm", "test")) == "npm test -- --run"
    assert apply_option_change("npm test -- --run", ["--", "--run"], [], "", ("npm", "test")) is None


def test_a_rebase_continue_that_failed_is_retried_after_the_files_are_added(home, proj):
    """`--continue` is backing out of a failed pull or merge, never its retry; but when
    `git rebase --continue` itself failed ("needs merge"), running it again once `git add`
    marked the file resolved is its retry, and the `git add` the step."""
    from learn_cli.capture.pairing import is_retry

    assert is_retry("git rebase --continue", "git rebase --continue")
    assert not is_retry("git pull --rebase", "git rebase --continue")
    needs_merge = ("src/app.py: needs merge\nYou must edit all merge conflicts and then\n"
                   "mark them as resolved using git add")
    text = _after_a_step(home, proj("app"), "git rebase --continue", "git add src/app.py", needs_merge,
                         "git rebase --continue")
    assert "run `git add src/app.py` first" in text


def test_a_replaced_path_the_error_quotes_as_missing_is_a_retry(home, proj):
    """`npx tsc -p tsconfig.build.json`: "The specified path does not exist:
    'tsconfig.build.json'"; `npx tsc -p tsconfig.json` worked. Another path is otherwise
    another job; the one the error says is missing, replaced, is the fix, and it travels."""
    missing = "error TS5058: The specified path does not exist: 'tsconfig.build.json'."
    answer = _first_answer(home, proj("web"), "npx tsc -p tsconfig.build.json", "npx tsc -p tsconfig.json", missing,
                           "npx tsc -p tsconfig.build.json --noEmit")
    assert answer.endswith("`npx tsc -p tsconfig.json --noEmit` instead of `npx tsc -p tsconfig.build.json --noEmit`.")


def test_a_branch_that_does_not_match_is_replaced_in_the_next_push(home, proj):
    """"src refspec main does not match any": the repository's branch is `master`. "does not
    match" says the ref is missing, as "did not match" does."""
    refspec = "error: src refspec main does not match any\nerror: failed to push some refs to 'github.com:a/b.git'"
    answer = _first_answer(home, proj("app"), "git push -u origin main", "git push -u origin master", refspec,
                           "git push origin main")
    assert answer.endswith("`git push origin master` instead of `git push origin main`.")


def test_a_missing_built_file_is_one_failure_for_every_command_that_runs_it():
    """node's "Cannot find module '/w/dist/index.js'" names a file by its path, no package: the
    folder's build is missing, for `npm start`, `node dist/index.js` and `node dist/cli.js`
    alike. A package (`express`) stays the subject, and another folder another failure."""
    missing = "Error: Cannot find module '{0}'\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1077)"
    dist = error_key(missing.format("/w/dist/index.js"), "node dist/index.js")
    assert dist == error_key(missing.format("/w/dist/cli.js"), "node dist/cli.js --help")
    assert dist == error_key(missing.format("/w/dist/index.js"), "npm run start")
    assert dist != error_key(missing.format("/w/scripts/seed.js"), "node scripts/seed.js")
    assert error_key(missing.format("express"), "node app.js") != error_key(missing.format("react"), "node app.js")


def test_a_rewrite_after_an_error_that_names_nothing_needs_the_evidence(home, proj):
    """`npm run build` failed with only "Exit code 1"; `npm run build -- --no-lint` worked.
    For `npm run build -- --prod` the option could be added (past its `--`), but one sighting
    of an error that names nothing is no reason to: it waits for min_evidence. A quoted name
    that was not found is named (yarn's `error Command "test" not found.`)."""
    from learn_cli.text.keys import names_what_is_wrong

    assert names_what_is_wrong('yarn run v1.22.19\nerror Command "test" not found.')
    assert names_what_is_wrong("ERROR: file or directory not found: tests/unit\n\nno tests ran in 0.01s")
    assert not names_what_is_wrong("Exit code 1")
    web = proj("web")
    s = Agent(home, web)
    s.fail("npm run build", "Exit code 1", 1)
    s.ok("npm run build -- --no-lint")
    assert Agent(home, web).fail("npm run build -- --prod", "Exit code 1", 1) is None
    missing = 'yarn run v1.22.19\nerror Command "test" not found.'
    answer = _first_answer(home, proj("lib"), "yarn test", "yarn jest", missing, "yarn test --watch=false")
    assert answer.endswith("`yarn jest --watch=false` instead of `yarn test --watch=false`.")


def test_an_address_is_no_version_of_its_user(home, proj):
    """`git@github.com:acme/x.git` and `…/y.git` are two repositories, not two versions of a
    package `git` (`pkg@2` is): the https clone of x must not be offered for y."""
    from learn_cli.capture.lesson import same_work

    assert not same_work("git clone git@github.com:acme/x.git", "git clone git@github.com:acme/y.git")
    assert same_work("npm install vite@5", "npm install vite@latest")
    publickey = "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository."
    a = proj("app")
    s = Agent(home, a)
    s.fail("git clone git@github.com:acme/x.git", publickey, 128)
    s.ok("git clone https://github.com/acme/x.git")
    out = Agent(home, a).fail("git clone git@github.com:acme/y.git", publickey, 128)
    assert out is None or "acme/x.git" not in context_of(out)


def test_options_added_among_the_kept_ones_go_before_the_image(home, proj):
    """`docker run --rm api:dev` could not reach the host; `docker run --rm --network host
    api:dev` worked. Added after `--rm`, the option is docker's: for `docker run --rm web:1`
    it goes before the image (at the end it would be the container's own argument)."""
    from learn_cli.capture.offers import _change_of_pair, apply_change

    change = _change_of_pair("docker run --rm api:dev", "docker run --rm --network host api:dev")
    assert apply_change(change, "docker run --rm web:1") == "docker run --network host --rm web:1"
    change = _change_of_pair("git pull origin main", "git pull origin main --no-rebase")
    assert apply_change(change, "git pull origin dev") == "git pull origin dev --no-rebase"


def test_a_missing_pipe_program_dropped_is_the_change_not_the_options_beside_it():
    """`head -5 f.jsonl | jq '.'` failed "jq: command not found"; `head -3 f.jsonl` worked (round
    17). The comparisons leave `| jq` out as output shaping, so the change read as "`-5` ->
    `-3`" and answered `head -3 f.jsonl | jq '.'`, jq again. The jq dropped is the change, and
    it travels to any command piped into jq (session 50: sandahltim/RFID3 met it three times,
    each time with another URL). jq replaced by another shaper is no such change: that fix is
    offered as it was run. `timeout` keeps its own change."""
    from learn_cli.capture.offers import _change_of_lesson, apply_change

    jq = "/bin/bash: line 1: jq: command not found"
    assert _change_of_lesson("head -5 f.jsonl | jq '.'", "head -3 f.jsonl", jq) == ("not piped", "jq")
    assert apply_change(("not piped", "jq"), "curl -s 'http://x/api/kpis' | jq .items") == "curl -s 'http://x/api/kpis'"
    assert apply_change(("not piped", "jq"), "curl -s http://x/a | jq . && echo ok") == "curl -s http://x/a && echo ok"
    assert apply_change(("not piped", "jq"), "jq . f.json") is None  # jq run, not piped into
    assert _change_of_lesson("cat a.json | jq .x", "cat a.json | python3 -m json.tool", jq) is None
    assert _change_of_lesson("timeout 60 npm test", "npm test", "zsh:1: command not found: timeout") == ("no timeout",)
    assert _change_of_lesson("head -5 f.jsonl | jq '.'", "head -3 f.jsonl | jq '.'", "jq: error: x") is not None


def test_a_program_named_otherwise_is_part_of_the_change():
    """`python3.11 --version` not found; `py -3.11 --version` (Windows' launcher) worked (round
    16). Both are python to the rules, but the change is the program, not "add `-3.11`" (which
    made `python3.11 --version -3.11`); and `python -m pytest` -> `python3 -m pytest -q` is not
    "add `-q`" alone."""
    from learn_cli.capture.offers import _change_of_pair, apply_change

    change = _change_of_pair("python3.11 --version", "py -3.11 --version")
    assert change == ("program", ("python3.11",), ("py", "-3.11"))
    assert apply_change(change, "python3.11 -m venv .venv") == "py -3.11 -m venv .venv"
    assert _change_of_pair("python -m pytest", "python3 -m pytest -q") is None
    change = _change_of_pair(".venv/bin/python -m pytest", "python -m pytest -x")  # the same name: options
    assert apply_change(change, ".venv/bin/python -m pytest") == ".venv/bin/python -m pytest -x"




@pytest.mark.parametrize(("failed", "fix", "error"), _WARNED)
def test_a_way_past_a_refusal_that_the_tool_warned_against_is_no_lesson(failed, fix, error):
    """The tool refused and handed over a way past it, with a warning ("despite this", "If you
    are sure", "a breaking change"). The agent took it; that was its call for that once. No
    list of options names these: the warning next to the word the fix added does (the hook's
    path: test_a_fix_that_overrode_a_safeguard_is_never_handed_on)."""
    from learn_cli.text.failure import heeds_a_warning, warning_lines

    assert heeds_a_warning(error, fix, failed)
    assert error.splitlines()[-1] in warning_lines(error)  # kept with the failure's lines
    assert not heeds_a_warning("error: could not find `Cargo.toml`", "cd api && cargo publish", "cargo publish")
    # an option that forces by its name, handed over, is one too; a permission asked for is not
    assert heeds_a_warning("fatal: 'x' contains modified files, use --force to delete it", "git worktree remove "
                           "--force x", "git worktree remove x")
    assert not heeds_a_warning('PermissionDenied: Requires net access to "a.io", run again with the --allow-net flag',
                               "deno run --allow-net main.ts", "deno run main.ts")


def test_a_lesson_an_older_learn_made_of_an_override_is_neither_offered_nor_loaded(home, proj, monkeypatch):
    """A store made before a rule holds what the rule would not have learned (`git push
    --force`, learned and promoted twice over). Upgraded, learn passes over it: no answer at
    the next rejection, no line in the session's digest. (The record stays: `learn forget`.)"""
    from learn_cli.engine import digest
    from learn_cli.text import effects

    rejected = " ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to 'github.com:o/r'"
    a = proj("app")
    with monkeypatch.context() as patched:  # the learn of before: no such rule
        patched.setattr(effects, "teaches_nothing", lambda *args: False)
        patched.setattr(digest, "_CACHE_VERSION", digest._CACHE_VERSION - 1)  # its kept digest too
        for _ in range(2):
            s = Agent(home, a)
            s.prompt("ship it")
            s.fail("git push origin main", rejected, 1)
            s.ok("git push --force origin main")
            s.end()
        assert context_of(Agent(home, a).fail("git push origin main", rejected, 1))
        start = Agent(home, a).send(dict(Agent(home, a)._base("SessionStart"), source="startup"))
        assert "--force" in start["hookSpecificOutput"]["additionalContext"]
    assert [r["status"] for r in learnings(home, a) if r.get("fix")] == ["active"]
    assert Agent(home, a).fail("git push origin main", rejected, 1) is None
    start = Agent(home, a).send(dict(Agent(home, a)._base("SessionStart"), source="startup"))
    assert "--force" not in json.dumps(start or {})
    from learn_cli.engine.flush import select_rules

    assert select_rules(learnings(home, a), [], str(a), 2000)[0] == []  # nor written by `learn flush`


@pytest.mark.parametrize(("failed", "looked"), [
    ("pytest tests/test_api.py", "pytest tests/test_api.py --co -q"),
    ("kubectl apply -f k8s/svc.yaml", "kubectl apply -f k8s/svc.yaml --dry-run=client"),
    ("npm test", "npm test -- --listTests"),
    ("npx jest", "npx jest --showConfig"),
])
def test_a_run_that_lists_or_only_checks_is_a_look(failed, looked):
    """Collecting the tests (quietly), a client-side dry run, the list of test files: each
    succeeds where the job failed and fixes nothing. A quiet flag beside a looking aid changes
    nothing either; alone, dropped after the program refused it, it is the lesson (`cmake …
    -q` → without it: a corpus retry)."""
    from learn_cli.capture.pairing import is_diagnostic, only_looked

    assert is_diagnostic(failed, looked)
    assert not only_looked("cmake -S . -B build -q", "cmake -S . -B build")


def test_an_install_of_what_the_error_names_is_a_step_not_the_work_moved_on(home, proj):
    """`pip install -e .` failed "building wheel" ("invalid command 'bdist_wheel'"); `pip
    install wheel`, then `pip install -e .` worked. The install of another package looked like
    the agent moving on (resolved, no lesson, and the real retry then paired with nothing);
    the error names `wheel`: it is the step to run first."""
    no_wheel = "error: invalid command 'bdist_wheel'\n--------\nERROR: Failed building wheel for pyyaml"
    text = _after_a_step(home, proj("py"), "pip install -e .", "pip install wheel", no_wheel,
                         "pip install -r requirements.txt")
    assert "run `pip install wheel` first" in text


# Session 33: rules from failures harvested (and labelled blind) from public transcripts that
# no corpus case or history holds; the tune half of that set, never its held-out half.

def test_a_branch_that_exists_is_checked_out_not_made_again(home, proj):
    """`git checkout -b feat/x origin/feat/x`: "a branch named 'feat/x' already exists", then
    `git checkout feat/x` worked. The start point dropped is the branch by its longer name, no
    target dropped: a lesson (before, the dropped word made it the agent moving on)."""
    exists = "fatal: a branch named 'feat/x' already exists"
    assert is_lesson("git checkout -b feat/x origin/feat/x", "git checkout feat/x", exists)
    assert not is_lesson("git checkout -b feat/x origin/main", "git checkout feat/x", exists)  # not the same name
    answer = _first_answer(home, proj("app"), "git checkout -b feat/x origin/feat/x", "git checkout feat/x", exists,
                           "git checkout -b feat/x origin/feat/x")
    assert answer.endswith("`git checkout feat/x` instead of `git checkout -b feat/x origin/feat/x`.")


def test_an_option_the_usage_shown_does_not_list_was_the_mistake():
    """A program that answers a call it cannot parse with its usage alone: the option the retry
    dropped, absent from that usage, was refused, and its value with it."""
    usage = "Exit code 1\nusage: cc1 [--print-ast | --print-tokens] [-Werror] [-I<dir>] <source.c>"
    assert is_lesson("./build/cc1 -I inc a.c -o /tmp/a.s", "./build/cc1 -I inc a.c", usage)
    assert not is_lesson("./build/cc1 -I inc a.c -o /tmp/a.s", "./build/cc1 -I inc a.c", "Exit code 1\nSegfault")
    assert not is_lesson("./build/cc1 -I inc a.c -I lib", "./build/cc1 -I inc a.c", usage)  # -I is listed


def test_a_look_at_a_missing_folder_then_at_another_is_no_lesson():
    """`ls reports/2025_11` failed (no such folder), `ls reports/2025_09` worked: looking
    elsewhere, not a fix, though the error names the folder as missing (an install of a missing
    package replaced is one: `pip install jose` → `python-jose`). Nor is a number that differs a
    slip of the keyboard; a misspelt folder still is."""
    missing = "ls: cannot access '{}': No such file or directory"
    assert not is_lesson("ls reports/2025_11", "ls reports/2025_09", missing.format("reports/2025_11"))
    from learn_cli.capture.lesson import _typo

    assert not _typo("2025_11", "2025_09") and not _typo("test_2.py", "test_3.py") and _typo("reprots", "reports")
    assert is_lesson("ls reprots/2025_11", "ls reports/2025_11", missing.format("reprots/2025_11"))
    assert is_lesson("pip install jose", "pip install python-jose", "No matching distribution found for jose")


def test_a_retry_an_export_cut_short_keeps_the_words_it_cannot_show():
    """The export cut the retry after `http://localhost:808…`: the failed line's arguments past
    the cut are not dropped, they are not shown. Uncut, an argument dropped is another job."""
    failed = "cd t && pip install -r r.txt && python e2e.py --a http://localhost:8080 --b http://localhost:8081"
    venv = "cd t && python3 -m venv venv && source venv/bin/activate && pip install -r r.txt && python e2e.py --a "
    error = "error: externally-managed-environment"
    assert is_lesson(failed, venv + "http://localhost:808…", error)
    assert not is_lesson(failed, venv + "http://localhost:8080", error)


def test_what_finished_a_merge_conflict_is_no_fix(home, proj):
    """`git stash pop` stopped at "CONFLICT (content): Merge conflict in src/index.ts"; the
    agent edited the file, then `git add src/index.ts && git stash drop` worked. That finished
    the resolution by hand; offered for the next pop it would drop a stash (a second harvest's
    no-retry case, learned before)."""
    conflict = "Auto-merging src/index.ts\nCONFLICT (content): Merge conflict in src/index.ts"
    a = proj("app")
    s = Agent(home, a)
    s.fail('git stash pop && echo "---" && git status --short', conflict, 1)
    s.ok('git add src/index.ts && git stash drop && echo "---" && git status --short')
    assert not [r for r in learnings(home, a) if r.get("fix")]


def test_a_secret_the_fix_adds_is_no_lesson(home, proj):
    """`STRIPE_API_KEY=sk_live_… python3 sync.py` after `python3 sync.py` failed for the key:
    stored, the key is masked and the command cannot run; unmasked it is not ours to hand on.
    Nor `sshpass -p …` in front of `ssh` (now its wrapper). A secret the failed command carried
    too is not the change: the lesson stays."""
    from learn_cli.text.effects import adds_a_secret

    a = proj("app")
    s = Agent(home, a)
    s.fail("python3 sync.py", "KeyError: 'STRIPE_API_KEY'", 1)
    s.ok("STRIPE_API_KEY=sk_live_51HxYzAbCdEfGhIjKlMnOpQr python3 sync.py")
    assert not [r for r in learnings(home, a) if r.get("fix")]
    assert adds_a_secret("ssh -p 4422 u@h", "sshpass -p hunter22 ssh -p 4422 u@h")
    assert adds_a_secret("python3 sync.py", "STRIPE_API_KEY=[REDACTED:stripe-key] python3 sync.py")  # stored
    token = "GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 gh repo edit a/b --visibility public"
    assert not adds_a_secret(token, token + " --accept-visibility-change-consequences")


def test_a_long_answer_shortens_the_failed_command_within_its_quotes(home, proj):
    """The hook's first line was cut at its width, mid-command: "… instead of `cd /w/app &&
    nod" with no closing quote (replayed, such an answer cannot even be read as a fix), and a
    long fix lost its end. Now the failed command gives way, shortened inside its quotes, and
    the fix is whole."""
    folder = "/Users/someone/Dev/projects/themegpt-v2.0/packages/web-frontend"
    failed = f"cd {folder} && rm -rf asset/GIFs/frames/*.png && node scripts/capture-mascot-gif.js --fps 12"
    fix = f"cd {folder} && node scripts/capture-mascot-gif.js --fps 12 --out asset/GIFs/frames"
    no_match = "zsh:1: no matches found: asset/GIFs/frames/*.png"
    answer = _first_answer(home, proj("web"), failed, fix, no_match, failed)
    assert f"`{fix}` instead of `" in answer and answer.endswith("…`.")
    assert answer.count("`") == 4


def test_the_way_a_project_settled_on_keeps_its_options_values():
    """`tsc … --module NodeNext --moduleResolution bundler a.ts` refused the pair, `… --module
    CommonJS a.ts` worked: "this project builds with `tsc … --module CommonJS`". The file it ran
    on goes; `CommonJS`, the value of `--module`, was taken for a target too and went with it,
    leaving a command that cannot run."""
    from learn_cli.capture.learner import _without_targets

    ok = "npx tsc --noEmit --strict --module CommonJS --esModuleInterop server/lib/validator.ts 2>&1"
    assert _without_targets(ok) == "npx tsc --noEmit --strict --module CommonJS --esModuleInterop"
    assert _without_targets("cd web && cargo test --features x lz77::tests -- --nocapture") == (
        "cd web && cargo test --features x")
    assert _without_targets("pytest --verbose tests/test_a.py") == "pytest"


def test_a_secret_the_fix_shares_with_the_failed_command_is_shown_as_the_agents_own(home, proj):
    """`deploy --token … push`: not found until the venv was sourced. The lesson is stored masked
    (`--token [REDACTED:…]`), and shown masked it could not run: the answer fills the mark in
    from the command the agent just ran, which holds the value. Nothing on disk holds it."""
    from learn_cli.text.redact import unmask

    a = proj("vault")
    missing = "/bin/bash: line 1: sgit: command not found"
    answer = _first_answer(home, a, "sgit --token tk9Secret42x push", "source .venv/bin/activate && "
                           "sgit --token tk9Secret42x push", missing, "sgit --token tk9Secret42x push")
    assert "`source .venv/bin/activate && sgit --token tk9Secret42x push`" in answer
    assert "REDACTED" not in answer.split("\n")[0]  # nor the command it replaces: the agent's own
    assert not any("tk9Secret42x" in path.read_text(errors="replace") for path in home.rglob("*") if path.is_file())
    # another agent's value, in another slot, or no value at all: the mark stays
    stored = "sshpass -p '[REDACTED:password-flag]' ssh -p 4422 u@h"
    assert unmask(stored, "sshpass -p 'ubuntu' ssh -p 4422 u@h 'whoami'") == "sshpass -p 'ubuntu' ssh -p 4422 u@h"
    assert unmask(stored, "ssh -p 4422 u@h") == stored
    assert unmask("curl -H 'Authorization: Bearer [REDACTED:bearer]' x", "curl --token abcdefgh12345678 x") == (
        "curl -H 'Authorization: Bearer [REDACTED:bearer]' x")


def test_a_password_piped_into_sudo_never_reaches_the_disk_and_the_answer_still_runs(home, proj):
    """`echo 'pw' | sudo -S apt-get install -y jq`: no such package until the lists were
    updated. The password was stored as typed (only flags, tokens and assignments were known).
    Now nothing on disk holds it, and the answer gives the agent its own command back."""
    a = proj("box")
    failed = "echo 'Pa55-word!' | sudo -S apt-get install -y jq"
    fix = "echo 'Pa55-word!' | sudo -S apt-get update && echo 'Pa55-word!' | sudo -S apt-get install -y jq"
    answer = _first_answer(home, a, failed, fix, "E: Unable to locate package jq", failed)
    assert answer.startswith("learn: known fix") and "sudo -S apt-get update" in answer
    assert "Pa55-word!" in answer and "REDACTED" not in answer.split("\n")[0]
    assert not any("Pa55-word!" in path.read_text(errors="replace") for path in home.rglob("*") if path.is_file())


def test_a_role_replaced_keeps_the_database_of_the_same_name(home, proj):
    """`psql -U shop -d shop`: role "shop" does not exist; `-U postgres -d shop` worked. The
    argument the error named was replaced where it stood (after `-U`), not everywhere: the
    next query ran as `-U postgres -d postgres`, on another database."""
    error = 'psql: error: connection to server on socket "/tmp/.s.PGSQL.5432" failed: FATAL:  role "shop" does not' \
            ' exist'
    failed = 'docker exec db psql -U shop -d shop -c "select 1"'
    again = 'docker exec db psql -U shop -d shop -c "select count(*) from orders"'
    answer = _first_answer(home, proj("shop"), failed, failed.replace("-U shop", "-U postgres"), error, again)
    assert answer.endswith(f"`{again.replace('-U shop', '-U postgres')}` instead of `{again}`.")


def test_a_cd_that_failed_is_not_kept_by_the_rewrite(home, proj):
    """`cd test && ./run_all.sh`: no folder `test` here; `./test/run_all.sh` worked. The lesson's
    change (the script's path) was applied to the command that failed, `cd` and all: `cd test
    && ./test/run_all.sh`, which fails at the same `cd`. The fix is shown as it worked."""
    missing = "/bin/bash: line 1: cd: test: No such file or directory"
    failed = "cd test && ./run_all.sh"
    answer = _first_answer(home, proj("suite"), failed + " 2>&1 | tail -5", "./test/run_all.sh", missing, failed)
    assert answer.endswith(f"`./test/run_all.sh` instead of `{failed}`.")


def test_run_it_from_a_folder_replaces_the_agents_own_cd(home, proj):
    """`cd /w && node -e "require('sharp')"` failed, `cd /w/apps/web && …` worked: "run it from
    apps/web". Next time the agent's command began with its own `cd /w` again, and the answer
    put the fix's `cd` in front of it: `cd /w/apps/web && cd /w && node …`, back where it failed."""
    a = proj("mono")
    (a / "apps" / "web").mkdir(parents=True)
    missing = "Error: Cannot find module 'sharp'"
    again = f"cd {a} && node -e \"require('sharp').resize\""
    answer = _first_answer(home, a, f"cd {a} && node -e \"require('sharp')\"",
                           f"cd {a}/apps/web && node -e \"require('sharp')\"", missing, again)
    assert answer.endswith(f"`cd {a}/apps/web && node -e \"require('sharp').resize\"` instead of `{again}`.")


def test_a_windows_drive_folder_is_no_folder_of_the_project(home, proj):
    """`cd "C:/Users/f/app" && node x.js` failed, `cd "C:/Users/f/app/web" && node x.js` worked,
    replayed where paths have no drives: the folder was joined to the project's
    (`/w/C:/Users/f/app/web`) and offered as "run it from there". It is the command as it worked."""
    a = proj("win")
    s = Agent(home, a)
    s.fail('cd "C:/Users/f/app" && node x.js', "Error: Cannot find module 'sharp'", 1)
    s.ok('cd "C:/Users/f/app/web" && node x.js')
    assert [(r["fix_kind"], r["fix"]) for r in learnings(home, a) if r.get("fix")] == [
        ("retry", 'cd "C:/Users/f/app/web" && node x.js')]


def test_a_change_that_does_not_give_the_fix_back_does_not_travel(home, proj):
    """`git checkout feat/login`: no such pathspec; `git checkout -b feat/login origin/feat/login`
    worked. Read as "add `-b origin/feat/login`", the change rewrote the same checkout, the next
    time it failed, as `git checkout -b origin/feat/login feat/login`: a branch of another name.
    A change must give the fix back when applied to the command that failed (its options may
    move: `-n ns` added to `kubectl exec -ti …` still travels to the next command)."""
    pathspec = "error: pathspec 'feat/login' did not match any file(s) known to git"
    fix = "git checkout -b feat/login origin/feat/login"
    answer = _first_answer(home, proj("web"), "git checkout feat/login", fix, pathspec, "git checkout feat/login")
    assert answer.endswith(f"`{fix}` instead of `git checkout feat/login`.")
    not_found = 'Error from server (NotFound): deployments.apps "api" not found'
    answer = _first_answer(home, proj("ops"), "kubectl exec -ti deploy/api -- ls /app",
                           "kubectl exec -ti -n shop deploy/api -- ls /app", not_found,
                           "kubectl exec -ti deploy/api -- cat /app/config.yaml")
    assert "`kubectl exec -n shop -ti deploy/api -- cat /app/config.yaml` instead of" in answer


def test_a_folder_with_a_space_keeps_its_quotes_in_every_answer(home, proj):
    """`cd "D:/Work/My App" && git status`: not a repository; `… && git init && git status`
    worked. The step to run first was rebuilt around the folder unquoted (`cd D:/Work/My App
    && git init`), and so were a prefix added after it and "run it from D" in a project whose
    folder has a space: commands that cannot run."""
    not_repo = "fatal: not a git repository (or any of the parent directories): .git"
    failed = 'cd "D:/Work/My App" && git status'
    answer = _first_answer(home, proj("a"), failed, 'cd "D:/Work/My App" && git init && git status', not_repo, failed)
    assert answer.endswith(f'run `cd "D:/Work/My App" && git init` first, then retry `{failed}`.')
    spaced = proj("my app")
    (spaced / "web").mkdir()
    missing = "Error: Cannot find module 'sharp'"
    answer = _first_answer(home, spaced, 'node -e "require(\'sharp\')"',
                           f'cd "{spaced}/web" && node -e "require(\'sharp\')"', missing,
                           'node -e "require(\'sharp\').x"')
    assert answer.startswith("learn: known fix") and f"`cd '{spaced}/web' && node -e" in answer


def test_a_fix_for_the_same_command_on_other_files_names_those_files(home, proj):
    """`python -m venv .venv && .venv/bin/pip install -r requirements.txt`: python not found;
    `python3 -m venv …` worked. The same command with `-r dev.txt` then got the earlier fix
    word for word, `-r requirements.txt` and all: the fix names this command's files now, as
    does a step run first (`cd build && rm -f CMakeCache.txt` for the `build-arm` folder). A fix
    that does not name every argument that differs is shown as it was (a pattern rewritten for
    another grep, with the next command's file alone put in, would mix the two)."""
    from learn_cli.capture.lesson import by_analogy

    missing = "/bin/bash: line 1: python: command not found"
    failed = "python -m venv .venv && .venv/bin/pip install -r requirements.txt"
    answer = _first_answer(home, proj("api"), failed, failed.replace("python ", "python3 ", 1), missing,
                           failed.replace("requirements.txt", "dev.txt"))
    assert answer.startswith("learn: known fix") and "`python3 -m venv .venv && .venv/bin/pip install -r dev.txt`" \
        in answer
    stale = "CMake Error: The current CMakeCache.txt directory /a/build/CMakeCache.txt is different"
    answer = _first_answer(home, proj("c"), "cd build && cmake .. && make", "cd build && rm -f CMakeCache.txt && "
                           "cmake .. && make", stale, "cd build-arm && cmake .. && make")
    assert "run `cd build-arm && rm -f CMakeCache.txt` first" in answer
    assert by_analogy("grep -P 'a\\d+' f.txt", "grep -P 'b\\d+' g.txt", "grep -E 'a[0-9]+' f.txt") is None
    assert by_analogy("psql -U app -d app", "psql -U app -d app2", "psql -U postgres -d app") is None


def test_an_empty_argument_is_no_target_to_replace(home, proj):
    """`pip install -r requirements.txt --index-url ""` then the same with a URL: the fix was
    rewritten by analogy, replacing the empty argument "" wherever it "stood" (everywhere, at
    once): the hook looped, growing without bound, until its deadline killed it (found by
    fuzzing by_analogy). An empty word stands nowhere; the answer is the fix as it was."""
    import signal

    from learn_cli.capture.lesson import _replace_words, by_analogy

    def endless(*_):
        raise AssertionError("no answer within 10 s: the replacement loops")

    previous = signal.signal(signal.SIGALRM, endless)  # (a loop here must fail the test, not hang the suite)
    signal.alarm(10)
    try:
        _answers_after_an_empty_argument(home, proj, _replace_words, by_analogy)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _answers_after_an_empty_argument(home, proj, _replace_words, by_analogy):
    assert _replace_words("a && b", "", "x") == "a && b"
    assert by_analogy('git commit -m ""', 'git commit -m "wip"', 'git commit --allow-empty-message -m ""') is None
    missing = "/bin/bash: line 1: python: command not found"
    failed = 'python -m venv .venv && .venv/bin/pip install -r requirements.txt --index-url ""'
    answer = _first_answer(home, proj("api"), failed, failed.replace("python ", "python3 ", 1), missing,
                           failed.replace('""', "https://pypi.org/simple"))
    assert answer.startswith("learn: known fix") and '`python3 -m venv .venv' in answer


def test_a_program_run_bare_that_printed_its_usage_is_judged_without_a_crash():
    """sflicker/claudec99: the compiler run with no argument printed `usage: ccompiler [...]
    <source.c>`; judging the retry's lesson read each option's value one word past the end
    (a ValueError inside the hook: the pair was lost, silently)."""
    usage = "usage: ccompiler [--print-ast | --print-tokens] <source.c>"
    assert isinstance(is_lesson("./build/ccompiler", "./build/ccompiler t.c", usage), bool)


@pytest.mark.parametrize("retry", [
    "./build/ccompiler test/valid/t.c && nasm -f elf64 t.asm -o t.o && gcc -no-pie t.o -o t && ./t",
    "./build/ccompiler test/valid/t.c && cat t.asm",
])
def test_steps_run_after_the_failed_ones_are_no_fix_of_them(home, proj, retry):
    """sflicker/claudec99: the compiler rejected a test program, the parser was edited, and
    the same compile worked with the assembly and run appended. Those steps ran after the
    one that failed: learned, "add `&& nasm …`" was the fix of a parser bug."""
    a = proj("c99")
    s = Agent(home, a)
    s.fail("./build/ccompiler test/valid/t.c", "error: expected expression, got '&'", 1)
    s.edit_ok(str(a / "src" / "parser.c"))
    s.ok(retry)
    assert not [r for r in learnings(home, a) if r.get("fix")]


def test_a_fix_too_long_to_show_whole_ends_on_a_whole_word(home, proj):
    """BSD grep has no `-P`; perl over the same two files worked (a ninth harvest, Codex on a
    Mac). The fix runs past the hook's width: it is cut after its last whole word, never in the
    middle of a path, which would name a file that is not there."""
    files = " ".join(f"/Users/dev/papers/.hermes/handoffs/galaxy/quality-sprints/RP1_20260709T020653Z/"
                      f"candidates/cycle_02/{name}/aastex/{name}_polished.tex" for name in ("flagship", "atlas"))
    failed = f'LC_ALL=C grep -nP "[^\\x00-\\x7F]" {files}'
    fix = f"perl -ne 'print \"$ARGV:$.:$_\" if /[^\\x00-\\x7F]/' {files}"
    refused = "grep: invalid option -- P\nusage: grep [-abcdDEFGHhIiJLlMmnOopqRSsUVvwXxZz] [-A num] [-B num]"
    answer = _first_answer(home, proj("paper"), failed, fix, refused, failed)
    shown = answer.split("`")[1]
    assert len(fix) > 300 and shown.endswith("…")
    assert fix.startswith(shown[:-1]) and fix[len(shown) - 1] == " "  # it stopped where a word ended


def test_the_same_command_run_from_another_folder_it_kept_is_a_cwd_lesson(home, proj):
    """Claude Code keeps the folder a `cd` call of its own moved to: `make` failed at the root
    (no makefile), `cd build` alone, then `make` worked there. The folder is the fix. A test
    that failed and passed after such a move says nothing about folders."""
    root = proj("cc")
    (root / ".git").mkdir()  # one project, the folders in it
    (root / "build").mkdir()
    s = Agent(home, root)
    s.fail("make", "make: *** No targets specified and no makefile found.  Stop.", 2)
    s.ok("cd build")
    _moved(s, root / "build").ok("make")
    assert [(r["fix_command"], r["fix_kind"]) for r in learnings(home, root)] == [("cd build", "cwd")]
    other = proj("py")
    (other / ".git").mkdir()
    (other / "tests").mkdir()
    s = Agent(home, other)
    s.fail("pytest -q", "FAILED test_a.py::test_x - AssertionError: assert 1 == 2", 1)
    _moved(s, other / "tests").ok("pytest -q")
    assert not [r for r in learnings(home, other) if r.get("fix")]


def _moved(agent: Agent, folder) -> Agent:
    """The same session, its calls now made from `folder` (the payloads' `cwd`)."""
    moved = Agent(agent.home, folder, session_id=agent.sid)
    moved.n = agent.n
    return moved


def test_a_package_the_registry_could_not_find_dropped_is_the_lesson(home, proj):
    """`npm install @antv/g6 @antv/g6-plugin-v5`: npm's E404 says the second "could not be
    found" (a name the agent made up, a ninth harvest); the same install without it worked.
    Dropping it is the lesson, said as such."""
    root = proj("viz")
    e404 = ("npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@antv%2fg6-plugin-v5 - "
            "Not found\nnpm error 404\nnpm error 404  The requested resource '@antv/g6-plugin-v5@*' could not be "
            "found or you do not have permission to access it.")
    said = _first_answer(home, root, "npm install @antv/g6 @antv/g6-plugin-v5 2>&1", "npm install @antv/g6 2>&1",
                         e404, "npm install @antv/g6 @antv/g6-plugin-v5")
    assert said.endswith("`npm install @antv/g6` instead of `npm install @antv/g6 @antv/g6-plugin-v5`."), said


_S43_WORDS = st.lists(st.sampled_from([
    "ssh", "h", "u@h", "-p", "2222", "-o", "<<", "'EOF'", "http://localhost:5173", "http://x:", ":3000/a", "python3",
    "-m", "app.main", "app/main.py", "pytest", "-q", "tests/test_a.py", "cargo", "test", "a::", "npm", "pnpm",
    "--prefix", "--dir=", "-C", "grep", "rg", "-c", "|", "&&", ";", "cd", "-v", "Unknown option", "Exit code 1",
    "exited 1 in 3ms:", "0", "\n", "'", '"', "3 failed", "FAILED", "mkdir", "New-Item", "ls", "/a/b/", "/a/",
]), max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_S43_WORDS, _S43_WORDS, _S43_WORDS)
def test_session_43s_readers_never_raise(failed, then, text):
    """A search that found nothing, a line run over ssh or in a package manager's folder, one
    script run another way, a narrowed test run, a refused look: whatever the text, an answer."""
    from learn_cli.capture.learner import _refused_aid, retried_step
    from learn_cli.capture.pairing import _folder_as_cd, _on_one_host, _other_port
    from learn_cli.text.failure import found_nothing

    assert isinstance(found_nothing(failed, text, 1), bool) and isinstance(found_nothing(then, "Exit code 1"), bool)
    for command in (failed, "ssh h " + failed, "pnpm --dir " + failed, "fly ssh console -C " + failed,
                    "gcloud compute ssh " + failed):
        assert _on_one_host(command) is None or len(_on_one_host(command)) == 2
        assert isinstance(_folder_as_cd(command), str)
    assert isinstance(_other_port(failed, then), bool)
    assert isinstance(_refused_aid(failed, then, text), bool)
    for pair in ((failed, then), ("ssh h " + failed, "ssh h " + then), ("pnpm --dir x " + failed, then)):
        step = retried_step(*pair, text)
        assert step is None or isinstance(step, str)


_S44_WORDS = st.lists(st.sampled_from([
    "docker", "docker-compose", "compose", "exec", "-T", "-it", "-u", "app", "kubectl", "--", "which", "npm", "install",
    "mvn", "-pl", "svc", "clean", "package", "sed", "-n", "'1,240p'", "1,$p", "p", "-i", "cat", "nl", "-ba", "rm",
    "AGENTS.md", "d/AGENTS.md", "--zone=a", "--zone=b c", "--command='ls -la'", "-o=", "=", "|", "&&", ";", "cd",
    "'", '"', "\n", "can't read", "cannot open", "for reading", ": No such file or directory",
]), max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_S44_WORDS, _S44_WORDS, _S44_WORDS)
def test_session_44s_readers_never_raise(failed, then, text):
    """A command run in a container, a module list, an option given another value, a print
    window, a file a look could not find: whatever the text, an answer."""
    from learn_cli.capture.lesson import _changed, apply_replaced_target
    from learn_cli.text.effects import is_read_only
    from learn_cli.text.keys import error_key
    from learn_cli.text.shell import in_container, print_window, shell_word, tokenize

    words = tokenize(failed) or ["x"]
    assert in_container(words) is None or isinstance(in_container(words), list)
    assert isinstance(is_read_only(failed), bool) and isinstance(print_window(then), bool)
    assert isinstance(shell_word(then), str)
    assert isinstance(_changed(words, tokenize(then), words[:1], ""), list)
    replaced = apply_replaced_target(failed, words[0], words[-1], "d/" + words[-1])
    assert replaced is None or isinstance(replaced, str)
    assert error_key(text, failed, "Bash").startswith("err:")


def test_a_consumer_that_is_not_installed_dropped_is_the_retry():
    """`docker inspect img --format='{{json .Config}}' | python -m json.tool` failed "command not
    found: python" (a Mac without `python`); `docker inspect img --format='{{.Config.Cmd}}'`
    worked (round 19). Dropped after it failed on its input, a consumer leaves a look at what
    the producer gives (pairing._consumer_dropped); not installed, it leaves the job."""
    from learn_cli.capture.learner import retried_step
    from learn_cli.text.shell import segments_before

    failed = "docker inspect img:test --format='{{json .Config}}' | python -m json.tool | head -30"
    ok = "docker inspect img:test --format='{{.Config.Cmd}}'"
    assert retried_step(failed, ok, "(eval):1: command not found: python") == failed
    assert retried_step(failed, ok, "Expecting value: line 1 column 1 (char 0)") is None  # it read the output
    assert retried_step(failed, "python3 -m json.tool < cfg.json", "(eval):1: command not found: python") is None
    assert segments_before("cd app && npm ls --json | jq .dependencies | head", 2) == "cd app && npm ls --json"


def test_a_package_chosen_again_after_none_matched_is_the_retry():
    """`pnpm --filter @sitin/minerva-server lint` said "No projects matched the filters"; `pnpm lint
    --filter='./packages/app-minerva-server'` worked (round 21). Another package is another job
    (engine.goals.other_packages) unless the one chosen matched nothing."""
    from learn_cli.capture.learner import retried_step

    failed = "pnpm --filter @sitin/minerva-server lint 2>&1 | tail -5"
    ok = "pnpm lint --filter='./packages/app-minerva-server' 2>&1 | tail -5"
    assert retried_step(failed, ok, 'No projects matched the filters in "/Users/me/sitin-next"') == failed
    assert retried_step(failed, ok, "src/index.ts:3:1 error 'x' is defined but never used") is None
    assert retried_step(failed, "pnpm build --filter=./packages/app", "No projects matched the filters") is None
    assert retried_step("cargo check -p landro-daemon", "cargo check -p landro-sync",
                        "error: package ID specification `landro-daemon` did not match any packages") is not None


def test_a_shaper_not_installed_is_dropped_from_the_next_command_piped_into_it(home, proj):
    """sandahltim/RFID3 (session 50): `curl -s URL | jq .`, jq not installed, then the same curl
    without it; twice more, each time another URL. The lesson travels: "drop `| jq .`"."""
    a = proj("dash")
    error = "/bin/bash: line 1: jq: command not found"
    s = Agent(home, a)
    s.fail("curl -s http://localhost:6801/executive/api/financial-kpis | jq .", error, 127)
    s.ok("curl -s http://localhost:6801/executive/api/financial-kpis", '{"kpis": []}')
    again = 'curl -s "http://localhost:6801/config/api/labor-cost-configuration" | jq .'
    lines = context_of(Agent(home, a).fail(again, error, 127)).splitlines()
    assert lines[0].endswith('`curl -s "http://localhost:6801/config/api/labor-cost-configuration"` instead of '
                             f"`{again}`.")
    assert lines[1] == "learn: the change: drop `| jq .`."
    assert Agent(home, a).fail("jq . report.json", error, 127) is None  # jq itself: nothing to drop


def test_the_argument_an_error_names_as_missing_replaced_is_a_retry():
    """`sudo systemctl restart rfid3.service`: "Unit rfid3.service not found"; the agent listed
    the units, then restarted `rfid_dash_dev.service` (sandahltim/RFID3, three times): the name
    shares nothing with the one that failed, but it replaced what the error said was missing.
    Not a look at another file, nor another goal (`npm run lint` → `npm run build` after "eslint: not
    found", r32-d-026)."""
    from learn_cli.capture.learner import retried_step

    unit = "Failed to restart rfid3.service: Unit rfid3.service not found."
    failed = "sudo systemctl restart rfid3.service"
    assert retried_step(failed, "sudo systemctl restart rfid_dash_dev.service", unit) == failed
    assert retried_step(failed, "sudo systemctl restart rfid_dash_dev.service", "Job failed: timeout") is None
    assert retried_step("cat notes.txt", "cat todo.txt", "cat: notes.txt: No such file or directory") is None
    assert retried_step("codex auth status", "codex auth --help", "error: unrecognized subcommand 'status'") is None
    lint = "sh: 1: eslint: not found\n\n> itilv4@1.0.0 lint\n> eslint . --ext ts,tsx"
    assert retried_step("npm run lint", "npm run build", lint) is None


def test_inline_code_on_the_same_file_replaces_a_program_not_installed(home, proj):
    """Round 22 (Gemini CLI): `jq 'keys' paper.json`, jq not installed; `python3 -c "…
    json.load(open('paper.json'))…"` did it. The same command later gets that code; another
    file does not (the code names this one)."""
    a = proj("api")
    error = "bash: line 1: jq: command not found"
    fix = "python3 -c \"import json; d=json.load(open('res/paper.json')); print(d.keys())\""
    s = Agent(home, a)
    s.fail("jq 'keys' res/paper.json", error, 127)
    s.ok(fix)
    assert context_of(Agent(home, a).fail("jq 'keys' res/paper.json", error, 127)).splitlines()[0].endswith(
        f"`{fix}` instead of `jq 'keys' res/paper.json`.")
    assert Agent(home, a).fail("jq '.title' res/other.json", error, 127) is None
    s = Agent(home, a)
    s.fail("jq 'keys' res/a.json", error, 127)
    s.ok("python3 -c \"import json; print(json.load(open('res/b.json')))\"")  # another file: no retry
    assert not [r for r in learnings(home, a) if "b.json" in str(r)]


def test_a_windows_path_found_elsewhere_is_a_lesson(home, proj):
    """Round 23 (Codex, PowerShell): `Get-Content -Raw .\\manifest.json`, not found; `.\\webapp\\
    manifest.json` was read. The same name found elsewhere is a lesson with either separator
    (text.shell.path_name), as `ls src/x` then `ls lib/x` is."""
    a = proj("api")
    error = ("Get-Content : Cannot find path 'C:\\Users\\pc\\p\\manifest.json' because it does not exist.\n"
             "+ FullyQualifiedErrorId : PathNotFound,Microsoft.PowerShell.Commands.GetContentCommand")
    s = Agent(home, a)
    s.fail("Get-Content -Raw .\\manifest.json", error, 1)
    s.ok("Get-Content -Raw .\\webapp\\manifest.json")
    lines = context_of(Agent(home, a).fail("Get-Content -Raw .\\manifest.json", error, 1)).splitlines()
    assert lines[0].endswith(
        "`Get-Content -Raw .\\webapp\\manifest.json` instead of `Get-Content -Raw .\\manifest.json`.")


def test_a_package_chosen_again_after_none_matched_is_offered_for_that_command_only(home, proj):
    """Round 21: "No projects matched the filters" says the package chosen was the mistake; the
    one chosen again is the lesson for that command, not for another package's or another job."""
    a = proj("web")
    error = 'No projects matched the filters in "/Users/p/sitin-next"'
    s = Agent(home, a)
    s.fail("pnpm --filter @sitin/minerva-server lint", error, 1)
    s.ok("pnpm lint --filter=./packages/app-minerva-server")
    lines = context_of(Agent(home, a).fail("pnpm --filter @sitin/minerva-server lint", error, 1)).splitlines()
    assert lines[0].endswith("`pnpm lint --filter=./packages/app-minerva-server` instead of "
                             "`pnpm --filter @sitin/minerva-server lint`.")
    assert Agent(home, a).fail("pnpm --filter @sitin/web build", error, 1) is None


def test_a_fix_with_backticks_is_offered_as_it_ran(home, proj):
    """MySQL wants a reserved column name in backticks (round 21); the offer shows them, in a
    span fenced by two (wording.code_span), not turned into quotes that make it a string."""
    a = proj("shop")
    error = "ERROR 1054 (42S22) at line 1: Unknown column 'year_month' in 'field list'"
    failed, fix = "mysql -u root shop -e 'SELECT year_month, total FROM sales'", \
        "mysql -u root shop -e 'SELECT `year_month`, total FROM sales'"
    s = Agent(home, a)
    s.fail(failed, error, 1)
    s.ok(fix)
    first = context_of(Agent(home, a).fail(failed, error, 1)).splitlines()[0]
    assert first.endswith(f"`` {fix} `` instead of `{failed}`.")


def test_session_48s_retries_are_answered_in_the_hook(home, proj):
    """Rounds 30 and 33, captured through the hook: Claude Code's `!` typed into a command is
    answered with the change in plain words (no quoting for the `!`), and a port freed by
    `lsof … | xargs kill` after `fuser` was not installed is the known fix for the next time."""
    a = proj("tools")
    bang = "(eval):1: command not found: !pwd"
    lines = context_of(_agent_after(home, a, "!pwd", "pwd", bang).fail("!pwd", bang, 127)).splitlines()
    assert lines[0].endswith("`pwd` instead of `!pwd`.") and "`!pwd` → `pwd`" in lines[1]
    gone = "bash: fuser: command not found"
    freed = "lsof -ti:11501 | xargs kill -9"
    first = _first_answer(home, proj("server"), "fuser -k 11501/tcp", freed, gone, "fuser -k 11501/tcp")
    assert f"`{freed}` instead of `fuser -k 11501/tcp`" in first


def _agent_after(home, project, failed: str, fix: str, error: str) -> Agent:
    """A second session of `project`, after `fix` worked where `failed` had failed with `error`."""
    s = Agent(home, project)
    s.fail(failed, error, 127)
    s.ok(fix)
    return Agent(home, project)


def test_session_49s_retries_are_answered_in_the_hook(home, proj):
    """Rounds 35 and 36, captured through the hook: PowerShell's call operator stays on the fix
    (`"C:\\Program Files\\…\\git.exe" init` alone is a parse error there), and the push git
    spelled out for a branch with no upstream is the known fix for that push."""
    a = proj("windows")
    missing = ("git : The term 'git' is not recognized as the name of a cmdlet, function, script file, or "
               "operable program.")
    git = '& "C:\\Program Files\\Git\\cmd\\git.exe" init'
    lines = context_of(_agent_after(home, a, "git init", git, missing).fail("git init", missing, 1)).splitlines()
    assert lines[0].endswith(f"`{git}` instead of `git init`.")
    no_upstream = ("fatal: The current branch main has no upstream branch.\nTo push the current branch and set the "
                   "remote as upstream, use\n\n    git push --set-upstream origin main\n")
    chain = 'git add . && git commit -m "Security: CSRF protection" && git push'
    first = _first_answer(home, proj("web"), chain, "git push --set-upstream origin main", no_upstream, chain)
    assert "`git push --set-upstream origin main`" in first


def test_a_fix_of_several_lines_is_answered_line_by_line(home, proj):
    """Round 35 (read with the VS Code panel's own newlines): a fix whose inline code has lines
    of its own cannot be run from its one-line form (`python3 -c " import json for …"`). The
    answer shows it as it was run, line by line, its indentation kept; a one-line fix has no
    such block."""
    failed = 'python3 -c "\nimport jsn\nfor k in (1, 2):\n    print(jsn.dumps(k))\n"'
    fix = 'python3 -c "\nimport json\nfor k in (1, 2):\n    print(json.dumps(k))\n"'
    missing = ("Traceback (most recent call last):\n  File \"<string>\", line 2, in <module>\n"
               "ModuleNotFoundError: No module named 'jsn'")
    lines = context_of(_agent_after(home, proj("scripts"), failed, fix, missing).fail(failed, missing, 1)).splitlines()
    at = lines.index("learn: the fix as it was run, line by line:")
    assert lines[at + 1:at + 6] == ['learn: | python3 -c "', "learn: | import json", "learn: | for k in (1, 2):",
                                    "learn: |     print(json.dumps(k))", 'learn: | "']
    plain = context_of(_agent_after(home, proj("plain"), "pyhton3 app.py", "python3 app.py",
                                    "zsh: command not found: pyhton3").fail("pyhton3 app.py",
                                                                            "zsh: command not found: pyhton3", 127))
    assert "line by line" not in plain and "`python3 app.py` instead of `pyhton3 app.py`" in plain


def test_a_long_script_is_shown_in_part_with_where_the_rest_is():
    """At most SCRIPT_LINES lines of a fix's script go into an answer, then how many more and
    where they are; each line is made inert (a fence, a tag) as every line of the answer is."""
    from learn_cli.capture.offers import SCRIPT_LINES, SCRIPT_MARK, _script_lines

    body = "\n".join(f"print({n})  # </system-reminder>" for n in range(20))
    rec = {"id": "learn-20261205T000000Z-abcdef", "fix_script": f"python3 - <<'PY'\n{body}\nPY"}
    lines = _script_lines(rec, "")
    assert len(lines) == 1 + SCRIPT_LINES + 1 and lines[1] == f"{SCRIPT_MARK}python3 - <<'PY'"
    assert lines[-1] == f"{SCRIPT_MARK}… (10 more lines: `learn show learn-20261205T000000Z-abcdef`)"
    assert all("</" not in line for line in lines)
    assert _script_lines({"fix_script": "npm test"}, "") == [] and _script_lines({}, "") == []


def test_an_install_run_first_is_learned_when_the_retry_changed_its_words(home, proj):
    """Round 37: a module missing (`python3 -c "import markdown; print(markdown.__version__)"`),
    `pip3 install markdown`, then the check again in other words (`print('ok', …)`). The install
    was the lesson, the new words no fix; the next time the check fails so, it is offered as a
    step to run first. Before, the changed words made the pair "moved on", and nothing was
    learned."""
    missing = ("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
               "ModuleNotFoundError: No module named 'markdown'")
    check = 'python3 -c "import markdown; print(markdown.__version__)"'
    again = "python3 -c \"import markdown; print('ok', markdown.__version__)\""
    a = proj("docs")
    s = Agent(home, a)
    s.fail(check, missing, 1)
    s.ok("pip3 install markdown")
    s.ok(again)
    first = context_of(Agent(home, a).fail(check, missing, 1)).splitlines()[0]
    assert "run `pip3 install markdown` first" in first
