"""`learn resolve ID (--keep|--drop)`: resolve a conflict without a terminal."""

from __future__ import annotations

import typer

from learn_cli.commands._common import EXIT_USAGE, fail, json_out, open_store, state


def command(
    ctx: typer.Context,
    rid: str = typer.Argument(..., metavar="ID", help="A conflicted learning's id (or a unique start of it).", show_default=False),
    keep: bool = typer.Option(False, "--keep", help="Keep this learning; archive the ones it conflicts with."),
    drop: bool = typer.Option(False, "--drop", help="Archive this learning; the others are no longer in conflict."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable result (see `learn help resolve`)."),
) -> None:
    from learn_cli.engine.promotion import ResolveError, resolve_conflict
    from learn_cli.render.promote import resolution

    if keep == drop:
        fail("say which: `learn resolve ID --keep` or `learn resolve ID --drop`", EXIT_USAGE)
    store = open_store(state(ctx))
    try:
        result = resolve_conflict(store, rid, keep=keep)
    except ResolveError as exc:
        fail(str(exc))
    if as_json:
        json_out({"kept": [r["id"] for r in result.kept], "archived": [r["id"] for r in result.archived]})
    else:
        resolution(result)
