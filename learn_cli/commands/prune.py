"""`learn prune`: archive stale, merge duplicates, re-score, compress, clean old sessions;
`--hard` also deletes archived learnings unused for `hard_delete_days`. `--quiet` for cron."""

from __future__ import annotations

import typer

from learn_cli.commands._common import current_project, json_out, open_store, state

BAR_RECORDS = 5000


def command(
    ctx: typer.Context,
    hard: bool = typer.Option(False, "--hard", help="Also delete archived learnings unused for hard_delete_days (90)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would change; write nothing."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing unless there is an error (for cron)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report (see `learn help prune`)."),
) -> None:
    import orjson

    from learn_cli.engine.prune import run_prune
    from learn_cli.render import prune as render
    from learn_cli.render.console import fancy
    from learn_cli.render.progress import progress_bar

    st = state(ctx)
    store = open_store(st)
    project = current_project(st, register=False)
    big = fancy() and not (as_json or quiet) and store.index.count() > BAR_RECORDS
    with progress_bar(big) as progress:
        report = run_prune(store, project, dry_run=dry_run, hard=hard, loads=orjson.loads, progress=progress)
    if quiet:
        return
    if as_json:
        json_out(report.as_json())
    else:
        render.report(report)
