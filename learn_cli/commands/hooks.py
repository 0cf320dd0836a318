"""`learn hooks install|uninstall|status [--scope user|project|local] [--agent NAME]`.

Merges `learn`'s hook entries into the agent's settings file beside whatever is there (SPEC §3):
- idempotent: a second install changes nothing, byte for byte;
- only our entries are written or removed (json_patch): every other byte of the file stays, so
  install then uninstall gives back the file as it was;
- one backup `<file>.learn-backup`: the file before learn first changed it, removed again when
  an uninstall brings the file back to exactly that;
- a symlinked settings file stays a link: its target is written;
- the absolute path of the installed `learn` is registered in user and local scope (hooks run
  without the user's shell set-up), and entries left by an older install at another path are
  replaced; project scope, a file meant to be committed, registers plain `learn` (found on PATH);
- uninstall removes exactly the entries whose command is ours, and the containers it emptied;
- a settings file that is not valid JSON is refused with one line, and left untouched.

The settings-file handling (`SettingsFile`) is agent-neutral; an agent is a table of where its
settings live and which entries `learn` adds (`AGENTS`). Later agents add a row.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import typer

from learn_cli.commands._common import EXIT_USAGE, current_project, fail, json_out, state

SCOPES = ("user", "project", "local")
BACKUP_SUFFIX = ".learn-backup"  # beside the settings file: its text before learn first changed it

app = typer.Typer(help="Install, remove or show the agent hooks.", no_args_is_help=True,
                  context_settings={"help_option_names": ["-h", "--help"]})


# ---------------------------------------------------------------------------------------------
# Agents


class ClaudeCode:
    """Claude Code (reference/agent-hooks.md §1.1, §1.2, §1.10)."""

    name = "claude-code"
    title = "Claude Code"
    # (event, matcher or None, learn sub-command, timeout in seconds or None)
    ENTRIES = (
        ("SessionStart", None, "context --hook", 15),  # no matcher: startup, resume, clear, compact
        ("UserPromptSubmit", None, "capture", 10),
        ("PostToolUse", "*", "capture", 10),
        ("PostToolUseFailure", "*", "capture", 10),
        ("Stop", None, "capture", 10),
        # No timeout: a SessionEnd timeout would raise Claude Code's shared 1.5 s exit budget.
        ("SessionEnd", None, "capture", None),
    )
    # `--guard` only: a hook call before every shell command is worth it only to stop one.
    GUARD = (("PreToolUse", "Bash", "capture --guard", 5),)
    # Whether a registered hook runs by itself (see `hooks status`); None: it does.
    trust = None

    def entries(self, guard: bool = False) -> tuple:
        return self.ENTRIES + (self.GUARD if guard else ())

    def settings_path(self, scope: str, project_root: Path | None) -> Path:
        if scope == "user":
            return Path(os.path.expanduser("~")) / ".claude" / "settings.json"
        name = "settings.json" if scope == "project" else "settings.local.json"
        return Path(project_root) / ".claude" / name

    def handlers(self, learn: str, guard: bool = False) -> list[tuple[str, str | None, dict]]:
        out = []
        for event, matcher, sub, timeout in self.entries(guard):
            handler = {"type": "command", "command": f"{learn} {sub}"}
            if timeout:
                handler["timeout"] = timeout
            out.append((event, matcher, handler))
        return out


class DotFolderConfig:
    """Agents whose one config file sits in `~/<dir>/` (user) or `<project>/<dir>/` (project)."""

    config: tuple[str, str]

    def settings_path(self, scope: str, project_root: Path | None) -> Path:
        folder = Path(os.path.expanduser("~")) if scope == "user" else Path(project_root)
        return folder.joinpath(*self.config)


class Codex(DotFolderConfig, ClaudeCode):
    """Codex CLI (reference §3.1): Claude Code's three-level shape, in `.codex/hooks.json`."""

    name = "codex"
    title = "Codex CLI"
    scopes = ("user", "project")
    ENTRIES = (
        ("SessionStart", None, "context --hook --agent codex", 15),
        ("UserPromptSubmit", None, "capture --agent codex", 10),
        ("PostToolUse", None, "capture --agent codex", 10),  # failed Bash calls included
        ("Stop", None, "capture --agent codex", 10),
    )
    GUARD = (("PreToolUse", "Bash", "capture --agent codex --guard", 5),)
    note = ("Codex runs new or changed hooks only once you trust them: open Codex and review them in /hooks "
            "(`codex exec` runs untrusted hooks only with --dangerously-bypass-hook-trust, and says nothing).")
    trust = "Codex runs them only once trusted in /hooks (learn cannot see whether you did)"

    config = (".codex", "hooks.json")


