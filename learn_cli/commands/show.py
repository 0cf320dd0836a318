"""`learn show ID`: every field of one learning (id or a unique prefix of it). The work is
read_fast.show, which pipes and `--json` reach without typer."""

from __future__ import annotations

import typer

from learn_cli.commands import read_fast
from learn_cli.commands._common import state


def command(
    ctx: typer.Context,
    rid: str = typer.Argument(
        ..., metavar="ID", help="The learning's id, or a unique start of it.", show_default=False
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output (see `learn help show`)."),
) -> None:
    read_fast.show(state(ctx), rid, as_json)
