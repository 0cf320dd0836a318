"""Codex CLI, Gemini CLI, Cursor and OpenClaw (reference/agent-hooks.md §3).

For each agent: `learn hooks install --agent NAME` writes its own config format; the commands
it registered are then run (a real process each, as the agent would) with payloads shaped as
the reference shows; an install -> uninstall round trip leaves the user's file byte-identical.
Also: the same failure through Claude Code and through Codex is one learning, and the
conservative output rule for agents that give no exit code.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from learn_cli.agents import codex, cursor, gemini, openclaw
from learn_cli.store import jsonl
from learn_cli.store.project import identify

PYTEST_MISSING = "bash: pytest: command not found"


def learned(learn, cwd: Path) -> list[dict]:
    path = learn.home / "projects" / identify(cwd).id / "learnings.jsonl"
    return list(jsonl.load(path).records.values()) if path.exists() else []


def install(learn, agent: str, scope: str = "user", cwd: Path | None = None) -> dict:
    doc = learn.json("hooks", "install", "--agent", agent, "--scope", scope, cwd=cwd)
    assert doc["agent"] == agent
    return doc


def run_hook(learn, command: str, payload: dict, cwd: Path):
    """Run one registered hook command the way the agent does: `sh -c`, payload on stdin. The
    first call of each command in a test; later calls run the same `learn` arguments in this
    process (`learn.hook`): the command is known to work, what it learns is the subject."""
    ran = learn.__dict__.setdefault("hook_commands_run", set())
    if command in ran:
        proc = learn.hook(*learn.hook_args(command), input=payload, cwd=cwd)
    else:
        ran.add(command)
        proc = subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                              env=learn.env, cwd=str(cwd), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "warning" not in proc.stderr.lower(), proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None


# ---------------------------------------------------------------------------------------------
# Codex CLI


class CodexSession:
    """Payloads as in reference §3.1 (the captured PostToolUse line, fields kept)."""

    def __init__(self, learn, cwd: Path, commands: dict):
        self.learn, self.cwd, self.commands = learn, cwd, commands
        self.sid = str(uuid.uuid4())
        self.n = 0

    def _base(self, event: str) -> dict:
        return {"session_id": self.sid,
                "transcript_path": f"/home/dev/.codex/sessions/2026/08/23/rollout-{self.sid}.jsonl",
                "cwd": str(self.cwd), "hook_event_name": event, "model": "gpt-6.1-sol"}

    def bash(self, command: str, output: str):
        self.n += 1
        payload = dict(self._base("PostToolUse"), turn_id=f"turn-{self.n}", permission_mode="bypassPermissions",
                       tool_name="Bash", tool_input={"command": command}, tool_response=output,
                       tool_use_id=f"exec-{self.sid[:6]}-{self.n}")
        return run_hook(self.learn, self.commands["PostToolUse"], payload, self.cwd)

    def start(self):
        return run_hook(self.learn, self.commands["SessionStart"], dict(self._base("SessionStart"), source="startup"),
                        self.cwd)

    def prompt(self, text: str):
        return run_hook(self.learn, self.commands["UserPromptSubmit"],
                        dict(self._base("UserPromptSubmit"), turn_id="turn-p", prompt=text), self.cwd)

    def stop(self):
        return run_hook(self.learn, self.commands["Stop"], dict(self._base("Stop"), turn_id="turn-s",
                                                              stop_hook_active=False), self.cwd)


def three_level_commands(path: Path) -> dict:
    doc = json.loads(path.read_text())
    return {event: group["hooks"][0]["command"] for event, groups in doc["hooks"].items() for group in groups
            if "learn" in group["hooks"][0]["command"]}


def test_codex_hooks_learn_and_give_the_fix_back(learn):
    result = install(learn, "codex")
    assert "/hooks" in result["note"]  # Codex skips hooks until they are trusted there
    path = learn.tmp / "userhome" / ".codex" / "hooks.json"
    commands = three_level_commands(path)
    assert set(commands) == {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"}
    assert commands["PostToolUse"] == f"{learn.hook_command} capture --agent codex"
    for session in range(2):
        s = CodexSession(learn, learn.cwd, commands)
        s.start()
        hint = s.bash("pytest tests", PYTEST_MISSING + "\n")
        assert (hint is None) == (session == 0)  # the same failure again: what worked, seen once
        assert s.bash("python -m pytest tests", "..\n2 passed in 0.04s\n") is None
        s.stop()
    [rec] = learned(learn, learn.cwd)
    assert rec["status"] == "active" and rec["fix_command"] == "python -m pytest tests"
    assert rec.get("exit_code") is None and rec["error"] == PYTEST_MISSING and rec["category"] == "dependency"
    s = CodexSession(learn, learn.cwd, commands)
    out = s.bash("pytest tests", PYTEST_MISSING + "\n")
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "python -m pytest tests" in out["hookSpecificOutput"]["additionalContext"]
    start = s.start()
    assert start["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "python -m pytest" in start["hookSpecificOutput"]["additionalContext"]
    s.prompt("don't use npm in this repo, use pnpm")
    assert any(r["type"] == "preference" and "pnpm" in r["fix"] for r in learned(learn, learn.cwd))


def test_same_failure_through_claude_code_and_codex_is_one_learning(learn):
    claude = {"session_id": str(uuid.uuid4()), "transcript_path": "/t.jsonl", "cwd": str(learn.cwd),
              "permission_mode": "default", "tool_name": "Bash"}
    learn.hook("capture", input=dict(claude, hook_event_name="PostToolUseFailure", tool_use_id="toolu_01a",
                                     tool_input={"command": "pytest tests", "description": "Run tests"},
                                     error=f"Exit code 127\n{PYTEST_MISSING}", is_interrupt=False), check=0)
    learn.hook("capture", input=dict(claude, hook_event_name="PostToolUse", tool_use_id="toolu_01b",
                                     tool_input={"command": "python -m pytest tests", "description": "Run tests"},
                                     tool_response={"stdout": "2 passed", "stderr": "", "interrupted": False,
                                                    "isImage": False}), check=0)
    [first] = learned(learn, learn.cwd)
    assert first["status"] == "pending"
    commands = three_level_commands(Path(install(learn, "codex")["path"]))
    s = CodexSession(learn, learn.cwd, commands)
    s.bash("pytest tests", PYTEST_MISSING + "\n")
    s.bash("python -m pytest tests", "2 passed\n")
    [rec] = learned(learn, learn.cwd)
    assert rec["id"] == first["id"] and rec["status"] == "active"
    assert {e["session"] for e in rec["evidence"]} == {claude["session_id"], s.sid}


def test_codex_output_that_only_quotes_an_error_is_not_a_failure(learn):
    commands = three_level_commands(Path(install(learn, "codex")["path"]))
    s = CodexSession(learn, learn.cwd, commands)
    s.bash("cat docs/errors.md", "# Errors\nError: config missing\nTraceback (most recent call last):\n"
                                 "ValueError: bad\nnpm ERR! code E404\n")
    s.bash("cat docs/errors.txt", "all good\n")  # would pair as a path-like retry if the first had failed
    s.bash("echo 'error: not really'", "error: not really\n")
    s.bash("echo done", "done\n")
    assert learned(learn, learn.cwd) == []
    buffer = (learn.home / "sessions" / f"{s.sid}.jsonl").read_text()
    assert '"failure"' not in buffer


@pytest.mark.parametrize("command, output, failed", [
    ("pytest", PYTEST_MISSING + "\n", True),
    ("pytest", "zsh:1: command not found: pytest\n", True),
    ("pytest", "sh: 1: pytest: not found\n", True),
    ("touch made.txt", "zsh:1: operation not permitted: made.txt\n", True),  # captured Codex output
    ("./deploy.sh", "bash: ./deploy.sh: Permission denied\n", True),
    ("python app.py", "Traceback (most recent call last):\n  File \"app.py\", line 1, in <module>\n"
                      "ModuleNotFoundError: No module named 'requests'\n", True),
    ("python app.py", "python: can't open file '/w/app.py': [Errno 2] No such file or directory\n", True),
    ("npm install left-padd", "npm error code E404\nnpm error 404 Not Found - GET https://registry\n", True),
    ("npm test", "npm ERR! Test failed.  See above for more details.\n", True),
    ("cargo build", "error[E0425]: cannot find value `x` in this scope\n", True),
    ("gcc main.c", "main.c:5:5: error: expected ';' before 'return'\n", True),
    ("git push", "fatal: The current branch has no upstream branch.\n", True),
    ("pytest -q", "F.\nFAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed, 1 passed in 0.1s\n", True),
    ("go test ./...", "--- FAIL: TestX (0.00s)\nFAIL\nexit status 1\nFAIL\tpkg\t0.01s\n", True),
    ("make", "make: *** [Makefile:3: all] Error 1\n", True),
    ("cat missing.md", "cat: missing.md: No such file or directory\n", True),
    ("x", "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nboom\n", True),
    ("git push", "", False),  # exited 3 (reference §3.1): a known false negative
    ("cat notes.md", "Error: in a document\nTraceback (most recent call last):\nValueError: x\n", False),
    ("sed -n 1,40p app.py", "raise RuntimeError('error: x')\nnpm ERR! quoted\n", False),
    ("head -20 build.log | grep -i error", "error: something from yesterday\nFAILED earlier\n", False),
    ("git log -3", "commit abc\n    fix: handle 'command not found' in shim\n", False),
    ("echo 'fatal: no'", "fatal: no\n", False),
    ("ls", "error_log.txt\nmain.py\n", False),
    ("pytest -q", "....\n4 passed in 0.10s\n", False),
    ("python train.py", "epoch 1: loss 0.31 (errors: 0)\n", False),
    ("git status", "On branch main\nnothing to commit, working tree clean\n", False),
])
def test_codex_failure_rule(command, output, failed):
    assert codex.detect_failure(command, output)[0] is failed


def test_codex_response_shapes():
    event = codex.to_event({"hook_event_name": "PostToolUse", "session_id": "s", "cwd": "/w", "tool_name": "shell",
                            "tool_input": {"command": ["bash", "-lc", "pytest -q"]},
                            "tool_response": {"exit_code": 2, "output": "ERROR: usage"}, "tool_use_id": "c1"})
    assert event.kind == "failure" and event.tool == "Bash" and event.command == "pytest -q" and event.exit_code == 2
    ok = codex.to_event({"hook_event_name": "PostToolUse", "session_id": "s", "cwd": "/w", "tool_name": "Bash",
                         "tool_input": {"command": "cat err.log"}, "tool_response": {"exit_code": 0,
                                                                                 "output": "fatal: x"}})
    assert ok.kind == "success" and ok.tool_use_id.startswith("codex-")
    patch = codex.to_event({"hook_event_name": "PostToolUse", "session_id": "s", "cwd": "/w",
                            "tool_name": "apply_patch",
                            "tool_input": {"command": "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n"
                                                      "*** End Patch"},
                            "tool_response": "Success. Updated: M src/app.py"})
    assert patch.kind == "success" and patch.tool == "Edit" and patch.path == "src/app.py"


# ---------------------------------------------------------------------------------------------
# Gemini CLI


def shell_result(command: str, stdout: str = "(empty)", stderr: str = "(empty)", code: int = 0) -> dict:
    """run_shell_command's result: its documented Command/Directory/Stdout/Stderr/… fields."""
    content = (f"Command: {command}\nDirectory: (root)\nStdout: {stdout}\nStderr: {stderr}\nError: (none)\n"
               f"Exit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 48121")
    return {"llmContent": content, "returnDisplay": stderr if code else stdout}


