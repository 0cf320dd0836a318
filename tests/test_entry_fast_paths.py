"""The entry point's fast paths: answers that need neither typer nor rich (issue 14: importing
them is ~100 ms of CPU, more than ten times the interpreter's start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import learn_cli
from learn_cli import __version__


def test_version_is_printed_without_importing_typer_or_rich():
    probe = ("import sys; from learn_cli.__main__ import main; code = main(['--version']); "
             "print(code, 'typer' in sys.modules, 'rich' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [f"learn {__version__}", "0 False False"]


def test_version_after_a_global_option_still_answers(tmp_path, capsys):
    from learn_cli.__main__ import main

    assert main(["--home", str(tmp_path), "--version"]) == 0
    assert capsys.readouterr().out.strip() == f"learn {__version__}"


def test_a_plain_success_captured_imports_no_typing(tmp_path):
    """`learn capture` runs on every tool call: `typing` alone is ~3 ms of its ~40 (a module
    of the capture path importing engine.knowledge at its top brought it in)."""
    import json

    cwd = tmp_path / "proj"
    (cwd / ".git").mkdir(parents=True)
    payload = json.dumps({"session_id": "s1", "transcript_path": "/t", "cwd": str(cwd), "tool_name": "Bash",
                          "hook_event_name": "PostToolUse", "tool_use_id": "t1", "tool_input": {"command": "ls"},
                          "tool_response": {"stdout": "a", "stderr": "", "interrupted": False, "isImage": False}})
    probe = ("import sys; from learn_cli.__main__ import main; code = main(['capture']); "
             "print(code, sorted({'typing', 'typer', 'rich', 'orjson'} & set(sys.modules)))")
    env = {"SELF_LEARNING_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for _ in range(2):  # the first call also creates the store
        out = subprocess.run([sys.executable, "-c", probe], input=payload, capture_output=True, text=True,
                             check=True, env=env, cwd=tmp_path).stdout
    assert out.splitlines()[-1] == "0 []"


# What the hook path leaves out, per event kind (issue 14: every hook call at most 3x the bare
# interpreter; each of these modules is milliseconds of import). `_hook` runs the entry point
# in a fresh interpreter and reports which of them it imported.
HEAVY = ("sqlite3", "_sqlite3", "datetime", "pathlib", "typing", "learn_cli.store.api", "learn_cli.store.index",
         "learn_cli.text.redact", "learn_cli.text.keys", "learn_cli.capture.pairing", "learn_cli.engine.context",
         "contextlib", "signal")


def _hook(tmp_path, argv: list[str], payload: dict, cwd, probe: tuple = HEAVY,
          before: str = "") -> tuple[str, set[str]]:
    import json

    probe = (f"import sys; {before}from learn_cli.__main__ import main; code = main({argv!r}); "
             f"print(code, ' '.join(m for m in {probe!r} if m in sys.modules))")
    env = {"SELF_LEARNING_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", probe], input=json.dumps(payload), capture_output=True, text=True,
                         check=True, env=env, cwd=cwd).stdout
    answer, _, last = out.rstrip("\n").rpartition("\n")  # the hook's JSON line (if any), then the probe's
    code, _, modules = last.partition(" ")
    assert code == "0"
    return answer.strip(), set(modules.split())


def _project(tmp_path, name: str = "proj"):
    cwd = tmp_path / name
    (cwd / ".git").mkdir(parents=True)
    (cwd / "pyproject.toml").write_text("")
    return cwd


def _tool_events(cwd, session: str) -> tuple[dict, dict, dict, dict]:
    """A Bash tool event's common fields, a failure, its fix and a plain success."""
    base = {"session_id": session, "transcript_path": "/t", "cwd": str(cwd), "tool_name": "Bash"}
    fail = dict(base, hook_event_name="PostToolUseFailure", tool_input={"command": "pytest -q"},
                error="Exit code 127\nbash: pytest: command not found", is_interrupt=False)
    fix = dict(base, hook_event_name="PostToolUse", tool_input={"command": "python -m pytest -q"},
               tool_response={"stdout": "1 passed", "stderr": ""})
    plain = dict(base, hook_event_name="PostToolUse", tool_input={"command": "ls src"},
                 tool_response={"stdout": "a", "stderr": ""})
    return base, fail, fix, plain


