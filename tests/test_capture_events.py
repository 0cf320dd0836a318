"""Claude Code payloads -> events, and user corrections in prompts (no store involved)."""

from __future__ import annotations

import pytest

from learn_cli.agents.claude import to_event
from learn_cli.capture import events as ev
from learn_cli.capture.corrections import find_corrections

# Verbatim shapes from reference/agent-hooks.md §1.6.
FAILURE = {"session_id": "abc123", "transcript_path": "/Users/x/.claude/projects/p/00893aaf.jsonl", "cwd": "/Users/x",
           "permission_mode": "default", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
           "tool_input": {"command": "npm test", "description": "Run test suite"}, "tool_use_id": "toolu_01ABC123",
           "error": "Exit code 1\nError: Cannot find module 'express'", "is_interrupt": False, "duration_ms": 4187}
SUCCESS = {"session_id": "s1", "transcript_path": "/home/dev/.claude/projects/p/s1.jsonl", "cwd": "/home/dev/app",
           "prompt_id": "p1", "permission_mode": "default", "effort": {"level": "medium"},
           "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "echo probe", "description": "Print the word probe"},
           "tool_response": {"stdout": "probe", "stderr": "", "interrupted": False, "isImage": False,
                             "noOutputExpected": False}, "tool_use_id": "t1", "duration_ms": 107}
WRITE = {"session_id": "abc123", "cwd": "/Users/x", "hook_event_name": "PostToolUse", "tool_name": "Write",
         "tool_input": {"file_path": "/path/to/file.txt", "content": "file content"},
         "tool_response": {"filePath": "/path/to/file.txt", "success": True}, "tool_use_id": "toolu_01ABC123"}


def test_failure_payload():
    e = to_event(FAILURE)
    assert e.kind == ev.FAILURE and e.agent == "claude-code" and e.tool == "Bash"
    assert e.command == "npm test" and e.exit_code == 1 and e.tool_use_id == "toolu_01ABC123"
    assert e.error.endswith("Cannot find module 'express'") and not e.is_interrupt
    assert e.session_id == "abc123" and e.cwd == "/Users/x"


def test_old_failure_wording_and_bare_message():
    assert to_event(dict(FAILURE, error="Command exited with non-zero status code 2")).exit_code == 2
    e = to_event(dict(FAILURE, error="spawn /bin/sh ENOENT"))
    assert e.kind == ev.FAILURE and e.exit_code is None


def test_success_payload_and_path_tools():
    e = to_event(SUCCESS)
    assert e.kind == ev.SUCCESS and e.output == "probe" and e.command == "echo probe"
    w = to_event(WRITE)
    assert w.kind == ev.SUCCESS and w.path == "/path/to/file.txt" and w.is_path_tool and not w.command


def test_interrupted_success_is_not_a_success():
    payload = dict(SUCCESS, tool_response=dict(SUCCESS["tool_response"], interrupted=True))
    assert to_event(payload).kind == ev.OTHER


@pytest.mark.parametrize("name, kind", [("SessionStart", ev.SESSION_START), ("SessionEnd", ev.SESSION_END),
                                        ("Stop", ev.STOP), ("UserPromptSubmit", ev.PROMPT),
                                        ("PreToolUse", ev.PRE_TOOL), ("Notification", ev.OTHER),
                                        ("SomethingNew", ev.OTHER)])
def test_event_kinds(name, kind):
    assert to_event({"hook_event_name": name, "session_id": "s"}).kind == kind


@pytest.mark.parametrize("payload", [None, [], "text", 5, {}, {"hook_event_name": 7}, {"hook_event_name": None}])
def test_not_a_payload(payload):
    assert to_event(payload) is None


def test_wrong_field_types_are_tolerated():
    e = to_event({"hook_event_name": "PostToolUseFailure", "session_id": ["x"], "cwd": 3, "tool_name": {"a": 1},
                  "tool_input": "rm -rf /", "error": {"message": "boom"}, "is_interrupt": "yes"})
    assert e.kind == ev.FAILURE and e.session_id == "" and e.cwd == "" and e.tool == ""
    assert e.command == "" and e.error == "boom" and e.is_interrupt is False


def test_prompt_payload():
    e = to_event({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "never commit .env",
                  "prompt_id": "p9"})
    assert e.kind == ev.PROMPT and e.prompt == "never commit .env" and e.prompt_id == "p9"


# ---------------------------------------------------------------------------------------------
# Corrections


@pytest.mark.parametrize("prompt, rules", [
    ("don't use npm, use pnpm", ["Don't use npm, use pnpm."]),
    ("Never commit .env", ["Never commit .env."]),
    ("never commit secrets to git", ["Never commit secrets to git."]),  # headroom dropped the never
    ("always run the linter first", ["Always run the linter first."]),
    ("Please stop adding comments everywhere.", ["Stop adding comments everywhere."]),
    ("use ruff instead of flake8", ["Use ruff instead of flake8."]),
    ("We use vitest, not jest", ["We use vitest, not jest."]),
    ("You should never hardcode the API URL", ["Never hardcode the API URL."]),
    ("From now on, always use uv run for python", ["Always use uv run for python."]),
    ("No, never commit .env. Also don't push to main!", ["Never commit .env.", "Don't push to main."]),
    ("always run the linter and never skip the tests", ["Always run the linter.", "Never skip the tests."]),
])
def test_corrections_keep_their_words_and_negation(prompt, rules):
    assert [c.text for c in find_corrections(prompt)] == rules


@pytest.mark.parametrize("prompt", [
    "I don't know why this fails", "it never worked before", "why don't you use pnpm?", "Don't worry about it",
    "Never mind, it works", "fix the bug in app.py", "Use the existing helper", "we always had this problem",
    "the tests don't pass", "", "   ",
])
def test_no_false_corrections(prompt):
    assert find_corrections(prompt) == []


@pytest.mark.parametrize("prompt", [
    # instructions for the moment, or about what was just named (from real sessions, reworded)
    "Don't run the migrations yet.", "Stop pushing for now.", "Make sure you add them to the plan for review.",
    "Never go into detail on those options.", "Make sure you include what I said earlier this session.",
    "Don't deploy today.", "Always use these two helpers.",
])
def test_an_instruction_for_the_moment_is_no_rule(prompt):
    assert find_corrections(prompt) == []


@pytest.mark.parametrize("prompt", [
    "Never commit code that has not been tested yet.", "Always update the docs when you change them.",
    "Always use today's date in the changelog file name.",
])
def test_a_rule_with_a_clause_of_its_own_stays(prompt):
    assert [c.text for c in find_corrections(prompt)] == [prompt]


def test_correction_polarity_and_category():
    [never] = find_corrections("never commit .env")
    [style] = find_corrections("don't use tabs for indentation")
    [instead] = find_corrections("use pnpm instead of npm")
    assert never.polarity == "never" and never.category == "tooling"
    assert style.category == "style" and instead.polarity == "instead"
