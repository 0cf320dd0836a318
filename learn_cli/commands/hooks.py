"""`learn hooks install|uninstall|status [--scope user|project|local] [--agent NAME]`.

Merges `learn`'s hook entries into the agent's settings file beside whatever is there (SPEC §3):
- idempotent: a second install changes nothing, byte for byte;
- only our entries are written or removed (learn_cli.agents.settings, json_patch): every other
  byte of the file stays, so install then uninstall gives back the file as it was; one backup
  `<file>.learn-backup`; a symlinked settings file stays a link;
- the absolute path of the installed `learn` is registered in user and local scope, and entries
  left by an older install at another path are replaced; project scope registers plain `learn`
  (learn_cli.agents.install);
- uninstall removes exactly the handlers that are ours (learn_cli.agents.handlers.is_ours), and
  the containers it emptied;
- a settings file that is not valid JSON is refused with one line, and left untouched.

Each agent is a module of learn_cli.agents (its settings file, hook table and shape); this
module parses the command line and reports.
"""

from __future__ import annotations

from pathlib import Path

import typer

from learn_cli import agents
from learn_cli.agents.install import SCOPES, command_for, learn_command
from learn_cli.agents.install import get as get_agent
from learn_cli.agents.settings import SettingsError, SettingsFile
from learn_cli.agents.status import status_row
from learn_cli.commands._common import (
    EXIT_USAGE,
    current_project,
    fail,
    json_out,
    state,
)

app = typer.Typer(help="Install, remove or show the agent hooks.", no_args_is_help=True,
                  context_settings={"help_option_names": ["-h", "--help"]})


# ---------------------------------------------------------------------------------------------
# Commands


def _agent(name: str):
    agent = get_agent(name)
    if agent is None:
        fail(f"unknown agent {name!r} (known: {', '.join(agents.NAMES)})", EXIT_USAGE)
    return agent


def _scope(value: str, agent=None) -> str:
    if value not in SCOPES:
        fail(f"--scope must be one of {', '.join(SCOPES)} (got {value!r})", EXIT_USAGE)
    if value not in agent.scopes:
        fail(f"{agent.title} has no {value} scope (use {' or '.join(agent.scopes)})", EXIT_USAGE)
    return value


def _settings_path(ctx: typer.Context, agent, scope: str) -> Path:
    root = None
    if scope != "user":
        root = Path(current_project(state(ctx), register=False).root)
    return agent.settings_path(scope, root)


def _remove(settings: SettingsFile) -> None:
    try:
        settings.remove()
    except OSError as exc:
        fail(f"cannot remove {settings.path}: {exc.strerror or exc}")


def _save(settings: SettingsFile, text: str) -> Path | None:
    try:
        return settings.save(text)
    except OSError as exc:
        fail(f"cannot write {settings.path}: {exc.strerror or exc}; nothing was changed")


_SCOPE_OPT = typer.Option("user", "--scope", help="user (~/.claude/settings.json), project "
                          "(.claude/settings.json) or local (.claude/settings.local.json).")
_AGENT_OPT = typer.Option(agents.DEFAULT, "--agent", help="The agent whose hooks to manage: "
                          f"{', '.join(agents.NAMES[:-1])} or {agents.NAMES[-1]}.")
_JSON_OPT = typer.Option(False, "--json", help="Machine-readable result (see `learn help hooks`).")
_GUARD_OPT = typer.Option(False, "--guard", help="Also stop a known-bad shell command once per session, with its "
                          "fix as the reason (a hook call before every shell command). Install without it "
                          "to turn the guard off.")