def test_a_plain_success_and_a_prompt_neither_open_the_index_nor_parse_commands(tmp_path):
    """_sqlite3 (the C module alone) is imported when the index is opened: a success that
    resolves no failure and a prompt that corrects nothing never open it."""
    cwd = _project(tmp_path)
    base = {"session_id": "s1", "transcript_path": "/t", "cwd": str(cwd)}
    success = dict(base, hook_event_name="PostToolUse", tool_name="Bash", tool_use_id="t1",
                   tool_input={"command": "ls src"}, tool_response={"stdout": "a", "stderr": ""})
    _hook(tmp_path, ["capture"], success, cwd)  # creates the store
    for payload in (dict(success, tool_use_id="t2"), dict(base, hook_event_name="UserPromptSubmit", prompt="go on")):
        _answer, modules = _hook(tmp_path, ["capture"], payload, cwd)
        assert not modules & {"sqlite3", "_sqlite3", "datetime", "typing", "learn_cli.store.index",
                              "learn_cli.text.keys", "learn_cli.capture.pairing"}, payload["hook_event_name"]


def test_no_tool_event_nor_session_end_imports_pathlib_contextlib_signal_or_typing(tmp_path):
    """Every tool event opens the Store with string paths (store.paths.Layout, `plain`), the
    locks and the alarm use no contextlib and no `signal` enums, a pair no `typing`: together
    ~0.6x the bare interpreter's instructions. A failure, its fix (a pair) and a plain success,
    in one session, a failure answered with the fix learned from the pair, and the sessions'
    ends, whose promotion check (engine.promotion) takes the same string paths."""
    cwd = _project(tmp_path)
    base, fail, fix, plain = _tool_events(cwd, "s1")
    _hook(tmp_path, ["capture"], dict(plain, tool_use_id="t0"), cwd)  # creates the store
    answers = []
    for n, payload in enumerate((fail, fix, plain, dict(fail, session_id="s2"), dict(fix, session_id="s2"),
                                 dict(fail, session_id="s3"))):
        answer, modules = _hook(tmp_path, ["capture"], dict(payload, tool_use_id=f"t{n + 1}"), cwd,
                                probe=HEAVY + ("json",))
        # no `json` either: records, the spool and markers through text.jsonlite (~5 M instructions)
        assert not modules & {"pathlib", "contextlib", "signal", "typing", "json"}, (n, modules)
        answers.append(answer)
    assert "python -m pytest -q" in answers[-1], answers  # the pairs were learned and the fix offered
    pending = tmp_path / "home" / "sessions" / "pending"
    assert {p.name for p in pending.iterdir()} == {"s1.json", "s2.json"}
    # Claude Code's SessionEnd leaves the promotion check to the next Stop (capture.hook.
    # _quick_end): no Store, index, regex or promotion, whatever the store's size; the markers stay
    _answer, modules = _hook(tmp_path, ["capture"], dict(base, session_id="s1", hook_event_name="SessionEnd"), cwd,
                             probe=HEAVY + ("re", "learn_cli.engine.promotion"))
    assert not modules, modules
    assert {p.name for p in pending.iterdir()} == {"s1.json", "s2.json"}
    # the next Stop (any session's) checks what the sessions wrote (s2's leftover work too),
    # with string paths too
    roomy = "from learn_cli.capture import hook; hook.DEADLINES['stop'] = 60.0; "  # not 3 s: a loaded CI
    _answer, modules = _hook(tmp_path, ["capture"], dict(base, session_id="s3", hook_event_name="Stop"), cwd,
                             probe=HEAVY + ("learn_cli.engine.promotion",), before=roomy)
    assert "learn_cli.engine.promotion" in modules
    assert not modules & {"pathlib", "contextlib", "signal", "typing"}, modules
    assert not list(pending.iterdir())


