"""`learn ingest`: Claude Code transcripts replayed through the capture pipeline.

Transcript lines are built from the verbatim Claude Code 2.1.241 lines of
reference/agent-hooks.md §2.2 (only ids, commands, texts and times substituted): an assistant
`tool_use`, its failed `tool_result` (`is_error: true`, `"Exit code N\\n…"`, string
`toolUseResult`) and a successful one (`toolUseResult` object). Runs go through the installed
`learn` executable with a temporary HOME (the `learn` fixture).
"""

from __future__ import annotations

import copy
import json
import os
import uuid
from pathlib import Path

import pytest

from learn_cli.store import jsonl
from learn_cli.store.project import identify

# Verbatim lines of reference §2.2 (the assistant line's `usage` block was trimmed there).
ASSISTANT = json.loads(r'''{"parentUuid":"d0a4eb1f-f82c-431c-9ade-4ea206fb241d","isSidechain":false,"message":{"model":"claude-opus-5","id":"msg_011CeKjM5waK7nS95XqPBLa5","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_01MndiDCw9wjkxWUKBcyptXE","name":"Bash","input":{"command":"ls /no/such/dir","description":"List a nonexistent directory (expected to fail)"},"caller":{"type":"direct"}}],"stop_reason":"tool_use","stop_sequence":null,"stop_details":null,"usage":{},"diagnostics":null},"requestId":"req_011CeKjM4zmjMNQNXZaq48Y8","type":"assistant","uuid":"76796587-4731-4600-8aec-7a2cc8a2bb01","timestamp":"2026-08-23T13:06:59.718Z","effort":"high","session_id":"eff0c425-ceb9-41de-b565-c14b6db2a226","userType":"external","entrypoint":"cli","cwd":"/tmp/claude-0/-root-src-workspace-Yxi/d0ccc7db-ab52-458f-807f-39247666d0c2/scratchpad/iosparse","sessionId":"eff0c425-ceb9-41de-b565-c14b6db2a226","version":"2.1.241","gitBranch":"HEAD","slug":"lively-honking-widget"}''')  # noqa: E501 - verbatim
FAILED = json.loads(r'''{"parentUuid":"76796587-4731-4600-8aec-7a2cc8a2bb01","isSidechain":false,"promptId":"e1cecb37-01e4-41dd-9dcc-f3f56d180c37","type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"Exit code 2\nls: cannot access '/no/such/dir': No such file or directory","is_error":true,"tool_use_id":"toolu_01MndiDCw9wjkxWUKBcyptXE"}]},"uuid":"95220a6b-ee2f-4eb6-b8bd-2d719eaba834","timestamp":"2026-08-23T13:07:01.166Z","toolUseResult":"Error: Exit code 2\nls: cannot access '/no/such/dir': No such file or directory","sourceToolAssistantUUID":"76796587-4731-4600-8aec-7a2cc8a2bb01","session_id":"eff0c425-ceb9-41de-b565-c14b6db2a226","userType":"external","entrypoint":"cli","cwd":"/tmp/claude-0/-root-src-workspace-Yxi/d0ccc7db-ab52-458f-807f-39247666d0c2/scratchpad/iosparse","sessionId":"eff0c425-ceb9-41de-b565-c14b6db2a226","version":"2.1.241","gitBranch":"HEAD","slug":"lively-honking-widget"}''')  # noqa: E501 - verbatim
SUCCEEDED = json.loads(r'''{"parentUuid":"8f1fa86f-256b-431e-bab7-f0cc6a75c826","isSidechain":false,"promptId":"e1cecb37-01e4-41dd-9dcc-f3f56d180c37","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01B3pZnUxpcCAWqrsBtFzXzW","type":"tool_result","content":"world","is_error":false}]},"uuid":"0500a39c-e3b2-47b2-b566-3f44a668f7a4","timestamp":"2026-08-23T13:06:58.092Z","toolUseResult":{"stdout":"world","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"sourceToolAssistantUUID":"8f1fa86f-256b-431e-bab7-f0cc6a75c826","session_id":"eff0c425-ceb9-41de-b565-c14b6db2a226","userType":"external","entrypoint":"cli","cwd":"/tmp/claude-0/-root-src-workspace-Yxi/d0ccc7db-ab52-458f-807f-39247666d0c2/scratchpad/iosparse","sessionId":"eff0c425-ceb9-41de-b565-c14b6db2a226","version":"2.1.241","gitBranch":"HEAD","slug":"lively-honking-widget"}''')  # noqa: E501 - verbatim
ANSI_ERROR = "Exit code 1\n\x1b[31mERROR: Could not find a version that satisfies the requirement left-padd\x1b[0m\n" \
             "\x1b[31mERROR: No matching distribution found for left-padd\x1b[0m"


