"""`learn hooks install|uninstall|status`: merged beside the user's settings, idempotent,
backed up, reversible; and the shipped plugin layout (hooks/)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

import learn_cli
from learn_cli.agents.handlers import is_ours
from learn_cli.store import jsonl
from learn_cli.store.project import identify

ROOT = Path(__file__).resolve().parents[1]

USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run lint)", "Read(~/.zshrc)"], "deny": ["Read(./.env)"]},
    "env": {"CLAUDE_CODE_ENABLE_TELEMETRY": "0", "GREETING": "héllo ✓"},
    "hooks": {
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo 'branch: main'"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}],
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}
EVENTS = {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"}


def user_settings(learn) -> Path:
    return learn.tmp / "userhome" / ".claude" / "settings.json"


def ours(doc: dict) -> dict[str, list]:
    found: dict[str, list] = {}
    for event, groups in doc.get("hooks", {}).items():
        for group in groups:
            for handler in group["hooks"]:
                if is_ours(handler):
                    found.setdefault(event, []).append((group.get("matcher"), handler))
    return found


def backups(path: Path) -> list[Path]:
    """learn's backups of a settings file (and any timestamped ones older versions left)."""
    return sorted([*path.parent.glob(path.name + ".learn-backup"), *path.parent.glob(path.name + ".bak-*")])


def test_install_into_a_fresh_home_then_idempotent(learn):
    proc = learn("hooks", "install", check=0)
    path = user_settings(learn)
    assert str(path) in proc.stdout
    doc = json.loads(path.read_text())
    found = ours(doc)
    assert set(found) == EVENTS
    for event, entries in found.items():
        [(matcher, handler)] = entries
        assert handler["type"] == "command"
        assert handler["command"].startswith(learn.hook_command + " ")
        assert handler["command"].endswith(" context --hook" if event == "SessionStart" else " capture")
        assert matcher == {"PreToolUse": "Bash", "PostToolUse": "*", "PostToolUseFailure": "*"}.get(event)
    assert "timeout" not in found["SessionEnd"][0][1]  # would raise Claude Code's 1.5 s exit budget
    first = path.read_bytes()
    again = learn("hooks", "install", check=0)
    assert "already installed" in again.stdout
    assert path.read_bytes() == first and backups(path) == []


def test_round_trip_keeps_the_users_settings_byte_for_byte(learn):
    path = user_settings(learn)
    path.parent.mkdir(parents=True)
    original = json.dumps(USER_SETTINGS, indent=4, ensure_ascii=False) + "\n"
    path.write_text(original, encoding="utf-8")
    learn("hooks", "install", check=0)
    installed = json.loads(path.read_text())
    assert path.read_text().startswith('{\n    "model"')  # the file's own indentation
    for key in ("model", "permissions", "env", "statusLine"):
        assert installed[key] == USER_SETTINGS[key]
    assert installed["hooks"]["PostToolUse"][0] == USER_SETTINGS["hooks"]["PostToolUse"][0]
    assert installed["hooks"]["SessionStart"][0] == USER_SETTINGS["hooks"]["SessionStart"][0]
    assert installed["hooks"]["Notification"] == USER_SETTINGS["hooks"]["Notification"]
    [backup] = backups(path)
    assert backup.read_text(encoding="utf-8") == original
    learn("hooks", "uninstall", check=0)
    assert path.read_text(encoding="utf-8") == original
    assert backups(path) == []  # the file is what the backup held: nothing left to restore