def test_tool_events_import_neither_re_nor_hashlib_nor_functools(tmp_path):
    """A tool event's patterns come from the regex cache through text.rx, which imports `re`
    (with `enum`: ~13 M instructions, 0.35x a bare interpreter) only for a pattern the cache
    lacks; a session id that is not a plain name is hashed without `hashlib` (OpenSSL: ~12 M);
    caches and named tuples are text.lite's, and `_sqlite3` gets its `lru_cache` (`functools`
    and `collections`: ~11 M). A failure, its fix (a pair), a plain success and a prompt, in a
    session whose id holds `_`, then a failure answered with the fix: the answers as before,
    none of those modules imported."""
    cwd = _project(tmp_path)
    base, fail, fix, plain = _tool_events(cwd, "bench_1")
    prompt = {"session_id": "bench_1", "transcript_path": "/t", "cwd": str(cwd), "hook_event_name": "UserPromptSubmit",
              "prompt": "no, use python -m pytest"}
    _hook(tmp_path, ["capture"], dict(plain, tool_use_id="t0"), cwd)  # creates the store (and the regex cache)
    # another fix of the key, learned first: the pairs below are compared with it (engine.conflicts)
    other_fix = dict(fix, tool_input={"command": "python3 -m pytest -q"})
    _hook(tmp_path, ["capture"], dict(fail, tool_use_id="t03", session_id="warm_up_0"), cwd)
    _hook(tmp_path, ["capture"], dict(other_fix, tool_use_id="t04", session_id="warm_up_0"), cwd)
    _hook(tmp_path, ["capture"], dict(fail, tool_use_id="t00", session_id="warm_up"), cwd)
    _hook(tmp_path, ["capture"], dict(fix, tool_use_id="t01", session_id="warm_up"), cwd)
    _hook(tmp_path, ["capture"], dict(prompt, session_id="warm_up"), cwd)
    _hook(tmp_path, ["capture"], dict(fail, tool_use_id="t02", session_id="warm_up_2"), cwd)  # a fix offered
    answers = []
    for n, payload in enumerate((fail, fix, plain, prompt, dict(fail, session_id="other_2"))):
        answer, modules = _hook(tmp_path, ["capture"], dict(payload, tool_use_id=f"t{n + 1}"), cwd,
                                probe=("re", "enum", "hashlib", "_hashlib", "functools", "collections",
                                       "learn_cli.engine.conflicts"))
        assert not modules - {"learn_cli.engine.conflicts"}, (n, modules)
        assert ("learn_cli.engine.conflicts" in modules) == (n == 1), (n, modules)  # the pair compared the fixes
        answers.append(answer)
    assert "python -m pytest -q" in answers[-1], answers
    import hashlib

    stem = "bench-1_" + hashlib.sha256(b"bench_1").hexdigest()[:16]  # the name `hashlib` gave it
    assert (tmp_path / "home" / "sessions" / f"{stem}.jsonl").is_file()


