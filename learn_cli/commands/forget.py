"""`learn forget ID [--hard]`: archive one learning (or delete it outright)."""

from __future__ import annotations

import typer

from learn_cli.commands._common import fail, open_store, state


def command(
    ctx: typer.Context,
    rid: str = typer.Argument(
        ..., metavar="ID", help="The learning's id, or a unique start of it.", show_default=False
    ),
    hard: bool = typer.Option(False, "--hard", help="Delete it for good instead of archiving it."),
) -> None:
    from learn_cli.commands.read_fast import find
    from learn_cli.render.learning import headline
    from learn_cli.render.moves import moved

    store = open_store(state(ctx), create=False)  # an id names a learning: none without a store
    path, rec, scope = find(store, rid)
    if hard:
        for rel, _scope, _pid, _rec in store.index.by_id(rec["id"]):
            store.remove(store.path_of(rel), rec["id"])
        moved("Deleted", rec["id"], headline(rec, 80), None, store.home)
        return
    if scope in ("archive", "global-archive"):
        fail(f"{rec['id']} is already archived (delete it with `learn forget {rec['id']} --hard`)")
    dest = store.layout.global_archive if scope == "global" else store.layout.archive(store.index.scope_of(path)[1])
    archived = dict(rec, status="archived")
    store.move(archived, path, dest)
    moved("Archived", rec["id"], headline(rec, 80), dest, store.home, f"learn restore {rec['id']}")
