"""`learn graph`: category tree, cross-project connections, hub nodes (text, json, dot, mermaid)."""

from __future__ import annotations

from enum import Enum

import typer

from learn_cli.commands._common import json_out, open_store, state


class Format(str, Enum):
    text = "text"
    json = "json"
    dot = "dot"
    mermaid = "mermaid"


def command(
    ctx: typer.Context,
    fmt: Format = typer.Option(
        Format.text, "--format", "-f", help="text (the seed's tree), json, dot (Graphviz) or mermaid."
    ),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
) -> None:
    import orjson

    from learn_cli.engine.graph import build_graph, to_dot, to_mermaid
    from learn_cli.render import graph as render

    store = open_store(state(ctx), create=False)
    graph = build_graph(store, loads=orjson.loads)
    if as_json or fmt is Format.json:
        json_out(graph.as_json())
    elif fmt is Format.dot:
        render.raw(to_dot(graph))
    elif fmt is Format.mermaid:
        render.raw(to_mermaid(graph))
    else:
        render.report(graph)