class Gemini(DotFolderConfig, ClaudeCode):
    """Gemini CLI (reference §3.2): the three-level shape in `settings.json`, timeouts in ms."""

    name = "gemini"
    title = "Gemini CLI"
    scopes = ("user", "project")
    ENTRIES = (
        ("SessionStart", None, "context --hook --agent gemini", 15),
        ("BeforeAgent", None, "capture --agent gemini", 10),  # the prompt: corrections
        ("AfterTool", None, "capture --agent gemini", 10),  # failed calls included
        ("SessionEnd", None, "capture --agent gemini", 5),
    )
    GUARD = (("BeforeTool", "run_shell_command", "capture --agent gemini --guard", 5),)

    config = (".gemini", "settings.json")

    def handlers(self, learn: str, guard: bool = False) -> list[tuple[str, str | None, dict]]:
        return [(event, matcher, {"type": "command", "name": "learn", "command": f"{learn} {sub}",
                                  "timeout": timeout * 1000})
                for event, matcher, sub, timeout in self.entries(guard)]


class Cursor(DotFolderConfig, ClaudeCode):
    """Cursor (reference §3.3): `{"version": 1, "hooks": {event: [{command, timeout}]}}`, flat."""

    name = "cursor"
    title = "Cursor"
    scopes = ("user", "project")
    ENTRIES = (
        ("sessionStart", None, "context --hook --agent cursor", 15),
        ("postToolUse", None, "capture --agent cursor", 10),
        ("postToolUseFailure", None, "capture --agent cursor", 10),
        ("afterShellExecution", None, "capture --agent cursor", 10),  # Cursor without postToolUse
        ("sessionEnd", None, "capture --agent cursor", 5),
    )
    GUARD = ()  # no guard: not verified on a real Cursor

    config = (".cursor", "hooks.json")

    def merge(self, doc: dict, wanted: list, path: Path) -> tuple[dict, list[str]]:
        hooks_table(doc, path)
        out = json.loads(json.dumps(doc))
        if "version" not in out:
            out = {"version": 1, **out}
        hooks = out.setdefault("hooks", {})
        added = []
        for event, _matcher, handler in wanted:
            entries = hooks.setdefault(event, [])
            if [h for h in entries if is_ours(h)] == [handler]:
                continue
            entries[:] = [h for h in entries if not is_ours(h)] + [handler]
            added.append(event)
        return out, added

    def strip(self, doc: dict, path: Path) -> tuple[dict, list[str]]:
        hooks = hooks_table(doc, path)
        out = json.loads(json.dumps(doc))
        removed = [event for event, entries in hooks.items() if any(is_ours(h) for h in entries)]
        for event in removed:
            kept = [h for h in out["hooks"][event] if not is_ours(h)]
            if kept:
                out["hooks"][event] = kept
            else:
                del out["hooks"][event]
        if removed and not out["hooks"]:
            del out["hooks"]
        return out, removed

    def registered(self, hooks: dict) -> tuple[set, list[str]]:
        ours = [(event, h["command"]) for event, entries in hooks.items() for h in entries if is_ours(h)]
        return {e for e, _c in ours}, [c for _e, c in ours]

    def handlers(self, learn: str, guard: bool = False) -> list[tuple[str, str | None, dict]]:
        return [(event, None, {"command": f"{learn} {sub}", "timeout": timeout})
                for event, _matcher, sub, timeout in self.entries(guard)]


class OpenClaw:
    """OpenClaw (reference §3.4): hooks are in-process, so `learn` installs a skill instead."""

    name = "openclaw"
    title = "OpenClaw"
    kind = "skill"
    scopes = ("user", "project")
    ENTRIES = (("skill", None, "", None),)
    GUARD = ()
    trust = None
    note = "OpenClaw loads skills when a session starts: start a new one to use it."

    def settings_path(self, scope: str, project_root: Path | None) -> Path:
        folder = Path(os.path.expanduser("~")) / ".openclaw" if scope == "user" else Path(project_root)
        return folder / "skills" / "learn" / "SKILL.md"


AGENTS = {"claude-code": ClaudeCode(), "codex": Codex(), "gemini": Gemini(), "cursor": Cursor(),
          "openclaw": OpenClaw()}

