"""`learn restore ID`: bring an archived learning back where it came from, active again."""

from __future__ import annotations

import typer

from learn_cli.commands._common import fail, open_store, state


def command(
    ctx: typer.Context,
    rid: str = typer.Argument(
        ..., metavar="ID", help="The archived learning's id, or a unique start of it.", show_default=False
    ),
) -> None:
    from learn_cli.commands.read_fast import find
    from learn_cli.engine.knowledge import find_same
    from learn_cli.engine.merge import merge
    from learn_cli.render.learning import headline
    from learn_cli.render.moves import moved

    store = open_store(state(ctx), create=False)  # an id names a learning: none without a store
    path, rec, scope = find(store, rid)
    if scope not in ("archive", "global-archive"):
        fail(f"{rec['id']} is not archived (it is {rec.get('status') or 'active'} in {path.relative_to(store.home)})")
    restored = dict(rec, status="global" if scope == "global-archive" else "active")
    restored.pop("low_since", None)
    if scope == "global-archive":
        dest = store.global_file(restored)
    else:
        pid = store.index.scope_of(path)[1]
        store.layout.ensure_project(pid)
        dest = store.layout.learnings(pid)
    same = find_same(store, restored["key"], dest) if restored.get("key") else None
    if same is None:
        store.move(restored, path, dest)
        moved("Restored", rec["id"], headline(rec, 80), dest, store.home)
        return
    # The same learning was captured again since: fold the archived copy into it.
    kept = merge(same[1], restored)
    kept.pop("low_since", None)
    store.put(dest, kept)
    store.remove(path, rec["id"])
    moved("Restored", rec["id"], headline(rec, 80), dest, store.home, merged_into=same[1]["id"])
