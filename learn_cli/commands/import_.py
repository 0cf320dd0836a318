"""`learn import FILE`: merge an export into this store (new, merged, duplicates, conflicts,
incompatible entries skipped with reasons)."""

from __future__ import annotations

from pathlib import Path

import typer

from learn_cli.commands._common import fail, json_out, open_store, state


def command(
    ctx: typer.Context,
    file: str = typer.Argument(..., metavar="FILE", help="An export made by `learn export`.", show_default=False),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would happen; write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report (see `learn help import`)."),
) -> None:
    import orjson

    from learn_cli.engine.exchange import ExchangeError, import_file
    from learn_cli.render.exchange import import_report

    store = open_store(state(ctx))
    try:
        report = import_file(store, Path(file).expanduser(), dry_run=dry_run, loads=orjson.loads)
    except ExchangeError as exc:
        fail(str(exc))
    if as_json:
        json_out(report.as_json())
    else:
        import_report(report)
    if report.entries and report.skipped == report.entries:
        fail(f"nothing imported: all {report.entries} entries of {report.source} were incompatible")
