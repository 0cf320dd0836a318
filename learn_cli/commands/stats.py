"""`learn stats`: learning analytics and capture health (the seed's stats box)."""

from __future__ import annotations

import typer

from learn_cli.commands._common import json_out, open_store, read_project, state


def command(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Machine-readable stats (see `learn help stats`)."),
) -> None:
    import orjson

    from learn_cli.engine.stats import gather
    from learn_cli.render import stats as render

    st = state(ctx)
    store = open_store(st, create=False)
    doc = gather(store, read_project(st), loads=orjson.loads)
    if as_json:
        json_out(doc)
    else:
        render.report(doc)