class GeminiSession:
    def __init__(self, learn, cwd: Path, commands: dict):
        self.learn, self.cwd, self.commands = learn, cwd, commands
        self.sid = str(uuid.uuid4())
        self.n = 0

    def _base(self, event: str) -> dict:
        self.n += 1
        return {"session_id": self.sid, "transcript_path": f"/home/dev/.gemini/tmp/abc/chats/session-{self.sid}.json",
                "cwd": str(self.cwd), "hook_event_name": event, "timestamp": f"2026-08-23T10:00:{self.n:02d}.000Z"}

    def tool(self, name: str, tool_input: dict, response: dict):
        payload = dict(self._base("AfterTool"), tool_name=name, tool_input=tool_input, tool_response=response)
        return run_hook(self.learn, self.commands["AfterTool"], payload, self.cwd)

    def start(self):
        return run_hook(self.learn, self.commands["SessionStart"], dict(self._base("SessionStart"), source="startup"),
                        self.cwd)

    def end(self):
        return run_hook(self.learn, self.commands["SessionEnd"], dict(self._base("SessionEnd"), reason="exit"),
                        self.cwd)


def test_gemini_hooks_learn_and_give_the_fix_back(learn):
    result = install(learn, "gemini")
    path = learn.tmp / "userhome" / ".gemini" / "settings.json"
    assert result["path"] == str(path)
    doc = json.loads(path.read_text())
    handler = doc["hooks"]["AfterTool"][0]["hooks"][0]
    assert handler["timeout"] == 10_000 and handler["type"] == "command"  # milliseconds
    commands = three_level_commands(path)
    assert set(commands) == {"SessionStart", "BeforeAgent", "AfterTool", "SessionEnd"}
    for session in range(2):
        s = GeminiSession(learn, learn.cwd, commands)
        s.start()
        hint = s.tool("run_shell_command", {"command": "pytest tests", "description": "Run the tests"},
                      shell_result("pytest tests", stderr=PYTEST_MISSING, code=127))
        assert (hint is None) == (session == 0)  # the same failure again: what worked, seen once
        s.tool("run_shell_command", {"command": "python -m pytest tests"},
               shell_result("python -m pytest tests", stdout="2 passed in 0.05s"))
        s.end()
    [rec] = learned(learn, learn.cwd)
    assert rec["status"] == "active" and rec["exit_code"] == 127 and rec["error"] == PYTEST_MISSING
    s = GeminiSession(learn, learn.cwd, commands)
    out = s.tool("run_shell_command", {"command": "pytest tests"},
                 shell_result("pytest tests", stderr=PYTEST_MISSING, code=127))
    assert out["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    assert "python -m pytest tests" in out["hookSpecificOutput"]["additionalContext"]
    start = s.start()
    assert start["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_gemini_tool_error_field_and_paths(learn):
    commands = three_level_commands(Path(install(learn, "gemini")["path"]))
    s = GeminiSession(learn, learn.cwd, commands)
    wrong, right = str(learn.cwd / "src" / "setings.py"), str(learn.cwd / "src" / "settings.py")
    s.tool("read_file", {"absolute_path": wrong},
           {"llmContent": f"File not found: {wrong}", "returnDisplay": "File not found.",
            "error": {"message": f"File not found: {wrong}", "type": "FILE_NOT_FOUND"}})
    s.tool("read_file", {"absolute_path": right}, {"llmContent": "DEBUG = False\n", "returnDisplay": ""})
    s.tool("read_file", {"absolute_path": str(learn.cwd / "README.md")},
           {"llmContent": "Error: this line is in the file, not a failure", "returnDisplay": ""})
    [rec] = learned(learn, learn.cwd)
    assert rec["tool"] == "Read" and rec["fix_command"] == "src/settings.py"


def test_a_gemini_command_runs_in_the_folder_its_dir_path_names():
    """`run_shell_command` takes the folder to run in (`dir_path`; `directory` in older versions),
    relative to the project or absolute. Inside the hook's `cwd` it is the command's folder; the
    project stays the session's, and a folder outside it is not taken."""
    def event(**args):
        return gemini.to_event({"session_id": "s", "cwd": "/w/app", "hook_event_name": "AfterTool",
                                "tool_name": "run_shell_command", "tool_input": {"command": "make", **args},
                                "tool_response": {"llmContent": "Output: ok\nExit Code: 0"}})

    assert event(dir_path="web").folder == "/w/app/web" and event(dir_path="web").cwd == "/w/app"
    assert event(directory="web/ui/").folder == "/w/app/web/ui"
    assert event(dir_path="/w/app/api").folder == "/w/app/api"
    assert [event(**args).folder for args in ({}, {"dir_path": "."}, {"dir_path": "../other"},
                                              {"dir_path": "/etc"}, {"dir_path": 3})] == [""] * 5


def test_gemini_learns_the_folder_a_command_works_from(learn):
    """`npm run build` has no script at the root; the same command with `dir_path: web` worked.
    Twice, in two sessions: the next time it fails at the root, the answer runs it from web."""
    commands = three_level_commands(Path(install(learn, "gemini")["path"]))
    (learn.cwd / "web").mkdir()
    missing = 'npm error Missing script: "build"\nnpm error\nnpm error To see a list of scripts, run:'
    for _ in range(2):
        s = GeminiSession(learn, learn.cwd, commands)
        s.tool("run_shell_command", {"command": "npm run build"}, shell_result("npm run build", stderr=missing, code=1))
        s.tool("run_shell_command", {"command": "npm run build", "dir_path": "web"},
               shell_result("npm run build", stdout="built in 1.2s"))
        s.end()
    [rec] = learned(learn, learn.cwd)
    assert (rec["fix_command"], rec["status"]) == ("cd web", "active")
    out = GeminiSession(learn, learn.cwd, commands).tool(
        "run_shell_command", {"command": "npm run build"}, shell_result("npm run build", stderr=missing, code=1))
    said = out["hookSpecificOutput"]["additionalContext"]
    assert f"`cd {learn.cwd / 'web'} && npm run build` instead of `npm run build`" in said, said


# ---------------------------------------------------------------------------------------------
# Cursor


class CursorSession:
    """Payloads as in reference §3.3 (common fields + the verbatim per-event inputs)."""

    def __init__(self, learn, cwd: Path, commands: dict):
        self.learn, self.cwd, self.commands = learn, cwd, commands
        self.conversation = str(uuid.uuid4())
        self.n = 0

    def _base(self, event: str) -> dict:
        return {"conversation_id": self.conversation, "generation_id": str(uuid.uuid4()), "model": "gpt-6",
                "hook_event_name": event, "cursor_version": "2.6.1", "workspace_roots": [str(self.cwd)],
                "user_email": "dev@example.com", "transcript_path": None}

    def _run(self, event: str, payload: dict):
        return run_hook(self.learn, self.commands[event], payload, self.learn.tmp)  # cwd: not the project

    def failure(self, command: str, message: str, tool_use_id: str | None = None):
        self.n += 1
        payload = dict(self._base("postToolUseFailure"), tool_name="Shell", tool_input={"command": command},
                       tool_use_id=tool_use_id or f"call_{self.n}", cwd=str(self.cwd), error_message=message,
                       failure_type="error", duration=5000, is_interrupt=False)
        return self._run("postToolUseFailure", payload)

    def post(self, command: str, exit_code: int, stdout: str, tool_use_id: str | None = None):
        self.n += 1
        payload = dict(self._base("postToolUse"), tool_name="Shell", tool_input={"command": command},
                       tool_use_id=tool_use_id or f"call_{self.n}", cwd=str(self.cwd), duration=1234,
                       tool_output=json.dumps({"exitCode": exit_code, "stdout": stdout}))
        return self._run("postToolUse", payload)

    def shell(self, command: str, output: str, modern: bool = True):
        extra = {"duration": 1234, "sandbox": False} if modern else {}
        payload = dict(self._base("afterShellExecution"), command=command, output=output, **extra)
        return self._run("afterShellExecution", payload)

    def start(self):
        return self._run("sessionStart", self._base("sessionStart"))


def flat_commands(path: Path) -> dict:
    doc = json.loads(path.read_text())
    return {event: entries[0]["command"] for event, entries in doc["hooks"].items()}


def test_cursor_hooks_learn_and_give_the_fix_back(learn):
    result = install(learn, "cursor")
    path = learn.tmp / "userhome" / ".cursor" / "hooks.json"
    doc = json.loads(path.read_text())
    assert doc["version"] == 1 and all(list(e[0]) == ["command", "timeout"] for e in doc["hooks"].values())
    commands = flat_commands(path)
    assert set(commands) == {"sessionStart", "postToolUse", "postToolUseFailure", "afterShellExecution", "sessionEnd"}
    assert result["events"] == list(commands)
    s = CursorSession(learn, learn.cwd, commands)
    assert s.failure("pytest tests", PYTEST_MISSING) is None  # Cursor reads no output here
    s.shell("pytest tests", PYTEST_MISSING + "\n")  # newer Cursor fires this too: ignored
    s.post("python -m pytest tests", 0, "2 passed")
    s.shell("python -m pytest tests", "2 passed\n")
    [rec] = learned(learn, learn.cwd)
    assert rec["fix_command"] == "python -m pytest tests" and len(rec["evidence"]) == 1
    # A non-zero exit reported by postToolUse (and the same call again as postToolUseFailure)
    s2 = CursorSession(learn, learn.cwd, commands)
    out = s2.post("pytest tests", 127, PYTEST_MISSING, tool_use_id="call_dup")
    assert s2.failure("pytest tests", PYTEST_MISSING, tool_use_id="call_dup") is None
    # the same failure again in this project: what worked, seen once
    said = out["additional_context"]
    assert said.startswith("learn: known fix (seen once in this project): `python -m pytest tests`")
    s2.post("python -m pytest tests", 0, "2 passed")
    [rec] = learned(learn, learn.cwd)
    assert rec["status"] == "active" and len(rec["evidence"]) == 2  # the duplicate counted once
    s3 = CursorSession(learn, learn.cwd, commands)
    out = s3.post("pytest tests", 127, PYTEST_MISSING)
    assert list(out) == ["additional_context"] and "python -m pytest tests" in out["additional_context"]
    start = s3.start()
    assert list(start) == ["additional_context"] and "python -m pytest" in start["additional_context"]


def test_cursor_without_tool_events_uses_shell_executions(learn):
    commands = flat_commands(Path(install(learn, "cursor")["path"]))
    s = CursorSession(learn, learn.cwd, commands)
    s.shell("pytest tests", PYTEST_MISSING + "\n", modern=False)
    s.shell("python -m pytest tests", "2 passed\n", modern=False)
    [rec] = learned(learn, learn.cwd)
    assert rec["command"] == "pytest tests" and rec["fix_command"] == "python -m pytest tests"


def test_cursor_permission_denials_are_not_learnings():
    event = cursor.to_event({"hook_event_name": "postToolUseFailure", "conversation_id": "c", "tool_name": "Shell",
                             "tool_input": {"command": "rm -rf /"}, "tool_use_id": "t", "cwd": "/w",
                             "error_message": "denied", "failure_type": "permission_denied", "is_interrupt": False})
    assert event.kind == "other"


# ---------------------------------------------------------------------------------------------
# OpenClaw


def test_openclaw_skill_install_and_uninstall(learn):
    skills = learn.tmp / "userhome" / ".openclaw" / "skills"
    other = skills / "weather" / "SKILL.md"
    other.parent.mkdir(parents=True)
    other.write_text("---\nname: weather\ndescription: forecasts\n---\nUse wttr.in.\n")
    result = install(learn, "openclaw")
    path = skills / "learn" / "SKILL.md"
    assert result["path"] == str(path) and result["changed"] and "session" in result["note"]
    text = path.read_text()
    assert text.startswith("---\nname: learn\ndescription: ")
    assert f"`{learn.exe} recall " in text and f"`{learn.exe} context`" in text and f"`{learn.exe} add " in text
    assert install(learn, "openclaw")["changed"] is False
    status = learn.json("hooks", "status", "--agent", "openclaw")
    user = next(r for r in status["scopes"] if r["scope"] == "user")
    assert user["events"] == ["skill"] and user["current"] and user["runnable"]
    doc = learn.json("hooks", "uninstall", "--agent", "openclaw")
    assert doc["changed"] and not path.parent.exists()
    assert other.read_text() == "---\nname: weather\ndescription: forecasts\n---\nUse wttr.in.\n"
    path.parent.mkdir()
    path.write_text("---\nname: learn\ndescription: someone else's\n---\n")
    proc = learn("hooks", "install", "--agent", "openclaw")
    assert proc.returncode == 1 and "not written by learn" in proc.stderr and "Traceback" not in proc.stderr
    assert learn.json("hooks", "uninstall", "--agent", "openclaw")["changed"] is False
    assert path.read_text() == "---\nname: learn\ndescription: someone else's\n---\n"


def test_shipped_skill_is_the_installed_one():
    shipped = Path(__file__).resolve().parents[1] / "hooks" / "openclaw" / "SKILL.md"
    assert shipped.read_text() == openclaw.skill_text("learn")


def test_openclaw_after_tool_call_payloads(learn):
    def call(n: int, command: str, **outcome) -> dict:
        return {"hook_event_name": "after_tool_call",
                "event": {"toolName": "exec", "params": {"command": command}, "toolCallId": f"call_{n}",
                          "durationMs": 40, **outcome},
                "ctx": {"agentId": "main", "sessionKey": "agent:main:main", "sessionId": "oc-1",
                        "cwd": str(learn.cwd)}}

    for _n, payload in enumerate([call(1, "pytest tests", error=PYTEST_MISSING),
                                 call(2, "python -m pytest tests"),  # neither result nor error: no evidence
                                 call(3, "python -m pytest tests", result={"exitCode": 0, "stdout": "2 passed"})]):
        proc = learn.hook("capture", "--agent", "openclaw", input=payload)
        assert proc.returncode == 0 and proc.stdout == "" and "Traceback" not in proc.stderr
    [rec] = learned(learn, learn.cwd)
    assert rec["fix_command"] == "python -m pytest tests" and rec["evidence"][0]["event"] == "call_1"
    assert openclaw.to_event(call(9, "ls")).kind == "other"


# ---------------------------------------------------------------------------------------------
# Install -> uninstall round trips: the user's file comes back byte for byte


USER_FILES = {
    "codex": (".codex/hooks.json", {
        "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/audit.sh",
                                                                "timeout": 30, "statusMessage": "auditing"}]}],
                  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]}}),
    "gemini": (".gemini/settings.json", {
        "theme": "GitHub", "model": {"name": "gemini-3-pro"},
        "mcpServers": {"db": {"command": "db-mcp", "args": ["--ro"]}},
        "hooks": {"AfterTool": [{"matcher": "write_file", "sequential": True, "hooks": [
            {"type": "command", "name": "fmt", "command": "prettier --write", "timeout": 5000}]}]}}),
    "cursor": (".cursor/hooks.json", {
        "version": 1, "hooks": {"afterFileEdit": [{"command": "./hooks/format.sh"}],
                                "postToolUse": [{"command": "./hooks/log.sh", "matcher": "Shell", "timeout": 5}]}}),
}


