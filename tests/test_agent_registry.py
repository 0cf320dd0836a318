"""The agent registry (learn_cli.agents) and the one answer to "is this hook handler ours?"
(learn_cli.agents.handlers.is_ours), which install, uninstall, `hooks status` and `learn doctor`
all use. In process: no CLI call."""

from __future__ import annotations

import subprocess
import sys

import pytest

from learn_cli import agents
from learn_cli.agents import install
from learn_cli.agents.handlers import handler_command, is_ours

LEARN = "/home/you/.local/bin/learn"


def cmd(command: str, **fields) -> dict:
    return {"type": "command", "command": command, **fields}


OURS = [
    # what `learn hooks install` writes, user and local scope: the absolute path
    cmd(f"{LEARN} capture"),
    cmd(f"{LEARN} context --hook"),
    cmd(f"{LEARN} capture --agent codex"),
    cmd(f"{LEARN} capture --guard"),
    cmd(f"{LEARN} context --hook --agent gemini", name="learn", timeout=15000),
    {"command": f"{LEARN} capture --agent cursor", "timeout": 10},  # Cursor's flat handler: no type
    cmd("'/home/you/my tools/learn' capture"),  # install quotes a path with spaces
    cmd('"/home/you/my tools/learn" context --hook'),
    cmd("/usr/bin/python3 -m learn_cli capture"),  # an older install without a `learn` script
    # what install writes now in user and local scope: the interpreter without `site` on the entry script
    cmd("/home/you/.venv/bin/python -S /home/you/.venv/lib/python3.11/site-packages/learn_cli/hook_entry.py capture"),
    cmd("'/home/you/my tools/python3' -S '/home/you/my tools/learn_cli/hook_entry.py' context --hook"),
    cmd(r"C:\venv\Scripts\python.exe -S C:\venv\Lib\site-packages\learn_cli\hook_entry.py capture --guard"),
    cmd("python3 -I -X importtime /src/learn_cli/hook_entry.py capture"),
    cmd(r"C:\Users\you\.local\bin\learn.exe capture"),
    # project scope: plain `learn`, found on PATH
    cmd("learn capture"),
    cmd("learn context --hook"),
    cmd("learn capture --agent gemini --guard"),
    # the plugin's shim, with and without Claude Code's exec-form args
    cmd("${CLAUDE_PLUGIN_ROOT}/hooks/learn-hook.sh", args=["capture"]),
    cmd("${CLAUDE_PLUGIN_ROOT}/hooks/learn-hook.sh", args=["context", "--hook"]),
    cmd("${CLAUDE_PLUGIN_ROOT}/hooks/learn-hook.sh"),
    cmd("/opt/learn/hooks/learn-hook.sh capture"),
    # hand-made wrappers
    cmd("sh -c 'learn capture'"),
    cmd('bash -lc "cd ~/work && learn capture"'),
    cmd("LEARN_DEBUG=1 learn capture"),
    cmd("env SELF_LEARNING_HOME=/tmp/h learn capture"),
    cmd("learn --home /tmp/h capture"),
    cmd("learn --home=/tmp/h context --hook"),
    cmd(f"{LEARN} capture 2>/dev/null || true"),
]

NOT_OURS = [
    cmd("npx prettier --write"),  # other tools' hooks
    cmd("echo 'branch: main'"),
    cmd("notify-send claude"),
    cmd("~/.claude/statusline.sh"),
    cmd("echo learn capture"),  # mentions learn, runs echo
    cmd("grep -q 'learn capture' log"),
    cmd("learn-more capture"),
    cmd("/usr/local/bin/mylearn capture"),
    cmd("learn context"),  # learn, but not a hook entry point
    cmd("learn recall docker"),
    cmd(f"{LEARN} add 'x'"),
    cmd("python3 -m learn_cli recall x"),
    cmd("python3 -m other_tool capture"),
    cmd("python3 -S /src/other_tool/hook_entry.py capture"),  # another package's entry script
    cmd("python3 -S /src/learn_cli/hook_entry.py recall x"),  # learn's entry, not a hook entry point
    cmd("python3 -c 'import learn_cli' capture"),
    {"type": "prompt", "command": "learn capture"},  # not a command handler
    cmd(["learn", "capture"]),  # a command that is not a string
    {"type": "command"},
    "learn capture",
    None,
    cmd("sh -c 'learn capture"),  # unbalanced quote: read as plain words, `sh` runs nothing
]


@pytest.mark.parametrize("handler", OURS, ids=lambda h: handler_command(h) or repr(h))
def test_handlers_of_learn_are_ours(handler):
    assert is_ours(handler)


@pytest.mark.parametrize("handler", NOT_OURS, ids=repr)
def test_other_handlers_are_not_ours(handler):
    assert not is_ours(handler)


def test_every_handler_install_writes_is_ours():
    for agent in install.every().values():
        for scope in agent.scopes:
            for guard in (False, True) if agent.GUARD else (False,):
                for learn in (install.command_for(scope), "/usr/bin/python3 -m learn_cli", "'/a b/learn'"):
                    for _event, _matcher, handler in agent.handlers(learn, guard):
                        if agent.kind == "hooks":
                            assert is_ours(handler), (agent.name, handler)


