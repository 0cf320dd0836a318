"""The typer application: global options, the bare `learn` (interactive) and `learn --auto`,
and one sub-command per module of learn_cli/commands."""

from __future__ import annotations

import gc
import importlib
import sys

import typer

from learn_cli import __version__
from learn_cli.commands._common import EXIT_USAGE, State, fail, run_guarded

# (command name, module under learn_cli.commands, help line)
COMMANDS = [
    ("add", "add", "Store a learning without questions."),
    ("recall", "recall", "Search project, global and other projects' learnings."),
    ("stats", "stats", "Learning analytics and capture health."),
    ("promote", "promote", "Re-score, promote to global, list candidates, archive, find conflicts."),
    ("resolve", "resolve", "Resolve a conflict without a terminal."),
    ("export", "export", "Write every learning to a portable JSON file."),
    ("import", "import_", "Merge learnings from an export file."),
    ("prune", "prune", "Archive stale, merge duplicates, re-score, compress, clean sessions."),
    ("graph", "graph", "Category tree, cross-project connections, hub nodes."),
    ("show", "show", "Show one learning."),
    ("forget", "forget", "Archive one learning (or delete it with --hard)."),
    ("restore", "restore", "Bring an archived learning back."),
    ("context", "context", "The session-start digest (what the agent sees)."),
    ("doctor", "doctor", "Check and repair the store, hooks and capture health."),
    ("capture", "capture", "Hook entry point: read one agent payload on stdin."),
    ("hooks", "hooks", "Install, remove or show the agent hooks."),
    ("ingest", "ingest", "Learn from past Claude Code transcripts."),
    ("flush", "flush", "Write this project's rules into CLAUDE.md / AGENTS.md / GEMINI.md."),
    ("auto", "auto", "Automatic capture here: on, off, or the default; without a value, which applies."),
    ("completion", "completion", "Print the shell completion script (bash, zsh, fish)."),
    ("help", "help_", "The full page of a command, or the man page."),
]

app = typer.Typer(
    name="learn",
    help="learn: a local, cross-project learning engine for coding agents.",
    no_args_is_help=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"learn {__version__}")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    home: str = typer.Option(None, "--home", help="Store folder (default: $SELF_LEARNING_HOME or ~/.openclaw/self-learning).", show_default=False),
    project: str = typer.Option(None, "--project", help="Project folder (default: the current directory).", show_default=False),
    auto: bool = typer.Option(False, "--auto", help="Toggle automatic capture for this project (with --global: the default)."),
    global_: bool = typer.Option(False, "--global", help="With --auto: toggle the default for all projects."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    ctx.obj = State(home=home, project_path=project)
    if ctx.invoked_subcommand is not None:
        if auto or global_:
            fail("--auto and --global go before no command: `learn --auto [--global]`", EXIT_USAGE)
        return
    from learn_cli.commands import interactive

    if auto:
        interactive.toggle_auto(ctx.obj, global_)
    elif global_:
        fail("--global goes with --auto: `learn --auto --global`", EXIT_USAGE)
    else:
        interactive.run(ctx.obj)


def _register() -> None:
    for name, module, help_line in COMMANDS:
        try:
            mod = importlib.import_module(f"learn_cli.commands.{module}")
        except ModuleNotFoundError as exc:
            if exc.name == f"learn_cli.commands.{module}":
                continue  # command not built yet in this checkout
            raise
        target = getattr(mod, "app", None)
        if isinstance(target, typer.Typer):
            app.add_typer(target, name=name, help=help_line)
        else:
            app.command(name, help=help_line)(mod.command)


_register()


def run(argv: list[str]) -> int:
    # No cyclic garbage collector in a command's short life: whole-store commands hold
    # 100,000 records as millions of small objects, and the collector's full passes over them
    # (triggered each time the heap grows by a quarter) took over half of `learn promote`.
    # Nothing here builds reference cycles that matter; reference counting frees the rest.
    gc.disable()
    from learn_cli import help as cli_help

    cli_help.prepare(app)
    if cli_help.completing():
        cli_help.enable_completion()
    return run_guarded(lambda: cli_help.build(app)(args=argv, prog_name=cli_help.PROG, standalone_mode=False))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(sys.argv[1:]))
