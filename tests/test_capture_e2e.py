"""End to end: realistic Claude Code sessions replayed through `learn capture` and `learn
context --hook`, payloads shaped exactly as in reference/agent-hooks.md §1.6, in a temporary
home (the `learn` fixture). The first journey and the guard's answers run the installed
executable, one process per hook call, as Claude Code does; the other journeys run the same
entry point in this process (`learn.hook`): they are about what is learned and given back.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from learn_cli.store import analytics, jsonl
from learn_cli.store.project import identify


class Session:
    """One Claude Code session: every hook call a `learn` process (`process`) or the same entry
    point in this process, checked like the agent would check it (exit 0, nothing or one hook
    JSON object on stdout, no traceback)."""

    def __init__(self, learn, cwd: Path, process: bool = False):
        self.learn, self.cwd = learn, cwd
        self.call = learn if process else learn.hook
        self.sid = str(uuid.uuid4())
        self.n = 0
        self.transcript = f"{learn.tmp}/userhome/.claude/projects/-work-{cwd.name}/{self.sid}.jsonl"

    def _base(self, event: str) -> dict:
        return {"session_id": self.sid, "transcript_path": self.transcript, "cwd": str(self.cwd),
                "permission_mode": "default", "hook_event_name": event}

    def _run(self, payload: dict, *args: str) -> str | None:
        proc = self.call(*(args or ("capture",)), input=json.dumps(payload), cwd=self.cwd)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr
        if not proc.stdout.strip():
            return None
        out = json.loads(proc.stdout)
        assert out["hookSpecificOutput"]["hookEventName"] == payload["hook_event_name"]
        return out["hookSpecificOutput"]["additionalContext"]

    def _tool(self, event: str, tool: str, tool_input: dict, **extra) -> dict:
        self.n += 1
        return dict(self._base(event), tool_name=tool, tool_input=tool_input,
                    tool_use_id=f"toolu_01{self.sid[:6]}{self.n:04d}", **extra)

    def start(self) -> str | None:
        return self._run(dict(self._base("SessionStart"), source="startup", model="claude-sonnet-5"),
                         "context", "--hook")

    def prompt(self, text: str) -> None:
        self._run(dict(self._base("UserPromptSubmit"), prompt=text, prompt_id=str(uuid.uuid4())))

    def bash(self, command: str, *, fails: str | None = None, code: int = 1, stdout: str = "") -> str | None:
        tool_input = {"command": command, "description": "Run a command"}
        pre = self._run(self._tool("PreToolUse", "Bash", tool_input))
        self.n -= 1  # PreToolUse and its Post event share the tool_use_id
        if fails is not None:
            post = self._run(self._tool("PostToolUseFailure", "Bash", tool_input, error=f"Exit code {code}\n{fails}",
                                        is_interrupt=False, duration_ms=412))
        else:
            post = self._run(self._tool("PostToolUse", "Bash", tool_input, duration_ms=230, tool_response={
                "stdout": stdout, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}))
        self.pre_context = pre
        return post

    def read(self, path: Path, *, missing: bool = False) -> str | None:
        tool_input = {"file_path": str(path)}
        if missing:
            return self._run(self._tool("PostToolUseFailure", "Read", tool_input, is_interrupt=False,
                                        error="File does not exist. Note: your current working directory is "
                                              f"{self.cwd}."))
        return self._run(self._tool("PostToolUse", "Read", tool_input, tool_response={
            "type": "text", "file": {"filePath": str(path), "content": "print('hi')\n", "numLines": 1}}))

    def end(self) -> None:
        self._run(dict(self._base("Stop"), stop_hook_active=False, last_assistant_message="Done."))
        self._run(dict(self._base("SessionEnd"), reason="prompt_input_exit"))


def learned(learn, cwd: Path) -> list[dict]:
    path = learn.home / "projects" / identify(cwd).id / "learnings.jsonl"
    return list(jsonl.load(path).records.values())


def totals(learn) -> dict:
    """As `learn stats` reads them: stats.json plus the notes a hook short of time left."""
    return analytics.read(learn.home / "analytics" / "stats.json").get("totals", {})


PYTEST_MISSING = "/bin/bash: line 1: pytest: command not found"


def pytest_session(learn, cwd: Path, follow: str = "python -m pytest tests", process: bool = False) -> str | None:
    s = Session(learn, cwd, process)
    s.start()
    s.prompt("run the tests")
    hint = s.bash("pytest tests", fails=PYTEST_MISSING, code=127)
    s.bash("ls", stdout="README.md\nsrc\ntests")
    s.bash(follow, stdout="============ 12 passed in 0.84s ============")
    s.end()
    return hint


def test_learned_in_one_project_given_back_in_another_and_helped(learn):
    a = learn.project("web-api", remote="git@github.com:acme/web-api.git")
    b = learn.project("billing", remote="https://github.com/acme/billing")

    assert pytest_session(learn, a, process=True) is None
    [rec] = learned(learn, a)
    assert rec["status"] == "pending" and len(rec["evidence"]) == 1
    hint = pytest_session(learn, a, process=True)  # the same failure again in A: what worked, seen once
    assert hint.startswith("learn: known fix (seen once in this project): `python -m pytest tests`")
    [rec] = learned(learn, a)
    assert rec["status"] == "active" and len(rec["evidence"]) == 2 and rec["helped"] == 1
    assert rec["context"] == "`pytest tests` fails (dependency): use `python -m pytest tests` instead."

    # Project B, first session: the same failure gets the fix back; the agent does something else.
    s = Session(learn, b, process=True)
    s.start()
    hint = s.bash("pytest tests", fails=PYTEST_MISSING, code=127)
    assert hint is not None and "python -m pytest tests" in hint
    assert "seen 2× in web-api" in hint and hint.startswith("learn: known fix")
    s.end()
    assert totals(learn).get("helped", 0) == 1  # only A's own second session

    # A later session in B follows the suggestion: it helped.
    hint = pytest_session(learn, b, process=True)
    assert hint is not None and "python -m pytest tests" in hint
    [source] = learned(learn, a)
    assert source["helped"] == 2 and source["frequency"] == 3 and identify(b).id in source["projects"]
    [own] = learned(learn, b)
    assert own["status"] == "active" and own["fix_command"] == "python -m pytest tests"
    counts = totals(learn)
    assert counts["suggestions"] == 3 and counts["helped"] == 2 and counts["pairs"] == 3
    assert counts["failures"] == 4 and counts["learnings_activated"] == 2


def _two_sessions(learn, cwd, failed, output, fix, code=1):
    for _ in range(2):
        s = Session(learn, cwd)
        s.start()
        s.bash(failed, fails=output, code=code)
        s.bash(fix, stdout="ok")
        s.end()
    [rec] = learned(learn, cwd)
    assert rec["status"] == "active"
    assert rec["command"] == failed and rec["fix_command"] == fix
    return rec


def test_npm_test_becomes_npm_run_test(learn):
    cwd = learn.project("shop-ui", files={"package.json": '{"scripts": {"test:unit": "vitest"}}'})
    output = ('npm error Missing script: "test"\nnpm error\nnpm error To see a list of scripts, run:\n'
              "npm error   npm run\nnpm error A complete log of this run can be found in: "
              "/home/dev/.npm/_logs/2026-11-29T10_00_00_000Z-debug-0.log")
    rec = _two_sessions(learn, cwd, "npm test", output, "npm run test")
    assert rec["category"] == "config"


def test_pip_install_jose_becomes_python_jose(learn):
    cwd = learn.project("auth-svc", files={"pyproject.toml": "[project]\nname='auth'\n"})
    output = ("ERROR: Could not find a version that satisfies the requirement jose==3.3 (from versions: 0.9.0, 1.0.0)\n"
              "ERROR: No matching distribution found for jose==3.3")
    rec = _two_sessions(learn, cwd, "pip install jose==3.3", output, "pip install 'python-jose[cryptography]'")
    assert rec["category"] == "dependency"


def test_pytest_becomes_uv_run_pytest(learn):
    cwd = learn.project("ml-pipe", files={"uv.lock": "", "pyproject.toml": ""})
    rec = _two_sessions(learn, cwd, "pytest", "zsh: command not found: pytest", "uv run pytest", code=127)
    assert rec["fix_kind"] == "retry"


def test_read_of_a_mistyped_path_learns_the_right_one(learn):
    cwd = learn.project("docs-site", files={"src/config.py": "DEBUG = False\n"})
    s = Session(learn, cwd)
    s.start()
    assert s.read(cwd / "src" / "confg.py", missing=True) is None
    s.bash("ls src", stdout="config.py")
    s.read(cwd / "src" / "config.py")
    s.end()
    [rec] = learned(learn, cwd)
    assert rec["tool"] == "Read" and rec["command"] == "Read src/confg.py" and rec["fix_command"] == "src/config.py"
    assert str(cwd) not in json.dumps(rec)


def test_failure_followed_only_by_unrelated_commands_teaches_nothing(learn):
    cwd = learn.project("infra")
    s = Session(learn, cwd)
    s.start()
    s.bash("terraform plan", fails="Error: No valid credential sources found for AWS Provider.", code=1)
    for command in ("git status", "ls -la", "cat main.tf", "echo done", "git log --oneline -3", "pwd"):
        s.bash(command, stdout="x")
    s.end()
    assert learned(learn, cwd) == []
    assert totals(learn).get("pairs", 0) == 0 and totals(learn)["failures"] == 1


def test_fix_in_between_comes_back_for_another_script_elsewhere(learn):
    a, b = learn.project("scraper"), learn.project("notebooks")
    error = ("Traceback (most recent call last):\n  File \"{root}/app.py\", line 2, in <module>\n"
             "    import requests\nModuleNotFoundError: No module named 'requests'")
    for _ in range(2):
        s = Session(learn, a)
        s.bash("python app.py", fails=error.format(root=a))
        s.bash("pip install requests", stdout="Successfully installed requests-2.32.3")
        s.bash("python app.py", stdout="fetched 20 pages")
        s.end()
    [rec] = learned(learn, a)
    assert rec["status"] == "active" and rec["fix_command"] == "pip install requests"
    hint = Session(learn, b).bash("python analyse.py", fails=error.format(root=b).replace("app.py", "analyse.py"))
    assert hint is not None and "run `pip install requests` first" in hint


def test_guard_stops_a_known_bad_command_once_per_session(learn):
    cwd = learn.project("shop-api")
    error = 'npm error Missing script: "test"'
    _two_sessions(learn, cwd, "npm test", error, "npm run test")
    s = Session(learn, cwd)
    assert s.bash("npm test", fails=error) is not None  # the known fix, then it helps
    s.bash("npm run test", stdout="ok")
    assert s.pre_context is None  # no guard registered: PreToolUse says nothing

    def pre(session, command: str):
        payload = session._tool("PreToolUse", "Bash", {"command": command, "description": "Run a command"})
        proc = learn("capture", "--guard", input=payload, cwd=cwd, check=0)
        return json.loads(proc.stdout) if proc.stdout.strip() else None

    guarded = Session(learn, cwd)
    out = pre(guarded, "npm test")["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    assert "`npm run test`" in out["permissionDecisionReason"]
    assert pre(guarded, "npm test") is None  # once per session: the second try runs
    assert pre(guarded, "npm run test") is None and pre(Session(learn, cwd), "ls") is None
    assert pre(Session(learn, cwd), "npm test") is not None  # a new session is stopped again
    assert totals(learn)["guarded"] == 2


def test_user_correction_is_kept_with_its_negation(learn):
    cwd = learn.project("web")
    s = Session(learn, cwd)
    s.prompt("No! Never commit .env — and don't use npm here, use pnpm. I don't know why it broke.")
    recs = sorted(learned(learn, cwd), key=lambda r: r["fix"])
    assert [r["fix"] for r in recs] == ["Don't use npm here, use pnpm.", "Never commit .env."]
    assert all(r["type"] == "preference" and r["status"] == "pending" for r in recs)


def test_session_start_digest_fits_claude_codes_limit(learn):
    cwd = learn.project("web-api")
    for _ in range(2):
        pytest_session(learn, cwd)
    text = Session(learn, cwd).start()
    assert text is not None and "python -m pytest tests" in text and len(text) < 10_000
    assert text.startswith("Learned notes from earlier sessions")


def test_auto_off_records_nothing(learn):
    cwd = learn.project("private")
    toggled = learn("--auto", cwd=cwd)
    assert toggled.returncode == 0, toggled.stderr
    before = {p: p.read_bytes() for p in learn.home.rglob("*") if p.is_file() and not p.name.endswith(".lock")}
    pytest_session(learn, cwd)
    pytest_session(learn, cwd)
    assert learned(learn, cwd) == []
    after = {p: p.read_bytes() for p in learn.home.rglob("*") if p.is_file() and not p.name.endswith(".lock")}
    changed = {str(p.relative_to(learn.home)) for p in after if before.get(p) != after[p]}
    assert not any(name.startswith(("projects", "sessions")) and name.endswith("jsonl") for name in changed), changed
