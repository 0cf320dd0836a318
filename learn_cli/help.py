"""How the CLI describes itself: `--help`, the man page and shell completion.

- Help is plain, conventional text (click's layout) unless stdout is a colour terminal: piped,
  under `NO_COLOR` or `TERM=dumb`, no boxes.
- Every option shows a readable placeholder (`--home DIR`, `--limit N`, `--format
  [text|json]`), never the Python type (`<str>`, `<list[str]>`) or the parameter's name
  (`TYPE_`); arguments read `TOPIC...` in the usage line, not `{TOPIC...}...`.
- `learn --help` off a terminal is a file shipped in the package (man/help.txt, made by `make
  man` from typer's own output and checked by the tests): importing typer and building every
  command to print the same 36 lines cost ~120 ms.
- Completion: the script for bash, zsh or fish (`learn completion SHELL`), and the answers the
  script asks for (`_LEARN_COMPLETE=complete_<shell> learn`), both typer's.
"""

from __future__ import annotations

import os
import sys

PROG = "learn"
COMPLETE_VAR = "_LEARN_COMPLETE"
SHELLS = ("bash", "zsh", "fish")

# Placeholders for options whose meaning the type alone does not say.
METAVARS = {
    "--home": "DIR", "--project": "DIR", "--target": "FILE", "--output": "FILE|-",
    "--budget": "TOKENS", "--limit": "N", "--impact": "0..1", "--tag": "TAG",
    "--agent": "AGENT", "--scope": "SCOPE", "--type": "TYPE", "--category": "CATEGORY",
    "--fix": "TEXT", "--context": "TEXT", "--error": "TEXT",
}
TYPE_METAVARS = {"<int>": "N", "<int range>": "N", "<float>": "NUMBER", "<float range>": "NUMBER"}


def plain_help_wanted() -> bool:
    """Boxes and colour only on a terminal that wants them."""
    tty = sys.stdout is not None and sys.stdout.isatty()  # None: stdout closed by the caller
    return (not tty or bool(os.environ.get("NO_COLOR"))
            or os.environ.get("TERM", "") in ("dumb", ""))


# click lays help out to the terminal's width, but never wider than this: at this width or
# more, the plain top-level help is always the same text.
WIDEST_HELP = 80


def packaged_top_help() -> str | None:
    """The plain `learn --help` shipped in the package, when it is what typer would print
    here (plain help wanted, a layout at least WIDEST_HELP wide); else None."""
    if not plain_help_wanted() or _columns() < WIDEST_HELP:
        return None
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "man", "help.txt"), encoding="utf-8") as fh:
            return fh.read() or None
    except OSError:  # an install without it: typer prints it
        return None


def _columns() -> int:
    """The width click lays help out to (shutil.get_terminal_size's rules, without shutil)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
        if columns > 0:
            return columns
    except ValueError:
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80  # shutil's fallback


def prepare(app) -> None:
    """Before the command is built: plain help where boxes do not belong."""
    if plain_help_wanted():
        for typer_app in _typer_apps(app):
            typer_app.rich_markup_mode = None


def _typer_apps(app):
    yield app
    for group in app.registered_groups:
        yield from _typer_apps(group.typer_instance)


def build(app):
    """The click command of `app`, every parameter with a readable placeholder."""
    import typer._click as click
    import typer.main

    root = typer.main.get_command(app)
    walk(root, click.Context(root, info_name=PROG, **root.context_settings), fix_placeholders)
    return root


def walk(cmd, ctx, visit) -> None:
    """`visit(param, ctx)` for every parameter of `cmd` and its sub-commands (-h included)."""
    import typer._click as click

    for param in cmd.get_params(ctx):
        visit(param, ctx)
    for name, sub in getattr(cmd, "commands", {}).items():
        walk(sub, click.Context(sub, info_name=name, parent=ctx, **sub.context_settings), visit)


def fix_placeholders(param, ctx) -> None:
    if param.param_type_name == "argument":
        param.metavar = placeholder(param, ctx)
        param._usage_display_name = lambda p=param: _argument_usage(p)
        param.get_usage_pieces = lambda ctx, p=param: [_argument_usage(p)]  # typer 0.28's usage line
        param._rich_display_name = lambda p=param: p.metavar
        param.display_type_rich = lambda ctx: None  # the placeholder says it: no `<list[str]>`
    elif param.metavar is None:
        param.metavar = placeholder(param, ctx)


def placeholder(param, ctx) -> str:
    """`DIR`, `N`, `[text|json]`, `TOPIC...`: what to type, in the conventional spelling."""
    if getattr(param, "is_flag", False):
        return ""
    if param.param_type_name == "argument":
        name = (param.metavar or param.name.rstrip("_").upper()).strip("[]").removesuffix("...")
        return f"{name}..." if param.nargs != 1 else name
    named = next((METAVARS[o] for o in param.opts if o in METAVARS), None)
    if named:
        return named
    shown = _display_type(param, ctx)
    if "|" in shown:
        return "[" + shown.strip("<>") + "]"
    return TYPE_METAVARS.get(shown, param.name.rstrip("_").upper())


def _display_type(param, ctx) -> str:
    """`<int>`, `<a|b>`: how typer shows a parameter's type (typer 0.29 has display_type; the
    0.28 that learn pins, without pydantic, has not: the same spelling from the type)."""
    if hasattr(param, "display_type"):
        return param.display_type(ctx) or ""
    kind = getattr(param, "type", None)
    choices = getattr(kind, "choices", None)
    if choices:
        return "<" + "|".join(str(c) for c in choices) + ">"
    return _CLICK_TYPE_NAMES.get(getattr(kind, "name", "") or "", "")


_CLICK_TYPE_NAMES = {"integer": "<int>", "integer range": "<int range>", "float": "<float>",
                     "float range": "<float range>"}


def _argument_usage(param) -> str:
    return param.metavar if param.required else f"[{param.metavar}]"


def completion_script(shell: str) -> str:
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell)


def completing() -> bool:
    """True when a shell's completion function runs `learn` to ask for candidates."""
    return bool(os.environ.get(COMPLETE_VAR))


def enable_completion() -> None:
    from typer._completion_classes import completion_init

    completion_init()