def test_a_session_end_before_a_stop_pays_what_its_hooks_left_undone(tmp_path):
    """Claude Code's SessionEnd still does, through the Store, the store work its session's
    buffer owes (a hook that ran out of time) and learns what the spool holds; the promotion
    check stays for the next Stop. An agent that sends no Stop (Gemini) checks at its end."""
    import json

    cwd = _project(tmp_path)
    base = {"session_id": "s1", "transcript_path": "/t", "cwd": str(cwd), "tool_name": "Bash"}
    fail = dict(base, hook_event_name="PostToolUseFailure", tool_input={"command": "pytest -q"},
                error="Exit code 127\nbash: pytest: command not found", is_interrupt=False, tool_use_id="t1")
    fix = dict(base, hook_event_name="PostToolUse", tool_input={"command": "python -m pytest -q"},
               tool_response={"stdout": "1 passed", "stderr": ""}, tool_use_id="t2")
    for payload in (fail, fix):
        _hook(tmp_path, ["capture"], payload, cwd)
    home = tmp_path / "home"
    buffer = home / "sessions" / "s1.jsonl"
    lines = buffer.read_text().splitlines()
    owed = [json.loads(line) for line in lines if '"todo"' in line][-1]  # the pair's work, as a hook left it undone
    with buffer.open("a") as fh:
        fh.write(json.dumps(dict(owed, todo=owed["todo"])) + "\n")
    end = dict(base, hook_event_name="SessionEnd")
    _answer, modules = _hook(tmp_path, ["capture"], end, cwd, probe=HEAVY + ("learn_cli.engine.promotion",))
    assert "learn_cli.store.api" in modules and "learn_cli.engine.promotion" not in modules, modules
    assert not any('"todo"' in line for line in buffer.read_text().splitlines()[len(lines) + 1:])  # paid
    assert (home / "sessions" / "pending" / "s1.json").exists()  # the check: the next Stop's
    spool = home / "spool"
    spool.mkdir(exist_ok=True)
    (spool / "other.jsonl").write_text("")  # something spooled (here empty): the Store's way replays it
    _answer, modules = _hook(tmp_path, ["capture"], end, cwd)
    assert "learn_cli.store.api" in modules, modules
    (spool / "other.jsonl").unlink(missing_ok=True)  # the replay may have cleared it
    _answer, modules = _hook(tmp_path, ["capture", "--agent", "gemini"], dict(end, session_id="s2"), cwd,
                             probe=HEAVY + ("learn_cli.engine.promotion",),
                             before="from learn_cli.capture import hook; hook.DEADLINES['session_end'] = 60.0; ")
    assert "learn_cli.engine.promotion" in modules, modules  # Gemini sends no Stop: its end checks
    assert not (home / "sessions" / "pending" / "s1.json").exists()


def _second_fix_modules(tmp_path, fixes: tuple[str, str], probe: tuple) -> set:
    """The probed modules a pair imports whose key already holds the first fix in the project."""
    cwd = _project(tmp_path)
    base = {"transcript_path": "/t", "cwd": str(cwd), "tool_name": "Bash"}
    fail = dict(base, hook_event_name="PostToolUseFailure", tool_input={"command": "pytest -q"},
                error="Exit code 127\nbash: pytest: command not found", is_interrupt=False)
    modules = set()
    for n, fix in enumerate(fixes):
        sid = f"s{n}"
        _hook(tmp_path, ["capture"], dict(fail, session_id=sid, tool_use_id=f"f{n}"), cwd)
        ok = dict(base, session_id=sid, hook_event_name="PostToolUse", tool_use_id=f"o{n}",
                  tool_input={"command": fix}, tool_response={"stdout": "1 passed", "stderr": ""})
        modules = _hook(tmp_path, ["capture"], ok, cwd, probe=probe)[1]
    return modules


def test_a_second_fix_of_a_known_error_is_compared_without_rapidfuzz(tmp_path):
    """A pair whose key already holds another fix in the project asks whether the new fix is a
    refinement of the old one (engine.merge's character ratio): ~13 ms of rapidfuzz import in
    a hook; engine.distance.indel_ratio gives the same figure."""
    fixes = ("python -m pytest -q tests", "python -m pytest tests -q")  # the same words, reordered
    modules = _second_fix_modules(tmp_path, fixes, ("rapidfuzz", "learn_cli.engine.merge"))
    assert modules == {"learn_cli.engine.merge"}, modules  # compared, without rapidfuzz


def test_a_second_fix_sharing_few_words_is_not_compared(tmp_path):
    """A fix that shares too few words with the other to be a refinement of it is another fix
    (engine.knowledge.may_refine): engine.conflicts, ~3 M instructions to import, is not asked."""
    fixes = ("python -m pytest -q", "python3 -m pytest -q --no-header")
    modules = _second_fix_modules(tmp_path, fixes, ("learn_cli.engine.conflicts", "learn_cli.engine.merge"))
    assert modules == set(), modules


