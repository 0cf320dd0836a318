"""`learn resolve ID (--keep|--drop)`: resolve a conflict without a terminal, or accept (or
drop) a learning imported untrusted (pending until a local sighting or this)."""

from __future__ import annotations

import typer

from learn_cli.commands._common import EXIT_USAGE, fail, json_out, open_store, state


def command(
    ctx: typer.Context,
    rid: str = typer.Argument(
        ..., metavar="ID", help="A conflicted learning's id (or a unique start of it).", show_default=False
    ),
    keep: bool = typer.Option(False, "--keep", help="Keep this learning; archive the ones it conflicts with."),
    drop: bool = typer.Option(False, "--drop", help="Archive this learning; the others are no longer in conflict."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable result (see `learn help resolve`)."),
) -> None:
    from learn_cli.engine.promotion import ResolveError, resolve_conflict
    from learn_cli.render.promote import resolution

    if keep == drop:
        fail("say which: `learn resolve ID --keep` or `learn resolve ID --drop`", EXIT_USAGE)
    store = open_store(state(ctx), create=False)  # an id names a learning: none without a store
    if _accepted_import(store, rid, keep, as_json):
        return
    try:
        result = resolve_conflict(store, rid, keep=keep)
    except ResolveError as exc:
        fail(str(exc))
    if as_json:
        json_out({"kept": [r["id"] for r in result.kept], "archived": [r["id"] for r in result.archived]})
    else:
        resolution(result)
    if keep:
        _also_accept_imported(store, result.kept)


def _accepted_import(store, rid: str, keep: bool, as_json: bool) -> bool:
    from learn_cli.engine.exchange import accept_import

    rec = accept_import(store, rid, keep)
    if rec is None:
        return False
    if as_json:
        json_out({"kept": [rec["id"]] if keep else [], "archived": [], "deleted": [] if keep else [rec["id"]]})
    else:
        verb = "accepted: it can now reach the agent's context" if keep else "deleted"
        typer.echo(f"Imported learning {rec['id']} {verb}.")
    return True


def _also_accept_imported(store, kept: list[dict]) -> None:
    """A conflicted import kept by the user goes back to pending: the user's word accepts it too."""
    from learn_cli.engine.exchange import accept_import

    for rec in kept:
        accept_import(store, rec["id"], True)