class Transcript:
    """One Claude Code session as its transcript file, line by line."""

    def __init__(self, root: Path, cwd: Path, session: str | None = None, agent: str | None = None,
                 day: int = 23):
        self.cwd, self.day = cwd, day
        self.sid = session or str(uuid.uuid4())
        self.agent = agent
        folder = root / ("-" + str(cwd).strip("/").replace("/", "-"))
        self.path = folder / self.sid / "subagents" / f"agent-{agent}.jsonl" if agent else folder / f"{self.sid}.jsonl"
        self.lines: list[dict] = []
        self.n = 0

    def _stamp(self, line: dict) -> dict:
        self.n += 1
        line.update(uuid=str(uuid.uuid4()), sessionId=self.sid, session_id=self.sid, cwd=str(self.cwd),
                    timestamp=f"2026-08-{self.day:02d}T13:{self.n // 60:02d}:{self.n % 60:02d}.166Z")
        if self.agent:
            line.update(isSidechain=True, agentId=self.agent)
        self.lines.append(line)
        return line

    def call(self, command: str, tool: str = "Bash", tool_input: dict | None = None) -> str:
        line = copy.deepcopy(ASSISTANT)
        tid = f"toolu_01{uuid.uuid4().hex[:22]}"
        block = line["message"]["content"][0]
        block.update(id=tid, name=tool, input=tool_input or {"command": command, "description": "Run it"})
        self._stamp(line)
        return tid

    def fail(self, command: str, output: str, code: int = 1, array: bool = False, **kw) -> str:
        tid = self.call(command, **kw)
        text = f"Exit code {code}\n{output}" if code is not None else output
        self.result(tid, text, is_error=True, array=array)
        return tid

    def ok(self, command: str, stdout: str = "done", array: bool = False, **kw) -> str:
        tid = self.call(command, **kw)
        self.result(tid, stdout, is_error=False, array=array)
        return tid

    def result(self, tid: str, text: str, is_error: bool, array: bool = False) -> None:
        line = copy.deepcopy(FAILED if is_error else SUCCEEDED)
        block = line["message"]["content"][0]
        block.update(tool_use_id=tid, content=[{"type": "text", "text": text}] if array else text)
        line["toolUseResult"] = "Error: " + text if is_error else dict(line["toolUseResult"], stdout=text)
        self._stamp(line)

    def prompt(self, text: str, **extra) -> None:
        line = copy.deepcopy(SUCCEEDED)
        del line["toolUseResult"], line["sourceToolAssistantUUID"]
        line["message"] = {"role": "user", "content": text}
        line.update(promptId=str(uuid.uuid4()), **extra)  # each prompt starts a turn of its own
        self._stamp(line)

    def write(self, raw_tail: bytes = b"") -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = "".join(json.dumps(line) + "\n" for line in self.lines).encode() + raw_tail
        self.path.write_bytes(data)
        return self.path


@pytest.fixture
def projects(learn) -> Path:
    """~/.claude/projects of the fixture's HOME."""
    root = learn.tmp / "userhome" / ".claude" / "projects"
    root.mkdir(parents=True)
    return root