@pytest.mark.parametrize("agent", sorted(USER_FILES))
def test_round_trip_leaves_the_users_file_byte_identical(learn, agent):
    rel, doc = USER_FILES[agent]
    path = learn.tmp / "userhome" / rel
    path.parent.mkdir(parents=True)
    original = json.dumps(doc, indent=4, ensure_ascii=False) + "\n"
    path.write_text(original, encoding="utf-8")
    result = install(learn, agent)
    assert result["changed"] and result["backup"]
    installed = json.loads(path.read_text())
    for key, value in doc.items():
        if key != "hooks":
            assert installed[key] == value
    for event, entries in doc["hooks"].items():
        assert installed["hooks"][event][: len(entries)] == entries
    first = path.read_bytes()
    assert install(learn, agent)["changed"] is False and path.read_bytes() == first
    status = learn.json("hooks", "status", "--agent", agent, "--scope", "user")
    [row] = status["scopes"]
    assert row["missing"] == [] and row["current"] and row["runnable"]
    assert learn.json("hooks", "uninstall", "--agent", agent)["changed"] is True
    assert path.read_text(encoding="utf-8") == original


@pytest.mark.parametrize("agent, rel", [("codex", ".codex/hooks.json"), ("gemini", ".gemini/settings.json"),
                                        ("cursor", ".cursor/hooks.json"), ("openclaw", "skills/learn/SKILL.md")])