# A command of ours: `<…/learn> capture…`, `<…/learn> context --hook…`, `<python> -m learn_cli …`.
_OURS = re.compile(
    r"""^\s*(?:"[^"]*|'[^']*|\S*)(?:(?<![\w.-])learn(?:\.exe)?["']?|\s+-m\s+learn_cli)\s+"""
    r"""(?:capture|context\s+--hook)(?:\s|$)"""
)


def is_ours(handler) -> bool:
    return isinstance(handler, dict) and isinstance(handler.get("command"), str) and bool(
        _OURS.match(handler["command"]))


def learn_command() -> str:
    """The absolute command that runs this `learn` (quoted for the shell when needed)."""
    import shlex
    import shutil

    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 and os.path.basename(argv0).split(".")[0] == "learn" and os.access(argv0, os.X_OK):
        return shlex.quote(os.path.abspath(argv0))
    found = shutil.which("learn")
    if found:
        return shlex.quote(os.path.abspath(found))
    return f"{shlex.quote(os.path.abspath(sys.executable))} -m learn_cli"


def command_for(scope: str) -> str:
    """What a hook entry runs. User and local settings stay on this machine: the absolute path
    of this `learn`. A project's settings are committed and shared: plain `learn`, found on
    the PATH of whoever runs the agent (docs/cmd-hooks.md weighs the two)."""
    return PORTABLE_COMMAND if scope == "project" else learn_command()


PORTABLE_COMMAND = "learn"


# ---------------------------------------------------------------------------------------------
# The settings file


class SettingsError(Exception):
    pass


class SettingsFile:
    """A JSON settings file read and written the way its owner wrote it."""

    def __init__(self, path: Path):
        self.path = path
        self.exists = path.exists()
        try:
            self.text = _read_exact(path) if self.exists else ""
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            doc = json.loads(self.text) if self.text.strip() else {}
        except ValueError as exc:
            where = f" (line {exc.lineno}, column {exc.colno})" if hasattr(exc, "lineno") else ""
            raise SettingsError(f"{path} is not valid JSON{where}; fix it first: nothing was changed") from None
        if not isinstance(doc, dict):
            raise SettingsError(f"{path} does not hold a JSON object; nothing was changed")
        self.doc = doc

    def render(self, doc: dict) -> str:
        """The file's text holding `doc`: only what changed is rewritten (json_patch), so the
        owner's spacing, key order and escapes stay; a new file is written with two spaces."""
        if not self.text.strip():
            return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        from learn_cli.commands.json_patch import patch

        return patch(self.text, doc)

    @property
    def backup_path(self) -> Path:
        return self.path.with_name(self.path.name + BACKUP_SUFFIX)

    def save(self, text: str) -> Path | None:
        """Write `text` atomically, through a symbolic link (a linked settings file stays a link
        and its target is written). One backup: the file as it was before learn first changed
        it, kept until learn's entries are gone and the file is that again."""
        target = Path(os.path.realpath(self.path))
        target.parent.mkdir(parents=True, exist_ok=True)
        backup = self._keep_backup(text)
        mode = (target.stat().st_mode & 0o777) if self.exists else 0o644
        tmp = target.with_name(f".{target.name}.learn-{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return backup

    def created_by_learn(self, doc: dict) -> bool:
        """Left empty by an uninstall, never backed up (so learn created it), a plain file."""
        return doc == {} and not self.backup_path.exists() and not self.path.is_symlink()

    def remove(self) -> None:
        """Delete a settings file learn created, and its folder when that is then empty."""
        self.path.unlink()
        try:
            self.path.parent.rmdir()
        except OSError:
            pass  # not empty: the agent's other files live there

    def _keep_backup(self, text: str) -> Path | None:
        """The one backup: made before the first change; dropped once `text` is what it holds."""
        backup = self.backup_path
        try:
            held = _read_exact(backup)
        except FileNotFoundError:
            held = None
        if held is not None and held == text:
            backup.unlink()
            return None
        if held is None and self.exists:
            fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(self.text)
        return backup if backup.exists() else None


def _read_exact(path: Path) -> str:
    """A file's text as it is on disk: line endings untranslated."""
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def hooks_table(doc: dict, path: Path) -> dict:
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f"{path}: \"hooks\" is not a JSON object; nothing was changed")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise SettingsError(f"{path}: hooks.{event} is not a list; nothing was changed")
    return hooks