def learned(learn, cwd: Path) -> list[dict]:
    path = learn.home / "projects" / identify(cwd).id / "learnings.jsonl"
    return list(jsonl.load(path).records.values()) if path.exists() else []


def ingest(learn, *args) -> dict:
    proc = learn("ingest", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def test_failure_and_fix_become_a_learning_with_the_transcripts_facts(learn, projects):
    t = Transcript(projects, learn.cwd)
    failed = t.fail("pytest tests", "bash: pytest: command not found", code=127)
    t.ok("python -m pytest tests", "3 passed in 0.12s")
    t.write()
    summary = ingest(learn)
    assert summary["files"] == 1 and summary["lines"] == 4 and summary["tool_calls"] == 2
    assert summary["failures"] == 1 and summary["pairs"] == 1 and summary["learnings_new"] == 1
    [rec] = learned(learn, learn.cwd)
    assert rec["command"] == "pytest tests" and rec["fix_command"] == "python -m pytest tests"
    assert rec["category"] == "dependency" and rec["exit_code"] == 127
    assert rec["error"] == "bash: pytest: command not found"
    assert rec["source"] == "ingest" and rec["status"] == "pending"
    assert rec["evidence"] == [{"session": t.sid, "event": failed, "at": "2026-08-23T13:00:04Z"}]
    assert rec["created"] == "2026-08-23T13:00:04Z"  # the transcript's time, not the ingest's


def test_array_content_and_ansi_escapes(learn, projects):
    t = Transcript(projects, learn.cwd)
    t.fail("pip install left-padd", ANSI_ERROR.split("\n", 1)[1], code=1, array=True)
    t.ok("pip install left-pad", "Successfully installed left-pad-1.3.0", array=True)
    t.write()
    ingest(learn)
    [rec] = learned(learn, learn.cwd)
    assert "\x1b" not in json.dumps(rec)
    assert "No matching distribution found for left-padd" in rec["error"]
    assert rec["fix_command"] == "pip install left-pad" and rec["category"] == "dependency"


def test_errors_that_are_not_learnings_are_skipped(learn, projects):
    t = Transcript(projects, learn.cwd)
    refused = [
        ("<tool_use_error>InputValidationError: Bash failed due to the following issue:\n"
         "The required parameter `command` is missing</tool_use_error>", "Bash", None),
        ("Permission to use Write has been denied because Claude Code is running in don't ask mode.",
         "Write", {"file_path": str(learn.cwd / "a.py"), "content": "x"}),
        ("The user doesn't want to proceed with this tool use. The tool use was rejected.", "Bash", None),
    ]
    for text, tool, tool_input in refused:
        tid = t.call("rm -rf build", tool=tool, tool_input=tool_input)
        t.result(tid, text, is_error=True)
        t.ok("rm -rf build/", tool=tool, tool_input=tool_input)
    t.write()
    summary = ingest(learn)
    assert summary["ignored_errors"] == 3 and summary["failures"] == 0
    assert learned(learn, learn.cwd) == []


def test_path_tool_error_and_the_right_path(learn, projects):
    t = Transcript(projects, learn.cwd)
    wrong, right = str(learn.cwd / "src" / "confg.py"), str(learn.cwd / "src" / "config.py")
    tid = t.call("", tool="Read", tool_input={"file_path": wrong})
    t.result(tid, "<tool_use_error>File does not exist. Note: your current working directory is "
                  f"{learn.cwd}.</tool_use_error>", is_error=True)
    t.ok("", tool="Read", tool_input={"file_path": right}, stdout="     1\tDEBUG = False\n")
    t.write()
    ingest(learn)
    [rec] = learned(learn, learn.cwd)
    assert rec["tool"] == "Read" and rec["fix_kind"] == "path"
    assert rec["command"] == "Read src/confg.py" and rec["fix_command"] == "src/config.py"


def test_two_sessions_make_it_active_and_a_second_ingest_changes_nothing(learn, projects):
    other = learn.project("billing")
    for day, cwd in ((20, learn.cwd), (21, learn.cwd), (22, other)):
        t = Transcript(projects, cwd, day=day)
        t.fail("npm run biuld", 'npm error Missing script: "biuld"')
        t.ok("npm run build", "built in 2.1s")
        t.write()
    first = ingest(learn)
    assert first["files"] == 3 and first["learnings_new"] == 2 and first["learnings_merged"] == 1
    [rec] = learned(learn, learn.cwd)
    assert rec["status"] == "active" and len(rec["evidence"]) == 2
    files = sorted(learn.home.rglob("*.jsonl"))
    before = {p: p.read_bytes() for p in files}
    second = ingest(learn)
    assert second["files"] == 0 and second["files_skipped"] == 3 and second["lines"] == 0
    assert second["learnings_new"] == second["learnings_merged"] == second["pairs"] == 0
    assert {p: p.read_bytes() for p in files} == before
    (learn.home / "ingest.json").unlink()  # even without its memory, a replay adds no evidence
    third = ingest(learn)
    assert third["files"] == 3 and third["learnings_new"] == third["pairs"] == third["corrections"] == 0
    assert learned(learn, learn.cwd)[0]["evidence"] == rec["evidence"]


def test_a_grown_transcript_resumes_where_it_stopped(learn, projects):
    t = Transcript(projects, learn.cwd)
    t.ok("ls")
    tid = t.call("cargo test --relase")
    t.write()
    assert ingest(learn)["lines"] == 3
    t.result(tid, "Exit code 1\nerror: unexpected argument '--relase' found", is_error=True)
    t.ok("cargo test --release", "test result: ok. 4 passed")
    t.write()
    summary = ingest(learn)
    assert summary["lines"] == 3 and summary["tool_calls"] == 2 and summary["unmatched_results"] == 0
    [rec] = learned(learn, learn.cwd)
    assert rec["fix_command"] == "cargo test --release" and rec["command"] == "cargo test --relase"


def test_a_line_being_written_is_left_for_the_next_run(learn, projects):
    t = Transcript(projects, learn.cwd)
    t.fail("pytest tests", "bash: pytest: command not found", code=127)
    partial = json.dumps(copy.deepcopy(ASSISTANT))[:80].encode()
    path = t.write(raw_tail=partial)
    summary = ingest(learn)
    assert summary["lines"] == 2 and summary["malformed"] == 0
    state = json.loads((learn.home / "ingest.json").read_text())
    assert state["files"][str(path)]["offset"] == path.stat().st_size - len(partial)


def test_malformed_lines_and_invalid_utf8_are_counted_not_fatal(learn, projects):
    t = Transcript(projects, learn.cwd)
    t.fail("pytest tests", "bash: pytest: command not found", code=127)
    t.ok("python -m pytest tests")
    t.prompt("don't use npm here, use pnpm")
    path = t.write()
    lines = path.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if b"use pnpm" in line)
    lines[at] = lines[at].replace(b"use pnpm", b"use pnpm \xff\xfe caf\xe9")  # not UTF-8
    lines.insert(1, b'{"type": "assistant", "message": {"content": [ truncated')
    lines.insert(2, b"\x00\x01 binary junk")
    lines.insert(3, b"[1, 2, 3]")
    path.write_bytes(b"\n".join(lines))
    summary = ingest(learn)
    assert summary["malformed"] == 3 and summary["pairs"] == 1 and summary["corrections"] == 1
    [pref] = [r for r in learned(learn, learn.cwd) if r["type"] == "preference"]
    assert "use pnpm" in pref["fix"] and "\ufffd" in pref["fix"]