def test_handler_command_joins_exec_form_args():
    assert handler_command(cmd("/p/learn-hook.sh", args=["context", "--hook"])) == "/p/learn-hook.sh context --hook"
    assert handler_command({"type": "http", "url": "x"}) == ""


def test_registry_names_aliases_and_modules():
    assert agents.NAMES == ("claude-code", "codex", "gemini", "cursor", "openclaw")
    assert agents.canonical(None) == agents.canonical("Claude") == "claude-code"
    assert agents.canonical("gemini-cli") == "gemini"
    assert agents.canonical("copilot") is None
    with pytest.raises(KeyError):
        agents.module("copilot")
    for name in agents.NAMES:
        mod = agents.module(name)
        assert mod.AGENT == name
        assert callable(mod.to_event)
        agent = install.get(name)
        assert agent.title and agent.scopes and agent.ENTRIES
        assert agent.shape in ("nested", "flat", "skill")
        assert set(agent.scopes) <= set(install.SCOPES)
        assert hasattr(mod, "deny") == bool(agent.GUARD)  # a guard registered can answer
        for scope in agent.scopes:
            assert agent.settings_path(scope, "/repo").name


def test_the_capture_path_imports_only_the_agent_it_needs():
    code = ("import sys; from learn_cli.capture import hook; hook._adapter('codex'); "
            "print(sorted(m for m in sys.modules if m.startswith('learn_cli.agents')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['learn_cli.agents', 'learn_cli.agents.claude', 'learn_cli.agents.codex']"


def test_doctor_and_status_count_the_same_handlers(tmp_path, monkeypatch):
    """`learn doctor` and `hooks status` read one settings file the same way (is_ours)."""
    import json

    from learn_cli.agents import claude
    from learn_cli.agents.status import status_row

    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    hooks = {"PostToolUseFailure": [{"matcher": "*", "hooks": [cmd("sh -c 'learn capture'")]}],
             "PostToolUse": [{"hooks": [cmd("echo learn capture"), cmd("npx prettier --write")]}],
             "SessionStart": [{"hooks": [cmd("/nowhere/learn context --hook")]}]}
    path.write_text(json.dumps({"hooks": hooks}))
    status, _summary, details = claude.doctor_check(None)
    assert status == "problem"  # /nowhere/learn cannot run
    assert any("PostToolUseFailure, SessionStart" in d for d in details)
    row = status_row(install.get("claude-code"), "user", path, "learn")
    assert row["events"] == ["PostToolUseFailure", "SessionStart"]


def test_a_new_agent_is_its_module_and_a_registry_line(tmp_path, monkeypatch):
    """What docs/ARCHITECTURE.md promises: an agent module and its REGISTRY line are all that
    `learn capture` and `learn hooks install|status|uninstall` need."""
    import json
    import types

    from typer.testing import CliRunner

    from learn_cli.capture import events as ev
    from learn_cli.capture import hook
    from learn_cli.cli import app

    fake = types.ModuleType("learn_cli.agents.fakeagent")
    fake.AGENT, fake.TITLE, fake.SCOPES, fake.SHAPE = "fakeagent", "Fake Agent", ("user",), "flat"
    fake.ENTRIES = (("afterTool", None, "capture --agent fakeagent", 10),)
    fake.GUARD = ()
    fake.settings_path = lambda scope, root: install.home_or_project(scope, root, ".fake", "hooks.json")
    fake.handler = lambda command, timeout: {"command": command, "timeout": timeout}
    fake.to_event = lambda payload: ev.Event(ev.OTHER, "fakeagent", session_id="s")
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    monkeypatch.setitem(agents.REGISTRY, "fakeagent", ("fakeagent", ()))
    monkeypatch.setattr(agents, "NAMES", (*agents.NAMES, "fakeagent"))
    monkeypatch.setitem(agents._BY_ALIAS, "fakeagent", "fakeagent")
    monkeypatch.setenv("HOME", str(tmp_path))

    assert hook._to_event("fakeagent", {}).agent == "fakeagent"
    runner = CliRunner()
    result = runner.invoke(app, ["hooks", "install", "--agent", "fakeagent", "--json"])
    assert result.exit_code == 0, result.output
    settings = tmp_path / ".fake" / "hooks.json"
    [handler] = json.loads(settings.read_text())["hooks"]["afterTool"]
    assert is_ours(handler) and handler["command"].endswith(" capture --agent fakeagent")
    status = json.loads(runner.invoke(app, ["hooks", "status", "--agent", "fakeagent", "--json"]).output)
    assert status["scopes"][0]["events"] == ["afterTool"] and not status["scopes"][0]["missing"]
    assert runner.invoke(app, ["hooks", "uninstall", "--agent", "fakeagent"]).exit_code == 0
    assert "hooks" not in json.loads(settings.read_text())  # the flat shape keeps its "version"
