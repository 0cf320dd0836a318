"""Where `learn` is registered for an agent, and whether the agent would run it: the rows of
`learn hooks status --json` (docs/cmd-hooks.md), one per scope."""

from __future__ import annotations

import os
from pathlib import Path

from learn_cli.agents.install import Agent, command_for, get
from learn_cli.agents.settings import SettingsError, SettingsFile, hooks_table


def registration_status(project_root: str | os.PathLike | None = None, agent_name: str = "claude-code") -> list[dict]:
    """Where `learn` is registered, per scope: the rows of `hooks status --json`."""
    agent = get(agent_name)
    root = Path(project_root) if project_root else Path.cwd()
    return [status_row(agent, scope, agent.settings_path(scope, root), command_for(scope, agent.kind))
            for scope in agent.scopes]


def status_row(agent: Agent, scope: str, path: Path, current: str) -> dict:
    row = {"scope": scope, "path": str(path), "exists": path.exists(), "valid": True, "events": [],
           "missing": [], "commands": [], "current": False, "runnable": False, "guard": False,
           "runs": False, "trust": None}
    if not row["exists"]:
        row["missing"] = sorted({e for e, _m, _s, _t in agent.ENTRIES})
        return row
    if agent.kind == "skill":
        return agent.module.skill_status(row, path, current)
    try:
        settings = SettingsFile(path)
        hooks = hooks_table(settings.doc, path)
    except SettingsError as exc:
        row["valid"] = False
        row["error"] = str(exc)
        return row
    found, commands = agent.registered(hooks)
    wanted = {e for e, _m, _s, _t in agent.ENTRIES}
    row["events"] = sorted(found)
    row["missing"] = sorted(wanted - found) if found else sorted(wanted)
    row["commands"] = sorted(set(commands))
    row["guard"] = any(c.endswith(" --guard") for c in commands)
    # Current: exactly what `install` (with or without --guard) writes now, at this path.
    expected = {f"{current} {sub}" for _e, _m, sub, _t in agent.entries(row["guard"])}
    row["current"] = bool(found) and set(commands) == expected
    row["runnable"] = bool(commands) and all(runnable(c) for c in set(commands))
    row["trust"] = agent.trust if found else None
    row["runs"] = row["runnable"] and not row["missing"] and agent.trust is None
    return row


def runnable(command: str) -> bool:
    """The command's program exists and can run (a bare name: found on this PATH)."""
    import shlex
    import shutil

    try:
        exe = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    if os.sep not in exe:
        return shutil.which(exe) is not None
    return os.path.isfile(exe) and os.access(exe, os.X_OK)