def test_user_corrections_but_not_meta_or_command_messages(learn, projects):
    t = Transcript(projects, learn.cwd)
    t.prompt("never commit .env files")
    t.prompt([{"type": "text", "text": "always run the linter first"}])
    t.prompt("<command-name>/clear</command-name>\n<command-message>clear</command-message>")
    t.prompt("Caveat: The messages below were generated by the user while running local commands.", isMeta=True)
    t.prompt("[Request interrupted by user for tool use]")
    t.write()
    summary = ingest(learn)
    assert summary["prompts"] == 2 and summary["corrections"] == 2
    texts = sorted(r["fix"].lower() for r in learned(learn, learn.cwd))
    assert any("never commit .env" in x for x in texts) and any("linter" in x for x in texts)
    assert all(r["source"] == "ingest" and r["status"] == "pending" for r in learned(learn, learn.cwd))


def test_subagent_transcripts_are_ingested_in_a_buffer_of_their_own(learn, projects):
    main = Transcript(projects, learn.cwd)
    main.fail("npm run biuld", 'npm error Missing script: "biuld"')  # the parent never fixes it
    main.write()
    sub = Transcript(projects, learn.cwd, session=main.sid, agent="a1b2c3d4e5")
    sub.prompt("Investigate the failing build and never touch the CI config")  # the parent agent's words
    sub.ok("npm run build", "built")  # would look like the parent's retry in a shared buffer
    sub.fail("pytest -q", "bash: pytest: command not found", code=127)
    sub.ok("python -m pytest -q", "5 passed")
    sub.write()
    assert "subagents" in sub.path.parts
    summary = ingest(learn)
    assert summary["files"] == 2 and summary["corrections"] == 0 and summary["prompts"] == 0
    [rec] = learned(learn, learn.cwd)
    assert rec["fix_command"] == "python -m pytest -q"
    assert rec["evidence"][0]["session"] == main.sid  # evidence keeps the session, as live capture does