def with_entries(doc: dict, wanted: list[tuple[str, str | None, dict]], path: Path) -> tuple[dict, list[str]]:
    """A copy of `doc` holding exactly our `wanted` handlers (stale ones of ours replaced)."""
    hooks_table(doc, path)
    out = json.loads(json.dumps(doc))  # a deep copy of plain JSON
    hooks = out.setdefault("hooks", {})
    added = []
    wanted_by_event: dict[str, list] = {}
    for event, matcher, handler in wanted:
        wanted_by_event.setdefault(event, []).append((matcher, handler))
    for event, items in wanted_by_event.items():
        groups = hooks.setdefault(event, [])
        present = [(g.get("matcher"), h) for g in groups if isinstance(g, dict)
                   for h in (g.get("hooks") or []) if is_ours(h)]
        if all((m, h) in present for m, h in items) and len(present) == len(items):
            continue
        _drop_ours(groups)
        for matcher, handler in items:
            group = {"matcher": matcher, "hooks": [handler]} if matcher is not None else {"hooks": [handler]}
            groups.append(group)
        added.append(event)
    for event in [e for e in hooks if e not in wanted_by_event and isinstance(hooks[e], list)]:
        if _drop_ours(hooks[event]):  # ours no longer wanted there (the guard turned off)
            added.append(event)
            if not hooks[event]:
                del hooks[event]
    return out, added


def without_entries(doc: dict, path: Path) -> tuple[dict, list[str]]:
    """A copy of `doc` without any handler of ours, and without the containers that held only ours."""
    hooks_table(doc, path)
    out = json.loads(json.dumps(doc))
    hooks = out.get("hooks")
    removed = []
    if not isinstance(hooks, dict):
        return out, removed
    for event in list(hooks):
        groups = hooks[event]
        if _drop_ours(groups):
            removed.append(event)
            if not groups:
                del hooks[event]
    if removed and not hooks:
        del out["hooks"]
    return out, removed


def _drop_ours(groups: list) -> bool:
    """Remove our handlers from a list of matcher groups (in place); drop groups we emptied."""
    changed = False
    for group in list(groups):
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        kept = [h for h in group["hooks"] if not is_ours(h)]
        if len(kept) != len(group["hooks"]):
            changed = True
            if kept:
                group["hooks"] = kept
            else:
                groups.remove(group)
    return changed


# ---------------------------------------------------------------------------------------------
# Commands


def _agent(name: str):
    agent = AGENTS.get(name)
    if agent is None:
        fail(f"unknown agent {name!r} (known: {', '.join(AGENTS)})", EXIT_USAGE)
    return agent


def _scope(value: str, agent=None) -> str:
    if value not in SCOPES:
        fail(f"--scope must be one of {', '.join(SCOPES)} (got {value!r})", EXIT_USAGE)
    scopes = getattr(agent, "scopes", SCOPES)
    if value not in scopes:
        fail(f"{agent.title} has no {value} scope (use {' or '.join(scopes)})", EXIT_USAGE)
    return value


def _settings_path(ctx: typer.Context, agent, scope: str) -> Path:
    root = None
    if scope != "user":
        root = Path(current_project(state(ctx), register=False).root)
    return agent.settings_path(scope, root)


def _open(path: Path) -> SettingsFile:
    try:
        return SettingsFile(path)
    except SettingsError as exc:
        fail(str(exc))


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
_AGENT_OPT = typer.Option("claude-code", "--agent", help="The agent whose hooks to manage: claude-code, codex, "
                          "gemini, cursor or openclaw.")
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
    if getattr(agent, "kind", "") == "skill":
        return _report(_install_skill(agent, scope, path), agent, as_json)
    settings = _open(path)
    learn = command_for(scope)
    try:
        doc, added = getattr(agent, "merge", with_entries)(settings.doc, agent.handlers(learn, guard), path)
    except SettingsError as exc:
        fail(str(exc))
    text = settings.render(doc)
    changed = text != settings.text
    backup = _save(settings, text) if changed else None
    result = {"action": "install", "agent": agent.name, "scope": scope, "path": str(path), "changed": changed,
              "events": added, "backup": str(backup) if backup else None, "command": learn, "guard": guard}
    if changed and getattr(agent, "note", None):
        result["note"] = agent.note
    _report(result, agent, as_json)


