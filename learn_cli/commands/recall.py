"""`learn recall TOPIC...`: search this project's, the global and other projects' learnings.

The typer command, for a terminal and for `--help` and usage errors: piped output and `--json`
usually take the fast path of learn_cli/commands/recall_fast.py, which does the same work."""

from __future__ import annotations

import typer

from learn_cli.commands._common import state
from learn_cli.commands.recall_fast import DEFAULT_LIMIT, MAX_LIMIT, run


def command(
    ctx: typer.Context,
    topic: list[str] = typer.Argument(
        ..., metavar="TOPIC...", help="Words to search for (all words rank first, then any).", show_default=False
    ),
    limit: int = typer.Option(
        DEFAULT_LIMIT, "--limit", "-n", help="Show at most this many results.", min=1, max=MAX_LIMIT
    ),
    all_: bool = typer.Option(False, "--all", help="Include archived learnings."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable results (see `learn help recall`)."),
) -> None:
    run(state(ctx), topic, limit, all_, as_json)
