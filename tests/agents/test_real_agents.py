"""Claude Code, Codex CLI and Gemini CLI for real, with `learn` in their hooks.

Each agent (the npm release pinned in real_agents.PINNED) runs headless against the scripted
fake model, in a temporary HOME where `learn hooks install --agent …` registered `learn`. The
agent runs the tools itself and fires its own hooks; the fake model logs every request, so the
assertions are about what the model was actually shown. One journey per agent, in order:

1. sessions 1 and 2: `pytest -q` fails (command not found), `python3 -m pytest -q` passes; a
   mistyped read (`calcs.py`, then `calc.py`); the first prompt carries a user correction;
2. session 3: the session-start digest names the fix, and after `pytest -q` fails again the
   next model request carries the fix (more mentions of it than the request before);
3. session 4, another repository: the fix learned in the first one is offered there too;
4. `learn hooks install --guard`, session 5: `pytest -q` is stopped before it runs (its result
   is the fix, not "command not found"), the model's next request carries the fix, and the same
   command asked again in the session runs unhindered; the fix then runs and passes;
5. `learn hooks uninstall`: the agent's settings file is byte for byte what the user had;
6. `learn ingest` of the agent's own session logs, into an empty store, learns the same fix.

The assertions name the fixed command, never the wording around it (which may change).
The agents run one after another inside one test (one xdist worker: `xdist_group` does not
group tests with the pytest and xdist versions used here), each a subtest of its own, each
session in a few seconds on an idle machine.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fake_model import FakeModel, tool_results
from real_agents import AGENT_CLASSES, count, git_project, tool_path

from conftest import Learn
from learn_cli.store import jsonl
from learn_cli.store.project import identify

pytestmark = [pytest.mark.real_agents]

BAD, FIX = "pytest -q", "python3 -m pytest -q"
CORRECTION = "Never commit the .env file."


@pytest.fixture(scope="module")
def fake():
    server = FakeModel().start()
    yield server
    server.stop()


def records(learn, project: Path) -> list[dict]:
    path = learn.home / "projects" / identify(project).id / "learnings.jsonl"
    return list(jsonl.load(path).records.values()) if path.exists() else []


def fix_records(learn, project: Path) -> list[dict]:
    return [r for r in records(learn, project) if FIX in (r.get("fix_command") or r.get("fix") or "")]


def text_of(request: dict | None) -> str:
    assert request is not None, "the agent made no such request"
    return json.dumps(request["body"], ensure_ascii=False)


def results(request: dict) -> list[str]:
    return tool_results(request["kind"], request["body"])


def learn_lines(text: str) -> list[str]:
    """What `learn` said in a request (its lines start with `learn:`; JSON-escaped text)."""
    return re.findall(r'learn: (.*?)(?:\\n|\\"|<|$)', text)


def session_script(read_dir: Path) -> list:
    return [("shell", BAD), ("shell", FIX), ("read", str(read_dir / "calcs.py")), ("read", str(read_dir / "calc.py"))]


def test_real_agents(fake, tmp_path, subtests):
    path = tool_path(tmp_path)
    for name in AGENT_CLASSES:
        with subtests.test(agent=name):
            base = tmp_path / name
            (base / "work" / "web-api").mkdir(parents=True)
            journey(Learn(base / "home", base / "work" / "web-api", base), fake, base, name, path)


def journey(learn, fake, tmp_path: Path, agent_name: str, path: str) -> None:
    agent = AGENT_CLASSES[agent_name](learn, fake, path)
    app = git_project(tmp_path / "work" / "app")
    other = git_project(tmp_path / "work" / "other")
    before = agent.write_user_settings()
    learn("hooks", "install", "--agent", agent_name, check=0)

    # 1. Two sessions that fail and retry.
    agent.run(f"Run the tests. {CORRECTION} [s1]", app, session_script(app))
    first = fake.request_after(1)
    assert "command not found" in results(first)[0], f"{agent_name}: `{BAD}` did not fail as expected"
    assert "passed" in results(fake.request_after(2))[1], f"{agent_name}: `{FIX}` did not pass"
    agent.run("Run the tests. [s2]", app, session_script(app))
    fixes = fix_records(learn, app)
    assert fixes, f"{agent_name}: no learning with the fix after two sessions: {records(learn, app)}"
    assert all("Exit Code" not in (r.get("error") or "") for r in fixes)
    prefs = [r for r in records(learn, app) + _global(learn) if CORRECTION.rstrip(".") in (r.get("fix") or "")
             + (r.get("context") or "")]
    assert prefs, f"{agent_name}: the correction in the prompt was not recorded"
    reads = [r for r in records(learn, app) if "calcs.py" in json.dumps(r)]
    assert reads, f"{agent_name}: the mistyped read was not recorded"
    assert all("working directory" not in json.dumps(r) for r in reads)

    # 2. Session 3: the digest at start, the known fix right after the failure.
    agent.run("Run the tests. [s3]", app, [("shell", BAD), ("shell", FIX), ("read", str(app / "calcs.py"))])
    opening, after_fail = fake.request_after(0), fake.request_after(1)
    assert FIX in text_of(opening), f"{agent_name}: the session-start digest did not reach the model"
    assert "command not found" in results(after_fail)[0]
    assert count(text_of(after_fail), FIX) > count(text_of(opening), FIX), \
        f"{agent_name}: the known fix did not reach the model after the failure"
    after_read = text_of(fake.request_after(3))
    if agent_name == "gemini":  # Gemini drops hook context after a tool error (docs/agents.md)
        assert count(after_read, "calc.py") >= 1
    else:
        assert count(after_read, "calc.py") > count(text_of(fake.request_after(2)), "calc.py"), \
            f"{agent_name}: the fix of the mistyped read did not reach the model"
    said = learn_lines(after_read)
    assert said and not any("working directory" in line for line in said), said

    # 3. Another repository: the fix from the first one is offered.
    agent.run("Run the tests. [s4]", other, [("shell", BAD), ("shell", FIX)])
    assert count(text_of(fake.request_after(1)), FIX) > count(text_of(fake.request_after(0)), FIX), \
        f"{agent_name}: the fix learned in another repository was not offered"

    # 4. The guard: stopped once, the fix shown, the second try runs.
    learn("hooks", "install", "--agent", agent_name, "--guard", check=0)
    agent.run("Run the tests. [s5]", app, [("shell", BAD), ("shell", BAD), ("shell", FIX)])
    stopped, again, fixed = (results(fake.request_after(n))[n - 1] for n in (1, 2, 3))
    # Every agent states the exit code (127) of a command that ran; a stopped one has none.
    assert "127" not in stopped and FIX in stopped, \
        f"{agent_name}: the guard did not stop `{BAD}` with the fix: {stopped!r}"
    assert "127" in again, f"{agent_name}: the second `{BAD}` of the session did not run: {again!r}"
    assert "passed" in fixed

    # 5. Uninstall gives the user's settings back.
    learn("hooks", "uninstall", "--agent", agent_name, check=0)
    assert agent.settings_file.read_bytes() == before, f"{agent_name}: uninstall changed the user's settings"

    # 6. The agent's own session logs teach an empty store the same fix.
    fresh = tmp_path / "fresh-home"
    doc = learn.json("ingest", str(agent.transcripts()), env={"SELF_LEARNING_HOME": str(fresh)})
    assert doc["failures"] >= 2, doc
    learned = [r for r in _all_records(fresh) if FIX in (r.get("fix_command") or "")]
    assert learned, f"{agent_name}: `learn ingest` did not learn the fix from the session logs: {doc}"


def _global(learn) -> list[dict]:
    out = []
    for path in (learn.home / "global").glob("*.jsonl"):
        out += list(jsonl.load(path).records.values())
    return out


def _all_records(home: Path) -> list[dict]:
    out = []
    for path in list(home.glob("projects/*/learnings.jsonl")) + list(home.glob("global/*.jsonl")):
        out += list(jsonl.load(path).records.values())
    return out