def test_sidechain_lines_in_the_parents_file_are_kept_apart(learn, projects):
    """Older Claude Code wrote a subagent's lines into the parent's transcript (isSidechain)."""
    t = Transcript(projects, learn.cwd)
    t.fail("npm run biuld", 'npm error Missing script: "biuld"')
    side = Transcript(projects, learn.cwd, session=t.sid)
    side.n = 10
    side.prompt("Look at the build and never edit package.json")
    side.ok("npm run build", "built")
    for line in side.lines:
        line["isSidechain"] = True
    t.lines += side.lines
    t.write()
    summary = ingest(learn)
    assert summary["tool_calls"] == 2 and summary["prompts"] == 0
    assert learned(learn, learn.cwd) == []


def test_live_capture_then_ingest_of_the_same_session_counts_once(learn, projects):
    t = Transcript(projects, learn.cwd)
    failed = t.fail("pytest tests", "bash: pytest: command not found", code=127)
    fixed = t.ok("python -m pytest tests")
    t.write()
    base = {"session_id": t.sid, "cwd": str(learn.cwd), "transcript_path": str(t.path), "tool_name": "Bash"}
    learn("capture", input=dict(base, hook_event_name="PostToolUseFailure", tool_use_id=failed,
                                tool_input={"command": "pytest tests"},
                                error="Exit code 127\nbash: pytest: command not found"),
          check=0)
    learn("capture", input=dict(base, hook_event_name="PostToolUse", tool_use_id=fixed,
                                tool_input={"command": "python -m pytest tests"}, tool_response={"stdout": "ok"}),
          check=0)
    [live] = learned(learn, learn.cwd)
    summary = ingest(learn)
    assert summary["pairs"] == 0 and summary["learnings_new"] == 0
    [after] = learned(learn, learn.cwd)
    assert after["evidence"] == live["evidence"] and after["status"] == "pending"


def test_replay_credits_no_suggestion(learn, projects):
    for day in (20, 21, 22):
        t = Transcript(projects, learn.cwd, day=day)
        t.fail("pytest tests", "bash: pytest: command not found", code=127)
        t.fail("pytest tests", "bash: pytest: command not found", code=127)  # "did not help" if suggested
        t.ok("python -m pytest tests")
        t.write()
    ingest(learn)
    [rec] = learned(learn, learn.cwd)
    assert rec["status"] == "active" and len(rec["evidence"]) == 3
    assert rec["helped"] == 0 and rec["not_helped"] == 0


