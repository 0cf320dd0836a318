"""The bare `learn` (asks what you learned, as in the seed's transcript) and `learn --auto`."""

from __future__ import annotations

import sys

from learn_cli.commands._common import EXIT_USAGE, State, current_project, fail, open_store

USAGE = ("usage: learn                      ask what you learned (needs a terminal)\n"
         "       learn add TEXT [--fix ...]  store a learning without questions\n"
         "       learn --auto [--global]     toggle automatic capture (learn auto: show, set)\n"
         "       learn --help                every command")

AUTO_STATES = {
    True: "Capturing errors and corrections automatically",
    False: "Manual logging only (use `learn` to log manually)",
}


def run(st: State) -> None:
    """Ask: what did you learn, category, fix, impact; then store it like `learn add`."""
    if not sys.stdin.isatty():
        sys.stderr.write(USAGE + "\n")
        fail("`learn` asks questions and needs a terminal; use `learn add TEXT` in scripts", EXIT_USAGE)
    from learn_cli.commands.add import DEFAULT_IMPACT, TYPE_OF_CATEGORY, build_record, report, store_learning, suggest
    from learn_cli.render.console import fancy

    fancy_out = fancy()
    text = _ask("🧠 What did you learn?" if fancy_out else "What did you learn?", required=True, own_line=True)
    rtype, category = suggest(text)
    category = _ask_category(category)
    fix = _ask("Fix (what to do; Enter to skip):")
    impact = _ask_impact(DEFAULT_IMPACT)
    print()
    rec = build_record(text, fix=fix or None, type_=TYPE_OF_CATEGORY.get(category) or rtype, category=category,
                       impact=impact)
    outcome, where, store = store_learning(st, rec, False)
    report(outcome, where, store, False)


def _ask(question: str, default: str = "", required: bool = False, own_line: bool = False) -> str:
    """One answer from the terminal; Ctrl-D or Ctrl-C stops without storing anything."""
    prompt = f"{question}\n> " if own_line else (f"{question} [{default}] " if default else f"{question} ")
    while True:
        try:
            answer = input(prompt).strip()
        except EOFError:
            print()
            fail("stopped: nothing stored", 130)
        if answer or not required:
            return answer or default
        prompt = "(type what you learned, or Ctrl-D to stop)\n> "


def _ask_category(suggested: str) -> str:
    from learn_cli.commands._common import UserError
    from learn_cli.commands.add import check_category

    while True:
        answer = _ask("Category:", suggested)
        try:
            return check_category(answer)
        except UserError as exc:
            print(f"  {exc}".replace("--category", "the category"))


def _ask_impact(default: float) -> float:
    while True:
        answer = _ask("Impact, 0.0 to 1.0:", f"{default}")
        try:
            value = float(answer)
        except ValueError:
            value = -1.0
        if 0.0 <= value <= 1.0:
            return round(value, 2)
        print("  a number between 0.0 and 1.0, please")


def toggle_auto(st: State, global_: bool) -> None:
    """Flip automatic capture for this project or the default (config.json). A project's flip
    that lands on the default removes its override: it follows the default again, so two
    flips leave nothing pinned (`learn auto` shows the three states)."""
    from learn_cli.commands.auto import set_default, set_project

    store = open_store(st)
    if global_:
        project = current_project(st, register=False)
        old = bool(store.config().get("auto_capture", True))
        saved = set_default(store, not old)
        pinned = store.overrides(project.id).get("auto_capture")
        note = (f"This project ({project.name}) has its own setting: auto-learning stays {_on(pinned)} here "
                "(`learn auto default` makes it follow the default)." if isinstance(pinned, bool) else None)
        _report_toggle(old, not old, "the default for all projects", saved, True, note)
        return
    project = current_project(st)
    old = bool(store.setting("auto_capture", project.id))
    saved = set_project(store, project.id, not old, pin=False)
    _report_toggle(old, not old, f"project {project.name}", saved, False, None)


def _on(value: bool) -> str:
    return "ON" if value else "OFF"


def _report_toggle(old: bool, new: bool, scope: str, saved, global_: bool, note: str | None) -> None:
    from rich.text import Text

    from learn_cli.render.console import fancy
    from learn_cli.render.learning import display_path, write

    fancy_out = fancy()
    arrow = "→" if fancy_out else "->"
    head = f"Auto-learning mode ({scope}): {_on(old)} {arrow} {_on(new)}"
    write(Text(f"🔄 {head}" if fancy_out else head, style="bold" if fancy_out else ""))
    write()
    write(f"  Previous state: {AUTO_STATES[old]}")
    write(f"  New state: {AUTO_STATES[new]}")
    write()
    write(f"  Config saved to {display_path(saved)}")
    again = "learn --auto --global" if global_ else "learn --auto"
    write(f"  To {'re-enable' if not new else 'turn it off'}: run `{again}` again")
    if note:
        write(f"  {note}")
