"""Where a settings file keeps its hook handlers, by shape, and how ours go in and out.

- `nested` (Claude Code, Codex CLI, Gemini CLI): `{"hooks": {event: [{"matcher": m, "hooks":
  [handler]}]}}`, no matcher: every tool;
- `flat` (Cursor): `{"version": 1, "hooks": {event: [handler]}}`.

Each shape offers `merge(doc, wanted, path)` (a copy of `doc` holding exactly our `wanted`
handlers, and the events that changed), `strip(doc, path)` (a copy without any handler of ours,
and the events it left) and `registered(hooks)` (the events and commands of ours). Ours is
`learn_cli.agents.handlers.is_ours`.
"""

from __future__ import annotations

import json
from pathlib import Path

from learn_cli.agents.handlers import handler_command, is_ours
from learn_cli.agents.settings import hooks_table

# -- nested: event -> [{matcher, hooks: [handler]}] -------------------------------------------


def merge_nested(doc: dict, wanted: list[tuple[str, str | None, dict]], path: Path) -> tuple[dict, list[str]]:
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


def strip_nested(doc: dict, path: Path) -> tuple[dict, list[str]]:
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


def registered_nested(hooks: dict) -> tuple[set, list[str]]:
    """The events holding a handler of ours, and the commands of those handlers."""
    ours = ours_by_event(hooks)
    return set(ours), [c for commands in ours.values() for c in commands]


def ours_by_event(hooks) -> dict[str, list[str]]:
    """event -> the commands of our handlers in a nested `hooks` table (any malformed part skipped)."""
    found: dict[str, list[str]] = {}
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                if is_ours(handler):
                    found.setdefault(str(event), []).append(handler_command(handler))
    return found


# -- flat: event -> [handler] (Cursor) ---------------------------------------------------------


def merge_flat(doc: dict, wanted: list, path: Path) -> tuple[dict, list[str]]:
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


def strip_flat(doc: dict, path: Path) -> tuple[dict, list[str]]:
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


def registered_flat(hooks: dict) -> tuple[set, list[str]]:
    ours = [(event, handler_command(h)) for event, entries in hooks.items() for h in entries if is_ours(h)]
    return {e for e, _c in ours}, [c for _e, c in ours]


# shape -> (merge, strip, registered)
SHAPES = {
    "nested": (merge_nested, strip_nested, registered_nested),
    "flat": (merge_flat, strip_flat, registered_flat),
}