@app.command("uninstall")
def uninstall(ctx: typer.Context, scope: str = _SCOPE_OPT, agent_name: str = _AGENT_OPT, as_json: bool = _JSON_OPT) -> None:
    """Remove exactly the hook entries `learn` added; everything else stays as it is."""
    agent = _agent(agent_name)
    scope = _scope(scope, agent)
    path = _settings_path(ctx, agent, scope)
    if getattr(agent, "kind", "") == "skill" and path.exists():
        return _report(_uninstall_skill(agent, scope, path), agent, as_json)
    if not path.exists():
        result = {"action": "uninstall", "agent": agent.name, "scope": scope, "path": str(path),
                  "changed": False, "events": [], "backup": None, "command": None}
        return _report(result, agent, as_json)
    settings = _open(path)
    try:
        doc, removed = getattr(agent, "strip", without_entries)(settings.doc, path)
    except SettingsError as exc:
        fail(str(exc))
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
    agents = [_agent(agent_name)] if agent_name else list(AGENTS.values())
    current = learn_command()
    docs = []
    for agent in agents:
        if scope and not agent_name and scope not in getattr(agent, "scopes", SCOPES):
            continue  # `--scope local` over every agent: the agents that have one
        scopes = [_scope(scope, agent)] if scope else list(getattr(agent, "scopes", SCOPES))
        rows = [_status_row(agent, name, _settings_path(ctx, agent, name), command_for(name)) for name in scopes]
        docs.append({"agent": agent.name, "command": current, "scopes": rows})
    if as_json:
        json_out(docs[0] if agent_name else {"command": current, "agents": docs})
        return
    for doc in docs:
        _print_status(doc, AGENTS[doc["agent"]], brief=not agent_name)


def registration_status(project_root: str | os.PathLike | None = None, agent_name: str = "claude-code") -> list[dict]:
    """Where `learn` is registered, per scope (for `learn doctor`): the rows of `hooks status --json`."""
    agent = AGENTS[agent_name]
    root = Path(project_root) if project_root else Path.cwd()
    return [_status_row(agent, scope, agent.settings_path(scope, root), command_for(scope))
            for scope in getattr(agent, "scopes", SCOPES)]


def _status_row(agent, scope: str, path: Path, current: str) -> dict:
    row = {"scope": scope, "path": str(path), "exists": path.exists(), "valid": True, "events": [],
           "missing": [], "commands": [], "current": False, "runnable": False, "guard": False,
           "runs": False, "trust": None}
    if not row["exists"]:
        row["missing"] = sorted({e for e, _m, _s, _t in agent.ENTRIES})
        return row
    if getattr(agent, "kind", "") == "skill":
        return _skill_status(row, path, current)
    try:
        settings = SettingsFile(path)
        hooks = hooks_table(settings.doc, path)
    except SettingsError as exc:
        row["valid"] = False
        row["error"] = str(exc)
        return row
    found, commands = set(), []
    if hasattr(agent, "registered"):
        found, commands = agent.registered(hooks)
        hooks = {}
    for event, groups in hooks.items():
        for group in groups:
            for handler in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if is_ours(handler):
                    found.add(event)
                    commands.append(handler["command"])
    wanted = {e for e, _m, _s, _t in agent.ENTRIES}
    row["events"] = sorted(found)
    row["missing"] = sorted(wanted - found) if found else sorted(wanted)
    row["commands"] = sorted(set(commands))
    row["guard"] = any(c.endswith(" --guard") for c in commands)
    # Current: exactly what `install` (with or without --guard) writes now, at this path.
    expected = {f"{current} {sub}" for _e, _m, sub, _t in agent.entries(row["guard"])}
    row["current"] = bool(found) and set(commands) == expected
    row["runnable"] = bool(commands) and all(_runnable(c) for c in set(commands))
    row["trust"] = agent.trust if found else None
    row["runs"] = row["runnable"] and not row["missing"] and agent.trust is None
    return row


def _runnable(command: str) -> bool:
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


# ---------------------------------------------------------------------------------------------
# A skill instead of hooks (OpenClaw)


def _install_skill(agent, scope: str, path: Path) -> dict:
    from learn_cli.capture.adapters.openclaw import is_our_skill, skill_text
    from learn_cli.store.jsonl import atomic_write

    learn = command_for(scope)
    text = skill_text(learn)
    old = _read_skill(path)
    if old is not None and not is_our_skill(old):
        fail(f"{path} exists and was not written by learn; nothing was changed")
    changed = old != text
    if changed:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, text.encode("utf-8"), mode=0o644)
        except OSError as exc:
            fail(f"cannot write {path}: {exc.strerror or exc}; nothing was changed")
    result = {"action": "install", "agent": agent.name, "scope": scope, "path": str(path), "changed": changed,
              "events": ["skill"] if changed else [], "backup": None, "command": learn}
    if changed:
        result["note"] = agent.note
    return result


