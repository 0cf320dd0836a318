"""learn_cli.text.shell: segments, tokens, wrappers, program names, normalisation."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learn_cli.text.shell import (
    canonical_program,
    inner_command,
    line_run,
    normalize_command,
    powershell_chained,
    program,
    split_segments,
    split_segments_ops,
    strip_plumbing,
    tokenize,
    unwrap,
    word_spellings,
    words_to_quote,
)

# --- split_segments ---------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "segments"),
    [
        ("a && b || c; d | e", ["a", "b", "c", "d", "e"]),
        ("a |& b", ["a", "b"]),
        ('echo "x && y" && ls', ['echo "x && y"', "ls"]),
        ("echo 'a;b|c' ; pwd", ["echo 'a;b|c'", "pwd"]),
        ("echo $(cd x && pwd) && ls", ["echo $(cd x && pwd)", "ls"]),
        ("echo `a | b`; c", ["echo `a | b`", "c"]),
        ("ls 2>&1 | head", ["ls 2>&1", "head"]),
        ("ls &>/dev/null; pwd", ["ls &>/dev/null", "pwd"]),
        ("npm start & sleep 2", ["npm start", "sleep 2"]),
        ("a\nb", ["a", "b"]),
        ("grep -n x f | head\n-40", ["grep -n x f", "head -40"]),  # an export wrapped the line before an option
        ("cat <<EOF\n- a\nEOF", ["cat <<EOF\n- a\nEOF"]),  # a heredoc's body is left alone
        ("echo a\\;b; c", ["echo a\\;b", "c"]),
        ("  ", []),
        ("", []),
        ("&& a ;; b", ["a", "b"]),
    ],
)
def test_split_segments(command, segments):
    assert split_segments(command) == segments


def test_split_segments_reports_operators():
    assert split_segments_ops("cd a && ls | wc -l; pwd") == [
        ("cd a", "&&"), ("ls", "|"), ("wc -l", ";"), ("pwd", ""),
    ]


def test_a_continued_line_is_one_line():
    """`export A=1 && \\⏎  make` (Gemini CLI, round 22): the backslash-newline is no character
    of the command; a learning stored it as `&& \\ make`, an escaped space to the shell."""
    assert split_segments_ops("export A=1 && \\\n  make -C build && \\\n  ./t") == [
        ("export A=1", "&&"), ("make -C build", "&&"), ("./t", "")]
    assert normalize_command("npm run \\\n  build") == "npm run build"


def test_a_comment_is_no_step():
    """Agents start commands with a comment line (`# check the version⏎python --version`); as
    the shell reads it, a word that starts with `#` begins a comment to the end of its line. A
    `#` inside a word or quotes is none (round 27: two commented commands of other programs were
    once compared by their comments, `#` taken for their program)."""
    assert split_segments_ops("# check the version\npython --version") == [("python --version", "")]
    assert split_segments("npm test # the whole suite") == ["npm test"]
    assert split_segments("ls; # look\nls -la") == ["ls", "ls -la"]
    assert split_segments('git commit -m "fix #12" && curl http://a/#frag') == ['git commit -m "fix #12"',
                                                                              "curl http://a/#frag"]
    assert split_segments("echo ${#a} $#") == ["echo ${#a} $#"]
    assert split_segments("# nothing but a comment") == []


def test_heredoc_body_is_not_split():
    command = "cat > f.py <<'EOF'\nimport a; a.b() && c\nEOF\npython f.py && echo ok"
    assert split_segments(command) == ["cat > f.py <<'EOF'\nimport a; a.b() && c\nEOF", "python f.py", "echo ok"]


def test_heredoc_cut_short_keeps_the_rest():
    assert split_segments("python3 - <<PY\nimport x; x()") == ["python3 - <<PY\nimport x; x()"]


def test_here_string_is_not_a_heredoc():
    assert split_segments('cat <<<"x;y"; ls') == ['cat <<<"x;y"', "ls"]


def test_unbalanced_quotes_swallow_the_rest():
    assert split_segments('echo "unterminated && ls') == ['echo "unterminated && ls']


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab '\"`\\$()|&;<>\n-=/.EOF")), max_size=60))
def test_lexing_never_raises(text):
    segments = split_segments(text)
    assert all(seg == seg.strip() and seg for seg in segments)
    for seg in segments:
        tokenize(seg)
    unwrap(text)
    program(text)
    normalize_command(text, "/a")
    assert isinstance(inner_command(text), str)


# --- tokenize ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("segment", "tokens"),
    [
        ("pip install 'python-jose[cryptography]'", ["pip", "install", "python-jose[cryptography]"]),
        ('git commit -m "fix: a \\"b\\""', ["git", "commit", "-m", 'fix: a "b"']),
        ("echo a\\ b", ["echo", "a b"]),
        ("ls foo\\\nbar", ["ls", "foobar"]),
        ("echo 'unbalanced", ["echo", "unbalanced"]),
        ("a''b", ["ab"]),
        ("''", [""]),
        ("JAVA_HOME=$(/usr/libexec/java_home -v 17) ./gradlew test",
         ["JAVA_HOME=$(/usr/libexec/java_home -v 17)", "./gradlew", "test"]),
        ('cp "$(dirname "$0")/a b" `git rev-parse --show-toplevel`/c',
         ["cp", '$(dirname "$0")/a b', "`git rev-parse --show-toplevel`/c"]),
        ("echo '$(not run)'", ["echo", "$(not run)"]),
        (r"C:\Python311\python.exe -m pip", [r"C:\Python311\python.exe", "-m", "pip"]),
        (r"dir /O-D data\jld2\*.jld2", ["dir", "/O-D", r"data\jld2\*.jld2"]),  # a wildcard in a Windows path
        (r"find . -name \*.py", ["find", ".", "-name", "*.py"]),  # an escaped glob is still one
    ],
)
def test_tokenize(segment, tokens):
    assert tokenize(segment) == tokens


def test_each_word_keeps_its_spelling():
    assert word_spellings('sed -i "s/$OLD/new/" *.md a\\ b \'x\'y') == [
        ("sed", "sed"), ("-i", "-i"), ("s/$OLD/new/", '"s/$OLD/new/"'), ("*.md", "*.md"), ("a b", "a\\ b"),
        ("xy", "\'x\'y")]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $*()`'\"\\\n")), max_size=30))
def test_spellings_are_the_words_of_tokenize(segment):
    spelled = word_spellings(segment)
    assert [word for word, _ in spelled] == tokenize(segment)
    assert all(spelling in segment and tokenize(spelling) == [word] for word, spelling in spelled)


# --- unwrap / program ---------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "tokens"),
    [
        ("sudo apt install x", ["apt", "install", "x"]),
        ("KEY=$(cast index address $H 9)", ["cast", "index", "address", "$H", "9"]),  # its work is there
        ("SHA=`git rev-parse HEAD | cut -c1-7`", ["git", "rev-parse", "HEAD"]),
        ("sudo -u postgres -E psql -c 'select 1'", ["psql", "-c", "select 1"]),
        ("env", ["env"]),
        ("env -i A=1 B=2 make", ["make"]),
        ("env -u HOME node x.js", ["node", "x.js"]),
        ("FOO=1 BAR='a b' pytest -q", ["pytest", "-q"]),
        ("time pytest", ["pytest"]),
        ("time -p make", ["make"]),
        ("nice -n 10 make", ["make"]),
        ("nohup node server.js", ["node", "server.js"]),
        ("timeout 30 cargo test", ["cargo", "test"]),
        ("timeout -s KILL 5m npm test", ["npm", "test"]),
        ("uv run pytest tests", ["pytest", "tests"]),
        ("uv run --with httpx --python 3.12 python app.py", ["python", "app.py"]),
        ("uvx ruff@0.4 check", ["ruff", "check"]),
        ("uv tool run black .", ["black", "."]),
        ("uv tool install black", ["uv", "tool", "install", "black"]),
        ("poetry run pytest", ["pytest"]),
        ("pipenv run python manage.py test", ["python", "manage.py", "test"]),
        ("npx tsc -p .", ["tsc", "-p", "."]),
        ("npx -y create-vite@latest app", ["create-vite", "app"]),
        ("npx @biomejs/biome check", ["biome", "check"]),
        ("pnpm exec vitest run", ["vitest", "run"]),
        ("pnpm dlx prisma generate", ["prisma", "generate"]),
        ("bunx prettier --check .", ["prettier", "--check", "."]),
        ("bun x tsc", ["tsc"]),
        ("yarn dlx tsc", ["tsc"]),
        ("npm exec -- eslint .", ["eslint", "."]),
        ("bundle exec rspec", ["rspec"]),
        ("python -m pytest -x", ["pytest", "-x"]),
        ("python3 -m pip install x", ["pip", "install", "x"]),
        ("py -m venv .venv", ["venv", ".venv"]),
        ("python -X importtime -m mypy src", ["mypy", "src"]),
        ("python app.py", ["python", "app.py"]),
        ("python -c 'print(1)'", ["python", "-c", "print(1)"]),
        (".venv/bin/ruff check .", ["ruff", "check", "."]),
        ("./node_modules/.bin/tsc", ["tsc"]),
        ("/usr/bin/python3 x.py", ["python3", "x.py"]),
        ("source .venv/bin/activate && pytest", ["pytest"]),
        (". ./env.sh && npm test", ["npm", "test"]),
        ("cd backend && npm test", ["npm", "test"]),
        ("cd a && cd b && make", ["make"]),
        ("export A=1; go test ./...", ["go", "test", "./..."]),
        ("A=1 && B=2 && cast call x", ["cast", "call", "x"]),
        ("cd src", ["cd", "src"]),
        ("curl -s x | python3 -m json.tool", ["curl", "-s", "x"]),
        ("bash -lc 'cd x && go test ./...'", ["go", "test", "./..."]),
        ("/bin/zsh -lc \"yarn prettier --write .\"", ["yarn", "prettier", "--write", "."]),
        ("bash scripts/run.sh --fast", ["run.sh", "--fast"]),
        ("sh -x ./build.sh", ["build.sh"]),
        ("command -v python", ["command", "-v", "python"]),
        ("command git status", ["git", "status"]),
        ("sudo env PATH=/x uv run python -m pytest", ["pytest"]),
        ("xargs -n1 rm", ["rm"]),
        # rtk's hook sends every command of its user so; its own runners and `read` too
        ("rtk git status", ["git", "status"]),
        ("rtk -v cargo test", ["cargo", "test"]),
        ("rtk test pytest -x tests/", ["pytest", "-x", "tests/"]),
        ("rtk proxy npm install express", ["npm", "install", "express"]),
        ("rtk read src/app.py", ["cat", "src/app.py"]),
        ("rtk python3 -m pytest", ["pytest"]),
        ("rtk gain", ["gain"]),
        # Windows PowerShell reads a first word that is no option as -Command's; pwsh as -File's
        ('powershell "Get-Process -Id 17352 | Select-Object Id"', ["Get-Process", "-Id", "17352"]),
        ('powershell -NoProfile -ExecutionPolicy Bypass "Stop-Process -Id 4 -Force"',
         ["Stop-Process", "-Id", "4", "-Force"]),
        ("powershell .\\deploy.ps1", ["powershell", ".\\deploy.ps1"]),
        ('pwsh "a b"', ["pwsh", "a b"]),
        ('pwsh -NoProfile -c "npm test"', ["npm", "test"]),  # its switches before -Command
        ("$env:NODE_OPTIONS='--openssl-legacy-provider'; cd web; npm run dev", ["npm", "run", "dev"]),
        # cmd's `if [not] exist PATH command`, sent to bash on Windows
        ('if not exist "D:\\app\\db" mkdir "D:\\app\\db"', ["mkdir", "D:\\app\\db"]),
        ('if not exist lib (git clone https://x/lib.git lib) else (echo "there")',
         ["git", "clone", "https://x/lib.git", "lib"]),
        ("if [ -d x ]; then ls; fi", ["if", "[", "-d", "x", "]"]),
        # a package manager's own options before `exec`
        ("pnpm --filter @x/api exec tsc --noEmit", ["tsc", "--noEmit"]),
        ("pnpm -C web exec vite build", ["vite", "build"]),
        ("npm -w pkg exec jest", ["jest"]),
        ("pnpm --filter api typecheck", ["pnpm", "--filter", "api", "typecheck"]),
        ("", []),
    ],
)
def test_unwrap(command, tokens):
    assert unwrap(command) == tokens


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("python3 app.py", "python"),
        ("python3.11 -V", "python"),
        ("/usr/local/bin/Python3 x", "python"),
        ("pip3 install x", "pip"),
        ("pip3.12 install x", "pip"),
        (r"C:\Python311\python.exe app.py", "python"),
        (r"C:\Python311\python.exe -m pip list", "pip"),
        ("sudo -E env X=1 .venv/bin/python3 -m pytest -q", "pytest"),
        ("cd web && npx tsc", "tsc"),
        ("Make all", "make"),
        ("git -C repo status", "git"),
        ("   ", ""),
    ],
)
def test_program(command, name):
    assert program(command) == name


def test_canonical_program_keeps_other_names():
    assert canonical_program("pipenv") == "pipenv"
    assert canonical_program("pytest") == "pytest"
    assert canonical_program("node.exe") == "node"
    assert canonical_program("pypy3") == "python"


# --- normalize_command ----------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "root", "expected"),
    [
        ("  pytest   tests  ", None, "pytest tests"),
        ("pytest /home/u/proj/tests 2>&1 | tail -20", "/home/u/proj", "pytest tests"),
        ("ls /home/u/proj 2>/dev/null | head -n 5 | head", "/home/u/proj/", "ls ."),
        ("cd /home/u/proj && make", "/home/u/proj", "make"),  # cd to the root is plumbing
        ("cd /home/u/proj/backend && make", "/home/u/proj", "cd backend && make"),  # a subfolder is not
        ("cd /home/u/proj", "/home/u/proj", "cd ."),
        ("cat /home/u/proj2/x", "/home/u/proj", "cat /home/u/proj2/x"),
        ("make >/dev/null 2>&1", None, "make"),
        ("make &>/dev/null", None, "make"),
        ("pytest | tail -n +5 | head -3", None, "pytest"),
        ("grep x f | head -20 | wc -l", None, "grep x f | head -20 | wc -l"),
        ("cargo test 2>&1 | grep -E 'FAILED|panicked'", None, "cargo test"),  # grep of a job
        ("ps aux | grep node", None, "ps aux | grep node"),  # grep of a listing: the question
        ("git log --oneline | grep fix | head -3", None, "git log --oneline | grep fix"),
        ("cmake --build build 2>&1 | tail -5", None, "cmake --build build"),
        ("make -s 2>&1 && echo \"BUILD OK\"", None, "make -s"),
        ("pytest; echo \"exit: $?\"", None, "pytest"),
        ("npm test || true", None, "npm test"),
        ("echo '=== build ===' && make && echo done", None, "make"),
        ("echo \"key: $(cast index address $H 9)\"", None, "echo \"key: $(cast index address $H 9)\""),
        ("echo x > f && make", None, "echo x > f && make"),
        ("echo hello", None, "echo hello"),
        ("timeout 30 cargo test --lib", None, "cargo test --lib"),
        ("cd /r && timeout -s KILL 5m npm test 2>/dev/null", "/r", "npm test"),
        ("make\nmake install", None, "make; make install"),
        ("tail -f log.txt", None, "tail -f log.txt"),
    ],
)
def test_normalize_command(command, root, expected):
    assert normalize_command(command, root) == expected


def test_plumbing_variants_of_one_fix_are_equal():
    """Eight copies of one fix from the corpus differ only by plumbing (issue 10, cause 2)."""
    variants = [
        "cmake --build build", "cmake --build build 2>&1", "cmake --build build 2>&1 | tail -5",
        "cmake --build build 2>&1 | tail -3 && echo OK", "cmake --build build; echo \"exit: $?\"",
        "cd /home/scott/code/claudec99 && cmake --build build 2>&1 | head -20",
        "timeout 120 cmake --build build >/dev/null 2>&1",
        "cmake --build build 2>&1 | grep -E 'error|warning'",
    ]
    assert {normalize_command(v, "/home/scott/code/claudec99") for v in variants} == {"cmake --build build"}


def test_strip_plumbing_names_what_it_removed():
    assert strip_plumbing("pytest; echo $?").removed == {"chatter", "hides_status"}
    assert strip_plumbing("pytest || true").removed == {"chatter", "hides_status"}
    assert strip_plumbing("pytest && echo OK").removed == {"chatter"}
    assert strip_plumbing("pytest 2>&1 | grep FAIL").removed == {"redirect", "grep"}
    assert strip_plumbing("ps aux | grep node").removed == frozenset()


def test_the_programs_a_command_runs_and_its_timeout_prefixes():
    from learn_cli.text.shell import command_programs, drop_timeout, timeout_prefixes

    command = "cd web && timeout -s KILL 30s pytest -q 2>&1 | tail -5"
    assert command_programs(command) == {"cd", "timeout", "tail"}
    assert command_programs("npm test && echo OK") == {"npm", "echo"}
    assert timeout_prefixes(command) == ["timeout -s KILL 30s"] and timeout_prefixes("npm test") == []
    assert drop_timeout(command) == "cd web && pytest -q 2>&1 | tail -5"
    assert drop_timeout("npm test") is None
    assert normalize_command(command) == "cd web && pytest -q"
    assert normalize_command(command, keep_timeout=True) == "cd web && timeout -s KILL 30s pytest -q"


def test_import_is_stdlib_only_and_cheap():
    code = (
        "import sys, time; t = time.process_time(); import learn_cli.text.shell; "
        "print(time.process_time() - t); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'orjson', 'typer', 'rich', 'rapidfuzz', 'filelock', 'click'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[1] == "[]"
    assert float(out[0]) < 0.25  # generous: cold caches and slow CI; typically ~1-8 ms


@pytest.mark.parametrize(("command", "inner"), [
    ("bash -lc 'python manage.py runserver'", "python manage.py runserver"),
    ('/bin/zsh -lc "npm ci && npm test"', "npm ci && npm test"),  # the whole line is the shell's
    ('/bin/bash -l -c "cd /w/app; git status"', "cd /w/app; git status"),  # its flags apart
    ("bash -l script.sh", "bash -l script.sh"),  # a login shell running a script
    ("bash -c", "bash -c"),
    ("bash script.sh", "bash script.sh"),  # a script, not a command given inline
    ("bash -c 'a' && b", "bash -c 'a' && b"),  # the wrapper is one step of several
    ("npm ci", "npm ci"),
])
def test_inner_command_takes_the_shell_wrapper_off_a_whole_line(command, inner):
    assert inner_command(command) == inner


def test_the_words_a_shell_would_take_apart_unquoted():
    """Globs (zsh) and Windows paths (Git Bash reads their backslashes as escapes); not a word
    quoted, escaped or written with forward slashes."""
    assert words_to_quote("pip install fastapi[all] 'x[y]'") == ["fastapi[all]"]
    assert words_to_quote(r'cd D:\proj\api && "C:\tools\x.exe" C:/y/z.exe E:\\a\\b') == [r"D:\proj\api"]
    assert words_to_quote("grep -c a:b [ -f x ]") == []


def test_the_package_json_script_a_command_runs_and_whether_a_project_has_it(tmp_path):
    from learn_cli.capture.lesson import script_run
    from learn_cli.text.projectfiles import has_script

    assert [script_run(c) for c in ("npm run dev", "pnpm start", "yarn test -w", "npm install", "cd a && npm start")] \
        == ["dev", "start", "test", "", ""]
    (tmp_path / "package.json").write_text('{"scripts": {"start": "node ."}}')
    (tmp_path / "web").mkdir()
    assert has_script(str(tmp_path / "web"), str(tmp_path), "start")  # the nearest package.json, above
    assert not has_script(str(tmp_path), str(tmp_path), "dev")
    (tmp_path / "web" / "package.json").write_text("not json")
    assert not has_script(str(tmp_path / "web"), str(tmp_path), "dev")  # unreadable: the one above says no
    assert has_script(str(tmp_path / "elsewhere"), str(tmp_path / "elsewhere"), "dev")  # none: nothing says no


def test_semicolon_separated():
    from learn_cli.text.shell import semicolon_separated, semicolons_for_ands

    assert semicolon_separated("npm run build && npm test") == "npm run build; npm test"
    chain = "cd x && npm ci && npm run lint 2>&1 | tail -5"
    assert semicolon_separated(chain) == "cd x; npm ci; npm run lint 2>&1 | tail -5"
    assert semicolon_separated("echo 'a && b'") is None  # quoted: no separator
    assert semicolon_separated("a; b") is None
    assert semicolons_for_ands("a && b", "a;  b") and not semicolons_for_ands("a && b", "a; c")


def test_line_run_is_the_line_another_program_is_given_to_run():
    """Round 25 (Codex): `yarn workspace @se-2/nextjs build:ipfs` failed on Node 18, and the
    agent ran that line under Node 20 with `npx -p node@20 -c '…'`: the line is the job."""
    assert line_run(tokenize("npx -y -p node@20 -c 'node -v && yarn build'")) == "node -v && yarn build"
    assert line_run(tokenize("nix-shell -p gcc --run 'make test'")) == "make test"
    assert line_run(tokenize("sudo env A=1 bash -lc 'cd x && make'")) == "cd x && make"
    assert line_run(tokenize("bash -x run.sh")) == ""  # a script, not a line
    assert line_run(tokenize("npx -p typescript tsc --noEmit")) == ""  # npx runs its words: unwrap's
    assert line_run(tokenize("make test")) == ""


def test_powershell_chained_is_its_and_idiom_written_as_a_chain():
    """`a; if ($?) { b }` is Windows PowerShell's `a && b` (rounds 23 and 25), a pipe inside the
    braces too; the line is kept as written (PowerShell 5 has no `&&`), only compared as a chain."""
    assert powershell_chained("flutter pub get; if ($?) { flutter analyze }") == "flutter pub get && flutter analyze"
    assert powershell_chained("a;if($?){npm test}") == "a && npm test"
    assert powershell_chained("cd x; if ($?) { make 2>&1 | Select-Object -First 50 }") == \
        "cd x && make 2>&1 | Select-Object -First 50"
    assert powershell_chained("a; if ($LASTEXITCODE) { x }") == "a; if ($LASTEXITCODE) { x }"
    assert powershell_chained("flutter analyze") == "flutter analyze"
    assert normalize_command("make 2>&1 | Select-Object -First 50") == "make"  # PowerShell's head
    assert normalize_command("Get-Process | Select-Object -First Name") == "Get-Process | Select-Object -First Name"
    assert normalize_command("flutter pub get; if ($?) { flutter analyze }") == \
        "flutter pub get; if ($?) { flutter analyze }"


def test_powershells_call_operator_stays_with_its_command():
    """`& "C:\\Program Files\\Git\\cmd\\git.exe" init` (round 35, 36): the `&` that starts a step is
    PowerShell's call operator, which a quoted program needs there; bash has no `&` to start a
    step with. It is kept in the step, and the program is the one it calls. An `&` after a
    command still sends that command to the background."""
    git = '& "C:\\Program Files\\Git\\cmd\\git.exe" init'
    assert split_segments_ops(git) == [(git, "")]
    assert normalize_command(git) == git
    assert unwrap(git) == ["git.exe", "init"] and canonical_program(unwrap(git)[0]) == "git"
    assert split_segments_ops(f"cd C:\\x; {git}") == [("cd C:\\x", ";"), (git, "")]
    assert split_segments_ops("server & sleep 2") == [("server", "&"), ("sleep 2", "")]


def test_a_step_that_keeps_lines_of_its_own():
    """Inline code and a heredoc's body are lines a one-line form cannot keep; steps on lines
    of their own (`cd app⏎npm test`) and a continued line are one-line steps."""
    from learn_cli.text.shell import keeps_lines

    assert keeps_lines('python3 -c "\nimport json\nprint(1)\n"')
    assert keeps_lines("cat > x.py <<'EOF'\nimport json\nEOF\npython3 x.py")
    assert not keeps_lines("cd app\nnpm test")
    assert not keeps_lines("make && \\\n  make install")
    assert not keeps_lines("npm test")
