"""`learn capture [--agent NAME]`: the hook entry point (SPEC §3).

`learn capture …` normally takes the fast path in learn_cli/__main__.py straight to
capture.hook.main (no typer import on every tool call). This module serves the forms that
reach the typer app, such as `learn --home DIR capture`, and `learn capture --help`.
"""

from __future__ import annotations

import typer

from learn_cli.commands._common import state


def command(
    ctx: typer.Context,
    agent: str = typer.Option("claude-code", "--agent", help="Whose hook payload is on stdin (claude-code)."),
) -> None:
    """Read one agent hook payload on stdin and learn from it. Always exits 0; prints nothing
    on stdout but valid hook JSON (a known fix for the agent, when there is one)."""
    from learn_cli.capture.hook import main

    st = state(ctx)
    args = ["--agent", agent]
    if st.home:
        args += ["--home", st.home]
    if st.project_path:
        args += ["--project", st.project_path]
    raise typer.Exit(main(args))
