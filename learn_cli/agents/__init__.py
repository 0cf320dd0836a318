"""The agents `learn` works with, and where each one lives: the one registry.

An agent is one module of this package (docs/ARCHITECTURE.md, "To add an agent"). It holds:
- its payload adapter: `AGENT` (the name events carry), `to_event(payload) -> Event | None`,
  and `hook_output(event, text)` for an answer in another shape than Claude Code's; `deny(reason)`
  when it can stop a tool call (the guard: capture.guard);
- its installer: `TITLE`, `SCOPES`, `settings_path(scope, root)`, `SHAPE` (how its settings
  file holds hooks: `learn_cli.agents.install`), `ENTRIES` / `GUARD` (event, matcher, learn
  sub-command, timeout in seconds), and `NOTE` / `TRUST` when the agent asks more of the user;
- its doctor check, when it has one: `doctor_check(project)`.

The capture hook imports this module and the one agent module it needs: stdlib only, no
other imports here.
"""

from __future__ import annotations

import sys

DEFAULT = "claude-code"

# name -> (module of this package, other names `--agent` accepts). Adding an agent adds a line.
REGISTRY = {
    "claude-code": ("claude", ("claude", "claude_code")),
    "codex": ("codex", ("codex-cli",)),
    "gemini": ("gemini", ("gemini-cli",)),
    "cursor": ("cursor", ()),
    "openclaw": ("openclaw", ()),
}

NAMES = tuple(REGISTRY)
_BY_ALIAS = {alias: name for name, (_module, aliases) in REGISTRY.items() for alias in (name, *aliases)}


def canonical(name: str | None) -> str | None:
    """The registered name of an agent given as `--agent NAME` (any case, aliases), or None."""
    return _BY_ALIAS.get((name or DEFAULT).lower())


def module(name: str):
    """The module of an agent (registered name or alias; an Event's `agent` is one). By
    `__import__`, not importlib.import_module: the hook calls this on every event, and the
    importlib package (with warnings) is ~1 ms more to import."""
    key = canonical(name)
    if key is None:
        raise KeyError(name)
    qualified = f"{__name__}.{REGISTRY[key][0]}"
    __import__(qualified)
    return sys.modules[qualified]


def sends_stop(mod) -> bool:
    """Does `learn hooks install` register a Stop hook (the end of every turn) for this agent?
    Its SessionEnd then leaves the promotion check to that hook (capture.hook._end_before_stop)."""
    kinds = getattr(mod, "_KINDS", {})
    return any(kinds.get(entry[0]) == "stop" for entry in getattr(mod, "ENTRIES", ()))


def names_session_end(mod, payload) -> bool:
    """Is this raw payload the agent's SessionEnd (payloads shaped like Claude Code's, named
    by `hook_event_name`), before it is turned into an Event?"""
    return isinstance(payload, dict) and getattr(mod, "_KINDS", {}).get(payload.get("hook_event_name")) == "session_end"


def modules() -> list:
    """Every agent's module, in registry order."""
    return [module(name) for name in NAMES]