def _seed_active(tmp_path, cwd, context: str):
    from learn_cli.store.api import Store
    from learn_cli.store.project import identify
    from learn_cli.store.record import make_record
    from learn_cli.text.redact import redact_project

    project = redact_project(identify(cwd))
    store = Store(tmp_path / "home", warn_stderr=False)
    store.register_project(project)
    store.put(store.layout.learnings(project.id), make_record(projects=[project.id], context=context,
                                                              fix="run make setup first", key=f"txt:{context}"))
    store.close()
    return project


def _sessions_counted(tmp_path) -> int:
    from learn_cli.store import analytics

    return analytics.read(tmp_path / "home" / "analytics" / "stats.json").get("totals", {}).get("sessions", 0)


def test_a_session_start_answers_from_the_kept_digest_without_the_store(tmp_path):
    """The first SessionStart makes the digest and keeps it; the next ones read that file: the
    same answer and the same counts, without sqlite3, pathlib, the Store or the redactor. A
    write to the project's learnings makes the kept digest stale: the next answer shows it."""
    cwd = _project(tmp_path)
    _seed_active(tmp_path, cwd, "the build needs generated headers")
    start = {"session_id": "s1", "transcript_path": "/t", "cwd": str(cwd), "hook_event_name": "SessionStart",
             "source": "startup"}
    made, made_with = _hook(tmp_path, ["capture"], start, cwd)
    assert "the build needs generated headers" in made and "_sqlite3" in made_with
    for argv in (["capture"], ["context", "--hook"]):
        kept, modules = _hook(tmp_path, argv, start, cwd, probe=HEAVY + ("re", "json", "collections"))
        assert kept == made
        assert not modules & {"sqlite3", "_sqlite3", "datetime", "pathlib", "typing", "learn_cli.store.api",
                              "learn_cli.text.redact", "learn_cli.engine.context"}, argv
        assert not modules & {"re", "collections"}, argv  # no regular expression at all (text/rx.py)
        if argv[0] == "context":
            assert "json" not in modules, modules
    assert _sessions_counted(tmp_path) == 3

    _seed_active(tmp_path, cwd, "the linter wants tabs")
    fresh, modules = _hook(tmp_path, ["capture"], start, cwd)
    assert "the linter wants tabs" in fresh and "_sqlite3" in modules


