"""`learn show ID`: every field of one learning (id or a unique prefix of it)."""

from __future__ import annotations

import typer

from learn_cli.commands._common import fail, json_out, open_store, state


def command(
    ctx: typer.Context,
    rid: str = typer.Argument(
        ..., metavar="ID", help="The learning's id, or a unique start of it.", show_default=False
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output (see `learn help show`)."),
) -> None:
    from learn_cli.engine.scoring import score
    from learn_cli.render import learning as render

    store = open_store(state(ctx), create=False)
    path, rec, scope = find(store, rid)
    file = str(path.relative_to(store.home))
    value = score(rec)
    if as_json:
        json_out({"file": file, "scope": scope, "score": round(value, 2), "record": rec})
        return
    labels = {pid: info["label"] for pid, info in store.projects().items()}
    render.show(rec, file, scope, value, labels)


def find(store, rid: str):
    """(path, record, scope) of a learning by id or unique prefix; one clear line when none."""
    import orjson

    rid = rid.strip()
    if not rid:
        fail("no id given")
    store.refresh(loads=orjson.loads)
    found = store.get(rid)
    if found is None:
        fail(f"no learning with id {rid!r} (find ids with `learn recall TOPIC`)")
    path, rec = found
    scope, _pid = store.index.scope_of(path)
    return path, rec, scope
