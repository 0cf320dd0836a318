"""An agent's installer, read from its module (learn_cli.agents.<agent>): what `learn hooks
install|uninstall|status` needs, whatever the agent.

An agent module declares data (`TITLE`, `SCOPES`, `SHAPE`, `ENTRIES`, `GUARD`, `NOTE`,
`TRUST`) and `settings_path(scope, root)`, optionally `handler(command, timeout)` for a
handler shape other than Claude Code's; `Agent` wraps it with the generic parts. A skill agent
(`SHAPE = "skill"`) installs a file instead of hooks: its module offers `install_skill`,
`uninstall_skill` and `skill_status`.

What a hook runs: the absolute path of this `learn` in user and local scope (hooks run without
the user's shell set-up); plain `learn` in project scope, a file meant to be committed
(docs/cmd-hooks.md weighs the two).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from learn_cli import agents
from learn_cli.agents.handlers import HOOK_ENTRY_PATH

SCOPES = ("user", "project", "local")
PORTABLE_COMMAND = "learn"


class Agent:
    """One agent's installer: its module's declarations, and the shape's merge / strip."""

    def __init__(self, module):
        self.module = module
        self.name = module.AGENT
        self.title = module.TITLE
        self.scopes = getattr(module, "SCOPES", SCOPES)
        self.shape = module.SHAPE
        self.kind = "skill" if self.shape == "skill" else "hooks"
        self.ENTRIES = module.ENTRIES
        self.GUARD = getattr(module, "GUARD", ())
        self.note = getattr(module, "NOTE", None)
        self.trust = getattr(module, "TRUST", None)

    def entries(self, guard: bool = False) -> tuple:
        return self.ENTRIES + (self.GUARD if guard else ())

    def settings_path(self, scope: str, project_root: Path | None) -> Path:
        return self.module.settings_path(scope, project_root)

    def handlers(self, learn: str, guard: bool = False) -> list[tuple[str, str | None, dict]]:
        """(event, matcher, handler) of every entry, for the `learn` command given."""
        make = getattr(self.module, "handler", command_handler)
        return [
            (event, matcher, make(f"{learn} {sub}", timeout)) for event, matcher, sub, timeout in self.entries(guard)
        ]

    def merge(self, doc: dict, wanted: list, path: Path) -> tuple[dict, list[str]]:
        from learn_cli.agents.hook_tables import SHAPES

        return SHAPES[self.shape][0](doc, wanted, path)

    def strip(self, doc: dict, path: Path) -> tuple[dict, list[str]]:
        from learn_cli.agents.hook_tables import SHAPES

        return SHAPES[self.shape][1](doc, path)

    def registered(self, hooks: dict) -> tuple[set, list[str]]:
        from learn_cli.agents.hook_tables import SHAPES

        return SHAPES[self.shape][2](hooks)


def get(name: str) -> Agent | None:
    """The installer of an agent by its registered name (`--agent NAME`), or None."""
    return Agent(agents.module(name)) if name in agents.REGISTRY else None


def every() -> dict[str, Agent]:
    return {name: Agent(agents.module(name)) for name in agents.NAMES}


def command_handler(command: str, timeout: int | None) -> dict:
    """Claude Code's handler shape (also Codex CLI's): `{"type": "command", "command", "timeout"}`."""
    handler = {"type": "command", "command": command}
    if timeout:
        handler["timeout"] = timeout
    return handler


def home_or_project(scope: str, project_root: Path | None, *parts: str) -> Path:
    """`~/<parts>` in user scope, `<project>/<parts>` otherwise (one config file per agent)."""
    folder = Path(os.path.expanduser("~")) if scope == "user" else Path(project_root)
    return folder.joinpath(*parts)


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


def hook_command() -> str:
    """What runs this `learn`'s hook entry point fastest on this machine: its interpreter with
    `-S` (no `site`: ~0.1x a bare interpreter's start saved per hook) on learn_cli/hook_entry.py,
    which finds the package itself; `learn_command()` when either file is missing (a frozen
    build)."""
    import shlex

    import learn_cli

    python = os.path.abspath(sys.executable) if sys.executable else ""
    entry = os.path.join(os.path.dirname(os.path.abspath(learn_cli.__file__)), HOOK_ENTRY_PATH[-1])
    if not (python and os.access(python, os.X_OK) and os.path.isfile(entry)):
        return learn_command()
    return f"{shlex.quote(python)} -S {shlex.quote(entry)}"


def command_for(scope: str, kind: str = "hooks") -> str:
    """What a hook entry runs. User and local settings stay on this machine: this `learn`'s
    interpreter on its hook entry script, by absolute paths (`hook_command`); a skill (`kind`
    "skill"), which the agent reads and runs by hand, names this `learn` itself. A project's
    settings are committed and shared: plain `learn`, found on the PATH of whoever runs the
    agent (docs/cmd-hooks.md weighs the two)."""
    if scope == "project":
        return PORTABLE_COMMAND
    return learn_command() if kind == "skill" else hook_command()
