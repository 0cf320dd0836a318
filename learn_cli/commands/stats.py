"""`learn stats`: learning analytics and capture health (the seed's stats box). The work is
read_fast.stats, which pipes and `--json` reach without typer."""

from __future__ import annotations

import typer

from learn_cli.commands import read_fast
from learn_cli.commands._common import state


def command(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Machine-readable stats (see `learn help stats`)."),
) -> None:
    read_fast.stats(state(ctx), as_json)