def test_stale_entries_of_an_older_install_are_replaced(learn):
    path = user_settings(learn)
    path.parent.mkdir(parents=True)
    old = {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "/old/venv/bin/learn capture", "timeout": 10},
        {"type": "command", "command": "./my-own-hook.sh"}]}]}}
    path.write_text(json.dumps(old, indent=2) + "\n")
    learn("hooks", "install", check=0)
    doc = json.loads(path.read_text())
    commands = [h["command"] for g in doc["hooks"]["PostToolUse"] for h in g["hooks"]]
    assert "/old/venv/bin/learn capture" not in commands and "./my-own-hook.sh" in commands
    assert commands.count(f"{learn.hook_command} capture") == 1
    status = learn.json("hooks", "status", "--scope", "user", "--agent", "claude-code")
    [row] = status["scopes"]
    assert row["current"] and row["runnable"] and row["missing"] == []
    learn("hooks", "uninstall", check=0)
    doc = json.loads(path.read_text())
    assert doc == {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./my-own-hook.sh"}]}]}}


def test_invalid_settings_are_refused_and_left_alone(learn):
    path = user_settings(learn)
    path.parent.mkdir(parents=True)
    path.write_text('{"model": "opus",, }\n')
    for action in ("install", "uninstall"):
        proc = learn("hooks", action)
        assert proc.returncode == 1 and proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1 and "not valid JSON" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert path.read_text() == '{"model": "opus",, }\n' and backups(path) == []
    path.write_text('{"hooks": []}\n')
    proc = learn("hooks", "install")
    assert proc.returncode == 1 and '"hooks" is not a JSON object' in proc.stderr
    status = learn("hooks", "status", check=0)
    assert "invalid" in status.stdout


@pytest.mark.parametrize("scope, name", [("project", "settings.json"), ("local", "settings.local.json")])
def test_project_and_local_scopes(learn, scope, name):
    cwd = learn.project("api", remote="git@github.com:acme/api.git")
    (cwd / "src").mkdir()
    learn("hooks", "install", "--scope", scope, cwd=cwd / "src", check=0)  # the git top level is used
    path = cwd / ".claude" / name
    assert set(ours(json.loads(path.read_text()))) == EVENTS
    assert not user_settings(learn).exists()
    status = learn.json("hooks", "status", "--agent", "claude-code", cwd=cwd)
    by_scope = {row["scope"]: row for row in status["scopes"]}
    assert by_scope[scope]["events"] and not by_scope["user"]["events"]
    learn("hooks", "uninstall", "--scope", scope, cwd=cwd, check=0)
    assert not path.exists() and not path.parent.exists()  # learn created both: both go


def test_usage_errors(learn):
    for args in (("--scope", "global"), ("--agent", "vim")):
        proc = learn("hooks", "install", *args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    assert not user_settings(learn).exists()


def test_json_output(learn):
    doc = learn.json("hooks", "install")
    assert doc["action"] == "install" and doc["changed"] is True and set(doc["events"]) == EVENTS
    assert doc["command"] == learn.hook_command and doc["backup"] is None
    doc = learn.json("hooks", "uninstall")
    assert doc["changed"] is True and doc["backup"] is None
    assert not user_settings(learn).exists()


def test_registered_commands_really_run(learn):
    """Through `sh -c`, as the agent runs them; none of them imports `site` (the point of the
    entry script): PYTHONPROFILEIMPORTTIME lists every module a process imports."""
    learn("hooks", "install", check=0)
    doc = json.loads(user_settings(learn).read_text())
    cwd = learn.project("api")
    base = {"session_id": "s1", "transcript_path": "/t.jsonl", "cwd": str(cwd)}
    start = dict(base, hook_event_name="SessionStart", source="startup")
    fail = dict(base, hook_event_name="PostToolUseFailure", tool_name="Bash", tool_input={"command": "pytest"},
                tool_use_id="t1", error="Exit code 127\nbash: pytest: command not found", is_interrupt=False)
    fix = dict(base, hook_event_name="PostToolUse", tool_name="Bash", tool_input={"command": "python -m pytest"},
               tool_use_id="t2", tool_response={"stdout": "1 passed", "stderr": ""})
    end = dict(base, hook_event_name="SessionEnd", reason="other")
    for event, payload in (("SessionStart", start), ("PostToolUseFailure", fail), ("PostToolUse", fix),
                           ("SessionEnd", end), ("SessionStart", start)):
        command = doc["hooks"][event][-1]["hooks"][0]["command"]
        proc = subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                              env=dict(learn.env, PYTHONPROFILEIMPORTTIME="1"), cwd=str(cwd), timeout=60)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr
        assert proc.stdout == "" or json.loads(proc.stdout)["hookSpecificOutput"]["hookEventName"] == event
        imported = {line.rpartition("|")[2].strip() for line in proc.stderr.splitlines()
                    if line.startswith("import time")}
        assert "learn_cli.capture.hook" in imported and "site" not in imported, event
    learnings = learn.home / "projects" / identify(cwd).id / "learnings.jsonl"
    [rec] = [r for r in jsonl.load(learnings).records.values() if r.get("fix_command")]
    assert rec["fix_command"] == "python -m pytest"  # the pair was learned through the entry script


def test_an_install_of_the_learn_script_is_recognised_then_upgraded(learn):
    """What `install` registered before the entry script (the `learn` script's absolute path)
    is ours: status reports it installed but not current, and install replaces it."""
    path = user_settings(learn)
    path.parent.mkdir(parents=True)
    old = {"hooks": {event: [{"hooks": [{"type": "command", "command": f"{learn.exe} {sub}"}]}]
                     for event, sub in (("PostToolUse", "capture"), ("SessionStart", "context --hook"))}}
    path.write_text(json.dumps(old, indent=2) + "\n")
    [row] = learn.json("hooks", "status", "--scope", "user", "--agent", "claude-code")["scopes"]
    assert row["events"] == ["PostToolUse", "SessionStart"] and not row["current"] and row["runnable"]
    learn("hooks", "install", check=0)
    commands = {h["command"] for entries in ours(json.loads(path.read_text())).values() for _m, h in entries}
    assert commands == {f"{learn.hook_command} capture", f"{learn.hook_command} context --hook"}
    [row] = learn.json("hooks", "status", "--scope", "user", "--agent", "claude-code")["scopes"]
    assert row["current"] and row["runs"]


def test_the_entry_script_runs_site_for_a_module_only_site_finds():
    """learn_cli/hook_entry.py's last resort: a module none of `-S`'s folders holds (here the
    venv's own packages, left off sys.path) makes it run `site` and find it; the standard
    library's absent probes (`nt` on POSIX) do not."""
    import sys

    entry = os.path.join(os.path.dirname(learn_cli.__file__), "hook_entry.py")
    probe = ("import sys, importlib.util as u; spec = u.spec_from_file_location('entry', sys.argv[1]); "
             "entry = u.module_from_spec(spec); spec.loader.exec_module(entry); "
             "sys.meta_path.append(entry._SiteWhenMissing)\n"
             "try:\n import nt\nexcept ImportError:\n pass\n"
             "print('site' in sys.modules)\nimport rich\nprint('site' in sys.modules, rich.__name__)")
    out = subprocess.run([sys.executable, "-S", "-c", probe, entry], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"}).stdout
    assert out.splitlines() == ["False", "True rich"]


# ---------------------------------------------------------------------------------------------
# The shipped plugin layout


def test_plugin_layout_is_valid():
    doc = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    assert set(doc["hooks"]) == EVENTS
    for event, groups in doc["hooks"].items():
        for group in groups:
            for handler in group["hooks"]:
                assert handler["command"] == "${CLAUDE_PLUGIN_ROOT}/hooks/learn-hook.sh"
                assert handler["args"] == (["context", "--hook"] if event == "SessionStart" else ["capture"])
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "learn"
    shim = ROOT / "hooks" / "learn-hook.sh"
    assert shim.stat().st_mode & stat.S_IXUSR


def test_shim_runs_learn_and_is_silent_without_it(learn, tmp_path):
    shim = str(ROOT / "hooks" / "learn-hook.sh")
    cwd = learn.project("api")
    payload = json.dumps({"session_id": "s", "cwd": str(cwd), "hook_event_name": "SessionStart", "source": "startup"})
    env = dict(learn.env, LEARN_BIN=learn.exe)
    proc = subprocess.run([shim, "capture"], input=payload, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "nohome")}
    proc = subprocess.run([shim, "capture"], input=payload, capture_output=True, text=True, env=bare, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    assert os.access(shim, os.X_OK)


# ---------------------------------------------------------------------------------------------
# Hand-written settings, links, and files meant to be committed

HAND_WRITTEN = (
    '{\r\n'
    '   "model" : "opus",\r\n'
    '   "env": {"GREETING": "h\\u00e9llo", "PATH_EXTRA": "/opt/bin"},\r\n'
    '   "permissions": { "allow": ["Bash(npm run lint)",   "Read(~/.zshrc)"] },\r\n'
    '   "hooks": {\r\n'
    '      "PostToolUse": [ {"matcher": "Edit|Write", "hooks": [ '
    '{"type": "command", "command": "npx prettier --write"} ]} ]\r\n'
    '   }\r\n'
    '}\r\n'
)


def test_hand_written_formatting_is_kept_and_one_backup_at_most(learn):
    path = user_settings(learn)
    path.parent.mkdir(parents=True)
    path.write_bytes(HAND_WRITTEN.encode())
    for _round in range(3):
        learn("hooks", "install", check=0)
        text = path.read_bytes().decode()
        assert set(ours(json.loads(text))) == EVENTS
        for line in HAND_WRITTEN.split("\r\n")[:4]:  # untouched lines stay byte for byte
            assert line + "\r\n" in text
        assert '"npx prettier --write"} ]}, {' in text  # ours follows the user's, in their style
        assert "\n" not in text.replace("\r\n", "")  # the file's line endings
        assert [b.name for b in backups(path)] == ["settings.json.learn-backup"]
        learn("hooks", "uninstall", check=0)
        assert path.read_bytes() == HAND_WRITTEN.encode() and backups(path) == []


def test_a_symlinked_settings_file_stays_a_link(learn):
    dotfiles = learn.tmp / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude-settings.json"
    target.write_text('{\n  "model": "opus"\n}\n')
    path = user_settings(learn)
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    learn("hooks", "install", check=0)
    assert path.is_symlink() and os.readlink(path) == str(target)
    assert set(ours(json.loads(target.read_text()))) == EVENTS
    assert list(dotfiles.iterdir()) == [target]  # no temp file or backup left in the dotfiles
    learn("hooks", "uninstall", check=0)
    assert path.is_symlink() and target.read_text() == '{\n  "model": "opus"\n}\n'
    assert backups(path) == []


def test_project_scope_names_no_path_of_this_machine(learn):
    repo = learn.project("api", remote="git@github.com:acme/api.git")
    doc = learn.json("hooks", "install", "--scope", "project", cwd=repo)
    assert doc["command"] == "learn"
    text = (repo / ".claude" / "settings.json").read_text()
    assert str(learn.tmp) not in text and os.path.dirname(learn.exe) not in text
    commands = {h["command"] for entries in ours(json.loads(text)).values() for _m, h in entries}
    assert commands == {"learn capture", "learn context --hook"}
    on_path = dict(learn.env, PATH=f"{os.path.dirname(learn.exe)}:/usr/bin:/bin")
    [row] = learn.json("hooks", "status", "--agent", "claude-code", "--scope", "project", cwd=repo,
                       env=on_path)["scopes"]
    assert row["current"] and row["runnable"]
    [row] = learn.json("hooks", "status", "--agent", "claude-code", "--scope", "project", cwd=repo,
                       env={"PATH": "/usr/bin:/bin"})["scopes"]
    assert not row["runnable"]
    local = learn.json("hooks", "install", "--scope", "local", cwd=repo)
    assert local["command"] == learn.hook_command  # this machine's file: absolute paths


def test_guard_is_registered_only_when_asked_and_status_shows_every_agent(learn):
    path = user_settings(learn)
    learn("hooks", "install", "--guard", check=0)
    doc = json.loads(path.read_text())
    assert set(ours(doc)) == EVENTS | {"PreToolUse"}
    [group] = doc["hooks"]["PreToolUse"]
    assert group["matcher"] == "Bash" and group["hooks"][0]["command"] == f"{learn.hook_command} capture --guard"
    status = learn.json("hooks", "status")
    by_agent = {a["agent"]: a for a in status["agents"]}
    assert set(by_agent) == {"claude-code", "codex", "gemini", "cursor", "openclaw"}
    user = next(r for r in by_agent["claude-code"]["scopes"] if r["scope"] == "user")
    assert user["guard"] and user["current"] and user["runs"] and user["missing"] == []
    assert "guard on" in learn("hooks", "status", check=0).stdout
    learn("hooks", "install", check=0)  # again without --guard: the guard is off
    assert set(ours(json.loads(path.read_text()))) == EVENTS
    learn("hooks", "install", "--agent", "codex", check=0)
    codex = learn.json("hooks", "status", "--agent", "codex", "--scope", "user")["scopes"][0]
    assert codex["runnable"] and not codex["runs"] and "trusted" in codex["trust"]  # Codex asks for trust first
    proc = learn("hooks", "install", "--agent", "cursor", "--guard")
    assert proc.returncode == 2 and "no guard" in proc.stderr
