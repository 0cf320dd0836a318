"""The adapters and `learn ingest` on what the real agents sent and wrote (tests/data).

tests/data/real-payloads: hook payloads recorded from Claude Code 2.1.197, Codex 0.171.0 and
Gemini CLI 0.61.0 (copied from the shared reference). tests/data/agent-logs: a Codex rollout and
a Gemini CLI chat log of one session each. The end-to-end runs of the agents themselves are in
tests/agents (they need npm); these run everywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from learn_cli.agents import claude, codex, gemini
from learn_cli.capture import events as ev
from learn_cli.capture import hook

DATA = Path(__file__).parent / "data"
PAYLOADS = DATA / "real-payloads"
CLAUDE, CODEX, GEMINI = "claude-code-2.1.197", "codex-0.171.0", "gemini-cli-0.61.0"


def payload(agent: str, name: str) -> dict:
    return json.loads((PAYLOADS / agent / f"{name}.json").read_text())


@pytest.mark.parametrize("agent, adapter", [(CLAUDE, claude), (CODEX, codex), (GEMINI, gemini)])
def test_every_recorded_payload_is_read(agent, adapter):
    for path in sorted((PAYLOADS / agent).glob("[A-Z]*.json")):
        event = adapter.to_event(json.loads(path.read_text()))
        assert event is not None, path.name
        assert event.session_id and event.cwd == "<PROJECT>", path.name


def test_claude_failures_and_results():
    bash = claude.to_event(payload(CLAUDE, "PostToolUseFailure-Bash"))
    assert (bash.kind, bash.exit_code, bash.command) == (ev.FAILURE, 127, "pytest -q")
    silent = claude.to_event(payload(CLAUDE, "PostToolUseFailure-Bash-no-output"))
    assert (silent.kind, silent.exit_code, silent.error) == (ev.FAILURE, 1, "Exit code 1")
    read = claude.to_event(payload(CLAUDE, "PostToolUseFailure-Read"))
    assert read.kind == ev.FAILURE and read.exit_code is None and read.path == "<PROJECT>/calcs.py"
    assert read.error == "File does not exist."  # Claude Code's cwd note is not the error
    ok = claude.to_event(payload(CLAUDE, "PostToolUse-Read"))
    assert ok.kind == ev.SUCCESS and "def add" in ok.output
    write = claude.to_event(payload(CLAUDE, "PostToolUse-Write"))
    assert write.kind == ev.SUCCESS and "from calc import add" in write.output
    edit = claude.to_event(payload(CLAUDE, "PostToolUse-Edit"))
    assert edit.kind == ev.SUCCESS and edit.path == "<PROJECT>/calc.py"
    grep = claude.to_event(payload(CLAUDE, "PostToolUse-Bash-grep-no-match"))
    assert grep.kind == ev.SUCCESS  # exit 1 of grep is "No matches found", not a failure


def test_gemini_shell_result_in_its_wrapper():
    failed = gemini.to_event(payload(GEMINI, "AfterTool-run_shell_command"))
    assert (failed.kind, failed.exit_code) == (ev.FAILURE, 127)
    assert failed.error == "/usr/bin/bash: line 4: pytest: command not found"
    passed = gemini.to_event(payload(GEMINI, "AfterTool-run_shell_command-exit0"))
    assert passed.kind == ev.SUCCESS and passed.output.endswith("1 passed in 2.36s")
    assert "PGID" not in passed.output and "untrusted" not in passed.output
    missing = gemini.to_event(payload(GEMINI, "AfterTool-read_file"))
    assert missing.kind == ev.FAILURE and missing.tool == "Read" and "File not found" in missing.error
    assert gemini.to_event(payload(GEMINI, "AfterTool-read_file-ok")).kind == ev.SUCCESS
    prompt = gemini.to_event(payload(GEMINI, "BeforeAgent"))
    assert prompt.kind == ev.PROMPT and prompt.prompt.startswith("Run the tests")


def test_gemini_silent_failure_says_its_exit_code():
    p = payload(GEMINI, "AfterTool-run_shell_command")
    p["tool_input"]["command"] = "false"
    p["tool_response"]["llmContent"] = (
        "<untrusted_context>\nOutput: (empty)\nExit Code: 1\nProcess Group PGID: 9\n</untrusted_context>"
    )
    event = gemini.to_event(p)
    assert (event.kind, event.exit_code, event.error) == (ev.FAILURE, 1, "Exit code 1")


def test_codex_exit_code_from_its_rollout(tmp_path):
    """Codex gives a hook no exit code; a silent failure is found in the rollout it names."""
    p = payload(CODEX, "PostToolUse-Bash-exit0")
    assert codex.to_event(p).kind == ev.SUCCESS
    assert codex.to_event(payload(CODEX, "PostToolUse-Bash-exit127")).kind == ev.FAILURE
    rollout = tmp_path / "rollout-2026-12-01T07-53-01-x.jsonl"
    item = {"type": "CommandExecution", "id": "call_silent", "command": ["/bin/bash", "-lc", "false"],
            "aggregated_output": "", "exit_code": 1, "status": "failed"}
    rollout.write_text(json.dumps({"type": "event_msg", "payload": {"type": "item_completed", "item": item}}) + "\n")
    silent = dict(p, tool_input={"command": "false"}, tool_response="", tool_use_id="call_silent",
                  transcript_path=str(rollout))
    event = codex.to_event(silent)
    assert (event.kind, event.exit_code, event.error) == (ev.FAILURE, 1, "Exit code 1")
    assert codex.to_event(dict(silent, tool_use_id="call_other")).kind == ev.SUCCESS  # not in the rollout
    assert codex.to_event(dict(silent, transcript_path=str(tmp_path / "notes.jsonl"))).kind == ev.SUCCESS


def test_guard_answers_in_each_agents_shape():
    from learn_cli.capture import guard

    claude_answer = guard.deny("claude-code", "use X")["hookSpecificOutput"]
    assert claude_answer == {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                             "permissionDecisionReason": "use X"}
    assert guard.deny("codex", "use X") == {"hookSpecificOutput": claude_answer}
    assert guard.deny("gemini", "use X") == {"decision": "deny", "reason": "use X"}


def test_pre_tool_without_guard_says_nothing(tmp_path):
    p = dict(payload(CLAUDE, "PreToolUse-Bash"), cwd=str(tmp_path))
    assert hook.handle(json.dumps(p), home=str(tmp_path / "home")) is None


@pytest.mark.parametrize("log", ["codex-0.171.0", "gemini-cli-0.61.0"])
def test_ingest_reads_codex_and_gemini_logs(learn, log):
    doc = learn.json("ingest", str(DATA / "agent-logs" / log))
    assert doc["files"] == 1 and doc["tool_calls"] == 4 and doc["failures"] == 2 and doc["prompts"] == 1, doc
    again = learn.json("ingest", str(DATA / "agent-logs" / log))
    assert again["files_skipped"] == 1 and again["tool_calls"] == 0  # idempotent
    recs = []
    for path in learn.home.glob("projects/*/learnings.jsonl"):
        recs += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    fixes = {r.get("fix_command") for r in recs}
    assert "python3 -m pytest -q" in fixes, recs
    assert any(r["type"] == "preference" and "Never commit the .env file" in r["fix"] for r in recs), recs
    assert all(r["source"] == "ingest" for r in recs)
