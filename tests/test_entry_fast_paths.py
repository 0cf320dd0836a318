"""The entry point's fast paths: answers that need neither typer nor rich (issue 14: importing
them is ~100 ms of CPU, more than ten times the interpreter's start)."""

from __future__ import annotations

import subprocess
import sys

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
