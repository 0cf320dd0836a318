"""`learn auto [on|off|default] [--global] [--json]`: automatic capture, a three-state setting.

A project is ON, OFF, or follows the default (config.json's `auto_capture`, ON unless changed).
Without a value: which applies here, and why. `learn --auto` flips the state that applies
(interactive.toggle_auto), and a flip that lands on the default removes the project's own
setting instead of pinning it."""

from __future__ import annotations

import typer

from learn_cli.commands._common import EXIT_USAGE, current_project, fail, json_out, open_store, read_project, state

VALUES = ("on", "off", "default")
KEY = "auto_capture"


def command(
    ctx: typer.Context,
    value: str = typer.Argument(None, metavar="[on|off|default]", show_default=False,
                                help="Set this project (or, with --global, the default); omit to show."),
    global_: bool = typer.Option(False, "--global", help="Set the default for every project that follows it."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable state (see `learn help auto`)."),
) -> None:
    st = state(ctx)
    if value is not None and value not in VALUES:
        fail(f"learn auto takes on, off or default (got {value!r})", EXIT_USAGE)
    if value == "default" and global_:
        fail("`default` is for a project; the default itself is on or off", EXIT_USAGE)
    if value is None:
        store = open_store(st, create=False)
        return show(describe(store, read_project(st)), as_json)
    store = open_store(st)
    if global_:
        set_default(store, value == "on")
        project = current_project(st, register=False)
    else:
        project = current_project(st)
        set_project(store, project.id, None if value == "default" else value == "on")
    show(describe(store, project), as_json)


def set_default(store, on: bool):
    store.save_config(dict(store.config(), **{KEY: on}))
    return store.layout.config


def set_project(store, pid: str, on: bool | None, pin: bool = True):
    """The project's own setting; None means: follow the default. Without `pin` (a flip), the
    default's own value also means follow it: two flips leave nothing pinned."""
    overrides = dict(store.overrides(pid))
    if on is None or (not pin and on == bool(store.config().get(KEY, True))):
        overrides.pop(KEY, None)
    else:
        overrides[KEY] = on
    store.save_overrides(pid, overrides)
    return store.layout.overrides(pid)


def describe(store, project) -> dict:
    default = bool(store.config().get(KEY, True))
    own = store.overrides(project.id).get(KEY)
    own = own if isinstance(own, bool) else None
    return {"project": project.name, "project_id": project.id, "default": default,
            "project_setting": "default" if own is None else ("on" if own else "off"),
            "effective": default if own is None else own, "config": str(store.layout.config),
            "overrides": str(store.layout.overrides(project.id))}


def show(doc: dict, as_json: bool) -> None:
    if as_json:
        json_out(doc)
        return
    on = "ON" if doc["effective"] else "OFF"
    default = "ON" if doc["default"] else "OFF"
    why = (f"follows the default ({default})" if doc["project_setting"] == "default"
           else f"set for this project ({doc['project_setting'].upper()}; the default is {default})")
    print(f"Auto-learning in {doc['project']}: {on}, {why}")
    print("  learn auto on|off            set it for this project")
    print("  learn auto default           follow the default")
    print("  learn auto on|off --global   change the default")
