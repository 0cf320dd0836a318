"""`learn recall TOPIC...`: search this project's, the global and other projects' learnings."""

from __future__ import annotations

import typer

from learn_cli.commands._common import EXIT_USAGE, current_project, fail, json_out, open_store, state


def command(
    ctx: typer.Context,
    topic: list[str] = typer.Argument(..., metavar="TOPIC...", help="Words to search for (all words rank first, then any).", show_default=False),
    limit: int = typer.Option(10, "--limit", "-n", help="Show at most this many results.", min=1, max=1000),
    all_: bool = typer.Option(False, "--all", help="Include archived learnings."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable results (see docs/cmd-recall.md)."),
) -> None:
    import orjson

    from learn_cli.engine.search import search, topic_terms
    from learn_cli.render import recall as render

    text = " ".join(topic).strip()
    if not topic_terms(text):
        fail("the topic has no words to search for", EXIT_USAGE)
    st = state(ctx)
    store = open_store(st)
    project = current_project(st)
    store.refresh(loads=orjson.loads)
    timeout = store.setting("search_timeout_s", project.id)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
        timeout = 5.0
    result = search(store, text, project_id=project.id, limit=limit, include_archived=all_,
                    timeout_s=timeout, loads=orjson.loads)
    labels = {pid: info["label"] for pid, info in store.projects().items()} if result.hits or result.not_searched else {}
    if as_json:
        json_out(render.as_json(result, text, labels))
    else:
        render.report(result, text, labels, all_)