def test_capture_off_projects_are_left_alone(learn, projects):
    learn("--auto", check=0)  # off for learn.cwd
    t = Transcript(projects, learn.cwd)
    t.fail("pytest tests", "bash: pytest: command not found", code=127)
    t.ok("python -m pytest tests")
    t.write()
    summary = ingest(learn)
    assert summary["capture_off"] == 2 and learned(learn, learn.cwd) == []


def test_gone_project_folder_keeps_its_own_identity(learn, projects):
    gone = learn.tmp / "work" / "deleted-app"
    t = Transcript(projects, gone)
    t.fail("pytest tests", "bash: pytest: command not found", code=127)
    t.ok("python -m pytest tests")
    t.write()
    ingest(learn)
    import hashlib

    pid = hashlib.sha256(str(gone).encode()).hexdigest()[:12]
    info = json.loads((learn.home / "projects" / pid / "project.json").read_text())
    assert info["name"] == "deleted-app" and info["root"] == str(gone)
    [rec] = jsonl.load(learn.home / "projects" / pid / "learnings.jsonl").records.values()
    assert rec["project"] == "deleted-app"


def test_claude_config_dir_and_explicit_paths(learn, tmp_path):
    config = tmp_path / "claude-config"
    t = Transcript(config / "projects", learn.cwd)
    t.fail("pytest tests", "bash: pytest: command not found", code=127)
    t.ok("python -m pytest tests")
    t.write()
    proc = learn("ingest", "--json", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert json.loads(proc.stdout)["files"] == 1
    assert json.loads(proc.stdout)["paths"] == [str(config / "projects")]
    other = Transcript(tmp_path / "elsewhere", learn.cwd)
    other.ok("ls")
    assert ingest(learn, str(other.write()))["files"] == 1


def test_plain_summary_and_errors(learn, projects):
    t = Transcript(projects, learn.cwd)
    t.fail("pytest tests", "bash: pytest: command not found", code=127)
    t.ok("python -m pytest tests")
    t.write()
    proc = learn("ingest", check=0)
    assert proc.stdout.splitlines()[:5] == [
        "transcripts: 1 (unchanged, skipped: 0)",
        "lines: 4 (malformed: 0)",
        "tool calls: 2 (failures: 1, ignored errors: 0)",
        "learnings: 1 new, 0 merged, 0 activated",
        "corrections: 0",
    ]
    assert "\x1b" not in proc.stdout and "📥" not in proc.stdout
    missing = learn("ingest", str(learn.tmp / "nope"))
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1
    assert "no such file or folder" in missing.stderr and "Traceback" not in missing.stderr
    empty_home = learn("ingest", env={"HOME": str(learn.tmp / "nobody")})
    assert empty_home.returncode == 0 and empty_home.stdout.startswith("transcripts: 0")


def test_json_summary_schema(learn, projects):
    Transcript(projects, learn.cwd).write()
    summary = ingest(learn)
    assert set(summary) == {
        "files", "files_skipped", "lines", "malformed", "bytes", "tool_calls", "failures", "ignored_errors",
        "unmatched_results", "prompts", "capture_off", "pairs", "corrections", "learnings_new",
        "learnings_activated", "learnings_merged", "seconds", "lines_per_s", "paths"}


def test_ingest_state_is_private(learn, projects):
    t = Transcript(projects, learn.cwd)
    t.ok("ls")
    t.write()
    ingest(learn)
    assert (os.stat(learn.home / "ingest.json").st_mode & 0o077) == 0


def test_a_second_ingest_at_the_same_time_is_refused(learn, projects):
    from learn_cli.store.locks import file_lock

    Transcript(projects, learn.cwd).write()
    ingest(learn)
    with file_lock(learn.home / "ingest.json"):
        proc = learn("ingest")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "another `learn ingest` is running" in proc.stderr and "Traceback" not in proc.stderr
