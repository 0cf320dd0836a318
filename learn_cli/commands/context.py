"""`learn context [--budget N] [--json]`: the session-start digest, as the agent would get it.

(`learn context --hook` takes the fast path in learn_cli/__main__.py → capture.hook; both
forms share engine.digest.session_digest.)
"""

from __future__ import annotations

import typer

from learn_cli.commands._common import EXIT_USAGE, fail, json_out, open_store, read_project, state

MAX_BUDGET = 100_000


def command(
    ctx: typer.Context,
    budget: int = typer.Option(
        None, "--budget", help="Token budget (default: config `budget`, 2000).", show_default=False
    ),
    hook: bool = typer.Option(False, "--hook", help="Wrap the digest in the agent's SessionStart hook JSON."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable digest (see `learn help context`)."),
) -> None:
    import orjson

    from learn_cli.engine.digest import session_digest, stack_signals

    if hook:  # the fast path answers `learn context --hook`; this is `learn --home X context --hook`
        from learn_cli.capture.hook import context_main

        st = state(ctx)
        argv = (["--home", st.home] if st.home else []) + (["--project", st.project_path] if st.project_path else [])
        raise typer.Exit(context_main(argv + (["--budget", str(budget)] if budget is not None else [])))
    if budget is not None and not 1 <= budget <= MAX_BUDGET:
        fail(f"--budget must be between 1 and {MAX_BUDGET:,} tokens (got {budget})", EXIT_USAGE)
    st = state(ctx)
    store = open_store(st, create=False)
    project = read_project(st)
    result = session_digest(store, project, budget, loads=orjson.loads)
    used_budget = budget if budget is not None else _budget(store, project.id)
    if as_json:
        json_out({
            "project": project.name, "project_id": project.id, "stack": sorted(stack_signals(project.root)),
            "budget": used_budget, "tokens": result.tokens, "items": result.items, "dropped": result.dropped,
            "merged": result.merged, "before_tokens": result.before_tokens, "text": result.text,
        })
        return
    from learn_cli.render.context import digest

    digest(result, project.name, used_budget)


def _budget(store, pid: str) -> int:
    return store.number("budget", pid)
