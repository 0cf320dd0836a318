"""`learn capture` never hurts the agent: bad payloads, huge payloads, a broken home, a time
limit, concurrent processes, and secrets that must never reach the disk (SPEC §3, §4, §6)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from learn_cli.capture import hook
from learn_cli.store import analytics, jsonl
from learn_cli.store.project import identify

DATA = Path(__file__).resolve().parent / "data"


def payload(cwd, event="PostToolUseFailure", sid="s-robust", **fields) -> dict:
    doc = {"session_id": sid, "transcript_path": "/home/dev/.claude/projects/p/s.jsonl", "cwd": str(cwd),
           "permission_mode": "default", "hook_event_name": event}
    doc.update(fields)
    return doc


def failure(cwd, command="pytest tests", output="bash: pytest: command not found", code=127, **kw) -> dict:
    return payload(cwd, tool_name="Bash", tool_input={"command": command, "description": "run"},
                   tool_use_id=kw.pop("tool_use_id", f"toolu_{uuid.uuid4().hex[:12]}"),
                   error=f"Exit code {code}\n{output}", is_interrupt=False, duration_ms=50, **kw)


def success(cwd, command, stdout="ok", **kw) -> dict:
    return payload(cwd, event="PostToolUse", tool_name="Bash", tool_input={"command": command, "description": "run"},
                   tool_use_id=kw.pop("tool_use_id", f"toolu_{uuid.uuid4().hex[:12]}"),
                   tool_response={"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False,
                                  "noOutputExpected": False}, **kw)


def data_snapshot(home: Path) -> dict:
    """Every record file's bytes, and a check that each still parses completely."""
    snap = {}
    for path in home.rglob("*"):
        if path.is_file() and path.suffix in (".jsonl", ".json") and "pending" not in path.parts:
            raw = path.read_bytes()
            if path.suffix == ".jsonl":
                assert jsonl.parse_log(str(path), raw).bad == [], path
            else:
                json.loads(raw)
            snap[str(path.relative_to(home))] = raw
    return snap


def learn_records(home: Path, cwd: Path) -> list[dict]:
    return list(jsonl.load(home / "projects" / identify(cwd).id / "learnings.jsonl").records.values())


# ---------------------------------------------------------------------------------------------
# Bad payloads


def _deep(n: int) -> bytes:
    return b"[" * n + b"]" * n


