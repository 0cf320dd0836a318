"""`learn promote`: re-score everything, promote to global, list candidates, archive the
stale, find conflicts (and, on a terminal, ask how to resolve them)."""

from __future__ import annotations

import sys

import typer

from learn_cli.commands._common import json_out, open_store, state

BAR_RECORDS = 5000  # show a progress bar on a terminal when the store holds more than this


def command(
    ctx: typer.Context,
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would change; write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report (see `learn help promote`)."),
) -> None:
    import orjson

    from learn_cli.engine.promotion import LIST_LIMIT, run_promotion
    from learn_cli.render import promote as render
    from learn_cli.render.console import fancy
    from learn_cli.render.progress import progress_bar

    store = open_store(state(ctx))
    spooled = None
    if not dry_run:
        from learn_cli.capture.spool import finish

        spooled = finish(store)  # events hooks had no time for: learned before promotion looks
    if not as_json:
        render.header(dry_run)
        render.spooled(spooled)
    big = fancy() and not as_json and store.index.count() > BAR_RECORDS
    with progress_bar(big) as progress:
        report = run_promotion(store, dry_run=dry_run, progress=progress, loads=orjson.loads)
    if not dry_run:
        from learn_cli.capture.learner import finish_pending

        # Session work that hooks deferred (SessionEnd's 1.5 s budget) is finished here; the
        # whole-store promotion above already covered the projects it was waiting for.
        finish_pending(store, promoted_everything=True)
    if as_json:
        doc = report.as_json()
        if spooled is not None and (spooled.replayed or spooled.dropped or spooled.left):
            doc["spool"] = {"replayed": spooled.replayed, "dropped": spooled.dropped, "waiting": spooled.left}
        json_out(doc)
        return
    labels = {pid: info["label"] for pid, info in store.projects().items()}
    render.report(report, labels)
    if not report.conflicts:
        return
    if not dry_run and fancy() and sys.stdin.isatty():
        render.ask_conflicts(store, report.conflicts[:LIST_LIMIT])  # the ones with texts
    else:
        render.conflict_hint()
