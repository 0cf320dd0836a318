"""learn_cli.engine.fixwords: the essential change of a fix, in words (issue 10, cause 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from learn_cli.engine.fixwords import essential_change
from learn_cli.text.shell import tokenize

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "agent-retries.jsonl"


@pytest.mark.parametrize(
    ("failed", "fix", "kind", "words"),
    [
        # from the corpora (case ids) and the brief's own examples
        ("cmake -S . -B build -q 2>&1 && cmake --build build 2>&1 | tail -5",
         "cmake -S . -B build 2>&1 | tail -3 && cmake --build build 2>&1 | tail -5", "retry", "drop `-q`"),  # 090
        ("cargo build", "cargo build --release", "retry", "add `--release`"),
        # the lines a look shows are not what changed (Codex's reads, round 14)
        ("sed -n '1,240p' AGENTS.md", "sed -n '1,220p' ralph/AGENTS.md", "retry", "`AGENTS.md` → `ralph/AGENTS.md`"),
        ("make 2>&1", "cmake --build build 2>&1", "retry", "`make` → `cmake --build build`"),  # 134
        ("pytest tests", "python -m pytest tests", "retry", "`pytest` → `python -m pytest`"),
        ("uv run pytest -q", "pytest -q", "retry", "`uv run pytest` → `pytest`"),
        ("forge init --no-git --no-commit .", "forge init --no-git --force .", "retry",
         "`--no-commit` → `--force`"),
        ("forge init --no-git . 2>&1 | tail -20 && ls",
         "forge init --no-git --force . 2>&1 | tail -20 && ls && ls src test script lib", "retry",
         "add `--force`"),  # 051: the `ls` added after only looks
        ("git checkout feature/x", "git fetch origin feature/x && git checkout feature/x", "retry",
         "run `git fetch origin feature/x` first"),  # 138
        ("cd build && cmake .. && make", "cd build && rm -f CMakeCache.txt && cmake .. && make", "retry",
         "run `rm -f CMakeCache.txt` first"),  # 087
        ("cd circuits/private_vote && nargo test 2>&1 | tail -20", "nargo test 2>&1 | tail -20", "retry",
         "drop `cd circuits/private_vote`"),  # 026
        ("pytest", "cd backend && pytest", "retry", "run it from `backend`"),
        ("make && make test", "make && make test && make install", "retry", "then run `make install`"),
        ("pip install sklearn", "pip install scikit-learn", "retry", "`sklearn` → `scikit-learn`"),
        ("x", "pip install requests", "between", "run `pip install requests` first"),
        ("Read src/app.py", "src/app.py", "path", "use path `src/app.py`"),
        ("timeout 60 npm test", "npm test", "retry", "drop `timeout 60`"),  # not installed (a Mac)
        ('C:\\xampp\\bin\\mysql.exe -u root -e "SELECT 1"', '"C:\\xampp\\bin\\mysql.exe" -u root -e "SELECT 1"',
         "retry", "quote `C:\\xampp\\bin\\mysql.exe`"),  # Git Bash took its backslashes (r11-d-031)
        ("timeout 60 npm test 2>&1 | tail", "timeout 90 npm test", "retry", ""),
        # a whole step is shown as written: quoted again, `$(…)` would be words (round 17)
        ("./mvnw compile 2>&1", "export JAVA_HOME=$(/usr/libexec/java_home -v 17) && ./mvnw compile", "retry",
         "run `export JAVA_HOME=$(/usr/libexec/java_home -v 17)` first"),
        ("ls *.log", 'cd "$HOME/logs" && ls *.log', "retry", 'run it from `$HOME/logs`'),
        # nothing shorter says it better
        ("npm test", "npm test 2>&1 | tail -5", "retry", ""),
        ("python3 -c \"import a; a.x()\"", "python3 -c \"import b; b.y(1, 2)\"", "retry", ""),
        ("a b c d", "e f g h && i j k && l m", "retry", ""),
        ("pytest", "edit src/app.py", "edit", ""),
        ("pytest", "", "retry", ""),
        # input piped in is no step run first; a command an export cut has lost its words
        ('uv run python main.py', 'echo "beijing" | uv run python main.py', "retry", ""),
        # the output no longer piped into a last step (jq not installed: sandahltim/RFID3)
        ("curl -s http://pi5:6801/api/kpis | jq .", "curl -s http://pi5:6801/api/kpis", "retry", "drop `| jq .`"),
        ("curl -s http://x/m | jq -r '.m | keys'", "curl -s http://x/m", "retry", "drop `| jq -r '.m | keys'`"),
        ("cd app && .venv/bin/pip install pytest…", "cd app && .venv/bin/pip install -e . && .venv/bin/pytest",
         "retry", ""),
    ],
)
def test_essential_change(failed, fix, kind, words):
    assert essential_change(failed, fix, kind) == words


def test_essential_change_on_the_corpus_pairs():
    """Every statement is short and only quotes words of the two commands."""
    if not CORPUS.is_file():
        pytest.skip(f"{CORPUS} not available")
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    said = 0
    for row in rows:
        if row["label"] != "retry":
            continue
        # the exports wrap long lines: whitespace is normalised first (corpora/README.md)
        failed, fix = " ".join(row["failed_command"].split()), " ".join(row["retry_command"].split())
        words = essential_change(failed, fix, "retry")
        assert len(words) <= 120
        known = set(tokenize(failed)) | set(tokenize(fix)) | {"&&"}
        for quoted in re.findall(r"`([^`]*)`", words):
            assert set(tokenize(quoted)) <= known, (row["id"], words)
        said += bool(words)
    assert said >= 15  # measured 22 of 57: the rest are rewritten scripts, long chains and the same command


def test_code_keeps_its_backticks():
    """A command's own backticks are shown as they are, in a span fenced by more of them
    (CommonMark), never turned into quotes: `'year_month'` is a string in MySQL, not a column."""
    from learn_cli.engine.wording import code_span, hook_body

    assert code_span("make -C build") == "`make -C build`"
    assert code_span("mysql -e 'SELECT `year_month` FROM t'") == "`` mysql -e 'SELECT `year_month` FROM t' ``"
    assert code_span("echo ``x``") == "``` echo ``x`` ```"
    body = hook_body("retry", "mysql -e 'SELECT `ym` FROM t'", "mysql -e 'SELECT ym FROM t'")
    assert body == "`` mysql -e 'SELECT `ym` FROM t' `` instead of `mysql -e 'SELECT ym FROM t'`"
    assert hook_body("cwd", "build", "make") == "`cd build && make` instead of `make`"