BAD = {
    "empty": b"",
    "whitespace": b"  \n\t ",
    "not json": b"this is not json {",
    "json array": b"[1, 2, 3]",
    "json string": b'"PostToolUseFailure"',
    "wrong shape": json.dumps({"hook_event_name": 42, "tool_input": [], "error": None}).encode(),
    "wrong field types": json.dumps({"hook_event_name": "PostToolUseFailure", "session_id": {"a": 1},
                                     "tool_name": ["Bash"], "tool_input": "pytest", "error": 17,
                                     "cwd": ["/tmp"], "tool_use_id": 5}).encode(),
    "binary": bytes(range(256)) * 64,
    "deep nesting": _deep(200_000),
    "huge number": b'{"hook_event_name": "PostToolUse", "duration_ms": 1' + b"0" * 10_000 + b"}",
    "lone surrogate": b'{"hook_event_name": "PostToolUseFailure", "session_id": "s", "tool_name": "Bash", '
                      b'"tool_input": {"command": "ls \\ud800"}, "error": "Exit code 1\\n\\udfff bad"}',
    "unknown event": json.dumps({"hook_event_name": "Notification", "session_id": "s", "message": "hi"}).encode(),
    "utf-16": json.dumps({"hook_event_name": "SessionEnd", "session_id": "s"}).encode("utf-16"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_payloads_exit_0_print_nothing_corrupt_nothing(learn, name):
    cwd = learn.project("api")
    for _ in range(2):  # a store with real records in it (made in this process: not the subject)
        learn.hook("capture", input=failure(cwd), cwd=cwd, check=0)
        learn.hook("capture", input=success(cwd, "python -m pytest tests"), cwd=cwd, check=0)
    before = data_snapshot(learn.home)
    assert any(k.endswith("learnings.jsonl") for k in before)
    proc = learn("capture", input=BAD[name].decode("latin-1"), cwd=cwd)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) <= 1
    after = data_snapshot(learn.home)
    assert {k: v for k, v in after.items() if k.startswith("projects")} == \
        {k: v for k, v in before.items() if k.startswith("projects")}


def test_bad_payloads_in_process_raise_nothing(tmp_path, monkeypatch):
    for name, raw in BAD.items():
        stdin = tmp_path / f"in-{len(name)}"
        stdin.write_bytes(raw)
        with open(stdin, "rb") as fh:
            monkeypatch.setattr(sys, "stdin", fh)
            assert hook.main(["--home", str(tmp_path / "home")]) == 0, name


def test_unknown_tool_failure_is_kept_quietly(learn):
    cwd = learn.project("api")
    doc = payload(cwd, tool_name="mcp__db__query", tool_input={"sql": "select 1"}, tool_use_id="toolu_x",
                  error="connection refused", is_interrupt=False)
    proc = learn("capture", input=doc, cwd=cwd, check=0)
    assert proc.stdout == "" and "Traceback" not in proc.stderr


@pytest.mark.parametrize("where", ["error", "stdout"])
def test_fifty_megabytes_of_output(learn, where):
    cwd = learn.project("api")
    big = "E" * (50 * 1024 * 1024)
    doc = failure(cwd, output=big) if where == "error" else success(cwd, "cat big.log", stdout=big)
    started = time.monotonic()
    proc = learn("capture", input=doc, cwd=cwd)
    assert proc.returncode == 0 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert time.monotonic() - started < 20
    data_snapshot(learn.home)


def test_a_large_but_accepted_payload_is_capped_on_disk(learn):
    cwd = learn.project("api")
    proc = learn("capture", input=failure(cwd, output="x" * 3_000_000), cwd=cwd, check=0)
    assert proc.stdout == ""
    session = learn.home / "sessions" / "s-robust.jsonl"
    assert session.stat().st_size < 20_000


def test_unknown_agent_and_options(learn):
    cwd = learn.project("api")
    for args in (["capture", "--agent", "nope"], ["capture", "--bogus"]):
        proc = learn(*args, input=failure(cwd), cwd=cwd)
        assert proc.returncode == 0 and proc.stdout == "" and len(proc.stderr.splitlines()) == 1


def test_help(learn):
    proc = learn("capture", "--help", check=0)
    assert "learn capture" in proc.stdout and "--agent" in proc.stdout


# ---------------------------------------------------------------------------------------------
# A broken home, a time limit


def test_broken_home_gives_one_warning_and_no_output(learn):
    cwd = learn.project("api")
    learn("capture", input=failure(cwd), cwd=cwd, check=0)
    sessions = learn.home / "sessions"
    for child in sessions.iterdir():
        if child.is_file():
            child.unlink()
        else:
            for f in child.iterdir():
                f.unlink()
            child.rmdir()
    sessions.rmdir()
    sessions.write_text("not a folder")  # like a full disk or a permission error: writes fail
    for _ in range(3):
        proc = learn("capture", input=failure(cwd), cwd=cwd)
        assert proc.returncode == 0 and proc.stdout == ""
        assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("learn: ")
        assert "Traceback" not in proc.stderr
    log_lines = (learn.home / "learn.log").read_text().splitlines()
    assert len([line for line in log_lines if "capture failed" in line]) == 1  # not once per tool call


def test_stray_prints_never_reach_stdout(tmp_path, monkeypatch, capsys):
    from learn_cli.capture import learner

    real = learner.on_failure

    def chatty(*args, **kw):
        print("debug noise")
        return real(*args, **kw)

    monkeypatch.setattr(learner, "on_failure", chatty)
    stdin = tmp_path / "payload.json"
    stdin.write_text(json.dumps(failure(tmp_path)))
    with open(stdin, "rb") as fh:
        monkeypatch.setattr(sys, "stdin", fh)
        assert hook.main(["--home", str(tmp_path / "home")]) == 0
    out = capsys.readouterr()
    assert out.out == "" and "debug noise" in out.err


# ---------------------------------------------------------------------------------------------
# Concurrency


def _parallel(learn, docs, cwd):
    with ThreadPoolExecutor(max_workers=len(docs)) as pool:
        procs = list(pool.map(lambda d: learn("capture", input=d, cwd=cwd), docs))
    for proc in procs:
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        # Nothing, or (a machine too loaded for the hook's deadline) its event was spooled.
        assert proc.stderr == "" or "was put in the spool" in proc.stderr, proc.stderr
    assert learn("promote", "--json").returncode == 0  # learns whatever was spooled
    return procs


def test_32_concurrent_captures_lose_nothing(learn):
    """16 sessions' failures at once, then their fixes at once (test_rel_attack_small and
    test_rel_concurrency do the same with more processes beside prune and promote); then 32
    failures of one session at once."""
    cwd = learn.project("api")
    n, sessions = 32, 16
    tools = [f"tool{i:02d}" for i in range(sessions)]
    _parallel(learn, [failure(cwd, f"{t} build", f"bash: {t}: command not found", sid=f"s{i}",
                              tool_use_id=f"toolu_f{i}") for i, t in enumerate(tools)], cwd)
    _parallel(learn, [success(cwd, f"npx {t} build", sid=f"s{i}", tool_use_id=f"toolu_o{i}")
                      for i, t in enumerate(tools)], cwd)
    recs = learn_records(learn.home, cwd)
    assert sorted(r["fix_command"] for r in recs) == sorted(f"npx {t} build" for t in tools)
    assert all(len(r["evidence"]) == 1 for r in recs)
    # 32 failures of one session at once (parallel tool calls): every one is in its buffer.
    _parallel(learn, [failure(cwd, f"make target{i}", "make: *** No rule to make target", code=2,
                              sid="one-session", tool_use_id=f"toolu_m{i}") for i in range(n)], cwd)
    events = jsonl.load(learn.home / "sessions" / "one-session.jsonl").records
    assert len(events) == n
    # As `learn stats` reads them: stats.json plus the notes of hooks stopped by their deadline.
    totals = analytics.read(learn.home / "analytics" / "stats.json")["totals"]
    assert totals["failures"] == sessions + n and totals["successes"] == sessions
    assert totals["pairs"] == sessions and totals["learnings_new"] == sessions
    assert totals["events"] == 2 * sessions + n


# ---------------------------------------------------------------------------------------------
# Secrets


def _secrets():
    path = DATA / "secrets_corpus.py"
    if not path.exists():
        pytest.skip("tests/data/secrets_corpus.py not present")
    spec = importlib.util.spec_from_file_location("secrets_corpus", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SECRETS


def _plant(run, cwd, secrets, events=("prompt", "pre", "failure", "success", "end")) -> None:
    """Each secret in a session of its own: the prompt, the command about to run, the failing
    command and its output, the fixing command and its output, the end of the session."""
    for i, (_kind, value, template) in enumerate(secrets):
        line = template.format(s=value)
        sid = f"secret-{i}"
        docs = {"prompt": payload(cwd, "UserPromptSubmit", sid, prompt=f"never paste {line} into the logs",
                                  prompt_id=f"p{i}"),
                "pre": payload(cwd, "PreToolUse", sid, tool_name="Bash", tool_input={"command": f"deploy {line}"},
                               tool_use_id=f"toolu_pre{i}"),
                "failure": failure(cwd, f"deploy push {line}", f"request failed: {line}\nError: unauthorized", 1,
                                   sid=sid),
                "success": success(cwd, f"deploy push --retry {line}", stdout=f"pushed with {line}", sid=sid),
                "end": payload(cwd, "SessionEnd", sid, reason="other")}
        for event in events:
            run(docs[event])


def _leaked(home: Path, secrets) -> list[tuple[str, str]]:
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.name == "learnings.jsonl" and p.stat().st_size for p in files)
    return [(kind, str(path.relative_to(home))) for path in files for raw in [path.read_bytes()]
            for kind, value, _t in secrets if value.encode() in raw or value[-12:].encode() in raw]


def test_secrets_never_reach_the_home(learn):
    """Every secret of the corpus through the hook's entry point (`learn capture` in this
    process: its argument parsing, guard and regex cache read from the home)."""
    secrets = _secrets()
    assert len({kind for kind, _v, _t in secrets}) >= 10
    cwd = learn.project("api")
    _plant(lambda doc: learn.hook("capture", input=doc, cwd=cwd, check=0), cwd, secrets)
    assert _leaked(learn.home, secrets) == []


def test_secrets_never_reach_the_home_through_the_executable(learn):
    """A few kinds through real `learn capture` processes (prompt, failing command and its
    output, the fixing command, the end of the session): the process adds nothing the test
    above does not see, and no secret reaches the home by it either."""
    by_kind = {}
    for kind, value, template in _secrets():
        by_kind.setdefault(kind, (kind, value, template))
    sample = sorted(by_kind.values())[::9]
    assert len(sample) >= 3
    cwd = learn.project("api")
    _plant(lambda doc: learn("capture", input=doc, cwd=cwd, check=0), cwd, sample,
           events=("prompt", "failure", "success", "end"))
    assert learn_records(learn.home, cwd)
    assert _leaked(learn.home, sample) == []


def test_secret_in_a_crash_message_is_redacted_in_the_log(tmp_path, monkeypatch):
    from learn_cli.capture import learner

    token = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8"

    def boom(*_a, **_kw):
        raise ValueError(f"cannot handle {token}")

    monkeypatch.setattr(learner, "on_failure", boom)
    stdin = tmp_path / "payload.json"
    stdin.write_text(json.dumps(failure(tmp_path)))
    with open(stdin, "rb") as fh:
        monkeypatch.setattr(sys, "stdin", fh)
        assert hook.main(["--home", str(tmp_path / "home")]) == 0
    log = (tmp_path / "home" / "learn.log").read_text()
    assert "cannot handle" in log and token not in log


def test_home_files_are_private(learn):
    cwd = learn.project("api")
    learn("capture", input=failure(cwd), cwd=cwd, check=0)
    learn("capture", input=success(cwd, "python -m pytest tests"), cwd=cwd, check=0)
    for path in learn.home.rglob("*"):
        if path.is_file() and not path.name.endswith(".lock"):
            assert oct(path.stat().st_mode & 0o077) == "0o0", path
    assert os.stat(learn.home / "sessions").st_mode & 0o077 == 0