@app.command("install")
def install(ctx: typer.Context, scope: str = _SCOPE_OPT, agent_name: str = _AGENT_OPT, guard: bool = _GUARD_OPT,
            as_json: bool = _JSON_OPT) -> None:
    """Register `learn` in the agent's settings (merged beside everything already there)."""
    agent = _agent(agent_name)
    if guard and not agent.GUARD:
        fail(f"{agent.title} has no guard: `learn` cannot stop a command before it runs there", EXIT_USAGE)
    scope = _scope(scope, agent)
    path = _settings_path(ctx, agent, scope)
    if agent.kind == "skill":
        learn = command_for(scope, agent.kind)
        return _report(_settings_call(agent.module.install_skill, scope, path, learn), agent, as_json)
    settings = _settings_call(SettingsFile, path)
    learn = command_for(scope)
    doc, added = _settings_call(agent.merge, settings.doc, agent.handlers(learn, guard), path)
    text = settings.render(doc)
    changed = text != settings.text
    backup = _save(settings, text) if changed else None
    result = {"action": "install", "agent": agent.name, "scope": scope, "path": str(path), "changed": changed,
              "events": added, "backup": str(backup) if backup else None, "command": learn, "guard": guard}
    if changed and agent.note:
        result["note"] = agent.note
    _report(result, agent, as_json)


@app.command("uninstall")
def uninstall(
    ctx: typer.Context, scope: str = _SCOPE_OPT, agent_name: str = _AGENT_OPT, as_json: bool = _JSON_OPT
) -> None:
    """Remove exactly the hook entries `learn` added; everything else stays as it is."""
    agent = _agent(agent_name)
    scope = _scope(scope, agent)
    path = _settings_path(ctx, agent, scope)
    if agent.kind == "skill" and path.exists():
        return _report(_settings_call(agent.module.uninstall_skill, scope, path), agent, as_json)
    if not path.exists():
        result = {"action": "uninstall", "agent": agent.name, "scope": scope, "path": str(path),
                  "changed": False, "events": [], "backup": None, "command": None}
        return _report(result, agent, as_json)
    settings = _settings_call(SettingsFile, path)
    doc, removed = _settings_call(agent.strip, settings.doc, path)
    text = settings.render(doc) if removed else settings.text
    changed = text != settings.text
    if changed and settings.created_by_learn(doc):
        backup = _remove(settings)
    else:
        backup = _save(settings, text) if changed else None
    result = {"action": "uninstall", "agent": agent.name, "scope": scope, "path": str(path), "changed": changed,
              "events": removed, "backup": str(backup) if backup else None, "command": None}
    _report(result, agent, as_json)


@app.command("status")
def status(ctx: typer.Context, scope: str = typer.Option(None, "--scope", help="Only this scope (default: all).",
                                                        show_default=False),
           agent_name: str = typer.Option(None, "--agent", help="Only this agent (default: every agent).",
                                          show_default=False),
           as_json: bool = _JSON_OPT) -> None:
    """Show, per agent, where `learn` is registered and whether it would run."""
    chosen = [_agent(agent_name)] if agent_name else [_agent(name) for name in agents.NAMES]
    current = learn_command()
    docs = []
    for agent in chosen:
        if scope and not agent_name and scope not in agent.scopes:
            continue  # `--scope local` over every agent: the agents that have one
        scopes = [_scope(scope, agent)] if scope else list(agent.scopes)
        rows = [_settings_call(status_row, agent, name, _settings_path(ctx, agent, name),
                                command_for(name, agent.kind))
                for name in scopes]
        docs.append((agent, {"agent": agent.name, "command": current, "scopes": rows}))
    if as_json:
        json_out(docs[0][1] if agent_name else {"command": current, "agents": [doc for _a, doc in docs]})
        return
    from learn_cli.render.hooks import print_status

    for agent, doc in docs:
        print_status(doc, agent, brief=not agent_name)


def _settings_call(fn, *args):
    """`fn(*args)`; a settings file or skill that cannot be read or written ends the command."""
    try:
        return fn(*args)
    except SettingsError as exc:
        fail(str(exc))


def _report(result: dict, agent, as_json: bool) -> None:
    if as_json:
        json_out(result)
        return
    from learn_cli.render.hooks import report

    report(result, agent)