def test_a_project_whose_root_holds_a_secret_is_never_answered_unredacted(tmp_path):
    """The kept digest's stamp holds the project's name and root as stored (redacted); the
    fast path compares them with the raw ones, so a root that holds a token never matches and
    every SessionStart goes the Store's way, which redacts."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    cwd = _project(tmp_path, token)
    _seed_active(tmp_path, cwd, "the build needs generated headers")
    start = {"session_id": "s1", "transcript_path": "/t", "cwd": str(cwd), "hook_event_name": "SessionStart",
             "source": "startup"}
    for _ in range(2):
        answer, modules = _hook(tmp_path, ["capture"], start, cwd)
        assert "the build needs generated headers" in answer and token not in answer
        assert "learn_cli.text.redact" in modules


def test_the_modules_spooling_needs_hold_their_sha_modules_once_imported():
    """The hard stop spools an event once `_ready_to_spool` has imported what spooling needs;
    spooling names the project by a SHA-256. Were `_sha256` imported at the first digest, the
    work could be interrupted between its creation and its initialisation, and the hard stop
    would call it without its state (a SIGSEGV seen once in the deadline attack)."""
    probe = ("import sys; from learn_cli.capture import hook; hook._ready_to_spool(); "
             "print(sorted(m for m in ('_sha1', '_sha256', '_sha2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(Path(learn_cli.__file__).parents[1])}).stdout
    assert out.strip() == ("['_sha1', '_sha2']" if sys.version_info >= (3, 12) else "['_sha1', '_sha256']")


def test_a_hook_process_runs_without_the_cyclic_collector(tmp_path):
    """The hook's own process disables the cyclic garbage collector (~6 M instructions of a
    failure's imports: learn_cli.__main__._quiet_collector); a call in process (tests, argv given)
    leaves it as it was."""
    import json

    cwd = _project(tmp_path)
    payload = json.dumps({"session_id": "s1", "cwd": str(cwd), "hook_event_name": "PostToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a", "stderr": ""}})
    env = {"SELF_LEARNING_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for argv, enabled in (("None", "False"), ("['capture']", "True")):
        # the hook's own process ends in os._exit (_hook_end): asked there
        probe = ("import gc, os, sys; sys.argv = ['learn', 'capture']; from learn_cli.__main__ import main; "
                 "end = os._exit; os._exit = lambda code: (print(gc.isenabled(), flush=True), end(code)); "
                 f"main({argv}); print(gc.isenabled())")
        out = subprocess.run([sys.executable, "-c", probe], input=payload, capture_output=True, text=True,
                             check=True, env=env, cwd=cwd).stdout
        assert out.splitlines()[-1] == enabled, (argv, out)


def test_a_hook_process_ends_without_the_interpreters_finalisation(tmp_path):
    """The hook's own process ends with os._exit once its answer is flushed (~12 M instructions
    of finalisation: learn_cli.__main__._hook_end): its JSON on stdout, exit code 0, and no
    `atexit` work after it; in process (argv given) main returns and the caller goes on."""
    import json

    cwd = _project(tmp_path)
    _seed_active(tmp_path, cwd, "the build needs generated headers")
    start = json.dumps({"session_id": "s1", "transcript_path": "/t", "cwd": str(cwd),
                        "hook_event_name": "SessionStart", "source": "startup"})
    env = {"SELF_LEARNING_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for argv, after in (("None", False), ("['capture']", True)):
        probe = ("import atexit, sys; sys.argv = ['learn', 'capture']; from learn_cli.__main__ import main; "
                 "atexit.register(lambda: print('finalised')); "
                 f"code = main({argv}); print('returned', code)")
        proc = subprocess.run([sys.executable, "-c", probe], input=start, capture_output=True, text=True,
                              check=False, env=env, cwd=cwd)
        lines = proc.stdout.splitlines()
        assert proc.returncode == 0, proc.stderr
        answer = json.loads(lines[0])
        assert "the build needs generated headers" in answer["hookSpecificOutput"]["additionalContext"]
        assert lines[1:] == (["returned 0", "finalised"] if after else []), (argv, lines)


@pytest.mark.parametrize("command", [["recall", "headers"], ["stats"], ["graph", "--json"], ["show", "ID"]])
def test_a_fast_read_process_ends_without_the_collector_and_finalisation(tmp_path, command):
    """`learn recall`, `stats`, `show` and `graph` on their fast path (piped) run without the
    cyclic collector and end with os._exit once their output is flushed, as a hook does
    (~15 M instructions of a piped recall's ~103 M: learn_cli.__main__._quiet_collector and
    _fast_end): the same output and exit code, no `atexit` work after it; in process (argv
    given) main returns, the collector as it was, and the caller goes on."""
    cwd = _project(tmp_path)
    _seed_active(tmp_path, cwd, "the build needs generated headers")
    rid = _one_id(tmp_path)
    argv = [rid if word == "ID" else word for word in command]
    env = {"SELF_LEARNING_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    outputs = []
    for given, after in (("None", False), (repr(argv), True)):
        probe = ("import atexit, gc, os, sys; from learn_cli.__main__ import main; "
                 f"sys.argv = ['learn', *{argv!r}]; end = os._exit; "
                 "os._exit = lambda code: (print('collector', gc.isenabled(), flush=True), end(code)); "
                 "atexit.register(lambda: print('finalised')); "
                 f"code = main({given}); print('returned', code, gc.isenabled())")
        proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False,
                              env=env, cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        output, _, tail = proc.stdout.rpartition("\n" + ("returned" if after else "collector"))
        assert tail == (" 0 True\nfinalised\n" if after else " False\n"), (given, proc.stdout)
        outputs.append(output)
    assert outputs[0] == outputs[1] and outputs[0].strip()


def test_a_fast_read_process_with_a_closed_pipe_ends_as_before(tmp_path):
    """A fast read path whose output cannot be flushed (a closed pipe) leaves the end to the
    interpreter (learn_cli.__main__._fast_end), which says what it always said: nothing on
    stderr, exit code 0, as the command's guard made it."""
    cwd = _project(tmp_path)
    _seed_active(tmp_path, cwd, "the build needs generated headers")
    env = {"SELF_LEARNING_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    probe = ("import sys; from learn_cli.__main__ import main; sys.argv = ['learn', 'recall', 'headers']; "
             "sys.exit(main())")
    proc = subprocess.Popen([sys.executable, "-c", probe], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=cwd)
    proc.stdout.close()  # closed before the command writes
    _out, err = proc.communicate()
    assert proc.returncode == 0 and b"Traceback" not in err, err