def _uninstall_skill(agent, scope: str, path: Path) -> dict:
    from learn_cli.capture.adapters.openclaw import is_our_skill

    old = _read_skill(path)
    ours = old is not None and is_our_skill(old)
    if ours:
        try:
            path.unlink()
            path.parent.rmdir()  # the skill's own folder, when nothing else is in it
        except OSError:
            pass
    return {"action": "uninstall", "agent": agent.name, "scope": scope, "path": str(path), "changed": ours,
            "events": ["skill"] if ours else [], "backup": None, "command": None}


def _read_skill(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")


def _skill_status(row: dict, path: Path, current: str) -> dict:
    from learn_cli.capture.adapters.openclaw import is_our_skill, skill_text

    text = _read_skill(path) or ""
    if not is_our_skill(text):
        row["missing"] = ["skill"]
        return row
    found = re.search(r"`(.+?) context`", text)
    row["events"] = ["skill"]
    row["commands"] = [found.group(1)] if found else []
    row["current"] = text == skill_text(current)
    row["runnable"] = bool(found) and _runnable(found.group(1))
    row["runs"] = row["runnable"]
    return row


# ---------------------------------------------------------------------------------------------
# Output


def _report(result: dict, agent, as_json: bool) -> None:
    if as_json:
        json_out(result)
        return
    from learn_cli.render.console import fancy

    verb = "installed" if result["action"] == "install" else "removed"
    events = ", ".join(result["events"])
    skill = getattr(agent, "kind", "") == "skill"
    noun = "skill" if skill else "hooks"
    if fancy():
        if not result["changed"]:
            state_line = "already installed" if result["action"] == "install" else "nothing of learn's to remove"
            print(f"✅ {agent.title} {noun} ({result['scope']}): {state_line} in {result['path']}")
            return
        print(f"✅ {agent.title} {noun} {verb} ({result['scope']} scope)")
        print(f"   📄 {result['path']}")
        print(f"   🪝 {events}")
        if result.get("command") and not skill:
            print(f"   ▶️  {result['command']} capture")
        if result["backup"]:
            print(f"   💾 backup: {result['backup']}")
        if result.get("note"):
            print(f"   👉 {result['note']}")
        return
    if not result["changed"]:
        state_line = "already installed" if result["action"] == "install" else "nothing to remove"
        print(f"{result['action']}: {agent.name} {result['scope']}: {state_line}: {result['path']}")
        return
    print(f"{result['action']}: {agent.name} {result['scope']}: {verb} {events}: {result['path']}")
    if result["backup"]:
        print(f"backup: {result['backup']}")
    if result.get("note"):
        print(f"note: {result['note']}")


def _print_status(doc: dict, agent, brief: bool = False) -> None:
    from learn_cli.render.console import fancy

    tty = fancy()
    if brief and not any(row["events"] or not row["valid"] for row in doc["scopes"]):
        print(f"⚪ {agent.title}: not installed" if tty else f"{agent.name}: not installed")
        return
    if tty:
        print(f"🪝 {agent.title} hooks — this learn: {doc['command']}")
    else:
        print(f"agent: {agent.name}")
        print(f"command: {doc['command']}")
    for row in doc["scopes"]:
        if brief and not row["events"] and row["valid"]:
            continue
        state_text = _state_text(row)
        if tty:
            mark = "✅" if row["runs"] else "⚪" if not row["events"] else "⚠️ "
            print(f"  {mark} {row['scope']:<8} {state_text}  ({row['path']})")
        else:
            print(f"{row['scope']}: {state_text}: {row['path']}")


def _state_text(row: dict) -> str:
    if not row["valid"]:
        return f"invalid settings file ({row.get('error', '')})"
    if row["events"] and not row["missing"]:
        text = "installed" + (", guard on" if row["guard"] else "")
        if not row["current"]:
            text += " (not what this learn installs: run install again)"
    elif row["events"]:
        text = f"partly installed (missing: {', '.join(row['missing'])})"
    else:
        return "not installed"
    if not row["runnable"]:
        text += "; the registered command does not exist"
    elif row["trust"]:
        text += f"; {row['trust']}"
    return text