def test_project_scope_and_no_local_scope(learn, agent, rel):
    cwd = learn.project("api", remote="git@github.com:acme/api.git")
    install(learn, agent, scope="project", cwd=cwd)
    assert (cwd / rel).exists()
    proc = learn("hooks", "install", "--agent", agent, "--scope", "local", cwd=cwd)
    assert proc.returncode == 2 and "no local scope" in proc.stderr and "Traceback" not in proc.stderr
    learn("hooks", "uninstall", "--agent", agent, "--scope", "project", cwd=cwd, check=0)


def test_unknown_agent_is_a_usage_error_but_capture_never_fails(learn):
    proc = learn("hooks", "install", "--agent", "vim")
    assert proc.returncode == 2 and "codex" in proc.stderr
    proc = learn("capture", "--agent", "vim", input={"hook_event_name": "PostToolUse"})
    assert proc.returncode == 0 and proc.stdout == "" and "unknown agent" in proc.stderr


def test_context_hook_without_a_payload_speaks_each_agents_shape(learn):
    learn("add", "Docker builds need an explicit platform", "--fix", "docker build --platform linux/amd64 .",
          check=0)
    shapes = {"codex": lambda d: d["hookSpecificOutput"]["hookEventName"] == "SessionStart",
              "gemini": lambda d: d["hookSpecificOutput"]["hookEventName"] == "SessionStart",
              "cursor": lambda d: list(d) == ["additional_context"]}
    for agent, ok in shapes.items():
        proc = learn.hook("context", "--hook", "--agent", agent)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert ok(doc) and "--platform linux/amd64" in json.dumps(doc)


def test_adapters_tolerate_junk():
    for module in (codex, gemini, cursor, openclaw):
        for payload in (None, [], "x", {}, {"hook_event_name": 3}, {"hook_event_name": "PostToolUse", "tool_input": 5,
                                                                      "tool_response": {"exit_code": True}}):
            event = module.to_event(payload)
            assert event is None or event.kind in ("other", "success", "failure", "pre_tool", "prompt")


# ---------------------------------------------------------------------------------------------
# flush: the knowledge file every agent reads


@pytest.mark.parametrize("name", ["AGENTS.md", "GEMINI.md"])
def test_flush_into_an_agents_file_twice_is_byte_identical(learn, name):
    target = learn.cwd / name
    before, after = "# Team notes\n\nKeep PRs small.\n\n", "\n## Later\nOwner: ops\n"
    target.write_text(before + after)
    learn("add", "Tests need the local services", "--fix", "docker compose up -d db", check=0)
    learn("flush", check=0)  # auto: the knowledge file that exists
    first = target.read_bytes()
    assert first.startswith((before + after).encode()) and b"docker compose up -d db" in first
    learn("flush", check=0)
    assert target.read_bytes() == first
    assert not (learn.cwd / "CLAUDE.md").exists()
