"""The typer application: global options, the bare `learn` (interactive) and `learn --auto`,
and one sub-command per module of learn_cli/commands."""

from __future__ import annotations

import gc
import importlib
import sys

import typer

from learn_cli import __version__
from learn_cli.commands import COMMANDS
from learn_cli.commands._common import EXIT_USAGE, State, fail, run_guarded

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
    home: str = typer.Option(None, "--home", show_default=False,
                             help="Store folder (default: $SELF_LEARNING_HOME or ~/.openclaw/self-learning)."),
    project: str = typer.Option(None, "--project", show_default=False,
                                help="Project folder (default: the current directory)."),
    auto: bool = typer.Option(False, "--auto",
                              help="Toggle automatic capture for this project (with --global: the default)."),
    global_: bool = typer.Option(False, "--global", help="With --auto: toggle the default for all projects."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    ctx.obj = State(home=home, project_path=project)
    ctx.call_on_close(ctx.obj.close)  # the index's connection ends with the command, not the process
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


class RegistryError(Exception):
    """A row of learn_cli.commands.COMMANDS names no command: a bug of this checkout."""


def register(target: typer.Typer, rows=COMMANDS) -> None:
    """Add every command of `rows` to `target`, in order; a row whose module is missing or
    defines neither `app` nor `command` raises RegistryError (never a command dropped)."""
    for name, module, help_line in rows:
        try:
            mod = importlib.import_module(f"learn_cli.commands.{module}")
        except ModuleNotFoundError as exc:
            if exc.name == f"learn_cli.commands.{module}":
                raise RegistryError(f"command {name!r}: no module learn_cli/commands/{module}.py") from None
            raise
        sub = getattr(mod, "app", None)
        if isinstance(sub, typer.Typer):
            target.add_typer(sub, name=name, help=help_line)
        elif callable(getattr(mod, "command", None)):
            target.command(name, help=help_line)(mod.command)
        else:
            raise RegistryError(f"command {name!r}: learn_cli/commands/{module}.py defines neither `app` nor `command`")


register(app)


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
