"""Dedup keys and signatures (learn_cli.text.keys)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learn_cli.text import keys
from learn_cli.text.failure import meaningful_lines
from learn_cli.text.keys import (
    error_key,
    error_signature,
    failing_step,
    is_generic_signature,
    normalize_path,
    shorten_paths,
    text_key,
    tokens,
)

CORPUS = [
    json.loads(line)
    for line in (Path(__file__).resolve().parent / "data" / "error_corpus.jsonl").read_text("utf-8").splitlines()
    if line.strip()
]
KEY_RE = re.compile(r"err:[0-9a-f]{16}")


def _traceback(path: str, module: str) -> str:
    return (
        "Exit code 1\nTraceback (most recent call last):\n"
        f'  File "{path}", line 3, in <module>\n    from {module} import jwt\n'
        f"ModuleNotFoundError: No module named '{module}'"
    )


# ---------------------------------------------------------------------------
# The SPEC's examples


def test_missing_module_from_two_projects_is_one_learning():
    a = _traceback("/home/a/web-api/app.py", "jose")
    b = _traceback("/srv/ml/train.py", "jose")
    assert error_signature(a) == error_signature(b) == "modulenotfounderror: no module named 'jose'"
    assert error_key(a, "python app.py") == error_key(b, "python3 train.py")
    collected = (
        "Exit code 2\nE   ModuleNotFoundError: No module named 'jose'\nERROR tests/test_auth.py\n1 error in 0.31s"
    )
    assert error_key(collected, "uv run pytest -q") == error_key(a, "python app.py")
    assert error_key(_traceback("/srv/ml/train.py", "torch"), "python train.py") != error_key(b, "python train.py")


def test_python2_style_import_error_has_the_same_signature():
    assert error_signature("ImportError: No module named jose") == "modulenotfounderror: no module named 'jose'"


@pytest.mark.parametrize(
    "text",
    [
        "Exit code 127\nbash: pytest: command not found",
        "Exit code 127\n/bin/bash: line 1: pytest: command not found",
        "Exit code 127\nzsh: command not found: pytest",
        "Exit code 127\n(eval):1: command not found: pytest",
        "Exit code 127\n/bin/sh: 1: pytest: not found",
        "'pytest' is not recognized as an internal or external command,\noperable program or batch file.",
        "Exit code 1\nwhich: no pytest in (/usr/local/bin:/usr/bin)",
    ],
)
def test_command_not_found_in_every_shell_is_one_signature(text):
    assert error_signature(text) == "command not found: pytest"
    assert error_key(text, "pytest -q") == error_key("bash: pytest: command not found", "cd api && pytest")


def test_not_found_words_that_are_not_programs():
    assert not error_signature("Exit code 1\nFile not found").startswith("command not found")
    assert error_signature("nargo not found") == "command not found: nargo"


# ---------------------------------------------------------------------------
# What varies between occurrences is removed


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # line and column numbers, diagnostic locations
        ("src/a.ts(3,20): error TS2322: Type 'string' is not assignable to type 'number'.",
         "src/b.ts(91,7): error TS2322: Type 'string' is not assignable to type 'number'."),
        ("calc.c:5:5: error: expected ';' before 'return'", "main.c:120:13: error: expected ';' before 'return'"),
        ("Expecting value: line 1 column 1 (char 0)", "Expecting value: line 7 column 12 (char 301)"),
        # hex addresses, hashes, uuids
        ("TypeError: <Foo object at 0x7f3b2c1d0e50> is not callable",
         "TypeError: <Foo object at 0x10a2b3c4d> is not callable"),
        ("fatal: bad object 3f9a2b1c0d4e5f6a7b8c", "fatal: bad object a1b2c3d4e5f60718293a"),
        ("KeyError: 'job-1b4e28ba-2fa1-11d2-883f-0016d3cca427'",
         "KeyError: 'job-9c5b94b1-35ad-49bb-b118-8e8fc24abf80'"),
        # temp names and /tmp paths
        ("OSError: cannot write /tmp/pytest-of-ann/pytest-12/test_x0/out.bin",
         "OSError: cannot write /tmp/pytest-of-bo/pytest-3/test_y1/res.bin"),
        ("error: failed to open tmpa8x2k_q1.json for writing", "error: failed to open tmpz91lq0pe.json for writing"),
        # timestamps and durations
        ("2026-11-29T17:55:00Z ERROR worker stalled after 31.2s",
         "2026-12-01T08:01:44Z ERROR worker stalled after 2.5s"),
        ("[12:01:02] error: lock wait timeout exceeded (took 1503ms)",
         "[23:59:59] error: lock wait timeout exceeded (took 12ms)"),
        # PIDs
        ("(node:303499) UnhandledPromiseRejectionWarning: Error: socket closed",
         "(node:12) UnhandledPromiseRejectionWarning: Error: socket closed"),
        ("sshd[4411]: error: kex_exchange_identification: banner line contains invalid characters",
         "sshd[17]: error: kex_exchange_identification: banner line contains invalid characters"),
        # versions where they are not the point
        ("thread 'main' panicked at 'boom' (rustc 1.75.0) in serde v1.0.193",
         "thread 'main' panicked at 'boom' (rustc 1.79.1) in serde v1.0.200"),
        # home folders and absolute paths
        ("IsADirectoryError: [Errno 21] Is a directory: '/home/alice/proj/data'",
         "IsADirectoryError: [Errno 21] Is a directory: '/Users/bob/work/data'"),
        ("error: could not find `Cargo.toml` in `/home/alice/x` or any parent directory",
         "error: could not find `Cargo.toml` in `/Users/bob/y/z` or any parent directory"),
        ("cat: /home/alice/proj/README.mdx: No such file or directory",
         "cat: /Users/bob/code/README.mdx: No such file or directory"),
        # quotes
        ("error: unknown type name ‘TypeKind’", "error: unknown type name 'TypeKind'"),
        # the character a Windows console could not print (harvest rounds 9-37: ✓, ✅, 📍, →)
        ("UnicodeEncodeError: 'charmap' codec can't encode character '\\u2705' in position 0: character maps to "
         "<undefined>", "UnicodeEncodeError: 'charmap' codec can't encode character '\\U0001f4cd' in position 3: "
         "character maps to <undefined>"),
    ],
)
def test_variable_parts_are_removed(first, second):
    assert error_signature(first) == error_signature(second)
    assert error_key(first, "make") == error_key(second, "make")


def test_the_users_name_is_removed(monkeypatch):
    monkeypatch.setenv("USER", "zoltan")
    keys._user_re.cache_clear()
    try:
        signature = error_signature("error: remote rejected push by zoltan (pre-receive hook declined)")
        assert "zoltan" not in signature and "<user>" in signature
    finally:
        keys._user_re.cache_clear()


def test_versions_are_kept_where_they_are_the_point():
    a = error_signature("ERROR: No matching distribution found for torch==1.2.3")
    b = error_signature("ERROR: No matching distribution found for torch==2.0.1")
    assert "1.2.3" in a and a != b


def test_signature_is_lower_case_collapsed_and_ansi_free():
    signature = error_signature("Exit code 1\n\x1b[31mError:\x1b[0m   Something   BROKE in   the   parser\t\t!")
    assert signature == "error: something broke in the parser !"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cat: README.mdx: No such file or directory", "no such file or directory: readme.mdx"),
        ("sed: can't read AGENTS.md: No such file or directory", "no such file or directory: agents.md"),
        ("tail: cannot open 'logs/app.log' for reading: No such file or directory",
         "no such file or directory: app.log"),
        ("/bin/bash: line 1: cd: build: No such file or directory", "cd: no such file or directory: build"),
        ("(eval):cd:1: no such file or directory: circuits/private_vote",
         "cd: no such file or directory: private_vote"),
        ("FileNotFoundError: [Errno 2] No such file or directory: '/srv/x/data/train.csv'",
         "no such file or directory: train.csv"),
        ("python3: can't open file '/home/a/p/main.py': [Errno 2] No such file or directory",
         "no such file or directory: main.py"),
        ("main.c:1:10: fatal error: openssl/ssl.h: No such file or directory",
         "fatal error: openssl/ssl.h: no such file or directory"),
        ("bash: ./deploy.sh: Permission denied", "permission denied: deploy.sh"),
        ("zsh: permission denied: ./deploy.sh", "permission denied: deploy.sh"),
        ("Got permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: "
         "Get ...",
         "permission denied: /var/run/docker.sock"),
        ("PermissionError: [Errno 13] Permission denied: '/home/a/proj/out.log'", "permission denied: out.log"),
        ("git@github.com: Permission denied (publickey).", "permission denied (publickey)"),
        ("Error: Cannot find module 'express'\nRequire stack:\n- /srv/app/server.js", "cannot find module 'express'"),
        ("npm error 404  'left-padd@*' is not in this registry.", "npm: package not found: left-padd"),
    ],
)
def test_canonical_forms(text, expected):
    assert error_signature(text) == expected


def test_unknown_options_name_what_rejected_them():
    assert (
        error_signature("error: unexpected argument '--relase' found", "cargo build --relase")
        == "cargo: unknown option --relase"
    )
    assert error_signature("train.py: error: unrecognized arguments: --lr 0.01", "python train.py --lr 0.01") == (
        "python train.py: unknown option --lr"
    )
    assert error_key("error: unexpected argument '--relase' found", "cargo build --relase") != error_key(
        "error: unexpected argument '--relase' found", "forge build --relase"
    )


# ---------------------------------------------------------------------------
# Specific errors merge across commands; generic ones do not


def test_specific_error_of_different_commands_is_one_key():
    text = "Exit code 1\nKeyError: 'DATABASE_URL'"
    assert error_key(text, "python manage.py runserver") == error_key(text, "uv run pytest tests/")


@pytest.mark.parametrize(
    "generic",
    ["Exit code 1", "Exit code 1\n1 failed, 14 passed in 1.21s", "Exit code 1\nerror", "Exit code 1\nnpm ERR! code 1",
     "Exit code 139\nSegmentation fault (core dumped)", "Exit code 137\nKilled", "Exit code 1\nAssertionError"],
)
def test_generic_failures_of_different_commands_are_not_merged(generic):
    commands = ["npm run build", "npm test", "pytest -q", "python train.py", "python app.py", "cargo build", "git push"]
    assert len({error_key(generic, command) for command in commands}) == len(commands)


def test_same_generic_failure_of_the_same_command_is_merged():
    a = error_key("Exit code 1\n1 failed, 14 passed in 1.21s", "pytest -q")
    b = error_key("Exit code 1\n\x1b[31m1 failed, 14 passed in 3.02s\x1b[0m", "uv run pytest -x")
    assert a == b
    assert error_key("Exit code 1", "cd web && npm run build 2>&1 | tail -20") == error_key(
        "Exit code 1", "npm run build"
    )


def test_generic_signatures():
    for generic in ("", "exit code 1", "1 failed, 3 passed in <dur>", "error", "npm err! code 1", "killed",
                    "segmentation fault (core dumped)", "assertionerror"):
        assert is_generic_signature(generic), generic
    for specific in ("keyerror: 'database_url'", "command not found: pytest", "error: externally-managed-environment",
                     "fatal: not a git repository (or any of the parent directories): .git"):
        assert not is_generic_signature(specific), specific


def test_path_tools_fold_in_the_tool_and_the_target():
    missing = "Error: String to replace not found in file.\nString: foo()"
    a = error_key(missing, "/home/a/proj/src/app.py", "Edit")
    assert a == error_key(missing, "/Users/b/work/proj/src/app.py", "Edit")
    assert a != error_key(missing, "/home/a/proj/src/db.py", "Edit")
    assert a != error_key(missing, "/home/a/proj/src/app.py", "MultiEdit")
    assert error_key("File does not exist.", "src/app.py", "Read") != error_key(
        "File does not exist.", "lib/app.py", "Read"
    )
    fetch = "Error: Request failed with status code 403"
    assert error_key(fetch, "https://medium.com/@a/post-1", "WebFetch") == error_key(
        fetch, "https://medium.com/@b/x?y=1", "WebFetch"
    )
    assert error_key(fetch, "https://medium.com/@a/post-1", "WebFetch") != error_key(
        fetch, "https://example.org/a", "WebFetch"
    )


# ---------------------------------------------------------------------------
# Properties over the corpus


def test_keys_of_the_corpus_are_well_formed():
    for row in CORPUS:
        key = error_key(row["text"], row["command"] or None, row.get("tool"))
        assert KEY_RE.fullmatch(key)
        signature = error_signature(row["text"], row["command"] or None, row.get("tool"))
        assert signature and signature == signature.lower() and "\n" not in signature and len(signature) <= 300
        assert not re.search(r"/home/|/users/|/srv/", signature), signature


def test_signature_is_idempotent_on_the_corpus():
    for row in CORPUS:
        command, tool = row["command"] or None, row.get("tool")
        signature = error_signature(row["text"], command, tool)
        assert error_signature(signature, command, tool) == signature, row["text"]


def test_key_can_be_recomputed_from_the_stored_error_field():
    for row in CORPUS:
        command, tool = row["command"] or None, row.get("tool")
        stored = meaningful_lines(row["text"])
        assert error_key(stored, command, tool) == error_key(row["text"], command, tool), row["text"]


def test_different_errors_of_the_corpus_have_different_keys():
    keys_seen = {}
    for row in CORPUS:
        key = error_key(row["text"], row["command"] or None, row.get("tool"))
        keys_seen.setdefault(key, []).append(row["text"])
    assert all(len(texts) == 1 for texts in keys_seen.values()), [t for t in keys_seen.values() if len(t) > 1]


@settings(max_examples=150, deadline=None)
@given(
    user=st.from_regex(r"[a-z]{3,10}", fullmatch=True),
    project=st.from_regex(r"[a-z][a-z0-9-]{1,15}", fullmatch=True),
    line=st.integers(min_value=1, max_value=99999),
    module=st.sampled_from(["jose", "requests", "numpy", "yaml"]),
)
def test_key_ignores_user_project_and_line(user, project, line, module):
    text = (
        "Exit code 1\nTraceback (most recent call last):\n"
        f'  File "/home/{user}/{project}/main.py", line {line}, in <module>\n'
        f"ModuleNotFoundError: No module named '{module}'"
    )
    assert error_key(text, f"python /home/{user}/{project}/main.py") == error_key(
        _traceback("/x/y.py", module), "python y.py"
    )


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=300),
    st.one_of(st.none(), st.text(max_size=40)),
    st.one_of(st.none(), st.sampled_from(["Bash", "Read", "Edit", "WebFetch", "x"])),
)
def test_error_key_is_total(text, command, tool):
    assert KEY_RE.fullmatch(error_key(text, command, tool))
    assert isinstance(error_signature(text, command, tool), str)


# ---------------------------------------------------------------------------
# Free text


def test_text_key_matches_trivial_rewordings():
    a = text_key("Always use --platform linux/amd64 with Docker build")
    assert a == text_key("always use --platform linux/amd64 with docker build.")
    assert a == text_key("  Always use the --platform linux/amd64   with Docker build!")
    assert a.startswith("txt:") and len(a) == 20


def test_a_chain_is_keyed_by_the_step_its_error_names():
    rejected = "error: failed to push some refs to 'https://github.com/o/r.git'"
    push = error_key(rejected, "git push", "Bash")
    assert error_key(rejected, 'git add a.md && git commit -m "x" && git push', "Bash") == push
    assert error_key(rejected, "cd repo && git push 2>&1 | tail -3", "Bash") == push
    # no step named, or two: the first working step, as for any command
    pathspec = "fatal: pathspec 'docs/a.md' did not match any files"
    chain = error_key(pathspec, "git add docs/a.md && git commit -m x", "Bash")
    assert chain == error_key(pathspec, "git add b.md", "Bash")
    assert chain != error_key(pathspec, "git commit", "Bash")


def test_a_file_a_look_could_not_find_is_one_failure_whichever_look():
    """Codex reads with `sed -n '1,240p' f`, `nl -ba f`, `cat f`: each finding AGENTS.md missing
    is one failure, whose lesson (where the file is) serves every look. Writing it is not
    looking (`sed -i`, `rm`)."""
    def key(program_said: str, command: str) -> str:
        return error_key(f"{program_said}: No such file or directory", command, "Bash")

    look = key("sed: can't read AGENTS.md", "sed -n '1,240p' AGENTS.md")
    assert look == key("cat: AGENTS.md", "cat AGENTS.md") == key("cat: AGENTS.md", "cd api && cat AGENTS.md")
    assert look == key("head: cannot open 'AGENTS.md' for reading", "head -40 AGENTS.md")
    assert look == key("nl: AGENTS.md", "nl -ba AGENTS.md | sed -n '1,50p'")
    assert look != key("sed: can't read AGENTS.md", "sed -i 's/a/b/' AGENTS.md")
    assert look != key("rm: AGENTS.md", "rm AGENTS.md")


def test_a_rejected_push_is_keyed_by_why():
    """"fetch first" is fixed by pulling, "non-fast-forward" after a rebase by another push, a
    protected branch by a pull request: one message, three failures."""
    def rejected(why: str, ref: str = "main -> main", kind: str = "rejected") -> str:
        return (f"To https://github.com/o/r.git\n ! [{kind}]          {ref} ({why})\n"
                "error: failed to push some refs to 'https://github.com/o/r.git'\nhint: Updates were rejected")
    fetch_first = error_key(rejected("fetch first"), "git push", "Bash")
    signature = error_signature(rejected("fetch first"), "git push", "Bash")
    assert signature == "error: failed to push some refs (fetch first)"
    assert fetch_first == error_key(rejected("fetch first", "dev -> dev"), "git push origin dev", "Bash")
    assert fetch_first != error_key(rejected("non-fast-forward"), "git push", "Bash")
    protected = rejected("protected branch hook declined", kind="remote rejected")
    assert fetch_first != error_key(protected, "git push", "Bash")


def test_a_git_chain_cut_before_its_failing_step_is_keyed_by_the_step_its_error_names():
    """Exports cut long commands (`git add a && git commit -m "long…`): git's error still names
    the step that failed (histories: leegmoore-codex, a rejected push twice)."""
    rejected = "error: failed to push some refs to 'https://github.com/o/r.git'"
    push = error_key(rejected, "git push", "Bash")
    assert error_key(rejected, 'git add a.md && git commit -m "docs: a long', "Bash") == push
    assert error_key(rejected, 'git commit -m "docs: a long', "Bash") == push
    assert failing_step('git add a.md && git commit -m "x', rejected) == "git push"
    # a step it shows, or no git step named: the command, as before
    assert failing_step("git push origin main", rejected) == "git push origin main"
    pathspec = "fatal: pathspec 'docs/a.md' did not match any files"
    assert failing_step("git add docs/a.md && git commit -m x", pathspec) == "git add docs/a.md && git commit -m x"
    # not a git chain: nothing is made up
    assert failing_step('make docs && git commit -m "x', rejected) == 'make docs && git commit -m "x'


def test_text_key_keeps_negation_and_meaning_apart():
    assert text_key("use npm for installs") != text_key("don't use npm for installs")
    assert text_key("never commit .env") != text_key("always commit .env")
    assert text_key("use pnpm") != text_key("use npm")
    assert text_key("Don't use npm") == text_key("dont use NPM")


def test_tokens():
    assert tokens("pip install python-jose; docker build --platform linux/amd64 .") == [
        "pip", "install", "python-jose", "docker", "build", "platform", "linux", "amd64",
    ]
    assert tokens("A snake_case name, x, 3") == ["snake_case", "name"]
    assert tokens(None) == []


# ---------------------------------------------------------------------------
# Paths


def test_shorten_paths():
    root = "/home/a/web-api"
    text = "edit /home/a/web-api/src/app.py, not /usr/local/lib/python3.11/site-packages/jose/jwt.py"
    assert shorten_paths(text, root) == "edit src/app.py, not …/jose/jwt.py"
    assert shorten_paths("see /tmp/x and ~/notes", root) == "see /tmp/x and ~/notes"
    assert shorten_paths("fetch https://example.com/a/b/c/d.json now") == "fetch https://example.com/a/b/c/d.json now"
    assert shorten_paths("cd /home/a/web-api/src.", root) == "cd src."
    assert shorten_paths("cd /home/a/web-api", root) == "cd ."
    assert shorten_paths(r"open C:\Users\bo\proj\src\main.rs") == r"open …\src\main.rs"
    assert shorten_paths("") == ""


def test_normalize_path():
    assert normalize_path("/home/a/web-api/src/app.py", "/home/a/web-api") == "src/app.py"
    assert normalize_path("/home/a/web-api", "/home/a/web-api/") == "."
    assert normalize_path("/home/a/web-api2/x.py", "/home/a/web-api") == "<abs>/x.py"
    assert normalize_path("/srv/ml/train.py", None) == "<abs>/train.py"
    assert normalize_path("src/app.py", "/home/a/web-api") == "src/app.py"


# ---------------------------------------------------------------------------
# Import cost


def test_import_is_stdlib_only_and_cheap():
    code = (
        "import sys, time; t = time.process_time(); import learn_cli.text.keys; "
        "d = time.process_time() - t; "
        "heavy = [m for m in ('orjson', 'typer', 'rich', 'rapidfuzz', 'filelock', 'hashlib') if m in sys.modules]; "
        "print(d, heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert out[1].strip() == "[]"
    assert float(out[0]) < 0.05


ERRORS_TAKEN_APART = ("/usr/bin/bash: line 1: C:toolsnode.exe: command not found",)


@pytest.mark.parametrize("error", [
    "/usr/bin/bash: line 1: C:xamppmysqlbinmysql.exe: command not found",  # round 11 (r11-d-031)
    "/usr/bin/bash: line 1: cd: C:cursorlingorabackendai_services: No such file or directory",  # r11-d-033
    "Exit code 1\n/usr/bin/bash: line 1: cd: D:ampa_migraGCodeSourcesai_project: No such file or directory",
    "/usr/bin/bash: line 1: C:Program: command not found",  # `C:\Program Files\…`, split at its space too
])
def test_a_windows_path_git_bash_took_apart_is_one_failure_whatever_the_path(error):
    """Git Bash reads a bare `C:\\xampp\\bin\\mysql.exe` as escapes: whichever program or folder,
    the failure is the quoting (its lesson, "quote it", travels), and it is a syntax one."""
    from learn_cli.text.failure import categorize

    assert error_key(error, "x", "Bash") == error_key(ERRORS_TAKEN_APART[0], "y", "Bash")
    assert keys.path_taken_apart(error) and categorize(error, "x", "Bash") == "syntax"


@pytest.mark.parametrize("error", [
    "bash: line 1: pytest: command not found", "zsh:1: command not found: pytest",
    "bash: C:/x/y.exe: No such file or directory", "(eval):cd:1: no such file or directory: codex-ts",
    "sh: 1: foo: not found",
])
def test_other_missing_programs_and_folders_are_not_a_path_taken_apart(error):
    assert not keys.path_taken_apart(error)