def _one_id(tmp_path) -> str:
    from learn_cli.store.api import Store

    store = Store(tmp_path / "home", warn_stderr=False)
    try:
        store.refresh()
        return store.index.db.execute("SELECT id FROM learnings LIMIT 1").fetchone()[0]
    finally:
        store.close()


def test_a_failure_whose_error_line_is_normalised_imports_no_re(tmp_path):
    """`text.keys` normalises an error line that no canonical form covers with a dozen
    substitutions; a replacement template holding a backslash (`r"\\1"`) made `_sre` import
    `re` itself (`re._compile_template`) at every such failure, and at the success after it
    (~13 M instructions of ~92 M on a realistic failure: bench/NOTES.md, tenth pass)."""
    cwd = _project(tmp_path)
    base, _fail, _fix, plain = _tool_events(cwd, "s1")
    fail = dict(base, hook_event_name="PostToolUseFailure", tool_input={"command": "make -C build deploy"},
                error="Exit code 2\nmake: *** No rule to make target 'deploy'.  Stop.", is_interrupt=False)
    _hook(tmp_path, ["capture"], dict(plain, tool_use_id="t0"), cwd)  # creates the store
    _hook(tmp_path, ["capture"], dict(fail, tool_use_id="t1", session_id="warm_up"), cwd)  # the regex cache
    _hook(tmp_path, ["capture"], dict(plain, tool_use_id="t2", session_id="warm_up"), cwd)
    for n, payload in enumerate((fail, plain)):
        _answer, modules = _hook(tmp_path, ["capture"], dict(payload, tool_use_id=f"t{n + 3}"), cwd,
                                 probe=("re", "enum"))
        assert not modules, (n, modules)


def test_a_hook_whose_learn_is_half_reinstalled_is_skipped_with_status_0(tmp_path):
    """A reinstall under a running agent (pip removes the old files, then writes the new): a hook
    started in between meets a module that is not there. It printed a traceback and exited 1,
    which the agent shows as a failed hook; it is skipped now, with one line on stderr."""
    import shutil

    copy = tmp_path / "site" / "learn_cli"
    shutil.copytree(os.path.dirname(learn_cli.__file__), copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "capture" / "hook.py").unlink()
    payload = json.dumps({"hook_event_name": "PostToolUseFailure", "session_id": "s", "cwd": str(tmp_path),
                          "tool_name": "Bash", "tool_input": {"command": "pytest"}, "error": "Exit code 1"})
    env = {**os.environ, "SELF_LEARNING_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-S", str(copy / "hook_entry.py"), "capture"], input=payload,
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr.startswith("learn: this hook could not run (ImportError") and proc.stderr.count("\n") == 1
