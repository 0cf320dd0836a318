"""`learn graph`: category tree, cross-project connections, hub nodes (text, json, dot, mermaid).
The work is read_fast.graph, which pipes and `--json` reach without typer."""

from __future__ import annotations

from enum import Enum

import typer

from learn_cli.commands import read_fast
from learn_cli.commands._common import state

Format = Enum("Format", {name: name for name in read_fast.GRAPH_FORMATS}, type=str)


def command(
    ctx: typer.Context,
    fmt: Format = typer.Option(
        Format.text, "--format", "-f", help="text (the seed's tree), json, dot (Graphviz) or mermaid."
    ),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
) -> None:
    read_fast.graph(state(ctx), fmt.value, as_json)
