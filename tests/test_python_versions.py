"""Every Python the project supports (pyproject: requires-python >= 3.11) runs the hook.

The rest of the suite runs on one interpreter. These tests find the other supported CPythons on
this machine (on PATH, or under pyenv) and, for each: compile every source file (Python 3.13
refused a docstring that spelled a lone surrogate, and every hook call failed there), then
run the hook path from this source tree (`python -m learn_cli capture`: stdlib only, so no
install is needed) through a failure, its fix, and the same failure in a later session,
twice, so that the second process serves its regular expressions from the on-disk cache
that the first wrote (capture/regex_cache.py uses CPython's private `_sre`, `re._parser`
and `re._compiler`, which move between versions). A version that is not installed is
skipped, and says so.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUPPORTED = ((3, 11), (3, 12), (3, 13), (3, 14))


@functools.cache
def interpreter(version: tuple[int, int]) -> str | None:
    """An interpreter of `version`: this one, one on PATH, or a pyenv build; None when absent."""
    if sys.version_info[:2] == version:
        return sys.executable
    name = f"python{version[0]}.{version[1]}"
    pyenv = os.path.expanduser(f"~/.pyenv/versions/{version[0]}.{version[1]}*/bin/{name}")
    candidates = [shutil.which(name), *sorted(glob.glob(pyenv))]
    for exe in filter(None, candidates):
        probe = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == str(version):
            return exe
    return None


def _python(version: tuple[int, int]) -> str:
    exe = interpreter(version)
    if exe is None:
        pytest.skip(f"Python {version[0]}.{version[1]} is not installed here")
    return exe


@pytest.mark.parametrize("version", SUPPORTED, ids=lambda v: f"{v[0]}.{v[1]}")
def test_every_source_file_compiles(version):
    script = ("import pathlib, sys\n"
              "bad = []\n"
              "for path in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):\n"
              "    try:\n"
              "        compile(path.read_text(encoding='utf-8'), str(path), 'exec')\n"
              "    except Exception as exc:\n"
              "        bad.append(f'{path}: {exc!r}')\n"
              "print('\\n'.join(bad))\n")
    done = subprocess.run([_python(version), "-c", script, str(ROOT / "learn_cli")], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "", done.stdout + done.stderr


def _payload(cwd: Path, session: str, n: int, event: str, command: str, **extra) -> bytes:
    return json.dumps(dict({"session_id": session, "transcript_path": f"/t/{session}.jsonl", "cwd": str(cwd),
                            "hook_event_name": event, "tool_name": "Bash", "tool_input": {"command": command},
                            "tool_use_id": f"toolu_{session}_{n}"}, **extra)).encode()


@pytest.mark.parametrize("version", SUPPORTED, ids=lambda v: f"{v[0]}.{v[1]}")
def test_the_hook_learns_and_answers(version, tmp_path):
    exe = _python(version)
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    env = dict(os.environ, SELF_LEARNING_HOME=str(tmp_path / "home"), HOME=str(tmp_path), PYTHONPATH=str(ROOT),
               PYTHONDONTWRITEBYTECODE="1")

    def hook(payload: bytes) -> str:
        done = subprocess.run([exe, "-m", "learn_cli", "capture"], input=payload, env=env, cwd=project,
                              capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr.decode()
        assert b"Traceback" not in done.stderr, done.stderr.decode()
        return done.stdout.decode()

    error = "Exit code 127\nbash: pytest: command not found"
    ok = {"tool_response": {"stdout": "1 passed", "stderr": "", "interrupted": False, "isImage": False}}
    assert hook(_payload(project, "s1", 1, "PostToolUseFailure", "pytest tests", error=error)) == ""
    hook(_payload(project, "s1", 2, "PostToolUse", "python -m pytest tests", **ok))
    hook(json.dumps({"session_id": "s1", "cwd": str(project), "hook_event_name": "SessionEnd"}).encode())
    answers = [hook(_payload(project, f"s{n}", 1, "PostToolUseFailure", "pytest tests", error=error))
               for n in (2, 3)]
    for answer in answers:  # the second process compiled nothing: its patterns came from the cache
        context = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
        assert "`python -m pytest tests` instead of `pytest tests`" in context
    assert (tmp_path / "home" / "global" / "regex-cache").is_file()
    log = tmp_path / "home" / "learn.log"
    assert not log.exists() or "failed" not in log.read_text(encoding="utf-8")
